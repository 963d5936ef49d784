// The training methods of MODEL.md §10 beside the flow: minibatches, Adam
// against a plain implementation written here, the Langevin noise and its
// Ornstein-Uhlenbeck limit. Runs on any number of ranks.
#include "mft/core/error.hpp"
#include "mft/core/rng.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/runs/command_line.hpp"
#include "mft/runs/train_run.hpp"
#include "mft/train/langevin.hpp"
#include "mft/train/minibatch.hpp"
#include "mft/train/objective.hpp"
#include "mft/train/optimizer.hpp"
#include "mft/train/step_gradient.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

namespace {

// A small teacher problem with an MLP (two species).
mft::Config method_config(std::vector<std::string> extra) {
  std::vector<std::string> args = {"--model.d", "4", "--model.head_dim", "3", "--model.heads", "5",
                                   "--model.slices", "3", "--model.mlp_particles", "4", "--model.mlp_width",
                                   "3", "--data.task", "teacher", "--data.seed", "7", "--data.sequences",
                                   "8", "--data.tokens", "5", "--train.lambda", "0.2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return mft::parse_config(args);
}

mft::TrainResult train(mft::Config c) {
  return mft::run_train(MPI_COMM_WORLD, c, mft::make_run_info(MPI_COMM_WORLD, 0, nullptr), nullptr, false);
}

std::vector<double> initial_theta(const mft::Config &c) {
  const mft::Particles p = mft::make_particles(c, MPI_COMM_WORLD, c.init.seed, c.model.heads);
  std::vector<double> theta(p.local_size());
  p.pack(theta.data());
  return theta;
}

// G = (M L) dR/dtheta + lambda theta (M_f L for neurons) at theta, written plainly.
std::vector<double> plain_G(mft::Objective &objective, const mft::Particles &p, const std::vector<double> &theta,
                            double lambda) {
  const std::vector<double> dR = objective.at(theta.data()).dR;
  std::vector<double> G(theta.size());
  for (size_t i = 0; i < theta.size(); ++i) {
    const double scale = mft::test::time_scale_at(p, static_cast<long long>(i));
    G[i] = scale * dR[i] + lambda * theta[i];
  }
  return G;
}

bool same_bits(const std::vector<double> &a, const std::vector<double> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(Minibatch, EverySequenceOncePerPassWhenBDividesN) {
  const long long N = 12, b = 4;
  for (long long pass = 0; pass < 3; ++pass) {
    std::multiset<long long> seen;
    for (long long j = 0; j < N / b; ++j) {
      const std::vector<long long> batch = mft::minibatch_of_step(5, pass * (N / b) + j, N, b);
      ASSERT_EQ(static_cast<long long>(batch.size()), b);
      EXPECT_TRUE(std::is_sorted(batch.begin(), batch.end()));
      seen.insert(batch.begin(), batch.end());
    }
    for (long long i = 0; i < N; ++i) EXPECT_EQ(seen.count(i), 1u) << "sequence " << i << ", pass " << pass;
  }
  // Passes are shuffled anew, and the stream is the seed's.
  EXPECT_NE(mft::minibatch_of_step(5, 0, N, b), mft::minibatch_of_step(5, 3, N, b));
  EXPECT_NE(mft::minibatch_of_step(5, 0, N, b), mft::minibatch_of_step(6, 0, N, b));
  EXPECT_EQ(mft::minibatch_of_step(5, 7, N, b), mft::minibatch_of_step(5, 7, N, b));
}

TEST(Minibatch, AtMostOncePerPassOtherwiseAndAllAtBEqualsN) {
  const long long N = 10, b = 3; // 3 steps per pass, one sequence left over
  std::multiset<long long> seen;
  for (long long step = 0; step < 3; ++step) {
    const std::vector<long long> batch = mft::minibatch_of_step(1, step, N, b);
    seen.insert(batch.begin(), batch.end());
  }
  EXPECT_EQ(seen.size(), 9u);
  for (long long i = 0; i < N; ++i) EXPECT_LE(seen.count(i), 1u);
  std::vector<long long> all(N);
  for (long long i = 0; i < N; ++i) all[i] = i;
  EXPECT_EQ(mft::minibatch_of_step(1, 4, N, N), all);
}

TEST(Optimizers, EveryMethodTheConfigAcceptsIsRegistered) {
  for (const std::string &name : mft::optimizer_names()) EXPECT_NO_THROW(method_config({"--train.method", name}));
  try {
    method_config({"--train.method", "no-such-method"});
    FAIL() << "no error";
  } catch (const mft::InputError &e) {
    EXPECT_EQ(std::string(e.what()),
              "train.method = no-such-method: must be one of " + mft::comma_list(mft::optimizer_names()));
  }
}

// Every registered optimiser keeps the state its entry declares (what the
// run file, a restart's checks and the memory estimate go by), and a step
// leaves it finite and the particles moved.
class EveryOptimizer : public testing::TestWithParam<std::string> {};

TEST_P(EveryOptimizer, KeepsTheStateItDeclares) {
  mft::Config c = method_config({"--train.method", GetParam()});
  mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, c, true);
  mft::StepGradient gradient(problem, c);
  const std::unique_ptr<mft::Optimizer> optimizer = mft::make_optimizer(c, gradient);
  const mft::OptimizerStateLayout layout = mft::optimizer_state_layout(GetParam());
  const mft::OptimizerState state = optimizer->state();
  EXPECT_EQ(state.counter != nullptr, layout.counter);
  ASSERT_EQ(state.arrays.size(), layout.arrays.size());
  for (size_t k = 0; k < layout.arrays.size(); ++k) {
    EXPECT_EQ(state.arrays[k].first, layout.arrays[k]);
    EXPECT_EQ(static_cast<long long>(state.arrays[k].second->size()), gradient.local_size());
  }
  std::vector<double> theta(static_cast<size_t>(gradient.local_size())), before;
  problem.particles->pack(theta.data());
  before = theta;
  optimizer->step(0, theta.data());
  double moved = 0;
  for (size_t i = 0; i < theta.size(); ++i) moved = std::max(moved, std::fabs(theta[i] - before[i]));
  MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_GT(moved, 0.0);
  for (const auto &[name, values] : state.arrays)
    for (double v : *values) ASSERT_TRUE(std::isfinite(v)) << name;
  EXPECT_FALSE(optimizer->describe().empty());
}

INSTANTIATE_TEST_SUITE_P(Registered, EveryOptimizer, testing::ValuesIn(mft::optimizer_names()));

TEST(Optimizers, SgdWithTheFullBatchIsTheEulerFlowBitForBit) {
  const mft::TrainResult flow = train(method_config({"--train.steps", "4", "--train.dtau", "0.3"}));
  const mft::TrainResult sgd = train(method_config(
      {"--train.steps", "4", "--train.dtau", "0.3", "--train.method", "sgd", "--train.batch", "8"}));
  EXPECT_TRUE(same_bits(flow.theta_final, sgd.theta_final));
  EXPECT_TRUE(same_bits(flow.risks, sgd.risks));
  // A smaller batch takes other steps.
  const mft::TrainResult small = train(method_config(
      {"--train.steps", "4", "--train.dtau", "0.3", "--train.method", "sgd", "--train.batch", "2"}));
  EXPECT_GT(mft::test::relative_error(small.theta_final, flow.theta_final), 1e-6);
}

TEST(Optimizers, AdamThreeStepsEqualAPlainImplementation) {
  const double dtau = 0.01, lambda = 0.2, beta1 = 0.8, beta2 = 0.95, eps = 1e-3;
  mft::Config c = method_config({"--train.method", "adam", "--train.steps", "3", "--train.dtau", "0.01",
                                 "--train.beta1", "0.8", "--train.beta2", "0.95", "--train.eps", "1e-3"});
  const mft::TrainResult run = train(c);

  mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, c, true);
  mft::Objective objective(problem);
  std::vector<double> theta = initial_theta(c), m(theta.size(), 0.0), v(theta.size(), 0.0);
  for (int t = 1; t <= 3; ++t) {
    const std::vector<double> G = plain_G(objective, *problem.particles, theta, lambda);
    for (size_t i = 0; i < theta.size(); ++i) {
      m[i] = beta1 * m[i] + (1 - beta1) * G[i];
      v[i] = beta2 * v[i] + (1 - beta2) * G[i] * G[i];
      const double m_hat = m[i] / (1 - std::pow(beta1, t)), v_hat = v[i] / (1 - std::pow(beta2, t));
      theta[i] -= dtau * m_hat / (std::sqrt(v_hat) + eps);
    }
  }
  EXPECT_LT(mft::test::relative_error(run.theta_final, theta), 1e-12);
  EXPECT_GT(mft::test::relative_error(run.theta_final, initial_theta(c)), 1e-4); // it moved
}

TEST(Optimizers, AdamsFirstStepIsTheBiasCorrectedSign) {
  // t = 1: m_hat = G and v_hat = G^2, so theta_1 = theta_0 - dtau G / (|G| + eps)
  // whatever beta1, beta2; without the correction the step would be
  // (1 - beta1) / sqrt(1 - beta2) = 0.79 times as long here.
  const double dtau = 0.05, eps = 1e-8;
  mft::Config c = method_config({"--train.method", "adam", "--train.steps", "1", "--train.dtau", "0.05",
                                 "--train.beta1", "0.5", "--train.beta2", "0.6"});
  const mft::TrainResult run = train(c);
  mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, c, true);
  mft::Objective objective(problem);
  const std::vector<double> theta0 = initial_theta(c);
  const std::vector<double> G = plain_G(objective, *problem.particles, theta0, 0.2);
  double longest = 0;
  for (size_t i = 0; i < theta0.size(); ++i) {
    const double step = run.theta_final[i] - theta0[i];
    ASSERT_NEAR(step, -dtau * G[i] / (std::fabs(G[i]) + eps), 1e-13) << "entry " << i;
    longest = std::max(longest, std::fabs(step));
  }
  if (!theta0.empty()) EXPECT_NEAR(longest, dtau, 1e-6);
}

