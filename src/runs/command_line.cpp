// The command line of the mft programs: configuration keys, an INI file and
// the options that are not keys (--restart, --from, --snapshot, --cgf), each
// allowed for its own command only.
#include "mft/runs/command_line.hpp"

#include "mft/core/error.hpp"

#include <boost/program_options.hpp>

namespace po = boost::program_options;

namespace mft {
namespace {

// The options of the command line that are not configuration keys.
bool is_option(const std::string &name) {
  return name == "config" || name == "help" || name == "restart" || name == "from" ||
         name == "snapshot" || name == "cgf";
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
                                                             "snapshot row")("cgf", "CGF test");
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
    const bool takes_value = is_config_key(name) || (is_option(name) && name != "help" && name != "cgf");
    if (takes_value && (i + 1 == args.size() || args[i + 1].rfind("--", 0) == 0))
      throw InputError(key_error(display_name(args[i]), "",
                                 i + 1 == args.size() ? "needs a value"
                                                      : "needs a value (" + printable(args[i + 1]) +
                                                            " follows it, an option)"));
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
                               "unknown key on the command line; mft " + command + " --help lists the keys"));
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
  if (vm.count("from") || vm.count("snapshot") || vm.count("cgf")) {
    if (!options || options->command != "ntk")
      only(vm.count("cgf") ? "cgf" : vm.count("from") ? "from" : "snapshot", "ntk");
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
  validate(c, c.data.task != "file"); // a data file decides d
  return c;
}

} // namespace mft
