#pragma once
// The particle velocity of the training flow (MODEL.md §6), species by
// species with its own time scale M L (M_f L for neurons):
//
//   d theta/d tau = -(M L) dR/dtheta - lambda theta
//   Q = R + (lambda/2) sum_species (1/(M L)) sum |theta|^2
//   grad_norm = sqrt( sum_species (1/(M L)) sum |d theta/d tau|^2 )
#include "mft/model/particles.hpp"

#include <mpi.h>
#include <vector>

namespace mft {

struct Velocity {
  std::vector<double> values; // d theta/d tau, this rank's particles (flat layout)
  double objective = 0.0;     // Q
  double decay = 0.0;         // sum_species (1/(M L)) sum |theta|^2: Q = R + (lambda/2) decay
  double grad_norm = 0.0;
};

// The velocity at the flat particles theta with gradient dR and risk R.
// Collective (the sums for Q and grad_norm).
void mean_field_velocity(MPI_Comm comm, const Particles &particles, const double *theta,
                         const std::vector<double> &dR, double risk, double lambda, Velocity &out);

} // namespace mft
