#pragma once
// The run's HDF5 file, in the schema of FORMAT.md (format "mft/1").
// One file per run, opened with the MPI-IO driver; every call is collective
// on the grid's ranks. Particles are written by the ranks of sequence group 0
// that own them, as hyperslabs: no rank gathers all particles (the other
// groups hold the same particles and write nothing).
//
// Crash safety: history rows are kept in memory and written with the next
// snapshot; once every dataset of a snapshot is extended, written and
// flushed, the attributes /particles.complete (complete snapshots) and
// /history.complete (complete history rows) move and the file is flushed
// again. Readers and restarts ignore rows past those counts, so a run killed
// at any point, or stopped by a full disk, leaves a file that reads as it
// was at its last snapshot.
//
// Failures: before each snapshot rank 0 reserves the disk blocks it will
// take, with an allowance for HDF5's own structures (fallocate; where the
// file system cannot reserve, it compares the free space): a full disk or
// quota is a clean stop on every rank, the file as its last snapshot left it
// (HDF5 1.10 has no journal: a write that fails inside a metadata flush can
// damage structures the earlier snapshots need). A write that fails all the
// same (an I/O error) may strike one rank alone while the others wait inside
// the same collective HDF5 call: that rank ends the job (abort_job, through
// mpi_io_watch.hpp or an HDF5 error) with one line naming the file, what was
// being done and the system's error.
#include "mft/analysis/cgf.hpp"
#include "mft/analysis/ntk.hpp"
#include "mft/core/config.hpp"
#include "mft/core/process_grid.hpp"
#include "mft/tasks/data.hpp"
#include "mft/io/h5.hpp"
#include "mft/io/output_claim.hpp"
#include "mft/model/particles.hpp"
#include "mft/runs/history_columns.hpp"
#include "mft/train/objective.hpp"
#include "mft/train/optimizer.hpp"

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mpi.h>
#include <string>
#include <vector>

