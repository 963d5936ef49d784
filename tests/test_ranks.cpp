// Rank invariance: the same forward run on 1, 2 and 3 ranks (sub-communicators
// of a 3-rank job) gives the same risk and final tokens up to reduction
// rounding. Run with 3 ranks.
#include "mft/runs/command_line.hpp"
#include "mft/runs/forward_run.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/analysis/ntk.hpp"
#include "mft/core/error.hpp"
#include "mft/train/objective.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

namespace {

struct Outcome {
  double risk;
  std::vector<double> tokens;
};

// Runs `config` on the first `ranks` ranks of the world; the result is
// returned on world rank 0 (which takes part in every run).
Outcome run_on(int ranks, const mft::Config &config) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, rank < ranks ? 0 : MPI_UNDEFINED, rank, &comm);
  Outcome out{0.0, {}};
  if (comm != MPI_COMM_NULL) {
    const mft::RunInfo info = mft::make_run_info(comm, 0, nullptr);
    const mft::ForwardResult r = mft::run_forward(comm, config, info, nullptr, false);
    out = {r.risk, r.tokens_final};
    MPI_Comm_free(&comm);
  }
  return out;
}

// tolerance: reduction rounding in double; a mixed run's kernels round each
// rank's sum over its own heads in float.
void expect_rank_invariant(const mft::Config &config, double tolerance = 1e-12) {
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ASSERT_EQ(size, 3) << "run this test with 3 ranks";
  const Outcome one = run_on(1, config), two = run_on(2, config), three = run_on(3, config);
  if (rank != 0) return;
  EXPECT_NEAR(two.risk, one.risk, tolerance * std::fabs(one.risk));
  EXPECT_NEAR(three.risk, one.risk, tolerance * std::fabs(one.risk));
  EXPECT_LT(mft::test::relative_error(two.tokens, one.tokens), tolerance);
  EXPECT_LT(mft::test::relative_error(three.tokens, one.tokens), tolerance);
  EXPECT_GT(one.risk, 0.0);
}

TEST(Ranks, ForwardAgreesOnOneTwoThreeRanks) {
  mft::Config c = mft::parse_config({"--model.heads", "7", "--model.slices", "4", "--data.sequences",
                                     "9", "--data.tokens", "6", "--model.d", "5"});
  expect_rank_invariant(c);
}

// Mixed precision: 1, 2, 3 ranks within float rounding of each other
// (measured about 1e-8), with the MLP and the causal mask.
TEST(Ranks, MixedPrecisionForwardAgreesOnOneTwoThreeRanks) {
  mft::Config c = mft::parse_config({"--model.heads", "7", "--model.slices", "4", "--data.sequences", "9",
                                     "--data.tokens", "6", "--model.d", "5", "--model.mlp_particles", "5",
                                     "--model.mlp_width", "3", "--model.causal", "true", "--run.precision", "mixed"});
  expect_rank_invariant(c, 1e-6);
}

TEST(Ranks, ARankWithoutHeads) {
  // M = 2 on 3 ranks: the third rank owns no head and still takes part.
  mft::Config c = mft::parse_config({"--model.heads", "2", "--model.slices", "3", "--data.task",
                                     "gaussian", "--readout.kind", "mean", "--depth.ts_type", "ssp"});
  expect_rank_invariant(c);
}

TEST(Ranks, NtkGramAgreesOnOneTwoThreeRanks) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<std::vector<double>> grams;
  std::vector<std::pair<int, int>> ran;
  // 1, 2, 3 ranks on one sequence group, then 3 groups of one rank and a
  // 1 x 2 grid (those that fit in the world): the Jacobian's rows are
  // gathered across the groups.
  const std::pair<int, int> grids[] = {{1, 1}, {2, 1}, {3, 1}, {3, 3}, {2, 2}};
  for (const auto &[ranks, groups] : grids) {
    if (ranks > size) continue;
    ran.push_back({ranks, groups});
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, rank < ranks ? 0 : MPI_UNDEFINED, rank, &comm);
    std::vector<double> gram;
    if (comm != MPI_COMM_NULL) {
      mft::Config c = mft::parse_config({"--model.heads", "5", "--model.slices", "2", "--model.d", "3",
                                         "--data.task", "families", "--families.kind", "cube",
                                         "--data.sequences", "4", "--data.tokens", "6",
                                         "--model.mlp_particles", "2", "--model.mlp_width", "3",
                                         "--parallel.sequence_groups", std::to_string(groups)});
      mft::Problem problem = mft::build_problem(comm, c, true);
      gram = mft::ntk_spectrum(problem, "all").gram;
      MPI_Comm_free(&comm);
    }
    grams.push_back(gram);
  }
  if (rank != 0) return;
  for (size_t k = 1; k < grams.size(); ++k)
    EXPECT_LT(mft::test::relative_error(grams[k], grams[0]), 1e-12) << ran[k].first << " ranks, "
                                                                    << ran[k].second << " groups";
}

TEST(Ranks, GroupsWithDifferentParticlesAreRefused) {
  // Two groups of one rank; the second one's particles drift by 1e-3: every
  // rank stops with an Error (none waits for the others).
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &comm);
  if (comm == MPI_COMM_NULL) return;
  mft::Config c = mft::parse_config({"--model.heads", "3", "--model.slices", "2", "--model.d", "3",
                                     "--data.sequences", "4", "--data.tokens", "3",
                                     "--parallel.sequence_groups", "2"});
  {
    mft::Problem problem = mft::build_problem(comm, c, true);
    mft::Objective objective(problem);
    std::vector<double> theta(static_cast<size_t>(objective.local_size()));
    problem.particles->pack(theta.data());
    EXPECT_NO_THROW(objective.at(theta.data()));
    if (rank == 1) theta[0] += 1e-3;
    EXPECT_THROW(objective.at(theta.data()), mft::Error);
  }
  MPI_Comm_free(&comm);
}

} // namespace
