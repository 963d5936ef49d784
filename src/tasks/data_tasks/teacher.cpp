// teacher: the gaussian task's tokens labelled by another particle system,
// the teacher (data.teacher_heads heads per slice, drawn like the student
// with the streams of data.seed), through the same depth flow and readout:
// targets the student can fit exactly. The training sequences, then the
// held-out ones from their own streams; one teacher solve labels both.
#include "mft/tasks/task.hpp"

#include "mft/depth/depth.hpp"
#include "mft/model/field.hpp"
#include "mft/model/readout.hpp"

namespace mft {

MFT_TASK(teacher, "teacher", 0, "gaussian tokens labelled by a teacher particle system")

namespace {

long long teacher_heads(const Config &config) {
  return config.data.teacher_heads > 0 ? config.data.teacher_heads : config.model.heads;
}

TaskData make(const Config &config, MPI_Comm comm) {
  const DataConfig &c = config.data;
  TokenData data = make_gaussian(c.sequences, c.tokens, config.model.d, c.seed, training_streams(c.seed));
  const TokenData held_out =
      make_gaussian(c.test_sequences, c.tokens, config.model.d, c.seed, held_out_streams(c.test_seed));
  data.tokens.insert(data.tokens.end(), held_out.tokens.begin(), held_out.tokens.end());
  data.N += held_out.N;
  const Particles teacher = make_particles(config, comm, config.data.seed, teacher_heads(config));
  DepthField field(comm, data.N, data.n, teacher, config.model);
  DepthSolver solver(field, config.depth);
  std::vector<double> X1(data.tokens.size());
  solver.solve(data.tokens.data(), X1.data());
  const std::unique_ptr<Readout> readout = make_readout(config);
  data.targets = readout->predict(data, X1.data());
  data.d_out = readout->dim();
  TaskData out;
  out.train = std::move(data);
  out.test = split_off(out.train, c.sequences);
  return out;
}

// The teacher's particles (a share of them on every rank of the grid, with
// their kernel's copies), and with several sequence groups the teacher's
// forward solve of all N sequences at once on every rank.
std::vector<TaskMemory> memory(const Config &config, int head_ranks, int groups, long double data_bytes,
                               long double stages) {
  const long long T = teacher_heads(config);
  const ModelConfig &m = config.model;
  const long double share = static_cast<long double>((T + head_ranks * groups - 1) / (head_ranks * groups));
  const long double per_head = 2.0L * m.head_dim * m.d + static_cast<long double>(m.d) * m.d;
  std::vector<TaskMemory> out = {{"teacher particles", m.slices * share * 4 * per_head * sizeof(double),
                                  config.data.teacher_heads > 0 ? "data.teacher_heads" : "model.heads",
                                  std::to_string(T)}};
  if (groups > 1)
    out.push_back({"teacher's forward solve", data_bytes * (2 * stages + 4), "", ""});
  return out;
}

} // namespace

TaskEntry teacher_task() { return {make, nullptr, nullptr, nullptr, nullptr, memory}; }

} // namespace mft
