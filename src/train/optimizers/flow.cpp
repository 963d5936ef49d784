// flow: the gradient flow d theta/d tau = -G integrated by the training TS
// (train.ts_type; flow.hpp), on all N sequences.
#include "mft/train/flow.hpp"

namespace mft {

MFT_OPTIMIZER(flow, kTrainingTs | kLangevin | kVelocityStep, "the gradient flow on all N sequences, integrated by train.ts_type")

OptimizerEntry flow_optimizer() {
  return {[](const Config &config, StepGradient &gradient) -> std::unique_ptr<Optimizer> {
            return std::make_unique<GradientFlow>(gradient, config, false);
          },
          {},
          [](TrainConfig &train) { train.ts_type = resolve_training_ts(train); }};
}

} // namespace mft
