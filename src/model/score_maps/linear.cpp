// linear: P_ab = a_ab / |A_a|, no normalisation (the linear attention of the
//         in-context-learning theory, where one layer can take one step of
//         gradient descent on the examples in the context),
//         ds_ab = T_ab / |A_a|.
#include "mft/model/score_map.hpp"

namespace mft {
namespace {

class Linear final : public ScoreMap {
public:
  explicit Linear(bool causal) : ScoreMap(causal) {}
  const char *name() const override { return "linear"; }
  bool bounded() const override { return false; }

  void weights(double *S, long long visible, long long rows, double *) const override {
    const double share = 1.0 / static_cast<double>(visible);
    for (long long i = 0; i < visible * rows; ++i) S[i] *= share;
  }

  void cotangent(const double *, double *T, long long visible, long long rows, double *) const override {
    const double share = 1.0 / static_cast<double>(visible);
    for (long long i = 0; i < visible * rows; ++i) T[i] *= share;
  }
};

} // namespace

MFT_SCORE_MAP(linear, "a / number of tokens seen (no normalisation)")

std::unique_ptr<ScoreMap> make_linear_score_map(bool causal, const ModelConfig &) { return std::make_unique<Linear>(causal); }

} // namespace mft
