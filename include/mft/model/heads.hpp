#pragma once
// The attention head species (MODEL.md §2, §3): theta = (Q, K, V) with
// Q, K in R^{d_h x d} and V in R^{d x d}; its kernel is attention.hpp's.
#include "mft/model/particles.hpp"

namespace mft {

class HeadParticles : public ParticleSpecies {
public:
  HeadParticles(long long L, long long M, long long d_h, long long d, ParticleBlock own);
  // Q, K entries N(0, sigma_qk^2), then V entries N(0, sigma_v^2).
  void initialise(std::uint64_t seed, double sigma_qk, double sigma_v) {
    ParticleSpecies::initialise(seed, {sigma_qk, sigma_qk, sigma_v});
  }
  // The attention kernel (attention.hpp), with options' score map and mask.
  std::unique_ptr<SpeciesKernel> make_kernel(long long N, long long n, double scale,
                                             const FieldOptions &options) const override;
  long long kernel_values() const override { return 3 * d * d; } // B = Q^T K, scale V, and V^T
  std::string describe() const override;
  std::unique_ptr<ParticleSpecies> clone() const override { return std::make_unique<HeadParticles>(*this); }

  long long d_h, d;
  std::vector<double> &Q() { return values(0); }
  std::vector<double> &K() { return values(1); }
  std::vector<double> &V() { return values(2); }
  const std::vector<double> &Q() const { return values(0); }
  const std::vector<double> &K() const { return values(1); }
  const std::vector<double> &V() const { return values(2); }
  long long qk_size() const { return d_h * d; }
  long long v_size() const { return d * d; }
  double *q(long long l, long long local) { return at(0, l, local); }
  double *k(long long l, long long local) { return at(1, l, local); }
  double *v(long long l, long long local) { return at(2, l, local); }
  const double *q(long long l, long long local) const { return at(0, l, local); }
  const double *k(long long l, long long local) const { return at(1, l, local); }
  const double *v(long long l, long long local) const { return at(2, l, local); }
};

} // namespace mft
