#include "mft/depth.hpp"

#include "mft/error.hpp"
#include "mft/petsc_session.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mft {
namespace {

// Callbacks in the order TS calls them within a step.

// Sets the slice of the step about to be taken from the step number (never
// from s, which is ambiguous at slice boundaries), and restarts the method at
// each boundary so no first-same-as-last stage is reused across the jump of
// the parameters.
PetscErrorCode DepthPreStep(TS ts) {
  DepthContext *ctx = nullptr;
  PetscInt step = 0;
  PetscFunctionBeginUser;
  PetscCall(TSGetApplicationContext(ts, &ctx));
  PetscCall(TSGetStepNumber(ts, &step));
  ctx->slice = std::min<PetscInt>(step / ctx->steps_per_slice, ctx->slices - 1);
  if (step % ctx->steps_per_slice == 0) PetscCall(TSRestartStep(ts));
  PetscFunctionReturn(0);
}

PetscErrorCode DepthRHSFunction(TS, PetscReal, Vec X, Vec F, void *ptr) {
  auto *ctx = static_cast<DepthContext *>(ptr);
  const PetscScalar *x = nullptr;
  PetscScalar *f = nullptr;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArray(F, &f));
  try {
    ctx->field->evaluate(ctx->slice, x, f);
  } catch (const std::exception &e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  PetscCall(VecRestoreArray(F, &f));
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscFunctionReturn(0);
}

// The state is replicated, so every rank finds a non-finite token at once
// and all stop together.
PetscErrorCode DepthPostStep(TS ts) {
  DepthContext *ctx = nullptr;
  Vec X;
  const PetscScalar *x = nullptr;
  PetscInt n = 0;
  PetscReal s = 0;
  PetscFunctionBeginUser;
  PetscCall(TSGetApplicationContext(ts, &ctx));
  PetscCall(TSGetSolution(ts, &X));
  PetscCall(TSGetTime(ts, &s));
  PetscCall(VecGetLocalSize(X, &n));
  PetscCall(VecGetArrayRead(X, &x));
  bool finite = true;
  for (PetscInt i = 0; i < n && finite; ++i) finite = std::isfinite(x[i]);
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCheck(finite, PETSC_COMM_SELF, PETSC_ERR_FP,
             "forward: a token became non-finite in depth slice %" PetscInt_FMT " (s = %g)",
             ctx->slice, (double)s);
  PetscFunctionReturn(0);
}

bool is_explicit_one_step(const std::string &type) {
  return type == TSEULER || type == TSRK || type == TSSSP;
}

} // namespace

