#pragma once
// The objective (MODEL.md §4) and the particle velocity of the training flow
// (§6) at given particles: one forward and one adjoint solve in depth.
//
//   Q = R + (lambda/2) [ (1/(M L)) sum |theta|^2 + (1/(M_f L)) sum |w|^2 ]
//   d theta/d tau = -(M L) dR/dtheta - lambda theta,   d w/d tau = -(M_f L) dR/dw - lambda w
//   grad_norm = sqrt( (1/(M L)) sum |d theta/d tau|^2 + (1/(M_f L)) sum |d w/d tau|^2 )
#include "mft/train/model.hpp"

#include <mpi.h>
#include <vector>

namespace mft {

// Everything known at one point theta of the particles.
struct ParticleState {
  double risk = 0.0;
  double objective = 0.0;
  double grad_norm = 0.0;
  std::vector<double> dR;       // dR/dtheta, this rank's particles (flat layout of Particles)
  std::vector<double> velocity; // d theta/d tau, same layout
  std::vector<double> dX0;      // dR/dX(0), N x n x d (replicated)
};

class Objective {
public:
  // `model` must have been built with the adjoint.
  Objective(MPI_Comm comm, Model &model, double lambda);

  // The state at the flat particles theta (this rank's share). Collective.
  // Kept for the last theta: asking again with the same values costs nothing
  // (the training monitor and the next step's first stage share it). Throws
  // Error naming the slice and the quantity when a particle, a token, R or a
  // gradient is not finite.
  const ParticleState &at(const double *theta);

  long long local_size() const { return static_cast<long long>(theta_.size()); }
  long long evaluations() const { return evaluations_; }
  Model &model() { return model_; }

private:
  void check_finite(const std::vector<double> &values, const char *what) const;

  MPI_Comm comm_;
  Model &model_;
  double lambda_;
  std::vector<double> theta_; // the theta of `state_`
  bool valid_ = false;
  ParticleState state_;
  std::vector<double> X1_, a1_;
  long long evaluations_ = 0;
};

} // namespace mft
