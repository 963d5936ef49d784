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
// and P_ab = ds_ab = 0 for b outside A_a. Scores are stored by column: S
// (n x rows), S[b][r] the score of row r for token b, so each step over b is
// one vector pass across all rows (the softmax vectorises across heads and
// query tokens, with no transposed stores). Row r belongs to query token
// a = r / rows_per_token (the kernels' (a, m) layout), so the mask needs no
// index arrays.
#include <memory>
#include <string>
#include <vector>

namespace mft {

class ScoreMap {
public:
  virtual ~ScoreMap() = default;
  virtual const char *name() const = 0;

  // Scores S (n x rows, by column) become the weights P in place.
  // `work`: 2 rows doubles.
  virtual void weights(double *S, long long n, long long rows, double *work) const = 0;

  // With P (n x rows) from weights() and T[b][r] = <g_a, x_b>, T becomes ds
  // in place. `work`: rows doubles.
  virtual void cotangent(const double *P, double *T, long long n, long long rows, double *work) const = 0;

  // Why the depth flow may blow up with this map ("" when it cannot).
  virtual const char *blow_up_hint() const { return ""; }

  // Tokens that the query token of row r attends to.
  long long visible(long long r, long long n) const {
    return causal_ ? r / rows_per_token_ + 1 : n;
  }
  // The first row whose query token attends to token b (rows are ordered
  // by query token, so the rows that see b are [first_seeing(b), rows)).
  long long first_seeing(long long b) const { return causal_ ? b * rows_per_token_ : 0; }

  bool causal() const { return causal_; }
  void set_layout(long long rows_per_token) { rows_per_token_ = rows_per_token; }

protected:
  explicit ScoreMap(bool causal) : causal_(causal) {}

private:
  bool causal_;
  long long rows_per_token_ = 1;
};

// The score map named by model.attention (softmax, relu), with or without
// the causal mask. InputError naming the key for an unknown name.
std::unique_ptr<ScoreMap> make_score_map(const std::string &name, bool causal);

// The names make_score_map knows, for the key's check and --help.
std::vector<std::string> score_map_names();

} // namespace mft
