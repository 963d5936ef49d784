#pragma once
// The attention field of one depth slice's heads and its vector-Jacobian
// products (MODEL.md §3, §5), for all sequences at once.
//
// One head theta = (Q, K, V) moves token x_a of a sequence (tokens x_b) by
//
//     phi_theta[mu](x_a) = V ybar_a,  ybar_a = sum_b P_ab x_b,
//     P_ab = score map of s_ab,       s_ab = <Q x_a, K x_b> = x_a^T B x_b, B = Q^T K,
//
// and the slice's velocity is `scale` (1/M, or 1/(2M) beside the MLP) times
// the sum over heads. For the cotangent c_a of a head's output (times scale),
// with g_a = scale V^T c_a and ds_ab the score map's cotangent (softmax:
// P_ab (<g_a, x_b> - <g_a, ybar_a>); score_map.hpp has them all):
//
//     dV  = scale sum_a c_a ybar_a^T
//     dB  = sum_ab ds_ab x_a x_b^T,   dQ = K dB^T,   dK = Q dB
//     dx  : sum_a P_ab g_a  +  sum_a ds_ab B^T x_a  (as x_b)  +  sum_b ds_ab B x_b  (as x_a)
//
// Both directions loop over query tokens with the heads as vector lanes; the
// d x d products of all heads are BLAS-3 over blocks of sequences (the
// layouts are in attention.cpp).
//
// R is the type the kernel computes in (kernel_precision.hpp): double, or
// float for run.precision = mixed; its interface is double either way.
#include "mft/core/lanes.hpp"
#include "mft/model/heads.hpp"
#include "mft/model/score_map.hpp"
#include "mft/model/species_kernel.hpp"

#include <memory>
#include <string>
#include <vector>

namespace mft {

template <class R> class AttentionKernel final : public SpeciesKernel {
public:
  // N sequences of n tokens; `scale` weighs each head (1/M, or 1/(2M));
  // `score_map` turns scores into weights (and masks them).
  AttentionKernel(long long N, long long n, const HeadParticles &heads, double scale,
                  std::unique_ptr<ScoreMap> score_map);

  // Recomputes the per-slice products of the particles (B_m = Q_m^T K_m
  // and scale V_m). Call after the particles change; the kernel keeps a
  // reference to its heads for them and the parameter cotangents.
  void particles_changed() override;

  // F += scale sum over this rank's heads m of slice l of phi_{theta_lm}[mu_i](x_ia),
  // for every sequence i and token a. X and F are N x n x d.
  void add_velocity(long long l, const double *X, double *F) override;

  // For the cotangent C (N x n x d) of the velocity of slice l at tokens X:
  // dX += (dF/dX)^T C from this rank's heads (the caller sums over ranks), and
  // dQ, dK, dV (this rank's heads of slice l, layout [m][rows][cols]) +=
  // weight (dF/dtheta)^T C. The weights are evaluated once for both.
  void add_vjp(long long l, const double *X, const double *C, double *dX, double *dQ, double *dK,
               double *dV, double weight = 1.0);
  // The same with d = {dQ, dK, dV}.
  void add_vjp(long long l, const double *X, const double *C, double *dX, const std::vector<double *> &d,
               double weight) override {
    add_vjp(l, X, C, dX, d[0], d[1], d[2], weight);
  }

  void add_vjp_rows(long long l, const double *X, const double *C, double *dX, double weight, long long stride,
                    long long offset) override;
  void add_row(long long l, long long r, const std::vector<double *> &d) const override;
  void clear_rows() override;
  double row_bytes(long long N, long long stride) const override;

  // Flops of one add_velocity as MODEL.md §3 counts them (Q x and K x apart,
  // scores, P x, V y; the scores of visible pairs only), for this rank's heads.
  double model_flops() const override;
  std::string blow_up_hint() const override { return score_map_->blow_up_hint(); }

  const ScoreMap &score_map() const { return *score_map_; }

private:
  void velocity_block(long long l, long long i0, long long count, const double *X, double *F);
  // Where add_vjp_rows puts a call's cotangents: sequence i's into row i stride + offset, times weight.
  struct RowTarget {
    long long stride, offset;
    double weight;
  };
  // rows_out: null for add_vjp (the block's sum into dBk_, dVk_).
  void vjp_block(long long l, long long i0, long long count, const double *X, const double *C, double *dX,
                 const RowTarget *rows_out);
  // dQ, dK, dV (slice l, this rank's heads) += weight times the heads' share of dBk, dVk (d x (d Mp)).
  void map_to_particles(long long l, const double *dBk, const double *dVk, double weight, double *dQ, double *dK,
                        double *dV) const;
  // Flops of the VJP's products over all sequences (the log events').
  double vjp_sequence_flops() const;

  long long N_, n_, d_, d_h_, L_, Ml_;
  long long Mp_; // Ml padded to a whole number of R's vector lanes (query_tile.hpp)
  double scale_; // each head's weight in the field
  std::unique_ptr<ScoreMap> score_map_;
  long long block_; // sequences per batch of the token-side GEMMs
  const HeadParticles *heads_ = nullptr;
  AlignedVector<R> Bk_; // per slice: d x (d Mp), Bk[j][(k,m)] = (Q_m^T K_m)[j][k]
  AlignedVector<R> Vk_; // per slice: d x (d Mp), Vk[j][(k,m)] = scale V_m[j][k]
  // Workspace, sized once: no allocation inside an evaluation. Columns (k, m).
  AlignedVector<R> Z_;  // (block n) x (d Mp): x_a^T B_m
  AlignedVector<R> G_;  // (block n) x (d Mp): vjp, g_{a,m}
  AlignedVector<R> Y_;  // (block n) x (d Mp): ybar_{a,m}
  AlignedVector<R> T_;  // (block n) x (d Mp): vjp, sum_b ds_ab x_b
  AlignedVector<R> S_;  // n x Mp: one query token's scores, then weights
  AlignedVector<R> D_;  // n x Mp: vjp, one query token's <g, x_b>, then ds
  AlignedVector<R> E_;  // n x d x lanes_of<R>: vjp, a sequence's token terms by lane
  AlignedVector<R> score_work_;   // the score map's workspace (2 Mp)
  AlignedVector<R> column_scale_; // Mp: the score map's column factors (P = W scale)
  AlignedVector<R> column_max_;   // Mp: the scores' largest per head (softmax's shift)
  AlignedVector<R> ones_;         // Mp: the factors of a map that has none
  // float only (kernel_precision.hpp): a block's tokens and cotangents in R,
  // and a product on its way into double.
  AlignedVector<R> X_in_, C_in_, product_;
  AlignedDoubles Bm_;                // d x d: one head's B_m
  AlignedDoubles dBk_, dVk_;         // d x (d Mp): parameter cotangents of a slice
  AlignedDoubles dB_rows_, dV_rows_; // the NTK's rows, d x (d Mp) each (add_vjp_rows)
  mutable std::vector<double> map_work_; // d x d: one head's dB_m
};

} // namespace mft
