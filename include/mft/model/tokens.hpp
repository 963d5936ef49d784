#pragma once
// Token measures: N sequences of n tokens in R^d, and their targets in
// R^{d_out}. Sequence i's token measure is mu_i = (1/n) sum_j delta_{x_ij}
// (MODEL.md §1). A task of symbols (MODEL.md §13) keeps the symbols its
// tokens embed beside them.
#include <algorithm>
#include <vector>

namespace mft {

struct TokenData {
  long long N = 0;     // sequences
  long long n = 0;     // tokens per sequence
  long long d = 0;     // token dimension
  long long d_out = 1; // target dimension
  std::vector<double> tokens;  // X(0), N x n x d, C order
  std::vector<double> targets; // y, N x d_out
  // Symbol tasks: the vocabulary k (0: the tokens embed no symbols), the
  // symbols s_ij in [0, k) (N x n), and, for in-context chains, each
  // sequence's transition matrix (N x k x k; empty otherwise).
  long long vocab = 0;
  std::vector<long long> symbols;
  std::vector<double> transitions;

  double *sequence(long long i) { return tokens.data() + i * n * d; }
  const double *sequence(long long i) const { return tokens.data() + i * n * d; }
  const double *target(long long i) const { return targets.data() + i * d_out; }

  // Sequences [begin, end), copied.
  TokenData rows(long long begin, long long end) const {
    TokenData out{end - begin, n, d, d_out, {}, {}, 0, {}, {}};
    out.tokens.assign(sequence(begin), sequence(end));
    out.targets.assign(target(begin), target(end));
    out.vocab = vocab;
    if (!symbols.empty()) out.symbols.assign(symbols.begin() + begin * n, symbols.begin() + end * n);
    if (!transitions.empty())
      out.transitions.assign(transitions.begin() + begin * vocab * vocab, transitions.begin() + end * vocab * vocab);
    return out;
  }
};

} // namespace mft
