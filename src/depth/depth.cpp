#include "mft/depth/depth.hpp"

#include "mft/core/error.hpp"
#include "mft/core/integrators.hpp"
#include "mft/core/petsc_handle.hpp"
#include "mft/core/petsc_session.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
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
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DepthRHSFunction(TS, PetscReal, Vec X, Vec F, void *ptr) {
  auto *ctx = static_cast<DepthContext *>(ptr);
  const PetscScalar *x = nullptr;
  PetscScalar *f = nullptr;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArray(F, &f));
  const bool ok = guarded(ctx->error, [&] { ctx->field->evaluate(ctx->slice, x, f); });
  PetscCall(VecRestoreArray(F, &f));
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_LIB, "field evaluation failed");
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The state is replicated over the field's ranks (a sequence group), so
// every one of them finds a non-finite token at once and all stop together;
// the callers make the other groups stop with them (collectively).
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
  if (!finite) {
    char text[320];
    std::snprintf(text, sizeof text, "a token became non-finite in depth slice %d (s = %.6g)%s",
                  static_cast<int>(ctx->slice), static_cast<double>(s), ctx->field->blow_up_hint().c_str());
    ctx->error = std::make_exception_ptr(DivergedError(text));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FP, "%s", text);
  }
  PetscInt step = 0;
  PetscCall(TSGetStepNumber(ts, &step));
  if (ctx->path && step % ctx->path->every == 0) {
    PetscCall(VecGetArrayRead(X, &x));
    ctx->path->states.insert(ctx->path->states.end(), x, x + n);
    ctx->path->depths.push_back(static_cast<double>(s));
    PetscCall(VecRestoreArrayRead(X, &x));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The scheme of a depth TS: the configured type and tableau, then the
// options database (-depth_ts_type, -depth_ts_rk_type) over them; forward
// Euler runs as the one-stage RK tableau 1fe (the same scheme, and PETSc's
// RK has the adjoint). InputError for a type that is not explicit, a
// tableau PETSc lacks, or SSP with the adjoint.
struct DepthScheme {
  std::string ts_type, rk_type;
  long long stages = 1;
};

DepthScheme choose_scheme(TS ts, const DepthConfig &config, bool adjoint) {
  DepthScheme out;
  const std::string chosen = set_explicit_ts_type(ts, "depth_", config.ts_type);
  out.ts_type = chosen;
  out.rk_type = config.rk_type;
  if (adjoint && !find_integrator(chosen)->adjoint)
    throw InputError(key_error("depth.ts_type", chosen, "PETSc has no adjoint for it; training needs one that has (" +
                                                            integrators_with_adjoint() + ")"));
  if (chosen == TSEULER) {
    MFT_PETSC(TSSetType(ts, TSRK));
    MFT_PETSC(TSRKSetType(ts, TSRK1FE));
    out.rk_type = TSRK1FE;
  } else if (chosen == TSRK) {
    // The configured tableau applies unless -depth_ts_rk_type chose one.
    PetscBool set = PETSC_FALSE;
    MFT_PETSC(PetscOptionsHasName(nullptr, "depth_", "-ts_rk_type", &set));
    if (!set) {
      try {
        MFT_PETSC(TSRKSetType(ts, config.rk_type.c_str()));
      } catch (const Error &) {
        throw InputError(key_error("depth.rk_type", config.rk_type,
                                   "not a PETSc RK tableau (1fe, 2a, 3, 3bs, 4, 5f, 5dp, 5bs, ...)"));
      }
    }
    TSRKType rk;
    MFT_PETSC(TSRKGetType(ts, &rk));
    out.rk_type = rk;
  }
  out.stages = ts_stages(ts);
  return out;
}

} // namespace

