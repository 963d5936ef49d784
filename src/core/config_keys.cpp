// The table of configuration keys: each key's name, default, help, how its
// value is parsed into Config and read back out of it. The only list of keys.
#include "config_keys.hpp"

#include "mft/core/error.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

namespace mft::detail {

long long parse_integer(const std::string &key, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    throw InputError(key_error(key, text, "not an integer"));
  return v;
}

namespace {

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

} // namespace

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

} // namespace mft::detail
