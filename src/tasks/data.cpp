#include "mft/tasks/data.hpp"

#include "mft/core/error.hpp"
#include "mft/io/h5.hpp"
#include "mft/core/rng.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace mft {

TokenData make_icl_linear(long long N, long long n, long long d, const SequenceStreams &stream_of,
                          long long d_out) {
  // [A]'s in-context linear regression: tokens (x_j, W x_j) for j < n, the
  // query (x_q, 0) last; target W x_q, with x in R^p, p = d - d_out. A fresh
  // W with rows ~ N(0, I/p) per sequence keeps the labels of unit variance.
  TokenData data{N, n, d, d_out, std::vector<double>(N * n * d), std::vector<double>(N * d_out), 0, {}, {}};
  const long long p = d - d_out;
  std::vector<double> W(p * d_out), y(d_out);
  for (long long i = 0; i < N; ++i) {
    RandomStream rng = stream_of(i);
    for (auto &w : W) w = rng.normal() / std::sqrt(static_cast<double>(p));
    double *X = data.sequence(i);
    for (long long j = 0; j < n; ++j) {
      double *x = X + j * d;
      std::fill(y.begin(), y.end(), 0.0);
      for (long long k = 0; k < p; ++k) {
        x[k] = rng.normal();
        for (long long c = 0; c < d_out; ++c) y[c] += W[c * p + k] * x[k];
      }
      for (long long c = 0; c < d_out; ++c) {
        if (j + 1 < n) {
          x[p + c] = y[c];
        } else {
          x[p + c] = 0.0;
          data.targets[i * d_out + c] = y[c];
        }
      }
    }
  }
  return data;
}

TokenData make_gaussian(long long N, long long n, long long d, std::uint64_t seed, const SequenceStreams &stream_of,
                        long long d_out) {
  // iid N(0, I) tokens; y_i = U mean_j x_ij with one fixed U (the task,
  // from `seed`) whose rows are ~ N(0, (n/d) I): targets of unit variance.
  TokenData data{N, n, d, d_out, std::vector<double>(N * n * d), std::vector<double>(N * d_out), 0, {}, {}};
  std::vector<double> U(d * d_out), y(d_out);
  RandomStream task(seed, Species::DataTask, 0, 0);
  for (auto &u : U) u = task.normal() * std::sqrt(static_cast<double>(n) / static_cast<double>(d));
  for (long long i = 0; i < N; ++i) {
    RandomStream rng = stream_of(i);
    double *X = data.sequence(i);
    std::fill(y.begin(), y.end(), 0.0);
    for (long long j = 0; j < n * d; ++j) {
      X[j] = rng.normal();
      for (long long c = 0; c < d_out; ++c) y[c] += U[c * d + j % d] * X[j];
    }
    for (long long c = 0; c < d_out; ++c)
      data.targets[i * d_out + c] = y[c] / static_cast<double>(n);
  }
  return data;
}

TokenData make_icl_linear(long long N, long long n, long long d, std::uint64_t seed, long long d_out) {
  return make_icl_linear(N, n, d, training_streams(seed), d_out);
}

TokenData make_gaussian(long long N, long long n, long long d, std::uint64_t seed, long long d_out) {
  return make_gaussian(N, n, d, seed, training_streams(seed), d_out);
}

SequenceStreams training_streams(std::uint64_t seed) {
  return [seed](long long i) { return RandomStream(seed, Species::DataSequence, static_cast<std::uint64_t>(i), 0); };
}

SequenceStreams held_out_streams(std::uint64_t test_seed) {
  return [test_seed](long long i) {
    return RandomStream(test_seed, Species::DataHeldOut, static_cast<std::uint64_t>(i), 0);
  };
}

SequenceStreams online_streams(std::uint64_t seed, long long step) {
  return [seed, step](long long r) {
    return RandomStream(seed, Species::DataOnline, static_cast<std::uint64_t>(step), static_cast<std::uint64_t>(r));
  };
}

TokenData online_batch(const Config &config, long long step, long long b) {
  return generate_sequences(config, b, online_streams(config.data.seed, step));
}

TokenData split_off(TokenData &data, long long N_keep) {
  TokenData tail{data.N - N_keep, data.n, data.d, data.d_out, {}, {}, 0, {}, {}};
  const auto cut_tokens = static_cast<std::ptrdiff_t>(N_keep * data.n * data.d);
  const auto cut_targets = static_cast<std::ptrdiff_t>(N_keep * data.d_out);
  tail.tokens.assign(data.tokens.begin() + cut_tokens, data.tokens.end());
  tail.targets.assign(data.targets.begin() + cut_targets, data.targets.end());
  data.tokens.resize(static_cast<size_t>(cut_tokens));
  data.targets.resize(static_cast<size_t>(cut_targets));
  data.N = N_keep;
  return tail;
}

