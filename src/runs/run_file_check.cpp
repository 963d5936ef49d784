// Reading a run file that a restart or mft ntk --from will use: every part
// is checked on each rank, read-only, before any collective call or write.
#include "mft/runs/run_file.hpp"

#include "mft/core/error.hpp"
#include "mft/tasks/data.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <set>
#include <type_traits>

namespace mft {
namespace {

constexpr hsize_t kAny = static_cast<hsize_t>(-1); // a dimension that may take any size

// The element types of a run file's datasets, as mft writes them (a step
// count is int64, every other number float64): anything else would be
// converted on reading and the continued run would no longer be the same.
enum class Stored { Float64, Int64 };

// The largest step a file may hold: tau = step x train.dtau is exact in
// double below 2^53, and no run takes more steps.
constexpr long long kMaxStep = 1LL << 53;

struct Checker {
  hid_t file;
  std::string key, path;
  bool append = false; // a restart: the growing datasets will be extended
  // The datasets described so far, by identity: one object under two names
  // (a hard link /particles/K -> /particles/Q) would be read, and a restart
  // would write, as two.
  mutable std::map<std::string, std::string> seen = {};

  [[noreturn]] void refuse(const std::string &why) const { throw InputError(key_error(key, path, why)); }

  // The group `name`, reached by hard links (a restart writes attributes
  // into /config, /particles and /history).
  void own_group(const std::string &name) const {
    if (!h5::exists(file, name) || h5::object_type(file, name) != H5O_TYPE_GROUP) refuse("has no " + name + " group");
    if (const std::string link = h5::non_hard_link(file, name); !link.empty())
      refuse(link + "; a run file's objects must be its own (hard links)");
  }

  // The dataset at `name`: the file's own (hard links only, values stored
  // in it), of the type `stored`, with `shape` (kAny: any size), and with
  // `growing`, chunked and extensible along its first dimension as mft
  // writes it.
  h5::DatasetInfo dataset(const std::string &name, const std::vector<hsize_t> &shape, bool growing,
                          Stored stored = Stored::Float64, const std::string &expected = "") const {
    const h5::DatasetInfo info = h5::describe(file, name);
    if (const std::string why = info.unreadable(name); !why.empty()) refuse(why);
    if (!info.identity.empty())
      if (const auto [at, fresh] = seen.emplace(info.identity, name); !fresh && at->second != name)
        refuse(name + " and " + at->second + " are one dataset under two names (hard links to one object); a run "
                                             "file keeps each under its own");
    if (!info.link.empty()) refuse(info.link + "; a run file's objects must be its own (hard links)");
    if (stored == Stored::Float64 ? !info.float64 : !info.int64)
      refuse(name + " is " + info.type_name + "; mft writes it as " + (stored == Stored::Float64 ? "float64" : "int64") +
             " and reads it back only so (a converted value would not continue the same run)");
    bool fits = info.dims.size() == shape.size();
    for (size_t i = 0; fits && i < shape.size(); ++i) fits = shape[i] == kAny || shape[i] == info.dims[i];
    if (!fits) {
      std::string want = "(";
      for (size_t i = 0; i < shape.size(); ++i)
        want += (i ? ", " : "") + (shape[i] == kAny ? std::string("*") : std::to_string(shape[i]));
      want += shape.size() == 1 ? ",)" : ")";
      refuse(name + " has shape " + info.shape_text() + ", expected " + want + expected);
    }
    if (!growing)
      if (const std::string why = h5::unwritten_rows(file, name, info.dims.empty() ? 1 : info.dims[0]); !why.empty())
        refuse(why);
    if (growing) {
      bool extensible = info.chunked && info.maxdims[0] == H5S_UNLIMITED;
      for (size_t i = 1; extensible && i < shape.size(); ++i) extensible = info.maxdims[i] == info.dims[i];
      if (!extensible) refuse(name + " is not chunked and extensible along its first dimension");
      // mft extends and writes these with parallel HDF5, which its files
      // do without filters (one rank could fail alone on a filtered chunk).
      if (append && !info.filters.empty())
        refuse(name + " is stored through filters (" + info.filters +
               "); a restart appends to it as mft wrote it, without: h5repack -f NONE the file first");
      // Parallel HDF5 cannot extend a dataset whose chunks are allocated
      // incrementally (h5py's default): every write would fail.
      if (append && !info.early_allocation)
        refuse(name + " allocates its chunks incrementally (as h5py creates datasets); a restart extends it with "
                      "parallel HDF5, which needs them allocated early, as mft creates them");
    }
    return info;
  }

