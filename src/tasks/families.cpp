#include "mft/tasks/families.hpp"

#include "mft/core/error.hpp"
#include "mft/core/rng.hpp"

#include <cmath>
#include <sstream>

namespace mft {
namespace {

// Values of families.values: "a,b,c" (one per sequence) or "lo:hi" (spread
// evenly over the N sequences); empty: `fallback` as "lo:hi".
std::vector<double> parse_values(const std::string &key, const std::string &text,
                                 const std::string &fallback, long long N) {
  const std::string spec = text.empty() ? fallback : text;
  std::vector<double> out;
  const auto colon = spec.find(':');
  auto number = [&](const std::string &s) {
    char *end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !std::isfinite(v))
      throw InputError(key_error(key, text, "not a list a,b,c or a range lo:hi of numbers"));
    return v;
  };
  if (colon != std::string::npos) {
    const double lo = number(spec.substr(0, colon)), hi = number(spec.substr(colon + 1));
    for (long long i = 0; i < N; ++i)
      out.push_back(N == 1 ? lo : lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(N - 1));
    return out;
  }
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(number(item));
  if (static_cast<long long>(out.size()) != N)
    throw InputError(key_error(key, text, "needs data.sequences = " + std::to_string(N) +
                                              " values (or a range lo:hi), got " +
                                              std::to_string(out.size())));
  return out;
}

const char *default_range(const std::string &kind) {
  if (kind == "cube") return "0.5:2";
  if (kind == "laplace") return "0.2:1";
  if (kind == "mixture") return "0:2";
  if (kind == "gaussian-cov") return "0:1";
  return "0:0";
}

// log(sinh(x)/x), stable for small and large |x|.
double log_sinhc(double x) {
  x = std::fabs(x);
  if (x < 1e-4) return x * x / 6.0;
  if (x > 20) return x + std::log1p(-std::exp(-2 * x)) - std::log(2 * x);
  return std::log(std::sinh(x) / x);
}

// log cosh(x), stable for large |x|.
double log_cosh(double x) {
  x = std::fabs(x);
  return x + std::log1p(std::exp(-2 * x)) - std::log(2.0);
}

} // namespace

std::vector<FamilyMember> family_members(const Config &c) {
  const long long N = c.data.sequences;
  const std::string &kind = c.families.kind;
  const std::vector<double> values =
      kind == "discrete" ? std::vector<double>(N, 0.0)
                         : parse_values("families.values", c.families.values, default_range(kind), N);
  const std::vector<double> variances =
      parse_values("families.variances", c.families.variances, "1:1", N);
  std::vector<FamilyMember> out;
  for (long long i = 0; i < N; ++i) {
    FamilyMember m{kind, values[i], variances[i], c.families.sigma, c.families.base == "uniform"};
    if ((kind == "cube" || kind == "laplace") && m.value <= 0)
      throw InputError(key_error("families.values", c.families.values,
                                 "cube radii and laplace variances must be > 0"));
    if (kind == "gaussian-cov" && m.variance <= 0)
      throw InputError(key_error("families.variances", c.families.variances, "variances must be > 0"));
    out.push_back(m);
  }
  return out;
}

TokenData make_families(const Config &c) {
  const long long N = c.data.sequences, n = c.data.tokens, d = c.model.d;
  const std::vector<FamilyMember> members = family_members(c);
  TokenData data{N, n, d, 1, std::vector<double>(N * n * d), std::vector<double>(N), 0, {}, {}};
  const double e = 1.0 / std::sqrt(static_cast<double>(d)); // every entry of the unit vector e
  std::vector<double> u(d);
  RandomStream task(c.data.seed, Species::DataTask, 0, 0);
  for (auto &uk : u) uk = task.normal();
  for (long long i = 0; i < N; ++i) {
    const FamilyMember &m = members[i];
    RandomStream rng(c.data.seed, Species::DataSequence, i, 0);
    double *X = data.sequence(i);
    for (long long j = 0; j < n; ++j) {
      double *x = X + j * d;
      if (m.kind == "discrete") {
        for (long long k = 0; k < d; ++k) x[k] = m.uniform ? 2 * rng.uniform() - 1 : rng.normal();
      } else if (m.kind == "cube") {
        for (long long k = 0; k < d; ++k) x[k] = m.value * (2 * rng.uniform() - 1);
      } else if (m.kind == "laplace") {
        const double scale = std::sqrt(-std::log(1.0 - rng.uniform()) * m.value); // sqrt(E v)
        for (long long k = 0; k < d; ++k) x[k] = scale * rng.normal();
      } else if (m.kind == "mixture") {
        const double sign = rng.uniform() < 0.5 ? -1.0 : 1.0;
        for (long long k = 0; k < d; ++k) x[k] = sign * m.value * e + m.sigma * rng.normal();
      } else { // gaussian-cov
        const double sd = std::sqrt(m.variance);
        for (long long k = 0; k < d; ++k) x[k] = m.value * e + sd * rng.normal();
      }
    }
    double y = 0.0, square = 0.0;
    for (long long j = 0; j < n; ++j)
      for (long long k = 0; k < d; ++k) {
        y += u[k] * X[j * d + k] / static_cast<double>(n);
        square += X[j * d + k] * X[j * d + k] / static_cast<double>(n * d);
      }
    data.targets[i] = y + c.families.quadratic * square;
  }
  return data;
}

bool has_population_cgf(const std::string &kind) { return kind != "discrete"; }

double population_cgf(const FamilyMember &m, const double *z, long long d) {
  double z2 = 0.0, ez = 0.0;
  for (long long k = 0; k < d; ++k) {
    z2 += z[k] * z[k];
    ez += z[k] / std::sqrt(static_cast<double>(d));
  }
  if (m.kind == "cube") {
    double s = 0.0;
    for (long long k = 0; k < d; ++k) s += log_sinhc(m.value * z[k]);
    return s;
  }
  if (m.kind == "laplace") {
    if (m.value * z2 >= 2.0)
      throw InputError(key_error("cgf.radius", std::to_string(std::sqrt(z2)),
                                 "laplace with variance " + std::to_string(m.value) +
                                     " has Lambda only for v |z|^2 < 2; lower the radius"));
    return -std::log1p(-0.5 * m.value * z2);
  }
  if (m.kind == "mixture") return 0.5 * m.sigma * m.sigma * z2 + log_cosh(m.value * ez);
  if (m.kind == "gaussian-cov") return m.value * ez + 0.5 * m.variance * z2;
  throw Error("family " + m.kind + " has no closed-form Lambda");
}

} // namespace mft