namespace mft {

// Facts about the run that the root attributes record.
struct RunInfo {
  std::string command_line;
  std::string created; // ISO 8601, the same string on every rank
  int ranks = 1;
  std::string program;  // argv[0], as the user wrote it
  std::string launcher; // launcher_prefix: "mpirun -n 2", "srun -n 4", or "" alone
  std::string config_file; // --config FILE, an input the output must not be
  std::vector<std::string> petsc_options; // the -options of the command line, without their values
  std::vector<std::string> options_files; // the -options_file files PETSc read (PETSC_OPTIONS' too)
};

// Builds RunInfo on every rank from rank 0's clock and the command line.
RunInfo make_run_info(MPI_Comm comm, int argc, const char *const *argv);

// A run file as read, checked, by inspect_run_file: where a restart
// continues (its last complete snapshot) and what the file holds.
struct RunFileSummary {
  long long row = 0;        // row of /particles: the last complete snapshot
  long long step = 0;       // training step of that snapshot
  double tau = 0.0;
  double wall_time = 0.0;   // /history/wall_time of its row, or of the last row before it (0: none)
  long long snapshots = 0;  // complete snapshots
  std::vector<long long> steps; // step of each complete snapshot
  std::vector<double> taus;     // tau of each complete snapshot
  long long history_rows = 0; // /history rows up to and including `step`
  bool has_history_row = false; // /history has the row of `step`
  std::map<std::string, double> history_row; // that row's columns (has_history_row)
  long long N = 0, n = 0;   // /data/tokens
  long long N_test = 0;     // /data/test_tokens
  std::map<std::string, std::string> config; // /config, rendered as INI text
  // How the program that created the file was built (root attributes
  // compiled_for and blas; empty in files from before them).
  std::string compiled_for, blas;
};

// Reads and checks, on this rank alone and without writing, every part of
// the run file `path` that a restart (`training`) or mft ntk --from reads:
// the format, /config, the types, shapes, layouts and row counts of /data,
// /particles and /history against the file's own configuration. InputError
// `key = path: why` (naming the dataset) for anything missing or malformed,
// so that no rank enters a collective read of a file that another refused.
RunFileSummary inspect_run_file(const std::string &path, const std::string &key, bool training);

// Reads and checks, on this rank alone and without writing, a file of
// particles for init.file: a run file, or any HDF5 file whose
// /particles/<matrix> datasets hold, for every matrix of every species of
// `layout`, floating-point values shaped (snapshots, L, M, rows, cols) (the
// complete snapshots of a run file: /particles.complete). Returns the row of
// `snapshot` (negative: from the end). InputError `key = path: why` naming the
// dataset and the shape expected, or init.snapshot beyond the file's rows.
long long inspect_particle_file(const std::string &path, const std::string &key, const Particles &layout,
                                long long snapshot);

// The architecture a file of particles holds, for the keys left at their
// defaults: each species' datasets give the model keys of their dimensions
// (ParticleMatrix::keys: the heads' model.slices, model.heads,
// model.head_dim; the neurons' model.mlp_particles, model.mlp_width), the
// first dataset that has a key deciding it. A key set to something else
// stays, and inspect_particle_file then refuses a file that contradicts it.
// Nothing more is taken once a species' dataset is missing or unreadable
// (inspect_particle_file says what is wrong with it).
void resolve_particle_file_shapes(const std::string &path, const std::string &key, Config &config);

// InputError `-OPTION = VALUE: why` when a file a PETSc option writes
// (petsc_outputs.hpp) is one of this run's files: run_inputs(config, info,
// `files`), output.file, output.log and the options files; or is no
// regular file, or has no folder. Every rank judges its own files (-info F
// writes F.RANK); call it on every rank, before any integrator is made.
void check_petsc_outputs_of_run(const Config &config, const RunInfo &info, InputFiles files);

// The files this run reads: `inputs` (a restart's file, ntk's --from) with
// info.config_file, data.file for data.task = file, and init.file.
InputFiles run_inputs(const Config &config, const RunInfo &info, InputFiles inputs);

// Checks, on rank 0 of comm and inside `collectively`, that
// config.output.file may become this run's new file (check_new_output)
// without being one of its inputs (run_inputs). `instead`: what else a user
// whose output exists may do (continue it), said beside output.overwrite.
void check_new_run_file(MPI_Comm comm, const Config &config, const RunInfo &info, InputFiles inputs,
                        const std::string &instead = "");

// /data of a checked run file (every rank reads it whole), and with `test`
// its held-out data (N = 0 when it has none); with a vocabulary k > 0 (a
// task of symbols) the symbols and chains' matrices where the file has them.
TokenData read_run_data(const std::string &path, const std::string &key, long long d, long long d_out,
                        TokenData *test = nullptr, long long vocab = 0);
// The /baselines of a run file (empty when it has none).
std::vector<Baseline> read_run_baselines(const std::string &path, const std::string &key);

// Snapshot `row` of a checked run file into this rank's share of
// `particles` and of the optimiser's `state` (every rank reads on its own,
// the file opened read-only); InputError `key = path: why`.
void read_run_snapshot(const std::string &path, const std::string &key, long long row, Particles &particles,
                       const OptimizerState &state = {});

// InputError `key = path: /particles/Q of SNAPSHOT has a non-finite value`
// (or of the optimiser's `state`) for this rank's share of a snapshot just
// read (`snapshot`: "the snapshot of step 40", "row 2"), and for optimiser
// state that cannot be: a negative entry of an array that cannot hold one
// (Adam's second moment), a counter outside [0, step] (the snapshot's step;
// Adam's t counts the steps taken). Call it inside `collectively`.
void require_sound_snapshot(const Particles &particles, const OptimizerState &state, long long step,
                            const std::string &key, const std::string &path, const std::string &snapshot);
// "the snapshot of step S".
inline std::string snapshot_of_step(long long step) { return "the snapshot of step " + std::to_string(step); }

// What `mft ntk` writes to /ntk; the pointers are the caller's, valid
// during write_ntk.
struct NtkRecord {
  const NtkSpectrum *kernel = nullptr;             // the Gram matrix and its spectrum
  std::string part;                                // ntk.part
  long long snapshot = 0;                          // the training step of the particles
  const CgfMargin *cgf = nullptr;                  // --cgf: the empirical test (else none)
  const std::vector<double> *cgf_points = nullptr; // its points z, K x d
  long long d = 0;
  const CgfMargin *population = nullptr;           // the closed-form test of a family, when it has one
  const NtkReport *report = nullptr;               // K_V's definiteness, the rate bound, Euler's limit
  double risk = std::numeric_limits<double>::quiet_NaN(); // R at the particles
};

class RunFile {
public:
  // Creates the new run file `path` under its hidden name (output_claim.hpp;
  // config.output.overwrite decides whether an existing file may be
  // replaced) and writes the root attributes, /config and /data, and creates
  // the growing /particles datasets (and with `history`, a training run's
  // /history: the columns of its shape, history_columns.hpp).
  // The file takes its name with its first snapshot (`history`: a training
  // run, which then is readable and restartable) or at close().
  // `test_data`: held-out sequences, written as /data/test_tokens and
  // /data/test_targets when there are any. A task of symbols adds
  // /data/symbols (and test_symbols, test_transitions) and, with
  // `baselines`, the group /baselines. `grid` must outlive the file;
  // its shape goes to the root attributes sequence_groups and head_ranks.
  RunFile(const std::string &path, const ProcessGrid &grid, const Config &config, const RunInfo &info,
          const TokenData &data, const Particles &particles, const HistoryShape *history = nullptr,
          const TokenData *test_data = nullptr, const std::vector<Baseline> *baselines = nullptr);

