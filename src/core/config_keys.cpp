// The table of configuration keys: each key's name, default, help, how its
// value is parsed into Config and read back out of it. The only list of keys.
#include "config_keys.hpp"

#include "mft/core/error.hpp"
#include "mft/core/integrators.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>


namespace mft::detail {

long long parse_integer(const std::string &key, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  // The whole text, a NUL inside it included, must be the number; a point
  // and zeros may follow it ("8.0", as tables with a missing cell write
  // integers), nothing else.
  const char *tail = end;
  if (end != text.c_str() && *tail == '.' && std::isdigit(static_cast<unsigned char>(tail[-1])))
    for (++tail; *tail == '0';) ++tail;
  if (text.empty() || tail != text.c_str() + text.size())
    throw InputError(key_error(key, text, "not an integer"));
  if (errno == ERANGE)
    throw InputError(key_error(key, text, "out of range: an integer must lie in [" + std::to_string(LLONG_MIN) + ", " +
                                              std::to_string(LLONG_MAX) + "]"));
  return v;
}

std::vector<long long> parse_index_list(const std::string &key, const std::string &text) {
  std::vector<long long> out;
  for (size_t b = 0; b < text.size();) {
    const size_t e = std::min(text.find(',', b), text.size());
    const std::string item = text.substr(b, e - b);
    out.push_back(parse_integer(key, item));
    if (out.back() < 0) throw InputError(key_error(key, item, "must be a non-negative integer"));
    b = e + 1;
    if (e + 1 == text.size()) throw InputError(key_error(key, text, "a list of slice indices must not end in a comma"));
  }
  return out;
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
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw InputError(key_error(key, text, errno == ERANGE ? "beyond the largest double (about 1.8e308)"
                                                          : "not a finite number"));
  // strtod says ERANGE for a subnormal result too: a number all the same,
  // unless it rounded to zero.
  if (errno == ERANGE && v == 0)
    throw InputError(key_error(key, text, "below the smallest double (about 4.9e-324): it would read as 0"));
  return v;
}

double non_negative_real(const std::string &key, const std::string &text) {
  const double v = parse_real(key, text);
  if (v < 0) throw InputError(key_error(key, text, "must be >= 0"));
  return v;
}

std::vector<double> parse_reals(const std::string &key, const std::string &text) {
  std::vector<double> out;
  if (text.empty()) return out;
  // Every comma separates two entries: "1,,0", ",1" and "1,0," are refused alike.
  for (size_t begin = 0;;) {
    const size_t comma = text.find(',', begin);
    const std::string item = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b == std::string::npos) throw InputError(key_error(key, text, "empty list entry"));
    out.push_back(parse_real(key, item.substr(b, e - b + 1)));
    if (comma == std::string::npos) return out;
    begin = comma + 1;
  }
}

// The values a key accepts when they are a fixed set (its parser and its
// entry in --choices).
struct Choices {
  std::vector<std::string> names;
};

Choices one_of(std::vector<std::string> names) { return {std::move(names)}; }

// The names of a registry's entries.
Choices entry_of(const std::vector<RegistryEntry> &entries) {
  Choices out;
  for (const RegistryEntry &e : entries) out.names.push_back(e.name);
  return out;
}

// "what: a (help a); b (help b)".
std::string entries_help(const std::string &what, const std::vector<RegistryEntry> &entries) {
  std::string out = what + ": ";
  for (size_t i = 0; i < entries.size(); ++i) out += (i ? "; " : "") + entries[i].name + " (" + entries[i].help + ")";
  return out;
}

// The NTK's parameter groups: each species' (registry.hpp), and all.
Choices ntk_part_choices() {
  Choices out{ntk_parts()};
  out.names.push_back("all");
  return out;
}

