// The forward solve in depth against analytic solutions, and the observed
// order of the integrators. Runs on any number of ranks.
#include "mft/depth/depth.hpp"
#include "mft/core/error.hpp"
#include "mft/model/field.hpp"
#include "mft/model/score_map.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/runs/command_line.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

namespace {

using Matrix = std::vector<double>; // d x d, row-major

Matrix matmul(const Matrix &A, const Matrix &B, long long d) {
  Matrix C(d * d, 0.0);
  for (long long i = 0; i < d; ++i)
    for (long long k = 0; k < d; ++k)
      for (long long j = 0; j < d; ++j) C[i * d + j] += A[i * d + k] * B[k * d + j];
  return C;
}

// expm by scaling and squaring of a degree-20 Taylor series.
Matrix expm(Matrix A, long long d) {
  double norm = 0;
  for (double a : A) norm = std::max(norm, std::fabs(a));
  int squarings = 0;
  while (norm * d > 0.25) {
    norm /= 2;
    ++squarings;
  }
  for (double &a : A) a = std::ldexp(a, -squarings);
  Matrix E(d * d, 0.0), term(d * d, 0.0);
  for (long long i = 0; i < d; ++i) E[i * d + i] = term[i * d + i] = 1.0;
  for (int k = 1; k <= 20; ++k) {
    term = matmul(term, A, d);
    for (double &t : term) t /= k;
    for (long long i = 0; i < d * d; ++i) E[i] += term[i];
  }
  for (int s = 0; s < squarings; ++s) E = matmul(E, E, d);
  return E;
}

std::vector<double> apply(const Matrix &A, const double *x, long long d) {
  std::vector<double> y(d, 0.0);
  for (long long i = 0; i < d; ++i)
    for (long long j = 0; j < d; ++j) y[i] += A[i * d + j] * x[j];
  return y;
}

// Mean of V over all M heads of slice l, summed across ranks.
Matrix mean_V(const mft::HeadParticles &p, long long l) {
  Matrix V(p.d * p.d, 0.0);
  for (long long m = 0; m < p.own.count(); ++m)
    for (long long i = 0; i < p.d * p.d; ++i) V[i] += p.v(l, m)[i] / p.M;
  MPI_Allreduce(MPI_IN_PLACE, V.data(), static_cast<int>(V.size()), MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  return V;
}

mft::HeadParticles make_heads(long long L, long long M, long long d_h, long long d,
                              std::uint64_t seed, double sigma_qk, double sigma_v) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mft::HeadParticles p(L, M, d_h, d, mft::ParticleBlock::block(M, rank, size));
  p.initialise(seed, sigma_qk, sigma_v);
  return p;
}

std::vector<double> solve(const mft::HeadParticles &heads, const mft::TokenData &data,
                          const std::string &ts_type, long long k) {
  const mft::Particles p = mft::test::heads_only(heads);
  mft::DepthField field(MPI_COMM_WORLD, data.N, data.n, p);
  mft::DepthConfig cfg;
  cfg.ts_type = ts_type;
  cfg.rk_type = "4";
  cfg.steps_per_slice = k;
  mft::DepthSolver solver(field, cfg);
  EXPECT_EQ(solver.steps(), heads.L * k);
  std::vector<double> X1(data.tokens.size());
  solver.solve(data.tokens.data(), X1.data());
  return X1;
}

TEST(Depth, OneTokenFollowsTheMatrixExponential) {
  // n = 1: the softmax is 1 and phi(x) = V x, so with the same particles in
  // every slice x(1) = expm(mean V) x(0).
  const long long N = 3, n = 1, d = 3, L = 4, M = 5;
  const mft::TokenData data = mft::make_gaussian(N, n, d, 5);
  mft::HeadParticles heads = make_heads(L, M, 2, d, 3, 0.5, 0.8);
  const long long per_slice_qk = heads.own.count() * heads.qk_size();
  const long long per_slice_v = heads.own.count() * heads.v_size();
  for (long long l = 1; l < L; ++l) {
    std::copy(heads.Q().begin(), heads.Q().begin() + per_slice_qk, heads.Q().begin() + l * per_slice_qk);
    std::copy(heads.K().begin(), heads.K().begin() + per_slice_qk, heads.K().begin() + l * per_slice_qk);
    std::copy(heads.V().begin(), heads.V().begin() + per_slice_v, heads.V().begin() + l * per_slice_v);
  }
  const Matrix E = expm(mean_V(heads, 0), d);
  double vnorm = 0;
  for (double v : mean_V(heads, 0)) vnorm = std::max(vnorm, std::fabs(v));
  EXPECT_GT(vnorm, 0.2); // |V| of order one: the test is not trivially passed
  const std::vector<double> X1 = solve(heads, data, "rk", 8);
  for (long long i = 0; i < N; ++i) {
    const std::vector<double> expect = apply(E, data.sequence(i), d);
    for (long long k = 0; k < d; ++k) EXPECT_NEAR(X1[i * d + k], expect[k], 1e-8);
  }
}

TEST(Depth, UniformAttentionMovesTheMeanLinearly) {
  // Q = 0: uniform attention, phi(x_j) = V m for every token, so
  // dm/ds = (mean V_l) m on slice l and x_j - m never changes.
  const long long N = 2, n = 4, d = 3, L = 3, M = 5;
  const mft::TokenData data = mft::make_gaussian(N, n, d, 6);
  mft::HeadParticles heads = make_heads(L, M, 2, d, 4, 0.9, 0.8);
  std::fill(heads.Q().begin(), heads.Q().end(), 0.0);
  const std::vector<double> X1 = solve(heads, data, "rk", 16);
  Matrix flow(d * d, 0.0);
  for (long long i = 0; i < d; ++i) flow[i * d + i] = 1.0;
  for (long long l = 0; l < L; ++l) {
    Matrix A = mean_V(heads, l);
    for (double &a : A) a /= L;
    flow = matmul(expm(A, d), flow, d);
  }
  for (long long i = 0; i < N; ++i) {
    std::vector<double> m0(d, 0.0), m1(d, 0.0);
    for (long long j = 0; j < n; ++j)
      for (long long k = 0; k < d; ++k) {
        m0[k] += data.sequence(i)[j * d + k] / n;
        m1[k] += X1[(i * n + j) * d + k] / n;
      }
    const std::vector<double> expect = apply(flow, m0.data(), d);
    for (long long k = 0; k < d; ++k) EXPECT_NEAR(m1[k], expect[k], 1e-8);
    for (long long j = 0; j < n; ++j)
      for (long long k = 0; k < d; ++k)
        EXPECT_NEAR(X1[(i * n + j) * d + k] - m1[k], data.sequence(i)[j * d + k] - m0[k], 1e-12);
  }
}

// Observed order from errors at k, 2k, 4k steps per slice against a much
// finer RK4 solve.
std::vector<double> observed_orders(const std::string &type, long long k0) {
  const mft::TokenData data = mft::make_gaussian(2, 4, 3, 8);
  const mft::HeadParticles heads = make_heads(2, 4, 2, 3, 9, 0.8, 1.0);
  const std::vector<double> fine = solve(heads, data, "rk", 512);
  std::vector<double> err;
  for (long long k = k0; k <= 4 * k0; k *= 2) {
    const std::vector<double> X1 = solve(heads, data, type, k);
    double e = 0;
    for (size_t i = 0; i < X1.size(); ++i) e = std::max(e, std::fabs(X1[i] - fine[i]));
    err.push_back(e);
  }
  return {std::log2(err[0] / err[1]), std::log2(err[1] / err[2])};
}

TEST(Depth, RungeKutta4HasOrderFour) {
  for (double p : observed_orders("rk", 2)) EXPECT_NEAR(p, 4.0, 0.3);
}

TEST(Depth, EulerHasOrderOne) {
  for (double p : observed_orders("euler", 32)) EXPECT_NEAR(p, 1.0, 0.1);
}

TEST(Depth, OptionsDatabaseChoosesTheIntegrator) {
  // -depth_ts_type euler overrides the configured rk.
  PetscOptionsSetValue(nullptr, "-depth_ts_type", "euler");
  const mft::TokenData data = mft::make_gaussian(2, 3, 2, 1);
  const mft::HeadParticles heads = make_heads(2, 3, 2, 2, 1, 0.5, 1.0);
  const mft::Particles p = mft::test::heads_only(heads);
  mft::DepthField field(MPI_COMM_WORLD, data.N, data.n, p);
  mft::DepthConfig cfg;
  mft::DepthSolver solver(field, cfg);
  PetscOptionsClearValue(nullptr, "-depth_ts_type");
  EXPECT_EQ(solver.ts_type(), "euler");
  const std::vector<double> a = solve(heads, data, "euler", 1);
  std::vector<double> b(data.tokens.size());
  solver.solve(data.tokens.data(), b.data());
  EXPECT_EQ(a, b);
}

TEST(Depth, NonExplicitTypeIsRefused) {
  PetscOptionsSetValue(nullptr, "-depth_ts_type", "beuler");
  const mft::TokenData data = mft::make_gaussian(1, 2, 2, 1);
  const mft::HeadParticles heads = make_heads(1, 1, 2, 2, 1, 0.5, 1.0);
  const mft::Particles p = mft::test::heads_only(heads);
  mft::DepthField field(MPI_COMM_WORLD, data.N, data.n, p);
  EXPECT_THROW({ mft::DepthSolver solver(field, mft::DepthConfig{}); }, mft::InputError);
  PetscOptionsClearValue(nullptr, "-depth_ts_type");
}

// With the causal mask, token j at s = 1 depends on tokens 1..j alone:
// changing the last token of every sequence leaves every other token's
// final state exactly as it was (the masked weights are exact zeros).
TEST(Depth, CausalMaskKeepsLaterTokensOut) {
  for (const std::string &attention : mft::score_map_names()) {
    // Weights that grow with the scores: smaller scores keep the flow finite.
    const char *sigma_qk = mft::make_score_map(attention, true)->bounded() ? "0.4" : "0.3";
    mft::Config config = mft::parse_config({"--model.d", "4", "--model.head_dim", "3", "--model.heads", "5",
                                            "--model.slices", "3", "--model.causal", "true",
                                            "--model.attention", attention, "--init.sigma_qk", sigma_qk,
                                            "--data.task", "gaussian", "--data.sequences", "4",
                                            "--data.tokens", "6"});
    mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, config, false);
    const mft::TokenData &data = problem.data;
    std::vector<double> X1(data.tokens.size()), Y1(data.tokens.size());
    problem.solver->solve(data.tokens.data(), X1.data());
    std::vector<double> changed = data.tokens;
    for (long long i = 0; i < data.N; ++i)
      for (long long k = 0; k < data.d; ++k) changed[((i + 1) * data.n - 1) * data.d + k] += 1.5 + k;
    problem.solver->solve(changed.data(), Y1.data());
    for (long long i = 0; i < data.N; ++i)
      for (long long j = 0; j < data.n; ++j)
        for (long long k = 0; k < data.d; ++k) {
          const long long q = (i * data.n + j) * data.d + k;
          if (j + 1 < data.n)
            EXPECT_EQ(X1[q], Y1[q]) << attention << ": sequence " << i << " token " << j;
          else
            EXPECT_NE(X1[q], Y1[q]) << attention << ": the last token itself must move";
        }
  }
}

} // namespace
