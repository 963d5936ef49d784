#include "mft/tasks/data.hpp"

#include "mft/core/error.hpp"
#include "mft/io/h5.hpp"
#include "mft/core/rng.hpp"

#include <cmath>

namespace mft {

TokenData make_icl_linear(long long N, long long n, long long d, std::uint64_t seed) {
  // [A]'s in-context linear regression: tokens (x_j, <w, x_j>) for j < n, the
  // query (x_q, 0) last; target <w, x_q>. A fresh w ~ N(0, I/(d-1)) per
  // sequence keeps the labels of unit variance.
  TokenData data{N, n, d, 1, std::vector<double>(N * n * d), std::vector<double>(N)};
  const long long p = d - 1;
  std::vector<double> w(p);
  for (long long i = 0; i < N; ++i) {
    RandomStream rng(seed, Species::DataSequence, i, 0);
    for (auto &wk : w) wk = rng.normal() / std::sqrt(static_cast<double>(p));
    double *X = data.sequence(i);
    for (long long j = 0; j < n; ++j) {
      double *x = X + j * d;
      double y = 0.0;
      for (long long k = 0; k < p; ++k) {
        x[k] = rng.normal();
        y += w[k] * x[k];
      }
      if (j + 1 < n) {
        x[p] = y;
      } else {
        x[p] = 0.0;
        data.targets[i] = y;
      }
    }
  }
  return data;
}

TokenData make_gaussian(long long N, long long n, long long d, std::uint64_t seed) {
  // iid N(0, I) tokens; y_i = <u, mean_j x_ij> with one fixed u ~ N(0, (n/d) I),
  // which gives targets of unit variance.
  TokenData data{N, n, d, 1, std::vector<double>(N * n * d), std::vector<double>(N)};
  std::vector<double> u(d);
  RandomStream task(seed, Species::DataTask, 0, 0);
  for (auto &uk : u) uk = task.normal() * std::sqrt(static_cast<double>(n) / static_cast<double>(d));
  for (long long i = 0; i < N; ++i) {
    RandomStream rng(seed, Species::DataSequence, i, 0);
    double *X = data.sequence(i);
    double y = 0.0;
    for (long long j = 0; j < n * d; ++j) {
      X[j] = rng.normal();
      y += u[j % d] * X[j];
    }
    data.targets[i] = y / static_cast<double>(n);
  }
  return data;
}

std::pair<long long, long long> data_file_shape(const std::string &path, long long d) {
  const std::string key = "data.file";
  h5::Handle file = h5::open_input(path, key);
  const h5::DatasetInfo tokens = h5::describe(file, "/data/tokens");
  const h5::DatasetInfo targets = h5::describe(file, "/data/targets");
  for (const auto &[name, info] : {std::pair{"/data/tokens", &tokens}, std::pair{"/data/targets", &targets}})
    if (const std::string why = info->unreadable(name); !why.empty()) throw InputError(key_error(key, path, why));
  const auto &shape = tokens.dims;
  if (shape.size() != 3 || shape[0] == 0 || shape[1] == 0 || shape[2] == 0)
    throw InputError(key_error(key, path, "/data/tokens has shape " + tokens.shape_text() +
                                              "; it must be a non-empty (N, n, d)"));
  if (static_cast<long long>(shape[2]) != d)
    throw InputError(key_error(key, path,
                               "/data/tokens has d = " + std::to_string(shape[2]) +
                                   " but model.d = " + std::to_string(d)));
  const auto &tshape = targets.dims;
  const bool vector_ok = tshape.size() == 2 && tshape[0] == shape[0];
  const bool scalar_ok = tshape.size() == 1 && tshape[0] == shape[0];
  if (!vector_ok && !scalar_ok)
    throw InputError(key_error(key, path, "/data/targets has shape " + targets.shape_text() +
                                              "; it must be (N, d_out) with N = " + std::to_string(shape[0])));
  if (vector_ok && tshape[1] != 1)
    throw InputError(key_error(key, path,
                               "/data/targets has d_out = " + std::to_string(tshape[1]) +
                                   "; the query and mean readouts give one value (d_out = 1)"));
  return {static_cast<long long>(shape[0]), static_cast<long long>(shape[1])};
}

TokenData read_data_file(const std::string &path, long long d) {
  const std::string key = "data.file";
  const auto [N, n] = data_file_shape(path, d);
  h5::Handle file = h5::open_input(path, key);
  TokenData data;
  data.N = N;
  data.n = n;
  data.d = d;
  data.d_out = 1;
  try {
    data.tokens = h5::read_doubles(file, "/data/tokens");
    data.targets = h5::read_doubles(file, "/data/targets");
  } catch (const Error &e) {
    throw InputError(key_error(key, path, e.what()));
  }
  for (double v : data.tokens)
    if (!std::isfinite(v)) throw InputError(key_error(key, path, "/data/tokens has a non-finite value"));
  for (double v : data.targets)
    if (!std::isfinite(v)) throw InputError(key_error(key, path, "/data/targets has a non-finite value"));
  return data;
}

TokenData make_data(const DataConfig &cfg, long long d) {
  if (cfg.task == "icl-linear") return make_icl_linear(cfg.sequences, cfg.tokens, d, cfg.seed);
  if (cfg.task == "gaussian") return make_gaussian(cfg.sequences, cfg.tokens, d, cfg.seed);
  if (cfg.task == "file") return read_data_file(cfg.file, d);
  throw InputError(key_error("data.task", cfg.task, "unknown task"));
}

} // namespace mft
