#pragma once
// Clean stops on request: SIGTERM, SIGINT and SIGUSR1 (what mpirun, Slurm
// and users send before a time limit) only set a flag here; the training
// loop checks it after every step, the ranks agree with an all-reduce, and
// the run ends with a snapshot, a closed file and exit code kExitStopped.
#include <mpi.h>

#include <stdexcept>

namespace mft {

// Exit code of a run stopped early by a signal or train.max_walltime; the
// run file is complete and `mft train --restart FILE` continues it
// (EX_TEMPFAIL of sysexits.h: "try again").
constexpr int kExitStopped = 75;

// Installs the handlers (idempotent). mft's main installs them first of
// all, before MPI and PETSc start: a stop asked for during start-up is
// remembered, and the set-up ends with it (StoppedAtStartup) before anything
// is written; a second one during start-up ends the process at once.
void install_stop_handlers();

// Gives the signals their default action again (a command that has no
// clean stop of its own, past its set-up).
void restore_default_stop_handlers();

// A stop asked for before a command's set-up ended: every rank agreed on it
// (exit kExitStopped, nothing written).
class StoppedAtStartup : public std::runtime_error {
public:
  explicit StoppedAtStartup(int signal);
};

// Throws StoppedAtStartup on every rank of comm if any rank has received a
// stop signal (collective).
void end_startup_if_stopped(MPI_Comm comm);

// The signal received so far on this rank, 0 if none.
int stop_signal();

// Name of a signal number ("SIGTERM").
const char *signal_name(int signal);

} // namespace mft
