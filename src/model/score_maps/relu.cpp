// relu: P_ab = max(a_ab, 0) / |A_a|,
//       ds_ab = 1[a_ab > 0] T_ab / |A_a|.
#include "mft/model/score_map.hpp"

#include <algorithm>

namespace mft {
namespace {

class Relu final : public ScoreMap {
public:
  explicit Relu(bool causal) : ScoreMap(causal) {}
  const char *name() const override { return "relu"; }
  bool bounded() const override { return false; }

  void weights(double *S, long long visible, long long rows, double *) const override {
    const double share = 1.0 / static_cast<double>(visible);
    for (long long b = 0; b < visible; ++b) {
      double *s = S + b * rows;
      for (long long r = 0; r < rows; ++r) s[r] = std::max(s[r], 0.0) * share;
    }
  }

  void cotangent(const double *P, double *T, long long visible, long long rows, double *) const override {
    // P_ab > 0 exactly where a_ab > 0.
    const double share = 1.0 / static_cast<double>(visible);
    for (long long b = 0; b < visible; ++b)
      for (long long r = 0; r < rows; ++r)
        T[b * rows + r] = P[b * rows + r] > 0.0 ? T[b * rows + r] * share : 0.0;
  }
};

} // namespace

MFT_SCORE_MAP(relu, "max(a, 0) / number of tokens seen")

std::unique_ptr<ScoreMap> make_relu_score_map(bool causal, const ModelConfig &) { return std::make_unique<Relu>(causal); }

} // namespace mft
