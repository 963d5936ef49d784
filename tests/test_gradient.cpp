// The particle gradient from the adjoint in depth (MODEL.md §5): against
// central finite differences of R, and against backprop written plainly
// through the same Runge-Kutta scheme. Runs on any number of ranks.
#include "mft/runs/command_line.hpp"
#include "mft/runs/build_model.hpp"
#include "mft/train/objective.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

mft::Config small_config(const std::string &readout, const std::string &ts, long long k, bool mlp,
                         const std::string &activation = "gelu") {
  std::vector<std::string> args = {"--model.d", "3", "--model.head_dim", "2", "--model.heads", "3",
                                   "--model.slices", "2", "--data.task", "gaussian",
                                   "--data.sequences", "3", "--data.tokens", "4", "--init.sigma_qk",
                                   "0.8", "--init.sigma_v", "0.9", "--readout.kind", readout,
                                   "--depth.ts_type", ts, "--depth.steps_per_slice",
                                   std::to_string(k)};
  if (readout == "mean") args.insert(args.end(), {"--readout.weights", "0.3,-0.5,0.8"});
  if (mlp)
    args.insert(args.end(), {"--model.mlp_particles", "2", "--model.mlp_width", "3",
                             "--model.activation", activation, "--init.sigma_w1", "0.7",
                             "--init.sigma_w2", "0.6"});
  return mft::parse_config(args);
}

class FiniteDifferences : public testing::TestWithParam<std::tuple<std::string, std::string>> {};

// relu and huber-relu have kinks; no pre-activation of this problem lies
// within a finite-difference step of one.
TEST_P(FiniteDifferences, EveryParameterKindAndAToken) {
  const auto [readout, activation] = GetParam();
  mft::Config config = small_config(readout, "rk", 1, true, activation);
  mft::Model model = mft::build_model(MPI_COMM_WORLD, config, true);
  mft::Objective objective(MPI_COMM_WORLD, model, 0.0);
  mft::Particles &p = *model.particles;
  std::vector<double> theta(p.local_size());
  p.pack(theta.data());
  const std::vector<double> g = objective.at(theta.data()).dR;
  const std::vector<double> gx = objective.at(theta.data()).dX0;

  struct Kind {
    const char *name;
    long long offset, per, count, begin, M;
  };
  const Kind kinds[] = {
      {"Q", p.offset_Q(), p.heads.qk_size(), p.heads.own.count(), p.heads.own.begin, p.heads.M},
      {"K", p.offset_K(), p.heads.qk_size(), p.heads.own.count(), p.heads.own.begin, p.heads.M},
      {"V", p.offset_V(), p.heads.v_size(), p.heads.own.count(), p.heads.own.begin, p.heads.M},
      {"W1", p.offset_W1(), p.neurons.w_size(), p.neurons.own.count(), p.neurons.own.begin, p.neurons.M},
      {"W2", p.offset_W2(), p.neurons.w_size(), p.neurons.own.count(), p.neurons.own.begin, p.neurons.M}};
  const double h = 1e-4;
  for (const Kind &kind : kinds)
    for (long long l = 0; l < p.heads.L; ++l)
      for (long long m = 0; m < kind.M; ++m) {
        const long long e = (3 * l + 2 * m + 1) % kind.per;
        const bool mine = m >= kind.begin && m < kind.begin + kind.count;
        const long long i = kind.offset + (l * kind.count + (m - kind.begin)) * kind.per + e;
        std::vector<double> plus = theta, minus = theta;
        if (mine) {
          plus[i] += h;
          minus[i] -= h;
        }
        const double Rp = objective.at(plus.data()).risk, Rm = objective.at(minus.data()).risk;
        if (!mine) continue;
        const double fd = (Rp - Rm) / (2 * h);
        EXPECT_LE(std::fabs(fd - g[i]), 1e-5 * std::fabs(g[i]) + 1e-12)
            << kind.name << " slice " << l << " particle " << m << " entry " << e << ": adjoint "
            << g[i] << " vs finite differences " << fd;
      }

  // One token coordinate of X(0) per sequence.
  objective.at(theta.data());
  std::vector<double> X1(model.data.tokens.size());
  for (long long seq = 0; seq < model.data.N; ++seq) {
    const long long i = (seq * model.data.n + seq % model.data.n) * model.data.d + seq % model.data.d;
    mft::TokenData shifted = model.data;
    shifted.tokens[i] += h;
    model.solver->solve(shifted.tokens.data(), X1.data());
    const double Rp = model.readout->risk(model.data, X1.data());
    shifted.tokens[i] -= 2 * h;
    model.solver->solve(shifted.tokens.data(), X1.data());
    const double Rm = model.readout->risk(model.data, X1.data());
    const double fd = (Rp - Rm) / (2 * h);
    EXPECT_LE(std::fabs(fd - gx[i]), 1e-5 * std::fabs(gx[i]) + 1e-12)
        << "X(0) entry " << i << ": adjoint " << gx[i] << " vs finite differences " << fd;
  }
}

