// The registry of optimisers: the entries of src/train/optimizers/, listed by
// the build (cmake/registries.cmake).
#include "mft/train/optimizer.hpp"

#include "mft/core/error.hpp"

#include <utility>

namespace mft {

#undef MFT_OPTIMIZER
#define MFT_OPTIMIZER(name, traits, help) OptimizerEntry name##_optimizer();
#include "mft/registry/optimizers.inc"
#undef MFT_OPTIMIZER

namespace {

const std::vector<std::pair<std::string, OptimizerEntry>> &registry() {
  static const std::vector<std::pair<std::string, OptimizerEntry>> table = {
#define MFT_OPTIMIZER(name, traits, help) {#name, name##_optimizer()},
#include "mft/registry/optimizers.inc"
#undef MFT_OPTIMIZER
  };
  return table;
}

const OptimizerEntry &find(const std::string &method) {
  for (const auto &[name, entry] : registry())
    if (name == method) return entry;
  throw InputError(key_error("train.method", method, "unknown optimiser"));
}

} // namespace

std::unique_ptr<Optimizer> make_optimizer(const Config &config, StepGradient &gradient) {
  return find(config.train.method).make(config, gradient);
}

void resolve_optimizer(TrainConfig &train) {
  if (const OptimizerEntry &entry = find(train.method); entry.resolve) entry.resolve(train);
}

std::vector<std::string> optimizer_names() {
  std::vector<std::string> out;
  for (const auto &entry : registry()) out.push_back(entry.first);
  return out;
}

OptimizerStateLayout optimizer_state_layout(const std::string &method) { return find(method).state; }

} // namespace mft
