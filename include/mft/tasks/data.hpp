#pragma once
// The data tasks that make token measures and targets (MODEL.md §1).
#include "mft/core/config.hpp"
#include "mft/model/tokens.hpp"

#include <utility>
#include <vector>

namespace mft {

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
