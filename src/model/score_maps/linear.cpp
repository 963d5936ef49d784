// linear: P_ab = a_ab / |A_a|, no normalisation (the linear attention of the
//         in-context-learning theory, where one layer can take one step of
//         gradient descent on the examples in the context),
//         ds_ab = T_ab / |A_a|.
#include "mft/model/score_map.hpp"

namespace mft {
namespace {

class Linear final : public ScoreMapOf<Linear> {
public:
  explicit Linear(bool causal) : ScoreMapOf(causal) {}
  const char *name() const override { return "linear"; }
  bool bounded() const override { return false; }

  template <class R> bool weights_of(R *, long long visible, long long rows, const R *, R *, R *scale) const {
    // W = a; the share 1/|A_a| is the scale.
    const R share = R(1) / static_cast<R>(visible);
    for (long long r = 0; r < rows; ++r) scale[r] = share;
    return true;
  }

  template <class R> void cotangent_of(const R *, const R *, R *T, long long visible, long long rows, R *) const {
    const R share = R(1) / static_cast<R>(visible);
    for (long long i = 0; i < visible * rows; ++i) T[i] *= share;
  }
};

} // namespace

MFT_SCORE_MAP(linear, "a / number of tokens seen (no normalisation)")

std::unique_ptr<ScoreMap> make_linear_score_map(const ModelConfig &model) { return std::make_unique<Linear>(model.causal); }

} // namespace mft
