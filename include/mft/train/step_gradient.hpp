#pragma once
// The gradient every optimiser steps with (MODEL.md §10): at training step k
// and particles theta, the mean-field velocity -G_lm = -(M L) dR/dtheta_lm -
// lambda theta_lm of the full risk, or, with minibatches (train.batch b < N),
// of the risk of step k's b sequences (minibatch.hpp), normalised by b; with
// data.online, of b fresh sequences drawn for step k (tasks/data.hpp).
//
// What a history row reports stays about the full data: R (and accuracy) of
// all N sequences at theta, Q from that R; grad_norm is the norm of the
// velocity the step uses, and the minibatch risk is reported beside R.
#include "mft/core/config.hpp"
#include "mft/train/objective.hpp"
#include "mft/train/velocity.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mft {

// What a history row reports about the particles of a step.
struct ParticleState {
  double risk = 0.0;       // R of all N training sequences
  double accuracy = 0.0;   // training accuracy (a classifying loss; else 0)
  double objective = 0.0;  // Q = R + (lambda/2) decay
  double grad_norm = 0.0;  // of the velocity the step uses
  double batch_risk = 0.0; // R of the step's minibatch (= R without minibatches)
};

class StepGradient {
public:
  // With config.train.batch in (0, N), or data.online: a field and an
  // adjoint solver for b sequences beside the problem's (this group's block of
  // them). Minibatch streams: seed config.init.seed; online sequences:
  // data.seed.
  StepGradient(Problem &problem, const Config &config);
  StepGradient(const StepGradient &) = delete;
  StepGradient &operator=(const StepGradient &) = delete;

  // The velocity of step `step` at the flat particles theta (this rank's
  // share). Collective. Computed once per (step's data, theta). An Error
  // names the training step.
  const Velocity &velocity(long long step, const double *theta);

  // The history row of step `step` at theta (computes velocity() too, which
  // the step from theta then reuses). Collective.
  ParticleState row(long long step, const double *theta);

  long long batch() const { return b_; }
  bool minibatches() const { return config_.data.online || b_ < problem_.data.N; }
  // Seconds this rank spent in the all-reduces of the fields it solves
  // (the problem's, the held-out data's, the minibatches').
  double allreduce_seconds() const {
    return problem_.field->allreduce_seconds() +
           (problem_.test_field ? problem_.test_field->allreduce_seconds() : 0.0) +
           (batch_field_ ? batch_field_->allreduce_seconds() : 0.0);
  }
  // "minibatches of b of N sequences" or "b fresh sequences per step (data.online)".
  std::string describe_batches() const;
  long long local_size() const { return full_.local_size(); }
  // The ranks that share this group's particles (the training TS's communicator).
  MPI_Comm comm() const { return problem_.heads_comm(); }
  Problem &problem() { return problem_; }

private:
  Objective &objective_of(long long step);

  Problem &problem_;
  double lambda_;
  std::uint64_t seed_;
  Config config_; // data.online: the task that draws each step's batch
  long long b_;
  Objective full_;
  // Minibatches: step `batch_step_`'s sequences and their own solver.
  TokenData batch_data_;
  std::unique_ptr<DepthField> batch_field_;
  std::unique_ptr<DepthSolver> batch_solver_;
  std::unique_ptr<Objective> batch_;
  long long batch_step_ = -1;
  // The velocity, for the objective evaluation it belongs to.
  Velocity velocity_;
  const Objective *velocity_objective_ = nullptr;
  const Gradient *velocity_gradient_ = nullptr; // that objective's state
  long long velocity_of_ = -1;
};

} // namespace mft
