#pragma once
// What the configuration knows of the registries' entries (score maps,
// optimisers): each entry's name, help and traits, read by the build from the
// entry's own file (cmake/registries.cmake), so the key table, --help and the
// cross-key checks list them without linking their code. An entry's keys
// (MFT_KEY lines) are members of its section's struct in config.hpp.
#include <string>
#include <vector>

namespace mft {

// What an optimiser can do, for the checks across keys.
enum OptimizerTrait : unsigned {
  kTrainingTs = 1u,  // integrates the flow with the training TS (train.ts_type)
  kMinibatches = 2u, // steps on minibatches (train.batch) and online data
  kLangevin = 4u,    // takes Langevin noise (train.temperature)
};

struct RegistryEntry {
  std::string name;
  std::string help;
  unsigned traits = 0;
};

// The entries in registry order (their files' names, sorted).
const std::vector<RegistryEntry> &score_map_entries();
const std::vector<RegistryEntry> &optimizer_entries();

// The names of the optimisers with `trait`, as "a, b, c".
std::string optimizers_with(OptimizerTrait trait);

} // namespace mft

// In an entry's own file the registration lines are read by the build only.
#define MFT_KEY(key, type, value, check, help)
