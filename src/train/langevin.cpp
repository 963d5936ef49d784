#include "mft/train/langevin.hpp"

#include "mft/core/rng.hpp"

namespace mft {

// Rounding: compiled without floating-point contraction (CMakeLists.txt):
// theta + scale xi rounds the same on every rank.
void add_langevin_noise(const Particles &particles, std::uint64_t seed, long long step, double scale,
                        double *theta) {
  double *species_start = theta;
  for (const ParticleSpecies *s : particles.species()) {
    const long long count = s->own.count();
    for (long long l = 0; l < s->L; ++l)
      for (long long local = 0; local < count; ++local) {
        RandomStream rng(seed, s->stream(), static_cast<std::uint64_t>(l),
                         static_cast<std::uint64_t>(s->own.begin + local), static_cast<std::uint64_t>(step));
        double *matrix_start = species_start;
        for (const ParticleMatrix &m : s->matrices()) {
          double *x = matrix_start + (l * count + local) * m.size();
          for (long long i = 0; i < m.size(); ++i) x[i] += scale * rng.normal();
          matrix_start += s->L * count * m.size();
        }
      }
    species_start += s->local_size();
  }
}

} // namespace mft
