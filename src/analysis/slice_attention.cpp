#include "mft/analysis/slice_attention.hpp"

#include "mft/core/error.hpp"
#include "mft/core/lanes.hpp"
#include "mft/model/heads.hpp"
#include "mft/model/score_map.hpp"

#include <mpi.h>

#include <algorithm>

namespace mft {

std::vector<double> slice_attention(const Problem &problem, DepthSolver &solver, const TokenData &data) {
  const TokenData block = problem.block_of(data);
  const long long N = block.N, n = block.n, d = block.d, L = problem.particles->slices();
  const HeadParticles &heads = problem.particles->get<HeadParticles>();
  const long long rows = heads.own.count(), d_h = heads.d_h, M = heads.M;
  const std::unique_ptr<ScoreMap> map = make_score_map(problem.field_options);
  const bool causal = problem.field_options.causal;
  // The states entering each slice: X(0), then every k steps.
  DepthPath path;
  path.every = problem.depth_config.steps_per_slice;
  std::vector<double> X1(block.tokens.size());
  collectively(problem.grid->world(), [&] { solver.solve(block.tokens.data(), X1.data(), &path); });
  std::vector<double> mine(static_cast<size_t>(N * L * n * n), 0.0);
  // The score maps work on whole vector registers of heads: the scores of
  // padded heads are zero, and their weights are not summed.
  const long long padded = (rows + lanes_of<double> - 1) / lanes_of<double> * lanes_of<double>;
  std::vector<double> q(static_cast<size_t>(n * rows * d_h)), k(q.size()), S(static_cast<size_t>(n * padded), 0.0),
      work(static_cast<size_t>(4 * padded));
  for (long long l = 0; l < L; ++l)
    for (long long i = 0; i < N; ++i) {
      const double *X = path.states.data() + (l * N + i) * n * d;
      // Q_m x_a and K_m x_b of this rank's heads, [token][head][d_h].
      for (long long a = 0; a < n; ++a)
        for (long long m = 0; m < rows; ++m)
          for (long long h = 0; h < d_h; ++h) {
            const double *Qrow = heads.q(l, m) + h * d, *Krow = heads.k(l, m) + h * d, *x = X + a * d;
            double sq = 0.0, sk = 0.0;
            for (long long c = 0; c < d; ++c) sq += Qrow[c] * x[c], sk += Krow[c] * x[c];
            q[(a * rows + m) * d_h + h] = sq;
            k[(a * rows + m) * d_h + h] = sk;
          }
      for (long long a = 0; a < n; ++a) {
        const long long visible = causal ? a + 1 : n;
        for (long long b = 0; b < visible; ++b)
          for (long long m = 0; m < rows; ++m) {
            double s = 0.0;
            for (long long h = 0; h < d_h; ++h) s += q[(a * rows + m) * d_h + h] * k[(b * rows + m) * d_h + h];
            S[b * padded + m] = s;
          }
        for (long long b = 0; b < visible; ++b) std::fill(S.data() + b * padded + rows, S.data() + (b + 1) * padded, 0.0);
        if (rows > 0) map->probabilities(S.data(), visible, padded, work.data());
        double *A = mine.data() + ((i * L + l) * n + a) * n;
        for (long long b = 0; b < visible; ++b)
          for (long long m = 0; m < rows; ++m) A[b] += S[b * padded + m];
      }
    }
  // The heads of every rank, then the mean.
  MPI_Allreduce(MPI_IN_PLACE, mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_SUM, problem.heads_comm());
  for (double &v : mine) v /= static_cast<double>(M);
  return problem.grid->gather_rows(mine, data.N, L * n * n);
}

namespace {

// Per slice, the mean of A[i][l][a][target(a)] over i and a in [first, last).
template <class Target>
std::vector<double> mean_mass(const std::vector<double> &A, long long N, long long L, long long n, long long first,
                              long long last, Target target) {
  std::vector<double> out(static_cast<size_t>(L), 0.0);
  if (N == 0 || last <= first) return out;
  for (long long l = 0; l < L; ++l) {
    for (long long i = 0; i < N; ++i)
      for (long long a = first; a < last; ++a) out[l] += A[((i * L + l) * n + a) * n + target(a)];
    out[l] /= static_cast<double>(N * (last - first));
  }
  return out;
}

} // namespace

std::vector<double> previous_token_scores(const std::vector<double> &A, long long N, long long L, long long n) {
  return mean_mass(A, N, L, n, 1, n, [](long long a) { return a - 1; });
}

std::vector<double> induction_scores(const std::vector<double> &A, long long N, long long L, long long n) {
  const long long R = n / 2;
  return mean_mass(A, N, L, n, R, 2 * R, [R](long long a) { return a - R + 1; });
}

} // namespace mft
