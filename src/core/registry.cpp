#include "mft/core/registry.hpp"

#include "mft/core/error.hpp"

namespace mft {

const std::vector<RegistryEntry> &score_map_entries() {
  static const std::vector<RegistryEntry> entries = {
#define MFT_SCORE_MAP(name, help) {#name, help, 0u},
#include "mft/registry/score_maps.inc"
#undef MFT_SCORE_MAP
  };
  return entries;
}

const std::vector<RegistryEntry> &optimizer_entries() {
  static const std::vector<RegistryEntry> entries = {
#define MFT_OPTIMIZER(name, traits, help) {#name, help, traits},
#include "mft/registry/optimizers.inc"
#undef MFT_OPTIMIZER
  };
  return entries;
}

std::string optimizers_with(OptimizerTrait trait) {
  std::vector<std::string> names;
  for (const RegistryEntry &e : optimizer_entries())
    if (e.traits & trait) names.push_back(e.name);
  return comma_list(names);
}

} // namespace mft
