#include "mft/runs/build_model.hpp"

#include "mft/core/error.hpp"
#include "mft/core/petsc_session.hpp"
#include "mft/tasks/data.hpp"
#include "mft/tasks/task.hpp"
#include "mft/runs/run_file.hpp"

#include <sstream>


namespace mft {

Model build_model(MPI_Comm comm, Config &config, Job job, const StoredData *stored,
                  MemoryEstimate *estimate) {
  const MemoryLimit limit = memory_limit(comm, config);
  Model model;
  collectively(comm, [&] { model.grid = std::make_unique<ProcessGrid>(comm, config.parallel.sequence_groups); });
  const ProcessGrid &grid = *model.grid;
  collectively(comm, [&] {
    // The sizes first, from the configuration or the file's shapes alone.
    // Held-out sequences count with the training ones (tokens and states).
    long long N = config.data.sequences + config.data.test_sequences, n = config.data.tokens;
    std::string key = "data.sequences", value = std::to_string(config.data.sequences);
    if (stored) {
      N = stored->N + stored->N_test, n = stored->n, key = stored->key, value = stored->path;
    } else if (config.data.task == "file") {
      const DataFileShape shape = data_file_shape(config.data.file, config.readout.dim);
      // The file decides d, as it decides N and n; a model.d set otherwise contradicts it.
      if (config.model.d != ModelConfig{}.d && config.model.d != shape.train.d)
        throw InputError(key_error("model.d", std::to_string(config.model.d),
                                   "data.file " + config.data.file + " has tokens of d = " +
                                       std::to_string(shape.train.d) + " (leave model.d out: the file decides it)"));
      config.model.d = shape.train.d;
      N = shape.train.N + shape.test.N, n = shape.train.n;
      key = "data.file", value = config.data.file;
    }
    const MemoryEstimate e = estimate_memory(limit, config, N, n, grid.head_ranks(), grid.groups(), job, key, value);
    require_fits(e, config, N, n, job, key, value);
    if (estimate) *estimate = e;

    if (stored) {
      model.data = read_run_data(stored->path, stored->key, config.model.d, config.readout.dim,
                                 &model.test_data);
    } else {
      TaskData task = make_task_data(config, comm);
      model.data = std::move(task.train);
      model.test_data = std::move(task.test);
    }
    config.data.sequences = model.data.N; // task = file: the file decides N, n and N_test
    config.data.tokens = model.data.n;
    config.data.test_sequences = model.test_data.N;
    validate(config);
    // Every group draws the same particles (streams keyed by seed, species, l, m).
    model.particles = std::make_unique<Particles>(
        make_particles(config, grid.heads(), config.init.seed, config.model.heads));
    model.field_options = FieldOptions::of(config.model);
    model.field = std::make_unique<DepthField>(grid.heads(), grid.block(model.data.N).count(), model.data.n,
                                               *model.particles, model.field_options);
    model.solver = std::make_unique<DepthSolver>(*model.field, config.depth, job != Job::Forward);
    config.depth.ts_type = model.solver->ts_type(); // as resolved by the options database
    config.depth.rk_type = model.solver->rk_type();
    model.depth_config = config.depth;
    model.readout = std::make_unique<Readout>(config);
    model.loss = make_loss(config.loss.kind);
    if (model.test_data.N > 0) {
      model.test_field = std::make_unique<DepthField>(grid.heads(), grid.block(model.test_data.N).count(),
                                                      model.test_data.n, *model.particles, model.field_options);
      model.test_solver = std::make_unique<DepthSolver>(*model.test_field, model.depth_config, false);
    }
  });
  return model;
}

bool end_of_setup(const Config &config, const RunInfo &info, const std::string &command, const std::string &header,
                  bool dry_run, std::ostream *out) {
  refuse_unused_petsc_options(command, info.petsc_options);
  if (!dry_run) return false;
  if (out) {
    *out << "# mft " << command << " --dry-run: nothing computed or written. The resolved configuration\n"
         << "# below is an INI file: mft " << command << " --config FILE reads it back.\n";
    std::istringstream lines(header);
    for (std::string line; std::getline(lines, line);) *out << "# " << line << "\n";
    *out << "\n" << config_as_ini(config) << std::flush;
  }
  return true;
}

std::string describe_grid(const ProcessGrid &grid) {
  const int ranks = grid.head_ranks() * grid.groups();
  std::string out = std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks");
  if (grid.groups() > 1)
    out += " = " + std::to_string(grid.head_ranks()) + (grid.head_ranks() == 1 ? " head rank" : " head ranks") +
           " x " + std::to_string(grid.groups()) + " sequence groups";
  return out;
}

std::string describe_variant(const Config &c, const Model &model) {
  std::string out = "attention " + c.model.attention + (c.model.causal ? ", causal" : "") + " | readout " +
                    c.readout.kind + ", d_out " + std::to_string(c.readout.dim) + " | loss " + c.loss.kind;
  if (model.test_data.N > 0) out += " | " + std::to_string(model.test_data.N) + " held-out sequences";
  return out;
}

} // namespace mft
