// The particle gradient from the adjoint in depth (MODEL.md §5): against
// central finite differences of R, and against backprop written plainly
// through the same Runge-Kutta scheme. Runs on any number of ranks.
#include "mft/core/registry.hpp"
#include "mft/runs/command_line.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/model/score_map.hpp"
#include "mft/train/objective.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

using Args = std::vector<std::string>;

// d = 3, d_h = 2, M = 3, L = 2, N = 3, n = 4; `variant`: further keys (score
// map, mask, readout.dim, loss).
mft::Config small_config(const std::string &readout, const std::string &ts, long long k, bool mlp,
                         const std::string &activation = "gelu", const Args &variant = {}) {
  std::vector<std::string> args = {"--model.d", "3", "--model.head_dim", "2", "--model.heads", "3",
                                   "--model.slices", "2", "--data.task", "gaussian",
                                   "--data.sequences", "3", "--data.tokens", "4", "--init.sigma_qk",
                                   "0.8", "--init.sigma_v", "0.9", "--readout.kind", readout,
                                   "--depth.ts_type", ts, "--depth.steps_per_slice",
                                   std::to_string(k)};
  // A score map whose weights grow with the scores makes the field cubic in
  // the tokens: smaller scores and values keep the depth flow far from its
  // blow-up.
  const auto map = std::find(variant.begin(), variant.end(), "--model.attention");
  if (map != variant.end() && !mft::make_score_map(*(map + 1), false)->bounded()) {
    args[15] = "0.4";
    args[17] = "0.6";
  }
  const bool vector = std::find(variant.begin(), variant.end(), "--readout.dim") != variant.end();
  if (readout == "mean")
    args.insert(args.end(), {"--readout.weights", vector ? "0.3,-0.5,0.8,0.1,0.7,-0.2,-0.6,0.4,0.9"
                                                         : "0.3,-0.5,0.8"});
  args.insert(args.end(), variant.begin(), variant.end());
  if (mlp)
    args.insert(args.end(), {"--model.mlp_particles", "2", "--model.mlp_width", "3",
                             "--model.activation", activation, "--init.sigma_w1", "0.7",
                             "--init.sigma_w2", "0.6"});
  return mft::parse_config(args);
}

// R of the model's readout and loss at final tokens X1.
double risk_at(const mft::Problem &problem, const std::vector<double> &X1) {
  const mft::TokenData &data = problem.data;
  return problem.loss->risk(problem.readout->predict(data, X1.data()), data.targets, data.N, data.d_out,
                          nullptr);
}

class FiniteDifferences : public testing::TestWithParam<std::tuple<std::string, std::string, Args>> {};

// relu and huber-relu have kinks, and so has the relu score map; no
// pre-activation or score of this problem lies within a finite-difference
// step of one.
TEST_P(FiniteDifferences, EveryParameterKindAndAToken) {
  const auto [readout, activation, variant] = GetParam();
  mft::Config config = small_config(readout, "rk", 1, true, activation, variant);
  mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, config, true);
  mft::Objective objective(problem);
  mft::Particles &p = *problem.particles;
  std::vector<double> theta(p.local_size());
  p.pack(theta.data());
  const std::vector<double> g = objective.at(theta.data()).dR;
  const std::vector<double> gx = objective.at(theta.data()).dX0;

  // Every matrix of every species (its dataset's name, where it starts in
  // the flat vector, its size and this rank's block of its particles).
  struct Kind {
    std::string name;
    long long offset, per, count, begin, M;
  };
  std::vector<Kind> kinds;
  for (const mft::ParticleSpecies *s : p.species())
    for (const mft::ParticleMatrix &m : s->matrices())
      kinds.push_back({m.name, p.offset(m.name), m.size(), s->own.count(), s->own.begin, s->M});
  ASSERT_EQ(p.species().size(), 2u) << "the problem has heads and MLP neurons";
  const double h = 1e-4;
  for (const Kind &kind : kinds)
    for (long long l = 0; l < p.slices(); ++l)
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
  std::vector<double> X1(problem.data.tokens.size());
  for (long long seq = 0; seq < problem.data.N; ++seq) {
    const long long i = (seq * problem.data.n + seq % problem.data.n) * problem.data.d + seq % problem.data.d;
    mft::TokenData shifted = problem.data;
    shifted.tokens[i] += h;
    problem.solver->solve(shifted.tokens.data(), X1.data());
    const double Rp = risk_at(problem, X1);
    shifted.tokens[i] -= 2 * h;
    problem.solver->solve(shifted.tokens.data(), X1.data());
    const double Rm = risk_at(problem, X1);
    const double fd = (Rp - Rm) / (2 * h);
    EXPECT_LE(std::fabs(fd - gx[i]), 1e-5 * std::fabs(gx[i]) + 1e-12)
        << "X(0) entry " << i << ": adjoint " << gx[i] << " vs finite differences " << fd;
  }
}

INSTANTIATE_TEST_SUITE_P(ReadoutsAndActivations, FiniteDifferences,
                         testing::Values(std::tuple{"query", "gelu", Args{}}, std::tuple{"mean", "gelu", Args{}},
                                         std::tuple{"query", "relu", Args{}},
                                         std::tuple{"mean", "huber-relu", Args{}}));

