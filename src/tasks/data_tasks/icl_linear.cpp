// icl-linear: in-context linear regression (MODEL.md §1). Each sequence has
// its own weights: n - 1 examples (x, <w, x>) and a query whose label the
// readout predicts; sequence i draws from a stream of its own.
#include "mft/tasks/task.hpp"

#include "mft/core/error.hpp"

namespace mft {

MFT_TASK(icl_linear, "icl-linear", kStreams, "in-context linear regression: examples (x, <w, x>) and a query")

namespace {

TokenData sequences(const Config &config, long long count, const SequenceStreams &stream_of) {
  const DataConfig &data = config.data;
  const long long d = config.model.d, d_out = config.readout.dim;
  return make_icl_linear(count, data.tokens, d, stream_of, d_out);
}

void check(const Config &c) {
  if (c.data.tokens < 2)
    throw InputError(key_error("data.tokens", std::to_string(c.data.tokens),
                               "data.task = icl-linear needs n >= 2 (examples and a query)"));
  if (c.model.d < c.readout.dim + 1)
    throw InputError(key_error("model.d", std::to_string(c.model.d),
                               "data.task = icl-linear needs d >= readout.dim + 1 (inputs and labels)"));
}

} // namespace

TaskEntry icl_linear_task() { return {nullptr, sequences, check, nullptr, nullptr, nullptr}; }

} // namespace mft
