#pragma once
// How attention turns scores into weights (MODEL.md §10), for the forward
// kernel and its VJP alike. With a_ab = <Q x_a, K x_b> and A_a the tokens that
// token a attends to (all n, or b <= a with the causal mask):
//
//   softmax: P_ab = exp(a_ab) / sum_{c in A_a} exp(a_ac),
//            ds_ab = P_ab (<g_a, x_b> - sum_c P_ac <g_a, x_c>)
//   relu:    P_ab = max(a_ab, 0) / |A_a|,
//            ds_ab = 1[a_ab > 0] <g_a, x_b> / |A_a|
//
// and P_ab = ds_ab = 0 for b outside A_a. The kernel hands over one query
// token's scores at a time, for all its heads, stored by column: S (visible x
// rows), S[b][r] the score of row (head) r for token b < |A_a|, so each step
// over b is one vector pass across the heads. The tokens outside A_a are
// never passed: the mask is the kernel's loop bound (visible()). `rows` is a
// whole number of vector lanes (lanes.hpp; the kernel pads its heads).
#include <memory>
#include <string>
#include <vector>

namespace mft {

class ScoreMap {
public:
  virtual ~ScoreMap() = default;
  virtual const char *name() const = 0;

  // Scores S (visible x rows, by column) of one query token become the
  // weights P in place. `work`: 2 rows doubles.
  virtual void weights(double *S, long long visible, long long rows, double *work) const = 0;

  // With P (visible x rows) from weights() and T[b][r] = <g_r, x_b>, T
  // becomes ds in place. `work`: rows doubles.
  virtual void cotangent(const double *P, double *T, long long visible, long long rows,
                         double *work) const = 0;

  // Why the depth flow may blow up with this map ("" when it cannot).
  virtual const char *blow_up_hint() const { return ""; }

  // How many tokens (0, 1, ...) query token a of n attends to: |A_a|.
  long long visible(long long a, long long n) const { return causal_ ? a + 1 : n; }

  bool causal() const { return causal_; }

protected:
  explicit ScoreMap(bool causal) : causal_(causal) {}

private:
  bool causal_;
};

// The score map named by model.attention (softmax, relu), with or without
// the causal mask. InputError naming the key for an unknown name.
std::unique_ptr<ScoreMap> make_score_map(const std::string &name, bool causal);

// The names make_score_map knows, for the key's check and --help.
std::vector<std::string> score_map_names();

} // namespace mft