DepthSolver::DepthSolver(DepthField &field, const DepthConfig &config) {
  ctx_.field = &field;
  ctx_.slices = static_cast<PetscInt>(field.slices());
  ctx_.steps_per_slice = static_cast<PetscInt>(config.steps_per_slice);

  // The options database may override the configured type: check it first,
  // so a wrong name is a one-line error naming the option.
  char type_option[64] = "";
  PetscBool set = PETSC_FALSE;
  MFT_PETSC(PetscOptionsGetString(nullptr, "depth_", "-ts_type", type_option, sizeof type_option, &set));
  if (set && !is_explicit_one_step(type_option))
    throw InputError(key_error("-depth_ts_type", type_option,
                               "mft integrates depth with an explicit one-step method: euler, rk or ssp"));

  MFT_PETSC(VecCreateSeq(PETSC_COMM_SELF, static_cast<PetscInt>(field.state_size()), &X_));
  MFT_PETSC(TSCreate(PETSC_COMM_SELF, &ts_));
  MFT_PETSC(TSSetOptionsPrefix(ts_, "depth_"));
  MFT_PETSC(TSSetProblemType(ts_, TS_NONLINEAR));
  MFT_PETSC(TSSetApplicationContext(ts_, &ctx_));
  MFT_PETSC(TSSetRHSFunction(ts_, nullptr, DepthRHSFunction, &ctx_));
  MFT_PETSC(TSSetPreStep(ts_, DepthPreStep));
  MFT_PETSC(TSSetPostStep(ts_, DepthPostStep));
  MFT_PETSC(TSSetType(ts_, config.ts_type.c_str()));
  try {
    MFT_PETSC(TSSetFromOptions(ts_));
  } catch (const Error &e) {
    throw InputError(std::string("depth TS options: ") + e.what());
  }
  // The configured tableau applies unless -depth_ts_rk_type chose one.
  TSType chosen;
  MFT_PETSC(TSGetType(ts_, &chosen));
  MFT_PETSC(PetscOptionsHasName(nullptr, "depth_", "-ts_rk_type", &set));
  if (std::string(chosen) == TSRK && !set) {
    try {
      MFT_PETSC(TSRKSetType(ts_, config.rk_type.c_str()));
    } catch (const Error &) {
      throw InputError(key_error("depth.rk_type", config.rk_type,
                                 "not a PETSc RK tableau (1fe, 2a, 3, 3bs, 4, 5f, 5dp, 5bs, ...)"));
    }
  }

  // The TS is replicated on every rank: only rank 0 keeps monitors, so
  // -depth_ts_monitor prints each step once.
  int rank = 0;
  MPI_Comm_rank(field.comm(), &rank);
  if (rank != 0) MFT_PETSC(TSMonitorCancel(ts_));

  // Fixed steps whatever the options say: exact slice boundaries, and (for
  // the adjoint) a step sequence that can be replayed.
  const PetscReal h = 1.0 / static_cast<PetscReal>(ctx_.slices * ctx_.steps_per_slice);
  TSAdapt adapt;
  MFT_PETSC(TSGetAdapt(ts_, &adapt));
  MFT_PETSC(TSAdaptSetType(adapt, TSADAPTNONE));
  MFT_PETSC(TSSetTimeStep(ts_, h));
  MFT_PETSC(TSSetMaxSteps(ts_, ctx_.slices * ctx_.steps_per_slice));
  // The step count ends the solve; the time limit sits half a step beyond
  // s = 1 so rounding in the accumulated s never cuts or stretches a step.
  MFT_PETSC(TSSetMaxTime(ts_, 1.0 + 0.5 * h));
  MFT_PETSC(TSSetExactFinalTime(ts_, TS_EXACTFINALTIME_STEPOVER));

  TSType type;
  MFT_PETSC(TSGetType(ts_, &type));
  ts_type_ = type;
  rk_type_ = config.rk_type;
  if (ts_type_ == TSRK) {
    TSRKType rk;
    MFT_PETSC(TSRKGetType(ts_, &rk));
    rk_type_ = rk;
  }
}

DepthSolver::~DepthSolver() {
  TSDestroy(&ts_);
  VecDestroy(&X_);
}

void DepthSolver::solve(const double *X0, double *X1) {
  PetscScalar *x = nullptr;
  MFT_PETSC(VecGetArray(X_, &x));
  std::memcpy(x, X0, sizeof(double) * static_cast<size_t>(ctx_.field->state_size()));
  MFT_PETSC(VecRestoreArray(X_, &x));
  ctx_.slice = 0;
  MFT_PETSC(TSSetTime(ts_, 0.0));
  MFT_PETSC(TSSetStepNumber(ts_, 0));
  MFT_PETSC(TSSetTimeStep(ts_, 1.0 / static_cast<PetscReal>(ctx_.slices * ctx_.steps_per_slice)));
  MFT_PETSC(TSSolve(ts_, X_));
  PetscInt steps = 0;
  MFT_PETSC(TSGetStepNumber(ts_, &steps));
  if (steps != ctx_.slices * ctx_.steps_per_slice)
    throw Error("forward: the depth TS took " + std::to_string(steps) + " steps instead of " +
                std::to_string(ctx_.slices * ctx_.steps_per_slice));
  const PetscScalar *y = nullptr;
  MFT_PETSC(VecGetArrayRead(X_, &y));
  std::memcpy(X1, y, sizeof(double) * static_cast<size_t>(ctx_.field->state_size()));
  MFT_PETSC(VecRestoreArrayRead(X_, &y));
}

} // namespace mft
