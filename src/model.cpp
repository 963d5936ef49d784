#include "mft/model.hpp"

#include "mft/error.hpp"
#include "mft/families.hpp"
#include "mft/run_file.hpp"

#include <tuple>

namespace mft {

Particles make_particles(const Config &c, MPI_Comm comm, std::uint64_t seed, long long heads) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const ModelConfig &m = c.model;
  Particles p{HeadParticles(m.slices, heads, m.head_dim, m.d, HeadOwnership::block(heads, rank, size)),
              NeuronParticles(m.slices, m.mlp_particles, m.mlp_width, m.d,
                              HeadOwnership::block(m.mlp_particles, rank, size))};
  p.heads.initialise(seed, c.init.sigma_qk, c.init.sigma_v);
  p.neurons.initialise(seed, c.init.sigma_w1, c.init.sigma_w2);
  return p;
}

TokenData make_teacher_data(const Config &config, MPI_Comm comm) {
  TokenData data = make_gaussian(config.data.sequences, config.data.tokens, config.model.d,
                                 config.data.seed);
  const long long heads = config.data.teacher_heads > 0 ? config.data.teacher_heads : config.model.heads;
  const Particles teacher = make_particles(config, comm, config.data.seed, heads);
  DepthField field(comm, data.N, data.n, teacher, parse_activation(config.model.activation));
  DepthSolver solver(field, config.depth);
  std::vector<double> X1(data.tokens.size());
  solver.solve(data.tokens.data(), X1.data());
  data.targets = Readout(config).predict(data, X1.data());
  return data;
}

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
