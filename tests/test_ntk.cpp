// The NTK Gram matrix (MODEL.md §7) against finite differences, its
// mean-field limit, and the log-sum-exp injectivity test with the closed
// forms of the families. Runs on any number of ranks.
#include "mft/runs/command_line.hpp"
#include "mft/analysis/cgf.hpp"
#include "mft/tasks/families.hpp"
#include "mft/core/linalg.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/analysis/ntk.hpp"
#include "mft/model/score_map.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <tuple>
#include <mpi.h>

#include <algorithm>
#include <cmath>

namespace {

using Args = std::vector<std::string>;

mft::Config tiny(std::vector<std::string> extra, const std::string &task = "families") {
  std::vector<std::string> args = {"--model.d", "2", "--model.head_dim", "2", "--model.heads", "3",
                                   "--model.slices", "2", "--data.task", task, "--data.sequences", "3",
                                   "--data.tokens", "4", "--init.sigma_v", "0.8",
                                   "--model.mlp_particles", "2", "--model.mlp_width", "2",
                                   "--model.activation", "gelu"};
  if (task == "families") args.insert(args.end(), {"--families.kind", "mixture"});
  args.insert(args.end(), extra.begin(), extra.end());
  return mft::parse_config(args);
}

// A part, and a variant of the model (vector outputs: rows (i, k), a Gram of
// N d_out square, on the gaussian task).
class NtkFiniteDifferences : public testing::TestWithParam<std::tuple<std::string, Args>> {};

TEST_P(NtkFiniteDifferences, GramIsMLTimesJJt) {
  const auto [part, variant] = GetParam();
  Args args = {"--readout.kind", part == "QK" ? "mean" : "query"};
  args.insert(args.end(), variant.begin(), variant.end());
  const bool vector = std::find(variant.begin(), variant.end(), "--readout.dim") != variant.end();
  mft::Config c = tiny(args, vector ? "gaussian" : "families");
  mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, c, true);
  const mft::NtkSpectrum K = mft::ntk_spectrum(problem, part);
  const long long N = K.N;

