// The attention field against a plain reference, softmax stability, and the
// vectorised exp. Runs on any number of ranks (each owns a block of heads).
#include "mft/model/attention.hpp"
#include "mft/core/exp_batch.hpp"
#include "mft/model/field.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

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
  mft::Particles mine{
      mft::HeadParticles(L, M, d_h, d, mft::HeadOwnership::block(M, world_rank(), world_size())), {}};
  mine.heads.initialise(5, 0.7, 0.9);
  mft::HeadParticles all(L, M, d_h, d, mft::HeadOwnership::block(M, 0, 1));
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
  mft::Particles p{
      mft::HeadParticles(L, M, d_h, d, mft::HeadOwnership::block(M, world_rank(), world_size())), {}};
  p.heads.initialise(1, 0.5, 1.0);
  mft::DepthField field(MPI_COMM_WORLD, N, n, p);
  std::vector<double> F1(N * n * d), F2(N * n * d);
  field.evaluate(0, data.tokens.data(), F1.data());
  for (double &v : p.heads.V) v *= 2.0;
  field.particles_changed();
  field.evaluate(0, data.tokens.data(), F2.data());
  for (size_t i = 0; i < F1.size(); ++i) EXPECT_NEAR(F2[i], 2.0 * F1[i], 1e-14);
}

TEST(Attention, HugeScoresStayFiniteAndExact) {
  // Tokens e1, -e1, e2 and Q = K = c I with c^2 = 1000: the scores are
  // +-1000 and 0, so each token attends to itself alone and phi(x) = V x.
  const long long N = 1, n = 3, d = 2, d_h = 2, M = 1, L = 1;
  mft::TokenData data{N, n, d, 1, {1, 0, -1, 0, 0, 1}, {0}};
  mft::Particles p{
      mft::HeadParticles(L, M, d_h, d, mft::HeadOwnership::block(M, world_rank(), world_size())), {}};
  const double c = std::sqrt(1000.0), V[4] = {0.3, -1.2, 0.7, 2.0};
  if (p.heads.own.count() == 1) {
    p.heads.Q = {c, 0, 0, c};
    p.heads.K = {c, 0, 0, c};
    p.heads.V.assign(V, V + 4);
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
  std::vector<double> S = {1000, -1000, 0, 999, -1e3, -1e3, -1e3, -1e3};
  mft::softmax_rows(S.data(), 2, 4);
  const double e = std::exp(-1.0);
  EXPECT_NEAR(S[0], 1 / (1 + e), 1e-15);
  EXPECT_EQ(S[1], 0.0);
  EXPECT_EQ(S[2], 0.0);
  EXPECT_NEAR(S[3], e / (1 + e), 1e-15);
  for (int b = 4; b < 8; ++b) EXPECT_NEAR(S[b], 0.25, 1e-16);
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
}

} // namespace
