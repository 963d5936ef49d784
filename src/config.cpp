#include "mft/config.hpp"

#include "mft/error.hpp"
#include "mft/ini.hpp"

#include <boost/program_options.hpp>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <functional>
#include <sstream>

namespace po = boost::program_options;

namespace mft {
namespace {

long long parse_integer(const std::string &key, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    throw InputError(key_error(key, text, "not an integer"));
  return v;
}

long long positive(const std::string &key, const std::string &text) {
  const long long v = parse_integer(key, text);
  if (v <= 0) throw InputError(key_error(key, text, "must be a positive integer"));
  return v;
}

long long non_negative(const std::string &key, const std::string &text) {
  const long long v = parse_integer(key, text);
  if (v < 0) throw InputError(key_error(key, text, "must be a non-negative integer"));
  return v;
}

std::uint64_t parse_seed(const std::string &key, const std::string &text) {
  const long long v = parse_integer(key, text);
  if (v < 0) throw InputError(key_error(key, text, "must be a non-negative integer"));
  return static_cast<std::uint64_t>(v);
}

double parse_real(const std::string &key, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    throw InputError(key_error(key, text, "not a finite number"));
  return v;
}

double non_negative_real(const std::string &key, const std::string &text) {
  const double v = parse_real(key, text);
  if (v < 0) throw InputError(key_error(key, text, "must be >= 0"));
  return v;
}

std::vector<double> parse_reals(const std::string &key, const std::string &text) {
  std::vector<double> out;
  std::string item;
  std::stringstream ss(text);
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b == std::string::npos) throw InputError(key_error(key, text, "empty list entry"));
    out.push_back(parse_real(key, item.substr(b, e - b + 1)));
  }
  return out;
}

std::string one_of(const std::string &key, const std::string &text,
                   std::initializer_list<const char *> choices) {
  std::string list;
  for (const char *c : choices) {
    if (text == c) return text;
    list += (list.empty() ? "" : ", ") + std::string(c);
  }
  throw InputError(key_error(key, text, "must be one of " + list));
}

bool parse_bool(const std::string &key, const std::string &text) {
  if (text == "true") return true;
  if (text == "false") return false;
  throw InputError(key_error(key, text, "must be true or false"));
}

// Bytes, with an optional binary suffix K, M, G or T ("8G").
long long parse_bytes(const std::string &key, const std::string &text) {
  std::string digits = text;
  long long unit = 1;
  if (!text.empty()) {
    const char *suffixes = "KMGT";
    if (const char *p = std::strchr(suffixes, std::toupper(static_cast<unsigned char>(text.back())));
        p && *p) {
      unit = 1LL << (10 * (p - suffixes + 1));
      digits = text.substr(0, text.size() - 1);
    }
  }
  errno = 0;
  char *end = nullptr;
  const long long v = std::strtoll(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || errno == ERANGE || v < 0)
    throw InputError(key_error(key, text, "must be a number of bytes, optionally with K, M, G or T"));
  if (v > std::numeric_limits<long long>::max() / unit)
    throw InputError(key_error(key, text, "too large"));
  return v * unit;
}

std::string non_empty(const std::string &key, const std::string &text) {
  if (text.empty()) throw InputError(key_error(key, text, "must not be empty"));
  return text;
}

// One configuration key: its default (as INI text), meaning, and how it is
// read into and out of Config. The single table below is the only list of
// keys: help, parsing and the /config group all come from it.
struct Key {
  const char *name;
  const char *default_text;
  const char *help;
  std::function<void(Config &, const std::string &)> set;
  std::function<ConfigValue(const Config &)> get;
};

