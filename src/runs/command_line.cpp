// The command line of the mft programs: configuration keys, an INI file and
// the options that are not keys (--restart, --from, --snapshot, --cgf), each
// allowed for its own command only.
#include "mft/runs/command_line.hpp"

#include "mft/runs/commands.hpp"

#include "mft/core/error.hpp"
#include "mft/train/optimizer.hpp"

#include <boost/program_options.hpp>

#include <sstream>

namespace po = boost::program_options;

namespace mft {
namespace {

// The options of the command line that are not configuration keys.
bool is_option(const std::string &name) {
  return name == "config" || name == "help" || name == "restart" || name == "from" ||
         name == "snapshot" || name == "cgf" || name == "resume" || name == "dry-run";
}

// Options without a value.
bool is_flag(const std::string &name) {
  return name == "help" || name == "cgf" || name == "resume" || name == "dry-run";
}

// How an error names what the user wrote: "model.heads", "--config".
std::string display_name(const std::string &option) {
  const std::string name = option.rfind("--", 0) == 0 ? option.substr(2) : option;
  return is_option(name) ? "--" + name : name;
}

// The value written after `--name` on the command line, `occurrence`-th time
// (0-based); "" if none.
std::string value_of(const std::vector<std::string> &args, const std::string &option, int occurrence) {
  const std::string flag = option.rfind("--", 0) == 0 ? option : "--" + option;
  int seen = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string value;
    if (args[i] == flag) {
      value = i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0 ? args[i + 1] : "";
    } else if (args[i].rfind(flag + "=", 0) == 0) {
      value = args[i].substr(flag.size() + 1);
    } else {
      continue;
    }
    if (seen++ == occurrence) return value;
  }
  return "";
}

} // namespace

