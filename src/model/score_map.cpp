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
    double *dot = work; // <g, ybar> = sum_b P_ab <g, x_b> per row, in the order b = 0, 1, ...
    std::fill(dot, dot + rows, 0.0);
    for (long long b = 0; b < visible; ++b)
      for (long long r = 0; r < rows; ++r) dot[r] += P[b * rows + r] * T[b * rows + r];
    for (long long b = 0; b < visible; ++b)
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

  void weights(double *S, long long visible, long long rows, double *) const override {
    const double share = 1.0 / static_cast<double>(visible);
    for (long long b = 0; b < visible; ++b) {
      double *s = S + b * rows;
      for (long long r = 0; r < rows; ++r) s[r] = std::max(s[r], 0.0) * share;
    }
  }

  void cotangent(const double *P, double *T, long long visible, long long rows, double *) const override {
    // P_ab > 0 exactly where a_ab > 0.
    const double share = 1.0 / static_cast<double>(visible);
    for (long long b = 0; b < visible; ++b)
      for (long long r = 0; r < rows; ++r)
        T[b * rows + r] = P[b * rows + r] > 0.0 ? T[b * rows + r] * share : 0.0;
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
