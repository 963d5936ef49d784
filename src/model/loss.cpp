#include "mft/model/loss.hpp"

#include "mft/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

namespace mft {
namespace {

// Rounding: this file is compiled without floating-point contraction
// (CMakeLists.txt), so where a multiply-add is fused is written here, with
// std::fma, and does not change with how the compiler vectorises a loop.

class Squared final : public Loss {
public:
  const char *name() const override { return "squared"; }
  bool classifies() const override { return false; }
  double risk(const std::vector<double> &yhat, const std::vector<double> &y, long long N,
              long long d_out, double *G) const override {
    double r = 0.0;
    for (long long i = 0; i < N * d_out; ++i) {
      const double e = yhat[i] - y[i];
      r = std::fma(e, e, r);
      if (G) G[i] = e;
    }
    return r / (2.0 * static_cast<double>(N));
  }
};

class CrossEntropy final : public Loss {
public:
  const char *name() const override { return "cross-entropy"; }
  bool classifies() const override { return true; }
  double risk(const std::vector<double> &yhat, const std::vector<double> &y, long long N,
              long long d_out, double *G) const override {
    double r = 0.0;
    for (long long i = 0; i < N; ++i) {
      const double *z = yhat.data() + i * d_out, *t = y.data() + i * d_out;
      const double mx = *std::max_element(z, z + d_out);
      double sum = 0.0, dot = 0.0;
      for (long long c = 0; c < d_out; ++c) {
        sum += std::exp(z[c] - mx);
        dot += t[c] * z[c];
      }
      r += mx + std::log(sum) - dot;
      if (!G) continue;
      for (long long c = 0; c < d_out; ++c) G[i * d_out + c] = std::exp(z[c] - mx) / sum - t[c];
    }
    return r / static_cast<double>(N);
  }
};

// The registry: adding a loss is a class above and a line here.
using Factory = std::function<std::unique_ptr<Loss>()>;
const std::vector<std::pair<std::string, Factory>> &registry() {
  static const std::vector<std::pair<std::string, Factory>> losses = {
      {"squared", [] { return std::make_unique<Squared>(); }},
      {"cross-entropy", [] { return std::make_unique<CrossEntropy>(); }},
  };
  return losses;
}

} // namespace

std::unique_ptr<Loss> make_loss(const std::string &name) {
  std::vector<std::string> names;
  for (const auto &[known, make] : registry()) {
    if (known == name) return make();
    names.push_back(known);
  }
  throw InputError(key_error("loss.kind", name, "must be one of " + comma_list(names)));
}

double accuracy(const std::vector<double> &yhat, const std::vector<double> &y, long long N,
                long long d_out) {
  if (N == 0) return 0.0;
  long long right = 0;
  for (long long i = 0; i < N; ++i) {
    const double *z = yhat.data() + i * d_out, *t = y.data() + i * d_out;
    right += std::max_element(z, z + d_out) - z == std::max_element(t, t + d_out) - t;
  }
  return static_cast<double>(right) / static_cast<double>(N);
}

} // namespace mft
