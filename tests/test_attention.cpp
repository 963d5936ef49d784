// The attention field against a plain reference, softmax stability, and the
// vectorised exp. Runs on any number of ranks (each owns a block of heads).
#include "mft/model/attention.hpp"
#include "mft/core/exp_batch.hpp"
#include "mft/core/error.hpp"
#include "mft/model/field.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <limits>

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

TEST(Attention, FieldMatchesPlainReference) {
  // d_h != d and M not a multiple of the rank count.
  const long long N = 3, n = 5, d = 4, d_h = 3, M = 7, L = 2;
  const mft::TokenData data = mft::make_gaussian(N, n, d, 11);
  mft::Particles mine = mft::test::heads_only(
      mft::HeadParticles(L, M, d_h, d, mft::ParticleBlock::block(M, world_rank(), world_size())));
  mine.get<mft::HeadParticles>().initialise(5, 0.7, 0.9);
  mft::HeadParticles all(L, M, d_h, d, mft::ParticleBlock::block(M, 0, 1));
  all.initialise(5, 0.7, 0.9);

  mft::DepthField field(MPI_COMM_WORLD, N, n, mine);
  for (long long l = 0; l < L; ++l) {
    std::vector<double> F(N * n * d), ref(N * n * d, 0.0);
    field.evaluate(l, data.tokens.data(), F.data());
    for (long long i = 0; i < N; ++i)
      for (long long m = 0; m < M; ++m)
        mft::test::reference_head(all.q(l, m), all.k(l, m), all.v(l, m), d_h, d, data.sequence(i),
                                  n, 1.0 / M, ref.data() + i * n * d);
    EXPECT_LT(mft::test::relative_error(F, ref), 1e-13) << "slice " << l;
  }
}

TEST(Attention, ParticlesChangedIsSeen) {
  const long long N = 2, n = 3, d = 2, d_h = 2, M = 3, L = 1;
  const mft::TokenData data = mft::make_gaussian(N, n, d, 3);
  mft::Particles p = mft::test::heads_only(
      mft::HeadParticles(L, M, d_h, d, mft::ParticleBlock::block(M, world_rank(), world_size())));
  p.get<mft::HeadParticles>().initialise(1, 0.5, 1.0);
  mft::DepthField field(MPI_COMM_WORLD, N, n, p);
  std::vector<double> F1(N * n * d), F2(N * n * d);
  field.evaluate(0, data.tokens.data(), F1.data());
  for (double &v : p.get<mft::HeadParticles>().V()) v *= 2.0;
  field.particles_changed();
  field.evaluate(0, data.tokens.data(), F2.data());
  for (size_t i = 0; i < F1.size(); ++i) EXPECT_NEAR(F2[i], 2.0 * F1[i], 1e-14);
}

TEST(Attention, HugeScoresStayFiniteAndExact) {
  // Tokens e1, -e1, e2 and Q = K = c I with c^2 = 1000: the scores are
  // +-1000 and 0, so each token attends to itself alone and phi(x) = V x.
  const long long N = 1, n = 3, d = 2, d_h = 2, M = 1, L = 1;
  mft::TokenData data{N, n, d, 1, {1, 0, -1, 0, 0, 1}, {0}};
  mft::Particles p = mft::test::heads_only(
      mft::HeadParticles(L, M, d_h, d, mft::ParticleBlock::block(M, world_rank(), world_size())));
  const double c = std::sqrt(1000.0), V[4] = {0.3, -1.2, 0.7, 2.0};
  if (p.get<mft::HeadParticles>().own.count() == 1) {
    p.get<mft::HeadParticles>().Q() = {c, 0, 0, c};
    p.get<mft::HeadParticles>().K() = {c, 0, 0, c};
    p.get<mft::HeadParticles>().V().assign(V, V + 4);
  }
  mft::DepthField field(MPI_COMM_WORLD, N, n, p);
  std::vector<double> F(n * d);
  field.evaluate(0, data.tokens.data(), F.data());
  for (long long a = 0; a < n; ++a)
    for (long long k = 0; k < d; ++k) {
      const double expect = V[k * d] * data.tokens[a * d] + V[k * d + 1] * data.tokens[a * d + 1];
      ASSERT_TRUE(std::isfinite(F[a * d + k]));
      EXPECT_NEAR(F[a * d + k], expect, 1e-14) << "token " << a;
    }
}

