// flow: the gradient flow d theta/d tau = -G integrated by the training TS
// (train.ts_type; flow.hpp), on all N sequences.
#include "mft/train/flow.hpp"

namespace mft {

MFT_OPTIMIZER(flow, kTrainingTs | kLangevin, "the gradient flow on all N sequences, integrated by train.ts_type")

OptimizerEntry flow_optimizer() {
  return {[](Config &config, StepGradient &gradient) -> std::unique_ptr<Optimizer> {
            auto flow = std::make_unique<GradientFlow>(gradient, config);
            config.train.ts_type = flow->ts_type(); // as resolved by the options database
            return flow;
          },
          {}};
}

} // namespace mft
