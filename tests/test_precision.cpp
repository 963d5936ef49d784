// run.precision = mixed against double: the risk, dR/dtheta, dR/dX0 and the
// NTK's Gram of the same problem, for every score map, the causal mask, the
// MLP, the sphere and a token dimension past the compiled ones, within the
// documented tolerance (docs/PERFORMANCE.md, "Mixed precision"): 1e-6
// relative for the risk, 1e-5 for the gradients and the Gram in the 2-norm
// (measured on 1 to 3 ranks: at most 4e-8 and 4e-7). And the float exponential against std::exp.
// Runs on any number of ranks: every rank count agrees with double within
// the same tolerance.
#include "mft/analysis/ntk.hpp"
#include "mft/core/exp_batch.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/runs/command_line.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

using Args = std::vector<std::string>;

constexpr double kRiskTolerance = 1e-6, kGradientTolerance = 1e-5;

// A small problem; `extra` adds keys or replaces these.
mft::Config small_problem(const Args &extra, const std::string &precision) {
  return mft::test::config_with({"--data.task", "gaussian", "--run.precision", precision},
                                {{"--model.d", "5"}, {"--model.head_dim", "3"}, {"--model.heads", "5"},
                                 {"--model.slices", "3"}, {"--data.sequences", "6"}, {"--data.tokens", "5"},
                                 {"--init.sigma_qk", "0.6"}, {"--init.sigma_v", "0.8"}},
                                extra);
}

mft::test::GradientAt gradient_of(const Args &extra, const std::string &precision) {
  const mft::test::GradientAt g = mft::test::gradient_at(small_problem(extra, precision));
  EXPECT_EQ(g.mixed_precision, precision == "mixed");
  return g;
}

// |a - b| / |b| in the 2-norm, summed over ranks (dR is each rank's share).
double relative_difference(const std::vector<double> &a, const std::vector<double> &b) {
  double sums[2] = {0, 0};
  for (size_t i = 0; i < a.size(); ++i) {
    sums[0] += (a[i] - b[i]) * (a[i] - b[i]);
    sums[1] += b[i] * b[i];
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(sums[0] / sums[1]);
}

class MixedPrecision : public testing::TestWithParam<Args> {};

TEST_P(MixedPrecision, GradientAgreesWithDouble) {
  const mft::test::GradientAt exact = gradient_of(GetParam(), "double"), mixed = gradient_of(GetParam(), "mixed");
  ASSERT_EQ(exact.dR.size(), mixed.dR.size());
  const double risk = std::fabs(mixed.risk - exact.risk) / std::fabs(exact.risk);
  const double dR = relative_difference(mixed.dR, exact.dR), dX0 = relative_difference(mixed.dX0, exact.dX0);
  EXPECT_LT(risk, kRiskTolerance) << "R " << exact.risk << " (double) against " << mixed.risk << " (mixed)";
  EXPECT_LT(dR, kGradientTolerance) << "dR/dtheta";
  EXPECT_LT(dX0, kGradientTolerance) << "dR/dX0";
  // Not double's numbers either: the float path ran.
  EXPECT_GT(dR, 0.0) << "mixed gave double's gradient bit for bit: did the float kernels run?";
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("  relative differences: R %.2e, dR/dtheta %.2e, dR/dX0 %.2e\n", risk, dR, dX0);
}

// Every score map; the causal mask with the MLP; the sphere; d = 20 (past
// the compiled token dimensions) with 18 heads (on one rank with AVX-512
// two float vectors of heads, three of double); two depth steps per slice of Dormand-Prince.
INSTANTIATE_TEST_SUITE_P(
    Variants, MixedPrecision,
    testing::Values(Args{}, Args{"--model.attention", "relu", "--init.sigma_qk", "0.3"},
                    Args{"--model.attention", "sigmoid"},
                    Args{"--model.attention", "linear", "--init.sigma_qk", "0.3"},
                    Args{"--model.causal", "true", "--model.mlp_particles", "4", "--model.mlp_width", "3"},
                    Args{"--model.norm", "sphere"},
                    Args{"--model.d", "20", "--model.head_dim", "6", "--model.heads", "18", "--init.sigma_qk",
                         "0.3", "--init.sigma_v", "0.3"},
                    Args{"--depth.rk_type", "5dp", "--depth.steps_per_slice", "2", "--model.mlp_particles", "3",
                         "--model.mlp_width", "4", "--model.activation", "gelu"}));

// The NTK's rows go through the kernels' per-sequence path (add_vjp_rows).
TEST(MixedPrecisionNtk, GramAgreesWithDouble) {
  std::vector<double> gram[2];
  for (int mixed = 0; mixed < 2; ++mixed) {
    mft::Config config = small_problem({"--readout.dim", "2", "--model.mlp_particles", "3", "--model.mlp_width", "2"},
                                       mixed ? "mixed" : "double");
    mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, config, true);
    gram[mixed] = mft::ntk_spectrum(problem, "all").gram;
  }
  ASSERT_EQ(gram[0].size(), gram[1].size());
  double num = 0, den = 0;
  for (size_t i = 0; i < gram[0].size(); ++i) {
    num += (gram[1][i] - gram[0][i]) * (gram[1][i] - gram[0][i]);
    den += gram[0][i] * gram[0][i];
  }
  EXPECT_LT(std::sqrt(num / den), kGradientTolerance);
  EXPECT_GT(num, 0.0);
}

TEST(MixedPrecision, FloatExpAgreesWithStdExp) {
  std::vector<float> x, y;
  for (int i = 0; i <= 200000; ++i) x.push_back(-87.0f * static_cast<float>(i) / 200000.0f);
  for (int i = 0; i < 1000; ++i) x.push_back(-1e-6f * static_cast<float>(i));
  y.resize(x.size());
  mft::exp_nonpositive(x.data(), y.data(), static_cast<long long>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = std::exp(static_cast<double>(x[i]));
    worst = std::max(worst, std::fabs(y[i] - e) / e);
  }
  EXPECT_LT(worst, 4 * 1.1920929e-7) << "relative error against std::exp, in float ulps of 1";
  // Below the floor 0; -inf 0; a NaN stays a NaN; 0 gives 1.
  std::vector<float> edge = {-std::numeric_limits<float>::infinity(), -1e30f, -88.0f,
                             std::numeric_limits<float>::quiet_NaN(), 0.0f, -1e-30f, -0.5f};
  std::vector<float> out(edge.size());
  mft::exp_nonpositive(edge.data(), out.data(), static_cast<long long>(edge.size()));
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_TRUE(std::isnan(out[3]));
  EXPECT_EQ(out[4], 1.0f);
  EXPECT_EQ(out[5], 1.0f);
  EXPECT_NEAR(out[6], std::exp(-0.5), 2e-7);
}

} // namespace
