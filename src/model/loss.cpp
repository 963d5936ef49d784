#include "mft/model/loss.hpp"

#include "mft/core/entry_table.hpp"

#include <algorithm>
#include <utility>

namespace mft {

#undef MFT_LOSS
#define MFT_LOSS(id, name, traits, help) std::unique_ptr<Loss> make_##id##_loss(const LossConfig &loss);
#include "mft/registry/losses.inc"
#undef MFT_LOSS

namespace {

using Factory = std::unique_ptr<Loss> (*)(const LossConfig &);

const EntryTable<Factory> &registry() {
  static const EntryTable<Factory> losses("loss.kind", {
#define MFT_LOSS(id, name, traits, help) {name, make_##id##_loss},
#include "mft/registry/losses.inc"
#undef MFT_LOSS
                                                      });
  return losses;
}

} // namespace

std::unique_ptr<Loss> make_loss(const LossConfig &config) {
  std::unique_ptr<Loss> loss = registry().find(config.kind)(config);
  loss->name_ = config.kind;
  loss->classifies_ = has_trait(loss_entries(), config.kind, kClassifies);
  return loss;
}

double accuracy(const std::vector<double> &yhat, const std::vector<double> &y, long long N,
                long long d_out) {
  if (N == 0) return 0.0;
  long long right = 0;
  for (long long i = 0; i < N; ++i) {
    const double *z = yhat.data() + i * d_out, *t = y.data() + i * d_out;
    right += std::max_element(z, z + d_out) - z == std::max_element(t, t + d_out) - t;
  }
  return static_cast<double>(right) / static_cast<double>(N);
}

} // namespace mft