TEST(Optimizers, LangevinAtZeroTemperatureIsTheFlow) {
  const mft::TrainResult flow = train(method_config({"--train.steps", "3"}));
  const mft::TrainResult cold = train(method_config({"--train.steps", "3", "--train.temperature", "0"}));
  const mft::TrainResult warm = train(method_config({"--train.steps", "3", "--train.temperature", "1e-4"}));
  EXPECT_TRUE(same_bits(flow.theta_final, cold.theta_final));
  EXPECT_GT(mft::test::relative_error(warm.theta_final, flow.theta_final), 1e-4);
}

TEST(Optimizers, LangevinNoiseBelongsToTheParticleNotTheRank) {
  // The noise of particle (l, m) is the same whether one rank owns all
  // particles or three share them.
  const mft::Config c = method_config({});
  mft::Particles whole = mft::particle_layout(c.model, c.model.heads, 0, 1);
  std::vector<double> all(whole.local_size(), 0.0);
  mft::add_langevin_noise(whole, 3, 17, 1.0, all.data());
  whole.unpack(all.data());
  for (int r = 0; r < 3; ++r) {
    mft::Particles part = mft::particle_layout(c.model, c.model.heads, r, 3);
    std::vector<double> mine(part.local_size(), 0.0);
    mft::add_langevin_noise(part, 3, 17, 1.0, mine.data());
    part.unpack(mine.data());
    const std::vector<mft::ParticleSpecies *> a = whole.species(), b = part.species();
    for (size_t s = 0; s < a.size(); ++s)
      for (size_t k = 0; k < a[s]->matrices().size(); ++k)
        for (long long l = 0; l < c.model.slices; ++l)
          for (long long m = b[s]->own.begin; m < b[s]->own.end; ++m)
            for (long long i = 0; i < a[s]->matrices()[k].size(); ++i)
              ASSERT_EQ(b[s]->at(k, l, m - b[s]->own.begin)[i], a[s]->at(k, l, m)[i])
                  << a[s]->matrices()[k].name << " of slice " << l << ", particle " << m << ", rank " << r;
  }
  // Another step draws other numbers.
  std::vector<double> next(whole.local_size(), 0.0);
  mft::add_langevin_noise(whole, 3, 18, 1.0, next.data());
  EXPECT_NE(next, all);
}

