#pragma once
// The `teacher` task: targets read out from a teacher particle system.
#include "mft/core/config.hpp"
#include "mft/model/tokens.hpp"

#include <mpi.h>

namespace mft {

// iid N(0, I) tokens (as `gaussian`) and targets read out from a teacher
// particle system of the same architecture, data.teacher_heads heads drawn
// with the student's law from seed data.seed. With data.seed = init.seed and
// the same width the teacher is the student (R = 0). Makes data.sequences
// training sequences, then data.test_sequences held-out ones from their own
// streams (data.test_seed; the caller splits them off). Collective.
TokenData make_teacher_data(const Config &config, MPI_Comm comm);

} // namespace mft
