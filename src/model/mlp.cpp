#include "mft/model/mlp.hpp"

#include "mft/core/blas.hpp"
#include "mft/core/error.hpp"
#include "mft/core/log_events.hpp"
#include "mft/model/kernel_precision.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace mft {
namespace {

// act(z) and act'(z): relu; gelu as z Phi(z) with the exact normal CDF;
// huber-relu 0 (z <= 0), z^2/2 (0 < z <= 1), z - 1/2 (z > 1).
inline double activate(Activation a, double z) {
  switch (a) {
  case Activation::Relu: return z > 0 ? z : 0.0;
  case Activation::Gelu: return z * 0.5 * std::erfc(-z * M_SQRT1_2);
  case Activation::HuberRelu: return z <= 0 ? 0.0 : (z <= 1 ? 0.5 * z * z : z - 0.5);
  }
  return 0.0;
}

inline double derivative(Activation a, double z) {
  switch (a) {
  case Activation::Relu: return z > 0 ? 1.0 : 0.0;
  case Activation::Gelu:
    return 0.5 * std::erfc(-z * M_SQRT1_2) + z * std::exp(-0.5 * z * z) * 0.3989422804014327;
  case Activation::HuberRelu: return z <= 0 ? 0.0 : (z <= 1 ? z : 1.0);
  }
  return 0.0;
}

} // namespace

Activation parse_activation(const std::string &name) {
  if (name == "relu") return Activation::Relu;
  if (name == "gelu") return Activation::Gelu;
  if (name == "huber-relu") return Activation::HuberRelu;
  throw InputError(key_error("model.activation", name, "must be one of relu, gelu, huber-relu"));
}

template <class R>
MlpKernel<R>::MlpKernel(long long N, long long n, const NeuronParticles &neurons, double scale, Activation act)
    : tokens_(N * n), n_(n), d_(neurons.d), d_f_(neurons.d_f), L_(neurons.L), Ml_(neurons.own.count()),
      scale_(scale), act_(act), neurons_(&neurons) {
  const long long width = std::max<long long>(1, Ml_ * d_f_);
  // At least one sequence's tokens: the NTK's rows take a sequence at a time.
  block_ = std::max(n_, std::clamp<long long>(32768 / width, 16, std::max<long long>(tokens_, 1)));
  W1c_.resize(static_cast<size_t>(L_ * d_ * width));
  W2s_.resize(W1c_.size());
  H_.resize(static_cast<size_t>(block_ * width));
  A_.resize(H_.size());
  dW1c_.resize(static_cast<size_t>(d_ * width));
  dW2s_.resize(dW1c_.size());
  if constexpr (!std::is_same_v<R, double>) {
    X_in_.resize(static_cast<size_t>(block_ * d_));
    C_in_.resize(X_in_.size());
    product_.resize(static_cast<size_t>(std::max(block_, width) * d_));
  }
  particles_changed();
}

std::unique_ptr<SpeciesKernel> NeuronParticles::make_kernel(long long N, long long n, double scale,
                                                            const FieldOptions &options) const {
  if (options.mixed_precision)
    return std::make_unique<MlpKernel<float>>(N, n, *this, scale, parse_activation(options.activation));
  return std::make_unique<MlpKernel<double>>(N, n, *this, scale, parse_activation(options.activation));
}

template <class R> void MlpKernel<R>::particles_changed() {
  const NeuronParticles &neurons = *neurons_;
  const long long ld = Ml_ * d_f_;
  for (long long l = 0; l < L_; ++l) {
    R *W1c = W1c_.data() + l * d_ * ld;
    R *W2s = W2s_.data() + l * d_ * ld;
    for (long long m = 0; m < Ml_; ++m) {
      const double *W1 = neurons.w1(l, m), *W2 = neurons.w2(l, m);
      for (long long f = 0; f < d_f_; ++f)
        for (long long j = 0; j < d_; ++j) {
          W1c[j * ld + m * d_f_ + f] = static_cast<R>(W1[f * d_ + j]);
          W2s[(m * d_f_ + f) * d_ + j] = static_cast<R>(scale_ * W2[j * d_f_ + f]);
        }
    }
  }
}

template <class R> void MlpKernel<R>::add_velocity(long long l, const double *X, double *F) {
  if (Ml_ == 0) return;
  // W1 x and W2 h: 2 d d_f each per token and neuron.
  LogScope log(&LogEvents::mlp_forward, 4.0 * static_cast<double>(tokens_ * Ml_ * d_ * d_f_));
  const long long ld = Ml_ * d_f_;
  const R *W1c = W1c_.data() + l * d_ * ld, *W2s = W2s_.data() + l * d_ * ld;
  for (long long r0 = 0; r0 < tokens_; r0 += block_) {
    const long long rows = std::min(block_, tokens_ - r0);
    const R *Xr = in_precision<R>(X + r0 * d_, rows * d_, X_in_);
    gemm(false, false, rows, ld, d_, R(1), Xr, d_, W1c, ld, R(0), H_.data(), ld);
    for (long long i = 0; i < rows * ld; ++i) A_[i] = static_cast<R>(activate(act_, H_[i]));
    add_product<R>(false, false, rows, d_, ld, 1.0, A_.data(), ld, W2s, d_, F + r0 * d_, d_, product_);
  }
}

