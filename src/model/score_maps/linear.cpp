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

  bool weights(double *, long long visible, long long rows, const double *, double *,
               double *scale) const override {
    // W = a; the share 1/|A_a| is the scale.
    const double share = 1.0 / static_cast<double>(visible);
    for (long long r = 0; r < rows; ++r) scale[r] = share;
    return true;
  }

  void cotangent(const double *, const double *, double *T, long long visible, long long rows,
                 double *) const override {
    const double share = 1.0 / static_cast<double>(visible);
    for (long long i = 0; i < visible * rows; ++i) T[i] *= share;
  }
};

} // namespace

MFT_SCORE_MAP(linear, "a / number of tokens seen (no normalisation)")

std::unique_ptr<ScoreMap> make_linear_score_map(const ModelConfig &model) { return std::make_unique<Linear>(model.causal); }

} // namespace mft
