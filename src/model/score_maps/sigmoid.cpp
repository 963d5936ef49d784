// sigmoid: P_ab = sigma(a_ab + b_a), sigma(z) = 1 / (1 + exp(-z)), with the
//          bias b_a = -log |A_a|, so that at a = 0 the weights sum to about
//          one (|A_a| / (|A_a| + 1)) whatever the number of tokens seen,
//          ds_ab = sigma'(a_ab + b_a) T_ab = P_ab (1 - P_ab) T_ab.
// Each weight on its own, no sum over the tokens: the weights of a query
// need not sum to one.
#include "mft/core/exp_batch.hpp"
#include "mft/model/score_map.hpp"

#include <cmath>

namespace mft {
namespace {

class Sigmoid final : public ScoreMapOf<Sigmoid> {
public:
  explicit Sigmoid(bool causal) : ScoreMapOf(causal) {}
  const char *name() const override { return "sigmoid"; }
  bool bounded() const override { return true; }

  template <class R> bool weights_of(R *S, long long visible, long long rows, const R *, R *, R *) const {
    using V = LanesOf<R>;
    // With e = exp(-|z|) <= 1 (exp_batch.hpp), sigma(z) = 1 / (1 + e) for
    // z >= 0 and e / (1 + e) below: no overflow for any score.
    const R bias = static_cast<R>(-std::log(static_cast<double>(visible)));
    for (long long i = 0; i < visible * rows; i += lanes_of<R>) {
      const V z = load(S + i) + bias;
      const V e = exp_nonpositive(where_positive(z, -z, z));
      const V inverse = R(1) / (R(1) + e);
      store(S + i, where_positive(z, inverse, e * inverse)); // at z = 0 both are 1/2
    }
    return false;
  }

  template <class R> void cotangent_of(const R *P, const R *, R *T, long long visible, long long rows, R *) const {
    for (long long i = 0; i < visible * rows; ++i) T[i] *= P[i] * (R(1) - P[i]);
  }
};

} // namespace

MFT_SCORE_MAP(sigmoid, "sigma(a - log m) = 1 / (1 + m exp(-a)), m the number of tokens seen, each weight on its own")

std::unique_ptr<ScoreMap> make_sigmoid_score_map(const ModelConfig &model) { return std::make_unique<Sigmoid>(model.causal); }

} // namespace mft
