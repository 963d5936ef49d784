#pragma once
// A trained model reused with its architecture: `mft forward|ntk|train
// --from FILE [--snapshot S]` takes the model's keys and the data from the
// run file FILE and the particles from one of its snapshots, as a
// checkpoint loader restores a model's settings with its weights.
#include "mft/core/config.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/runs/command_line.hpp"
#include "mft/runs/run_file.hpp"

#include <mpi.h>
#include <string>

namespace mft {

// The run file and snapshot a command reads its model from.
struct FromRun {
  std::string path;      // --from FILE ("" for none)
  RunFileSummary point;  // FILE as read and checked
  long long row = 0;     // the row of /particles (--snapshot, default the last complete)
  long long step = 0;    // its training step
  double tau = 0.0;
  explicit operator bool() const { return !path.empty(); }
  StoredData stored() const { return {"--from", path, point.N, point.n, point.N_test}; }
};

// Whether `key` belongs to the model a run file fixes (model.*, readout.*,
// loss.*, data.*, families.*): --from takes it from the file, and refuses
// a given value that differs.
bool model_key(const std::string &key);

// The configuration of `options.command` run from FILE = options.from: the
// model's and data's keys (model_key) from FILE's /config, a given one
// refused in one line naming both values when it differs; depth.* from the
// file unless given (the integrator of the same model); init.file and
// init.snapshot set to FILE and the snapshot's row (the run's record of its
// particles; other init.* keys refused: the particles are the file's); every
// other key (the command's own: train.*, ntk.*, cgf.*, forward.*, output.*,
// run.*, parallel.*) given or its default. Fills `from`. Collective on comm.
Config from_run_configuration(MPI_Comm comm, const Config &given_config, const CommandOptions &options,
                              FromRun &from);

// Reads the particles of from's snapshot into `particles` (every rank its
// share), checked finite. Collective on comm.
void read_from_run_particles(MPI_Comm comm, const FromRun &from, Particles &particles);

// mft forward and mft ntk: the configuration of `job`, with --from's model
// and data when options.from is given (from_run_configuration, filling
// `from`), resolved (resolve_config); with `write`, its output file checked
// before anything is computed. Collective on comm.
Config resolve_command_config(MPI_Comm comm, const Config &given_config, const CommandOptions &options,
                              const RunInfo &info, Job job, bool write, FromRun &from);

// With --from, the snapshot's particles into the problem (its fields
// refreshed); nothing without. Collective on comm.
void adopt_from_run_particles(MPI_Comm comm, const FromRun &from, Problem &problem);

// For init.file: the model keys (model.*, readout.*, loss.*, depth.*) whose
// values in the file's /config differ from `config`'s, as one line
// "init.file = F: its model differs from this run's in KEY (file A, here B),
// ..." ("" when none differ or the file holds no run's /config), naming
// `command` in its hint. Reads on the calling rank only.
std::string init_file_differences(const Config &config, const std::string &command);

// Where a command's particles come from, the header's line "particles: ...":
// --from's snapshot, init.file's, or drawn (init.seed and the resolved
// scales). `config` is resolved.
std::string particle_source(const Config &config, const FromRun &from);

} // namespace mft
