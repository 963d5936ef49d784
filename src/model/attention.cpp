#include "mft/model/attention.hpp"

#include "mft/core/blas.hpp"
#include "mft/core/log_events.hpp"
#include "mft/model/kernel_precision.hpp"
#include "query_tile.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace mft {

// Layout, for one slice, a block of sequences with tokens X ((block n) x d)
// and this rank's Ml heads padded to Mp (a multiple of R's vector lanes).
// Columns (k, m) of a (block n) x (d Mp) matrix put the heads in the fast
// index, packed in blocks of the vector lanes (query_tile::packed_index), so
// the per-query loops (query_tile.hpp) vectorise across heads. Z, G, Y, T,
// Bk, Vk, dBk and dVk all share this column order, which the GEMMs contract.
//
// forward
//   Z = X Bk,  Bk[j][(k,m)] = B_m[j][k]   Z[(i,a)][(k,m)] = (x_a^T B_m)[k]
//   per sequence, per query token a:
//     S = scores of a (b x m), P = score map of S, Y_a = mix of P
//   F += Y Vk^T,  Vk[j][(k,m)] = scale V_m[j][k]   (sums over heads and k)
// vjp (C: cotangent of F)
//   Z = X Bk,  G = C Vk                   G[(i,a)][(k,m)] = g_{a,m}[k]
//   per sequence, per query token a:
//     P as in the forward, Y_a = mix of P (for dV),
//     ds = score map cotangent of T[b][m] = <g_{a,m}, x_b>, T_a = mix of ds,
//     E += spread of (ds, P)              (the token terms D Z + P G)
//   dX += lane sums of E (per sequence) + T Bk^T
//   dBk += X^T T,  dVk += scale C^T Y      (summed over sequences)
//
// B_m = Q_m^T K_m instead of Q x and K x apart makes the scores of a head one
// pass over d; it costs d x d instead of d_h x d per head, the same when
// d_h = d.

namespace {
template <class R> long long padded_heads(long long Ml) {
  return (Ml + lanes_of<R> - 1) / lanes_of<R> * lanes_of<R>;
}
} // namespace

template <class R>
AttentionKernel<R>::AttentionKernel(long long N, long long n, const HeadParticles &heads, double scale,
                                    std::unique_ptr<ScoreMap> score_map)
    : N_(N), n_(n), d_(heads.d), d_h_(heads.d_h), L_(heads.L), Ml_(heads.own.count()),
      Mp_(padded_heads<R>(Ml_)), scale_(scale), score_map_(std::move(score_map)), heads_(&heads) {
  // Sequences per batch of the token-side GEMMs: enough rows for BLAS, while
  // each of the four (block n) x (d Mp) arrays of the VJP stays within
  // 256 KiB (L2).
  const long long per_sequence = std::max<long long>(1, n_ * d_ * Mp_ * static_cast<long long>(sizeof(R)));
  block_ = std::clamp<long long>(262144 / per_sequence, 1, std::max<long long>(N_, 1));
  const auto slice = static_cast<size_t>(d_ * d_ * Mp_);
  Bk_.assign(L_ * slice, R(0));
  Vk_.assign(L_ * slice, R(0));
  dBk_.resize(slice);
  dVk_.resize(slice);
  Bm_.resize(static_cast<size_t>(d_ * d_));
  const auto blockwide = static_cast<size_t>(block_ * n_ * d_ * Mp_);
  Z_.resize(blockwide);
  G_.resize(blockwide);
  Y_.resize(blockwide);
  T_.resize(blockwide);
  S_.resize(static_cast<size_t>(n_ * Mp_));
  D_.resize(S_.size());
  E_.assign(static_cast<size_t>(n_ * d_ * lanes_of<R>), R(0));
  score_work_.resize(static_cast<size_t>(2 * Mp_));
  column_scale_.resize(static_cast<size_t>(Mp_));
  column_max_.resize(static_cast<size_t>(Mp_));
  ones_.assign(static_cast<size_t>(Mp_), R(1));
  if constexpr (!std::is_same_v<R, double>) {
    X_in_.resize(static_cast<size_t>(block_ * n_ * d_));
    C_in_.resize(X_in_.size());
    product_.resize(static_cast<size_t>(std::max(block_ * n_ * d_, d_ * d_ * Mp_)));
  }
  particles_changed();
}

