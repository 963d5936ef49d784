// relu: P_ab = max(a_ab, 0) / |A_a|,
//       ds_ab = 1[a_ab > 0] T_ab / |A_a|.
#include "mft/core/lanes.hpp"
#include "mft/model/score_map.hpp"

namespace mft {
namespace {

class Relu final : public ScoreMap {
public:
  explicit Relu(bool causal) : ScoreMap(causal) {}
  const char *name() const override { return "relu"; }
  bool bounded() const override { return false; }

  bool weights(double *S, long long visible, long long rows, const double *, double *,
               double *scale) const override {
    // W = max(a, 0); the share 1/|A_a| is the scale.
    for (long long i = 0; i < visible * rows; i += lanes) {
      const Lanes s = load(S + i);
      store(S + i, where_positive(s, s, Lanes{}));
    }
    const double share = 1.0 / static_cast<double>(visible);
    for (long long r = 0; r < rows; ++r) scale[r] = share;
    return true;
  }

  void cotangent(const double *W, const double *, double *T, long long visible, long long rows,
                 double *) const override {
    // W > 0 exactly where a_ab > 0 (P and W alike).
    const double share = 1.0 / static_cast<double>(visible);
    for (long long i = 0; i < visible * rows; i += lanes) {
      const Lanes t = load(T + i) * share;
      store(T + i, where_positive(load(W + i), t, Lanes{}));
    }
  }
};

} // namespace

MFT_SCORE_MAP(relu, "max(a, 0) / number of tokens seen")

std::unique_ptr<ScoreMap> make_relu_score_map(const ModelConfig &model) { return std::make_unique<Relu>(model.causal); }

} // namespace mft