DepthSolver::DepthSolver(DepthField &field, const DepthConfig &config, bool adjoint, long long cotangents)
    : adjoint_(adjoint), cotangents_(cotangents),
      checkpoint_slices_(std::max<long long>(0, config.checkpoint_slices)) {
  ctx_.field = &field;
  ctx_.slices = static_cast<PetscInt>(field.slices());
  ctx_.steps_per_slice = static_cast<PetscInt>(config.steps_per_slice);

  MFT_PETSC(VecCreateSeq(PETSC_COMM_SELF, static_cast<PetscInt>(field.state_size()), X_.out()));
  MFT_PETSC(TSCreate(PETSC_COMM_SELF, ts_.out()));
  MFT_PETSC(TSSetOptionsPrefix(ts_, "depth_"));
  MFT_PETSC(TSSetProblemType(ts_, TS_NONLINEAR));
  MFT_PETSC(TSSetApplicationContext(ts_, &ctx_));
  MFT_PETSC(TSSetRHSFunction(ts_, nullptr, DepthRHSFunction, &ctx_));
  MFT_PETSC(TSSetPreStep(ts_, DepthPreStep));
  MFT_PETSC(TSSetPostStep(ts_, DepthPostStep));
  if (adjoint_) {
    // Keep the forward states and stages in memory for TSAdjointSolve
    // (the default "basic" trajectory writes files); -depth_ts_trajectory_type overrides.
    MFT_PETSC(TSSetSaveTrajectory(ts_));
    TSTrajectory trajectory;
    MFT_PETSC(TSGetTrajectory(ts_, &trajectory));
    MFT_PETSC(TSTrajectorySetType(trajectory, ts_, TSTRAJECTORYMEMORY));
    MFT_PETSC(PetscObjectSetOptionsPrefix(reinterpret_cast<PetscObject>(trajectory), "depth_"));
    // The adjoint's callbacks (depth_adjoint.cpp) take each stage from the
    // stored trajectory in order; PETSc's recomputing trajectories call the
    // right-hand side in between and would give a wrong gradient silently.
    for (const char *option : {"-ts_trajectory_solution_only", "-ts_trajectory_max_cps_ram",
                                "-ts_trajectory_max_units_ram", "-ts_trajectory_max_cps_disk",
                                "-ts_trajectory_max_units_disk", "-ts_trajectory_memory_type", "-ts_trajectory_stride"}) {
      PetscBool set = PETSC_FALSE;
      char value[256] = "";
      MFT_PETSC(PetscOptionsGetString(nullptr, "depth_", option, value, sizeof value, &set));
      if (set)
        throw InputError(key_error(std::string("-depth_") + (option + 1), *value ? value : "true",
                                   "PETSc's recomputing trajectories are not supported by mft's adjoint, which "
                                   "needs every stage stored"));
    }
  }
  const DepthScheme scheme = choose_scheme(ts_, config, adjoint_);
  ts_type_ = scheme.ts_type;
  rk_type_ = scheme.rk_type;
  stages_ = scheme.stages;

  // The TS is replicated on every rank: only rank 0 keeps monitors, so
  // -depth_ts_monitor prints each step once.
  int rank = 0;
  MPI_Comm_rank(field.comm(), &rank);
  if (rank != 0) {
    MFT_PETSC(TSMonitorCancel(ts_));
    if (adjoint_) MFT_PETSC(TSAdjointMonitorCancel(ts_));
  }

  // Fixed steps whatever the options say: exact slice boundaries, and a step
  // sequence the adjoint replays exactly.
  const PetscReal h = 1.0 / static_cast<PetscReal>(ctx_.slices * ctx_.steps_per_slice);
  TSAdapt adapt;
  MFT_PETSC(TSGetAdapt(ts_, &adapt));
  MFT_PETSC(TSAdaptSetType(adapt, TSADAPTNONE));
  MFT_PETSC(TSSetTimeStep(ts_, h));
  // The step count (TSSetMaxSteps, per segment) ends the solve; the time limit sits half a step beyond
  // s = 1 so rounding in the accumulated s never cuts or stretches a step.
  MFT_PETSC(TSSetMaxTime(ts_, 1.0 + 0.5 * h));
  MFT_PETSC(TSSetExactFinalTime(ts_, TS_EXACTFINALTIME_STEPOVER));
  if (adjoint_) create_adjoint_objects();
}

void DepthSolver::solve(const double *X0, double *X1, DepthPath *path) {
  const auto size = static_cast<size_t>(ctx_.field->state_size());
  PetscScalar *x = nullptr;
  MFT_PETSC(VecGetArray(X_, &x));
  std::memcpy(x, X0, sizeof(double) * size);
  // X(0) under the token norm (the adjoint keeps the data's tokens for its transpose).
  const TokenNorm &norm = ctx_.field->norm();
  if (!norm.identity()) {
    if (adjoint_) data_tokens_.assign(X0, X0 + size);
    norm.initial(x, ctx_.field->tokens(), ctx_.field->token_dim());
  }
  ctx_.path = path;
  if (path) {
    path->states.assign(x, x + size);
    path->depths.assign(1, 0.0);
  }
  MFT_PETSC(VecRestoreArray(X_, &x));
  MFT_PETSC(TSSetTime(ts_, 0.0));
  // Segment by segment, each starting from its checkpoint; the trajectory
  // keeps the last segment's steps, which the adjoint reverses first.
  const long long segments = segment_count();
  if (segments > 1) {
    checkpoints_.resize(static_cast<size_t>(segments) * size);
    checkpoint_depths_.resize(static_cast<size_t>(segments));
  }
  for (long long j = 0; j < segments; ++j) {
    if (segments > 1) {
      const PetscScalar *y = nullptr;
      MFT_PETSC(VecGetArrayRead(X_, &y));
      std::copy(y, y + size, checkpoints_.begin() + static_cast<std::ptrdiff_t>(j * size));
      MFT_PETSC(VecRestoreArrayRead(X_, &y));
      MFT_PETSC(TSGetTime(ts_, &checkpoint_depths_[static_cast<size_t>(j)]));
    }
    take_steps(segment_first(j), segment_first(j + 1));
  }
  ctx_.path = nullptr;
  const PetscScalar *y = nullptr;
  MFT_PETSC(VecGetArrayRead(X_, &y));
  std::memcpy(X1, y, sizeof(double) * size);
  MFT_PETSC(VecRestoreArrayRead(X_, &y));
}