  // Opens the training run file `path`, checked by inspect_run_file, to
  // continue it: takes the writer's lock (or `lock`, already held) and opens
  // the datasets of `particles`' species and of /history; changes nothing.
  // `key` names the file in errors: --restart, or output.file for a copy.
  static std::unique_ptr<RunFile> reopen(const std::string &path, const ProcessGrid &grid,
                                         const Particles &particles, const std::string &key,
                                         WriterLock lock = {});

  // Drops the snapshots and history rows after `point` (the last complete
  // snapshot) from every dataset opened: the restart's first change to the
  // file, made once every check has passed; and writes into /config the
  // values of `config` for the keys a restart may change (restart_may_change)
  // where they differ from the file's, so that the next restart of the file
  // continues this one (its step count, its output.file, ...). A column of
  // the run's `shape` that the file lacks (written by an earlier version)
  // is added, its past rows NaN (tau: step x train.dtau). Collective.
  void continue_from(const RunFileSummary &point, const Config &config, const HistoryShape &shape);

  ~RunFile();
  RunFile(const RunFile &) = delete;
  RunFile &operator=(const RunFile &) = delete;

  // A string attribute of /history (e.g. the training method). Collective.
  void annotate_history(const std::string &name, const std::string &value);

  // The optimiser's state (optimizer.hpp) goes with every snapshot from now
  // on, under /optimizer: `t` (its counter) and one dataset per state array
  // and particle matrix, `m_Q` = array m of the Q matrices, shaped like
  // /particles/Q. A new file creates them (before its first snapshot); a
  // reopened one continues them. `state` must outlive the file. Collective.
  void keep_optimizer_state(const OptimizerState &state, const Particles &particles);

  // Appends one row to /particles (step, tau, each rank's own particles) and
  // /optimizer, writes the pending history rows, marks the snapshot
  // complete, flushes.
  void append_snapshot(long long step, double tau, const Particles &particles);

  // Appends one row to /history (`values` by column name, step among them;
  // a column without a value: NaN); written with the next snapshot or close().
  void append_history(const HistoryValues &values);

  // /forward: final tokens X(1) (X1: this group's block of the N sequences
  // of `data`), predictions yhat (all N) and the risk R; with `tokens_depth`
  // (this group's block, block x K+1 x n x d) the tokens at `depths`; a
  // token norm's drift from its constraint (NaN: none); a classifier's
  // accuracy (NaN: none); the held-out sequences' predictions, risk and
  // accuracy (`test`: null without held-out data).
  void write_forward(const TokenData &data, const double *X1, const std::vector<double> &yhat, double risk,
                     const std::vector<double> *tokens_depth = nullptr, const std::vector<double> &depths = {},
                     double drift = std::numeric_limits<double>::quiet_NaN(),
                     double accuracy = std::numeric_limits<double>::quiet_NaN(), const Measure *test = nullptr);

  // After write_forward: what output.attention and ablate.slices add to
  // /forward (attention: (S, L, n, n) of `count` sequences, each slice's
  // head-averaged attention; the ablation's risks as attributes).
  struct ForwardAttention {
    std::string name;              // /forward/<name>
    std::vector<double> values;    // S x L x n x n
    long long count = 0, slices = 0, tokens = 0;
  };
  struct Ablation {
    std::string slices;            // "" for none
    double risk = 0.0, test_risk = std::numeric_limits<double>::quiet_NaN();
  };
  void write_forward_extras(const std::vector<ForwardAttention> &attention, const Ablation &ablation);

