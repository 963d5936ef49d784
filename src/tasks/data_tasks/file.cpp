// file: the sequences of an HDF5 data file (data.file: /data/tokens (N, n,
// d), /data/targets (N, d_out) [, /data/test_tokens, /data/test_targets]),
// which decides N, n, d and the held-out N.
#include "mft/tasks/task.hpp"

#include "mft/core/error.hpp"

namespace mft {

MFT_TASK(file, "file", kReadsFile, "the sequences of the HDF5 file data.file")

namespace {

TaskData make(const Config &config, MPI_Comm) {
  TaskData out;
  out.train = read_data_file(config.data.file, config.readout.dim, &out.test);
  return out;
}

void resolve_sizes(Config &c) {
  if (c.data.file.empty()) throw InputError(key_error("data.file", c.data.file, "data.task = file needs a file name"));
  const DataFileShape shape = data_file_shape(c.data.file, c.readout.dim);
  // The file decides d, as it decides N and n; a model.d set otherwise contradicts it.
  if (c.model.d != ModelConfig{}.d && c.model.d != shape.train.d)
    throw InputError(key_error("model.d", std::to_string(c.model.d),
                               "data.file " + c.data.file + " has tokens of d = " + std::to_string(shape.train.d) +
                                   " (leave model.d out: the file decides it)"));
  c.model.d = shape.train.d;
  c.data.sequences = shape.train.N;
  c.data.tokens = shape.train.n;
  c.data.test_sequences = shape.test.N;
}

std::vector<std::pair<std::string, std::string>> inputs(const Config &c) { return {{"data.file", c.data.file}}; }

} // namespace

TaskEntry file_task() { return {make, nullptr, nullptr, resolve_sizes, inputs, nullptr}; }

} // namespace mft
