#include "mft/attention.hpp"

#include "mft/blas.hpp"
#include "mft/exp_batch.hpp"

#include <algorithm>
#include <cmath>

namespace mft {

// Layout of the batched evaluation, for one slice and one sequence with
// tokens X (n x d) and this rank's Ml heads:
//
//   scores  <Q_m x_a, K_m x_b> = x_a^T B_m x_b with B_m = Q_m^T K_m (d x d).
//   Z = X [B_1 ... B_Ml]        (n x Ml d): row a, block m is x_a^T B_m.
//       Read as (n Ml) x d, its rows are (a, m), so one GEMM with X^T gives
//   S = Z X^T                   (n Ml x n): S[(a,m), b] = score of head m.
//   P = softmax over b, stored transposed as n x (n Ml), columns (b, m).
//   W = X [V_1^T ... V_Ml^T]/M  (n x Ml d): read as (n Ml) x d, rows (b, m).
//   F += P W                    (n x d): sum over b and m in one GEMM.
//
// Using B_m instead of Q x and K x apart makes the scores of all heads one
// GEMM per sequence; it costs d x d instead of d_h x d per head, the same
// when d_h = d.

AttentionKernel::AttentionKernel(long long N, long long n, const HeadParticles &heads)
    : N_(N), n_(n), d_(heads.d), d_h_(heads.d_h), L_(heads.L), M_(heads.M),
      Ml_(heads.own.count()) {
  // Batch enough sequences for the token-side GEMMs to be efficient while
  // Z and W stay in cache (about 256 KiB together).
  const long long per_sequence = std::max<long long>(1, 2 * n_ * Ml_ * d_);
  block_ = std::clamp<long long>(32768 / per_sequence, 1, std::max<long long>(N_, 1));
  B_.resize(static_cast<size_t>(L_ * d_ * Ml_ * d_));
  Vt_.resize(B_.size());
  Z_.resize(static_cast<size_t>(block_ * n_ * Ml_ * d_));
  W_.resize(Z_.size());
  S_.resize(static_cast<size_t>(n_ * Ml_ * n_));
  P_.resize(S_.size());
  set_particles(heads);
}

void AttentionKernel::set_particles(const HeadParticles &heads) {
  const double inv_M = 1.0 / static_cast<double>(M_);
  const long long ld = Ml_ * d_;
  for (long long l = 0; l < L_; ++l) {
    double *B = B_.data() + l * d_ * ld;
    double *Vt = Vt_.data() + l * d_ * ld;
    for (long long m = 0; m < Ml_; ++m) {
      // B_m = Q_m^T K_m: (d x d_h)(d_h x d), written into columns m d .. m d + d.
      gemm(true, false, d_, d_, d_h_, 1.0, heads.q(l, m), d_, heads.k(l, m), d_, 0.0, B + m * d_,
           ld);
      const double *V = heads.v(l, m);
      for (long long j = 0; j < d_; ++j)
        for (long long k = 0; k < d_; ++k) Vt[j * ld + m * d_ + k] = V[k * d_ + j] * inv_M;
    }
  }
}

void softmax_rows(double *S, long long rows, long long n) {
  // Max-subtract every row, exponentiate the whole block in one vectorised
  // pass, then normalise: scores of any size give finite weights.
  for (long long r = 0; r < rows; ++r) {
    double *s = S + r * n;
    double mx = s[0];
    for (long long b = 1; b < n; ++b) mx = std::max(mx, s[b]);
    for (long long b = 0; b < n; ++b) s[b] -= mx;
  }
  exp_nonpositive(S, S, rows * n);
  for (long long r = 0; r < rows; ++r) {
    double *s = S + r * n;
    double sum = 0.0;
    for (long long b = 0; b < n; ++b) sum += s[b];
    const double inv = 1.0 / sum;
    for (long long b = 0; b < n; ++b) s[b] *= inv;
  }
}

void AttentionKernel::sequence_block(long long l, long long i0, long long count, const double *X,
                                     double *F) {
  const long long ld = Ml_ * d_, rows = count * n_;
  const double *Xb = X + i0 * n_ * d_;
  gemm(false, false, rows, ld, d_, 1.0, Xb, d_, B_.data() + l * d_ * ld, ld, 0.0, Z_.data(), ld);
  gemm(false, false, rows, ld, d_, 1.0, Xb, d_, Vt_.data() + l * d_ * ld, ld, 0.0, W_.data(), ld);
  for (long long i = 0; i < count; ++i) {
    const double *Xi = Xb + i * n_ * d_;
    const double *Zi = Z_.data() + i * n_ * ld;
    const double *Wi = W_.data() + i * n_ * ld;
    gemm(false, true, n_ * Ml_, n_, d_, 1.0, Zi, d_, Xi, d_, 0.0, S_.data(), n_);
    softmax_rows(S_.data(), n_ * Ml_, n_);
    // P[a][b][m] = S[(a, m)][b]: columns (b, m) for the GEMM with W.
    for (long long a = 0; a < n_; ++a) {
      double *Pa = P_.data() + a * n_ * Ml_;
      const double *Sa = S_.data() + a * Ml_ * n_;
      for (long long m = 0; m < Ml_; ++m)
        for (long long b = 0; b < n_; ++b) Pa[b * Ml_ + m] = Sa[m * n_ + b];
    }
    gemm(false, false, n_, d_, n_ * Ml_, 1.0, P_.data(), n_ * Ml_, Wi, d_, 1.0,
         F + (i0 + i) * n_ * d_, d_);
  }
}

void AttentionKernel::add_velocity(long long l, const double *X, double *F) {
  if (Ml_ == 0) return;
  for (long long i0 = 0; i0 < N_; i0 += block_)
    sequence_block(l, i0, std::min(block_, N_ - i0), X, F);
}

double AttentionKernel::model_flops() const {
  const double n = static_cast<double>(n_), d = static_cast<double>(d_),
               dh = static_cast<double>(d_h_);
  const double per_head_sequence = 4 * n * dh * d + 2 * n * n * dh + 2 * n * n * d + 2 * n * d * d;
  return per_head_sequence * static_cast<double>(N_) * static_cast<double>(Ml_);
}

} // namespace mft
