// gaussian: tokens N(0, I), targets a fixed linear function of the mean
// token (weights from data.seed); sequence i draws from a stream of its own.
#include "mft/tasks/task.hpp"

namespace mft {

MFT_TASK(gaussian, "gaussian", kStreams, "tokens N(0, I), targets linear in the mean token")

namespace {

TokenData sequences(const Config &config, long long count, const SequenceStreams &stream_of) {
  const DataConfig &data = config.data;
  const long long d = config.model.d, d_out = config.readout.dim;
  return make_gaussian(count, data.tokens, d, data.seed, stream_of, d_out);
}

} // namespace

TaskEntry gaussian_task() { return {nullptr, sequences, nullptr, nullptr, nullptr, nullptr}; }

} // namespace mft