template <class R>
void MlpKernel<R>::vjp_tokens(const double *X, const double *C, double *dX, const R *W1c, const R *W2s,
                              long long rows, double *dW1c, double *dW2s, double weight) {
  const long long ld = Ml_ * d_f_;
  const R *Xr = in_precision<R>(X, rows * d_, X_in_), *Cr = in_precision<R>(C, rows * d_, C_in_);
  gemm(false, false, rows, ld, d_, R(1), Xr, d_, W1c, ld, R(0), H_.data(), ld);
  for (long long i = 0; i < rows * ld; ++i) A_[i] = static_cast<R>(activate(act_, H_[i]));
  // dW2 (unscaled particles): scale u c^T, accumulated as (Ml d_f) x d.
  add_product<R>(true, false, ld, d_, rows, weight * scale_, A_.data(), ld, Cr, d_, dW2s, d_, product_);
  // dz = act'(z) .* (scale W2^T c), into A_.
  gemm(false, true, rows, ld, d_, R(1), Cr, d_, W2s, d_, R(0), A_.data(), ld);
  for (long long i = 0; i < rows * ld; ++i) A_[i] *= static_cast<R>(derivative(act_, H_[i]));
  add_product<R>(false, true, rows, d_, ld, 1.0, A_.data(), ld, W1c, ld, dX, d_, product_);
  add_product<R>(true, false, d_, ld, rows, weight, Xr, d_, A_.data(), ld, dW1c, ld, product_);
}

template <class R>
void MlpKernel<R>::map_to_particles(const double *dW1c, const double *dW2s, double weight, double *dW1,
                                 double *dW2) const {
  const long long ld = Ml_ * d_f_;
  for (long long m = 0; m < Ml_; ++m)
    for (long long f = 0; f < d_f_; ++f)
      for (long long j = 0; j < d_; ++j) {
        dW1[m * d_f_ * d_ + f * d_ + j] += weight * dW1c[j * ld + m * d_f_ + f];
        dW2[m * d_ * d_f_ + j * d_f_ + f] += weight * dW2s[(m * d_f_ + f) * d_ + j];
      }
}

template <class R>
void MlpKernel<R>::add_vjp(long long l, const double *X, const double *C, double *dX, double *dW1,
                        double *dW2, double weight) {
  if (Ml_ == 0) return;
  // Per token and neuron: W1 x again, W2^T c, dW2, W1^T dz, dW1 (2 d d_f each).
  LogScope log(&LogEvents::mlp_vjp, 10.0 * static_cast<double>(tokens_ * Ml_ * d_ * d_f_));
  const long long ld = Ml_ * d_f_;
  const R *W1c = W1c_.data() + l * d_ * ld, *W2s = W2s_.data() + l * d_ * ld;
  std::fill(dW1c_.begin(), dW1c_.end(), 0.0);
  std::fill(dW2s_.begin(), dW2s_.end(), 0.0);
  for (long long r0 = 0; r0 < tokens_; r0 += block_)
    vjp_tokens(X + r0 * d_, C + r0 * d_, dX + r0 * d_, W1c, W2s, std::min(block_, tokens_ - r0), dW1c_.data(),
               dW2s_.data(), 1.0);
  map_to_particles(dW1c_.data(), dW2s_.data(), weight, dW1, dW2);
}

template <class R>
void MlpKernel<R>::add_vjp_rows(long long l, const double *X, const double *C, double *dX, double weight,
                             long long stride, long long offset) {
  if (Ml_ == 0) return;
  const long long ld = Ml_ * d_f_, per_row = d_ * ld, N = tokens_ / n_;
  if (static_cast<long long>(dW1_rows_.size()) != N * stride * per_row) {
    dW1_rows_.assign(static_cast<size_t>(N * stride * per_row), 0.0);
    dW2_rows_.assign(dW1_rows_.size(), 0.0);
  }
  LogScope log(&LogEvents::mlp_vjp, 10.0 * static_cast<double>(tokens_ * Ml_ * d_ * d_f_));
  const R *W1c = W1c_.data() + l * d_ * ld, *W2s = W2s_.data() + l * d_ * ld;
  // A sequence at a time: its own parameter cotangents.
  for (long long i = 0; i < N; ++i) {
    const long long r = i * stride + offset, at = i * n_ * d_;
    vjp_tokens(X + at, C + at, dX + at, W1c, W2s, n_, dW1_rows_.data() + r * per_row,
               dW2_rows_.data() + r * per_row, weight);
  }
}

template <class R>
void MlpKernel<R>::add_row(long long, long long r, const std::vector<double *> &d) const {
  if (Ml_ == 0) return;
  const long long per_row = d_ * Ml_ * d_f_;
  map_to_particles(dW1_rows_.data() + r * per_row, dW2_rows_.data() + r * per_row, 1.0, d[0], d[1]);
}

template <class R> void MlpKernel<R>::clear_rows() {
  std::fill(dW1_rows_.begin(), dW1_rows_.end(), 0.0);
  std::fill(dW2_rows_.begin(), dW2_rows_.end(), 0.0);
}

template <class R> double MlpKernel<R>::row_bytes(long long N, long long stride) const {
  return 2.0 * static_cast<double>(N * stride) * static_cast<double>(d_ * Ml_ * d_f_) * sizeof(double);
}

template class MlpKernel<double>;
template class MlpKernel<float>;

} // namespace mft
