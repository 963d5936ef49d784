// The registry of readouts: the entries of src/model/readouts/, listed by
// the build (cmake/registries.cmake).
#include "mft/model/readout.hpp"

#include "mft/core/error.hpp"

#include <utility>

namespace mft {

#undef MFT_READOUT
#define MFT_READOUT(name, traits, help)                                                                      \
  std::unique_ptr<Readout> make_##name##_readout(long long d_out, long long coord, std::vector<double> weights);
#include "mft/registry/readouts.inc"
#undef MFT_READOUT

namespace {

using Factory = std::unique_ptr<Readout> (*)(long long, long long, std::vector<double>);

const std::vector<std::pair<std::string, Factory>> &registry() {
  static const std::vector<std::pair<std::string, Factory>> readouts = {
#define MFT_READOUT(name, traits, help) {#name, make_##name##_readout},
#include "mft/registry/readouts.inc"
#undef MFT_READOUT
  };
  return readouts;
}

} // namespace

std::unique_ptr<Readout> make_readout(const Config &config) {
  std::vector<std::string> names;
  for (const auto &[name, make] : registry()) {
    if (name == config.readout.kind) return make(config.readout.dim, config.readout_coord(), config.readout_weights());
    names.push_back(name);
  }
  throw InputError(key_error("readout.kind", config.readout.kind, "must be one of " + comma_list(names)));
}

} // namespace mft
