#include "mft/train/step_gradient.hpp"

#include "mft/core/error.hpp"
#include "mft/train/minibatch.hpp"
#include "mft/tasks/data.hpp"

#include <algorithm>
#include <cmath>

namespace mft {
namespace {

// Runs `work`; an mft error from it names the training step (bad input stays as it is).
template <class Work> auto at_step(long long step, Work &&work) -> decltype(work()) {
  try {
    return work();
  } catch (const InputError &) {
    throw;
  } catch (const DivergedError &e) {
    throw DivergedError("training step " + std::to_string(step) + ": " + e.what());
  } catch (const std::exception &e) {
    throw Error("training step " + std::to_string(step) + ": " + e.what());
  }
}

} // namespace

StepGradient::StepGradient(Problem &problem, const Config &config)
    : problem_(problem), lambda_(config.train.lambda), seed_(config.init.seed), config_(config),
      b_(config.train.batch > 0 ? config.train.batch : problem.data.N), full_(problem) {
  if (!minibatches()) return;
  const TokenData &data = problem.data;
  batch_data_.N = b_;
  batch_data_.n = data.n;
  batch_data_.d = data.d;
  batch_data_.d_out = data.d_out;
  batch_data_.tokens.resize(static_cast<size_t>(b_ * data.n * data.d));
  batch_data_.targets.resize(static_cast<size_t>(b_ * data.d_out));
  // Every rank draws the whole minibatch (small); its group solves its block.
  batch_field_ = std::make_unique<DepthField>(problem.heads_comm(), problem.grid->block(b_).count(), data.n,
                                              *problem.particles, problem.field_options);
  batch_solver_ = std::make_unique<DepthSolver>(*batch_field_, problem.depth_config, true);
  batch_ = std::make_unique<Objective>(problem, batch_data_, *batch_field_, *batch_solver_);
}

Objective &StepGradient::objective_of(long long step) {
  if (!minibatches()) return full_;
  if (step != batch_step_ && config_.data.online) {
    // Fresh sequences, keyed by (data.seed, step): any rank, any restart.
    TokenData fresh = online_batch(config_, step, b_);
    batch_data_.tokens = std::move(fresh.tokens);
    batch_data_.targets = std::move(fresh.targets);
    batch_->data_changed();
    batch_step_ = step;
  } else if (step != batch_step_) {
    const TokenData &data = problem_.data;
    const long long per_sequence = data.n * data.d;
    const std::vector<long long> rows = minibatch_of_step(seed_, step, data.N, b_);
    for (size_t r = 0; r < rows.size(); ++r) {
      std::copy_n(data.sequence(rows[r]), per_sequence, batch_data_.sequence(static_cast<long long>(r)));
      std::copy_n(data.target(rows[r]), data.d_out, batch_data_.targets.data() + r * data.d_out);
    }
    batch_->data_changed();
    batch_step_ = step;
  }
  return *batch_;
}

const Velocity &StepGradient::velocity(long long step, const double *theta) {
  return at_step(step, [&]() -> const Velocity & {
    Objective &objective = objective_of(step);
    const Gradient &g = objective.at(theta);
    if (velocity_objective_ != &objective || velocity_of_ != objective.evaluations()) {
      mean_field_velocity(comm(), *problem_.particles, theta, g.dR, g.risk, lambda_, velocity_);
      velocity_objective_ = &objective;
      velocity_of_ = objective.evaluations();
      velocity_gradient_ = &g;
    }
    return velocity_;
  });
}

std::string StepGradient::describe_batches() const {
  if (config_.data.online) return std::to_string(b_) + " fresh sequences per step (data.online)";
  return "minibatches of " + std::to_string(b_) + " of " + std::to_string(problem_.data.N) + " sequences";
}

ParticleState StepGradient::row(long long step, const double *theta) {
  const Velocity &v = velocity(step, theta);
  const Gradient &g = *velocity_gradient_; // the objective's state at theta
  ParticleState s;
  s.grad_norm = v.grad_norm;
  s.batch_risk = g.risk;
  if (!minibatches()) {
    s.risk = g.risk;
    s.accuracy = g.accuracy;
    s.objective = v.objective;
    return s;
  }
  // The particles hold theta (the minibatch objective set them): the full
  // data's risk with a forward solve alone.
  const Measure full = at_step(step, [&] { return measure(problem_, *problem_.solver, problem_.data); });
  s.risk = full.risk;
  s.accuracy = full.accuracy;
  s.objective = std::fma(0.5 * lambda_, v.decay, full.risk);
  return s;
}

} // namespace mft
