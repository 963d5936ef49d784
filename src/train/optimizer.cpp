// The registry of optimisers: the entries of src/train/optimizers/, listed by
// the build (cmake/registries.cmake).
#include "mft/train/optimizer.hpp"

#include "mft/core/entry_table.hpp"

#include <utility>

namespace mft {

#undef MFT_OPTIMIZER
#define MFT_OPTIMIZER(name, traits, help) OptimizerEntry name##_optimizer();
#include "mft/registry/optimizers.inc"
#undef MFT_OPTIMIZER

namespace {

const EntryTable<OptimizerEntry> &registry() {
  static const EntryTable<OptimizerEntry> table("train.method", {
#define MFT_OPTIMIZER(name, traits, help) {#name, name##_optimizer()},
#include "mft/registry/optimizers.inc"
#undef MFT_OPTIMIZER
                                                              });
  return table;
}

const OptimizerEntry &find(const std::string &method) { return registry().find(method); }

} // namespace

std::unique_ptr<Optimizer> make_optimizer(const Config &config, StepGradient &gradient) {
  return find(config.train.method).make(config, gradient);
}

void resolve_optimizer(TrainConfig &train) {
  if (const OptimizerEntry &entry = find(train.method); entry.resolve) entry.resolve(train);
}

std::vector<std::string> optimizer_names() { return registry().names(); }

OptimizerStateLayout optimizer_state_layout(const std::string &method) { return find(method).state; }

} // namespace mft
