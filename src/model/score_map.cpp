// The registry of score maps: the entries of src/model/score_maps/, listed by
// the build (cmake/registries.cmake).
#include "mft/model/score_map.hpp"

#include "mft/core/entry_table.hpp"
#include "mft/core/error.hpp"

#include <algorithm>
#include <utility>

namespace mft {

#undef MFT_SCORE_MAP
#define MFT_SCORE_MAP(name, help) std::unique_ptr<ScoreMap> make_##name##_score_map(const ModelConfig &model);
#include "mft/registry/score_maps.inc"
#undef MFT_SCORE_MAP

namespace {

using Factory = std::unique_ptr<ScoreMap> (*)(const ModelConfig &model);

const EntryTable<Factory> &registry() {
  static const EntryTable<Factory> maps("model.attention", {
#define MFT_SCORE_MAP(name, help) {#name, make_##name##_score_map},
#include "mft/registry/score_maps.inc"
#undef MFT_SCORE_MAP
                                                          });
  return maps;
}

} // namespace

std::string ScoreMap::blow_up_hint() const {
  if (bounded()) return "";
  return std::string("; the ") + name() +
         " score map makes the velocity grow like |x|^3, so the flow can blow up in finite depth: smaller "
         "init.sigma_qk keeps it finite at the start, model.norm = sphere throughout (training grows the "
         "particles; a smaller train.dtau only delays it)";
}

void ScoreMap::probabilities(double *S, long long visible, long long rows, double *work) const {
  double *column_max = work + 2 * rows, *scale = work + 3 * rows;
  for (long long r = 0; r < rows; ++r) {
    column_max[r] = S[r];
    for (long long b = 1; b < visible; ++b) column_max[r] = std::max(column_max[r], S[b * rows + r]);
  }
  if (!weights(S, visible, rows, uses_column_max() ? column_max : nullptr, work, scale)) return;
  for (long long b = 0; b < visible; ++b)
    for (long long r = 0; r < rows; ++r) S[b * rows + r] *= scale[r];
}

std::unique_ptr<ScoreMap> make_score_map(const ModelConfig &model) { return registry().find(model.attention)(model); }

std::unique_ptr<ScoreMap> make_score_map(const std::string &name, bool causal) {
  ModelConfig model;
  model.attention = name;
  model.causal = causal;
  return make_score_map(model);
}

std::vector<std::string> score_map_names() { return registry().names(); }

} // namespace mft
