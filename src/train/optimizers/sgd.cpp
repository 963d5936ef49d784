// sgd: the flow's Euler step on step k's minibatch (StepGradient draws it).
#include "mft/train/flow.hpp"

namespace mft {

MFT_OPTIMIZER(sgd, kMinibatches | kLangevin, "Euler steps on minibatches of train.batch sequences")

OptimizerEntry sgd_optimizer() {
  return {[](Config &config, StepGradient &gradient) -> std::unique_ptr<Optimizer> {
            return std::make_unique<GradientFlow>(gradient, config);
          },
          {}};
}

} // namespace mft