// The variants of MODEL.md §10, each alone and together: every registered
// score map alone, with the mask, and with the mask, a vector readout and
// the cross-entropy loss (the map alone with the query readout, the others
// with the mean one).
const Args kCausal = {"--model.causal", "true"}, kVector = {"--readout.dim", "3"},
           kCrossEntropy = {"--readout.dim", "3", "--loss.kind", "cross-entropy"};

std::vector<Args> score_map_variants() {
  std::vector<Args> out;
  for (const std::string &name : mft::score_map_names()) {
    const Args map = {"--model.attention", name};
    out.push_back(map);
    out.push_back({"--model.attention", name, "--model.causal", "true"});
    out.push_back({"--model.attention", name, "--model.causal", "true", "--readout.dim", "3", "--loss.kind",
                   "cross-entropy"});
  }
  return out;
}

// ... and every registered loss with three outputs ...
std::vector<std::tuple<std::string, std::string, Args>> variants_of_the_field() {
  std::vector<std::tuple<std::string, std::string, Args>> out = {
      {"query", "gelu", kCausal}, {"query", "gelu", kVector}, {"mean", "gelu", kVector}};
  for (const mft::RegistryEntry &loss : mft::loss_entries())
    out.push_back({"query", "gelu", {"--readout.dim", "3", "--loss.kind", loss.name}});
  // ... and every token norm, with the mask (the token's gradient through X(0)'s norm).
  for (const mft::RegistryEntry &norm : mft::norm_entries())
    out.push_back({"mean", "gelu", {"--model.norm", norm.name, "--model.causal", "true"}});
  const std::vector<Args> maps = score_map_variants();
  for (size_t i = 0; i < maps.size(); ++i) out.push_back({i % 3 ? "mean" : "query", "gelu", maps[i]});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Variants, FiniteDifferences, testing::ValuesIn(variants_of_the_field()));

// Backprop through the explicit RK scheme, plainly: forward stages kept, then
// the stages in reverse, with the field and its products from the reference
// kernels (no TS, no shells, no BLAS).
struct Tableau {
  std::vector<double> A, b;
  int s;
};

// The readout and loss of `config`, plainly: R and a(1) = dR/dX(1) from X(1)
// (the query and mean readouts, the squared and cross-entropy losses: the
// plain backprop is written for those).
double plain_risk(const mft::Config &config, const mft::TokenData &data, const std::vector<double> &X,
                  std::vector<double> &a) {
  const long long N = data.N, n = data.n, d = data.d, d_out = config.readout.dim;
  const long long c = config.readout_coord();
  const std::vector<double> W = config.readout_weights();
  const bool query = config.readout.kind == "query";
  EXPECT_TRUE(query || config.readout.kind == "mean") << "plain_risk knows no readout " << config.readout.kind;
  EXPECT_TRUE(config.loss.kind == "squared" || config.loss.kind == "cross-entropy")
      << "plain_risk knows no loss " << config.loss.kind;
  double risk = 0;
  a.assign(X.size(), 0.0);
  for (long long i = 0; i < N; ++i) {
    std::vector<double> yhat(d_out, 0.0), g(d_out);
    for (long long o = 0; o < d_out; ++o) {
      if (query) {
        yhat[o] = X[(i * n + n - 1) * d + c + o];
        continue;
      }
      for (long long j = 0; j < n; ++j)
        for (long long q = 0; q < d; ++q) yhat[o] += W[o * d + q] * X[(i * n + j) * d + q] / n;
    }
    const double *y = data.targets.data() + i * d_out;
    if (config.loss.kind == "squared") {
      for (long long o = 0; o < d_out; ++o) {
        risk += (yhat[o] - y[o]) * (yhat[o] - y[o]) / (2.0 * N);
        g[o] = (yhat[o] - y[o]) / N;
      }
    } else { // cross-entropy: logsumexp - <y, yhat>
      double z = 0;
      for (long long o = 0; o < d_out; ++o) z += std::exp(yhat[o]);
      risk += std::log(z) / N;
      for (long long o = 0; o < d_out; ++o) {
        risk -= y[o] * yhat[o] / N;
        g[o] = (std::exp(yhat[o]) / z - y[o]) / N;
      }
    }
    for (long long o = 0; o < d_out; ++o) {
      if (query) {
        a[(i * n + n - 1) * d + c + o] += g[o];
        continue;
      }
      for (long long j = 0; j < n; ++j)
        for (long long q = 0; q < d; ++q) a[(i * n + j) * d + q] += g[o] * W[o * d + q] / n;
    }
  }
  return risk;
}

