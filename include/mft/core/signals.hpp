#pragma once
// Clean stops on request: SIGTERM, SIGINT and SIGUSR1 (what mpirun, Slurm
// and users send before a time limit) only set a flag here; the training
// loop checks it after every step, the ranks agree with an all-reduce, and
// the run ends with a snapshot, a closed file and exit code kExitStopped.
#include <mpi.h>

namespace mft {

// Exit code of a run stopped early by a signal or train.max_walltime; the
// run file is complete and `mft train --restart FILE` continues it
// (EX_TEMPFAIL of sysexits.h: "try again").
constexpr int kExitStopped = 75;

// Installs the handlers (idempotent).
void install_stop_handlers();

// The signal received so far on this rank, 0 if none.
int stop_signal();

// Name of a signal number ("SIGTERM").
const char *signal_name(int signal);

} // namespace mft
