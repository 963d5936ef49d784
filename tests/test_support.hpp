#pragma once
// Helpers shared by the tests: small problems and an independent reference
// of the attention field written plainly from MODEL.md §3.
#include "mft/data.hpp"
#include "mft/particles.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mft::test {

// phi_theta[mu](x_a) = V sum_b softmax_b(<Q x_a, K x_b>) x_b for one head on
// one sequence (tokens X, n x d), accumulated into out (n x d) times `scale`.
// Plain loops, Q x and K x apart, std::exp: nothing shared with the kernel.
inline void reference_head(const double *Q, const double *K, const double *V, long long d_h,
                           long long d, const double *X, long long n, double scale, double *out) {
  std::vector<double> qx(n * d_h), kx(n * d_h), p(n), y(d);
  for (long long a = 0; a < n; ++a)
    for (long long h = 0; h < d_h; ++h) {
      double sq = 0, sk = 0;
      for (long long j = 0; j < d; ++j) {
        sq += Q[h * d + j] * X[a * d + j];
        sk += K[h * d + j] * X[a * d + j];
      }
      qx[a * d_h + h] = sq;
      kx[a * d_h + h] = sk;
    }
  for (long long a = 0; a < n; ++a) {
    double mx = -INFINITY;
    for (long long b = 0; b < n; ++b) {
      double s = 0;
      for (long long h = 0; h < d_h; ++h) s += qx[a * d_h + h] * kx[b * d_h + h];
      p[b] = s;
      mx = std::max(mx, s);
    }
    double z = 0;
    for (long long b = 0; b < n; ++b) z += (p[b] = std::exp(p[b] - mx));
    std::fill(y.begin(), y.end(), 0.0);
    for (long long b = 0; b < n; ++b)
      for (long long j = 0; j < d; ++j) y[j] += p[b] / z * X[b * d + j];
    for (long long k = 0; k < d; ++k) {
      double s = 0;
      for (long long j = 0; j < d; ++j) s += V[k * d + j] * y[j];
      out[a * d + k] += scale * s;
    }
  }
}

// Largest |a - b| over max(|b|), the relative error of a whole array.
inline double relative_error(const std::vector<double> &a, const std::vector<double> &b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(b[i]));
  }
  return den > 0 ? num / den : num;
}

} // namespace mft::test
