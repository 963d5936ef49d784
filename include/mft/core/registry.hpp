#pragma once
// What the configuration knows of the registries' entries (score maps,
// optimisers, losses, readouts, data tasks, token norms): each entry's name,
// help and traits, read by the build from the entry's own file
// (cmake/registries.cmake), so the key table, --help and the cross-key
// checks list them without linking their code. An entry's keys (MFT_KEY
// lines) are members of its section's struct in config.hpp and keys of the
// key table (config_keys.cpp).
#include <string>
#include <vector>

namespace mft {

// What an optimiser can do, for the checks across keys.
enum OptimizerTrait : unsigned {
  kTrainingTs = 1u,  // integrates the flow with the training TS (train.ts_type)
  kMinibatches = 2u, // steps on minibatches (train.batch) and online data
  kLangevin = 4u,    // takes Langevin noise (train.temperature)
  kVelocityStep = 8u, // steps by dtau times the velocity (with kTrainingTs: when the TS is euler)
};

// What a loss is.
enum LossTrait : unsigned {
  kClassifies = 1u, // a classifier's: accuracy reported, readout.dim >= 2 classes
};

// What a readout is.
enum ReadoutTrait : unsigned {
  kWeighted = 1u,  // its outputs are W times the tokens (readout.weights), not coordinates of them
  kNextToken = 2u, // predicts every position's next symbol: d_out = (n - 1) k, a task of symbols
};

// What a data task is.
enum TaskTrait : unsigned {
  kStreams = 1u,   // draws its sequences one by one from streams: held-out streams, online batches
  kReadsFile = 2u, // reads its sequences from data.file
  kSymbols = 4u,   // sequences of symbols embedded as tokens (MODEL.md §13): the next-token readout
};

struct RegistryEntry {
  std::string id;   // its file's name (an identifier)
  std::string name; // the value that selects it
  std::string help;
  unsigned traits = 0;
  std::string ntk_parts; // a particle species: the NTK parameter groups of its matrices, space-separated
};

// The entries in registry order (their files' names, sorted).
const std::vector<RegistryEntry> &score_map_entries();
const std::vector<RegistryEntry> &optimizer_entries();
const std::vector<RegistryEntry> &loss_entries();
const std::vector<RegistryEntry> &readout_entries();
const std::vector<RegistryEntry> &task_entries();
const std::vector<RegistryEntry> &norm_entries();
const std::vector<RegistryEntry> &species_entries();

// The NTK parameter groups of every registered species, in order (V, QK, ...).
std::vector<std::string> ntk_parts();

// The name of the entry whose file is `id` (the owner of its keys).
std::string entry_name(const std::vector<RegistryEntry> &entries, const std::string &id);

// Whether entry `name` has `trait` (an unknown name has none; its key's
// check names it).
bool has_trait(const std::vector<RegistryEntry> &entries, const std::string &name, unsigned trait);

// The names of the entries with `trait`, as "a, b, c".
std::string entries_with(const std::vector<RegistryEntry> &entries, unsigned trait);
inline std::string optimizers_with(OptimizerTrait trait) { return entries_with(optimizer_entries(), trait); }

} // namespace mft

// In an entry's own file the registration lines are read by the build only.
#define MFT_KEY(key, type, value, check, help)
