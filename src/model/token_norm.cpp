// The registry of token norms: the entries of src/model/norms/, listed by
// the build (cmake/registries.cmake).
#include "mft/model/token_norm.hpp"

#include "mft/core/entry_table.hpp"

#include <utility>

namespace mft {

#undef MFT_NORM
#define MFT_NORM(name, help) std::unique_ptr<TokenNorm> make_##name##_norm(const ModelConfig &model);
#include "mft/registry/norms.inc"
#undef MFT_NORM

namespace {

using Factory = std::unique_ptr<TokenNorm> (*)(const ModelConfig &);

const EntryTable<Factory> &registry() {
  static const EntryTable<Factory> norms("model.norm", {
#define MFT_NORM(name, help) {#name, make_##name##_norm},
#include "mft/registry/norms.inc"
#undef MFT_NORM
                                                       });
  return norms;
}

} // namespace

std::unique_ptr<TokenNorm> make_token_norm(const ModelConfig &model) { return registry().find(model.norm)(model); }

} // namespace mft
