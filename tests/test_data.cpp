// The built-in data generators and their targets.
#include "mft/tasks/data.hpp"

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

} // namespace
