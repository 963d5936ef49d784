#pragma once
// The risk (MODEL.md §4, §10) and its gradient at given particles: one
// forward and one adjoint solve in depth. What training does with them (the
// flow of §6, weight decay) lives in velocity.hpp and flow.hpp.
#include "mft/tasks/problem.hpp"

#include <mpi.h>
#include <vector>

namespace mft {

// What the objective knows at one point theta of the particles.
struct Gradient {
  double risk = 0.0;
  double accuracy = 0.0;  // training accuracy (a classifying loss; else 0)
  std::vector<double> dR;  // dR/dtheta, this rank's particles (flat layout of Particles), summed over groups
  std::vector<double> dX0; // dR/dX(0) of this group's block of sequences, block x n x d
};

// Collective on the whole grid: a group computes its block of sequences, the
// predictions are gathered and the gradient summed across groups, so every
// group holds the same risk and the same dR.
class Objective {
public:
  // The risk of the problem's training data; `problem` must have been
  // built with the adjoint.
  explicit Objective(Problem &problem);
  // The risk of other sequences `data` (a minibatch; all of them on every
  // rank) over the same particles, with a field and an adjoint solver of
  // their own for this group's block of data.N sequences. The data may
  // change between calls: then call data_changed().
  Objective(Problem &problem, const TokenData &data, DepthField &field, DepthSolver &solver);

  // The gradient at the flat particles theta (this rank's share).
  // Kept for the last theta: asking again with the same values costs
  // nothing (the training monitor and the next step's first stage share
  // it). Throws Error naming the slice and the quantity when a particle, a
  // token, R or a gradient is not finite.
  const Gradient &at(const double *theta);

  // The sequences changed: the next at() computes afresh.
  void data_changed();

  long long local_size() const { return static_cast<long long>(theta_.size()); }
  long long evaluations() const { return evaluations_; }
  Problem &problem() { return problem_; }
  // The ranks that share this group's particles.
  MPI_Comm comm() const { return problem_.heads_comm(); }

private:
  void check_finite(const std::vector<double> &values, const char *what) const;
  // Every group holds the same particles (Error otherwise). Collective.
  void check_groups_agree() const;

  Problem &problem_;
  const TokenData &data_;
  TokenData block_; // this group's sequences of data_
  DepthField &field_;
  DepthSolver &solver_;
  std::vector<double> theta_; // the theta of `state_`
  bool valid_ = false;
  Gradient state_;
  std::vector<double> X1_, a1_, G_;
  long long evaluations_ = 0;
};

// R (and accuracy, for a classifying loss) of `data` at the model's current
// particles, with a forward-only solver for this group's block of that data
// (held-out sequences). Collective on the grid.
struct Measure {
  double risk = 0.0;
  double accuracy = 0.0;
  std::vector<double> predictions; // yhat of all N sequences, N x d_out
};
Measure measure(const Problem &problem, DepthSolver &solver, const TokenData &data);

} // namespace mft