INSTANTIATE_TEST_SUITE_P(ReadoutsAndActivations, FiniteDifferences,
                         testing::Values(std::tuple{"query", "gelu"}, std::tuple{"mean", "gelu"},
                                         std::tuple{"query", "relu"}, std::tuple{"mean", "huber-relu"}));

// Backprop through the explicit RK scheme, plainly: forward stages kept, then
// the stages in reverse, with the field and its products from the reference
// kernels (no TS, no shells, no BLAS).
struct Tableau {
  std::vector<double> A, b;
  int s;
};

void plain_backprop(const mft::HeadParticles &all, const mft::TokenData &data, const Tableau &tab,
                    long long k, const std::vector<double> &a1_of_final_unused, std::vector<double> &dQ,
                    std::vector<double> &dK, std::vector<double> &dV, std::vector<double> &dX0,
                    double &risk, long long coord) {
  (void)a1_of_final_unused;
  const long long N = data.N, n = data.n, d = data.d, M = all.M, L = all.L, dh = all.d_h;
  const long long size = N * n * d, steps = L * k;
  const double h = 1.0 / static_cast<double>(steps), scale = 1.0 / static_cast<double>(M);
  auto field = [&](long long l, const std::vector<double> &Y) {
    std::vector<double> F(size, 0.0);
    for (long long i = 0; i < N; ++i)
      for (long long m = 0; m < M; ++m)
        mft::test::reference_head(all.q(l, m), all.k(l, m), all.v(l, m), dh, d, Y.data() + i * n * d,
                                  n, scale, F.data() + i * n * d);
    return F;
  };
  // Forward, keeping every stage state.
  std::vector<std::vector<std::vector<double>>> Ys(steps);
  std::vector<double> X = data.tokens;
  for (long long step = 0; step < steps; ++step) {
    const long long l = step / k;
    std::vector<std::vector<double>> Kst;
    for (int i = 0; i < tab.s; ++i) {
      std::vector<double> Y = X;
      for (int j = 0; j < i; ++j)
        for (long long q = 0; q < size; ++q) Y[q] += h * tab.A[i * tab.s + j] * Kst[j][q];
      Ys[step].push_back(Y);
      Kst.push_back(field(l, Y));
    }
    for (int i = 0; i < tab.s; ++i)
      for (long long q = 0; q < size; ++q) X[q] += h * tab.b[i] * Kst[i][q];
  }
  // Risk and a(1) for the query readout.
  std::vector<double> a(size, 0.0);
  risk = 0;
  for (long long i = 0; i < N; ++i) {
    const double e = X[(i * n + n - 1) * d + coord] - data.targets[i];
    risk += e * e / (2.0 * N);
    a[(i * n + n - 1) * d + coord] = e / N;
  }
  // Reverse.
  dQ.assign(all.Q.size(), 0.0);
  dK.assign(all.K.size(), 0.0);
  dV.assign(all.V.size(), 0.0);
  for (long long step = steps - 1; step >= 0; --step) {
    const long long l = step / k;
    std::vector<std::vector<double>> Ybar(tab.s, std::vector<double>(size, 0.0));
    for (int i = tab.s - 1; i >= 0; --i) {
      std::vector<double> Kbar(size);
      for (long long q = 0; q < size; ++q) {
        Kbar[q] = h * tab.b[i] * a[q];
        for (int j = i + 1; j < tab.s; ++j) Kbar[q] += h * tab.A[j * tab.s + i] * Ybar[j][q];
      }
      const std::vector<double> &Y = Ys[step][i];
      for (long long seq = 0; seq < N; ++seq)
        for (long long m = 0; m < M; ++m) {
          const long long qo = (l * M + m) * dh * d, vo = (l * M + m) * d * d;
          mft::test::reference_head_vjp(all.q(l, m), all.k(l, m), all.v(l, m), dh, d,
                                        Y.data() + seq * n * d, n, scale, Kbar.data() + seq * n * d,
                                        dQ.data() + qo, dK.data() + qo, dV.data() + vo,
                                        Ybar[i].data() + seq * n * d);
        }
    }
    for (int i = 0; i < tab.s; ++i)
      for (long long q = 0; q < size; ++q) a[q] += Ybar[i][q];
  }
  dX0 = a;
}

