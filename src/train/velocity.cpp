#include "mft/train/velocity.hpp"

#include <cmath>

namespace mft {

// Rounding: this file is compiled without floating-point contraction
// (CMakeLists.txt), so where a multiply-add is fused is written here, with
// std::fma, and does not change with how the compiler vectorises a loop.
void mean_field_velocity(MPI_Comm comm, const Particles &particles, const double *theta,
                         const std::vector<double> &dR, double risk, double lambda, Velocity &out) {
  out.values.resize(dR.size());
  // Per species: sum |theta|^2 and sum |velocity|^2, each then over its M L.
  const std::vector<const ParticleSpecies *> species = particles.species();
  std::vector<double> sums(2 * species.size(), 0.0);
  size_t i = 0;
  for (size_t s = 0; s < species.size(); ++s) {
    const double scale = species[s]->time_scale();
    const auto end = i + static_cast<size_t>(species[s]->local_size());
    for (; i < end; ++i) {
      const double v = std::fma(-lambda, theta[i], -scale * dR[i]);
      out.values[i] = v;
      sums[2 * s] += theta[i] * theta[i];
      sums[2 * s + 1] += v * v;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, comm);
  double decay = 0.0, norm = 0.0;
  for (size_t s = 0; s < species.size(); ++s) {
    decay += sums[2 * s] / species[s]->time_scale();
    norm += sums[2 * s + 1] / species[s]->time_scale();
  }
  out.decay = decay;
  out.objective = std::fma(0.5 * lambda, decay, risk);
  out.grad_norm = std::sqrt(norm);
}

} // namespace mft
