// The built-in data generators and their targets.
#include "mft/tasks/data.hpp"
#include "mft/tasks/task.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

// Solves the (p x p) normal equations A^T A w = A^T b by Gaussian elimination.
std::vector<double> least_squares(const std::vector<std::vector<double>> &A,
                                  const std::vector<double> &b) {
  const size_t p = A[0].size();
  std::vector<std::vector<double>> G(p, std::vector<double>(p + 1, 0.0));
  for (size_t r = 0; r < A.size(); ++r)
    for (size_t i = 0; i < p; ++i) {
      for (size_t j = 0; j < p; ++j) G[i][j] += A[r][i] * A[r][j];
      G[i][p] += A[r][i] * b[r];
    }
  for (size_t c = 0; c < p; ++c)
    for (size_t r = c + 1; r < p; ++r) {
      const double f = G[r][c] / G[c][c];
      for (size_t j = c; j <= p; ++j) G[r][j] -= f * G[c][j];
    }
  std::vector<double> w(p);
  for (size_t i = p; i-- > 0;) {
    double s = G[i][p];
    for (size_t j = i + 1; j < p; ++j) s -= G[i][j] * w[j];
    w[i] = s / G[i][i];
  }
  return w;
}

TEST(Data, IclLinearTargetIsTheQueryLabel) {
  // The in-context examples determine w; the target is <w, x_q>.
  const long long N = 5, n = 12, d = 4, p = d - 1;
  const mft::TokenData data = mft::make_icl_linear(N, n, d, 9);
  for (long long i = 0; i < N; ++i) {
    const double *X = data.sequence(i);
    std::vector<std::vector<double>> A;
    std::vector<double> b;
    for (long long j = 0; j + 1 < n; ++j) {
      A.emplace_back(X + j * d, X + j * d + p);
      b.push_back(X[j * d + p]);
    }
    const auto w = least_squares(A, b);
    double yq = 0;
    for (long long k = 0; k < p; ++k) yq += w[k] * X[(n - 1) * d + k];
    EXPECT_EQ(X[(n - 1) * d + p], 0.0);
    EXPECT_NEAR(yq, data.targets[i], 1e-10);
  }
}

TEST(Data, GaussianTargetIsLinearInTheMeanToken) {
  const long long N = 40, n = 6, d = 3;
  const mft::TokenData data = mft::make_gaussian(N, n, d, 4);
  std::vector<std::vector<double>> A;
  for (long long i = 0; i < N; ++i) {
    std::vector<double> mean(d, 0.0);
    for (long long j = 0; j < n; ++j)
      for (long long k = 0; k < d; ++k) mean[k] += data.sequence(i)[j * d + k] / n;
    A.push_back(mean);
  }
  const auto u = least_squares(A, data.targets);
  for (long long i = 0; i < N; ++i) {
    double y = 0;
    for (long long k = 0; k < d; ++k) y += u[k] * A[i][k];
    EXPECT_NEAR(y, data.targets[i], 1e-10);
  }
}

TEST(Data, SameSeedSameData) {
  const auto a = mft::make_icl_linear(3, 4, 3, 1), b = mft::make_icl_linear(3, 4, 3, 1),
             c = mft::make_icl_linear(3, 4, 3, 2);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_NE(a.tokens, c.tokens);
  // Sequence i does not depend on N: the first sequences of a larger set agree.
  const auto big = mft::make_icl_linear(6, 4, 3, 1);
  EXPECT_TRUE(std::equal(a.tokens.begin(), a.tokens.end(), big.tokens.begin()));
}

TEST(Data, HeldOutAndOnlineSequencesHaveStreamsOfTheirOwn) {
  mft::DataConfig cfg;
  cfg.task = "icl-linear";
  cfg.tokens = 5;
  cfg.seed = 7;
  cfg.test_seed = 7; // the same number: the streams still differ by species
  const long long d = 4, per = cfg.tokens * d;
  cfg.test_sequences = 4;
  // The task's training sequences (and held-out ones into `test`).
  const auto make_data = [&](mft::TokenData *test) {
    mft::Config c;
    c.data = cfg;
    c.model.d = d;
    mft::TaskData task = mft::make_task_data(c, MPI_COMM_WORLD);
    if (test) *test = task.test;
    return task.train;
  };
  const auto online_batch = [&](long long step, long long b) {
    mft::Config c;
    c.data = cfg;
    c.model.d = d;
    return mft::online_batch(c, step, b);
  };
  mft::TokenData test_small, test_big, test2;
  cfg.sequences = 3;
  const mft::TokenData small = make_data(&test_small);
  cfg.sequences = 9;
  const mft::TokenData big = make_data(&test_big);
  // The held-out set does not depend on N, nor the training set on N_test.
  EXPECT_EQ(test_small.tokens, test_big.tokens);
  EXPECT_EQ(test_small.targets, test_big.targets);
  EXPECT_TRUE(std::equal(small.tokens.begin(), small.tokens.end(), big.tokens.begin()));
  cfg.test_sequences = 2;
  EXPECT_EQ(make_data(&test2).tokens, big.tokens);
  EXPECT_TRUE(std::equal(test2.tokens.begin(), test2.tokens.end(), test_big.tokens.begin()));
  const mft::TokenData &test4 = test_big;
  // Online batches: the same for the same step, another for another step,
  // and none of them a training or held-out sequence.
  const mft::TokenData a = online_batch(5, 3), b = online_batch(5, 3), c = online_batch(6, 3),
                       wide = online_batch(5, 6);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.targets, b.targets);
  EXPECT_NE(a.tokens, c.tokens);
  // Entry r of a step's batch does not depend on the batch size.
  EXPECT_TRUE(std::equal(a.tokens.begin(), a.tokens.end(), wide.tokens.begin()));
  const auto first_token = [&](const mft::TokenData &data, long long i) { return data.sequence(i)[0]; };
  for (long long r = 0; r < a.N; ++r) {
    for (long long i = 0; i < big.N; ++i) EXPECT_NE(first_token(a, r), first_token(big, i));
    for (long long i = 0; i < test4.N; ++i) EXPECT_NE(first_token(a, r), first_token(test4, i));
  }
  for (long long i = 0; i < test4.N; ++i)
    for (long long j = 0; j < big.N; ++j) EXPECT_NE(first_token(test4, i), first_token(big, j));
  // A task of the gaussian kind keeps its target functional U (data.seed)
  // on the online data: y = U mean_j x_j, linear in the tokens.
  cfg.task = "gaussian";
  const mft::TokenData g = online_batch(2, 40);
  const mft::TokenData train = make_data(nullptr);
  std::vector<std::vector<double>> A;
  for (long long i = 0; i < g.N; ++i) {
    std::vector<double> mean(d, 0.0);
    for (long long j = 0; j < per; ++j) mean[j % d] += g.sequence(i)[j] / cfg.tokens;
    A.push_back(mean);
  }
  const auto u = least_squares(A, g.targets);
  for (long long i = 0; i < train.N; ++i) {
    double y = 0;
    for (long long j = 0; j < per; ++j) y += u[j % d] * train.sequence(i)[j] / cfg.tokens;
    EXPECT_NEAR(y, train.targets[i], 1e-9);
  }
}

} // namespace
