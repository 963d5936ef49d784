#include "mft/runs/run_file.hpp"

#include "mft/core/petsc_session.hpp"
#include "mft/io/petsc_outputs.hpp"

#include "mft/core/blas_info.hpp"
#include "mft/core/error.hpp"
#include "mft/core/log_events.hpp"
#include "mft/core/version.hpp"
#include "mft/io/mpi_io_watch.hpp"
#include "mft/runs/launcher.hpp"
#include "mft/tasks/task.hpp"

#include <cctype>
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <cstdio>
#include <ctime>
#include <limits>

namespace mft {
namespace {


void write_config(hid_t group, const Config &config) {
  for (const ConfigEntry &e : config_entries(config))
    std::visit([&](const auto &v) { h5::write_attribute(group, e.key, v); }, e.value);
}

// Chunks of one snapshot of a slice, or of as many particles as fit in ~512 KiB.
std::vector<hsize_t> particle_chunk(long long M, long long rows, long long cols) {
  const long long per = std::max<long long>(1, rows * cols);
  const long long count = std::clamp<long long>(65536 / per, 1, std::max<long long>(M, 1));
  return {1, static_cast<hsize_t>(count), static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
}

// One particle matrix of a species: this rank's values of it (`Value` is
// double to read into them, const double to write them), its owned block
// [begin, count) of particles and its row shape.
template <class Value>
struct SpeciesBlock {
  std::string name, species;
  Value *values;
  long long M, begin, count, rows, cols;
};

// The blocks of every species of `p` (Particles, or const Particles to write).
template <class P>
auto species_blocks(P &p) {
  using Value = std::conditional_t<std::is_const_v<P>, const double, double>;
  std::vector<SpeciesBlock<Value>> out;
  for (auto *s : p.species())
    for (size_t k = 0; k < s->matrices().size(); ++k) {
      const ParticleMatrix &m = s->matrices()[k];
      out.push_back({m.name, s->name(), s->values(k).data(), s->M, s->own.begin, s->own.count(), m.rows, m.cols});
    }
  return out;
}

// The same blocks in an array of the flat layout of Particles (an
// optimiser's state `array`): dataset names `array`_`matrix`.
template <class P>
auto state_blocks(P &p, const std::string &array, std::vector<double> &flat) {
  auto out = species_blocks(p);
  double *at = flat.data();
  for (auto &b : out) {
    b.name = array + "_" + b.name;
    b.values = at;
    at += p.slices() * b.count * b.rows * b.cols;
  }
  return out;
}

template <class Block>
std::vector<hsize_t> block_start(long long row, const Block &b) {
  return {static_cast<hsize_t>(row), 0, static_cast<hsize_t>(b.begin), 0, 0};
}

template <class Block>
std::vector<hsize_t> block_count(long long L, const Block &b) {
  return {1, static_cast<hsize_t>(L), static_cast<hsize_t>(b.count), static_cast<hsize_t>(b.rows),
          static_cast<hsize_t>(b.cols)};
}

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

} // namespace

RunInfo make_run_info(MPI_Comm comm, int argc, const char *const *argv) {
  RunInfo info;
  for (int i = 0; i < argc; ++i) info.command_line += (i ? " " : "") + std::string(argv[i]);
  if (argc > 0) {
    const std::vector<std::string> petsc = split_arguments(argc, argv).petsc;
    for (const std::string &word : petsc)
      if (word.size() > 1 && word[0] == '-' && !std::isdigit(static_cast<unsigned char>(word[1])) && word[1] != '.')
        info.petsc_options.push_back(word.substr(1));
    try {
      petsc_options_of(petsc, &info.options_files);
    } catch (const Error &) { // refused before PETSc started (PetscSession)
    }
  }
  MPI_Comm_size(comm, &info.ranks);
  info.program = argc > 0 ? argv[0] : "mft";
  info.launcher = launcher_prefix(info.ranks);
  char stamp[32] = "";
  if (rank_of(comm) == 0) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", &tm);
  }
  MPI_Bcast(stamp, sizeof stamp, MPI_CHAR, 0, comm);
  info.created = stamp;
  return info;
}

InputFiles run_inputs(const Config &config, const RunInfo &info, InputFiles inputs) {
  inputs.push_back({"--config", info.config_file});
  for (const auto &input : task_inputs(config)) inputs.push_back(input);
  if (!config.init.file.empty()) inputs.push_back({"init.file", config.init.file});
  return inputs;
}

void check_petsc_outputs_of_run(const Config &config, const RunInfo &info, InputFiles files) {
  files = run_inputs(config, info, std::move(files));
  files.push_back({"output.file", config.output.file});
  files.push_back({"output.log", config.output.log});
  for (const std::string &file : info.options_files) files.push_back({"-options_file", file});
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  check_petsc_outputs(petsc_options_in_database(), rank, files, false);
}

void check_new_run_file(MPI_Comm comm, const Config &config, const RunInfo &info, InputFiles inputs,
                        const std::string &instead) {
  if (rank_of(comm) != 0) return;
  check_new_output(config.output.file, config.output.overwrite, run_inputs(config, info, std::move(inputs)), instead);
}

void require_sound_snapshot(const Particles &particles, const OptimizerState &state, long long step,
                            const std::string &key, const std::string &path, const std::string &snapshot) {
  const std::string of = " of " + snapshot + " has a non-finite value";
  for (const ParticleSpecies *s : particles.species())
    for (size_t k = 0; k < s->matrices().size(); ++k)
      for (double v : s->values(k))
        if (!std::isfinite(v)) throw InputError(key_error(key, path, "/particles/" + s->matrices()[k].name + of));
  for (const auto &[array, flat] : state.arrays) {
    const bool signed_ok =
        std::find(state.nonnegative.begin(), state.nonnegative.end(), array) == state.nonnegative.end();
    for (double v : *flat) {
      if (!std::isfinite(v)) throw InputError(key_error(key, path, "/optimizer/" + array + "_*" + of));
      if (!signed_ok && v < 0.0)
        throw InputError(key_error(key, path,
                                   "/optimizer/" + array + "_* of " + snapshot + " has a negative value, " +
                                       to_string(ConfigValue{v}) + ", which this optimiser's state cannot hold"));
    }
  }
  if (state.counter && (*state.counter < 0 || *state.counter > step))
    throw InputError(key_error(key, path, "/optimizer/t of " + snapshot + " is " + std::to_string(*state.counter) +
                                              ": the optimiser's steps lie in [0, " + std::to_string(step) + "]"));
}

void read_run_snapshot(const std::string &path, const std::string &key, long long row, Particles &particles,
                       const OptimizerState &state) {
  h5::Handle file = h5::open_input(path, key);
  const auto read = [&](const std::string &name, const std::vector<hsize_t> &start, const std::vector<hsize_t> &count,
                        hid_t type, void *values) {
    h5::Handle ds(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
    if (!ds.valid()) throw InputError(key_error(key, path, "has no " + name));
    try {
      h5::read_block(ds, start, count, type, values, false);
    } catch (const Error &e) {
      throw InputError(key_error(key, path, e.what()));
    }
  };
  const long long L = particles.slices();
  for (const auto &b : species_blocks(particles))
    read("/particles/" + b.name, block_start(row, b), block_count(L, b), H5T_NATIVE_DOUBLE, b.values);
  if (state.counter) read("/optimizer/t", {static_cast<hsize_t>(row)}, {1}, H5T_NATIVE_LLONG, state.counter);
  for (const auto &[array, flat] : state.arrays)
    for (const auto &b : state_blocks(particles, array, *flat))
      read("/optimizer/" + b.name, block_start(row, b), block_count(L, b), H5T_NATIVE_DOUBLE, b.values);
}

RunFile::RunFile(const std::string &path, const ProcessGrid &grid, const Config &config, const RunInfo &info,
                 const TokenData &data, const Particles &particles, const HistoryShape *history,
                 const TokenData *test_data, const std::vector<Baseline> *baselines)
    : path_(path), key_("output.file"), grid_(grid), comm_(grid.world()), created_(true),
      publish_at_snapshot_(history != nullptr) {
  const MPI_Comm comm = comm_;
  collectively(comm, [&] {
    if (rank_of(comm) == 0) output_ = PendingOutput(path, config.output.overwrite);
  });
  const std::string what = "writing its header, /config and /data";
  try {
    file_ = h5::create_parallel(PendingOutput::partial_path(path), comm, "output.file", path);
    watch();
    const size_t test_values = test_data ? test_data->tokens.size() + test_data->targets.size() +
                                               test_data->symbols.size() + test_data->transitions.size()
                                         : 0;
    require_space(what, (data.tokens.size() + data.targets.size() + data.symbols.size() + test_values) *
                            sizeof(double));
  } catch (...) {
    discard();
    throw;
  }
  phase(what, [&] {
    h5::write_attribute(file_, "format", std::string("mft/1"));
    h5::write_attribute(file_, "mft_version", std::string(kVersion));
    h5::write_attribute(file_, "compiled_for", std::string(kCompiledFor));
    h5::write_attribute(file_, "blas", blas_provenance());
    h5::write_attribute(file_, "created", info.created);
    h5::write_attribute(file_, "command_line", info.command_line);
    h5::write_attribute(file_, "ranks", info.ranks);
    h5::write_attribute(file_, "sequence_groups", static_cast<long long>(grid.groups()));
    h5::write_attribute(file_, "head_ranks", static_cast<long long>(grid.head_ranks()));

    h5::Handle cfg = h5::create_group(file_, "config");
    write_config(cfg, config);

    h5::Handle grp = h5::create_group(file_, "data");
    const auto N = static_cast<hsize_t>(data.N), n = static_cast<hsize_t>(data.n),
               d = static_cast<hsize_t>(data.d), d_out = static_cast<hsize_t>(data.d_out);
    h5::write_dataset(file_, "/data/tokens", {N, n, d}, data.tokens.data(), comm);
    h5::write_dataset(file_, "/data/targets", {N, d_out}, data.targets.data(), comm);
    if (test_data && test_data->N > 0) {
      const auto Nt = static_cast<hsize_t>(test_data->N);
      h5::write_dataset(file_, "/data/test_tokens", {Nt, n, d}, test_data->tokens.data(), comm);
      h5::write_dataset(file_, "/data/test_targets", {Nt, d_out}, test_data->targets.data(), comm);
    }
    write_symbols(data, test_data, baselines);

    particle_group_ = h5::create_group(file_, "particles");
    h5::write_attribute(particle_group_, "complete", 0LL);
    particles_["step"] = h5::create_growing(file_, "/particles/step", {}, H5T_STD_I64LE, {}, 64);
    particles_["tau"] = h5::create_growing(file_, "/particles/tau", {}, H5T_IEEE_F64LE, {}, 64);
    const auto L = static_cast<hsize_t>(particles.slices());
    for (const auto &b : species_blocks(particles)) {
      const std::vector<hsize_t> row = {L, static_cast<hsize_t>(b.M), static_cast<hsize_t>(b.rows),
                                        static_cast<hsize_t>(b.cols)};
      particles_[b.name] = h5::create_growing(file_, "/particles/" + b.name, row, H5T_IEEE_F64LE,
                                              particle_chunk(b.M, b.rows, b.cols));
      h5::write_attribute(particles_[b.name], "species", b.species);
    }
    if (history) {
      history_group_ = h5::create_group(file_, "history");
      h5::write_attribute(history_group_, "complete", 0LL);
      history_["step"] = h5::create_growing(file_, "/history/step", {}, H5T_STD_I64LE, {}, 1024);
      std::string names = "step";
      for (const HistoryColumn *c : history_columns_of(*history)) {
        if (c->name == std::string("step")) continue;
        columns_.push_back(c->name);
        names += std::string(",") + c->name;
        widths_.push_back(c->length ? static_cast<hsize_t>(history_width(*c, *history)) : 0);
        history_[c->name] = create_column(c->name, widths_.back());
      }
      h5::write_attribute(history_group_, "columns", names);
      // Each column's chunk index is made now, before the file is published:
      // made by a later write, a failure inside that write's flush could
      // leave the column pointing at an index never written (measured with
      // a write failing on one rank: the restart then found no /history).
      for (auto &[name, ds] : history_) {
        h5::set_rows(ds, 1);
        h5::set_rows(ds, 0);
      }
    }
  });
}

std::unique_ptr<RunFile> RunFile::reopen(const std::string &path, const ProcessGrid &grid, const Particles &particles,
                                         const std::string &key, WriterLock lock) {
  const MPI_Comm comm = grid.world();
  std::unique_ptr<RunFile> f(new RunFile(path, key, grid));
  collectively(comm, [&] {
    if (rank_of(comm) == 0) f->lock_ = lock.fd() >= 0 ? std::move(lock) : WriterLock(path, key);
  });
  f->file_ = h5::open_parallel(path, comm, key);
  f->watch();
  // The datasets this run continues (inspect_run_file checked them); any
  // other object of the file is left alone.
  f->phase("opening it", [&] {
    f->particle_group_ = h5::open_group(f->file_, "particles");
    f->history_group_ = h5::open_group(f->file_, "history");
    std::vector<std::string> names = {"step", "tau"};
    for (const auto &b : species_blocks(particles)) names.push_back(b.name);
    for (const std::string &name : names) f->particles_[name] = h5::open_dataset(f->particle_group_, name);
    // Every column the file has (inspect_run_file checked them); a row of
    // the restart fills those it has values for, and continue_from adds
    // those of the run it lacks.
    for (const HistoryColumn &c : history_columns()) {
      if (!h5::exists(f->file_, std::string("/history/") + c.name)) continue;
      f->history_[c.name] = h5::open_dataset(f->history_group_, c.name);
      if (c.name == std::string("step")) continue;
      f->columns_.push_back(c.name);
      const std::vector<hsize_t> dims = h5::shape(f->history_[c.name]);
      f->widths_.push_back(c.length && dims.size() == 2 ? dims[1] : 0);
    }
  });
  return f;
}

void RunFile::continue_from(const RunFileSummary &point, const Config &config, const HistoryShape &shape) {
  // The only change a restart makes before its first step, after every check:
  // the rows past the last complete snapshot (of a run killed or stopped by a
  // full disk after it) are dropped from every dataset the run continues.
  const std::string what = "dropping its rows after the snapshot of step " + std::to_string(point.step);
  last_snapshot_step_ = point.step;
  require_space(what, 0);
  phase(what, [&] {
    const auto snapshots = static_cast<hsize_t>(point.snapshots), keep = static_cast<hsize_t>(point.history_rows);
    // The counts first (never above the rows, whatever stops the job
    // between the two flushes), then the rows.
    publish_counts(snapshots, keep);
    for (auto &[name, ds] : particles_) h5::set_rows(ds, snapshots);
    for (auto &[name, ds] : optimizer_) h5::set_rows(ds, snapshots);
    for (auto &[name, ds] : history_) h5::set_rows(ds, keep);
    add_missing_columns(shape, keep, config.train.dtau);
    h5::Handle group = h5::open_group(file_, "config");
    for (const ConfigEntry &e : config_entries(config)) {
      const auto stored = point.config.find(e.key);
      if (restart_may_change(e.key) && (stored == point.config.end() || stored->second != to_string(e.value)))
        std::visit([&](const auto &v) { h5::write_attribute(group, e.key, v); }, e.value);
    }
    flush();
  });
}

void RunFile::add_missing_columns(const HistoryShape &shape, hsize_t rows, double dtau) {
  std::vector<const HistoryColumn *> added;
  for (const HistoryColumn *c : history_columns_of(shape))
    if (!history_.count(c->name)) added.push_back(c);
  if (added.empty()) return;
  // The past rows' values, where the column can compute them (tau: step x
  // dtau), NaN where nothing of a past row can be known now.
  std::vector<double> steps(rows), past(rows);
  if (rows > 0) h5::read_block(history_["step"], {0}, {rows}, H5T_NATIVE_DOUBLE, steps.data());
  const hsize_t mine = rank_of(comm_) == 0 ? rows : 0;
  for (const HistoryColumn *c : added) {
    const std::string name = c->name;
    const hsize_t width = c->length ? static_cast<hsize_t>(history_width(*c, shape)) : 0;
    for (hsize_t i = 0; i < rows; ++i)
      past[i] = c->past ? c->past(steps[i], dtau) : std::numeric_limits<double>::quiet_NaN();
    history_[name] = create_column(name, width);
    h5::set_rows(history_[name], rows);
    if (width == 0) {
      h5::write_block(history_[name], {0}, {mine}, H5T_NATIVE_DOUBLE, past.data());
    } else {
      const std::vector<double> none(rows * width, std::numeric_limits<double>::quiet_NaN());
      h5::write_block(history_[name], {0, 0}, {mine, mine ? width : 0}, H5T_NATIVE_DOUBLE, none.data());
    }
    columns_.push_back(name);
    widths_.push_back(width);
  }
  std::string names = "step";
  for (const std::string &name : columns_) names += "," + name;
  h5::write_attribute(history_group_, "columns", names);
}

void RunFile::annotate_history(const std::string &name, const std::string &value) {
  phase("writing the attribute /history." + name, [&] { h5::write_attribute(history_group_, name, value); });
}

void RunFile::keep_optimizer_state(const OptimizerState &state, const Particles &particles) {
  optimizer_state_ = state;
  if (state.empty()) return;
  const Particles &p = particles;
  phase("opening /optimizer", [&] {
    const bool create = !h5::exists(file_, "/optimizer");
    h5::Handle group = create ? h5::create_group(file_, "optimizer") : h5::open_group(file_, "optimizer");
    if (state.counter)
      optimizer_["t"] = create ? h5::create_growing(file_, "/optimizer/t", {}, H5T_STD_I64LE, {}, 64)
                               : h5::open_dataset(group, "t");
    const auto L = static_cast<hsize_t>(particles.slices());
    for (const auto &[array, flat] : state.arrays)
      for (const auto &b : state_blocks(p, array, *flat)) {
        if (!create) {
          optimizer_[b.name] = h5::open_dataset(group, b.name);
          continue;
        }
        const std::vector<hsize_t> row = {L, static_cast<hsize_t>(b.M), static_cast<hsize_t>(b.rows),
                                          static_cast<hsize_t>(b.cols)};
        optimizer_[b.name] = h5::create_growing(file_, "/optimizer/" + b.name, row, H5T_IEEE_F64LE,
                                                particle_chunk(b.M, b.rows, b.cols));
        h5::write_attribute(optimizer_[b.name], "species", b.species);
      }
  });
}

RunFile::~RunFile() {
  if (file_.valid()) discard();
}

void RunFile::append_snapshot(long long step, double tau, const Particles &particles) {
  LogScope log(&LogEvents::file_write);
  const std::string what = "writing the snapshot of step " + std::to_string(step);
  // A snapshot is published in three moves: every dataset of it (and the
  // pending history rows) is extended and written, the file flushed; only
  // then do the `complete` counts move, and the file is flushed again. A
  // failure anywhere before leaves the counts at the previous snapshot, and
  // readers and restarts ignore the rows past them.
  const hsize_t row = snapshots_;
  require_space(what, snapshot_bytes());
  phase(what, [&] {
    for (auto &[name, ds] : particles_) h5::set_rows(ds, row + 1);
    for (auto &[name, ds] : optimizer_) h5::set_rows(ds, row + 1);
    const hsize_t mine = rank_of(comm_) == 0 ? 1 : 0;
    // This rank's particle block, or none outside sequence group 0 (the
    // other groups hold the same particles).
    const auto written_count = [&](long long L, const auto &b) {
      return grid_.group() == 0 ? block_count(L, b) : std::vector<hsize_t>(5, 0);
    };
    h5::write_block(particles_["step"], {row}, {mine}, H5T_NATIVE_LLONG, &step);
    h5::write_block(particles_["tau"], {row}, {mine}, H5T_NATIVE_DOUBLE, &tau);
    for (const auto &b : species_blocks(particles))
      h5::write_block(particles_[b.name], block_start(static_cast<long long>(row), b),
                      written_count(particles.slices(), b), H5T_NATIVE_DOUBLE, b.values);
    if (optimizer_state_.counter)
      h5::write_block(optimizer_["t"], {row}, {mine}, H5T_NATIVE_LLONG, optimizer_state_.counter);
    for (const auto &[array, flat] : optimizer_state_.arrays)
      for (const auto &b : state_blocks(particles, array, *flat))
        h5::write_block(optimizer_[b.name], block_start(static_cast<long long>(row), b),
                        written_count(particles.slices(), b), H5T_NATIVE_DOUBLE, b.values);
    const hsize_t history_rows = write_history_rows();
    flush();
    publish_counts(row + 1, history_rows);
  });
  last_snapshot_step_ = step;
  if (publish_at_snapshot_) publish();
}

void RunFile::publish() {
  if (!created_) return;
  collectively(comm_, [&] {
    if (rank_of(comm_) == 0) output_.publish();
  });
}

void RunFile::append_history(const HistoryValues &values) {
  const auto value = [&](const std::string &name) {
    const auto it = values.find(name);
    return it == values.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
  };
  HistoryRow row{static_cast<long long>(value("step")), {}};
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (widths_[c] == 0) row.values.push_back(value(columns_[c]));
    for (hsize_t j = 0; j < widths_[c]; ++j)
      row.values.push_back(value(history_element(columns_[c], static_cast<long long>(j))));
  }
  pending_.push_back(std::move(row));
}

h5::Handle RunFile::create_column(const std::string &name, hsize_t width) {
  if (width == 0) return h5::create_growing(file_, "/history/" + name, {}, H5T_IEEE_F64LE, {}, 1024);
  return h5::create_growing(file_, "/history/" + name, {width}, H5T_IEEE_F64LE, {width}, 64);
}

void RunFile::publish_counts(hsize_t snapshots, hsize_t history_rows) {
  h5::write_attribute(particle_group_, "complete", static_cast<long long>(snapshots));
  if (history_group_.valid()) h5::write_attribute(history_group_, "complete", static_cast<long long>(history_rows));
  flush();
  snapshots_ = snapshots;
  history_rows_ = history_rows;
}

hsize_t RunFile::write_history_rows() {
  if (pending_.empty() || history_.empty()) return history_rows_;
  const hsize_t rows = pending_.size(), first = history_rows_, total = first + rows;
  const hsize_t mine = rank_of(comm_) == 0 ? rows : 0;
  std::vector<long long> steps;
  std::vector<double> column(rows);
  for (const HistoryRow &r : pending_) steps.push_back(r.step);
  for (auto &[name, ds] : history_) h5::set_rows(ds, total);
  h5::write_block(history_["step"], {first}, {mine}, H5T_NATIVE_LLONG, steps.data());
  size_t at = 0; // the column's first value in a row
  for (size_t c = 0; c < columns_.size(); ++c) {
    const hsize_t width = std::max<hsize_t>(widths_[c], 1);
    column.resize(rows * width);
    for (hsize_t i = 0; i < rows; ++i)
      std::copy_n(pending_[i].values.begin() + static_cast<std::ptrdiff_t>(at), width, column.begin() + i * width);
    if (widths_[c] == 0)
      h5::write_block(history_[columns_[c]], {first}, {mine}, H5T_NATIVE_DOUBLE, column.data());
    else
      h5::write_block(history_[columns_[c]], {first, 0}, {mine, mine ? width : 0}, H5T_NATIVE_DOUBLE, column.data());
    at += width;
  }
  pending_.clear();
  return total;
}

void RunFile::close() {
  if (!file_.valid()) return;
  phase("closing it", [&] {
    if (!pending_.empty() && history_group_.valid()) {
      const hsize_t rows = write_history_rows();
      flush();
      publish_counts(snapshots_, rows);
    }
    flush();
    particles_.clear();
    history_.clear();
    optimizer_.clear();
    particle_group_.reset();
    history_group_.reset();
    h5::close_file(file_); // still watched: the writes of the close are checked too
  });
  unwatch_mpi_file(watched_);
  release_reservation();
  publish();
  // A file removed under the run (its folder deleted) takes every write
  // without an error; the run must not say it wrote it.
  collectively(comm_, [&] {
    if (rank_of(comm_) != 0) return;
    const std::string gone = (lock_.fd() >= 0 ? lock_ : output_.lock()).gone_from(path_);
    if (!gone.empty()) throw Error(key_error(key_, path_, gone + "; what it wrote is lost"));
  });
  lock_.release();
  output_.lock().release();
}

void RunFile::discard() {
  doing_ = "closing it";
  pending_.clear();
  particles_.clear();
  history_.clear();
  optimizer_.clear();
  particle_group_.reset();
  history_group_.reset();
  file_.reset();
  unwatch_mpi_file(watched_);
  release_reservation();
  MPI_Barrier(comm_);
  if (created_ && rank_of(comm_) == 0) output_.remove();
  lock_.release();
  MPI_Barrier(comm_);
}

} // namespace mft
