#include "mft/train/flow.hpp"

#include "mft/depth/depth.hpp"
#include "mft/core/error.hpp"
#include "mft/core/petsc_handle.hpp"
#include "mft/core/petsc_session.hpp"

#include <algorithm>
#include <cstring>

namespace mft {
namespace {

// Runs the objective at U and the velocity there (once per new point); an
// error names the training step.
PetscErrorCode state_at(TS ts, Vec U, FlowContext *ctx, const ParticleState **state) {
  PetscInt step = 0;
  const PetscScalar *u = nullptr;
  PetscFunctionBeginUser;
  PetscCall(TSGetStepNumber(ts, &step));
  PetscCall(VecGetArrayRead(U, &u));
  guarded(ctx->error, [&] {
    try {
      const Gradient &g = ctx->objective->at(u);
      if (ctx->velocity_of != ctx->objective->evaluations()) {
        mean_field_velocity(ctx->objective->comm(), *ctx->objective->model().particles, u, g.dR,
                            g.risk, ctx->lambda, ctx->velocity);
        ctx->velocity_of = ctx->objective->evaluations();
        ctx->state = {g.risk, g.accuracy, ctx->velocity.objective, ctx->velocity.grad_norm};
      }
      *state = &ctx->state;
    } catch (const InputError &) {
      throw;
    } catch (const std::exception &e) {
      throw Error("training step " + std::to_string(ctx->first_step + step) + ": " + e.what());
    }
  });
  PetscCall(VecRestoreArrayRead(U, &u));
  PetscCheck(!ctx->error, PETSC_COMM_SELF, PETSC_ERR_LIB, "training step failed");
  PetscFunctionReturn(0);
}

// Callbacks in the order TS calls them.

PetscErrorCode FlowMonitorCallback(TS ts, PetscInt step, PetscReal, Vec U, void *ptr) {
  auto *ctx = static_cast<FlowContext *>(ptr);
  const ParticleState *state = nullptr;
  PetscFunctionBeginUser;
  PetscCall(state_at(ts, U, ctx, &state));
  if (ctx->monitor) {
    const long long global = ctx->first_step + step;
    guarded(ctx->error, [&] { ctx->monitor(global, static_cast<double>(global) * ctx->dtau, *state); });
    PetscCheck(!ctx->error, PETSC_COMM_SELF, PETSC_ERR_LIB, "training monitor failed");
  }
  PetscFunctionReturn(0);
}

PetscErrorCode FlowRHSFunction(TS ts, PetscReal, Vec U, Vec F, void *ptr) {
  auto *ctx = static_cast<FlowContext *>(ptr);
  const ParticleState *state = nullptr;
  PetscScalar *f = nullptr;
  PetscFunctionBeginUser;
  PetscCall(state_at(ts, U, ctx, &state));
  PetscCall(VecGetArray(F, &f));
  std::copy(ctx->velocity.values.begin(), ctx->velocity.values.end(), f);
  PetscCall(VecRestoreArray(F, &f));
  PetscFunctionReturn(0);
}

// After each step: a requested stop ends the solve here.
PetscErrorCode FlowPostStep(TS ts) {
  FlowContext *ctx = nullptr;
  PetscInt step = 0;
  PetscFunctionBeginUser;
  PetscCall(TSGetApplicationContext(ts, &ctx));
  PetscCall(TSGetStepNumber(ts, &step));
  if (ctx->stop_check) {
    bool stop = false;
    guarded(ctx->error, [&] { stop = ctx->stop_check(ctx->first_step + step); });
    PetscCheck(!ctx->error, PETSC_COMM_SELF, PETSC_ERR_LIB, "stop check failed");
    if (stop) {
      ctx->stopped = true;
      PetscCall(TSSetConvergedReason(ts, TS_CONVERGED_USER));
    }
  }
  PetscFunctionReturn(0);
}

} // namespace

GradientFlow::GradientFlow(MPI_Comm comm, Objective &objective, const TrainConfig &config) {
  ctx_.objective = &objective;
  ctx_.lambda = config.lambda;
  ctx_.dtau = config.dtau;
  const auto n = static_cast<PetscInt>(objective.local_size());
  MFT_PETSC(VecCreateMPI(comm, n, PETSC_DETERMINE, theta_.out()));
  MFT_PETSC(TSCreate(comm, ts_.out()));
  MFT_PETSC(TSSetOptionsPrefix(ts_, "train_"));
  MFT_PETSC(TSSetProblemType(ts_, TS_NONLINEAR));
  MFT_PETSC(TSSetApplicationContext(ts_, &ctx_));
  MFT_PETSC(TSSetRHSFunction(ts_, nullptr, FlowRHSFunction, &ctx_));
  MFT_PETSC(TSMonitorSet(ts_, FlowMonitorCallback, &ctx_, nullptr));
  MFT_PETSC(TSSetPostStep(ts_, FlowPostStep));
  ts_type_ = set_explicit_ts_type(ts_, "train_", config.ts_type);
  TSAdapt adapt;
  MFT_PETSC(TSGetAdapt(ts_, &adapt));
  MFT_PETSC(TSAdaptSetType(adapt, TSADAPTNONE));
  MFT_PETSC(TSSetExactFinalTime(ts_, TS_EXACTFINALTIME_STEPOVER));
}

long long GradientFlow::run(double *theta, long long steps, long long first_step) {
  ctx_.first_step = first_step;
  ctx_.stopped = false;
  const double dtau = ctx_.dtau;
  PetscScalar *x = nullptr;
  const auto n = static_cast<size_t>(ctx_.objective->local_size());
  MFT_PETSC(VecGetArray(theta_, &x));
  std::memcpy(x, theta, n * sizeof(double));
  MFT_PETSC(VecRestoreArray(theta_, &x));
  const double tau0 = static_cast<double>(ctx_.first_step) * dtau;
  MFT_PETSC(TSSetTime(ts_, tau0));
  MFT_PETSC(TSSetStepNumber(ts_, 0));
  MFT_PETSC(TSSetTimeStep(ts_, dtau));
  MFT_PETSC(TSSetMaxSteps(ts_, static_cast<PetscInt>(steps)));
  // The step count ends the run; the time limit half a step beyond.
  MFT_PETSC(TSSetMaxTime(ts_, tau0 + (static_cast<double>(steps) + 0.5) * dtau));
  petsc_call_with_callbacks(TSSolve(ts_, theta_), ctx_.error, "TSSolve (training)");
  const PetscScalar *y = nullptr;
  MFT_PETSC(VecGetArrayRead(theta_, &y));
  std::memcpy(theta, y, n * sizeof(double));
  MFT_PETSC(VecRestoreArrayRead(theta_, &y));
  PetscInt taken = 0;
  MFT_PETSC(TSGetStepNumber(ts_, &taken));
  return static_cast<long long>(taken);
}

} // namespace mft