TEST(Optimizers, LangevinWithoutARiskIsAnOrnsteinUhlenbeckProcessOfVarianceTOverLambda) {
  // readout.weights = 0: yhat = 0 whatever the particles, so dR/dtheta = 0
  // and every coordinate follows theta += -dtau lambda theta + sqrt(2 T dtau) xi,
  // whose stationary variance is T / (lambda (1 - lambda dtau / 2)) -> T / lambda.
  const double T = 0.02, lambda = 1.0, dtau = 0.01;
  const long long steps = 600; // (1 - lambda dtau)^(2 steps) = 6e-6 of the initial variance is left
  mft::Config c = mft::parse_config({"--model.d", "4", "--model.head_dim", "3", "--model.heads", "40",
                                     "--model.slices", "4", "--data.task", "gaussian", "--data.sequences", "2",
                                     "--data.tokens", "2", "--readout.kind", "mean", "--readout.weights",
                                     "0,0,0,0", "--train.lambda", "1", "--train.dtau", "0.01",
                                     "--train.temperature", "0.02", "--train.steps", std::to_string(steps)});
  const mft::TrainResult run = train(c);
  for (double R : run.risks) ASSERT_EQ(R, run.risks.front()); // the risk is switched off
  double sums[3] = {0, 0, static_cast<double>(run.theta_final.size())};
  for (double x : run.theta_final) sums[0] += x, sums[1] += x * x;
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double n = sums[2], mean = sums[0] / n, variance = sums[1] / n;
  const double stationary = T / (lambda * (1 - lambda * dtau / 2));
  // 6400 independent coordinates: the variance estimate's relative standard
  // error is sqrt(2 / 6400) = 1.8 %; 4.5 of them.
  const double sampling = std::sqrt(2.0 / n);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("Ornstein-Uhlenbeck: variance %.5f, stationary %.5f, T/lambda %.5f, %.0f coordinates, mean %.2e\n",
                variance, stationary, T / lambda, n, mean);
  EXPECT_NEAR(variance / stationary, 1.0, 4.5 * sampling) << "variance " << variance << ", T/lambda " << T / lambda;
  EXPECT_NEAR(variance / (T / lambda), 1.0, 4.5 * sampling + lambda * dtau);
  EXPECT_NEAR(mean, 0.0, 4.5 * std::sqrt(stationary / n));
}

} // namespace
