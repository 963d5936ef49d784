#pragma once
// The data of a run: the training sequences of data.task and, with
// data.test_sequences (or a data file's test split), the held-out ones.
#include "mft/core/config.hpp"
#include "mft/model/tokens.hpp"

#include <mpi.h>

namespace mft {

struct TaskData {
  TokenData train;
  TokenData test; // N = 0: no held-out data
};

// Builds both for config.data.task (icl-linear, gaussian, teacher, families,
// file). Collective on comm (the teacher solves its forward problem).
TaskData make_task_data(const Config &config, MPI_Comm comm);

} // namespace mft
