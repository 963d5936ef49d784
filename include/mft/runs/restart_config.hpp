#pragma once
// The configuration of a restarted training run: the file's own /config,
// changed only where a restart may change it (restart_may_change), and the
// check that what the run resolves still computes what the file's run did.
#include "mft/core/config.hpp"
#include "mft/runs/run_file.hpp"

#include <mpi.h>
#include <set>
#include <string>

namespace mft {

// A configuration value as messages show it: '' for the empty one.
std::string shown(const std::string &text);

// `mft train --restart FILE`: the keys of FILE's /config (defaults for keys
// added to the format after FILE was written), and of the keys in `given`
// (set on the command line or in --config) those a restart may change, with
// their values in `given_config`; parallel.* and run.* keys, which describe
// the machine rather than the run, are their defaults unless given. A given key that a restart may not change
// is refused unless its value is the file's: InputError `KEY = VALUE: why`,
// naming the file's value and the keys a restart may change. Collective on
// comm (every rank reads /config; all agree on an error). `option`: the
// command-line option that named the file (--restart or --resume), as the
// messages name it.
Config restart_configuration(MPI_Comm comm, const Config &given_config, const std::set<std::string> &given,
                             const std::string &restart, const std::string &option);

// `mft train --resume`: output.file when it exists (the run to continue),
// else "" (a new run). Rank 0 decides for all.
std::string resume_target(MPI_Comm comm, const Config &config);

// A restarted run must compute the same thing as the run that wrote the
// file: InputError naming the first key (but restart_may_change keys) whose
// value in the resolved `config` (the integrators' types after the PETSc
// options among them) differs from the file's.
void check_restart_config(const Config &config, const RunFileSummary &point, const std::string &path,
                          const std::string &option);

// A note for a restart whose file was written by another build than this
// one (its compiled_for or blas differ): the continued run rounds as this
// build does, so it need not equal an uninterrupted run bit for bit.
// Empty when both match, or the file does not say.
std::string build_difference(const std::string &path, const RunFileSummary &point);

} // namespace mft
