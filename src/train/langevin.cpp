#include "mft/train/langevin.hpp"

#include "mft/core/rng.hpp"

#include <vector>

namespace mft {

// Rounding: compiled without floating-point contraction (CMakeLists.txt):
// theta + scale xi rounds the same on every rank.
void add_langevin_noise(const Particles &particles, std::uint64_t seed, long long step, double scale,
                        double *theta) {
  std::vector<double> xi; // one particle's normals, all its matrices in order
  double *species_start = theta;
  for (const ParticleSpecies *s : particles.species()) {
    const long long count = s->own.count();
    long long per_particle = 0;
    for (const ParticleMatrix &m : s->matrices()) per_particle += m.size();
    xi.resize(static_cast<size_t>(per_particle));
    for (long long l = 0; l < s->L; ++l)
      for (long long local = 0; local < count; ++local) {
        NormalStream(seed, s->stream(), static_cast<std::uint64_t>(l),
                     static_cast<std::uint64_t>(s->own.begin + local), static_cast<std::uint64_t>(step))
            .fill(xi.data(), per_particle);
        const double *noise = xi.data();
        double *matrix_start = species_start;
        for (const ParticleMatrix &m : s->matrices()) {
          double *x = matrix_start + (l * count + local) * m.size();
          for (long long i = 0; i < m.size(); ++i) x[i] += scale * noise[i];
          noise += m.size();
          matrix_start += s->L * count * m.size();
        }
      }
    species_start += s->local_size();
  }
}

} // namespace mft
