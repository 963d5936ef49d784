#include "mft/model/score_map.hpp"

#include "mft/core/error.hpp"
#include "mft/core/exp_batch.hpp"

#include <algorithm>
#include <functional>
#include <utility>

namespace mft {
namespace {

class Softmax final : public ScoreMap {
public:
  explicit Softmax(bool causal) : ScoreMap(causal) {}
  const char *name() const override { return "softmax"; }

  void weights(double *S, long long n, long long rows, double *work) const override {
    // Each step over b a pass across the rows: the row maximum; then per
    // token b, while its row of S is in L1, the masked entries set to 0,
    // exp(s - max) (vectorised, exp_batch.hpp; max-subtracted scores of any
    // size give finite weights) and the sums, added in the order b = 0, 1, ...;
    // the scaling.
    double *mx = work, *sum = work + rows;
    std::copy(S, S + rows, mx); // every row sees token 0
    for (long long b = 1; b < n; ++b) {
      const double *s = S + b * rows;
      for (long long r = first_seeing(b); r < rows; ++r) mx[r] = std::max(mx[r], s[r]);
    }
    std::fill(sum, sum + rows, 0.0);
    for (long long b = 0; b < n; ++b) {
      double *s = S + b * rows;
      const long long from = std::min(first_seeing(b), rows);
      std::fill(s, s + from, 0.0);
      for (long long r = from; r < rows; ++r) s[r] -= mx[r];
      exp_nonpositive(s + from, s + from, rows - from);
      for (long long r = from; r < rows; ++r) sum[r] += s[r];
    }
    for (long long r = 0; r < rows; ++r) sum[r] = 1.0 / sum[r];
    for (long long b = 0; b < n; ++b) {
      double *s = S + b * rows;
      for (long long r = std::min(first_seeing(b), rows); r < rows; ++r) s[r] *= sum[r];
    }
  }

  void cotangent(const double *P, double *T, long long n, long long rows, double *work) const override {
    double *dot = work; // <g, ybar> = sum_b P_ab <g, x_b> per row, in the order b = 0, 1, ...
    std::fill(dot, dot + rows, 0.0);
    for (long long b = 0; b < n; ++b)
      for (long long r = 0; r < rows; ++r) dot[r] += P[b * rows + r] * T[b * rows + r];
    for (long long b = 0; b < n; ++b)
      for (long long r = 0; r < rows; ++r) T[b * rows + r] = P[b * rows + r] * (T[b * rows + r] - dot[r]);
  }
};

class Relu final : public ScoreMap {
public:
  explicit Relu(bool causal) : ScoreMap(causal) {}
  const char *name() const override { return "relu"; }
  // Unlike softmax's convex combinations, relu weights grow with the scores.
  const char *blow_up_hint() const override {
    return "; the relu score map makes the velocity grow like |x|^3, so the flow can blow up in "
           "finite depth: smaller init.sigma_qk (or train.dtau, in training) keeps it finite";
  }

  void weights(double *S, long long n, long long rows, double *work) const override {
    for (long long r = 0; r < rows; ++r) work[r] = 1.0 / static_cast<double>(visible(r, n));
    for (long long b = 0; b < n; ++b) {
      double *s = S + b * rows;
      const long long from = std::min(first_seeing(b), rows);
      std::fill(s, s + from, 0.0);
      for (long long r = from; r < rows; ++r) s[r] = std::max(s[r], 0.0) * work[r];
    }
  }

  void cotangent(const double *P, double *T, long long n, long long rows, double *work) const override {
    // P_ab > 0 exactly where a_ab > 0.
    for (long long r = 0; r < rows; ++r) work[r] = 1.0 / static_cast<double>(visible(r, n));
    for (long long b = 0; b < n; ++b)
      for (long long r = 0; r < rows; ++r)
        T[b * rows + r] = P[b * rows + r] > 0.0 ? T[b * rows + r] * work[r] : 0.0;
  }
};

// The registry: adding a score map is a class above and a line here.
using Factory = std::function<std::unique_ptr<ScoreMap>(bool)>;
const std::vector<std::pair<std::string, Factory>> &registry() {
  static const std::vector<std::pair<std::string, Factory>> maps = {
      {"softmax", [](bool causal) { return std::make_unique<Softmax>(causal); }},
      {"relu", [](bool causal) { return std::make_unique<Relu>(causal); }},
  };
  return maps;
}

} // namespace

std::unique_ptr<ScoreMap> make_score_map(const std::string &name, bool causal) {
  for (const auto &[known, make] : registry())
    if (known == name) return make(causal);
  std::string list;
  for (const std::string &known : score_map_names()) list += (list.empty() ? "" : ", ") + known;
  throw InputError(key_error("model.attention", name, "must be one of " + list));
}

std::vector<std::string> score_map_names() {
  std::vector<std::string> names;
  for (const auto &entry : registry()) names.push_back(entry.first);
  return names;
}

} // namespace mft
