// The registry of token norms: the entries of src/model/norms/, listed by
// the build (cmake/registries.cmake).
#include "mft/model/token_norm.hpp"

#include "mft/core/error.hpp"

#include <utility>

namespace mft {

#undef MFT_NORM
#define MFT_NORM(name, help) std::unique_ptr<TokenNorm> make_##name##_norm();
#include "mft/registry/norms.inc"
#undef MFT_NORM

namespace {

using Factory = std::unique_ptr<TokenNorm> (*)();

const std::vector<std::pair<std::string, Factory>> &registry() {
  static const std::vector<std::pair<std::string, Factory>> norms = {
#define MFT_NORM(name, help) {#name, make_##name##_norm},
#include "mft/registry/norms.inc"
#undef MFT_NORM
  };
  return norms;
}

} // namespace

std::unique_ptr<TokenNorm> make_token_norm(const std::string &name) {
  std::vector<std::string> names;
  for (const auto &[known, make] : registry()) {
    if (known == name) return make();
    names.push_back(known);
  }
  throw InputError(key_error("model.norm", name, "must be one of " + comma_list(names)));
}

} // namespace mft
