#pragma once
// `mft train`: data -> particles -> the gradient flow in training time, with
// a progress line every train.print_every steps, /history every step and a
// particle snapshot every output.snapshot_every steps (and the first and
// last). Collective on comm.
#include "mft/runs/command_line.hpp"
#include "mft/core/config.hpp"
#include "mft/runs/run_file.hpp"

#include <mpi.h>
#include <ostream>
#include <string>
#include <limits>
#include <vector>

namespace mft {

struct TrainResult {
  bool stopped = false;             // by a signal or train.max_walltime: exit kExitStopped
  long long last_step = 0;          // step of the final particles
  double risk_initial = 0.0;
  double risk_final = 0.0;
  std::vector<double> risks;        // R of every history row
  std::vector<double> theta_final;  // this rank's particles (flat layout of Particles)
  double seconds = 0.0;             // wall time of the training loop
  // With held-out data: the last row's held-out risk, its ratio to the
  // reference baseline's (named) and, for a task of symbols, its gap to it;
  // NaN without them.
  double test_risk_final = std::numeric_limits<double>::quiet_NaN();
  double baseline_gap_final = std::numeric_limits<double>::quiet_NaN();
  double baseline_ratio_final = std::numeric_limits<double>::quiet_NaN();
  std::string baseline, baseline_meaning;
};

// `options.restart`: a run file to continue from its last complete snapshot,
// with the file's configuration (restart_configuration: the keys in
// options.given may change only what a restart may change); the run appends
// to that file, or, when output.file is given and names another file, to a
// copy of it there. `options.resume`: the same for output.file when it
// exists, else a new run. `options.dry_run`: every check, then the resolved
// configuration printed (end_of_setup); nothing computed or written.
TrainResult run_train(MPI_Comm comm, const Config &config, const RunInfo &info, std::ostream *log,
                      bool write = true, const CommandOptions &options = {});

} // namespace mft
