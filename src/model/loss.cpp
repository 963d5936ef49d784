#include "mft/model/loss.hpp"

#include "mft/core/error.hpp"

#include <algorithm>
#include <utility>

namespace mft {

#undef MFT_LOSS
#define MFT_LOSS(id, name, traits, help) std::unique_ptr<Loss> make_##id##_loss();
#include "mft/registry/losses.inc"
#undef MFT_LOSS

namespace {

using Factory = std::unique_ptr<Loss> (*)();

const std::vector<std::pair<std::string, Factory>> &registry() {
  static const std::vector<std::pair<std::string, Factory>> losses = {
#define MFT_LOSS(id, name, traits, help) {name, make_##id##_loss},
#include "mft/registry/losses.inc"
#undef MFT_LOSS
  };
  return losses;
}

} // namespace

std::unique_ptr<Loss> make_loss(const std::string &name) {
  for (const auto &[known, make] : registry())
    if (known == name) {
      std::unique_ptr<Loss> loss = make();
      loss->name_ = name;
      loss->classifies_ = has_trait(loss_entries(), name, kClassifies);
      return loss;
    }
  std::vector<std::string> names;
  for (const auto &entry : registry()) names.push_back(entry.first);
  throw InputError(key_error("loss.kind", name, "must be one of " + comma_list(names)));
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
