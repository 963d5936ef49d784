#pragma once
// `mft ntk`: the NTK Gram K = (M L) J J^T of a parameter group at the
// initial particles, or at a snapshot of a run file (--from FILE
// --snapshot S), its spectrum, and with --cgf the log-sum-exp injectivity
// margin of the data's token measures (and, for the families with a closed
// form, of their populations). Collective on comm.
#include "mft/runs/command_line.hpp"
#include "mft/analysis/cgf.hpp"
#include "mft/core/config.hpp"
#include "mft/analysis/ntk.hpp"
#include "mft/runs/run_file.hpp"
#include "mft/train/objective.hpp"

#include <mpi.h>
#include <ostream>

namespace mft {

struct NtkRunResult {
  NtkSpectrum spectrum; // K of ntk.part
  NtkReport report;     // from K_V and K_all (one sweep with the part's)
  double risk = 0.0;    // R at these particles
  bool cgf = false;
  CgfMargin empirical;            // with --cgf
  bool has_population = false;
  CgfMargin population;           // with --cgf, families with a closed form
};

NtkRunResult run_ntk(MPI_Comm comm, const Config &config, const CommandOptions &options, const RunInfo &info,
                     std::ostream *log, bool write = true);

} // namespace mft
