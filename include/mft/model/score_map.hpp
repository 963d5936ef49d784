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
  // row (softmax) leaves its factor in scale (rows values) rather than
  // multiplying every weight by it, and the kernel scales what it mixed
  // with W instead (d values per head, not n). Returns false, scale
  // untouched, when P = W. column_max: max_b S[b][r] when the map asks for
  // it (uses_column_max; the kernel finds it with the scores), else null.
  // `work`: 2 rows values. In double, or in float for run.precision =
  // mixed (rows then a whole number of float lanes): one template per map
  // (ScoreMapOf below) gives both.
  virtual bool weights(double *S, long long visible, long long rows, const double *column_max, double *work,
                       double *scale) const = 0;
  virtual bool weights(float *S, long long visible, long long rows, const float *column_max, float *work,
                       float *scale) const = 0;
  virtual bool uses_column_max() const { return false; }

  // With W and scale from weights() (scale = nullptr: P = W, so P itself
  // may be passed) and T[b][r] = <g_r, x_b>, T becomes ds in place.
  // `work`: rows values.
  virtual void cotangent(const double *W, const double *scale, double *T, long long visible, long long rows,
                         double *work) const = 0;
  virtual void cotangent(const float *W, const float *scale, float *T, long long visible, long long rows,
                         float *work) const = 0;

  // weights() then cotangent() of T in place (the VJP's use): one call, so
  // that a map may share a pass between them. Returns what weights() does.
  virtual bool weights_and_cotangent(double *S, double *T, long long visible, long long rows,
                                     const double *column_max, double *work, double *scale) const = 0;
  virtual bool weights_and_cotangent(float *S, float *T, long long visible, long long rows,
                                     const float *column_max, float *work, float *scale) const = 0;

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

// A map written once for both precisions: Map defines
//   template <class R> bool weights_of(R *S, visible, rows, const R *column_max, R *work, R *scale) const
//   template <class R> void cotangent_of(const R *W, const R *scale, R *T, visible, rows, R *work) const
// and may define weights_and_cotangent_of (the same arguments as the
// virtual) to share a pass; otherwise it is weights_of then cotangent_of.
template <class Map> class ScoreMapOf : public ScoreMap {
public:
  bool weights(double *S, long long visible, long long rows, const double *column_max, double *work,
               double *scale) const final {
    return self().weights_of(S, visible, rows, column_max, work, scale);
  }
  bool weights(float *S, long long visible, long long rows, const float *column_max, float *work,
               float *scale) const final {
    return self().weights_of(S, visible, rows, column_max, work, scale);
  }
  void cotangent(const double *W, const double *scale, double *T, long long visible, long long rows,
                 double *work) const final {
    self().cotangent_of(W, scale, T, visible, rows, work);
  }
  void cotangent(const float *W, const float *scale, float *T, long long visible, long long rows,
                 float *work) const final {
    self().cotangent_of(W, scale, T, visible, rows, work);
  }
  bool weights_and_cotangent(double *S, double *T, long long visible, long long rows, const double *column_max,
                             double *work, double *scale) const final {
    return self().weights_and_cotangent_of(S, T, visible, rows, column_max, work, scale);
  }
  bool weights_and_cotangent(float *S, float *T, long long visible, long long rows, const float *column_max,
                             float *work, float *scale) const final {
    return self().weights_and_cotangent_of(S, T, visible, rows, column_max, work, scale);
  }

  template <class R>
  bool weights_and_cotangent_of(R *S, R *T, long long visible, long long rows, const R *column_max, R *work,
                                R *scale) const {
    const bool scaled = self().weights_of(S, visible, rows, column_max, work, scale);
    self().cotangent_of(S, scaled ? scale : nullptr, T, visible, rows, work);
    return scaled;
  }

protected:
  using ScoreMap::ScoreMap;

private:
  const Map &self() const { return static_cast<const Map &>(*this); }
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
