#include "mft/config.hpp"

#include "config_keys.hpp"
#include "mft/error.hpp"
#include "mft/ini.hpp"

#include <boost/program_options.hpp>

#include <sstream>

namespace po = boost::program_options;

namespace mft {
namespace {

using detail::Key;
using detail::key_table;
using detail::parse_integer;

po::options_description describe_keys() {
  po::options_description desc("Configuration keys (INI: [section] key = value; command line: --section.key value)");
  for (const Key &k : key_table())
    desc.add_options()(k.name, po::value<std::string>()->default_value(k.default_text), k.help);
  return desc;
}

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

const Key *find_key(const std::string &name) {
  for (const Key &k : key_table())
    if (name == k.name) return &k;
  return nullptr;
}

// The INI file's values, each checked on its own (an unknown key, a second
// occurrence or a bad value is an error even when the command line sets the
// same key), with the file and line in every message.
std::map<std::string, std::string> read_config_file(const std::string &path, const std::string &command) {
  std::map<std::string, std::string> values;
  std::map<std::string, int> first_line;
  for (const IniEntry &e : read_ini(path)) {
    const std::string at = " (" + path + " line " + std::to_string(e.line) + ")";
    const Key *k = find_key(e.key);
    if (!k)
      throw InputError(key_error(e.key, e.value,
                                 "unknown key" + at + "; mft " + command + " --help lists the keys"));
    if (first_line.count(e.key))
      throw InputError(key_error(e.key, e.value,
                                 "given more than once" + at + ", first at line " +
                                     std::to_string(first_line[e.key])));
    first_line[e.key] = e.line;
    try {
      Config scratch;
      k->set(scratch, e.value);
    } catch (const InputError &err) {
      throw InputError(err.what() + at);
    }
    values[e.key] = e.value;
  }
  return values;
}

} // namespace

long long Config::readout_coord() const {
  return readout.coord < 0 ? model.d + readout.coord : readout.coord;
}

std::vector<double> Config::readout_weights() const {
  if (!readout.weights.empty()) return readout.weights;
  std::vector<double> w(static_cast<size_t>(model.d), 0.0);
  const long long c = readout_coord();
  if (c >= 0 && c < model.d) w[static_cast<size_t>(c)] = 1.0;
  return w;
}

std::vector<ConfigEntry> config_entries(const Config &config) {
  std::vector<ConfigEntry> out;
  for (const Key &k : key_table()) out.push_back({k.name, k.get(config)});
  return out;
}

std::string to_string(const ConfigValue &value) {
  struct {
    std::string operator()(long long v) const { return std::to_string(v); }
    std::string operator()(double v) const {
      std::ostringstream s;
      s.precision(17);
      s << v;
      return s.str();
    }
    std::string operator()(const std::string &v) const { return v; }
    std::string operator()(const std::vector<double> &v) const {
      std::string s;
      for (double x : v) s += (s.empty() ? "" : ",") + (*this)(x);
      return s;
    }
  } render;
  return std::visit(render, value);
}

void validate(const Config &c) {
  const auto d = c.model.d;
  if (c.readout.coord >= d || c.readout.coord < -d)
    throw InputError(key_error("readout.coord", std::to_string(c.readout.coord),
                               "out of range for model.d = " + std::to_string(d)));
  if (!c.readout.weights.empty() && static_cast<long long>(c.readout.weights.size()) != d)
    throw InputError(key_error("readout.weights", to_string(c.readout.weights),
                               "needs model.d = " + std::to_string(d) + " values, got " +
                                   std::to_string(c.readout.weights.size())));
  if (c.data.task == "icl-linear") {
    if (d < 2)
      throw InputError(key_error("model.d", std::to_string(d),
                                 "data.task = icl-linear needs d >= 2 (inputs and a label)"));
    if (c.data.tokens < 2)
      throw InputError(key_error("data.tokens", std::to_string(c.data.tokens),
                                 "data.task = icl-linear needs n >= 2 (examples and a query)"));
  }
  if (c.cgf.points > 1000000)
    throw InputError(key_error("cgf.points", std::to_string(c.cgf.points), "at most 1000000"));
  if (c.data.task == "file" && c.data.file.empty())
    throw InputError(key_error("data.file", c.data.file, "data.task = file needs a file name"));
  if (c.model.mlp_particles > 0 && c.model.mlp_width == 0)
    throw InputError(key_error("model.mlp_width", "0",
                               "must be positive when model.mlp_particles > 0"));
}

bool restart_may_change(const std::string &key) {
  return key == "train.steps" || key == "train.print_every" || key == "train.max_walltime" ||
         key == "output.snapshot_every" || key == "output.file" || key == "output.overwrite" ||
         key == "run.max_memory" || key.rfind("cgf.", 0) == 0 || key == "ntk.part";
}

Config config_from_text(const std::map<std::string, std::string> &text, const std::string &source) {
  Config c;
  for (const Key &k : key_table()) {
    const auto it = text.find(k.name);
    if (it == text.end()) continue;
    try {
      k.set(c, it->second);
    } catch (const InputError &e) {
      throw InputError(source + ": " + e.what());
    }
  }
  return c;
}

Config parse_config(const std::vector<std::string> &args, CommandOptions *options) {
  po::options_description keys = describe_keys();
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
      options->snapshot = parse_integer("--snapshot", text);
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
  for (const Key &k : key_table()) {
    const po::variable_value &v = vm[k.name];
    const auto ini = from_file.find(k.name);
    if (!v.defaulted()) {
      k.set(c, v.as<std::string>());
      if (options) options->given.insert(k.name);
    } else if (ini != from_file.end()) {
      k.set(c, ini->second);
      if (options) options->given.insert(k.name);
    } else {
      k.set(c, k.default_text);
    }
  }
  validate(c);
  return c;
}

std::string config_help() {
  std::ostringstream s;
  s << describe_keys();
  return s.str();
}

} // namespace mft
