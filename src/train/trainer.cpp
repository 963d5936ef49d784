#include "mft/train/trainer.hpp"

namespace mft {

Trainer::Trainer(Model &model, Config &config)
    : gradient_(model, config), optimizer_(make_optimizer(config, gradient_)), dtau_(config.train.dtau) {}

long long Trainer::run(double *theta, long long first, long long last) {
  stopped_ = false;
  long long step = first;
  // tau = step dtau exactly, on any restart.
  if (monitor_) monitor_(step, static_cast<double>(step) * dtau_, gradient_.row(step, theta));
  while (step < last) {
    optimizer_->step(step, theta);
    ++step;
    const bool stop = stop_check_ && stop_check_(step);
    if (monitor_) monitor_(step, static_cast<double>(step) * dtau_, gradient_.row(step, theta));
    if (stop) {
      stopped_ = true;
      break;
    }
  }
  return step - first;
}

} // namespace mft
