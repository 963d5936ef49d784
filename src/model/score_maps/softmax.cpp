// softmax: P_ab = exp(a_ab) / sum_{c in A_a} exp(a_ac),
//          ds_ab = P_ab (T_ab - sum_c P_ac T_ac).
// Kept as W_ab = exp(a_ab - max_c a_ac) and the scale 1 / sum_c W_ac: the
// division happens once per head, on what the kernel mixed.
#include "mft/core/exp_batch.hpp"
#include "mft/model/score_map.hpp"

namespace mft {
namespace {

// T[b][c..] = P (T - dot) for the lanes of heads c, P = W s: the score
// cotangent's last pass, once the weights' sums are known.
template <class R>
[[gnu::always_inline]] inline void finish_cotangent(const R *W, LanesOf<R> s, LanesOf<R> dot, R *T, long long visible,
                                                    long long rows, long long c) {
  for (long long b = 0; b < visible; ++b)
    store(T + b * rows + c, (load(W + b * rows + c) * s) * (load(T + b * rows + c) - dot));
}

class Softmax final : public ScoreMapOf<Softmax> {
public:
  explicit Softmax(bool causal) : ScoreMapOf(causal) {}
  const char *name() const override { return "softmax"; }
  bool bounded() const override { return true; }

  bool uses_column_max() const override { return true; }

  template <class R>
  bool weights_of(R *S, long long visible, long long rows, const R *column_max, R *, R *scale) const {
    using V = LanesOf<R>;
    // Per vector of rows (lanes.hpp), in registers: exp(s - max) (exp_batch.hpp;
    // max-subtracted scores of any size give finite weights), the sum added
    // in the order b = 0, 1, ...
    for (long long c = 0; c < rows; c += lanes_of<R>) {
      const V mx = load(column_max + c);
      V sum = {};
      for (long long b = 0; b < visible; ++b) {
        const V e = exp_nonpositive(load(S + b * rows + c) - mx);
        store(S + b * rows + c, e);
        sum += e;
      }
      store(scale + c, R(1) / sum);
    }
    return true;
  }

  template <class R>
  void cotangent_of(const R *W, const R *scale, R *T, long long visible, long long rows, R *) const {
    using V = LanesOf<R>;
    // dot = sum_b P_b T_b = scale sum_b W_b T_b, in the order b = 0, 1, ...
    for (long long c = 0; c < rows; c += lanes_of<R>) {
      const V s = scale ? load(scale + c) : V{} + R(1);
      V dot = {};
      for (long long b = 0; b < visible; ++b) dot += load(W + b * rows + c) * load(T + b * rows + c);
      finish_cotangent(W, s, dot * s, T, visible, rows, c);
    }
  }

  template <class R>
  bool weights_and_cotangent_of(R *S, R *T, long long visible, long long rows, const R *column_max, R *,
                                R *scale) const {
    using V = LanesOf<R>;
    // The weights' pass also sums W T, so ds takes one more pass, not two.
    for (long long c = 0; c < rows; c += lanes_of<R>) {
      const V mx = load(column_max + c);
      V sum = {}, dot = {};
      for (long long b = 0; b < visible; ++b) {
        const V e = exp_nonpositive(load(S + b * rows + c) - mx);
        store(S + b * rows + c, e);
        sum += e;
        dot += e * load(T + b * rows + c);
      }
      const V s = R(1) / sum;
      store(scale + c, s);
      finish_cotangent(S, s, dot * s, T, visible, rows, c);
    }
    return true;
  }
};

} // namespace

MFT_SCORE_MAP(softmax, "exp(a) / sum of exp(a) over the tokens seen")

std::unique_ptr<ScoreMap> make_softmax_score_map(const ModelConfig &model) { return std::make_unique<Softmax>(model.causal); }

} // namespace mft
