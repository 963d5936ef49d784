#pragma once
// The log-sum-exp injectivity test of [B] (MODEL.md §7): the NTK's V-part is
// injective exactly when the cumulant generating functions
//
//     Lambda_{mu_i}(z) = log( (1/n) sum_j exp(<z, x_ij>) )
//
// of the token measures are linearly independent modulo affine functions.
// Sampled at K points z_k: the K x N matrix [Lambda_{mu_i}(z_k)], its columns
// projected off span{1, z_1, ..., z_d}, and its singular values; the
// smallest over the largest is the injectivity margin (0: some combination
// of the Lambda's is affine).
#include "mft/model/tokens.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace mft {

// K points uniform in the ball of `radius` in R^d (K x d, row-major), from
// the stream (seed, DataTask, 1, 0).
std::vector<double> cgf_points(long long K, long long d, double radius, std::uint64_t seed);

// Lambda of the empirical measure of the n tokens X (n x d) at z, by a
// max-shifted log-sum-exp.
double empirical_cgf(const double *X, long long n, long long d, const double *z);

struct CgfMargin {
  std::vector<double> singular_values; // descending, N of them
  double margin = 0.0;                  // smallest / largest
};

// The margin of the functions f_i (i < N) sampled at the points Z (K x d):
// columns f_i(z_k), projected off the affine functions, then the SVD.
CgfMargin cgf_margin(const std::vector<double> &Z, long long K, long long d, long long N,
                     const std::function<double(long long i, const double *z)> &f);

// The empirical margin of the data's token measures.
CgfMargin empirical_cgf_margin(const TokenData &data, const std::vector<double> &Z, long long K);

} // namespace mft