std::unique_ptr<SpeciesKernel> HeadParticles::make_kernel(long long N, long long n, double scale,
                                                          const FieldOptions &options) const {
  if (options.mixed_precision)
    return std::make_unique<AttentionKernel<float>>(N, n, *this, scale, make_score_map(options));
  return std::make_unique<AttentionKernel<double>>(N, n, *this, scale, make_score_map(options));
}

template <class R> void AttentionKernel<R>::particles_changed() {
  const HeadParticles &heads = *heads_;
  const long long ld = d_ * Mp_;
  for (long long l = 0; l < L_; ++l) {
    R *Bk = Bk_.data() + l * d_ * ld;
    R *Vk = Vk_.data() + l * d_ * ld;
    for (long long m = 0; m < Ml_; ++m) {
      // B_m = Q_m^T K_m: (d x d_h)(d_h x d).
      gemm(true, false, d_, d_, d_h_, 1.0, heads.q(l, m), d_, heads.k(l, m), d_, 0.0, Bm_.data(), d_);
      const double *V = heads.v(l, m);
      for (long long j = 0; j < d_; ++j)
        for (long long k = 0; k < d_; ++k) {
          Bk[j * ld + query_tile::packed_index<R>(k, m, d_)] = static_cast<R>(Bm_[j * d_ + k]);
          Vk[j * ld + query_tile::packed_index<R>(k, m, d_)] = static_cast<R>(scale_ * V[j * d_ + k]);
        }
    }
  }
}

template <class R>
void AttentionKernel<R>::velocity_block(long long l, long long i0, long long count, const double *X, double *F) {
  const long long ld = d_ * Mp_, rows = count * n_;
  const R *Xb = in_precision<R>(X + i0 * n_ * d_, rows * d_, X_in_);
  gemm(false, false, rows, ld, d_, R(1), Xb, d_, Bk_.data() + l * d_ * ld, ld, R(0), Z_.data(), ld);
  query_tile::with_token_dim(d_, [&](auto dim) {
    R *W = S_.data(), *scale = column_scale_.data();
    R *column_max = score_map_->uses_column_max() ? column_max_.data() : nullptr;
    for (long long i = 0; i < count; ++i) {
      const R *Xi = Xb + i * n_ * d_;
      for (long long a = 0; a < n_; ++a) {
        const long long row = i * n_ + a, visible = score_map_->visible(a, n_);
        R *Ya = Y_.data() + row * ld;
        query_tile::scores(Xi, dim, Z_.data() + row * ld, Mp_, visible, W, column_max);
        const bool scaled = score_map_->weights(W, visible, Mp_, column_max, score_work_.data(), scale);
        query_tile::mix(Xi, dim, W, scaled ? scale : ones_.data(), Mp_, visible, Ya); // P = W factor
      }
    }
  });
  add_product<R>(false, true, rows, d_, ld, 1.0, Y_.data(), ld, Vk_.data() + l * d_ * ld, ld, F + i0 * n_ * d_, d_,
                 product_);
}

template <class R> void AttentionKernel<R>::add_velocity(long long l, const double *X, double *F) {
  if (Ml_ == 0) return;
  LogScope log(&LogEvents::attention_forward, model_flops());
  for (long long i0 = 0; i0 < N_; i0 += block_)
    velocity_block(l, i0, std::min(block_, N_ - i0), X, F);
}

