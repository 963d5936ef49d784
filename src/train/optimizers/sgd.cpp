// sgd: the flow's Euler step on step k's minibatch (StepGradient draws it).
#include "mft/train/flow.hpp"

namespace mft {

MFT_OPTIMIZER(sgd, kMinibatches | kLangevin | kVelocityStep, "Euler steps on minibatches of train.batch sequences")

namespace {

// The flow's Euler step, named for the header with its minibatches.
class Sgd final : public GradientFlow {
public:
  Sgd(StepGradient &gradient, const Config &config) : GradientFlow(gradient, config, true) {}
  std::string describe() const override { return describe_as("sgd (Euler on " + gradient().describe_batches() + ")"); }
};

} // namespace

OptimizerEntry sgd_optimizer() {
  return {[](const Config &config, StepGradient &gradient) -> std::unique_ptr<Optimizer> {
            return std::make_unique<Sgd>(gradient, config);
          },
          {},
          nullptr};
}

} // namespace mft
