#pragma once
// `mft train`: data -> particles -> the gradient flow in training time, with
// a progress line every train.print_every steps, /history every step and a
// particle snapshot every output.snapshot_every steps (and the first and
// last). Collective on comm.
#include "mft/config.hpp"
#include "mft/run_file.hpp"

#include <mpi.h>
#include <ostream>
#include <vector>

namespace mft {

struct TrainResult {
  double risk_initial = 0.0;
  double risk_final = 0.0;
  std::vector<double> risks;        // R of every history row
  std::vector<double> theta_final;  // this rank's particles (flat layout of Particles)
  double seconds = 0.0;             // wall time of the training loop
};

TrainResult run_train(MPI_Comm comm, Config config, const RunInfo &info, std::ostream *log,
                      bool write = true);

} // namespace mft