void plain_backprop(const mft::HeadParticles &all, const mft::TokenData &data, const Tableau &tab,
                    long long k, const mft::Config &config, std::vector<double> &dQ,
                    std::vector<double> &dK, std::vector<double> &dV, std::vector<double> &dX0,
                    double &risk) {
  const mft::test::Variant variant{config.model.attention, config.model.causal};
  const long long N = data.N, n = data.n, d = data.d, M = all.M, L = all.L, dh = all.d_h;
  const long long size = N * n * d, steps = L * k;
  const double h = 1.0 / static_cast<double>(steps), scale = 1.0 / static_cast<double>(M);
  auto field = [&](long long l, const std::vector<double> &Y) {
    std::vector<double> F(size, 0.0);
    for (long long i = 0; i < N; ++i)
      for (long long m = 0; m < M; ++m)
        mft::test::reference_head(all.q(l, m), all.k(l, m), all.v(l, m), dh, d, Y.data() + i * n * d,
                                  n, scale, F.data() + i * n * d, variant);
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
  std::vector<double> a;
  risk = plain_risk(config, data, X, a);
  // Reverse.
  dQ.assign(all.Q().size(), 0.0);
  dK.assign(all.K().size(), 0.0);
  dV.assign(all.V().size(), 0.0);
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
                                        Ybar[i].data() + seq * n * d, variant);
        }
    }
    for (int i = 0; i < tab.s; ++i)
      for (long long q = 0; q < size; ++q) a[q] += Ybar[i][q];
  }
  dX0 = a;
}

class PlainBackprop
    : public testing::TestWithParam<std::tuple<std::string, long long, std::string, Args>> {};

TEST_P(PlainBackprop, AgreesWithTheAdjoint) {
  const auto [ts, k, readout, variant] = GetParam();
  mft::Config config = small_config(readout, ts, k, false, "gelu", variant);
  mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, config, true);
  mft::Objective objective(problem);
  mft::Particles &p = *problem.particles;
  std::vector<double> theta(p.local_size());
  p.pack(theta.data());
  const mft::Gradient &state = objective.at(theta.data());

  const mft::HeadParticles &heads = p.get<mft::HeadParticles>();
  mft::HeadParticles all(heads.L, heads.M, heads.d_h, heads.d,
                         mft::ParticleBlock::block(heads.M, 0, 1));
  all.initialise(config.init.seed, config.init.sigma_qk, config.init.sigma_v);
  // Dormand-Prince has weights b_2 = b_7 = 0 (and is FSAL): the stages the
  // adjoint must weigh by -h rather than -h b_i.
  const bool dormand_prince = std::find(variant.begin(), variant.end(), "5dp") != variant.end();
  const Tableau tab =
      ts == "euler"    ? Tableau{{0.0}, {1.0}, 1}
      : dormand_prince ? Tableau{{0, 0, 0, 0, 0, 0, 0,                                                    //
                                  1.0 / 5, 0, 0, 0, 0, 0, 0,                                              //
                                  3.0 / 40, 9.0 / 40, 0, 0, 0, 0, 0,                                      //
                                  44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0, 0,                            //
                                  19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0, 0, //
                                  9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0, 0,
                                  35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0},
                                 {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0},
                                 7}
                       : Tableau{{0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1, 0},
                                 {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6},
                                 4};
  std::vector<double> dQ, dK, dV, dX0;
  double risk = 0;
  plain_backprop(all, problem.data, tab, k, config, dQ, dK, dV, dX0, risk);
  EXPECT_NEAR(state.risk, risk, 1e-13 * risk);
  EXPECT_LT(mft::test::relative_error(state.dX0, dX0), 1e-11);

  // This rank's heads against the same heads of the plain gradient.
  const long long Ml = heads.own.count(), qk = heads.qk_size(), vv = heads.v_size();
  std::vector<double> mine, ref;
  for (const auto &[offset, per, full] : {std::tuple{p.offset("Q"), qk, &dQ}, std::tuple{p.offset("K"), qk, &dK},
                                          std::tuple{p.offset("V"), vv, &dV}})
    for (long long l = 0; l < heads.L; ++l)
      for (long long m = 0; m < Ml; ++m)
        for (long long e = 0; e < per; ++e) {
          mine.push_back(state.dR[offset + (l * Ml + m) * per + e]);
          ref.push_back((*full)[(l * heads.M + heads.own.begin + m) * per + e]);
        }
  if (!mine.empty()) EXPECT_LT(mft::test::relative_error(mine, ref), 1e-11);
}

INSTANTIATE_TEST_SUITE_P(DormandPrince, PlainBackprop,
                         testing::Combine(testing::Values("rk"), testing::Values(1LL), testing::Values("query"),
                                          testing::Values(Args{"--depth.rk_type", "5dp"})));
INSTANTIATE_TEST_SUITE_P(Schemes, PlainBackprop,
                         testing::Combine(testing::Values("rk", "euler"), testing::Values(1LL, 3LL),
                                          testing::Values("query"), testing::Values(Args{})));
std::vector<Args> backprop_variants() {
  std::vector<Args> out = {kCausal, kVector, kCrossEntropy};
  for (const Args &a : score_map_variants()) out.push_back(a);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Variants, PlainBackprop,
                         testing::Combine(testing::Values("rk"), testing::Values(2LL),
                                          testing::Values("query", "mean"), testing::ValuesIn(backprop_variants())));

} // namespace
