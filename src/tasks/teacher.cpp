#include "mft/tasks/teacher.hpp"

#include "mft/depth/depth.hpp"
#include "mft/model/field.hpp"
#include "mft/model/readout.hpp"
#include "mft/tasks/data.hpp"

namespace mft {

TokenData make_teacher_data(const Config &config, MPI_Comm comm) {
  // The gaussian task's tokens: the training sequences, then the held-out
  // ones from their own streams; one teacher solve labels both.
  const DataConfig &c = config.data;
  TokenData data = make_gaussian(c.sequences, c.tokens, config.model.d, c.seed, training_streams(c.seed));
  const TokenData held_out =
      make_gaussian(c.test_sequences, c.tokens, config.model.d, c.seed, held_out_streams(c.test_seed));
  data.tokens.insert(data.tokens.end(), held_out.tokens.begin(), held_out.tokens.end());
  data.N += held_out.N;
  const long long heads = config.data.teacher_heads > 0 ? config.data.teacher_heads : config.model.heads;
  const Particles teacher = make_particles(config, comm, config.data.seed, heads);
  DepthField field(comm, data.N, data.n, teacher, FieldOptions::of(config.model));
  DepthSolver solver(field, config.depth);
  std::vector<double> X1(data.tokens.size());
  solver.solve(data.tokens.data(), X1.data());
  const Readout readout(config);
  data.targets = readout.predict(data, X1.data());
  data.d_out = readout.dim();
  return data;
}

} // namespace mft
