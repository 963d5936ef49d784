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

  void weights(double *S, long long rows, long long n) const override {
    // Max-subtract every row over the tokens it sees, then exponentiate the
    // whole block in one vectorised pass: scores of any size give finite
    // weights. Masked entries are set to 0 first (a valid argument) and to 0
    // again after.
    for (long long r = 0; r < rows; ++r) {
      double *s = S + r * n;
      const long long seen = visible(r, n);
      double mx = s[0];
      for (long long b = 1; b < seen; ++b) mx = std::max(mx, s[b]);
      for (long long b = 0; b < seen; ++b) s[b] -= mx;
      for (long long b = seen; b < n; ++b) s[b] = 0.0;
    }
    exp_nonpositive(S, S, rows * n);
    for (long long r = 0; r < rows; ++r) {
      double *s = S + r * n;
      const long long seen = visible(r, n);
      double sum = 0.0;
      for (long long b = 0; b < seen; ++b) sum += s[b];
      const double inv = 1.0 / sum;
      for (long long b = 0; b < seen; ++b) s[b] *= inv;
      for (long long b = seen; b < n; ++b) s[b] = 0.0;
    }
  }

  void cotangent(const double *P, double *T, long long rows, long long n) const override {
    for (long long r = 0; r < rows; ++r) {
      const double *p = P + r * n;
      double *ds = T + r * n;
      double dot = 0.0; // <g, ybar> = sum_b P_ab <g, x_b>
      for (long long b = 0; b < n; ++b) dot += p[b] * ds[b];
      for (long long b = 0; b < n; ++b) ds[b] = p[b] * (ds[b] - dot);
    }
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

  void weights(double *S, long long rows, long long n) const override {
    for (long long r = 0; r < rows; ++r) {
      double *s = S + r * n;
      const long long seen = visible(r, n);
      const double inv = 1.0 / static_cast<double>(seen);
      for (long long b = 0; b < seen; ++b) s[b] = std::max(s[b], 0.0) * inv;
      for (long long b = seen; b < n; ++b) s[b] = 0.0;
    }
  }

  void cotangent(const double *P, double *T, long long rows, long long n) const override {
    // P_ab > 0 exactly where a_ab > 0.
    for (long long r = 0; r < rows; ++r) {
      const double *p = P + r * n;
      double *ds = T + r * n;
      const double inv = 1.0 / static_cast<double>(visible(r, n));
      for (long long b = 0; b < n; ++b) ds[b] = p[b] > 0.0 ? ds[b] * inv : 0.0;
    }
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
