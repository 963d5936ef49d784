#pragma once
// mft-bench --comm: the all-reduce (sum of doubles, the one collective of a
// field evaluation) timed on these ranks from 8 B to 32 MiB, and the
// latency-bandwidth (alpha-beta) fit t(m) = alpha + beta m that
// docs/SCALING.md extrapolates from.
#include <mpi.h>

namespace mft::bench {

// Prints the table (or one JSON object with `json`); returns 0.
int run_comm_bench(MPI_Comm comm, bool json);

} // namespace mft::bench
