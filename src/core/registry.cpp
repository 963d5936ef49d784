#include "mft/core/registry.hpp"

#include "mft/core/error.hpp"

#include <algorithm>

namespace mft {

const std::vector<RegistryEntry> &score_map_entries() {
  static const std::vector<RegistryEntry> entries = {
#define MFT_SCORE_MAP(name, help) {#name, #name, help, 0u, ""},
#include "mft/registry/score_maps.inc"
#undef MFT_SCORE_MAP
  };
  return entries;
}

const std::vector<RegistryEntry> &optimizer_entries() {
  static const std::vector<RegistryEntry> entries = {
#define MFT_OPTIMIZER(name, traits, help) {#name, #name, help, traits, ""},
#include "mft/registry/optimizers.inc"
#undef MFT_OPTIMIZER
  };
  return entries;
}

const std::vector<RegistryEntry> &loss_entries() {
  static const std::vector<RegistryEntry> entries = {
#define MFT_LOSS(id, name, traits, help) {#id, name, help, traits, ""},
#include "mft/registry/losses.inc"
#undef MFT_LOSS
  };
  return entries;
}

const std::vector<RegistryEntry> &readout_entries() {
  static const std::vector<RegistryEntry> entries = {
#define MFT_READOUT(id, name, traits, help) {#id, name, help, traits, ""},
#include "mft/registry/readouts.inc"
#undef MFT_READOUT
  };
  return entries;
}

const std::vector<RegistryEntry> &task_entries() {
  static const std::vector<RegistryEntry> entries = {
#define MFT_TASK(id, name, traits, help) {#id, name, help, traits, ""},
#include "mft/registry/data_tasks.inc"
#undef MFT_TASK
  };
  return entries;
}

const std::vector<RegistryEntry> &norm_entries() {
  static const std::vector<RegistryEntry> entries = {
#define MFT_NORM(name, help) {#name, #name, help, 0u, ""},
#include "mft/registry/norms.inc"
#undef MFT_NORM
  };
  return entries;
}

const std::vector<RegistryEntry> &species_entries() {
  static const std::vector<RegistryEntry> entries = {
#define MFT_SPECIES(name, parts, help) {#name, #name, help, 0u, parts},
#include "mft/registry/species.inc"
#undef MFT_SPECIES
  };
  return entries;
}

std::vector<std::string> ntk_parts() {
  std::vector<std::string> out;
  for (const RegistryEntry &e : species_entries())
    for (size_t at = 0; at < e.ntk_parts.size();) {
      const size_t end = std::min(e.ntk_parts.find(' ', at), e.ntk_parts.size());
      if (end > at) out.push_back(e.ntk_parts.substr(at, end - at));
      at = end + 1;
    }
  return out;
}

std::string entry_name(const std::vector<RegistryEntry> &entries, const std::string &id) {
  for (const RegistryEntry &e : entries)
    if (e.id == id) return e.name;
  throw Error("no registry entry from the file " + id);
}

bool has_trait(const std::vector<RegistryEntry> &entries, const std::string &name, unsigned trait) {
  for (const RegistryEntry &e : entries)
    if (e.name == name) return (e.traits & trait) != 0;
  return false;
}

std::string entries_with(const std::vector<RegistryEntry> &entries, unsigned trait) {
  std::vector<std::string> names;
  for (const RegistryEntry &e : entries)
    if (e.traits & trait) names.push_back(e.name);
  return comma_list(names);
}

} // namespace mft