bool parse_bool(const std::string &key, const std::string &text) {
  // Any case: Python and spreadsheets write True and FALSE.
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "true") return true;
  if (lower == "false") return false;
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
  if (digits.empty() || end != digits.c_str() + digits.size() || errno == ERANGE || v < 0)
    throw InputError(key_error(key, text, "must be a number of bytes, optionally with K, M, G or T"));
  if (v > std::numeric_limits<long long>::max() / unit)
    throw InputError(key_error(key, text, "too large"));
  return v * unit;
}

// An initial scale: a standard deviation >= 0, or "auto" (kScaledWithSizes).
double scale_or_auto(const std::string &key, const std::string &text) {
  if (text == "auto") return kScaledWithSizes;
  return non_negative_real(key, text);
}

// The adjoint's checkpoint spacing in slices: >= 0, or "auto".
long long checkpoints_or_auto(const std::string &key, const std::string &text) {
  if (text == "auto") return kDepthCheckpointsAuto;
  const long long v = parse_integer(key, text);
  if (v < 0) throw InputError(key_error(key, text, "must be auto, 0 (every step kept) or a number of slices >= 1"));
  return v;
}

double unit_interval(const std::string &key, const std::string &text) {
  const double v = parse_real(key, text);
  if (v < 0 || v >= 1) throw InputError(key_error(key, text, "must lie in [0, 1)"));
  return v;
}

double positive_real(const std::string &key, const std::string &text) {
  const double v = parse_real(key, text);
  if (v <= 0) throw InputError(key_error(key, text, "must be > 0"));
  return v;
}

std::string any_text(const std::string &, const std::string &text) { return text; }

std::vector<double> real_list(const std::string &key, const std::string &text) {
  return text.empty() ? std::vector<double>{} : parse_reals(key, text);
}

std::string non_empty(const std::string &key, const std::string &text) {
  if (text.empty()) throw InputError(key_error(key, text, "must not be empty"));
  return text;
}

// How a member's value is stored in /config (and rendered as INI text).
ConfigValue stored(long long v) { return v; }
ConfigValue stored(double v) { return v; }
ConfigValue stored(std::uint64_t v) { return static_cast<long long>(v); }
ConfigValue stored(bool v) { return std::string(v ? "true" : "false"); }
ConfigValue stored(const std::string &v) { return v; }
ConfigValue stored(const std::vector<double> &v) { return v; }

// An initial scale as the configuration reads it ("auto" until resolved).
template <double InitConfig::*member> ConfigValue stored_scale(const Config &c) {
  if (c.init.*member == kScaledWithSizes) return std::string("auto");
  return c.init.*member;
}

ConfigValue stored_checkpoints(const Config &c) {
  if (c.depth.checkpoint_slices == kDepthCheckpointsAuto) return std::string("auto");
  return c.depth.checkpoint_slices;
}

template <class T>
using Parser = std::function<T(const std::string &key, const std::string &text)>;

// A key bound to its member (deal.II's add_parameter): the name, parser and
// help are written once; the default is the member's initial value.
template <class Section, class T>
Key add_key(const std::string &name, Section Config::*section, T Section::*member, Parser<T> parse,
         const std::string &help, std::function<ConfigValue(const Config &)> get = {}) {
  Key k;
  k.name = name;
  k.default_text = to_string(stored(Config{}.*section.*member));
  k.help = help;
  k.set = [=](Config &c, const std::string &text) { c.*section.*member = parse(name, text); };
  k.get = get ? get : [=](const Config &c) { return stored(c.*section.*member); };
  return k;
}

// A key whose values are one of `choices`.
template <class Section>
Key add_key(const std::string &name, Section Config::*section, std::string Section::*member, const Choices &choices,
            const std::string &help) {
  const std::vector<std::string> names = choices.names;
  Key k = add_key<Section, std::string>(
      name, section, member,
      [names](const std::string &key, const std::string &text) {
        if (std::find(names.begin(), names.end(), text) == names.end())
          throw InputError(key_error(key, text, "must be one of " + comma_list(names)));
        return text;
      },
      help);
  k.choices = names;
  return k;
}

