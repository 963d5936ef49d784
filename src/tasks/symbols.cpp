#include "mft/tasks/symbols.hpp"

#include "mft/core/error.hpp"
#include "mft/core/rng.hpp"

#include <algorithm>
#include <cmath>

namespace mft {

void position_code(const std::string &kind, long long p, long long t, double *out) {
  std::fill(out, out + p, 0.0);
  if (kind == "one-hot") {
    out[t - 1] = 1.0;
    return;
  }
  for (long long i = 0; 2 * i < p; ++i) {
    const double w = std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(p));
    out[2 * i] = std::sin(static_cast<double>(t) * w);
    if (2 * i + 1 < p) out[2 * i + 1] = std::cos(static_cast<double>(t) * w);
  }
}

TokenData symbol_data(const Config &config, long long count) {
  const long long n = config.data.tokens, d = config.model.d, k = config.data.vocab;
  TokenData data;
  data.N = count;
  data.n = n;
  data.d = d;
  data.d_out = config.readout.dim;
  data.vocab = k;
  data.symbols.assign(static_cast<size_t>(count * n), 0);
  return data;
}

void embed_symbols(const ModelConfig &model, TokenData &data) {
  const long long N = data.N, n = data.n, d = data.d, k = data.vocab, p = model.position_dim;
  data.tokens.assign(static_cast<size_t>(N * n * d), 0.0);
  data.d_out = (n - 1) * k;
  data.targets.assign(static_cast<size_t>(N * data.d_out), 0.0);
  for (long long i = 0; i < N; ++i) {
    const long long *s = data.symbols.data() + i * n;
    for (long long t = 0; t < n; ++t) {
      double *x = data.tokens.data() + (i * n + t) * d;
      x[s[t]] = 1.0;
      position_code(model.positions, p, t + 1, x + k);
      if (t + 1 < n) data.targets[static_cast<size_t>(i * data.d_out + t * k + s[t + 1])] = 1.0;
    }
  }
}

void check_symbol_model(const Config &c) {
  const std::string &task = c.data.task;
  if (c.data.vocab < 2)
    throw InputError(key_error("data.vocab", std::to_string(c.data.vocab), "data.task = " + task +
                                                                           " needs at least 2 symbols"));
  if (c.data.tokens < 2)
    throw InputError(key_error("data.tokens", std::to_string(c.data.tokens),
                               "data.task = " + task + " needs n >= 2 (a symbol and the next one to predict)"));
  const long long k = c.data.vocab, p = c.model.position_dim;
  if (c.model.d < k + p)
    throw InputError(key_error("model.d", std::to_string(c.model.d),
                               "the embedding needs d >= data.vocab + model.position_dim = " + std::to_string(k) +
                                   " + " + std::to_string(p) + " (the symbol's one-hot coordinates, then the "
                                   "positional code)"));
  if (c.data.probe_sequences > 0 && c.data.probe_sequences < c.parallel.sequence_groups)
    throw InputError(key_error("data.probe_sequences", std::to_string(c.data.probe_sequences),
                               "fewer than the " + std::to_string(c.parallel.sequence_groups) +
                                   " sequence groups (parallel.sequence_groups)"));
  if (c.model.positions == "one-hot" && p < c.data.tokens)
    throw InputError(key_error("model.position_dim", std::to_string(p),
                               "one-hot positions need p >= data.tokens = " + std::to_string(c.data.tokens)));
}

TokenData induction_probe(const Config &config, long long count) {
  TokenData data = symbol_data(config, count);
  const long long n = data.n, R = n / 2, k = data.vocab;
  for (long long i = 0; i < count; ++i) {
    RandomStream rng(config.data.test_seed, Species::DataProbe, static_cast<std::uint64_t>(i), 0);
    long long *s = data.symbols.data() + i * n;
    const auto draw = [&] { return std::min(k - 1, static_cast<long long>(rng.uniform() * static_cast<double>(k))); };
    for (long long t = 0; t < R; ++t) s[t] = s[t + R] = draw();
    if (n % 2) s[n - 1] = draw();
  }
  embed_symbols(config.model, data);
  return data;
}

namespace {

// -log p of the predictor `prob` (prob(i, t, j): the probability of symbol
// j after s_1..s_t, 1 <= t < n) averaged over the positions t < n.
template <class Prob> double mean_nats(const TokenData &data, Prob &&prob) {
  double total = 0.0;
  for (long long i = 0; i < data.N; ++i)
    for (long long t = 1; t < data.n; ++t)
      total -= std::log(prob(i, t, data.symbols[static_cast<size_t>(i * data.n + t)]));
  return total / static_cast<double>(data.N * (data.n - 1));
}

} // namespace

std::vector<Baseline> in_context_baselines(const TokenData &test, double alpha) {
  const long long n = test.n, k = test.vocab;
  std::vector<Baseline> out;
  if (test.N == 0) return out;
  out.push_back({"uniform", std::log(static_cast<double>(k)), "every symbol 1/k", false});
  // The counts of s_1..s_t are rebuilt per (i, t): n is small and this is
  // done once per run.
  std::vector<double> unigram(static_cast<size_t>(k)), pair(static_cast<size_t>(k * k));
  const auto counts = [&](long long i, long long t) {
    const long long *s = test.symbols.data() + i * n;
    std::fill(unigram.begin(), unigram.end(), 0.0);
    std::fill(pair.begin(), pair.end(), 0.0);
    for (long long u = 0; u < t; ++u) {
      unigram[static_cast<size_t>(s[u])] += 1.0;
      if (u + 1 < t) pair[static_cast<size_t>(s[u] * k + s[u + 1])] += 1.0;
    }
    return s[t - 1];
  };
  out.push_back({"unigram",
                 mean_nats(test,
                           [&](long long i, long long t, long long j) {
                             counts(i, t);
                             return (unigram[static_cast<size_t>(j)] + 1.0) / static_cast<double>(t + k);
                           }),
                 "in-context unigram: (count of j in s_1..s_t + 1) / (t + k)", false});
  out.push_back({"bigram",
                 mean_nats(test,
                               [&](long long i, long long t, long long j) {
                                 const long long last = counts(i, t);
                                 double row = 0.0;
                                 for (long long c = 0; c < k; ++c) row += pair[static_cast<size_t>(last * k + c)];
                                 return (pair[static_cast<size_t>(last * k + j)] + alpha) /
                                        (row + static_cast<double>(k) * alpha);
                               }),
                 "in-context bigram: (count of s_t -> j + alpha) / (count of s_t -> any + k alpha), the Bayes "
                 "predictor for Dirichlet(alpha) rows",
                 true});
  if (!test.transitions.empty())
    out.push_back({"oracle",
                   mean_nats(test,
                             [&](long long i, long long t, long long j) {
                               const long long last = test.symbols[static_cast<size_t>(i * n + t - 1)];
                               return test.transitions[static_cast<size_t>((i * k + last) * k + j)];
                             }),
                   "the sequence's own transition matrix P[s_t, j]", false});
  return out;
}

double reference_nats(const std::vector<Baseline> &baselines) {
  for (const Baseline &b : baselines)
    if (b.reference) return b.nats;
  return std::nan("");
}

} // namespace mft
