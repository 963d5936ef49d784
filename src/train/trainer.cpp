#include "mft/train/trainer.hpp"

namespace mft {

Trainer::Trainer(Problem &problem, const Config &config)
    : gradient_(problem, config), optimizer_(make_optimizer(config, gradient_)), dtau_(config.train.dtau),
      history_every_(config.output.history_every) {}

long long Trainer::run(double *theta, long long first, long long last) {
  stopped_ = false;
  long long step = first;
  // tau = step dtau exactly, on any restart. A row costs a solve on all N
  // sequences beside the step's own (minibatches): only the rows the history
  // keeps are computed.
  const auto report = [&](bool recorded) {
    if (!monitor_) return;
    const double tau = static_cast<double>(step) * dtau_;
    if (!recorded) {
      // The velocity at theta, which the next step starts from (so it costs
      // nothing more): theta checked finite and in the particles, for the
      // monitor's snapshots.
      gradient_.velocity(step, theta);
      return monitor_(step, tau, nullptr);
    }
    const ParticleState state = gradient_.row(step, theta);
    monitor_(step, tau, &state);
  };
  report(true);
  while (step < last) {
    optimizer_->step(step, theta);
    ++step;
    const bool stop = stop_check_ && stop_check_(step);
    report(stop || step == last || step % history_every_ == 0);
    if (stop) {
      stopped_ = true;
      break;
    }
  }
  return step - first;
}

} // namespace mft
