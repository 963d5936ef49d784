#include "mft/core/config.hpp"

#include "config_keys.hpp"
#include "mft/core/error.hpp"
#include "mft/core/ini.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace po = boost::program_options;

namespace mft {
namespace {

using detail::Key;
using detail::key_table;

const Key *find_key(const std::string &name) {
  for (const Key &k : key_table())
    if (name == k.name) return &k;
  return nullptr;
}

// Edits (insert, delete, substitute, swap two neighbours) from a to b.
size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

} // namespace

std::string closest_key(const std::string &name) {
  if (name.size() > 200) return "";
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 4) + 1;
  for (const Key &k : key_table()) {
    // A key without its section ("heads") is the key of that name.
    const std::string bare = k.name.substr(k.name.find('.') + 1);
    const size_t distance = bare == name ? 0 : edit_distance(name, k.name);
    if (distance < best_distance) {
      best = k.name;
      best_distance = distance;
    }
  }
  return best;
}

std::string did_you_mean(const std::string &name) {
  const std::string close = closest_key(name);
  return close.empty() ? "" : "; did you mean " + close + "?";
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
                                 "unknown key" + at + did_you_mean(e.key) + "; mft " + command +
                                     " --help lists the keys"));
    if (first_line.count(e.key))
      throw InputError(key_error(e.key, e.value,
                                 "given more than once" + at + ", first at line " +
                                     std::to_string(first_line[e.key])));
    first_line[e.key] = e.line;
    try {
      Config scratch;
      k->set(scratch, e.value);
    } catch (const InputError &err) {
      // "8;" or "8#x": a comment that did not start (it needs a space before).
      const bool glued = e.value.find_first_of(";#") != std::string::npos;
      throw InputError(err.what() + at + (glued ? "; a comment starts with ; or # after a space" : ""));
    }
    values[e.key] = e.value;
  }
  return values;
}

long long Config::readout_coord() const {
  // The next-token readout reads every position's first k coordinates.
  if (has_trait(readout_entries(), readout.kind, kNextToken)) return 0;
  return readout.coord < 0 ? model.d - readout.dim + 1 + readout.coord : readout.coord;
}

std::vector<double> Config::readout_weights() const {
  if (!readout.weights.empty() || has_trait(readout_entries(), readout.kind, kNextToken)) return readout.weights;
  const long long d = model.d, c = readout_coord();
  std::vector<double> W(static_cast<size_t>(readout.dim * d), 0.0);
  for (long long k = 0; k < readout.dim; ++k)
    if (c + k >= 0 && c + k < d) W[static_cast<size_t>(k * d + c + k)] = 1.0;
  return W;
}

std::vector<long long> Config::ablated_slices() const { return detail::parse_index_list("ablate.slices", ablate.slices); }

std::vector<ConfigEntry> config_entries(const Config &config) {
  std::vector<ConfigEntry> out;
  for (const Key &k : key_table()) out.push_back({k.name, k.get(config)});
  return out;
}

