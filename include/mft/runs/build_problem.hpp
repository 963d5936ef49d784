#pragma once
// The configuration resolved once, and the problem built from it on this
// rank (train/problem.hpp), the same way for every command: sizes and memory
// first, then data, particles, field, depth solver and readout.
#include "mft/core/config.hpp"
#include "mft/runs/memory.hpp"
#include "mft/runs/run_file.hpp"
#include "mft/tasks/problem.hpp"

#include <mpi.h>
#include <memory>
#include <ostream>
#include <string>

namespace mft {

// The /data of a checked run file (a restart, mft ntk --from), used instead
// of data.task's: `key` names where it came from (--restart, --from).
struct StoredData {
  std::string key, path;
  long long N = 0, n = 0;
  long long N_test = 0;
};

// The configuration a run computes with, from the user's (the defaults,
// the INI file and the command line, or a restart's file): N, n and d of a
// data file or of a run file's /data (`stored`), the integrators' types as
// the options database chooses them (-depth_ts_type, -depth_ts_rk_type,
// -train_ts_type for a training job), and every check across keys. What
// the run builds from and /config records; nothing changes it after.
// Collective: InputError on every rank alike.
Config resolve_config(MPI_Comm comm, const Config &user, Job job, const StoredData *stored = nullptr);

// Builds the problem of the resolved `config` for `job` collectively. Before
// anything large is allocated, estimates the memory per rank (into
// `estimate`, when given) and refuses a run that does not fit or whose
// sizes overflow an index. Throws InputError / Error on every rank alike.
Problem build_problem(MPI_Comm comm, const Config &config, Job job, const StoredData *stored = nullptr,
                  MemoryEstimate *estimate = nullptr);
// The end of a command's set-up, after every input is checked and the
// integrators have read their options, before anything is computed or
// written: refuses a PETSc option of the command line (info.petsc_options)
// that nothing read (refuse_unused_petsc_options);
// with `dry_run`, prints on rank 0 (`out`) `header` as INI comments and the
// resolved configuration as INI (what --config reads back) and returns true:
// the command stops there. A stop signal received by any rank of comm
// during the set-up ends the command here (StoppedAtStartup, collective).
bool end_of_setup(MPI_Comm comm, const Config &config, const RunInfo &info, const std::string &command,
                  const std::string &header, bool dry_run, std::ostream *out);

// One line for the run headers: the variant of the model (score map, mask,
// readout, loss) and the held-out data, e.g. "attention relu, causal |
// readout mean, d_out 10 | loss cross-entropy | 359 held-out sequences".
std::string describe_variant(const Config &config, const Problem &problem);

// "4 ranks = 2 head ranks x 2 sequence groups" (or "2 ranks" on one group).
std::string describe_grid(const ProcessGrid &grid);

// Tests and benchmarks: a training (adjoint) or forward model of data.task,
// `config` resolved in place.
inline Problem build_problem(MPI_Comm comm, Config &config, bool adjoint) {
  const Job job = adjoint ? Job::Train : Job::Forward;
  config = resolve_config(comm, config, job);
  return build_problem(comm, config, job);
}

} // namespace mft
