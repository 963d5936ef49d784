#include "mft/runs/build_model.hpp"

#include "mft/core/error.hpp"
#include "mft/tasks/data.hpp"
#include "mft/tasks/families.hpp"
#include "mft/tasks/teacher.hpp"
#include "mft/runs/run_file.hpp"

#include <tuple>

namespace mft {

Model build_model(MPI_Comm comm, Config &config, Job job, const StoredData *stored,
                  MemoryEstimate *estimate) {
  const MemoryLimit limit = memory_limit(comm, config);
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  Model model;
  collectively(comm, [&] {
    // The sizes first, from the configuration or the file's shapes alone.
    long long N = config.data.sequences, n = config.data.tokens;
    std::string key = "data.sequences", value = std::to_string(N);
    if (stored) {
      N = stored->N, n = stored->n, key = stored->key, value = stored->path;
    } else if (config.data.task == "file") {
      std::tie(N, n) = data_file_shape(config.data.file, config.model.d);
      key = "data.file", value = config.data.file;
    }
    const MemoryEstimate e = estimate_memory(limit, config, N, n, ranks, job, key, value);
    require_fits(e, config, N, n, job, key, value);
    if (estimate) *estimate = e;

    if (stored)
      model.data = read_run_data(stored->path, stored->key, config.model.d);
    else
      model.data = config.data.task == "teacher"    ? make_teacher_data(config, comm)
                   : config.data.task == "families" ? make_families(config)
                                                    : make_data(config.data, config.model.d);
    config.data.sequences = model.data.N; // task = file: the file decides N and n
    config.data.tokens = model.data.n;
    validate(config);
    model.particles = std::make_unique<Particles>(
        make_particles(config, comm, config.init.seed, config.model.heads));
    model.field = std::make_unique<DepthField>(comm, model.data.N, model.data.n, *model.particles,
                                               parse_activation(config.model.activation));
    model.solver = std::make_unique<DepthSolver>(*model.field, config.depth, job != Job::Forward);
    config.depth.ts_type = model.solver->ts_type(); // as resolved by the options database
    config.depth.rk_type = model.solver->rk_type();
    model.readout = std::make_unique<Readout>(config);
  });
  return model;
}

} // namespace mft