  // /ntk: the Gram matrix and its eigenvalues (ascending), with the
  // attributes part, snapshot, lambda_min, lambda_max; with a CGF test,
  // also /ntk/cgf_singular_values (descending), /ntk/cgf_points (K x d) and
  // the attribute cgf_margin (and cgf_margin_population when given).
  void write_ntk(const NtkRecord &record);

  // Writes what is pending and closes the complete file.
  void close();
  // Closes and removes a file this object created (a failed run leaves no
  // partial output); a reopened file is only closed. The destructor does
  // this for a file that was never closed.
  void discard();
  // Step of the last snapshot written (-1: none).
  long long last_snapshot_step() const { return last_snapshot_step_; }

  const std::string &path() const { return path_; }
  // Wall seconds this rank spent writing, flushing and reading the file.
  double seconds() const { return seconds_; }

private:
  RunFile(const std::string &path, const std::string &key, const ProcessGrid &grid)
      : path_(path), key_(key), grid_(grid), comm_(grid.world()) {}
  // The growing /history/<name>: (T,) for width 0, else (T, width).
  h5::Handle create_column(const std::string &name, hsize_t width);
  // /data/symbols, test_symbols, test_transitions and /baselines of a task of symbols.
  void write_symbols(const TokenData &data, const TokenData *test_data, const std::vector<Baseline> *baselines);
  // Extends /history by the pending rows and writes them; the new row count.
  hsize_t write_history_rows();
  // Creates the columns of `shape` the reopened file lacks, `rows` rows
  // long (their past values NaN, tau step x dtau), and rewrites
  // /history.columns.
  void add_missing_columns(const HistoryShape &shape, hsize_t rows, double dtau);
  // Sets /particles.complete and /history.complete (once the rows they count
  // are flushed) and flushes.
  void publish_counts(hsize_t snapshots, hsize_t history_rows);
  void flush();
  // Runs one write or read of the file (`what`: "writing the snapshot of
  // step 40"); an error in it ends the job (see above).
  void phase(const std::string &what, const std::function<void()> &step);
  // Makes this rank's MPI-IO errors on the file end the job with failure().
  void watch();
  // The line a failure ends the job with: the file, what was being done, why.
  std::string failure(const std::string &why) const;
  // File space the next snapshot's rows take (particles, optimiser state,
  // pending history), in the whole chunks parallel HDF5 allocates.
  hsize_t snapshot_bytes() const;
  // A clean stop on every rank (Error) when the file system lacks room for
  // `bytes` and HDF5's overhead.
  void require_space(const std::string &what, hsize_t bytes);
  // Rank 0: frees the reserved blocks the file did not use (at its close).
  void release_reservation();

  struct HistoryRow {
    long long step;
    std::vector<double> values; // columns_ in order, widths_[c] values each (1 for a scalar)
  };

  void publish();

  std::string path_, key_; // key_: how errors name the file (output.file, --restart)
  std::string doing_ = "opening it"; // the phase under way, for failure()
  double seconds_ = 0.0; // in phase(), the outermost only
  int phase_depth_ = 0;
  const ProcessGrid &grid_;
  MPI_Comm comm_;
  bool created_ = false, publish_at_snapshot_ = false;
  long long last_snapshot_step_ = -1;
  PendingOutput output_;  // rank 0, a created file
  WriterLock lock_;       // rank 0, a reopened file
  h5::Handle file_, particle_group_, history_group_;
  MPI_File watched_ = MPI_FILE_NULL; // the file's MPI-IO handle, watched until closed
  std::map<std::string, h5::Handle> particles_; // step, tau and every matrix of every species
  std::map<std::string, h5::Handle> history_;   // step and the columns
  std::map<std::string, h5::Handle> optimizer_; // t and the state arrays
  OptimizerState optimizer_state_;
  std::vector<std::string> columns_;            // the /history columns after step
  std::vector<hsize_t> widths_;                 // their values a row; 0: a scalar column (T,)
  hsize_t snapshots_ = 0, history_rows_ = 0;
  long long reserved_end_ = 0; // rank 0: end of the blocks reserved for the file
  std::vector<HistoryRow> pending_;
};

} // namespace mft