TEST(Attention, SoftmaxRowsOfExtremeScores) {
  // Rows of scores over 4 tokens, stored by column (S[b][r], 8 rows: one
  // vector's lanes): row 0 (1000, -1000, 0, 999), row 1 all -1000, the
  // others 0.
  const long long rows = mft::lanes;
  std::vector<double> S(4 * rows, 0.0), work(4 * rows);
  const double row0[4] = {1000, -1000, 0, 999};
  for (int b = 0; b < 4; ++b) {
    S[b * rows] = row0[b];
    S[b * rows + 1] = -1e3;
  }
  mft::make_score_map("softmax", false)->probabilities(S.data(), 4, rows, work.data());
  const double e = std::exp(-1.0);
  EXPECT_NEAR(S[0], 1 / (1 + e), 1e-15);
  EXPECT_EQ(S[rows], 0.0);
  EXPECT_EQ(S[2 * rows], 0.0);
  EXPECT_NEAR(S[3 * rows], e / (1 + e), 1e-15);
  for (int b = 0; b < 4; ++b)
    for (long long r = 1; r < rows; ++r) EXPECT_NEAR(S[b * rows + r], 0.25, 1e-16);
}

TEST(Attention, VectorisedExpAgreesWithStdExp) {
  std::vector<double> x, y;
  for (int i = 0; i <= 200000; ++i) x.push_back(-708.0 * i / 200000.0);
  for (int i = 0; i < 1000; ++i) x.push_back(-1e-6 * i);
  x.push_back(-0.0);
  x.push_back(-800.0);
  y.resize(x.size());
  mft::exp_nonpositive(x.data(), y.data(), static_cast<long long>(x.size()));
  double worst = 0;
  for (size_t i = 0; i + 1 < x.size(); ++i) {
    const double e = std::exp(x[i]);
    worst = std::max(worst, std::fabs(y[i] - e) / e);
  }
  EXPECT_LT(worst, 4 * 2.220446049250313e-16);
  EXPECT_EQ(y.back(), 0.0);
  // The clamp's edges: -inf and scores far below the floor give 0, a NaN
  // stays a NaN (it must not become a weight), 0 gives 1.
  std::vector<double> edge = {-std::numeric_limits<double>::infinity(), -1e300, -746.5,
                              std::numeric_limits<double>::quiet_NaN(), 0.0, -1e-300, -0.5, -2.0};
  std::vector<double> out(edge.size());
  mft::exp_nonpositive(edge.data(), out.data(), static_cast<long long>(edge.size()));
  EXPECT_EQ(out[0], 0.0);
  EXPECT_EQ(out[1], 0.0);
  EXPECT_EQ(out[2], 0.0);
  EXPECT_TRUE(std::isnan(out[3]));
  EXPECT_EQ(out[4], 1.0);
  EXPECT_EQ(out[5], 1.0);
  EXPECT_NEAR(out[6], std::exp(-0.5), 4e-16);
  EXPECT_NEAR(out[7], std::exp(-2.0), 1e-16);
}

// Kernel sizes: N sequences of n tokens, token and head dimensions d, d_h,
// M heads.
struct KernelSize {
  long long N, n, d, d_h, M;
};

void PrintTo(const KernelSize &s, std::ostream *os) {
  *os << "N=" << s.N << " n=" << s.n << " d=" << s.d << " d_h=" << s.d_h << " M=" << s.M;
}

// For every score map and mask and odd sizes: one token (n = 1), three,
// seventeen; d != d_h both ways; M = 5 and 7, not a multiple of any block;
// sequences in several blocks and a remainder (N = 101 of 16 tokens, 8 heads
// of d = 8: blocks of 16 on one rank, 32 on two, 42 on three; N = 600 of 17
// tokens: blocks of 34 to 68): the velocity and every transposed product
// against the plain reference.
class KernelBlocks : public testing::TestWithParam<std::tuple<std::string, bool, KernelSize>> {};

