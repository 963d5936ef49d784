// markov: in-context Markov chains (MODEL.md §13). Each sequence draws its
// own k x k transition matrix P, every row from Dirichlet(alpha); s_1 from
// P's stationary law, then s_{t+1} ~ P[s_t]. The model predicts every next
// symbol; the Bayes predictor for such chains is the in-context bigram with
// add-alpha counts.
#include "mft/tasks/symbols.hpp"
#include "mft/tasks/task.hpp"

#include "mft/core/error.hpp"
#include "mft/core/rng.hpp"

#include <cmath>
#include <utility>

namespace mft {

MFT_TASK(markov, "markov", kStreams | kSymbols, "in-context Markov chains: each sequence its own k x k matrix, rows Dirichlet(alpha), next-token prediction")
MFT_KEY(dirichlet, double, 1.0, positive_real, "markov: alpha of the Dirichlet law of every row of a sequence's transition matrix")

namespace {

// The largest vocabulary of a chain: its matrix is k^2 numbers per sequence.
constexpr long long kMaxChainVocab = 64;

// Gamma(a, 1) by Marsaglia and Tsang's method (a < 1: Gamma(a + 1) U^(1/a)).
double gamma_variate(RandomStream &rng, double a) {
  if (a < 1.0) return gamma_variate(rng, a + 1.0) * std::pow(1.0 - rng.uniform(), 1.0 / a);
  const double dd = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * dd);
  for (;;) {
    const double x = rng.normal(), v1 = 1.0 + c * x;
    if (v1 <= 0.0) continue;
    const double v = v1 * v1 * v1, u = 1.0 - rng.uniform();
    if (std::log(u) < 0.5 * x * x + dd - dd * v + dd * std::log(v)) return dd * v;
  }
}

// The stationary law pi of P (k x k, rows summing to one): pi (P - I) = 0
// with sum pi = 1, by Gaussian elimination with partial pivoting.
std::vector<double> stationary_law(const double *P, long long k) {
  // A pi = b with A = P^T - I, its last row replaced by ones.
  std::vector<double> A(static_cast<size_t>(k * k)), b(static_cast<size_t>(k), 0.0);
  for (long long r = 0; r < k; ++r)
    for (long long c = 0; c < k; ++c) A[r * k + c] = r + 1 == k ? 1.0 : P[c * k + r] - (r == c ? 1.0 : 0.0);
  b[k - 1] = 1.0;
  for (long long col = 0; col < k; ++col) {
    long long pivot = col;
    for (long long r = col + 1; r < k; ++r)
      if (std::abs(A[r * k + col]) > std::abs(A[pivot * k + col])) pivot = r;
    for (long long c = 0; c < k; ++c) std::swap(A[col * k + c], A[pivot * k + c]);
    std::swap(b[col], b[pivot]);
    for (long long r = col + 1; r < k; ++r) {
      const double f = A[r * k + col] / A[col * k + col];
      for (long long c = col; c < k; ++c) A[r * k + c] -= f * A[col * k + c];
      b[r] -= f * b[col];
    }
  }
  std::vector<double> pi(static_cast<size_t>(k));
  for (long long r = k - 1; r >= 0; --r) {
    double s = b[r];
    for (long long c = r + 1; c < k; ++c) s -= A[r * k + c] * pi[c];
    pi[r] = std::max(0.0, s / A[r * k + r]);
  }
  return pi;
}

// A draw from the law p over k symbols.
long long draw_symbol(RandomStream &rng, const double *p, long long k) {
  const double u = rng.uniform();
  double cumulative = 0.0;
  for (long long j = 0; j + 1 < k; ++j)
    if (u < (cumulative += p[j])) return j;
  return k - 1;
}

TokenData sequences(const Config &config, long long count, const SequenceStreams &stream_of) {
  TokenData data = symbol_data(config, count);
  const long long n = data.n, k = data.vocab;
  const double alpha = config.data.dirichlet;
  data.transitions.assign(static_cast<size_t>(count * k * k), 0.0);
  for (long long i = 0; i < count; ++i) {
    RandomStream rng = stream_of(i);
    double *P = data.transitions.data() + i * k * k;
    for (long long r = 0; r < k; ++r) {
      double sum = 0.0;
      // Rows of zeros have probability zero for alpha > 0; a draw of one
      // (underflow at tiny alpha) is drawn again.
      while (sum <= 0.0) {
        sum = 0.0;
        for (long long c = 0; c < k; ++c) sum += P[r * k + c] = gamma_variate(rng, alpha);
      }
      for (long long c = 0; c < k; ++c) P[r * k + c] /= sum;
    }
    const std::vector<double> pi = stationary_law(P, k);
    long long *s = data.symbols.data() + i * n;
    s[0] = draw_symbol(rng, pi.data(), k);
    for (long long t = 1; t < n; ++t) s[t] = draw_symbol(rng, P + s[t - 1] * k, k);
  }
  embed_symbols(config.model, data);
  return data;
}

void check(const Config &c) {
  if (c.data.vocab > kMaxChainVocab)
    throw InputError(key_error("data.vocab", std::to_string(c.data.vocab),
                               "data.task = markov takes at most " + std::to_string(kMaxChainVocab) + " symbols"));
  check_symbol_model(c);
}

std::vector<Baseline> baselines(const Config &config, const TokenData &test) {
  return in_context_baselines(test, config.data.dirichlet);
}

} // namespace

TaskEntry markov_task() {
  TaskEntry entry;
  entry.sequences = sequences;
  entry.check = check;
  entry.baselines = baselines;
  return entry;
}

} // namespace mft