void DepthSolver::take_steps(long long first, long long last) {
  if (adjoint_) {
    // Empty the stored trajectory but keep its type: TSResetTrajectory would
    // replace it by PETSc's default, which writes every state to ./TS-data-*.
    // A trajectory on disk, when asked for (-depth_ts_trajectory_type basic),
    // is made anew per solve in a fresh folder, which its destruction removes.
    TSTrajectory trajectory;
    MFT_PETSC(TSGetTrajectory(ts_, &trajectory));
    TSTrajectoryType type = nullptr;
    MFT_PETSC(TSTrajectoryGetType(trajectory, ts_, &type));
    if (type && std::strcmp(type, TSTRAJECTORYMEMORY) == 0) {
      MFT_PETSC(TSTrajectoryReset(trajectory));
    } else {
      MFT_PETSC(TSResetTrajectory(ts_));
      MFT_PETSC(TSGetTrajectory(ts_, &trajectory));
      MFT_PETSC(PetscObjectSetOptionsPrefix(reinterpret_cast<PetscObject>(trajectory), "depth_"));
      MFT_PETSC(TSTrajectorySetFromOptions(trajectory, ts_));
    }
  }
  ctx_.slice = static_cast<PetscInt>(first) / ctx_.steps_per_slice;
  MFT_PETSC(TSSetStepNumber(ts_, static_cast<PetscInt>(first)));
  MFT_PETSC(TSSetMaxSteps(ts_, static_cast<PetscInt>(last)));
  MFT_PETSC(TSSetTimeStep(ts_, 1.0 / static_cast<PetscReal>(ctx_.slices * ctx_.steps_per_slice)));
  petsc_call_with_callbacks(TSSolve(ts_, X_), ctx_.error, "TSSolve (depth)");
  PetscInt steps = 0;
  MFT_PETSC(TSGetStepNumber(ts_, &steps));
  if (steps != last)
    throw Error("forward: the depth TS stopped at step " + std::to_string(steps) + " instead of " +
                std::to_string(last));
}

long long DepthSolver::segment_count() const {
  if (!adjoint_ || checkpoint_slices_ <= 0) return 1;
  return (ctx_.slices + checkpoint_slices_ - 1) / checkpoint_slices_;
}

long long DepthSolver::segment_first(long long j) const {
  if (j >= segment_count()) return steps();
  return j * checkpoint_slices_ * ctx_.steps_per_slice;
}

double DepthSolver::trajectory_bytes() const {
  if (!adjoint_) return 0.0;
  return depth_trajectory_states(ctx_.slices, ctx_.steps_per_slice, stages_, checkpoint_slices_) *
         static_cast<double>(ctx_.field->state_size()) * sizeof(double);
}

double depth_trajectory_states(long long slices, long long steps_per_slice, long long stages,
                               long long checkpoint_slices) {
  // PETSc's memory trajectory keeps, per step, the stages (not the state:
  // peak memory over L at k = 4 grows by 1.1, 3.1, 4.1 and 7.1 states a step
  // for the tableaus 1fe, 3, 4 and 5dp), and the first state; with
  // checkpoints, one segment's steps, its first state and the state at each
  // segment's start.
  const auto per_step = static_cast<double>(stages);
  if (checkpoint_slices <= 0 || checkpoint_slices >= slices)
    return static_cast<double>(slices * steps_per_slice) * per_step + 1;
  const long long segments = (slices + checkpoint_slices - 1) / checkpoint_slices;
  return static_cast<double>(checkpoint_slices * steps_per_slice) * per_step + 1 + static_cast<double>(segments);
}

namespace {

DepthScheme scheme_of(const DepthConfig &config, bool adjoint) {
  PetscTS ts;
  MFT_PETSC(TSCreate(PETSC_COMM_SELF, ts.out()));
  MFT_PETSC(TSSetOptionsPrefix(ts, "depth_"));
  MFT_PETSC(TSSetProblemType(ts, TS_NONLINEAR));
  return choose_scheme(ts, config, adjoint);
}

} // namespace

long long depth_stages(const DepthConfig &config) { return scheme_of(config, false).stages; }

DepthConfig resolve_depth_scheme(const DepthConfig &config, bool adjoint) {
  const DepthScheme scheme = scheme_of(config, adjoint);
  DepthConfig out = config;
  out.ts_type = scheme.ts_type;
  out.rk_type = scheme.rk_type;
  return out;
}

} // namespace mft
