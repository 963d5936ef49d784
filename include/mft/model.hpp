#pragma once
// A configured model on this rank: data, particles, the field and the depth
// solver, built the same way by every command.
#include "mft/config.hpp"
#include "mft/data.hpp"
#include "mft/depth.hpp"
#include "mft/field.hpp"
#include "mft/memory.hpp"
#include "mft/particles.hpp"
#include "mft/readout.hpp"

#include <mpi.h>
#include <memory>
#include <string>

namespace mft {

// This rank's particles of the configured architecture, `heads` heads per
// slice, drawn from rho_0 with the streams of `seed`.
Particles make_particles(const Config &config, MPI_Comm comm, std::uint64_t seed, long long heads);

// The `teacher` task: iid N(0, I) tokens (as `gaussian`) and targets read out
// from a teacher particle system of the same architecture, data.teacher_heads
// heads drawn with the student's law from seed data.seed. With data.seed =
// init.seed and the same width the teacher is the student (R = 0).
TokenData make_teacher_data(const Config &config, MPI_Comm comm);

struct Model {
  TokenData data;
  std::unique_ptr<Particles> particles;
  std::unique_ptr<DepthField> field;
  std::unique_ptr<DepthSolver> solver;
  std::unique_ptr<Readout> readout;
};

// The /data of a checked run file (a restart, mft ntk --from), used instead
// of data.task's: `key` names where it came from (--restart, --from).
struct StoredData {
  std::string key, path;
  long long N = 0, n = 0;
};

// Builds the model of `config` for `job` collectively; updates `config` with
// what was resolved (N and n of a data file, the depth TS after the options
// database). Before anything large is allocated, estimates the memory per
// rank (into `estimate`, when given) and refuses a run that does not fit or
// whose sizes overflow an index. Throws InputError / Error on every rank
// alike.
Model build_model(MPI_Comm comm, Config &config, Job job, const StoredData *stored = nullptr,
                  MemoryEstimate *estimate = nullptr);
// Tests and benchmarks: a training (adjoint) or forward model of data.task.
inline Model build_model(MPI_Comm comm, Config &config, bool adjoint) {
  return build_model(comm, config, adjoint ? Job::Train : Job::Forward);
}

} // namespace mft
