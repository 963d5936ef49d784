#pragma once
// A configured model on this rank: data, particles, the field and the depth
// solver, built the same way by every command.
#include "mft/config.hpp"
#include "mft/data.hpp"
#include "mft/depth.hpp"
#include "mft/field.hpp"
#include "mft/particles.hpp"
#include "mft/readout.hpp"

#include <mpi.h>
#include <memory>

namespace mft {

// This rank's particles of the configured architecture, `heads` heads per
// slice, drawn from rho_0 with the streams of `seed`.
Particles make_particles(const Config &config, MPI_Comm comm, std::uint64_t seed, long long heads);

// The `teacher` task: iid N(0, I) tokens (as `gaussian`) and targets read out
// from a teacher particle system of the same architecture, data.teacher_heads
// heads drawn with the student's law from seed data.seed. With data.seed =
// init.seed and the same width the teacher is the student (R = 0).
TokenData make_teacher_data(const Config &config, MPI_Comm comm);

struct Model {
  TokenData data;
  std::unique_ptr<Particles> particles;
  std::unique_ptr<DepthField> field;
  std::unique_ptr<DepthSolver> solver;
  std::unique_ptr<Readout> readout;
};

// Builds the model of `config` collectively; updates `config` with what was
// resolved (N and n of a data file, the depth TS after the options database).
// With `data`, those tokens and targets are used instead of data.task's (a
// restart reads them from its file). Throws InputError / Error on every rank
// alike.
Model build_model(MPI_Comm comm, Config &config, bool adjoint, const TokenData *data = nullptr);

} // namespace mft
