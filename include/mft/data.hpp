#pragma once
// Token measures: N sequences of n tokens in R^d, and their targets.
// Sequence i's token measure is mu_i = (1/n) sum_j delta_{x_ij} (MODEL.md §1).
#include "mft/config.hpp"

#include <utility>
#include <vector>

namespace mft {

struct TokenData {
  long long N = 0;     // sequences
  long long n = 0;     // tokens per sequence
  long long d = 0;     // token dimension
  long long d_out = 1; // target dimension
  std::vector<double> tokens;  // X(0), N x n x d, C order
  std::vector<double> targets; // y, N x d_out

  double *sequence(long long i) { return tokens.data() + i * n * d; }
  const double *sequence(long long i) const { return tokens.data() + i * n * d; }
};

// Builds the data named by config.data.task. Every rank builds the same data
// (sequence i draws from the stream (data.seed, DataSequence, i, 0)). For
// task = file, reads /data/tokens and /data/targets and throws InputError
// naming the file for a missing or malformed file or a d mismatch.
TokenData make_data(const DataConfig &data, long long d);

// Each generator alone, for tests and the benchmark.
TokenData make_icl_linear(long long N, long long n, long long d, std::uint64_t seed);
TokenData make_gaussian(long long N, long long n, long long d, std::uint64_t seed);
TokenData read_data_file(const std::string &path, long long d);

// (N, n) of a data file, after checking its datasets without reading them
// (InputError naming data.file as read_data_file does).
std::pair<long long, long long> data_file_shape(const std::string &path, long long d);

} // namespace mft
