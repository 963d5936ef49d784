#include "mft/model/attention.hpp"

#include "mft/core/blas.hpp"
#include "mft/core/log_events.hpp"

#include <algorithm>
#include <cmath>

namespace mft {

// Layout, for one slice and one sequence with tokens X (n x d) and this
// rank's Ml heads. A matrix n x (Ml d) with blocks m is also an (n Ml) x d
// matrix with rows (a, m); the GEMMs below use both readings.
//
// forward
//   Z = X [B_1 ... B_Ml]          rows (a, m): x_a^T B_m
//   S = X Z^T                     n x (n Ml): S[b, (a,m)] = s_ab of head m
//   P = score map of S by column  (score_map.hpp): each step over b is one
//                                 vector pass across all (a, m)
//   Y = P^T X                     rows (a, m): ybar of head m at token a
//   F += Y [scale V_m^T]          Y read as n x (Ml d): sums over m in one GEMM
// vjp (C: cotangent of F), P and D by column as in the forward
//   G = C [scale V_m]             rows (a, m): g_{a,m}
//   Y = P^T X                     rows (a, m): ybar_{a,m}
//   D = score map cotangent of X G^T      n x (n Ml): D[b, (a,m)] = ds_ab
//   T = D^T X                     rows (a, m): sum_b ds_ab x_b
//   dX += D Z + P G + T [B_m]^T   (the three token terms of §5)
//   [dV_m] += scale C^T Y,  [dB_m] += X^T T   (summed over sequences)
//
// Using B_m instead of Q x and K x apart makes the scores of all heads one
// GEMM per sequence; it costs d x d instead of d_h x d per head, the same
// when d_h = d.

AttentionKernel::AttentionKernel(long long N, long long n, const HeadParticles &heads, double scale,
                                 std::unique_ptr<ScoreMap> score_map)
    : N_(N), n_(n), d_(heads.d), d_h_(heads.d_h), L_(heads.L), Ml_(heads.own.count()),
      scale_(scale), score_map_(std::move(score_map)) {
  score_map_->set_layout(Ml_); // score rows (a, m): query token a = row / Ml
  // Batch enough sequences for the token-side GEMMs to be efficient while
  // the block's workspace stays in cache.
  const long long per_sequence = std::max<long long>(1, 2 * n_ * Ml_ * d_);
  block_ = std::clamp<long long>(32768 / per_sequence, 1, std::max<long long>(N_, 1));
  const auto slice = static_cast<size_t>(d_ * Ml_ * d_);
  B_.resize(L_ * slice);
  Vn_.resize(L_ * slice);
  dB_.resize(slice);
  dVc_.resize(slice);
  const auto blockwide = static_cast<size_t>(block_ * n_ * Ml_ * d_);
  Z_.resize(blockwide);
  W_.resize(blockwide);
  Y_.resize(blockwide);
  T_.resize(blockwide);
  S_.resize(static_cast<size_t>(n_ * Ml_ * n_));
  P_.resize(S_.size());
  score_work_.resize(static_cast<size_t>(2 * n_ * Ml_));
  set_particles(heads);
}

void AttentionKernel::set_particles(const HeadParticles &heads) {
  heads_ = &heads;
  const long long ld = Ml_ * d_;
  for (long long l = 0; l < L_; ++l) {
    double *B = B_.data() + l * d_ * ld;
    double *Vn = Vn_.data() + l * d_ * ld;
    for (long long m = 0; m < Ml_; ++m) {
      // B_m = Q_m^T K_m: (d x d_h)(d_h x d), written into columns m d .. m d + d.
      gemm(true, false, d_, d_, d_h_, 1.0, heads.q(l, m), d_, heads.k(l, m), d_, 0.0, B + m * d_,
           ld);
      const double *V = heads.v(l, m);
      for (long long j = 0; j < d_; ++j)
        for (long long k = 0; k < d_; ++k) Vn[j * ld + m * d_ + k] = scale_ * V[j * d_ + k];
    }
  }
}

void AttentionKernel::velocity_block(long long l, long long i0, long long count, const double *X,
                                     double *F) {
  const long long ld = Ml_ * d_, rows = count * n_, nM = n_ * Ml_;
  const double *Xb = X + i0 * n_ * d_;
  const double *Vn = Vn_.data() + l * d_ * ld;
  gemm(false, false, rows, ld, d_, 1.0, Xb, d_, B_.data() + l * d_ * ld, ld, 0.0, Z_.data(), ld);
  for (long long i = 0; i < count; ++i) {
    const double *Xi = Xb + i * n_ * d_;
    gemm(false, true, n_, nM, d_, 1.0, Xi, d_, Z_.data() + i * n_ * ld, d_, 0.0, S_.data(), nM);
    score_map_->weights(S_.data(), n_, nM, score_work_.data());
    gemm(true, false, nM, d_, n_, 1.0, S_.data(), nM, Xi, d_, 0.0, Y_.data(), d_);
    gemm(false, true, n_, d_, ld, 1.0, Y_.data(), ld, Vn, ld, 1.0, F + (i0 + i) * n_ * d_, d_);
  }
}

void AttentionKernel::add_velocity(long long l, const double *X, double *F) {
  if (Ml_ == 0) return;
  const double n = static_cast<double>(n_), d = static_cast<double>(d_);
  // Z and W (2 n d^2 each), the scores and P W (2 n^2 d each), per sequence and head.
  LogScope log(&LogEvents::attention_forward,
               static_cast<double>(N_) * static_cast<double>(Ml_) * (4 * n * d * d + 4 * n * n * d));
  for (long long i0 = 0; i0 < N_; i0 += block_)
    velocity_block(l, i0, std::min(block_, N_ - i0), X, F);
}

void AttentionKernel::vjp_block(long long l, long long i0, long long count, const double *X,
                                const double *C, double *dX) {
  const long long ld = Ml_ * d_, rows = count * n_, nM = n_ * Ml_;
  const double *Xb = X + i0 * n_ * d_;
  const double *Cb = C + i0 * n_ * d_;
  const double *B = B_.data() + l * d_ * ld;
  double *G = W_.data();
  gemm(false, false, rows, ld, d_, 1.0, Xb, d_, B, ld, 0.0, Z_.data(), ld);
  gemm(false, false, rows, ld, d_, 1.0, Cb, d_, Vn_.data() + l * d_ * ld, ld, 0.0, G, ld);
  for (long long i = 0; i < count; ++i) {
    const double *Xi = Xb + i * n_ * d_;
    const double *Zi = Z_.data() + i * n_ * ld;
    const double *Gi = G + i * n_ * ld;
    double *Yi = Y_.data() + i * n_ * ld;
    double *Ti = T_.data() + i * n_ * ld;
    double *dXi = dX + (i0 + i) * n_ * d_;
    double *P = S_.data(), *D = P_.data();
    gemm(false, true, n_, nM, d_, 1.0, Xi, d_, Zi, d_, 0.0, P, nM);
    score_map_->weights(P, n_, nM, score_work_.data());
    gemm(true, false, nM, d_, n_, 1.0, P, nM, Xi, d_, 0.0, Yi, d_);
    gemm(false, true, n_, nM, d_, 1.0, Xi, d_, Gi, d_, 0.0, D, nM);
    score_map_->cotangent(P, D, n_, nM, score_work_.data());
    gemm(true, false, nM, d_, n_, 1.0, D, nM, Xi, d_, 0.0, Ti, d_);
    gemm(false, false, n_, d_, nM, 1.0, D, nM, Zi, d_, 1.0, dXi, d_);
    gemm(false, false, n_, d_, nM, 1.0, P, nM, Gi, d_, 1.0, dXi, d_);
    gemm(false, true, n_, d_, ld, 1.0, Ti, ld, B, ld, 1.0, dXi, d_);
  }
  gemm(true, false, d_, ld, rows, scale_, Cb, d_, Y_.data(), ld, 1.0, dVc_.data(), ld);
  gemm(true, false, d_, ld, rows, 1.0, Xb, d_, T_.data(), ld, 1.0, dB_.data(), ld);
}

void AttentionKernel::add_vjp(long long l, const double *X, const double *C, double *dX,
                              double *dQ, double *dK, double *dV, double weight) {
  if (Ml_ == 0) return;
  const double n = static_cast<double>(n_), d = static_cast<double>(d_), dh = static_cast<double>(d_h_);
  // Per sequence and head: Z, G, dV, dB (2 n d^2 each), T B^T (2 n d^2), the
  // scores, Y, D, T, D^T Z, P^T G (2 n^2 d each); per head dQ, dK (2 d_h d^2 each).
  LogScope log(&LogEvents::attention_vjp,
               static_cast<double>(Ml_) * (static_cast<double>(N_) * (10 * n * d * d + 12 * n * n * d) +
                                           4 * dh * d * d));
  std::fill(dB_.begin(), dB_.end(), 0.0);
  std::fill(dVc_.begin(), dVc_.end(), 0.0);
  for (long long i0 = 0; i0 < N_; i0 += block_)
    vjp_block(l, i0, std::min(block_, N_ - i0), X, C, dX);
  const long long ld = Ml_ * d_, qk = d_h_ * d_;
  for (long long m = 0; m < Ml_; ++m) {
    const double *dBm = dB_.data() + m * d_;
    gemm(false, true, d_h_, d_, d_, weight, heads_->k(l, m), d_, dBm, ld, 1.0, dQ + m * qk, d_);
    gemm(false, false, d_h_, d_, d_, weight, heads_->q(l, m), d_, dBm, ld, 1.0, dK + m * qk, d_);
    for (long long j = 0; j < d_; ++j)
      for (long long k = 0; k < d_; ++k) dV[m * d_ * d_ + j * d_ + k] += weight * dVc_[j * ld + m * d_ + k];
  }
}

double AttentionKernel::model_flops() const {
  const double n = static_cast<double>(n_), d = static_cast<double>(d_),
               dh = static_cast<double>(d_h_);
  const double per_head_sequence = 4 * n * dh * d + 2 * n * n * dh + 2 * n * n * d + 2 * n * d * d;
  return per_head_sequence * static_cast<double>(N_) * static_cast<double>(Ml_);
}

} // namespace mft
