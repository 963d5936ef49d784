#include "mft/analysis/cgf.hpp"

#include "mft/core/error.hpp"
#include "mft/core/linalg.hpp"
#include "mft/core/rng.hpp"

#include <algorithm>
#include <cmath>

namespace mft {

std::vector<double> cgf_points(long long K, long long d, double radius, std::uint64_t seed) {
  // Direction from a normal vector, radius from U^(1/d): uniform in the ball.
  RandomStream rng(seed, Species::DataTask, 1, 0);
  std::vector<double> Z(static_cast<size_t>(K * d));
  for (long long k = 0; k < K; ++k) {
    double *z = Z.data() + k * d, norm = 0.0;
    for (long long j = 0; j < d; ++j) {
      z[j] = rng.normal();
      norm += z[j] * z[j];
    }
    const double r = radius * std::pow(rng.uniform(), 1.0 / static_cast<double>(d)) / std::sqrt(norm);
    for (long long j = 0; j < d; ++j) z[j] *= r;
  }
  return Z;
}

double empirical_cgf(const double *X, long long n, long long d, const double *z) {
  double mx = -INFINITY;
  for (long long j = 0; j < n; ++j) {
    double s = 0.0;
    for (long long k = 0; k < d; ++k) s += z[k] * X[j * d + k];
    mx = std::max(mx, s);
  }
  double sum = 0.0;
  for (long long j = 0; j < n; ++j) {
    double s = 0.0;
    for (long long k = 0; k < d; ++k) s += z[k] * X[j * d + k];
    sum += std::exp(s - mx);
  }
  return mx + std::log(sum / static_cast<double>(n));
}

CgfMargin cgf_margin(const std::vector<double> &Z, long long K, long long d, long long N,
                     const std::function<double(long long, const double *)> &f) {
  if (K < N + d + 1)
    throw InputError(key_error("cgf.points", std::to_string(K),
                               "needs at least N + d + 1 = " + std::to_string(N + d + 1) +
                                   " points to separate N functions from the affine ones"));
  // A: K x N samples; B: K x (d+1) affine functions [1, z].
  std::vector<double> A(static_cast<size_t>(K * N)), B(static_cast<size_t>(K * (d + 1)));
  for (long long k = 0; k < K; ++k) {
    const double *z = Z.data() + k * d;
    for (long long i = 0; i < N; ++i) A[k * N + i] = f(i, z);
    B[k * (d + 1)] = 1.0;
    for (long long j = 0; j < d; ++j) B[k * (d + 1) + 1 + j] = z[j];
  }
  // Project the columns of A off span(B), twice for accuracy.
  const std::vector<double> Qb = orthonormal_basis(B, K, d + 1);
  for (int pass = 0; pass < 2; ++pass)
    for (long long i = 0; i < N; ++i)
      for (long long q = 0; q <= d; ++q) {
        double dot = 0.0;
        for (long long k = 0; k < K; ++k) dot += Qb[k * (d + 1) + q] * A[k * N + i];
        for (long long k = 0; k < K; ++k) A[k * N + i] -= dot * Qb[k * (d + 1) + q];
      }
  CgfMargin out;
  out.singular_values = singular_values(A, K, N);
  const double largest = out.singular_values.empty() ? 0.0 : out.singular_values.front();
  out.margin = largest > 0 ? out.singular_values.back() / largest : 0.0;
  return out;
}

CgfMargin empirical_cgf_margin(const TokenData &data, const std::vector<double> &Z, long long K) {
  return cgf_margin(Z, K, data.d, data.N, [&](long long i, const double *z) {
    return empirical_cgf(data.sequence(i), data.n, data.d, z);
  });
}

} // namespace mft
