#pragma once
// How attention turns scores into weights (MODEL.md §10), for the forward
// kernel and its VJP alike. With a_ab = <Q x_a, K x_b> and A_a the tokens that
// token a attends to (all n, or b <= a with the causal mask), a score map
// gives the weights P_ab and, for the VJP, the scores' cotangents
//   ds_ab = sum_c (dP_ac / da_ab) T_ac,   T_ac = <g_a, x_c>
// (g_a the cotangent of token a's mixed values), with P_ab = ds_ab = 0 for b
// outside A_a. Each map lives in a file of its own
// under src/model/score_maps/ with its formulas beside its code.
//
// The kernel hands over one query token's scores at a time, for all its
// heads, stored by column: S (visible x rows), S[b][r] the score of row (head)
// r for token b < |A_a|, so each step over b is one vector pass across the
// heads. The tokens outside A_a are never passed: the mask is the kernel's
// loop bound (visible()). `rows` is a whole number of vector lanes
// (lanes.hpp; the kernel pads its heads).
#include "mft/core/config.hpp"

#include <memory>
#include <string>
#include <vector>

namespace mft {

class ScoreMap {
public:
  virtual ~ScoreMap() = default;
  virtual const char *name() const = 0;

  // Scores S (visible x rows, by column) of one query token become weights
  // W in place, with P[b][r] = W[b][r] scale[r]: a map that normalises each
  // row (softmax) leaves its factor in scale (rows doubles) rather than
  // multiplying every weight by it, and the kernel scales what it mixed
  // with W instead (d values per head, not n). Returns false, scale
  // untouched, when P = W. column_max: max_b S[b][r] when the map asks for
  // it (uses_column_max; the kernel finds it with the scores), else null.
  // `work`: 2 rows doubles.
  virtual bool weights(double *S, long long visible, long long rows, const double *column_max, double *work,
                       double *scale) const = 0;
  virtual bool uses_column_max() const { return false; }

  // With W and scale from weights() (scale = nullptr: P = W, so P itself
  // may be passed) and T[b][r] = <g_r, x_b>, T becomes ds in place.
  // `work`: rows doubles.
  virtual void cotangent(const double *W, const double *scale, double *T, long long visible, long long rows,
                         double *work) const = 0;

  // weights() then cotangent() of T in place (the VJP's use): one call, so
  // that a map may share a pass between them. Returns what weights() does.
  virtual bool weights_and_cotangent(double *S, double *T, long long visible, long long rows,
                                     const double *column_max, double *work, double *scale) const {
    const bool scaled = weights(S, visible, rows, column_max, work, scale);
    cotangent(S, scaled ? scale : nullptr, T, visible, rows, work);
    return scaled;
  }

  // P itself, in place of S: weights() with the scale applied (for
  // references and tests). `work`: 4 rows doubles.
  void probabilities(double *S, long long visible, long long rows, double *work) const;

  // Whether the weights stay bounded whatever the scores (softmax's convex
  // combinations do). Unbounded weights grow with the scores, which grow with
  // the tokens: the velocity grows like |x|^3 and the flow can blow up in
  // finite depth.
  virtual bool bounded() const = 0;

  // Why the depth flow may blow up with this map ("" when it cannot).
  std::string blow_up_hint() const;

  // How many tokens (0, 1, ...) query token a of n attends to: |A_a|.
  long long visible(long long a, long long n) const { return causal_ ? a + 1 : n; }

  bool causal() const { return causal_; }

protected:
  explicit ScoreMap(bool causal) : causal_(causal) {}

private:
  bool causal_;
};

// The score map named by model.attention, masked when model.causal, with its
// keys from `model`. InputError naming the key for an unknown name.
std::unique_ptr<ScoreMap> make_score_map(const ModelConfig &model);
// The score map `name` with its keys at their defaults.
std::unique_ptr<ScoreMap> make_score_map(const std::string &name, bool causal);

// The names make_score_map knows, in registry order.
std::vector<std::string> score_map_names();

} // namespace mft

// An entry's file src/model/score_maps/NAME.cpp holds, at the start of a
// line, its registration line (read by the build: cmake/registries.cmake)
//   MFT_SCORE_MAP(NAME, "help for --help: the weights' formula")
// a line MFT_KEY(key, type, default, check, "help") for each model.KEY it
// owns (a member of ModelConfig), and defines
// make_NAME_score_map(const ModelConfig &model) in namespace mft (the mask:
// model.causal).
#define MFT_SCORE_MAP(name, help)
