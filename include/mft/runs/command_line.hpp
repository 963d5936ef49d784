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
  bool dry_run = false;      // --dry-run: check and resolve, print, write nothing
  std::string restart;       // train: --restart FILE
  bool resume = false;       // train: --resume (restart output.file when it exists)
  std::string from;          // forward, ntk, train: --from FILE (a trained model)
  long long snapshot = -1;   // --from: --snapshot S (row of /particles; -1: the last)
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
// --help was given. The checks across keys come when the configuration is
// resolved (resolve_config).
Config parse_config(const std::vector<std::string> &args, CommandOptions *options = nullptr);

// `mft COMMAND --help`: the command's usage, its options and the keys it
// reads (command_reads_key).
std::string command_help(const std::string &command);

// docs/CONFIG.md: every key, section by section, with its default, the
// commands that read it and its meaning, as Markdown (`mft --key-reference`;
// a test keeps the file equal to it).
std::string key_reference_markdown();

// docs/FORMAT.md's tables of a training run's datasets: /particles (every
// species' matrices), /history (every column, when a run has it) and
// /optimizer (each method's state), as Markdown (`mft --format-reference`;
// a test keeps each table in the file).
std::string format_reference_markdown();

// Whether `command` reads `key` (its entry of commands.hpp; any key for a
// name that is not a command).
bool command_reads_key(const std::string &command, const std::string &key);

} // namespace mft
