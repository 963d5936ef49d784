#pragma once
// The run's HDF5 file, in the schema of FORMAT.md (format "mft/1").
// One file per run, opened with the MPI-IO driver; every call is collective
// on the communicator. Particles are written by the ranks that own them, as
// hyperslabs: no rank gathers all particles.
//
// Crash safety: history rows are kept in memory and written with the next
// snapshot; after a snapshot's data the attribute /particles.complete (the
// number of complete snapshots) is raised and the file flushed. Between
// snapshots mft does not touch the file, so a run killed there leaves a file
// that reads as it was at its last snapshot.
#include "mft/config.hpp"
#include "mft/data.hpp"
#include "mft/h5.hpp"
#include "mft/particles.hpp"

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
};

// Builds RunInfo on every rank from rank 0's clock and the command line.
RunInfo make_run_info(MPI_Comm comm, int argc, const char *const *argv);

// Where a restarted run continues: its last complete snapshot.
struct RestartPoint {
  long long row = 0;        // row of /particles
  long long step = 0;       // training step of that snapshot
  double tau = 0.0;
  double wall_time = 0.0;   // /history/wall_time of that step
  std::map<std::string, std::string> config; // /config, rendered as INI text
};

// A finished run file read by every rank on its own (mft ntk --from):
// its configuration as INI text, its data, and one snapshot's particles.
struct StoredRun {
  std::map<std::string, std::string> config;
  TokenData data;
  long long row = 0, step = 0; // the snapshot read
  double tau = 0.0;
};
// Reads `path` (InputError naming `key = path` for a missing or foreign
// file); `row` < 0 counts from the last snapshot. Fills `particles` (this
// rank's share) when given; d <= 0 reads the configuration alone.
StoredRun read_stored_run(const std::string &path, const std::string &key, long long row, long long d,
                          Particles *particles);

class RunFile {
public:
  // Creates (truncates) `path` and writes the root attributes, /config and
  // /data, and creates the growing /particles datasets (and /history ones,
  // with `history`).
  // `extra_history`: names of further /history columns (after wall_time).
  RunFile(const std::string &path, MPI_Comm comm, const Config &config, const RunInfo &info,
          const TokenData &data, const Particles &particles, bool history = false,
          const std::vector<std::string> &extra_history = {});

  // Opens the training run file `path` to continue it from its last complete
  // snapshot, dropping the snapshots and history rows after it. Throws
  // InputError naming the file for a missing, foreign or truncated file.
  static std::unique_ptr<RunFile> reopen(const std::string &path, MPI_Comm comm,
                                         RestartPoint &point);

  ~RunFile();
  RunFile(const RunFile &) = delete;
  RunFile &operator=(const RunFile &) = delete;

  // The file's /data (tokens and targets); InputError if d differs.
  TokenData read_data(long long d);

  // Reads snapshot `row` into this rank's share of `particles`.
  void read_snapshot(long long row, Particles &particles);

  // Appends one row to /particles (step, tau, each rank's own particles),
  // writes the pending history rows, marks the snapshot complete, flushes.
  void append_snapshot(long long step, double tau, const Particles &particles);

  // Appends one row to /history; written with the next snapshot or close().
  // `extra`: the values of the extra columns, in their order.
  void append_history(long long step, double tau, double risk, double objective, double grad_norm,
                      double wall_time, const std::vector<double> &extra = {});

  // /forward: final tokens X(1), predictions yhat and the risk R.
  void write_forward(const TokenData &data, const double *X1, const std::vector<double> &yhat,
                     double risk);

  // /ntk: the Gram matrix and its eigenvalues (ascending), with the
  // attributes part, snapshot, lambda_min, lambda_max; with `cgf_values`,
  // also /ntk/cgf_singular_values (descending), /ntk/cgf_points (K x d) and
  // the attribute cgf_margin (and cgf_margin_population when given).
  void write_ntk(long long N, const std::vector<double> &gram, const std::vector<double> &eigenvalues,
                 const std::string &part, long long snapshot, const std::vector<double> *cgf_values,
                 const std::vector<double> *points, long long K, long long d,
                 const double *population_margin);

  // Writes what is pending and closes the complete file.
  void close();
  // Closes and removes a file this object created (a failed run leaves no
  // partial output); a reopened file is only closed. The destructor does
  // this for a file that was never closed.
  void discard();

  const std::string &path() const { return path_; }

private:
  RunFile(const std::string &path, MPI_Comm comm) : path_(path), comm_(comm) {}
  void write_pending_history();

  struct HistoryRow {
    long long step;
    std::vector<double> values; // tau, risk, objective, grad_norm, wall_time, extras
  };

  std::string path_;
  MPI_Comm comm_;
  bool created_ = false;
  h5::Handle file_, particle_group_;
  std::map<std::string, h5::Handle> particles_; // step, tau, Q, K, V[, W1, W2]
  std::map<std::string, h5::Handle> history_;   // step and the columns
  std::vector<std::string> columns_;            // tau, risk, objective, grad_norm, wall_time, extras
  hsize_t snapshots_ = 0, history_rows_ = 0;
  std::vector<HistoryRow> pending_;
};

} // namespace mft
