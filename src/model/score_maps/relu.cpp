// relu: P_ab = max(a_ab, 0) / |A_a|,
//       ds_ab = 1[a_ab > 0] T_ab / |A_a|.
#include "mft/core/lanes.hpp"
#include "mft/model/score_map.hpp"

namespace mft {
namespace {

class Relu final : public ScoreMapOf<Relu> {
public:
  explicit Relu(bool causal) : ScoreMapOf(causal) {}
  const char *name() const override { return "relu"; }
  bool bounded() const override { return false; }

  template <class R> bool weights_of(R *S, long long visible, long long rows, const R *, R *, R *scale) const {
    // W = max(a, 0); the share 1/|A_a| is the scale.
    using V = LanesOf<R>;
    for (long long i = 0; i < visible * rows; i += lanes_of<R>) {
      const V s = load(S + i);
      store(S + i, where_positive(s, s, V{}));
    }
    const R share = R(1) / static_cast<R>(visible);
    for (long long r = 0; r < rows; ++r) scale[r] = share;
    return true;
  }

  template <class R> void cotangent_of(const R *W, const R *, R *T, long long visible, long long rows, R *) const {
    // W > 0 exactly where a_ab > 0 (P and W alike).
    using V = LanesOf<R>;
    const R share = R(1) / static_cast<R>(visible);
    for (long long i = 0; i < visible * rows; i += lanes_of<R>) {
      const V t = load(T + i) * share;
      store(T + i, where_positive(load(W + i), t, V{}));
    }
  }
};

} // namespace

MFT_SCORE_MAP(relu, "max(a, 0) / number of tokens seen")

std::unique_ptr<ScoreMap> make_relu_score_map(const ModelConfig &model) { return std::make_unique<Relu>(model.causal); }

} // namespace mft
