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
#include "mft/model/particles.hpp"
#include "mft/model/species_kernel.hpp"

#include <string>
#include <vector>

namespace mft {

enum class Activation { Relu, Gelu, HuberRelu };
Activation parse_activation(const std::string &name);

class MlpKernel final : public SpeciesKernel {
public:
  // The kernel keeps a reference to `neurons`.
  MlpKernel(long long tokens, const NeuronParticles &neurons, double scale, Activation act);

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

private:
  long long tokens_, d_, d_f_, L_, Ml_;
  double scale_;
  Activation act_;
  const NeuronParticles *neurons_;
  long long block_; // token rows per batch
  std::vector<double> W1c_; // per slice: d x (Ml d_f), block m = W1_m^T
  std::vector<double> W2s_; // per slice: (Ml d_f) x d, block m = scale W2_m^T
  std::vector<double> H_, A_, dW1c_, dW2s_;
};

} // namespace mft
