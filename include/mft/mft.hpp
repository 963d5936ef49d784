#pragma once
// mft, the whole library: #include <mft/mft.hpp> and link mft::mft
// (find_package(mft)). The layers, each a folder, lowest first:
//   core      configuration, errors, PETSc session, process grid, kernels' vector types
//   io        HDF5 handles and the output claim
//   model     particles, the attention and MLP fields, score maps, readouts, losses
//   depth     the depth ODE and its adjoint (PETSc TS)
//   tasks     data: the tasks and data files
//   train     the objective, its gradient, the optimisers, the trainer
//   analysis  the NTK and the log-sum-exp test
//   runs      the commands: resolve the configuration and build the problem,
//             train, forward, ntk, and the run file
// A program drives them as apps/mft.cpp does: a PetscSession, a Config from
// parse_config, then run_train / run_forward / run_ntk or the pieces below.
#include "mft/core/config.hpp"
#include "mft/core/error.hpp"
#include "mft/core/petsc_session.hpp"
#include "mft/core/process_grid.hpp"
#include "mft/core/version.hpp"
#include "mft/depth/depth.hpp"
#include "mft/model/field.hpp"
#include "mft/model/loss.hpp"
#include "mft/model/particles.hpp"
#include "mft/model/readout.hpp"
#include "mft/model/score_map.hpp"
#include "mft/model/tokens.hpp"
#include "mft/tasks/data.hpp"
#include "mft/tasks/task.hpp"
#include "mft/tasks/problem.hpp"
#include "mft/train/objective.hpp"
#include "mft/train/optimizer.hpp"
#include "mft/train/trainer.hpp"
#include "mft/analysis/ntk.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/runs/command_line.hpp"
#include "mft/runs/forward_run.hpp"
#include "mft/runs/ntk_run.hpp"
#include "mft/runs/run_file.hpp"
#include "mft/runs/train_run.hpp"
