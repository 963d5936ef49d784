#pragma once
// The training loop: from the particles of step `first` to train.steps, the
// configured optimiser (optimizer.hpp) takes each step with the gradient of
// StepGradient; the monitor sees every step (and the initial state), with
// the state of the rows the history keeps (output.history_every: every k-th
// step, the first, the last and a stop step); the stop check runs after
// every step. Collective.
#include "mft/core/config.hpp"
#include "mft/train/optimizer.hpp"
#include "mft/train/step_gradient.hpp"

#include <functional>
#include <memory>

namespace mft {

// Called at the initial state and after every step, with the state there
// (null at a step whose row the history does not keep); the model's
// particles hold that step's theta, checked finite.
using TrainMonitor = std::function<void(long long step, double tau, const ParticleState *state)>;
// Called after every step; true stops the loop there (the monitor still
// sees the state after that step).
using StopCheck = std::function<bool(long long step)>;

class Trainer {
public:
  // Builds the step gradient and the optimiser of the resolved `config`.
  // Throws InputError as make_optimizer.
  Trainer(Problem &problem, const Config &config);

  void set_monitor(TrainMonitor monitor) { monitor_ = std::move(monitor); }
  void set_stop_check(StopCheck check) { stop_check_ = std::move(check); }

  // Steps theta (this rank's particles, flat) from step `first` towards step
  // `last`; theta ends as the final particles. Returns the steps taken
  // (fewer when the stop check asked to stop).
  long long run(double *theta, long long first, long long last);
  bool stopped() const { return stopped_; }

  Optimizer &optimizer() { return *optimizer_; }
  StepGradient &gradient() { return gradient_; }

private:
  StepGradient gradient_;
  std::unique_ptr<Optimizer> optimizer_;
  double dtau_;
  long long history_every_;
  TrainMonitor monitor_;
  StopCheck stop_check_;
  bool stopped_ = false;
};

} // namespace mft
