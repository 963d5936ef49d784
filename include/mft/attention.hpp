#pragma once
// The attention field of one depth slice's heads (MODEL.md §3).
//
// One head theta = (Q, K, V) moves token x_a of a sequence (tokens x_b) by
//
//     phi_theta[mu](x_a) = V sum_b P_ab x_b,  P_ab = softmax_b(<Q x_a, K x_b>),
//
// and the slice's velocity is the average over its M heads. Evaluated in
// batches so that almost all flops are BLAS-3 (see attention.cpp).
#include "mft/particles.hpp"

#include <vector>

namespace mft {

class AttentionKernel {
public:
  AttentionKernel(long long N, long long n, const HeadParticles &heads);

  // Recomputes the per-slice products of the particles (B_m = Q_m^T K_m and
  // V_m^T / M). Call after the particles change.
  void set_particles(const HeadParticles &heads);

  // F += (1/M) sum over this rank's heads m of slice l of phi_{theta_lm}[mu_i](x_ia),
  // for every sequence i and token a. X and F are N x n x d.
  void add_velocity(long long l, const double *X, double *F);

  // Flops of one add_velocity as MODEL.md §3 counts them (Q x and K x apart,
  // scores, P x, V y), for this rank's heads.
  double model_flops() const;

private:
  void sequence_block(long long l, long long i0, long long count, const double *X, double *F);

  long long N_, n_, d_, d_h_, L_, M_, Ml_;
  long long block_; // sequences per batch of the token-side GEMMs
  std::vector<double> B_;  // per slice: d x (Ml d), block m = Q_m^T K_m
  std::vector<double> Vt_; // per slice: d x (Ml d), block m = V_m^T / M
  std::vector<double> Z_;  // (block n) x (Ml d): rows x_a^T B_m
  std::vector<double> W_;  // (block n) x (Ml d): rows (V_m x_b)^T / M
  std::vector<double> S_;  // (n Ml) x n scores of one sequence, rows (a, m)
  std::vector<double> P_;  // n x (n Ml) attention of one sequence, columns (b, m)
};

// Softmax of each of `rows` rows of length n, in place, max-subtracted so
// that scores of any size give finite weights.
void softmax_rows(double *S, long long rows, long long n);

} // namespace mft
