#pragma once
// The run's HDF5 file, in the schema of FORMAT.md (format "mft/1").
// One file per run, opened with the MPI-IO driver; every call is collective
// on the communicator. Particles are written by the ranks that own them, as
// hyperslabs: no rank gathers all particles.
#include "mft/config.hpp"
#include "mft/data.hpp"
#include "mft/h5.hpp"
#include "mft/particles.hpp"

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

class RunFile {
public:
  // Creates (truncates) `path` and writes the root attributes, /config and
  // /data, and creates the growing /particles datasets (and /history ones,
  // with `history`).
  RunFile(const std::string &path, MPI_Comm comm, const Config &config, const RunInfo &info,
          const TokenData &data, const Particles &particles, bool history = false);
  ~RunFile();
  RunFile(const RunFile &) = delete;
  RunFile &operator=(const RunFile &) = delete;

  // Appends one row to /particles: step, tau, and each rank's own particles.
  void append_snapshot(long long step, double tau, const Particles &particles);

  // Appends one row to /history (rank 0 writes; collective).
  void append_history(long long step, double tau, double risk, double objective, double grad_norm,
                      double wall_time);

  // Writes buffered data to the file (collective).
  void flush();

  // /forward: final tokens X(1), predictions yhat and the risk R.
  void write_forward(const TokenData &data, const double *X1, const std::vector<double> &yhat,
                     double risk);

  // Closes the complete file.
  void close();
  // Closes and removes the file: a failed run leaves no partial output.
  // The destructor does this for a file that was never closed.
  void discard();

  const std::string &path() const { return path_; }

private:
  std::string path_;
  MPI_Comm comm_;
  h5::Handle file_;
  h5::Handle step_, tau_, Q_, K_, V_, W1_, W2_;
  h5::Handle h_step_, h_tau_, h_risk_, h_objective_, h_grad_norm_, h_wall_;
  hsize_t snapshots_ = 0, history_rows_ = 0;
};

} // namespace mft
