#pragma once
// The command line of the mft programs (configuration keys, --config and the
// options of each command).
#include "mft/core/config.hpp"

#include <set>
#include <string>
#include <vector>

namespace mft {

// The options of a command that are not configuration keys.
struct CommandOptions {
  std::string command; // forward | train | ntk: decides which options apply
  bool help = false;
  std::string restart;       // train: --restart FILE
  std::string from;          // ntk: --from FILE
  long long snapshot = -1;   // ntk: --snapshot S (row of /particles; -1: the last)
  bool cgf = false;          // ntk: --cgf
  std::set<std::string> given; // keys set on the command line or in the INI file
  std::string config_file;     // --config FILE
};

// Parses the mft share of the command line (without the subcommand word).
// `--config FILE` names the INI file. Throws InputError of the form
// `KEY = VALUE: why` on any unknown key, key given twice, missing value,
// malformed number or invalid value, or an option the command does not take;
// every value of the INI file is checked, also those the command line
// overrides, and its errors name the file and line. Sets options->help when
// --help was given (and then does not validate).
Config parse_config(const std::vector<std::string> &args, CommandOptions *options = nullptr);

} // namespace mft
