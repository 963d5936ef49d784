#include "mft/forward_run.hpp"

#include "mft/data.hpp"
#include "mft/depth.hpp"
#include "mft/error.hpp"
#include "mft/field.hpp"
#include "mft/particles.hpp"
#include "mft/readout.hpp"

#include <cstdio>
#include <memory>

namespace mft {

ForwardResult run_forward(MPI_Comm comm, Config config, const RunInfo &info, std::ostream *log,
                          bool write) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::ostream *out = rank == 0 ? log : nullptr;

  TokenData data;
  std::unique_ptr<HeadParticles> heads;
  std::unique_ptr<DepthField> field;
  std::unique_ptr<DepthSolver> solver;
  collectively(comm, [&] {
    data = make_data(config.data, config.model.d);
    config.data.sequences = data.N; // task = file: the file decides N and n
    config.data.tokens = data.n;
    validate(config);
    heads = std::make_unique<HeadParticles>(config.model.slices, config.model.heads,
                                            config.model.head_dim, config.model.d,
                                            HeadOwnership::block(config.model.heads, rank, size));
    heads->initialise(config.init.seed, config.init.sigma_qk, config.init.sigma_v);
    field = std::make_unique<DepthField>(comm, data.N, data.n, *heads);
    solver = std::make_unique<DepthSolver>(*field, config.depth);
    config.depth.ts_type = solver->ts_type(); // as resolved by the options database
    config.depth.rk_type = solver->rk_type();
  });

  if (out) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "mft forward: N=%lld n=%lld d=%lld | M=%lld heads x L=%lld slices, d_h=%lld | "
                  "depth TS %s%s%s, %lld steps | %d ranks\n",
                  data.N, data.n, data.d, config.model.heads, config.model.slices,
                  config.model.head_dim, solver->ts_type().c_str(),
                  solver->ts_type() == "rk" ? " " : "",
                  solver->ts_type() == "rk" ? solver->rk_type().c_str() : "", solver->steps(), size);
    *out << line << std::flush;
  }

  ForwardResult result;
  result.tokens_final.resize(data.tokens.size());
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  solver->solve(data.tokens.data(), result.tokens_final.data());
  result.seconds = MPI_Wtime() - t0;

  const Readout readout(config);
  result.predictions = readout.predict(data, result.tokens_final.data());
  result.risk = readout.risk(data, result.tokens_final.data());

  if (out) {
    char line[256];
    std::snprintf(line, sizeof line, "risk = %.17g\n", result.risk);
    *out << line;
    std::snprintf(line, sizeof line, "depth solve: %.3f s, %lld velocity evaluations\n",
                  result.seconds, field->evaluations());
    *out << line << std::flush;
  }

  if (write) {
    std::unique_ptr<RunFile> file;
    collectively(comm, [&] {
      file = std::make_unique<RunFile>(config.output.file, comm, config, info, data, *heads);
    });
    file->append_snapshot(0, 0.0, *heads);
    file->write_forward(data, result.tokens_final.data(), result.predictions, result.risk);
    file->close();
    if (out) *out << "wrote " << config.output.file << "\n" << std::flush;
  }
  return result;
}

} // namespace mft