namespace {

// The (tokens, targets) pair of a data file under `prefix` (/data/ or
// /data/test_): checked shapes, or InputError naming data.file.
DataFileShape::Part describe_pair(const h5::Handle &file, const std::string &path,
                                  const std::string &tokens_name, const std::string &targets_name) {
  const std::string key = "data.file";
  const h5::DatasetInfo tokens = h5::describe(file, tokens_name);
  const h5::DatasetInfo targets = h5::describe(file, targets_name);
  for (const auto &[name, info] : {std::pair{&tokens_name, &tokens}, std::pair{&targets_name, &targets}})
    if (std::string why = info->unreadable(*name); !why.empty() ||
        !(why = h5::unwritten_rows(file, *name, info->dims.empty() ? 1 : info->dims[0])).empty())
      throw InputError(key_error(key, path, why));
  const auto &shape = tokens.dims;
  if (shape.size() != 3 || shape[0] == 0 || shape[1] == 0 || shape[2] == 0)
    throw InputError(key_error(key, path, tokens_name + " has shape " + tokens.shape_text() +
                                              "; it must be a non-empty (N, n, d)"));
  const auto &tshape = targets.dims;
  const bool vector_ok = tshape.size() == 2 && tshape[0] == shape[0] && tshape[1] > 0;
  const bool scalar_ok = tshape.size() == 1 && tshape[0] == shape[0];
  if (!vector_ok && !scalar_ok)
    throw InputError(key_error(key, path, targets_name + " has shape " + targets.shape_text() +
                                              "; it must be (N, d_out) with N = " + std::to_string(shape[0])));
  return {static_cast<long long>(shape[0]), static_cast<long long>(shape[1]),
          static_cast<long long>(shape[2]), vector_ok ? static_cast<long long>(tshape[1]) : 1};
}

TokenData read_pair(const h5::Handle &file, const std::string &path, const std::string &tokens_name,
                    const std::string &targets_name, const DataFileShape::Part &part) {
  const std::string key = "data.file";
  TokenData data{part.N, part.n, part.d, part.d_out, {}, {}, 0, {}, {}};
  try {
    data.tokens = h5::read_doubles(file, tokens_name);
    data.targets = h5::read_doubles(file, targets_name);
  } catch (const Error &e) {
    throw InputError(key_error(key, path, e.what()));
  }
  require_finite(key, path, tokens_name, data.tokens);
  require_finite(key, path, targets_name, data.targets);
  return data;
}

} // namespace

void require_finite(const std::string &key, const std::string &path, const std::string &name,
                    const std::vector<double> &values) {
  for (double v : values)
    if (!std::isfinite(v)) throw InputError(key_error(key, path, name + " has a non-finite value"));
}

DataFileShape data_file_shape(const std::string &path, long long d_out) {
  const std::string key = "data.file";
  h5::Handle file = h5::open_input(path, key);
  DataFileShape shape;
  shape.train = describe_pair(file, path, "/data/tokens", "/data/targets");
  const bool has_tokens = h5::exists(file, "/data/test_tokens");
  if (has_tokens != h5::exists(file, "/data/test_targets"))
    throw InputError(key_error(key, path, std::string("has /data/test_") + (has_tokens ? "tokens" : "targets") +
                                              " without /data/test_" + (has_tokens ? "targets" : "tokens")));
  if (has_tokens) {
    shape.test = describe_pair(file, path, "/data/test_tokens", "/data/test_targets");
    if (shape.test.n != shape.train.n || shape.test.d != shape.train.d || shape.test.d_out != shape.train.d_out)
      throw InputError(key_error(key, path, "/data/test_tokens and /data/test_targets must have the n, d "
                                            "and d_out of /data/tokens and /data/targets"));
  }
  if (shape.train.d_out != d_out)
    throw InputError(key_error(key, path,
                               "/data/targets has d_out = " + std::to_string(shape.train.d_out) +
                                   " but readout.dim = " + std::to_string(d_out)));
  return shape;
}

TokenData read_data_file(const std::string &path, long long d_out, TokenData *test) {
  const DataFileShape shape = data_file_shape(path, d_out);
  h5::Handle file = h5::open_input(path, "data.file");
  TokenData data = read_pair(file, path, "/data/tokens", "/data/targets", shape.train);
  if (test)
    *test = shape.test.N > 0 ? read_pair(file, path, "/data/test_tokens", "/data/test_targets", shape.test)
                             : TokenData{0, shape.train.n, shape.train.d, d_out, {}, {}, 0, {}, {}};
  return data;
}

} // namespace mft