// A comma-separated list of non-negative integers ("" for none).
std::string slice_list(const std::string &key, const std::string &text) {
  parse_index_list(key, text);
  return text;
}

// The data tasks of symbols (kSymbols): the readers of the embedding's keys.
std::vector<std::string> symbol_tasks() {
  std::vector<std::string> out;
  for (const RegistryEntry &e : task_entries())
    if (e.traits & kSymbols) out.push_back(e.name);
  return out;
}

} // namespace

const std::vector<Key> &key_table() {
  using C = Config;
  static const std::vector<Key> table = {
      add_key("model.d", &C::model, &ModelConfig::d, {positive}, "token dimension d (task file: taken from the file)"),
      add_key("model.head_dim", &C::model, &ModelConfig::head_dim, {positive},
           "head dimension d_h (Q, K are d_h x d)"),
      add_key("model.heads", &C::model, &ModelConfig::heads, {positive}, "head particles per depth slice, M"),
      add_key("model.slices", &C::model, &ModelConfig::slices, {positive}, "depth slices L of s in [0,1]"),
      add_key("model.mlp_width", &C::model, &ModelConfig::mlp_width, {non_negative}, "MLP neuron width d_f"),
      add_key("model.mlp_particles", &C::model, &ModelConfig::mlp_particles, {non_negative},
           "MLP neuron particles per slice M_f (0: attention only)"),
      add_key("model.activation", &C::model, &ModelConfig::activation,
           one_of({"relu", "gelu", "huber-relu"}), "MLP activation: relu, gelu, huber-relu"),
      add_key("model.attention", &C::model, &ModelConfig::attention, entry_of(score_map_entries()),
           entries_help("score map of attention, P from the scores a", score_map_entries())).added_to_format(),
      add_key("model.norm", &C::model, &ModelConfig::norm, entry_of(norm_entries()),
              entries_help("constraint on the tokens", norm_entries()))
          .added_to_format(),
      add_key("model.causal", &C::model, &ModelConfig::causal, {parse_bool},
           "true: token i attends to tokens 1..i only (causal mask); false: to all").added_to_format(),
      add_key("model.positions", &C::model, &ModelConfig::positions, one_of({"sinusoidal", "one-hot"}),
              "a task of symbols: the positional code of the embedding, in the model.position_dim coordinates "
              "after the symbols' one-hot ones: sinusoidal (sin, cos of t 10000^(-2i/p)) or one-hot (p >= "
              "data.tokens)")
          .added_to_format()
          .read_by("data.task", symbol_tasks()),
      add_key("model.position_dim", &C::model, &ModelConfig::position_dim, {positive},
              "a task of symbols: the coordinates p of the positional code (model.d >= data.vocab + p)")
          .added_to_format()
          .read_by("data.task", symbol_tasks()),
#define MFT_ENTRY_KEY(entry, key, type, value, check, help) \
  add_key("model." #key, &C::model, &ModelConfig::key, {check}, help) \
      .added_to_format() \
      .read_by("model.attention", {entry_name(score_map_entries(), #entry)}),
#include "mft/registry/score_maps_keys.inc"
#undef MFT_ENTRY_KEY
#define MFT_ENTRY_KEY(entry, key, type, value, check, help) \
  add_key("model." #key, &C::model, &ModelConfig::key, {check}, help) \
      .added_to_format() \
      .read_by("model.norm", {entry_name(norm_entries(), #entry)}),
#include "mft/registry/norms_keys.inc"
#undef MFT_ENTRY_KEY
      add_key("depth.ts_type", &C::depth, &DepthConfig::ts_type, one_of(integrator_names()),
           "PETSc TS type in depth: " + comma_list(integrator_names()) + " (-depth_ts_type overrides)"),
      add_key("depth.rk_type", &C::depth, &DepthConfig::rk_type, {non_empty},
           "PETSc RK tableau for ts_type rk: 1fe, 2a, 3, 3bs, 4, 5f, 5dp, ..."),
      add_key("depth.steps_per_slice", &C::depth, &DepthConfig::steps_per_slice, {positive},
           "integrator steps k per slice (step 1/(L k))"),
      add_key("depth.checkpoint_slices", &C::depth, &DepthConfig::checkpoint_slices, {checkpoints_or_auto},
              "the adjoint's forward trajectory: 0 keeps every step's stages; c >= 1 keeps the "
              "state every c slices and recomputes c slices at a time (the same gradient, bit for bit, for "
              "at most one more forward solve); auto: every step when the run fits its memory limit, else the "
              "c that fits with the fewest slices recomputed. Training and the NTK only: a forward solve "
              "keeps no trajectory",
              stored_checkpoints)
          .restartable()
          .added_to_format()
          .auto_by_default(),
      add_key("readout.kind", &C::readout, &ReadoutConfig::kind, entry_of(readout_entries()),
           entries_help("readout of yhat from the tokens at s = 1", readout_entries())),
      add_key("readout.dim", &C::readout, &ReadoutConfig::dim, {positive}, "output dimension d_out").added_to_format(),
      add_key("readout.coord", &C::readout, &ReadoutConfig::coord, {parse_integer},
           "first readout coordinate c, 0-based; negative: the block of d_out coordinates ends "
           "that far from the end (-1: the last d_out coordinates; stored resolved)",
           [](const Config &c) { return ConfigValue(c.readout_coord()); }),
      add_key("readout.weights", &C::readout, &ReadoutConfig::weights, {real_list},
           "W for a readout of W times the tokens (mean), d_out x d row-major, comma-separated; empty: rows e_c.. "
           "(stored resolved)",
           [](const Config &c) { return ConfigValue(c.readout_weights()); }),
#define MFT_ENTRY_KEY(entry, key, type, value, check, help) \
  add_key("readout." #key, &C::readout, &ReadoutConfig::key, {check}, help) \
      .added_to_format() \
      .read_by("readout.kind", {entry_name(readout_entries(), #entry)}),
#include "mft/registry/readouts_keys.inc"
#undef MFT_ENTRY_KEY
      add_key("loss.kind", &C::loss, &LossConfig::kind, entry_of(loss_entries()),
           entries_help("loss of the predictions yhat against the targets y", loss_entries())).added_to_format(),
#define MFT_ENTRY_KEY(entry, key, type, value, check, help) \
  add_key("loss." #key, &C::loss, &LossConfig::key, {check}, help) \
      .added_to_format() \
      .read_by("loss.kind", {entry_name(loss_entries(), #entry)}),
#include "mft/registry/losses_keys.inc"
#undef MFT_ENTRY_KEY
      add_key("init.seed", &C::init, &InitConfig::seed, {parse_seed},
           "seed of the particle streams (seed, species, l, m)"),
      add_key("init.sigma_qk", &C::init, &InitConfig::sigma_qk, {scale_or_auto},
              "std of the entries of Q and K at initialisation; auto: 0.5 min(1, (8/d)^(1/2) (8/d_h)^(1/4)), "
              "scores O(1) at any d and d_h (stored resolved)",
              stored_scale<&InitConfig::sigma_qk>)
          .auto_by_default(),
      add_key("init.sigma_v", &C::init, &InitConfig::sigma_v, {scale_or_auto},
              "std of the entries of V at initialisation (0 allowed); auto: min(1, (8/d)^(1/2)), the velocity "
              "O(1) at any d (stored resolved)",
              stored_scale<&InitConfig::sigma_v>)
          .auto_by_default(),
      add_key("init.sigma_w1", &C::init, &InitConfig::sigma_w1, {scale_or_auto},
              "std of the entries of the MLP neurons' first matrix (d_f x d) at initialisation; auto: "
              "0.5 min(1, (8/d)^(1/2)) (stored resolved)",
              stored_scale<&InitConfig::sigma_w1>)
          .auto_by_default(),
      add_key("init.sigma_w2", &C::init, &InitConfig::sigma_w2, {scale_or_auto},
              "std of the entries of the MLP neurons' second matrix (d x d_f) at initialisation; auto: "
              "0.5 min(1, (8/d_f)^(1/2)) (stored resolved)",
              stored_scale<&InitConfig::sigma_w2>)
          .auto_by_default(),
      add_key("init.file", &C::init, &InitConfig::file, {any_text},
              "the initial particles from a snapshot of this HDF5 file (a run file, or any file with "
              "the /particles datasets of the model's species (mft --format-reference) float64, its own (hard "
              "links), shaped (snapshots, L, M, rows, cols) like a run's) instead of "
              "drawn ones; model.slices, heads, head_dim, mlp_particles and mlp_width left at their "
              "defaults are the file's; empty: drawn from init.seed")
          .added_to_format(),
      add_key("init.snapshot", &C::init, &InitConfig::snapshot, {parse_integer},
              "init.file: the row of /particles to take, 0-based; negative: from the end (-1: the last "
              "complete snapshot; stored resolved)")
          .added_to_format(),
      add_key("data.task", &C::data, &DataConfig::task, entry_of(task_entries()),
              entries_help("data", task_entries())),
      add_key("data.sequences", &C::data, &DataConfig::sequences, {positive},
           "sequences N (task file: taken from the file)"),
      add_key("data.tokens", &C::data, &DataConfig::tokens, {positive},
           "tokens per sequence n (task file: taken from the file)"),
      add_key("data.test_sequences", &C::data, &DataConfig::test_sequences, {non_negative},
           "held-out sequences, drawn like the training ones from streams of their own (data.test_seed) "
           "and never trained on (task file: the file's /data/test_tokens, when present)").added_to_format(),
      add_key("data.seed", &C::data, &DataConfig::seed, {parse_seed}, "seed of the data streams"),
      add_key("data.test_seed", &C::data, &DataConfig::test_seed, {parse_seed},
           "seed of the held-out sequences' own streams: the same held-out set whatever data.sequences").added_to_format(),
      add_key("data.online", &C::data, &DataConfig::online, {parse_bool},
           "true: every step trains on train.batch fresh sequences drawn from streams keyed by "
               "(data.seed, step) (" + entries_with(task_entries(), kStreams) +
               "); the N data.sequences only measure R").added_to_format(),
      add_key("data.file", &C::data, &DataConfig::file, {any_text},
           "HDF5 file with /data/tokens (N,n,d), /data/targets (N,d_out) [, /data/test_tokens, "
           "/data/test_targets]"),
      add_key("data.teacher_heads", &C::data, &DataConfig::teacher_heads, {non_negative},
           "task teacher: heads per slice of the teacher (drawn like the student, seed data.seed); "
           "0: model.heads")
          .read_by("data.task", {"teacher"}),
      add_key("data.probe_sequences", &C::data, &DataConfig::probe_sequences, {non_negative},
              "a task of symbols: the induction probe's sequences (R = data.tokens / 2 uniform symbols repeated "
              "twice, from streams of data.test_seed) on which /history/induction_score and "
              "previous_token_score are measured; 0: none")
          .added_to_format()
          .read_by("data.task", symbol_tasks()),
      add_key("data.vocab", &C::data, &DataConfig::vocab, {positive},
              "a task of symbols: the vocabulary k, one-hot in the tokens' first k coordinates (text: the "
              "file's characters; leave it out)")
          .added_to_format()
          .read_by("data.task", symbol_tasks()),
#define MFT_ENTRY_KEY(entry, key, type, value, check, help) \
  add_key("data." #key, &C::data, &DataConfig::key, {check}, help) \
      .added_to_format() \
      .read_by("data.task", {entry_name(task_entries(), #entry)}),
#include "mft/registry/data_tasks_keys.inc"
#undef MFT_ENTRY_KEY
      add_key("train.ts_type", &C::train, &TrainConfig::ts_type, one_of(integrator_names()),
           "PETSc TS in training time tau: " + comma_list(integrator_names()) + " (-train_ts_type overrides)"),
      add_key("train.dtau", &C::train, &TrainConfig::dtau, {positive_real},
           "step in training time tau (euler: the gradient-descent step)"),
      add_key("train.steps", &C::train, &TrainConfig::steps, {non_negative}, "training steps").restartable(),
      add_key("train.lambda", &C::train, &TrainConfig::lambda, {non_negative_real}, "weight decay lambda >= 0"),
      add_key("train.print_every", &C::train, &TrainConfig::print_every, {positive},
           "a progress line every this many steps").restartable(),
      add_key("train.max_walltime", &C::train, &TrainConfig::max_walltime, {non_negative_real},
           "seconds: stop cleanly (snapshot, exit 75) before this start of the run has taken this much "
           "wall time (a restart counts afresh); 0: no limit").restartable(),
      add_key("train.method", &C::train, &TrainConfig::method, entry_of(optimizer_entries()),
           entries_help("optimiser", optimizer_entries())).added_to_format(),
      add_key("train.batch", &C::train, &TrainConfig::batch, {non_negative},
           "minibatch size b of the optimisers that take minibatches (" + optimizers_with(kMinibatches) +
               "), drawn without replacement per pass (0: all N sequences); with data.online, the fresh "
               "sequences of each step").added_to_format(),
      add_key("train.temperature", &C::train, &TrainConfig::temperature, {non_negative_real},
           "Langevin temperature T (" + optimizers_with(kLangevin) +
               ", Euler steps): noise sqrt(2 T dtau) N(0, 1) per step").added_to_format(),
#define MFT_ENTRY_KEY(entry, key, type, value, check, help) \
  add_key("train." #key, &C::train, &TrainConfig::key, {check}, help) \
      .added_to_format() \
      .read_by("train.method", {entry_name(optimizer_entries(), #entry)}),
#include "mft/registry/optimizers_keys.inc"
#undef MFT_ENTRY_KEY
      add_key("families.kind", &C::families, &FamiliesConfig::kind,
           one_of({"discrete", "cube", "laplace", "mixture", "gaussian-cov"}),
           "data.task families: discrete, cube, laplace, mixture, gaussian-cov")
          .read_by("data.task", {"families"}),
      add_key("families.values", &C::families, &FamiliesConfig::values, {any_text},
           "the varying parameter per sequence (cube r, laplace variance, mixture/gaussian-cov "
           "shift): a,b,c or lo:hi")
          .read_by("data.task", {"families"}),
      add_key("families.variances", &C::families, &FamiliesConfig::variances, {any_text},
           "gaussian-cov: variance v_i per sequence (a,b,c or lo:hi); empty: 1")
          .read_by("data.task", {"families"}),
      add_key("families.sigma", &C::families, &FamiliesConfig::sigma, {non_negative_real},
           "mixture: component standard deviation s")
          .read_by("data.task", {"families"}),
      add_key("families.base", &C::families, &FamiliesConfig::base, one_of({"normal", "uniform"}),
           "discrete: samples of N(0, I) (normal) or U([-1,1]^d) (uniform)")
          .read_by("data.task", {"families"}),
      add_key("families.quadratic", &C::families, &FamiliesConfig::quadratic, {parse_real},
           "target <u, mean x> + q mean |x|^2 / d: the coefficient q")
          .read_by("data.task", {"families"}),
      add_key("cgf.points", &C::cgf, &CgfConfig::points, {non_negative},
           "mft ntk --cgf: sample points z of the log-sum-exp test (at least N + d + 1); 0: the larger of "
           "256 and N + d + 1").restartable(),
      add_key("cgf.radius", &C::cgf, &CgfConfig::radius, {positive_real},
           "mft ntk --cgf: the points are uniform in the ball of this radius").restartable(),
      add_key("ntk.part", &C::ntk, &NtkConfig::part, ntk_part_choices(),
           "mft ntk: parameter group of the Jacobian, a group of the species' matrices or all: " +
               comma_list(ntk_part_choices().names))
          .restartable(),
      add_key("ntk.every", &C::ntk, &NtkConfig::every, {non_negative},
           "mft train: lambda_min and lambda_max of K_V and the largest stable Euler step into /history every "
           "this many steps (0: never); a step above it is warned of once"),
      add_key("forward.tokens_depth", &C::forward, &ForwardConfig::tokens_depth, {parse_bool},
              "mft forward: true writes the tokens at s = 0 and at every slice boundary (or step: "
              "forward.every_step) into /forward/tokens_depth (N, K+1, n, d), their depths into /forward/depth")
          .added_to_format(),
      add_key("forward.every_step", &C::forward, &ForwardConfig::every_step, {parse_bool},
              "mft forward with forward.tokens_depth: true: at every integrator step (K = L k); false: at every "
              "slice boundary (K = L)")
          .added_to_format(),
      add_key("output.file", &C::output, &OutputConfig::file, {non_empty}, "HDF5 output file").restartable(),
      add_key("output.snapshot_every", &C::output, &OutputConfig::snapshot_every, {positive},
           "a particle snapshot every this many steps (and the last)").restartable(),
      add_key("output.history_every", &C::output, &OutputConfig::history_every, {positive},
           "a /history row (R on all N sequences, held-out measures) every this many steps, and "
           "at the first, the last and a stop step").added_to_format(),
      add_key("output.attention", &C::output, &OutputConfig::attention, {parse_bool},
              "mft forward, a task of symbols: /forward/attention and /forward/attention_probe, each slice's "
              "head-averaged attention (at the tokens entering it) for the first 8 held-out and probe sequences")
          .added_to_format(),
      add_key("output.token_spread", &C::output, &OutputConfig::token_spread, {parse_bool},
              "mft train: true adds /history/token_spread, the training tokens' spread at s = 1 over their "
              "spread at s = 0 (one forward solve per row); a restart may turn it on (earlier rows NaN)")
          .restartable()
          .added_to_format(),
      add_key("output.overwrite", &C::output, &OutputConfig::overwrite, {parse_bool},
           "true: replace an existing output.file; false: refuse it").restartable(),
      add_key("output.log", &C::output, &OutputConfig::log, {any_text},
           "mft train: progress as JSON lines in this file, appended (start, a row per progress "
           "line, end); a restart's lies beside its run file unless given; empty: none")
          .restartable()
          .added_to_format(),
      add_key("parallel.sequence_groups", &C::parallel, &ParallelConfig::sequence_groups, {positive},
           "sequence groups P_s of the process grid (ranks = P_h x P_s): each group holds N / P_s "
           "sequences, its P_h ranks split the heads; must divide the rank count").restartable().added_to_format(),
      add_key("run.max_memory", &C::run, &RunConfig::max_memory, {parse_bytes},
           "bytes a rank may use (suffix K, M, G, T); 0: the node's MemAvailable shared by its ranks, "
           "or a Slurm job's --mem / --mem-per-cpu when tighter").restartable(),
      add_key("run.precision", &C::run, &RunConfig::precision, one_of({"double", "mixed"}),
              "what the attention and MLP kernels compute in: double, or mixed (their products in float with "
              "16 lanes per AVX-512 register, every sum across sequences, slices and ranks, the particles, "
              "their updates and the output in double; about 1.8-2x faster a step with at least 16 heads "
              "per rank, 8 with AVX2, little faster with fewer)")
          .added_to_format(),
      add_key("ablate.slices", &C::ablate, &AblateConfig::slices, {slice_list},
              "mft forward: slices whose velocity is set to zero (V and W2 of their particles), comma-separated "
              "0-based indices; the risks are measured with and without them (Olsson et al.'s ablation). "
              "Empty: none")
          .added_to_format(),
  };
  return table;
}

} // namespace mft::detail
