#pragma once
// The attention each slice applies (MODEL.md §13): the mean over the
// slice's M heads of their weights P^m_ab, at the tokens that enter the
// slice (the state at s = l / L), as the mean-field field averages them;
// and the scores of the induction mechanism read off it.
#include "mft/depth/depth.hpp"
#include "mft/tasks/problem.hpp"

#include <vector>

namespace mft {

// A[i][l][a][b] (N x L x n x n) for every sequence of `data` (all N on every
// rank, `solver` sized for this group's block of them): row a is query token
// a's weights over the tokens b it sees (zeros past a under the causal
// mask). Computed in double whatever run.precision. Collective on the grid.
std::vector<double> slice_attention(const Problem &problem, DepthSolver &solver, const TokenData &data);

// Per slice, the mean over the N sequences and over the query positions a
// >= 1 of the attention from a onto a - 1 (L values).
std::vector<double> previous_token_scores(const std::vector<double> &A, long long N, long long L, long long n);

// Per slice, on sequences of R = n / 2 symbols repeated twice (the
// induction probe), the mean over the second copy's positions a in
// [R, 2R) of the attention from a onto a - R + 1, the position after a's
// earlier copy (L values).
std::vector<double> induction_scores(const std::vector<double> &A, long long N, long long L, long long n);

} // namespace mft
