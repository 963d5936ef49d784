// softmax: P_ab = exp(a_ab) / sum_{c in A_a} exp(a_ac),
//          ds_ab = P_ab (T_ab - sum_c P_ac T_ac).
#include "mft/core/exp_batch.hpp"
#include "mft/model/score_map.hpp"

#include <algorithm>

namespace mft {
namespace {

class Softmax final : public ScoreMap {
public:
  explicit Softmax(bool causal) : ScoreMap(causal) {}
  const char *name() const override { return "softmax"; }
  bool bounded() const override { return true; }

  void weights(double *S, long long visible, long long rows, double *) const override {
    // Per 8 rows (lanes.hpp), all in registers: the maximum over b, then
    // exp(s - max) (exp_batch.hpp; max-subtracted scores of any size give
    // finite weights) with the sum added in the order b = 0, 1, ..., then the
    // scaling.
    for (long long c = 0; c < rows; c += lanes) {
      Lanes mx = load(S + c);
      for (long long b = 1; b < visible; ++b) {
        const Lanes s = load(S + b * rows + c);
        mx = s > mx ? s : mx;
      }
      Lanes sum = {};
      for (long long b = 0; b < visible; ++b) {
        const Lanes e = exp_nonpositive(load(S + b * rows + c) - mx);
        store(S + b * rows + c, e);
        sum += e;
      }
      const Lanes inverse = 1.0 / sum;
      for (long long b = 0; b < visible; ++b) store(S + b * rows + c, load(S + b * rows + c) * inverse);
    }
  }

  void cotangent(const double *P, double *T, long long visible, long long rows, double *work) const override {
    double *dot = work; // sum_b P_ab T_ab per row, in the order b = 0, 1, ...
    std::fill(dot, dot + rows, 0.0);
    for (long long b = 0; b < visible; ++b)
      for (long long r = 0; r < rows; ++r) dot[r] += P[b * rows + r] * T[b * rows + r];
    for (long long b = 0; b < visible; ++b)
      for (long long r = 0; r < rows; ++r) T[b * rows + r] = P[b * rows + r] * (T[b * rows + r] - dot[r]);
  }
};

} // namespace

MFT_SCORE_MAP(softmax, "exp(a) / sum of exp(a) over the tokens seen")

std::unique_ptr<ScoreMap> make_softmax_score_map(bool causal, const ModelConfig &) { return std::make_unique<Softmax>(causal); }

} // namespace mft
