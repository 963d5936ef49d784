#pragma once
// The MLP neuron species ([A]'s block, MODEL.md §2): w = (W1, W2) with
// W1 in R^{d_f x d} and W2 in R^{d x d_f}; its kernel is mlp.hpp's.
#include "mft/model/particles.hpp"

namespace mft {

class NeuronParticles : public ParticleSpecies {
public:
  NeuronParticles(long long L, long long M, long long d_f, long long d, ParticleBlock own);
  // W1 entries N(0, sigma_1^2), then W2 entries N(0, sigma_2^2).
  void initialise(std::uint64_t seed, double sigma_1, double sigma_2) {
    ParticleSpecies::initialise(seed, {sigma_1, sigma_2});
  }
  // The MLP kernel (mlp.hpp), with options' activation.
  std::unique_ptr<SpeciesKernel> make_kernel(long long N, long long n, double scale,
                                             const FieldOptions &options) const override;
  long long kernel_values() const override { return 2 * d_f * d; } // W1^T and scale W2^T
  std::string describe() const override { return "MLP"; }
  std::unique_ptr<ParticleSpecies> clone() const override { return std::make_unique<NeuronParticles>(*this); }

  long long d_f = 0, d = 0;
  long long w_size() const { return d_f * d; }
  double *w1(long long l, long long local) { return at(0, l, local); }
  double *w2(long long l, long long local) { return at(1, l, local); }
  const double *w1(long long l, long long local) const { return at(0, l, local); }
  const double *w2(long long l, long long local) const { return at(1, l, local); }
};

} // namespace mft
