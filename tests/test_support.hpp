#pragma once
// Helpers shared by the tests: small problems and an independent reference
// of the attention field written plainly from MODEL.md §3.
#include "mft/tasks/data.hpp"
#include "mft/model/particles.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mft::test {

// The score map and mask of MODEL.md §10 as the reference sees them.
struct Variant {
  bool relu = false;   // model.attention = relu (else softmax)
  bool causal = false; // model.causal
};

// Q x, K x (n x d_h each), the scores S_ab = <Q x_a, K x_b> and the weights
// P (n x n) of one head on one sequence (tokens X, n x d): softmax_b(S_ab)
// or max(S_ab, 0)/|A_a| over the tokens b that a sees, 0 elsewhere. Plain
// loops, std::exp.
inline void reference_attention(const double *Q, const double *K, long long d_h, long long d,
                                const double *X, long long n, std::vector<double> &qx,
                                std::vector<double> &kx, std::vector<double> &P,
                                Variant variant = {}, std::vector<double> *scores = nullptr) {
  qx.assign(n * d_h, 0.0);
  kx.assign(n * d_h, 0.0);
  P.assign(n * n, 0.0);
  if (scores) scores->assign(n * n, 0.0);
  for (long long a = 0; a < n; ++a)
    for (long long h = 0; h < d_h; ++h)
      for (long long j = 0; j < d; ++j) {
        qx[a * d_h + h] += Q[h * d + j] * X[a * d + j];
        kx[a * d_h + h] += K[h * d + j] * X[a * d + j];
      }
  for (long long a = 0; a < n; ++a) {
    const long long seen = variant.causal ? a + 1 : n;
    double mx = -INFINITY, z = 0;
    for (long long b = 0; b < seen; ++b) {
      double s = 0;
      for (long long h = 0; h < d_h; ++h) s += qx[a * d_h + h] * kx[b * d_h + h];
      if (scores) (*scores)[a * n + b] = s;
      P[a * n + b] = s;
      mx = std::max(mx, s);
    }
    if (variant.relu) {
      for (long long b = 0; b < seen; ++b) P[a * n + b] = std::max(P[a * n + b], 0.0) / static_cast<double>(seen);
      continue;
    }
    for (long long b = 0; b < seen; ++b) z += (P[a * n + b] = std::exp(P[a * n + b] - mx));
    for (long long b = 0; b < seen; ++b) P[a * n + b] /= z;
  }
}

// phi_theta[mu](x_a) = V sum_b softmax_b(<Q x_a, K x_b>) x_b for one head on
// one sequence (tokens X, n x d), accumulated into out (n x d) times `scale`.
// Plain loops, Q x and K x apart, std::exp: nothing shared with the kernel.
inline void reference_head(const double *Q, const double *K, const double *V, long long d_h,
                           long long d, const double *X, long long n, double scale, double *out,
                           Variant variant = {}) {
  std::vector<double> qx, kx, P, y(d);
  reference_attention(Q, K, d_h, d, X, n, qx, kx, P, variant);
  for (long long a = 0; a < n; ++a) {
    std::fill(y.begin(), y.end(), 0.0);
    for (long long b = 0; b < n; ++b)
      for (long long j = 0; j < d; ++j) y[j] += P[a * n + b] * X[b * d + j];
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

namespace mft::test {

// The transposed products of reference_head for the cotangent c (n x d) of
// its output (already times the head's weight `scale`), written plainly from
// MODEL.md §5 and §10: dQ, dK (d_h x d), dV (d x d) and dX (n x d) are
// accumulated. The score cotangent: softmax ds_ab = P_ab (<g_a, x_b> -
// <g_a, ybar_a>); relu ds_ab = 1[S_ab > 0] <g_a, x_b> / |A_a|; 0 off the mask.
inline void reference_head_vjp(const double *Q, const double *K, const double *V, long long d_h,
                               long long d, const double *X, long long n, double scale,
                               const double *c, double *dQ, double *dK, double *dV, double *dX,
                               Variant variant = {}) {
  std::vector<double> qx, kx, P, S, ybar(n * d), g(n * d);
  reference_attention(Q, K, d_h, d, X, n, qx, kx, P, variant, &S);
  for (long long a = 0; a < n; ++a) {
    for (long long j = 0; j < d; ++j) {
      double y = 0;
      for (long long b = 0; b < n; ++b) y += P[a * n + b] * X[b * d + j];
      ybar[a * d + j] = y;
    }
    // g_a = scale V^T c_a; dV += scale c_a ybar_a^T
    for (long long j = 0; j < d; ++j) {
      double s = 0;
      for (long long k = 0; k < d; ++k) s += V[k * d + j] * c[a * d + k];
      g[a * d + j] = scale * s;
    }
    for (long long k = 0; k < d; ++k)
      for (long long j = 0; j < d; ++j) dV[k * d + j] += scale * c[a * d + k] * ybar[a * d + j];
  }
  for (long long a = 0; a < n; ++a) {
    double gy = 0;
    for (long long j = 0; j < d; ++j) gy += g[a * d + j] * ybar[a * d + j];
    const long long seen = variant.causal ? a + 1 : n;
    for (long long b = 0; b < seen; ++b) {
      double gx = 0;
      for (long long j = 0; j < d; ++j) gx += g[a * d + j] * X[b * d + j];
      const double p = P[a * n + b];
      const double ds = variant.relu ? (S[a * n + b] > 0 ? gx / static_cast<double>(seen) : 0.0)
                                     : p * (gx - gy);
      // ybar_a = sum_b P_ab x_b: x_b gets P_ab g_a.
      for (long long j = 0; j < d; ++j) dX[b * d + j] += p * g[a * d + j];
      // s_ab = <Q x_a, K x_b>
      for (long long h = 0; h < d_h; ++h)
        for (long long j = 0; j < d; ++j) {
          dQ[h * d + j] += ds * kx[b * d_h + h] * X[a * d + j];
          dK[h * d + j] += ds * qx[a * d_h + h] * X[b * d + j];
          dX[a * d + j] += ds * Q[h * d + j] * kx[b * d_h + h];
          dX[b * d + j] += ds * K[h * d + j] * qx[a * d_h + h];
        }
    }
  }
}

} // namespace mft::test