const std::vector<Key> &key_table() {
  static const std::vector<Key> table = {
      {"model.d", "8", "token dimension d",
       [](Config &c, const std::string &v) { c.model.d = positive("model.d", v); },
       [](const Config &c) { return ConfigValue(c.model.d); }},
      {"model.head_dim", "8", "head dimension d_h (Q, K are d_h x d)",
       [](Config &c, const std::string &v) { c.model.head_dim = positive("model.head_dim", v); },
       [](const Config &c) { return ConfigValue(c.model.head_dim); }},
      {"model.heads", "16", "head particles per depth slice, M",
       [](Config &c, const std::string &v) { c.model.heads = positive("model.heads", v); },
       [](const Config &c) { return ConfigValue(c.model.heads); }},
      {"model.slices", "8", "depth slices L of s in [0,1]",
       [](Config &c, const std::string &v) { c.model.slices = positive("model.slices", v); },
       [](const Config &c) { return ConfigValue(c.model.slices); }},
      {"model.mlp_width", "0", "MLP neuron width d_f",
       [](Config &c, const std::string &v) { c.model.mlp_width = non_negative("model.mlp_width", v); },
       [](const Config &c) { return ConfigValue(c.model.mlp_width); }},
      {"model.mlp_particles", "0", "MLP neuron particles per slice M_f (0: attention only)",
       [](Config &c, const std::string &v) {
         c.model.mlp_particles = non_negative("model.mlp_particles", v);
       },
       [](const Config &c) { return ConfigValue(c.model.mlp_particles); }},
      {"model.activation", "relu", "MLP activation: relu, gelu, huber-relu",
       [](Config &c, const std::string &v) {
         c.model.activation = one_of("model.activation", v, {"relu", "gelu", "huber-relu"});
       },
       [](const Config &c) { return ConfigValue(c.model.activation); }},
      {"depth.ts_type", "rk", "PETSc TS type in depth: euler, rk, ssp (-depth_ts_type overrides)",
       [](Config &c, const std::string &v) {
         c.depth.ts_type = one_of("depth.ts_type", v, {"euler", "rk", "ssp"});
       },
       [](const Config &c) { return ConfigValue(c.depth.ts_type); }},
      {"depth.rk_type", "4", "PETSc RK tableau for ts_type rk: 1fe, 2a, 3, 3bs, 4, 5f, 5dp, ...",
       [](Config &c, const std::string &v) { c.depth.rk_type = non_empty("depth.rk_type", v); },
       [](const Config &c) { return ConfigValue(c.depth.rk_type); }},
      {"depth.steps_per_slice", "1", "integrator steps k per slice (step 1/(L k))",
       [](Config &c, const std::string &v) {
         c.depth.steps_per_slice = positive("depth.steps_per_slice", v);
       },
       [](const Config &c) { return ConfigValue(c.depth.steps_per_slice); }},
      {"readout.kind", "query", "query: coordinate c of the last token; mean: w . mean token",
       [](Config &c, const std::string &v) {
         c.readout.kind = one_of("readout.kind", v, {"query", "mean"});
       },
       [](const Config &c) { return ConfigValue(c.readout.kind); }},
      {"readout.coord", "-1", "readout coordinate c, 0-based; -1 is the last (stored resolved)",
       [](Config &c, const std::string &v) { c.readout.coord = parse_integer("readout.coord", v); },
       [](const Config &c) { return ConfigValue(c.readout_coord()); }},
      {"readout.weights", "", "w for the mean readout, comma-separated (d values); empty: e_c",
       [](Config &c, const std::string &v) {
         c.readout.weights = v.empty() ? std::vector<double>{} : parse_reals("readout.weights", v);
       },
       [](const Config &c) { return ConfigValue(c.readout_weights()); }},
      {"init.seed", "1", "seed of the particle streams (seed, species, l, m)",
       [](Config &c, const std::string &v) { c.init.seed = parse_seed("init.seed", v); },
       [](const Config &c) { return ConfigValue(static_cast<long long>(c.init.seed)); }},
      {"init.sigma_qk", "0.5", "std of the entries of Q and K at initialisation",
       [](Config &c, const std::string &v) {
         c.init.sigma_qk = non_negative_real("init.sigma_qk", v);
       },
       [](const Config &c) { return ConfigValue(c.init.sigma_qk); }},
      {"init.sigma_v", "1.0", "std of the entries of V at initialisation (0 allowed)",
       [](Config &c, const std::string &v) { c.init.sigma_v = non_negative_real("init.sigma_v", v); },
       [](const Config &c) { return ConfigValue(c.init.sigma_v); }},
      {"init.sigma_w1", "0.5", "std of the entries of the MLP's W1 at initialisation",
       [](Config &c, const std::string &v) {
         c.init.sigma_w1 = non_negative_real("init.sigma_w1", v);
       },
       [](const Config &c) { return ConfigValue(c.init.sigma_w1); }},
      {"init.sigma_w2", "0.5", "std of the entries of the MLP's W2 at initialisation",
       [](Config &c, const std::string &v) {
         c.init.sigma_w2 = non_negative_real("init.sigma_w2", v);
       },
       [](const Config &c) { return ConfigValue(c.init.sigma_w2); }},
      {"data.task", "icl-linear", "data: icl-linear, gaussian, teacher, families, file",
       [](Config &c, const std::string &v) {
         c.data.task = one_of("data.task", v, {"icl-linear", "gaussian", "teacher", "families", "file"});
       },
       [](const Config &c) { return ConfigValue(c.data.task); }},
      {"data.sequences", "64", "sequences N (task file: taken from the file)",
       [](Config &c, const std::string &v) { c.data.sequences = positive("data.sequences", v); },
       [](const Config &c) { return ConfigValue(c.data.sequences); }},
      {"data.tokens", "16", "tokens per sequence n (task file: taken from the file)",
       [](Config &c, const std::string &v) { c.data.tokens = positive("data.tokens", v); },
       [](const Config &c) { return ConfigValue(c.data.tokens); }},
      {"data.seed", "2", "seed of the data streams",
       [](Config &c, const std::string &v) { c.data.seed = parse_seed("data.seed", v); },
       [](const Config &c) { return ConfigValue(static_cast<long long>(c.data.seed)); }},
      {"data.file", "", "HDF5 file with /data/tokens (N,n,d) and /data/targets (N,1)",
       [](Config &c, const std::string &v) { c.data.file = v; },
       [](const Config &c) { return ConfigValue(c.data.file); }},
      {"data.teacher_heads", "0",
       "task teacher: heads per slice of the teacher (drawn like the student, seed data.seed); 0: model.heads",
       [](Config &c, const std::string &v) {
         c.data.teacher_heads = non_negative("data.teacher_heads", v);
       },
       [](const Config &c) { return ConfigValue(c.data.teacher_heads); }},
      {"train.ts_type", "euler", "PETSc TS in training time tau: euler, rk, ssp (-train_ts_type overrides)",
       [](Config &c, const std::string &v) {
         c.train.ts_type = one_of("train.ts_type", v, {"euler", "rk", "ssp"});
       },
       [](const Config &c) { return ConfigValue(c.train.ts_type); }},
      {"train.dtau", "0.2", "step in training time tau (euler: the gradient-descent step)",
       [](Config &c, const std::string &v) {
         c.train.dtau = parse_real("train.dtau", v);
         if (c.train.dtau <= 0) throw InputError(key_error("train.dtau", v, "must be > 0"));
       },
       [](const Config &c) { return ConfigValue(c.train.dtau); }},
      {"train.steps", "100", "training steps",
       [](Config &c, const std::string &v) { c.train.steps = non_negative("train.steps", v); },
       [](const Config &c) { return ConfigValue(c.train.steps); }},
      {"train.lambda", "0", "weight decay lambda >= 0",
       [](Config &c, const std::string &v) { c.train.lambda = non_negative_real("train.lambda", v); },
       [](const Config &c) { return ConfigValue(c.train.lambda); }},
      {"train.print_every", "10", "a progress line every this many steps",
       [](Config &c, const std::string &v) { c.train.print_every = positive("train.print_every", v); },
       [](const Config &c) { return ConfigValue(c.train.print_every); }},
      {"train.max_walltime", "0",
       "seconds: stop cleanly (snapshot, exit 75) before this much wall time; 0: no limit",
       [](Config &c, const std::string &v) {
         c.train.max_walltime = non_negative_real("train.max_walltime", v);
       },
       [](const Config &c) { return ConfigValue(c.train.max_walltime); }},
      {"families.kind", "discrete",
       "data.task families: discrete, cube, laplace, mixture, gaussian-cov",
       [](Config &c, const std::string &v) {
         c.families.kind =
             one_of("families.kind", v, {"discrete", "cube", "laplace", "mixture", "gaussian-cov"});
       },
       [](const Config &c) { return ConfigValue(c.families.kind); }},
      {"families.values", "",
       "the varying parameter per sequence (cube r, laplace variance, mixture/gaussian-cov shift): a,b,c or lo:hi",
       [](Config &c, const std::string &v) { c.families.values = v; },
       [](const Config &c) { return ConfigValue(c.families.values); }},
      {"families.variances", "", "gaussian-cov: variance v_i per sequence (a,b,c or lo:hi); empty: 1",
       [](Config &c, const std::string &v) { c.families.variances = v; },
       [](const Config &c) { return ConfigValue(c.families.variances); }},
      {"families.sigma", "0.5", "mixture: component standard deviation s",
       [](Config &c, const std::string &v) {
         c.families.sigma = non_negative_real("families.sigma", v);
       },
       [](const Config &c) { return ConfigValue(c.families.sigma); }},
      {"families.base", "normal", "discrete: samples of N(0, I) (normal) or U([-1,1]^d) (uniform)",
       [](Config &c, const std::string &v) {
         c.families.base = one_of("families.base", v, {"normal", "uniform"});
       },
       [](const Config &c) { return ConfigValue(c.families.base); }},
      {"families.quadratic", "0.5", "target <u, mean x> + q mean |x|^2 / d: the coefficient q",
       [](Config &c, const std::string &v) { c.families.quadratic = parse_real("families.quadratic", v); },
       [](const Config &c) { return ConfigValue(c.families.quadratic); }},
      {"cgf.points", "256", "mft ntk --cgf: sample points z of the log-sum-exp test",
       [](Config &c, const std::string &v) { c.cgf.points = positive("cgf.points", v); },
       [](const Config &c) { return ConfigValue(c.cgf.points); }},
      {"cgf.radius", "1.0", "mft ntk --cgf: the points are uniform in the ball of this radius",
       [](Config &c, const std::string &v) {
         c.cgf.radius = parse_real("cgf.radius", v);
         if (c.cgf.radius <= 0) throw InputError(key_error("cgf.radius", v, "must be > 0"));
       },
       [](const Config &c) { return ConfigValue(c.cgf.radius); }},
      {"ntk.part", "V", "mft ntk: parameter group of the Jacobian: V, QK, mlp, all",
       [](Config &c, const std::string &v) { c.ntk.part = one_of("ntk.part", v, {"V", "QK", "mlp", "all"}); },
       [](const Config &c) { return ConfigValue(c.ntk.part); }},
      {"ntk.every", "0", "mft train: lambda_min and lambda_max of K_V into /history every this many steps (0: never)",
       [](Config &c, const std::string &v) { c.ntk.every = non_negative("ntk.every", v); },
       [](const Config &c) { return ConfigValue(c.ntk.every); }},
      {"output.file", "mft.h5", "HDF5 output file",
       [](Config &c, const std::string &v) { c.output.file = non_empty("output.file", v); },
       [](const Config &c) { return ConfigValue(c.output.file); }},
      {"output.snapshot_every", "10", "a particle snapshot every this many steps (and the last)",
       [](Config &c, const std::string &v) {
         c.output.snapshot_every = positive("output.snapshot_every", v);
       },
       [](const Config &c) { return ConfigValue(c.output.snapshot_every); }},
      {"output.overwrite", "false", "true: replace an existing output.file; false: refuse it",
       [](Config &c, const std::string &v) { c.output.overwrite = parse_bool("output.overwrite", v); },
       [](const Config &c) { return ConfigValue(std::string(c.output.overwrite ? "true" : "false")); }},
      {"run.max_memory", "0",
       "bytes a rank may use (suffix K, M, G, T); 0: the node's MemAvailable shared by its ranks",
       [](Config &c, const std::string &v) { c.run.max_memory = parse_bytes("run.max_memory", v); },
       [](const Config &c) { return ConfigValue(c.run.max_memory); }},
  };
  return table;
}

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
  if (vm.count("config")) from_file = read_config_file(vm["config"].as<std::string>(), command);

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