  // J by central differences of yhat, entry by entry of this rank's particles.
  mft::Particles &p = *problem.particles;
  std::vector<double> theta(p.local_size()), X1(problem.data.tokens.size());
  p.pack(theta.data());
  long long begin = 0, end = p.local_size();
  if (part != "all") std::tie(begin, end) = mft::test::ntk_part_range(p, part);
  ASSERT_LT(begin, end) << "no entries of part " << part;
  long long count = end - begin, most = 0;
  MPI_Allreduce(&count, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<double> gram(N * N, 0.0);
  const double h = 1e-5, L = 2.0;
  // One entry at a time over all ranks; every rank takes part in every solve.
  for (long long step = 0; step < most * size; ++step) {
    const long long k = step % most;
    std::vector<double> column(N);
    const bool mine = step / most == rank && k < count;
    for (double sign : {1.0, -1.0}) {
      std::vector<double> shifted = theta;
      if (mine) shifted[begin + k] += sign * h;
      p.unpack(shifted.data());
      problem.field->particles_changed();
      problem.solver->solve(problem.data.tokens.data(), X1.data());
      const std::vector<double> y = problem.readout->predict(problem.data, X1.data());
      ASSERT_EQ(static_cast<long long>(y.size()), N); // rows (i, k) of yhat
      for (long long i = 0; i < N; ++i) column[i] += sign * y[i] / (2 * h);
    }
    if (!mine) continue;
    const double scale = mft::test::time_scale_at(p, begin + k); // M L or M_f L
    for (long long i = 0; i < N; ++i)
      for (long long j = 0; j < N; ++j) gram[i * N + j] += scale * column[i] * column[j];
  }
  MPI_Allreduce(MPI_IN_PLACE, gram.data(), static_cast<int>(N * N), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double scale = 0;
  for (double g : gram) scale = std::max(scale, std::fabs(g));
  for (long long i = 0; i < N * N; ++i)
    EXPECT_NEAR(K.gram[i], gram[i], 1e-6 * scale) << part << " entry " << i;
  for (long long i = 0; i < N; ++i)
    for (long long j = 0; j < N; ++j) EXPECT_EQ(K.gram[i * N + j], K.gram[j * N + i]);
  EXPECT_GE(K.lambda_min(), -1e-12 * K.lambda_max()); // positive semi-definite
  EXPECT_GT(K.lambda_max(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Parts, NtkFiniteDifferences,
                         testing::Combine(testing::Values("V", "QK", "all"), testing::Values(Args{})));
// The mask and a vector readout; every registered score map's V and QK parts.
std::vector<std::tuple<std::string, Args>> ntk_variants() {
  std::vector<std::tuple<std::string, Args>> out = {{"all", {"--readout.dim", "2", "--model.causal", "true"}}};
  for (const std::string &name : mft::score_map_names()) {
    out.push_back({"V", {"--readout.dim", "2", "--model.attention", name}});
    out.push_back({"QK", {"--readout.dim", "2", "--model.attention", name, "--model.causal", "true"}});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Variants, NtkFiniteDifferences, testing::ValuesIn(ntk_variants()));

TEST(Ntk, HasAMeanFieldLimit) {
  // K_V = (M L) J J^T is an average over the M L particles of a per-particle
  // kernel, so at M and 4M heads from the same law its extreme eigenvalues
  // agree up to finite-M fluctuations. Measured over init.seed 1, 2, 3 at
  // this size (L = 4, mixture data): at M = 128 lambda_min spreads by about
  // 10 % and lambda_max by 3 %; at M = 512 by 6 % and 0.5 %. Here (seed 1,
  // M = 128 vs 512) they differ by 3.7 % and 2.6 %. The tolerance 0.2 is
  // twice the spread at M = 128; a wrong M L factor would make them differ
  // by a factor 4.
  auto spectrum = [](long long M) {
    mft::Config c = mft::parse_config({"--model.d", "2", "--model.head_dim", "2", "--model.heads",
                                       std::to_string(M), "--model.slices", "4", "--data.task",
                                       "families", "--families.kind", "mixture", "--data.sequences",
                                       "4", "--data.tokens", "32"});
    mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, c, true);
    return mft::ntk_spectrum(problem, "V");
  };
  const mft::NtkSpectrum a = spectrum(128), b = spectrum(512);
  EXPECT_NEAR(a.lambda_min() / b.lambda_min(), 1.0, 0.2);
  EXPECT_NEAR(a.lambda_max() / b.lambda_max(), 1.0, 0.2);
}

TEST(Cgf, TranslatesAndEqualCovariancesAreNotInjective) {
  // Lambda_{mu + c}(z) = Lambda_mu(z) + <c, z>: an affine difference.
  mft::TokenData data = mft::make_gaussian(3, 20, 2, 5);
  for (long long j = 0; j < 20; ++j) {
    data.sequence(1)[j * 2] = data.sequence(0)[j * 2] + 0.7;
    data.sequence(1)[j * 2 + 1] = data.sequence(0)[j * 2 + 1] - 0.3;
  }
  const std::vector<double> Z = mft::cgf_points(64, 2, 1.0, 3);
  EXPECT_LT(mft::empirical_cgf_margin(data, Z, 64).margin, 1e-10);

  // Two Gaussians with one covariance (closed form), and a third one.
  mft::Config c = mft::parse_config({"--model.d", "2", "--data.task", "families", "--families.kind",
                                     "gaussian-cov", "--data.sequences", "3", "--families.values",
                                     "0,0.5,1", "--families.variances", "0.7,0.7,1.3"});
  const auto members = mft::family_members(c);
  const mft::CgfMargin m = mft::cgf_margin(Z, 64, 2, 3, [&](long long i, const double *z) {
    return mft::population_cgf(members[i], z, 2);
  });
  EXPECT_LT(m.margin, 1e-10);
}

TEST(Cgf, TheFamiliesOfBAreInjective) {
  // Dependent columns leave singular values at rounding level (~1e-16 of the
  // largest); the weakest family here (cubes, radii 0.5..2, N = 4, radius 1.2)
  // measures about 1e-6. A margin above 1e-8 counts as injective: orders of
  // magnitude above rounding, two below the weakest family.
  const std::vector<double> Z = mft::cgf_points(256, 2, 1.2, 7);
  for (const char *kind : {"cube", "laplace", "mixture"}) {
    mft::Config c = mft::parse_config({"--model.d", "2", "--data.task", "families", "--families.kind",
                                       kind, "--data.sequences", "4", "--data.tokens", "128"});
    const auto members = mft::family_members(c);
    const double population = mft::cgf_margin(Z, 256, 2, 4, [&](long long i, const double *z) {
                                return mft::population_cgf(members[i], z, 2);
                              }).margin;
    EXPECT_GT(population, 1e-8) << kind;
    EXPECT_GT(mft::empirical_cgf_margin(mft::make_families(c), Z, 256).margin, 1e-8) << kind;
  }
  mft::Config c = mft::parse_config({"--model.d", "2", "--data.task", "families", "--families.kind",
                                     "discrete", "--data.sequences", "4", "--data.tokens", "16"});
  EXPECT_GT(mft::empirical_cgf_margin(mft::make_families(c), Z, 256).margin, 1e-8) << "discrete";
}

TEST(Cgf, EmpiricalLambdaApproachesTheClosedFormLikeOneOverSqrtN) {
  // The mean |Lambda_emp - Lambda| over members and points is a Monte Carlo
  // error: 16 times more tokens should divide it by about 4 (2 to 8 allowed).
  const std::vector<double> Z = mft::cgf_points(40, 2, 1.0, 11);
  for (const char *kind : {"cube", "laplace", "mixture", "gaussian-cov"}) {
    double err[2];
    int e = 0;
    for (long long n : {1000LL, 16000LL}) {
      mft::Config c = mft::parse_config({"--model.d", "2", "--data.task", "families", "--families.kind",
                                         kind, "--data.sequences", "4", "--data.tokens", std::to_string(n)});
      const auto members = mft::family_members(c);
      const mft::TokenData data = mft::make_families(c);
      double sum = 0;
      for (long long i = 0; i < 4; ++i)
        for (long long k = 0; k < 40; ++k)
          sum += std::fabs(mft::empirical_cgf(data.sequence(i), n, 2, Z.data() + 2 * k) -
                           mft::population_cgf(members[i], Z.data() + 2 * k, 2));
      err[e++] = sum / 160;
    }
    EXPECT_GT(err[0] / err[1], 2.0) << kind << ": " << err[0] << " -> " << err[1];
    EXPECT_LT(err[0] / err[1], 8.0) << kind << ": " << err[0] << " -> " << err[1];
  }
}

TEST(Linalg, EigenvaluesAndSingularValues) {
  const std::vector<double> A = {2, 1, 0, 1, 2, 0, 0, 0, 5};
  const auto w = mft::symmetric_eigenvalues(A, 3);
  EXPECT_NEAR(w[0], 1, 1e-14);
  EXPECT_NEAR(w[1], 3, 1e-14);
  EXPECT_NEAR(w[2], 5, 1e-14);
  const auto s = mft::singular_values({3, 0, 0, 0, -2, 0}, 2, 3); // 2 x 3
  EXPECT_NEAR(s[0], 3, 1e-14);
  EXPECT_NEAR(s[1], 2, 1e-14);
}

} // namespace
