// The adjoint with checkpoints (depth.checkpoint_slices): the gradient, the
// cotangent of X(0) and the NTK's Gram the same bit for bit as with every
// step stored, for tableaux with and without first-same-as-last and several
// spacings; and the plan that auto chooses under a memory limit. Runs on
// any number of ranks.
#include "mft/analysis/ntk.hpp"
#include "mft/depth/depth.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/runs/command_line.hpp"
#include "mft/runs/memory.hpp"
#include "mft/train/objective.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <string>
#include <utility>
#include <tuple>
#include <vector>

namespace {

using Args = std::vector<std::string>;

// L = 5 slices (unless `extra` says), so every spacing below leaves a
// shorter last segment.
mft::Config five_slices(const Args &extra, long long checkpoint_slices) {
  return mft::test::config_with(
      {"--model.d", "3", "--model.head_dim", "2", "--model.heads", "3", "--data.task", "gaussian",
       "--model.mlp_particles", "2", "--model.mlp_width", "3", "--model.causal", "true", "--depth.checkpoint_slices",
       checkpoint_slices == mft::kDepthCheckpointsAuto ? "auto" : std::to_string(checkpoint_slices)},
      {{"--model.slices", "5"}, {"--data.sequences", "5"}, {"--data.tokens", "4"}}, extra);
}

mft::test::GradientAt gradient_of(const Args &extra, long long checkpoint_slices) {
  return mft::test::gradient_at(five_slices(extra, checkpoint_slices));
}

class Checkpoints : public testing::TestWithParam<std::tuple<Args, long long>> {};

TEST_P(Checkpoints, GradientIsTheStoredTrajectorysBitForBit) {
  const auto [scheme, spacing] = GetParam();
  const mft::test::GradientAt stored = gradient_of(scheme, 0), recomputed = gradient_of(scheme, spacing);
  ASSERT_EQ(stored.segments, 1);
  ASSERT_EQ(recomputed.segments, (5 + spacing - 1) / spacing) << "the checkpoints were not used";
  EXPECT_EQ(stored.risk, recomputed.risk);
  ASSERT_EQ(stored.dR.size(), recomputed.dR.size());
  for (size_t i = 0; i < stored.dR.size(); ++i)
    ASSERT_EQ(stored.dR[i], recomputed.dR[i]) << "dR/dtheta entry " << i << " differs";
  for (size_t i = 0; i < stored.dX0.size(); ++i)
    ASSERT_EQ(stored.dX0[i], recomputed.dX0[i]) << "dR/dX0 entry " << i << " differs";
}

// RK4 (the default), Dormand-Prince (FSAL, stages of weight 0) with two
// steps per slice, forward Euler with three, the sphere's token norm.
INSTANTIATE_TEST_SUITE_P(
    Schemes, Checkpoints,
    testing::Combine(testing::Values(Args{}, Args{"--depth.rk_type", "5dp", "--depth.steps_per_slice", "2"},
                                     Args{"--depth.ts_type", "euler", "--depth.steps_per_slice", "3"},
                                     Args{"--model.norm", "sphere"}),
                     testing::Values(1LL, 2LL, 4LL)));

TEST(Checkpoints, NtkGramIsTheStoredTrajectorysBitForBit) {
  std::vector<double> gram[2];
  for (long long spacing : {0LL, 2LL}) {
    mft::Config config = five_slices({"--readout.dim", "2"}, spacing);
    mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, config, true);
    gram[spacing == 0 ? 0 : 1] = mft::ntk_spectrum(problem, "all").gram;
  }
  ASSERT_EQ(gram[0].size(), gram[1].size());
  for (size_t i = 0; i < gram[0].size(); ++i) ASSERT_EQ(gram[0][i], gram[1][i]) << "Gram entry " << i;
}

// auto: every step while the run fits; under a tighter limit the spacing
// that fits with the fewest slices recomputed; under one too tight for
// any, the least memory.
TEST(Checkpoints, AutoChoosesTheLeastRecomputationThatFits) {
  mft::Config config = five_slices({"--model.slices", "12", "--data.tokens", "64", "--data.sequences", "64"},
                                   mft::kDepthCheckpointsAuto);
  config = mft::resolve_config(MPI_COMM_WORLD, config, mft::Job::Train);
  const long long N = config.data.sequences, n = config.data.tokens, L = 12;
  const auto need = [&](long long spacing) {
    mft::Config c = config;
    c.depth.checkpoint_slices = spacing;
    return mft::estimate_memory({}, c, N, n, 1, 1, mft::Job::Train, "data.sequences", "64").total;
  };
  const auto plan = [&](long double bytes) {
    const mft::MemoryLimit limit{bytes, "a test"};
    return mft::plan_depth_checkpoints(limit, config, N, n, 1, 1, mft::Job::Train, "data.sequences", "64");
  };
  // Slices recomputed: all but the last segment's.
  EXPECT_EQ(mft::depth_recomputed_slices(12, 0), 0);
  EXPECT_EQ(mft::depth_recomputed_slices(12, 12), 0);
  EXPECT_EQ(mft::depth_recomputed_slices(12, 11), 11); // segments 11 + 1
  EXPECT_EQ(mft::depth_recomputed_slices(12, 6), 6);
  EXPECT_EQ(mft::depth_recomputed_slices(12, 5), 10); // 5 + 5 + 2
  EXPECT_EQ(mft::depth_recomputed_slices(12, 1), 11);
  const long double full = need(0);
  EXPECT_EQ(plan(0), 0) << "no limit known";
  EXPECT_EQ(plan(full), 0);
  EXPECT_EQ(plan(full * 2), 0);
  // Just below every step: 6 slices a segment (6 recomputed, less memory
  // than 7 to 11, which recompute 7 to 11), not the largest spacing.
  for (long long c = 6; c < 11; ++c) ASSERT_LT(need(c), need(c + 1)) << "spacing " << c;
  EXPECT_EQ(plan(full - 1), 6);
  EXPECT_EQ(plan(need(6)), 6);
  // Below 6's need: 4 (three segments, 8 recomputed) where it fits.
  ASSERT_LT(need(4), need(6));
  EXPECT_EQ(plan((need(4) + need(6)) / 2), 4);
  // The choice recomputes the least of all that fit, whatever the limit.
  for (long double bytes : {need(1), need(2), need(3), need(4), need(5)}) {
    const long long chosen = plan(bytes);
    ASSERT_LE(need(chosen), bytes);
    for (long long c = 1; c < L; ++c)
      if (need(c) <= bytes)
        EXPECT_LE(mft::depth_recomputed_slices(L, chosen), mft::depth_recomputed_slices(L, c))
            << "limit " << static_cast<double>(bytes) << ": chose " << chosen << ", " << c << " fits";
  }
  EXPECT_EQ(config.depth.checkpoint_slices, mft::kDepthCheckpointsAuto) << "the plan leaves the configuration";
  // Too tight for any: the spacing of least memory, which require_fits then refuses.
  long long least = 1;
  for (long long c = 2; c < L; ++c)
    if (need(c) < need(least)) least = c;
  EXPECT_EQ(plan(1e6), least);
  // A forward job keeps no trajectory, and a configured spacing stands.
  const mft::MemoryLimit tight{1e6, "a test"};
  EXPECT_EQ(mft::plan_depth_checkpoints(tight, config, N, n, 1, 1, mft::Job::Forward, "data.sequences", "64"), 0);
  config.depth.checkpoint_slices = 3;
  EXPECT_EQ(mft::plan_depth_checkpoints(tight, config, N, n, 1, 1, mft::Job::Train, "data.sequences", "64"), 3);
}

} // namespace
