// momentum: the heavy ball (MODEL.md §10), coordinate by coordinate, with
// G = (M L) dR/dtheta + lambda theta of the step's risk (full or minibatch)
// and mu = train.momentum:
//
//   u = mu u + G,      theta -= dtau u,      u = 0 before the first step
//
// (the convention of the common frameworks: the step is dtau u, not
// dtau (1 - mu) u). u is its state: written with every snapshot, read by a
// restart. Rounding: compiled without floating-point contraction
// (CMakeLists.txt), so every coordinate rounds as the formulas read.
#include "mft/train/optimizer.hpp"

#include <cstdio>

namespace mft {

MFT_OPTIMIZER(momentum, kMinibatches, "the heavy ball u = mu u + G, theta -= dtau u, mu = train.momentum")
MFT_KEY(momentum, double, 0.9, unit_interval, "momentum: the heavy ball's mu, in [0, 1)")

namespace {

// The name of state()'s array: the velocity.
constexpr const char *kStateArrays[] = {"u"};

class Momentum final : public Optimizer {
public:
  Momentum(StepGradient &gradient, const TrainConfig &config)
      : gradient_(gradient), dtau_(config.dtau), mu_(config.momentum),
        u_(static_cast<size_t>(gradient.local_size()), 0.0) {}

  void step(long long step, double *theta) override {
    const std::vector<double> &minus_g = gradient_.velocity(step, theta).values; // -G
    for (size_t i = 0; i < u_.size(); ++i) {
      u_[i] = mu_ * u_[i] - minus_g[i];
      theta[i] -= dtau_ * u_[i];
    }
  }

  std::string describe() const override {
    char text[80];
    std::snprintf(text, sizeof text, "momentum (mu %g", mu_);
    std::string out = text;
    if (gradient_.minibatches()) out += ", " + gradient_.describe_batches();
    return out + ")";
  }

  OptimizerState state() override { return {nullptr, {{kStateArrays[0], &u_}}, {}}; }

private:
  StepGradient &gradient_;
  double dtau_, mu_;
  std::vector<double> u_;
};

} // namespace

OptimizerEntry momentum_optimizer() {
  return {[](const Config &config, StepGradient &gradient) -> std::unique_ptr<Optimizer> {
            return std::make_unique<Momentum>(gradient, config.train);
          },
          {false, {kStateArrays[0]}},
          nullptr};
}

} // namespace mft