class PlainBackprop : public testing::TestWithParam<std::tuple<std::string, long long>> {};

TEST_P(PlainBackprop, AgreesWithTheAdjoint) {
  const auto [ts, k] = GetParam();
  mft::Config config = small_config("query", ts, k, false);
  mft::Model model = mft::build_model(MPI_COMM_WORLD, config, true);
  mft::Objective objective(MPI_COMM_WORLD, model, 0.0);
  mft::Particles &p = *model.particles;
  std::vector<double> theta(p.local_size());
  p.pack(theta.data());
  const mft::ParticleState &state = objective.at(theta.data());

  mft::HeadParticles all(p.heads.L, p.heads.M, p.heads.d_h, p.heads.d,
                         mft::HeadOwnership::block(p.heads.M, 0, 1));
  all.initialise(config.init.seed, config.init.sigma_qk, config.init.sigma_v);
  const Tableau tab = ts == "euler" ? Tableau{{0.0}, {1.0}, 1}
                                    : Tableau{{0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1, 0},
                                              {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6},
                                              4};
  std::vector<double> dQ, dK, dV, dX0;
  double risk = 0;
  plain_backprop(all, model.data, tab, k, {}, dQ, dK, dV, dX0, risk, config.readout_coord());
  EXPECT_NEAR(state.risk, risk, 1e-13 * risk);
  EXPECT_LT(mft::test::relative_error(state.dX0, dX0), 1e-11);

  // This rank's heads against the same heads of the plain gradient.
  const long long Ml = p.heads.own.count(), qk = p.heads.qk_size(), vv = p.heads.v_size();
  std::vector<double> mine, ref;
  for (const auto &[offset, per, full] : {std::tuple{p.offset_Q(), qk, &dQ}, std::tuple{p.offset_K(), qk, &dK},
                                          std::tuple{p.offset_V(), vv, &dV}})
    for (long long l = 0; l < p.heads.L; ++l)
      for (long long m = 0; m < Ml; ++m)
        for (long long e = 0; e < per; ++e) {
          mine.push_back(state.dR[offset + (l * Ml + m) * per + e]);
          ref.push_back((*full)[(l * p.heads.M + p.heads.own.begin + m) * per + e]);
        }
  if (!mine.empty()) EXPECT_LT(mft::test::relative_error(mine, ref), 1e-11);
}

INSTANTIATE_TEST_SUITE_P(Schemes, PlainBackprop,
                         testing::Combine(testing::Values("rk", "euler"), testing::Values(1LL, 3LL)));

} // namespace
