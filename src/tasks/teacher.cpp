#include "mft/tasks/teacher.hpp"

#include "mft/depth/depth.hpp"
#include "mft/model/field.hpp"
#include "mft/model/readout.hpp"
#include "mft/tasks/data.hpp"

namespace mft {

TokenData make_teacher_data(const Config &config, MPI_Comm comm) {
  TokenData data = make_gaussian(config.data.sequences + config.data.test_sequences,
                                 config.data.tokens, config.model.d, config.data.seed);
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