template <class R>
void AttentionKernel<R>::vjp_block(long long l, long long i0, long long count, const double *X, const double *C,
                                   double *dX, const RowTarget *rows_out) {
  const long long ld = d_ * Mp_, rows = count * n_;
  const R *Xb = in_precision<R>(X + i0 * n_ * d_, rows * d_, X_in_);
  const R *Cb = in_precision<R>(C + i0 * n_ * d_, rows * d_, C_in_);
  const R *Bk = Bk_.data() + l * d_ * ld;
  double *dXb = dX + i0 * n_ * d_;
  gemm(false, false, rows, ld, d_, R(1), Xb, d_, Bk, ld, R(0), Z_.data(), ld);
  gemm(false, false, rows, ld, d_, R(1), Cb, d_, Vk_.data() + l * d_ * ld, ld, R(0), G_.data(), ld);
  query_tile::with_token_dim(d_, [&](auto dim) {
    R *W = S_.data(), *ds = D_.data(), *scale = column_scale_.data();
    R *column_max = score_map_->uses_column_max() ? column_max_.data() : nullptr;
    for (long long i = 0; i < count; ++i) {
      const R *Xi = Xb + i * n_ * d_;
      for (long long a = 0; a < n_; ++a) {
        const long long row = i * n_ + a, visible = score_map_->visible(a, n_);
        const R *Za = Z_.data() + row * ld, *Ga = G_.data() + row * ld;
        R *Ya = Y_.data() + row * ld;
        query_tile::scores_pair(Xi, dim, Za, Ga, Mp_, visible, W, ds, column_max); // scores, <g_{a,m}, x_b>
        const bool scaled =
            score_map_->weights_and_cotangent(W, ds, visible, Mp_, column_max, score_work_.data(), scale);
        const R *factor = scaled ? scale : ones_.data(); // P = W factor
        query_tile::mix_pair(Xi, dim, W, factor, ds, Mp_, visible, Ya, T_.data() + row * ld);
        query_tile::spread(ds, W, factor, Za, Ga, dim, Mp_, visible, E_.data());
      }
      query_tile::fold_spread(E_.data(), n_, d_, dXb + i * n_ * d_);
    }
  });
  add_product<R>(false, true, rows, d_, ld, 1.0, T_.data(), ld, Bk, ld, dXb, d_, product_);
  if (!rows_out) {
    add_product<R>(true, false, d_, ld, rows, scale_, Cb, d_, Y_.data(), ld, dVk_.data(), ld, product_);
    add_product<R>(true, false, d_, ld, rows, 1.0, Xb, d_, T_.data(), ld, dBk_.data(), ld, product_);
    return;
  }
  // The NTK's rows: each sequence's dVk and dBk apart, weighted.
  const long long per_row = d_ * ld;
  for (long long i = 0; i < count; ++i) {
    const long long r = (i0 + i) * rows_out->stride + rows_out->offset, at = i * n_;
    add_product<R>(true, false, d_, ld, n_, rows_out->weight * scale_, Cb + at * d_, d_, Y_.data() + at * ld, ld,
                   dV_rows_.data() + r * per_row, ld, product_);
    add_product<R>(true, false, d_, ld, n_, rows_out->weight, Xb + at * d_, d_, T_.data() + at * ld, ld,
                   dB_rows_.data() + r * per_row, ld, product_);
  }
}

template <class R>
void AttentionKernel<R>::add_vjp(long long l, const double *X, const double *C, double *dX,
                              double *dQ, double *dK, double *dV, double weight) {
  if (Ml_ == 0) return;
  // Per head dQ, dK from dB (2 d_h d^2 each) besides the sequences' products.
  const double d = static_cast<double>(d_), dh = static_cast<double>(d_h_);
  LogScope log(&LogEvents::attention_vjp, vjp_sequence_flops() + static_cast<double>(Ml_) * 4 * dh * d * d);
  std::fill(dBk_.begin(), dBk_.end(), 0.0);
  std::fill(dVk_.begin(), dVk_.end(), 0.0);
  for (long long i0 = 0; i0 < N_; i0 += block_)
    vjp_block(l, i0, std::min(block_, N_ - i0), X, C, dX, nullptr);
  map_to_particles(l, dBk_.data(), dVk_.data(), weight, dQ, dK, dV);
}