Config parse_config(const std::vector<std::string> &args, CommandOptions *options) {
  po::options_description keys = config_key_options();
  po::options_description cmdline;
  cmdline.add_options()("config", po::value<std::string>(), "INI configuration file")(
      "help", "list the keys")("restart", po::value<std::string>(), "run file to continue")(
      "from", po::value<std::string>(), "run file to read")("snapshot", po::value<std::string>(),
                                                             "snapshot row")("cgf", "CGF test")(
      "resume", "restart output.file if it exists")("dry-run", "check, resolve and print; write nothing");
  const std::string command = options && !options->command.empty() ? options->command : "COMMAND";
  auto only = [&](const std::string &option, const char *owner) {
    throw InputError(key_error("--" + option, value_of(args, option, 0),
                               std::string("only mft ") + owner + " takes this option"));
  };
  cmdline.add(keys);

  // An option that takes a value, followed by another option: Boost would
  // take the next option as the value and report a stray argument instead.
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind("--", 0) != 0 || args[i].find('=') != std::string::npos) continue;
    const std::string name = args[i].substr(2);
    const bool takes_value = is_config_key(name) || (is_option(name) && !is_flag(name));
    if (takes_value && (i + 1 == args.size() || args[i + 1].rfind("--", 0) == 0))
      throw InputError(key_error(display_name(args[i]), "",
                                 (i + 1 == args.size() ? "needs a value"
                                                       : "needs a value (" + printable(args[i + 1]) +
                                                             " follows it, an option)") +
                                     "; a value that starts with '-' is written " + printable(args[i]) + "=VALUE"));
  }

  po::variables_map vm;
  try {
    const po::positional_options_description no_positionals;
    po::store(po::command_line_parser(args)
                  .options(cmdline)
                  .positional(no_positionals)
                  .style(po::command_line_style::unix_style &
                         ~po::command_line_style::allow_guessing &
                         ~po::command_line_style::allow_short)
                  .run(),
              vm);
  } catch (const po::unknown_option &e) {
    const std::string name = display_name(e.get_option_name());
    throw InputError(key_error(name, value_of(args, name, 0),
                               "unknown key on the command line" + did_you_mean(name) + "; mft " + command +
                                   " --help lists the keys"));
  } catch (const po::multiple_occurrences &e) {
    const std::string name = display_name(e.get_option_name());
    throw InputError(key_error(name, value_of(args, name, 1), "given more than once on the command line"));
  } catch (const po::invalid_command_line_syntax &e) {
    throw InputError(key_error(display_name(e.get_option_name()), "", "needs a value"));
  } catch (const po::too_many_positional_options_error &) {
    std::string extra;
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].rfind("--", 0) != 0 && (i == 0 || args[i - 1].rfind("--", 0) != 0)) {
        extra = args[i];
        break;
      }
    throw InputError(key_error("argument", extra, "unexpected (keys are given as --section.key value)"));
  } catch (const po::error &e) {
    throw InputError(key_error("argument", args.empty() ? "" : args.back(), e.what()));
  }
  if (vm.count("help")) {
    if (options) options->help = true;
    return Config{};
  }
  if (vm.count("restart")) {
    if (!options || options->command != "train") only("restart", "train (it continues a training run)");
    options->restart = vm["restart"].as<std::string>();
    if (options->restart.empty()) throw InputError(key_error("--restart", "", "needs a run file"));
  }
  if (vm.count("resume")) {
    if (!options || options->command != "train") only("resume", "train (it continues a training run)");
    if (vm.count("restart"))
      throw InputError(key_error("--resume", "", "--restart " + options->restart +
                                                     " names the file already; give one of the two"));
    options->resume = true;
  }
  if (vm.count("dry-run") && options) options->dry_run = true;
  if (vm.count("cgf") && (!options || options->command != "ntk")) only("cgf", "ntk");
  if (vm.count("from") || vm.count("snapshot") || vm.count("cgf")) {
    if (!options) only(vm.count("from") ? "from" : "snapshot", "forward, ntk and train");
    if (vm.count("from") && (!options->restart.empty() || options->resume))
      throw InputError(key_error("--from", vm["from"].as<std::string>(),
                                 std::string(options->resume ? "--resume" : "--restart") +
                                     " continues a run; --from starts a new one from a trained model: give one"));
    if (vm.count("from")) options->from = vm["from"].as<std::string>();
    if (vm.count("from") && options->from.empty()) throw InputError(key_error("--from", "", "needs a run file"));
    options->cgf = vm.count("cgf") > 0;
    if (vm.count("snapshot")) {
      const std::string text = vm["snapshot"].as<std::string>();
      options->snapshot = detail::parse_integer("--snapshot", text);
      if (options->from.empty()) throw InputError(key_error("--snapshot", text, "needs --from FILE"));
    }
  }
  std::map<std::string, std::string> from_file;
  if (vm.count("config")) {
    from_file = read_config_file(vm["config"].as<std::string>(), command);
    if (options) options->config_file = vm["config"].as<std::string>();
  }

  // Defaults, then the INI file, then the command line.
  Config c;
  for (const auto &option : keys.options()) {
    const std::string &name = option->long_name();
    const po::variable_value &v = vm[name];
    const auto ini = from_file.find(name);
    if (!v.defaulted()) {
      set_config_key(c, name, v.as<std::string>());
      if (options) options->given.insert(name);
    } else if (ini != from_file.end()) {
      set_config_key(c, name, ini->second);
      if (options) options->given.insert(name);
    }
  }
  return c; // checked across keys when resolved (resolve_config)
}

bool command_reads_key(const std::string &command, const std::string &key) {
  const CommandEntry *entry = find_command(command);
  return !entry || entry->reads(key);
}

