#pragma once
// `mft forward`: data -> particles -> forward solve in depth -> readout ->
// output file. Collective on comm.
#include "mft/core/config.hpp"
#include "mft/runs/command_line.hpp"
#include "mft/runs/run_file.hpp"

#include <mpi.h>
#include <ostream>
#include <vector>

namespace mft {

struct ForwardResult {
  double risk = 0.0;
  std::vector<double> tokens_final; // X(1) of this group's block of sequences, block x n x d
  std::vector<double> predictions;  // yhat, N
  double seconds = 0.0;             // wall time of the depth solve
  // forward.tokens_depth: this group's block of the tokens at the K + 1
  // depths, block x (K + 1) x n x d, and the depths.
  std::vector<double> tokens_depth, depths;
  double drift = 0.0; // a token norm's: the tokens' largest drift from its constraint
};

// Runs the forward problem of `config` and writes config.output.file (unless
// `write` is false). Progress goes to `log` on rank 0 (nullptr: silent).
// options.from: the model, data and particles of a run file's snapshot
// (from_run.hpp). options.dry_run: every check, then the resolved
// configuration printed (end_of_setup); nothing computed or written. Throws
// InputError / Error on every rank alike.
ForwardResult run_forward(MPI_Comm comm, const Config &config, const RunInfo &info, std::ostream *log,
                          bool write = true, const CommandOptions &options = {});

} // namespace mft