  // A growing dataset with at least `rows` rows (more after a run stopped
  // inside a snapshot: those are not read).
  void rows_at_least(const h5::DatasetInfo &info, const std::string &name, long long rows,
                     const std::string &of) const {
    if (static_cast<long long>(info.dims[0]) < rows)
      refuse(name + " has " + std::to_string(info.dims[0]) + " rows for " + std::to_string(rows) + " " + of);
    if (const std::string why = h5::unwritten_rows(file, name, static_cast<hsize_t>(std::max(0LL, rows)));
        !why.empty())
      refuse(why);
  }

  std::vector<double> values(const std::string &name) const {
    try {
      return h5::read_doubles(file, name);
    } catch (const Error &e) {
      refuse(std::string("reading ") + name + " failed (" + e.what() + ")");
    }
  }

  // The first `rows` rows of the growing one-dimensional dataset `name`,
  // as T (double or long long: steps stay integers past 2^53), never the
  // rows declared beyond them (a file may declare 2^40 it never wrote).
  template <class T> std::vector<T> first_rows(const std::string &name, long long rows) const {
    static_assert(std::is_same_v<T, double> || std::is_same_v<T, long long>);
    std::vector<T> out(static_cast<size_t>(std::max(0LL, rows)));
    if (out.empty()) return out;
    try {
      h5::Handle ds = h5::open_dataset(file, name);
      h5::read_block(ds, {0}, {static_cast<hsize_t>(rows)},
                     std::is_same_v<T, double> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_LLONG, out.data(), false);
    } catch (const Error &e) {
      refuse(std::string("reading ") + name + " failed (" + e.what() + ")");
    }
    return out;
  }
};

// /config rendered as INI text, as config_entries would render it.
std::map<std::string, std::string> read_config_text(hid_t file, const Checker &check) {
  check.own_group("/config");
  h5::Handle group(H5Gopen2(file, "config", H5P_DEFAULT));
  std::map<std::string, std::string> out;
  // Only the keys are read; other attributes there are left alone.
  for (const std::string &name : h5::attribute_names(group)) try {
    if (!is_config_key(name)) continue;
    switch (h5::attribute_class(group, name)) {
    case h5::AttributeClass::String: out[name] = h5::read_string_attribute(group, name); break;
    case h5::AttributeClass::Integer:
      out[name] = to_string(ConfigValue(h5::read_integer_attribute(group, name)));
      break;
    case h5::AttributeClass::Float:
      out[name] = to_string(ConfigValue(h5::read_float_attribute(group, name)));
      break;
    default: check.refuse("the attribute /config." + printable(name) + " is neither a string nor a number");
    }
  } catch (const InputError &) {
    throw;
  } catch (const Error &e) {
    check.refuse(std::string("/config: ") + e.what());
  }
  return out;
}

// The count attribute `name` of `group` (/particles.complete,
// /history.complete): an integer of one value, at least `least`.
long long complete_count(const Checker &check, hid_t group, const std::string &name, long long least) {
  long long count = 0;
  try {
    count = h5::read_integer_attribute(group, "complete");
  } catch (const InputError &) {
    throw;
  } catch (const Error &e) {
    check.refuse(name + " is not one integer (" + e.what() + ")");
  }
  if (count < least)
    check.refuse(least > 0 ? "has no complete particle snapshot (" + name + " = " + std::to_string(count) + ")"
                           : name + " = " + std::to_string(count) + " is negative");
  return count;
}

// Runs `check_file`, turning a failure of a reader inside it into a refusal
// of the file `key = path` (InputError, exit 2) naming what failed.
template <class Body> auto refusing(const std::string &key, const std::string &path, Body check_file) {
  try {
    return check_file();
  } catch (const InputError &) {
    throw;
  } catch (const Error &e) {
    throw InputError(key_error(key, path, e.what()));
  }
}

} // namespace

namespace {

// The format and /config: the file's configuration (every key a restart
// compares must be there).
Config check_header(hid_t file, const Checker &check, const std::string &path, bool training,
                    RunFileSummary &point) {
  const bool mft = H5Aexists(file, "format") > 0 &&
                   h5::attribute_class(file, "format") == h5::AttributeClass::String &&
                   h5::read_string_attribute(file, "format") == "mft/1";
  if (!mft) check.refuse("not an mft/1 run file");
  // What built the file is said, not checked: a malformed value reads as none.
  for (auto [name, value] : {std::pair{"compiled_for", &point.compiled_for}, std::pair{"blas", &point.blas}})
    try {
      if (H5Aexists(file, name) > 0 && h5::attribute_class(file, name) == h5::AttributeClass::String)
        *value = h5::read_string_attribute(file, name);
    } catch (const std::exception &) {
      value->clear();
    }
  point.config = read_config_text(file, check);
  Config c;
  try {
    c = config_from_text(point.config, path);
  } catch (const InputError &e) {
    check.refuse(std::string("/config: ") + e.what());
  }
  // A restart compares every key that decides what is computed.
  if (training)
    for (const ConfigEntry &e : config_entries(Config{}))
      if (!point.config.count(e.key) && !restart_may_change(e.key) && !key_added_to_format(e.key))
        check.refuse("/config has no key " + e.key);
  return c;
}

// /data: the tokens and targets (and the held-out ones) of the file's sizes.
void check_data(const Checker &check, const Config &c, RunFileSummary &point) {
  const auto d = static_cast<hsize_t>(c.model.d), d_out = static_cast<hsize_t>(c.readout.dim);
  const auto tokens = check.dataset("/data/tokens", {kAny, kAny, d}, false, Stored::Float64,
                                    " for model.d = " + std::to_string(d));
  if (tokens.dims[0] == 0 || tokens.dims[1] == 0) check.refuse("/data/tokens is empty");
  check.dataset("/data/targets", {tokens.dims[0], d_out}, false, Stored::Float64,
                " for readout.dim = " + std::to_string(d_out));
  point.N = static_cast<long long>(tokens.dims[0]);
  point.n = static_cast<long long>(tokens.dims[1]);
  if (c.data.test_sequences > 0) {
    const auto Nt = static_cast<hsize_t>(c.data.test_sequences);
    const std::string held_out = " for data.test_sequences = " + std::to_string(Nt);
    check.dataset("/data/test_tokens", {Nt, tokens.dims[1], d}, false, Stored::Float64, held_out);
    check.dataset("/data/test_targets", {Nt, d_out}, false, Stored::Float64, held_out);
    point.N_test = c.data.test_sequences;
  }
}

// The shape of a species' matrix in /particles (or /optimizer): (*, L, M, rows, cols).
std::vector<hsize_t> matrix_shape(const ParticleSpecies &s, const ParticleMatrix &m) {
  return {kAny, static_cast<hsize_t>(s.L), static_cast<hsize_t>(s.M), static_cast<hsize_t>(m.rows),
          static_cast<hsize_t>(m.cols)};
}

// /particles: one growing dataset per matrix of every species of the
// configuration, a row per snapshot; rows from /particles.complete on belong
// to a snapshot that was never completed. The snapshots' steps and times
// (for a training run's file, tau = step x train.dtau exactly, as training
// computes it: a file that says otherwise was changed).
void check_particles(hid_t file, const Checker &check, const Config &c, const Particles &layout, bool training,
                     RunFileSummary &point) {
  const auto steps = check.dataset("/particles/step", {kAny}, true, Stored::Int64);
  const auto taus = check.dataset("/particles/tau", {kAny}, true);
  std::vector<std::pair<std::string, h5::DatasetInfo>> matrices;
  for (const ParticleSpecies *s : layout.species())
    for (const ParticleMatrix &m : s->matrices()) {
      const std::string name = "/particles/" + m.name;
      matrices.emplace_back(name, check.dataset(name, matrix_shape(*s, m), true, Stored::Float64,
                                                " for " + std::to_string(s->M) + " " + s->name() +
                                                    " per slice in model.slices = " + std::to_string(s->L) + ", each " +
                                                    m.name + " " + std::to_string(m.rows) + " x " +
                                                    std::to_string(m.cols)));
    }
  h5::Handle group(H5Gopen2(file, "particles", H5P_DEFAULT));
  long long complete = -1;
  if (H5Aexists(group, "complete") > 0) {
    complete = complete_count(check, group, "/particles.complete", 1);
  } else if (training) {
    check.refuse("has no attribute /particles.complete");
  } else {
    // A file from before the attribute: its datasets agree in length.
    complete = static_cast<long long>(steps.dims[0]);
    for (const auto &[name, info] : matrices) complete = std::min(complete, static_cast<long long>(info.dims[0]));
  }
  if (complete < 1) check.refuse("has no complete particle snapshot");
  const std::string snapshots_of = "complete snapshots (/particles.complete = " + std::to_string(complete) + ")";
  check.rows_at_least(steps, "/particles/step", complete, snapshots_of);
  check.rows_at_least(taus, "/particles/tau", complete, snapshots_of);
  for (const auto &[name, info] : matrices) check.rows_at_least(info, name, complete, snapshots_of);
  point.snapshots = complete;
  point.row = complete - 1;
  const std::vector<long long> step_values = check.first_rows<long long>("/particles/step", complete);
  const std::vector<double> tau_values = check.first_rows<double>("/particles/tau", complete);
  for (long long r = 0; r < complete; ++r) {
    if (!std::isfinite(tau_values[r]) || step_values[r] < 0 || (r > 0 && step_values[r] <= step_values[r - 1]))
      check.refuse("/particles/step and /particles/tau are not increasing steps and finite times");
    // A step a run can reach: tau = step x dtau stays exact (below 2^53).
    if (step_values[r] > kMaxStep)
      check.refuse("/particles/step of row " + std::to_string(r) + " is " + std::to_string(step_values[r]) +
                   ", beyond the steps a run takes (at most 2^53)");
    if (training && tau_values[r] != static_cast<double>(step_values[r]) * c.train.dtau)
      check.refuse("/particles/tau of step " + std::to_string(step_values[r]) + " is " +
                   to_string(ConfigValue(tau_values[r])) + ", not step x train.dtau = " +
                   to_string(ConfigValue(static_cast<double>(step_values[r]) * c.train.dtau)));
    point.steps.push_back(step_values[r]);
    point.taus.push_back(tau_values[r]);
  }
  point.step = point.steps.back();
  point.tau = point.taus.back();
}

// /optimizer: the state of the file's method, a row for every complete
// snapshot (rows beyond them, from a run killed while writing one, are dropped).
void check_optimizer_state(const Checker &check, const Config &c, const Particles &layout,
                           const RunFileSummary &point) {
  const OptimizerStateLayout state = optimizer_state_layout(c.train.method);
  const std::string for_method = ", for train.method = " + c.train.method;
  const auto state_rows = [&](const h5::DatasetInfo &info, const std::string &name) {
    check.rows_at_least(info, name, point.snapshots, "complete snapshots" + for_method);
  };
  if (state.counter) state_rows(check.dataset("/optimizer/t", {kAny}, true, Stored::Int64, for_method), "/optimizer/t");
  for (const std::string &array : state.arrays)
    for (const ParticleSpecies *s : layout.species())
      for (const ParticleMatrix &m : s->matrices()) {
        const std::string name = "/optimizer/" + array + "_" + m.name;
        state_rows(check.dataset(name, matrix_shape(*s, m), true, Stored::Float64,
                                 " (like /particles/" + m.name + ")" + for_method),
                   name);
      }
}

// /history: one row per recorded step; /history.complete rows of every
// column are complete (a file from before the attribute: columns of equal
// length). Where the restart's history continues.
void check_history(hid_t file, const Checker &check, const Config &c, RunFileSummary &point) {
  if (!h5::exists(file, "/history")) check.refuse("not a training run file (no /history)");
  const auto hsteps = check.dataset("/history/step", {kAny}, true, Stored::Int64);
  h5::Handle history_group(H5Gopen2(file, "history", H5P_DEFAULT));
  const bool counted = H5Aexists(history_group, "complete") > 0;
  long long hrows = static_cast<long long>(hsteps.dims[0]);
  if (counted) hrows = complete_count(check, history_group, "/history.complete", 0);
  const std::string rows_of = "complete rows (/history.complete = " + std::to_string(hrows) + ")";
  check.rows_at_least(hsteps, "/history/step", hrows, rows_of);
  // Every column of history_columns.hpp the file has. One it lacks (a file
  // of an earlier version, from before that column) is no refusal: the
  // restart adds it (RunFile::continue_from).
  // A vector column holds the run's width a row (L, n - 1).
  HistoryShape sizes;
  sizes.positions = c.data.tokens - 1;
  sizes.probe_slices = c.model.slices;
  for (const HistoryColumn &column : history_columns()) {
    const std::string p = std::string("/history/") + column.name;
    if (p == "/history/step" || !h5::exists(file, p)) continue;
    std::vector<hsize_t> shape = {counted ? kAny : static_cast<hsize_t>(hrows)};
    if (column.length) shape.push_back(static_cast<hsize_t>(history_width(column, sizes)));
    if (counted)
      check.rows_at_least(check.dataset(p, shape, true), p, hrows, rows_of);
    else
      check.rows_at_least(check.dataset(p, shape, true, Stored::Float64, " (one per row of /history/step)"), p, hrows,
                          rows_of);
  }
  const std::vector<long long> history = check.first_rows<long long>("/history/step", hrows);
  for (size_t i = 1; i < history.size(); ++i)
    if (history[i] <= history[i - 1]) check.refuse("/history/step is not increasing");
  const auto keep = std::count_if(history.begin(), history.end(), [&](long long s) { return s <= point.step; });
  point.history_rows = keep;
  point.has_history_row = keep > 0 && history[keep - 1] == point.step;
  // Only a run's first snapshot is written before its history row; with
  // output.history_every k, snapshots between rows have none.
  const long long every = c.output.history_every;
  if (!point.has_history_row && point.row > 0 && point.step % every == 0)
    check.refuse("/history does not reach the last snapshot (step " + std::to_string(point.step) + ")");
  // The wall time continues from that row's (none, or NaN in a column a
  // restart added to an older file: from 0).
  if (keep > 0 && h5::exists(file, "/history/wall_time")) {
    const double before = check.first_rows<double>("/history/wall_time", keep)[keep - 1];
    point.wall_time = std::isfinite(before) ? before : 0.0;
  }
  // The row a restart starts from: its held-out measures and kernel are
  // printed from here, not measured again.
  if (point.has_history_row)
    for (const HistoryColumn &column : history_columns()) {
      const std::string p = std::string("/history/") + column.name;
      if (h5::exists(file, p) && !column.length) point.history_row[column.name] = check.first_rows<double>(p, keep)[keep - 1];
    }
}

} // namespace

RunFileSummary inspect_run_file(const std::string &path, const std::string &key, bool training) {
  return refusing(key, path, [&] {
    h5::Handle file = h5::open_input(path, key);
    const Checker check{file, key, path, training};
    RunFileSummary point;
    const Config c = check_header(file, check, path, training, point);
    check_data(check, c, point);
    const Particles layout = particle_layout(c.model, c.model.heads, 0, 0); // shapes only
    check_particles(file, check, c, layout, training, point);
    if (!training) return point;
    check_optimizer_state(check, c, layout, point);
    check_history(file, check, c, point);
    return point;
  });
}

namespace {

long long particle_file_row(const std::string &path, const std::string &key, const Particles &layout,
                            long long snapshot) {
  h5::Handle file = h5::open_input(path, key);
  const Checker check{file, key, path, false};
  check.own_group("/particles");
  long long rows = -1; // the snapshots every matrix holds
  for (const ParticleSpecies *s : layout.species())
    for (const ParticleMatrix &m : s->matrices()) {
      const h5::DatasetInfo info =
          check.dataset("/particles/" + m.name, matrix_shape(*s, m), false, Stored::Float64,
                        " for " + std::to_string(s->M) + " " + s->name() + " per slice in model.slices = " +
                            std::to_string(s->L) + ", each " + m.name + " " + std::to_string(m.rows) + " x " +
                            std::to_string(m.cols));
      rows = rows < 0 ? static_cast<long long>(info.dims[0]) : std::min(rows, static_cast<long long>(info.dims[0]));
    }
  // A run file's rows from /particles.complete on are not complete; it
  // counts no more rows than every matrix has.
  h5::Handle group(H5Gopen2(file, "particles", H5P_DEFAULT));
  if (H5Aexists(group, "complete") > 0) {
    const long long complete = complete_count(check, group, "/particles.complete", 1);
    if (complete > rows)
      check.refuse("/particles.complete = " + std::to_string(complete) + " counts more snapshots than the " +
                   std::to_string(rows) + " rows of its matrices");
    rows = complete;
  }
  if (rows < 1) check.refuse("has no complete particle snapshot");
  const long long row = snapshot < 0 ? rows + snapshot : snapshot;
  if (row < 0 || row >= rows)
    throw InputError(key_error("init.snapshot", std::to_string(snapshot),
                               path + " has " + std::to_string(rows) + " complete snapshots"));
  return row;
}

void adopt_particle_file_shapes(const std::string &path, const std::string &key, Config &config) {
  h5::Handle file = h5::open_input(path, key);
  // Every species a model can have, its matrices in order; the first dataset
  // that gives a key decides it.
  const Particles layout = every_species_layout(config.model);
  std::set<std::string> decided;
  const Config defaults;
  for (const ParticleSpecies *s : layout.species())
    for (const ParticleMatrix &m : s->matrices()) {
      const h5::DatasetInfo info = h5::describe(file, "/particles/" + m.name);
      if (!info.exists) continue; // a species the file does not have: its keys stay
      if (!info.is_dataset || info.dims.size() != 5) return; // inspect_particle_file says what is wrong
      for (size_t i = 0; i < m.keys.size(); ++i) {
        const std::string &name = m.keys[i];
        if (name.empty() || !decided.insert(name).second) continue;
        if (config_value(config, name) == config_value(defaults, name))
          set_config_key(config, name, std::to_string(info.dims[i + 1]));
      }
    }
}

TokenData run_data(const std::string &path, const std::string &key, long long d, long long d_out, long long vocab,
                   TokenData *test) {
  h5::Handle file = h5::open_input(path, key);
  const Checker check{file, key, path};
  // A task of symbols: the symbols (int64, each in [0, k)) and the chains'
  // matrices, where the file has them.
  const auto symbols = [&](TokenData &data, const char *name, const char *transitions) {
    data.vocab = vocab;
    if (vocab == 0 || !h5::exists(file, name)) return;
    check.dataset(name, {static_cast<hsize_t>(data.N), static_cast<hsize_t>(data.n)}, false, Stored::Int64);
    for (const double s : check.values(name)) {
      if (!(s >= 0 && s < static_cast<double>(vocab) && s == std::floor(s)))
        check.refuse(std::string(name) + " holds " + to_string(ConfigValue(s)) + ", not a symbol of 0.." +
                     std::to_string(vocab - 1));
      data.symbols.push_back(static_cast<long long>(s));
    }
    if (!transitions || !h5::exists(file, transitions)) return;
    const auto k = static_cast<hsize_t>(vocab);
    check.dataset(transitions, {static_cast<hsize_t>(data.N), k, k}, false);
    data.transitions = check.values(transitions);
    require_finite(key, path, transitions, data.transitions);
  };
  const auto read = [&](const char *tokens, const char *targets) {
    TokenData data;
    const auto shape = check.dataset(tokens, {kAny, kAny, static_cast<hsize_t>(d)}, false);
    check.dataset(targets, {shape.dims[0], static_cast<hsize_t>(d_out)}, false);
    data.N = static_cast<long long>(shape.dims[0]);
    data.n = static_cast<long long>(shape.dims[1]);
    data.d = d;
    data.d_out = d_out;
    data.tokens = check.values(tokens);
    data.targets = check.values(targets);
    require_finite(key, path, tokens, data.tokens);
    require_finite(key, path, targets, data.targets);
    return data;
  };
  TokenData data = read("/data/tokens", "/data/targets");
  symbols(data, "/data/symbols", nullptr);
  if (test) {
    *test = h5::exists(file, "/data/test_tokens") ? read("/data/test_tokens", "/data/test_targets")
                                                   : TokenData{0, data.n, d, d_out, {}, {}, 0, {}, {}};
    symbols(*test, "/data/test_symbols", "/data/test_transitions");
  }
  return data;
}

std::vector<Baseline> run_baselines(const std::string &path, const std::string &key) {
  h5::Handle file = h5::open_input(path, key);
  const Checker check{file, key, path};
  std::vector<Baseline> out;
  if (!h5::exists(file, "/baselines")) return out;
  check.own_group("/baselines");
  h5::Handle group = h5::open_group(file, "baselines");
  const auto has_text = [](hid_t obj, const std::string &name) {
    const std::vector<std::string> names = h5::attribute_names(obj);
    return std::find(names.begin(), names.end(), name) != names.end() &&
           h5::attribute_class(obj, name) == h5::AttributeClass::String;
  };
  const std::string reference = has_text(group, "reference") ? h5::read_string_attribute(group, "reference") : "";
  for (const std::string &name : h5::member_names(group)) {
    const std::string at = "/baselines/" + name;
    check.dataset(at, {1}, false);
    Baseline b{name, check.values(at)[0], "", name == reference};
    h5::Handle ds = h5::open_dataset(group, name);
    if (has_text(ds, "meaning")) b.meaning = h5::read_string_attribute(ds, "meaning");
    if (has_text(group, "unit")) b.unit = h5::read_string_attribute(group, "unit");
    const std::vector<std::string> names = h5::attribute_names(ds);
    if (std::find(names.begin(), names.end(), "accuracy") != names.end() &&
        h5::attribute_class(ds, "accuracy") == h5::AttributeClass::Float)
      b.accuracy = h5::read_float_attribute(ds, "accuracy").at(0);
    out.push_back(b);
  }
  return out;
}

} // namespace

long long inspect_particle_file(const std::string &path, const std::string &key, const Particles &layout,
                                long long snapshot) {
  return refusing(key, path, [&] { return particle_file_row(path, key, layout, snapshot); });
}

void resolve_particle_file_shapes(const std::string &path, const std::string &key, Config &config) {
  refusing(key, path, [&] { adopt_particle_file_shapes(path, key, config); });
}

TokenData read_run_data(const std::string &path, const std::string &key, long long d, long long d_out,
                        TokenData *test, long long vocab) {
  return refusing(key, path, [&] { return run_data(path, key, d, d_out, vocab, test); });
}

std::vector<Baseline> read_run_baselines(const std::string &path, const std::string &key) {
  return refusing(key, path, [&] { return run_baselines(path, key); });
}

} // namespace mft