template <class R>
void AttentionKernel<R>::map_to_particles(long long l, const double *dBk, const double *dVk, double weight,
                                       double *dQ, double *dK, double *dV) const {
  // dB_m, dV_m out of the lanes; dQ_m = K_m dB_m^T, dK_m = Q_m dB_m.
  const long long ld = d_ * Mp_, qk = d_h_ * d_;
  std::vector<double> &dB = map_work_;
  dB.resize(static_cast<size_t>(d_ * d_));
  for (long long m = 0; m < Ml_; ++m) {
    for (long long j = 0; j < d_; ++j)
      for (long long k = 0; k < d_; ++k) {
        dB[j * d_ + k] = dBk[j * ld + query_tile::packed_index<R>(k, m, d_)];
        dV[m * d_ * d_ + j * d_ + k] += weight * dVk[j * ld + query_tile::packed_index<R>(k, m, d_)];
      }
    gemm(false, true, d_h_, d_, d_, weight, heads_->k(l, m), d_, dB.data(), d_, 1.0, dQ + m * qk, d_);
    gemm(false, false, d_h_, d_, d_, weight, heads_->q(l, m), d_, dB.data(), d_, 1.0, dK + m * qk, d_);
  }
}

template <class R>
void AttentionKernel<R>::add_vjp_rows(long long l, const double *X, const double *C, double *dX, double weight,
                                   long long stride, long long offset) {
  if (Ml_ == 0) return;
  const long long n = N_ * stride * d_ * d_ * Mp_;
  if (static_cast<long long>(dB_rows_.size()) != n) {
    dB_rows_.assign(static_cast<size_t>(n), 0.0);
    dV_rows_.assign(static_cast<size_t>(n), 0.0);
  }
  LogScope log(&LogEvents::attention_vjp, vjp_sequence_flops());
  const RowTarget target{stride, offset, weight};
  for (long long i0 = 0; i0 < N_; i0 += block_)
    vjp_block(l, i0, std::min(block_, N_ - i0), X, C, dX, &target);
}

template <class R>
void AttentionKernel<R>::add_row(long long l, long long r, const std::vector<double *> &d) const {
  if (Ml_ == 0) return;
  const long long per_row = d_ * d_ * Mp_;
  map_to_particles(l, dB_rows_.data() + r * per_row, dV_rows_.data() + r * per_row, 1.0, d[0], d[1], d[2]);
}

template <class R> void AttentionKernel<R>::clear_rows() {
  std::fill(dB_rows_.begin(), dB_rows_.end(), 0.0);
  std::fill(dV_rows_.begin(), dV_rows_.end(), 0.0);
}

template <class R> double AttentionKernel<R>::row_bytes(long long N, long long stride) const {
  return 2.0 * static_cast<double>(N * stride) * static_cast<double>(d_ * d_ * Mp_) * sizeof(double);
}

template <class R> double AttentionKernel<R>::vjp_sequence_flops() const {
  const double n = static_cast<double>(n_), d = static_cast<double>(d_);
  // Per sequence and head: Z, G, dV, dB (2 n d^2 each), T B^T (2 n d^2), the
  // scores, Y, D, T, D^T Z, P^T G (2 n^2 d each).
  return static_cast<double>(Ml_) * static_cast<double>(N_) * (10 * n * d * d + 12 * n * n * d);
}

template <class R> double AttentionKernel<R>::model_flops() const {
  const double n = static_cast<double>(n_), d = static_cast<double>(d_),
               dh = static_cast<double>(d_h_);
  // The scores and the mix over the visible pairs (n^2, or n (n + 1) / 2
  // under the causal mask).
  double pairs = 0;
  for (long long a = 0; a < n_; ++a) pairs += static_cast<double>(score_map_->visible(a, n_));
  const double per_head_sequence = 4 * n * dh * d + 2 * pairs * dh + 2 * pairs * d + 2 * n * d * d;
  return per_head_sequence * static_cast<double>(N_) * static_cast<double>(Ml_);
}

template class AttentionKernel<double>;
template class AttentionKernel<float>;

} // namespace mft
