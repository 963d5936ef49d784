#pragma once
// The generators and readers of token measures and targets (MODEL.md §1)
// that the data tasks (task.hpp) make a run's data with.
#include "mft/core/config.hpp"
#include "mft/core/rng.hpp"
#include "mft/model/tokens.hpp"

#include <functional>
#include <utility>
#include <vector>

namespace mft {

// The stream sequence i of a generated set draws from.
using SequenceStreams = std::function<RandomStream(long long i)>;
SequenceStreams training_streams(std::uint64_t seed);     // (seed, DataSequence, i, 0)
SequenceStreams held_out_streams(std::uint64_t test_seed); // (test_seed, DataHeldOut, i, 0)
// Online data: entry r of training step k's batch, (seed, DataOnline, k, r).
SequenceStreams online_streams(std::uint64_t seed, long long step);

// `count` sequences of data.task (a task of sequences drawn one by one from
// streams, kStreams; tasks/task.hpp), sequence i from stream_of(i).
TokenData generate_sequences(const Config &config, long long count, const SequenceStreams &stream_of);

// The b fresh sequences of training step `step` (data.online): the same on
// every rank and on any restart.
TokenData online_batch(const Config &config, long long step, long long b);

// Each generator alone (the seed-taking forms draw the training streams).
TokenData make_icl_linear(long long N, long long n, long long d, const SequenceStreams &stream_of,
                          long long d_out = 1);
TokenData make_gaussian(long long N, long long n, long long d, std::uint64_t task_seed,
                        const SequenceStreams &stream_of, long long d_out = 1);
TokenData make_icl_linear(long long N, long long n, long long d, std::uint64_t seed, long long d_out = 1);
TokenData make_gaussian(long long N, long long n, long long d, std::uint64_t seed, long long d_out = 1);
// A data file: d, n and N are the file's.
TokenData read_data_file(const std::string &path, long long d_out = 1, TokenData *test = nullptr);

// InputError `key = path: NAME has a non-finite value` unless every value is
// finite (the check of every token and target read from a file).
void require_finite(const std::string &key, const std::string &path, const std::string &name,
                    const std::vector<double> &values);

// Moves the sequences from N_keep on out of `data` into the result.
TokenData split_off(TokenData &data, long long N_keep);

// The shapes of a data file, after checking its datasets without reading
// them (InputError naming data.file as read_data_file does).
struct DataFileShape {
  struct Part {
    long long N = 0, n = 0, d = 0, d_out = 1;
  };
  Part train, test; // test.N = 0: the file holds no held-out data
};
DataFileShape data_file_shape(const std::string &path, long long d_out);

} // namespace mft