TEST_P(KernelBlocks, ManyBlocksAndARemainderMatchTheReference) {
  const auto [attention, causal, size] = GetParam();
  const mft::test::Variant variant{attention, causal};
  const long long N = size.N, n = size.n, d = size.d, d_h = size.d_h, M = size.M, L = 1;
  const mft::TokenData data = mft::make_gaussian(N, n, d, 17);
  // Weights that grow with the scores: smaller scores.
  const double sigma_qk = mft::make_score_map(attention, causal)->bounded() ? 0.5 : 0.3;
  mft::Particles mine = mft::test::heads_only(
      mft::HeadParticles(L, M, d_h, d, mft::ParticleBlock::block(M, world_rank(), world_size())));
  mine.get<mft::HeadParticles>().initialise(9, sigma_qk, 0.8);
  mft::HeadParticles all(L, M, d_h, d, mft::ParticleBlock::block(M, 0, 1));
  all.initialise(9, sigma_qk, 0.8);
  mft::FieldOptions options;
  options.attention = attention;
  options.causal = causal;
  mft::DepthField field(MPI_COMM_WORLD, N, n, mine, options);

  std::vector<double> F(N * n * d), ref(N * n * d, 0.0);
  field.evaluate(0, data.tokens.data(), F.data());
  for (long long i = 0; i < N; ++i)
    for (long long m = 0; m < M; ++m)
      mft::test::reference_head(all.q(0, m), all.k(0, m), all.v(0, m), d_h, d, data.sequence(i), n,
                                1.0 / M, ref.data() + i * n * d, variant);
  EXPECT_LT(mft::test::relative_error(F, ref), 1e-13);

  // A cotangent C of the velocity: dX and this rank's dQ, dK, dV.
  std::vector<double> C(N * n * d);
  for (size_t q = 0; q < C.size(); ++q) C[q] = std::sin(0.37 * static_cast<double>(q) + 0.1);
  std::vector<double> dX(N * n * d), dtheta(mine.local_size(), 0.0);
  field.vjp(0, data.tokens.data(), C.data(), dX.data(), dtheta.data());
  std::vector<double> dXref(N * n * d, 0.0), dQ(M * d_h * d, 0.0), dK(M * d_h * d, 0.0), dV(M * d * d, 0.0);
  for (long long i = 0; i < N; ++i)
    for (long long m = 0; m < M; ++m)
      mft::test::reference_head_vjp(all.q(0, m), all.k(0, m), all.v(0, m), d_h, d, data.sequence(i), n,
                                    1.0 / M, C.data() + i * n * d, dQ.data() + m * d_h * d,
                                    dK.data() + m * d_h * d, dV.data() + m * d * d, dXref.data() + i * n * d,
                                    variant);
  EXPECT_LT(mft::test::relative_error(dX, dXref), 1e-12);
  const long long b = mine.get<mft::HeadParticles>().own.begin, c = mine.get<mft::HeadParticles>().own.count();
  const auto part = [&](const std::vector<double> &full, long long per) {
    return std::vector<double>(full.begin() + b * per, full.begin() + (b + c) * per);
  };
  const auto slice = [&](const std::string &name, long long per) {
    const long long at = mine.offset(name);
    return std::vector<double>(dtheta.begin() + at, dtheta.begin() + at + c * per);
  };
  if (c > 0) {
    EXPECT_LT(mft::test::relative_error(slice("Q", d_h * d), part(dQ, d_h * d)), 1e-12);
    EXPECT_LT(mft::test::relative_error(slice("K", d_h * d), part(dK, d_h * d)), 1e-12);
    EXPECT_LT(mft::test::relative_error(slice("V", d * d), part(dV, d * d)), 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(ScoreMapsAndMasks, KernelBlocks,
                         testing::Combine(testing::ValuesIn(mft::score_map_names()), testing::Bool(),
                                          testing::Values(KernelSize{101, 16, 8, 4, 8}, KernelSize{7, 1, 5, 3, 7},
                                                          KernelSize{13, 3, 6, 2, 5}, KernelSize{40, 17, 4, 6, 7},
                                                          KernelSize{600, 17, 4, 6, 7})));

TEST(Attention, UnknownScoreMapNamesTheKey) {
  try {
    mft::make_score_map("no-such-map", false);
    FAIL() << "no error";
  } catch (const mft::InputError &e) {
    EXPECT_EQ(std::string(e.what()),
              "model.attention = no-such-map: must be one of " + mft::comma_list(mft::score_map_names()));
  }
}

// Every registered score map: its cotangent is the transpose of the
// derivative of its weights, ds_ab = sum_c (dP_ac / da_ab) T_ac, against
// central differences of weights() (Richardson-extrapolated), for rows of
// random scores and 1 to 9 tokens seen; and the weights of the rows are
// independent (a row's weights depend on its own scores alone).
class ScoreMaps : public testing::TestWithParam<std::string> {};

TEST_P(ScoreMaps, CotangentIsTheTransposedDerivativeOfTheWeights) {
  const std::unique_ptr<mft::ScoreMap> map = mft::make_score_map(GetParam(), false);
  const long long rows = 2 * mft::lanes;
  std::vector<double> work(4 * rows), scale(rows);
  for (long long seen = 1; seen <= 9; ++seen) {
    std::vector<double> S(seen * rows), T(seen * rows);
    for (long long i = 0; i < seen * rows; ++i) {
      S[i] = 1.7 * std::sin(1.3 * static_cast<double>(i) + 0.2 * static_cast<double>(seen)) + 0.05;
      T[i] = std::cos(0.7 * static_cast<double>(i) + 0.4);
    }
    // ds from the weights as the kernel holds them (W and its scale) and
    // from P itself: the same.
    std::vector<double> W = S, ds = T, P = S, ds_of_p = T;
    std::vector<double> column_max(S.begin(), S.begin() + rows);
    for (long long b = 1; b < seen; ++b)
      for (long long r = 0; r < rows; ++r) column_max[r] = std::max(column_max[r], S[b * rows + r]);
    const bool scaled = map->weights(W.data(), seen, rows, map->uses_column_max() ? column_max.data() : nullptr,
                                     work.data(), scale.data());
    map->cotangent(W.data(), scaled ? scale.data() : nullptr, ds.data(), seen, rows, work.data());
    map->probabilities(P.data(), seen, rows, work.data());
    map->cotangent(P.data(), nullptr, ds_of_p.data(), seen, rows, work.data());
    // And both in one call, as the VJP makes it.
    std::vector<double> W2 = S, ds2 = T, scale2(rows);
    EXPECT_EQ(map->weights_and_cotangent(W2.data(), ds2.data(), seen, rows,
                                         map->uses_column_max() ? column_max.data() : nullptr, work.data(),
                                         scale2.data()),
              scaled);
    for (long long i = 0; i < seen * rows; ++i) {
      EXPECT_NEAR(W2[i], W[i], 1e-15 * std::fabs(W[i])) << GetParam() << ": weights in one call, entry " << i;
      EXPECT_NEAR(ds2[i], ds[i], 1e-15 * (1 + std::fabs(ds[i]))) << GetParam() << ": ds in one call, entry " << i;
    }
    for (long long i = 0; i < seen * rows; ++i)
      EXPECT_NEAR(ds_of_p[i], ds[i], 1e-15 * (1 + std::fabs(ds[i]))) << GetParam() << ": ds from P, entry " << i;
    const auto directional = [&](long long r, long long b, double h) {
      std::vector<double> plus = S, minus = S;
      plus[b * rows + r] += h;
      minus[b * rows + r] -= h;
      map->probabilities(plus.data(), seen, rows, work.data());
      map->probabilities(minus.data(), seen, rows, work.data());
      double sum = 0;
      for (long long c = 0; c < seen; ++c) {
        for (long long q = 0; q < rows; ++q)
          if (q != r) EXPECT_EQ(plus[c * rows + q], minus[c * rows + q]) << "row " << q << " moved with row " << r;
        sum += (plus[c * rows + r] - minus[c * rows + r]) / (2 * h) * T[c * rows + r];
      }
      return sum;
    };
    for (long long r = 0; r < rows; ++r)
      for (long long b = 0; b < seen; ++b) {
        const double h = 1e-4, fd = (4 * directional(r, b, h / 2) - directional(r, b, h)) / 3;
        EXPECT_NEAR(ds[b * rows + r], fd, 1e-9 * (1 + std::fabs(fd)))
            << GetParam() << ": token " << b << " of " << seen << ", row " << r;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Registered, ScoreMaps, testing::ValuesIn(mft::score_map_names()));

} // namespace
