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

class RunFile {
public:
  // Creates (truncates) `path` and writes the root attributes, /config and
  // /data, and creates the growing /particles datasets (and /history ones,
  // with `history`).
  RunFile(const std::string &path, MPI_Comm comm, const Config &config, const RunInfo &info,
          const TokenData &data, const Particles &particles, bool history = false);

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
  void append_history(long long step, double tau, double risk, double objective, double grad_norm,
                      double wall_time);

  // /forward: final tokens X(1), predictions yhat and the risk R.
  void write_forward(const TokenData &data, const double *X1, const std::vector<double> &yhat,
                     double risk);

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
    double values[5]; // tau, risk, objective, grad_norm, wall_time
  };

  std::string path_;
  MPI_Comm comm_;
  bool created_ = false;
  h5::Handle file_, particle_group_;
  std::map<std::string, h5::Handle> particles_; // step, tau, Q, K, V[, W1, W2]
  std::map<std::string, h5::Handle> history_;   // step, tau, risk, objective, grad_norm, wall_time
  hsize_t snapshots_ = 0, history_rows_ = 0;
  std::vector<HistoryRow> pending_;
};

} // namespace mft
