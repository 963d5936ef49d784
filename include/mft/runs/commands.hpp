#pragma once
// The commands of `mft COMMAND`, registered as the other entries are: each
// one's name, the paragraph of its help, the keys it reads and how it runs.
// The program dispatches through the table; --help and the key reference
// read it.
#include "mft/core/config.hpp"
#include "mft/runs/command_line.hpp"
#include "mft/runs/run_file.hpp"

#include <mpi.h>

#include <ostream>
#include <string>
#include <vector>

namespace mft {

struct CommandEntry {
  const char *name;
  std::string (*about)();                // the paragraph of its --help
  bool (*reads)(const std::string &key); // whether it reads a configuration key
  // Runs it on comm; the program's exit status (0, or kExitStopped).
  int (*run)(MPI_Comm comm, const Config &config, const CommandOptions &options, const RunInfo &info,
             std::ostream *log);
};

// train, forward, ntk: in the order of the help.
const std::vector<CommandEntry> &commands();
// The command named `name`, or null.
const CommandEntry *find_command(const std::string &name);
// Their names, as "train, forward, ntk".
std::string command_names();

} // namespace mft