std::string to_string(const ConfigValue &value) {
  struct {
    std::string operator()(long long v) const { return std::to_string(v); }
    std::string operator()(double v) const {
      // The shortest text that reads back as the same double (0.9, not
      // 0.90000000000000002): exact, and what the user wrote.
      for (int digits = 15;; ++digits) {
        std::ostringstream s;
        s.precision(digits);
        s << v;
        if (digits >= 17 || std::strtod(s.str().c_str(), nullptr) == v) return s.str();
      }
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

// The checks that need the token dimension d and N (for data.task = file, the file's).
void validate_sizes(const Config &c) {
  const auto d = c.model.d, d_out = c.readout.dim;
  const bool by_coordinates = (!has_trait(readout_entries(), c.readout.kind, kWeighted) || c.readout.weights.empty()) &&
                              !has_trait(readout_entries(), c.readout.kind, kNextToken);
  if (by_coordinates && d_out > d)
    throw InputError(key_error("readout.dim", std::to_string(d_out),
                               "more outputs than model.d = " + std::to_string(d) + " coordinates"));
  const long long first = c.readout_coord();
  if (by_coordinates && (first < 0 || first + d_out > d))
    throw InputError(key_error("readout.coord", std::to_string(c.readout.coord),
                               "out of range: coordinates c..c+d_out-1 must lie in 0..d-1 (d = " +
                                   std::to_string(d) + ", d_out = " + std::to_string(d_out) + ")"));
  if (!c.readout.weights.empty() && static_cast<long long>(c.readout.weights.size()) != d_out * d)
    throw InputError(key_error("readout.weights", to_string(c.readout.weights),
                               "needs readout.dim x model.d = " + std::to_string(d_out * d) +
                                   " values, got " + std::to_string(c.readout.weights.size())));
  const TrainConfig &t = c.train;
  if (!has_trait(optimizer_entries(), t.method, kMinibatches) && t.batch > 0 && t.batch != c.data.sequences)
    throw InputError(key_error("train.batch", std::to_string(t.batch),
                               "minibatches need a train.method that takes them (" + optimizers_with(kMinibatches) +
                                   "); " + t.method + " uses all N sequences"));
  if (t.batch > c.data.sequences && !c.data.online)
    throw InputError(key_error("train.batch", std::to_string(t.batch),
                               "more than the N = " + std::to_string(c.data.sequences) + " training sequences"));
  // Every sequence group holds at least one sequence of each set.
  const long long P_s = c.parallel.sequence_groups;
  const std::string groups = std::to_string(P_s) + " sequence groups (parallel.sequence_groups)";
  if (c.data.sequences < P_s)
    throw InputError(key_error("data.sequences", std::to_string(c.data.sequences), "fewer than the " + groups));
  if (t.batch > 0 && t.batch < P_s)
    throw InputError(key_error("train.batch", std::to_string(t.batch), "fewer than the " + groups));
  if (c.data.test_sequences > 0 && c.data.test_sequences < P_s)
    throw InputError(key_error("data.test_sequences", std::to_string(c.data.test_sequences),
                               "fewer than the " + groups));
}

void resolve_readout_outputs(Config &c) {
  const bool next_token = has_trait(readout_entries(), c.readout.kind, kNextToken);
  const bool symbols = has_trait(task_entries(), c.data.task, kSymbols);
  if (next_token && !symbols)
    throw InputError(key_error("readout.kind", c.readout.kind,
                               "predicts the next symbol: needs a task of symbols (data.task " +
                                   entries_with(task_entries(), kSymbols) + "), not data.task = " + c.data.task));
  if (symbols && !next_token)
    throw InputError(key_error("readout.kind", c.readout.kind,
                               "data.task = " + c.data.task + " predicts the next symbol at every position: it needs "
                               "readout.kind " + entries_with(readout_entries(), kNextToken)));
  if (!next_token) return;
  const long long d_out = (c.data.tokens - 1) * c.data.vocab;
  if (c.readout.dim != ReadoutConfig{}.dim && c.readout.dim != d_out)
    throw InputError(key_error("readout.dim", std::to_string(c.readout.dim),
                               "readout.kind = " + c.readout.kind + " has (data.tokens - 1) x data.vocab = " +
                                   std::to_string(d_out) + " outputs (leave readout.dim out)"));
  c.readout.dim = d_out;
}

void refuse_unread_keys(const Config &c) {
  // A key an entry owns (or one the core reads for some values of a
  // selector only), set away from its default where nothing reads it.
  for (const Key &k : key_table()) {
    if (k.selector.empty()) continue;
    const std::string selected = to_string(find_key(k.selector)->get(c));
    if (std::find(k.readers.begin(), k.readers.end(), selected) != k.readers.end()) continue;
    const std::string value = to_string(k.get(c));
    if (value != k.default_text)
      throw InputError(key_error(k.name, value,
                                 "read only by " + k.selector + " = " + comma_list(k.readers) + ", not " +
                                     k.selector + " = " + selected));
  }
  if (!c.data.file.empty() && !has_trait(task_entries(), c.data.task, kReadsFile))
    throw InputError(key_error("data.file", c.data.file,
                               "read only by data.task " + entries_with(task_entries(), kReadsFile) +
                                   ", not data.task = " + c.data.task));
  // Weights that a coordinate readout would ignore (the rows e_c.. it reads
  // pass: a stored configuration holds them).
  Config rows = c;
  rows.readout.weights.clear();
  if (!has_trait(readout_entries(), c.readout.kind, kWeighted) && !c.readout.weights.empty() &&
      c.readout.weights != rows.readout_weights())
    throw InputError(key_error("readout.weights", to_string(c.readout.weights),
                               "read only by a readout of W times the tokens (readout.kind " +
                                   entries_with(readout_entries(), kWeighted) + "); readout.kind = " +
                                   c.readout.kind + " reads the coordinates from readout.coord"));
}

void validate_keys(const Config &c) {
  const auto d_out = c.readout.dim;
  // (The next-token readout's classes are the symbols: data.vocab >= 2.)
  if (has_trait(loss_entries(), c.loss.kind, kClassifies) && d_out < 2 &&
      !has_trait(readout_entries(), c.readout.kind, kNextToken))
    throw InputError(key_error("loss.kind", c.loss.kind,
                               c.loss.kind + " needs readout.dim >= 2 classes (a classifier's loss)"));
  if (c.cgf.points > 1000000)
    throw InputError(key_error("cgf.points", std::to_string(c.cgf.points), "at most 1000000"));
  const TrainConfig &t = c.train;
  if (c.data.online && !has_trait(task_entries(), c.data.task, kStreams))
    throw InputError(key_error("data.online", "true",
                               "needs a task whose sequences are drawn from streams (" +
                                   entries_with(task_entries(), kStreams) + "), not data.task = " + c.data.task));
  if (c.data.online && (!has_trait(optimizer_entries(), t.method, kMinibatches) || t.batch == 0))
    throw InputError(key_error("data.online", "true",
                               "needs a train.method that takes minibatches (" + optimizers_with(kMinibatches) +
                                   ") and train.batch > 0 (the fresh sequences of a step)"));
  if (c.ntk.every > 0 && c.ntk.every % c.output.history_every != 0)
    throw InputError(key_error("ntk.every", std::to_string(c.ntk.every),
                               "must be a multiple of output.history_every = " +
                                   std::to_string(c.output.history_every) + " (the kernel goes into history rows)"));
  if (!has_trait(optimizer_entries(), t.method, kTrainingTs) && t.ts_type != "euler")
    throw InputError(key_error("train.ts_type", t.ts_type,
                               "train.method = " + t.method + " takes its own steps (leave train.ts_type euler)"));
  if (t.temperature > 0 && !has_trait(optimizer_entries(), t.method, kLangevin))
    throw InputError(key_error("train.temperature", to_string(ConfigValue(t.temperature)),
                               "Langevin noise goes with train.method " + optimizers_with(kLangevin) + ", not " +
                                   t.method));
  if (t.temperature > 0 && t.ts_type != "euler")
    throw InputError(key_error("train.temperature", to_string(ConfigValue(t.temperature)),
                               "Langevin dynamics is Euler-Maruyama: needs train.ts_type euler, not " + t.ts_type));
  if (c.model.mlp_particles > 0 && c.model.mlp_width == 0)
    throw InputError(key_error("model.mlp_width", "0",
                               "must be positive when model.mlp_particles > 0"));
}


bool restart_may_change(const std::string &key) {
  const Key *k = find_key(key);
  return k && k->may_change_on_restart;
}

std::vector<std::string> keys_a_restart_may_change() {
  std::vector<std::string> out;
  for (const Key &k : key_table())
    if (restart_may_change(k.name)) out.push_back(k.name);
  return out;
}

std::string config_as_ini(const Config &config) {
  std::ostringstream s;
  std::string section;
  for (const ConfigEntry &e : config_entries(config)) {
    const auto dot = e.key.find('.');
    const std::string here = e.key.substr(0, dot);
    if (here != section) s << (section.empty() ? "" : "\n") << "[" << here << "]\n";
    section = here;
    s << e.key.substr(dot + 1) << " = " << to_string(e.value) << "\n";
  }
  return s.str();
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

bool is_config_key(const std::string &name) { return find_key(name) != nullptr; }

bool key_added_to_format(const std::string &key) {
  const Key *k = find_key(key);
  return k && k->since_first_files;
}

std::vector<std::string> key_choices(const std::string &key) {
  const Key *k = find_key(key);
  return k ? k->choices : std::vector<std::string>{};
}

std::string default_text(const std::string &key) {
  const Key *k = find_key(key);
  return k ? k->default_text : std::string();
}

std::string config_value(const Config &config, const std::string &key) {
  const Key *k = find_key(key);
  return k ? to_string(k->get(config)) : std::string();
}

KeyReaders key_readers(const std::string &key) {
  const Key *k = find_key(key);
  return k ? KeyReaders{k->selector, k->readers} : KeyReaders{};
}

void set_config_key(Config &config, const std::string &key, const std::string &text) {
  const Key *k = find_key(key);
  if (!k) throw InputError(key_error(key, text, "unknown key" + did_you_mean(key)));
  k->set(config, text);
}

po::options_description config_key_options() {
  po::options_description desc("Configuration keys (INI: [section] key = value; command line: --section.key value)");
  for (const Key &k : key_table())
    desc.add_options()(k.name.c_str(), po::value<std::string>()->default_value(k.default_text), k.help.c_str());
  return desc;
}


} // namespace mft
