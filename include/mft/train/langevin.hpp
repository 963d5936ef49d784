#pragma once
// Mean-field Langevin dynamics (MODEL.md §10): the Euler-Maruyama step adds
// sqrt(2 T dtau) xi to every particle after the drift step, xi ~ N(0, I).
// Particle (l, m) of a species draws its xi for step k from the stream
// (seed, species, l, m, k) (rng.hpp's NormalStream, 16 normals at a time),
// its matrices in order: the noise of a particle
// does not depend on which rank owns it, nor on where a run was restarted.
#include "mft/model/particles.hpp"

#include <cstdint>

namespace mft {

// theta (this rank's particles, flat layout of `particles`) += scale xi.
void add_langevin_noise(const Particles &particles, std::uint64_t seed, long long step, double scale,
                        double *theta);

} // namespace mft
