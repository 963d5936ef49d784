#pragma once
// The MLP field of one depth slice's neuron particles and its
// vector-Jacobian products ([A]'s block, MODEL.md §2).
//
// One neuron w = (W1, W2) moves every token x by h(x; w) = W2 act(W1 x); the
// slice's MLP velocity is `scale` (1/(2 M_f) beside attention) times the sum
// over neurons. With z = W1 x, u = act(z) and the cotangent c of the output:
//
//     dW2 = scale c u^T,   dz = act'(z) .* (scale W2^T c),   dW1 = dz x^T,   dx = W1^T dz.
//
// Tokens do not interact here, so all tokens of all sequences form one batch.
// R: the type the kernel computes in (double, or float for run.precision =
// mixed; kernel_precision.hpp); its interface is double either way.
#include "mft/core/lanes.hpp"
#include "mft/model/neurons.hpp"
#include "mft/model/species_kernel.hpp"

#include <string>
#include <vector>

namespace mft {

enum class Activation { Relu, Gelu, HuberRelu };
Activation parse_activation(const std::string &name);

template <class R> class MlpKernel final : public SpeciesKernel {
public:
  // N sequences of n tokens; the kernel keeps a reference to `neurons`.
  MlpKernel(long long N, long long n, const NeuronParticles &neurons, double scale, Activation act);

  void particles_changed() override;

  // F += scale sum over this rank's neurons of slice l of h(x; w), for all
  // `tokens` rows of X (tokens x d).
  void add_velocity(long long l, const double *X, double *F) override;

  // dX += (dF/dX)^T C (this rank's neurons), dW1, dW2 (slice l, this rank's
  // neurons, layout [m][rows][cols]) += (dF/dw)^T C.
  void add_vjp(long long l, const double *X, const double *C, double *dX, double *dW1, double *dW2,
               double weight = 1.0);
  // The same with d = {dW1, dW2}.
  void add_vjp(long long l, const double *X, const double *C, double *dX, const std::vector<double *> &d,
               double weight) override {
    add_vjp(l, X, C, dX, d[0], d[1], weight);
  }

  void add_vjp_rows(long long l, const double *X, const double *C, double *dX, double weight, long long stride,
                    long long offset) override;
  void add_row(long long l, long long r, const std::vector<double *> &d) const override;
  void clear_rows() override;
  double row_bytes(long long N, long long stride) const override;

private:
  // `rows` tokens X, C: dX += their token cotangents, dW1c and dW2s (the
  // kernel's layout) += weight times their parameter cotangents.
  void vjp_tokens(const double *X, const double *C, double *dX, const R *W1c, const R *W2s, long long rows,
                  double *dW1c, double *dW2s, double weight);
  // dW1, dW2 (this rank's neurons of a slice) += weight times dW1c, dW2s.
  void map_to_particles(const double *dW1c, const double *dW2s, double weight, double *dW1, double *dW2) const;

  long long tokens_, n_, d_, d_f_, L_, Ml_;
  double scale_;
  Activation act_;
  const NeuronParticles *neurons_;
  long long block_; // token rows per batch
  AlignedVector<R> W1c_; // per slice: d x (Ml d_f), block m = W1_m^T
  AlignedVector<R> W2s_; // per slice: (Ml d_f) x d, block m = scale W2_m^T
  AlignedVector<R> H_, A_;
  AlignedVector<R> X_in_, C_in_, product_; // float only (kernel_precision.hpp)
  std::vector<double> dW1c_, dW2s_;
  std::vector<double> dW1_rows_, dW2_rows_; // the NTK's rows (add_vjp_rows)
};

} // namespace mft
