// The registry of readouts: the entries of src/model/readouts/, listed by
// the build (cmake/registries.cmake).
#include "mft/model/readout.hpp"

#include "mft/core/entry_table.hpp"

#include <utility>

namespace mft {

#undef MFT_READOUT
#define MFT_READOUT(id, name, traits, help) std::unique_ptr<Readout> make_##id##_readout(const Config &config);
#include "mft/registry/readouts.inc"
#undef MFT_READOUT

namespace {

using Factory = std::unique_ptr<Readout> (*)(const Config &);

const EntryTable<Factory> &registry() {
  static const EntryTable<Factory> readouts("readout.kind", {
#define MFT_READOUT(id, name, traits, help) {name, make_##id##_readout},
#include "mft/registry/readouts.inc"
#undef MFT_READOUT
                                                           });
  return readouts;
}

} // namespace

std::unique_ptr<Readout> make_readout(const Config &config) { return registry().find(config.readout.kind)(config); }

} // namespace mft