std::string key_reference_markdown() {
  std::ostringstream s;
  s << "# Configuration keys\n\n"
       "Generated by `mft --key-reference` from the program's table of keys (a test keeps\n"
       "this file equal to it). A key is set in an INI file read with `--config FILE`\n"
       "(`[section]` then `key = value`) or on the command line as `--section.key value`;\n"
       "the command line wins over the file, the file over the default. `mft COMMAND\n"
       "--help` lists the keys COMMAND reads; `mft train --dry-run` prints the resolved\n"
       "configuration as an INI file. Every run file keeps its resolved configuration\n"
       "in `/config`, and `mft train --restart FILE` takes its keys from there: only\n"
       "those marked *restart* may be given again with another value. Keys marked *added*\n"
       "came after the format's first files: a file without one was computed with its\n"
       "default. A key read *only with* one value of another key (the keys an\n"
       "optimiser, loss, score map or data task owns) is refused with any other value\n"
       "of that key unless left at its default.\n";
  const po::options_description all = config_key_options();
  std::string section;
  for (const auto &option : all.options()) {
    const std::string key = option->long_name();
    const std::string here = key.substr(0, key.find('.'));
    if (here != section) {
      s << "\n## [" << here << "]\n\n| key | default | read by | meaning |\n|---|---|---|---|\n";
      section = here;
    }
    std::string readers;
    for (const CommandEntry &command : commands())
      if (command.reads(key)) readers += (readers.empty() ? "" : ", ") + std::string(command.name);
    if (const KeyReaders r = key_readers(key); !r.selector.empty())
      readers += "; only with " + r.selector + " = " + comma_list(r.values);
    if (restart_may_change(key)) readers += "; *restart*";
    if (key_added_to_format(key)) readers += "; *added*";
    std::string meaning = option->description();
    for (size_t at = 0; (at = meaning.find('|', at)) != std::string::npos; at += 2) meaning.replace(at, 1, "\\|");
    const std::string value = default_text(key);
    s << "| `" << key << "` | " << (value.empty() ? "(empty)" : "`" + value + "`") << " | " << readers << " | "
      << meaning << " |\n";
  }
  return s.str();
}

std::string command_help(const std::string &command) {
  std::ostringstream s;
  const std::string run = "mpirun -n P mft " + command;
  s << "usage: " << run << " [--config FILE] [--section.key VALUE ...] [-petsc_option ...]\n";
  if (command == "train")
    s << "   or: " << run << " --restart FILE [--train.steps S ...]\n"
      << "   or: " << run << " --resume [--config FILE ...]\n";
  s << "   or: " << run << " --from FILE [--snapshot S]" << (command == "ntk" ? " [--cgf]" : "")
    << (command == "train" ? " [--train.KEY VALUE ...]" : "") << "\n";
  s << "\n";
  if (const CommandEntry *entry = find_command(command)) s << entry->about();
  // The keys a restart may change, wrapped under the option's text.
  std::string may_change, line;
  for (const std::string &key : keys_a_restart_may_change()) {
    if (!command_reads_key(command, key)) continue;
    if (!line.empty() && line.size() + key.size() + 2 > 62) {
      may_change += line + ",\n                     ";
      line.clear();
    }
    line += (line.empty() ? "" : ", ") + key;
  }
  may_change += line;
  s << "\noptions:\n"
       "  --config FILE      INI file of keys ([section] key = value); the command line wins\n";
  if (command == "train")
    s << "  --restart FILE     continue the run in FILE from its last complete snapshot; every\n"
         "                     key comes from FILE's /config; keys given may only change\n"
         "                     " << may_change << "\n"
         "                     (output.file: continue in a copy there)\n"
         "  --resume           continue output.file as --restart does when it exists, else\n"
         "                     start it: one command for a job that may be requeued\n";
  s << "  --from FILE        a trained model: the model's and data's keys (model.*, readout.*,\n"
       "                     loss.*, data.*, families.*) from FILE's /config, a given one\n"
       "                     refused when it differs; depth.* from FILE unless given; the\n"
       "                     data of FILE's /data and the particles of its snapshot\n"
    << (command == "train" ? "                     (a new run: train.* and output.* as given)\n" : "")
    << "  --snapshot S       that snapshot's row of /particles (default -1: the last complete)\n";
  if (command == "ntk")
    s << "  --cgf              add the log-sum-exp (CGF) injectivity test (data.task = families)\n";
  s << "  --dry-run          check every input and resolve the configuration, then print it\n"
       "                     as INI (--config reads it back) with the run header and memory\n"
       "                     estimate as comments; compute and write nothing\n"
       "  --help, -h, -help  this help\n"
       "  --petsc-help       PETSc's options of mft's integrators (-depth_ts_*, -train_ts_*)\n"
       "Other single-dash options go to PETSc; one that no integrator reads is refused.\n\n";
  po::options_description keys("Keys " + command + " reads (INI: [section] key = value; command line: "
                               "--section.key value)");
  const po::options_description all = config_key_options();
  for (const auto &option : all.options())
    if (command_reads_key(command, option->long_name())) keys.add(option);
  s << keys;
  return s.str();
}

} // namespace mft
