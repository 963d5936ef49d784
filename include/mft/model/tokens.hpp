#pragma once
// Token measures: N sequences of n tokens in R^d, and their targets in
// R^{d_out}. Sequence i's token measure is mu_i = (1/n) sum_j delta_{x_ij}
// (MODEL.md §1).
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

  double *sequence(long long i) { return tokens.data() + i * n * d; }
  const double *sequence(long long i) const { return tokens.data() + i * n * d; }
  const double *target(long long i) const { return targets.data() + i * d_out; }

  // Sequences [begin, end), copied.
  TokenData rows(long long begin, long long end) const {
    TokenData out{end - begin, n, d, d_out, {}, {}};
    out.tokens.assign(sequence(begin), sequence(end));
    out.targets.assign(target(begin), target(end));
    return out;
  }
};

} // namespace mft
