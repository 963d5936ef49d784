#include "mft/train/flow.hpp"

#include "mft/core/error.hpp"
#include "mft/core/petsc_handle.hpp"
#include "mft/core/petsc_session.hpp"
#include "mft/train/langevin.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mft {
namespace {

// The TS's right-hand side: the velocity of the step being taken (its
// minibatch, when there are minibatches; an error names the step).
PetscErrorCode FlowRHSFunction(TS, PetscReal, Vec U, Vec F, void *ptr) {
  auto *ctx = static_cast<FlowContext *>(ptr);
  const PetscScalar *u = nullptr;
  PetscScalar *f = nullptr;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(U, &u));
  PetscCall(VecGetArray(F, &f));
  guarded(ctx->error, [&] {
    const Velocity &v = ctx->gradient->velocity(ctx->step, u);
    std::copy(v.values.begin(), v.values.end(), f);
  });
  PetscCall(VecRestoreArray(F, &f));
  PetscCall(VecRestoreArrayRead(U, &u));
  PetscCheck(!ctx->error, PETSC_COMM_SELF, PETSC_ERR_LIB, "training step failed");
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

std::string resolve_training_ts(const TrainConfig &train) {
  PetscTS ts;
  MFT_PETSC(TSCreate(PETSC_COMM_SELF, ts.out()));
  MFT_PETSC(TSSetOptionsPrefix(ts, "train_"));
  MFT_PETSC(TSSetProblemType(ts, TS_NONLINEAR));
  const std::string chosen = set_explicit_ts_type(ts, "train_", train.ts_type);
  if (train.temperature > 0 && chosen != "euler")
    throw InputError(key_error("-train_ts_type", chosen, "Langevin dynamics (train.temperature > 0) is Euler-Maruyama"));
  return chosen;
}

GradientFlow::GradientFlow(StepGradient &gradient, const Config &config, bool euler_only)
    : method_(config.train.method), dtau_(config.train.dtau), temperature_(config.train.temperature),
      seed_(config.init.seed) {
  ctx_.gradient = &gradient;
  const auto n = static_cast<PetscInt>(gradient.local_size());
  MFT_PETSC(VecCreateMPI(gradient.comm(), n, PETSC_DETERMINE, theta_.out()));
  MFT_PETSC(TSCreate(gradient.comm(), ts_.out()));
  MFT_PETSC(TSSetOptionsPrefix(ts_, "train_"));
  MFT_PETSC(TSSetProblemType(ts_, TS_NONLINEAR));
  MFT_PETSC(TSSetApplicationContext(ts_, &ctx_));
  MFT_PETSC(TSSetRHSFunction(ts_, nullptr, FlowRHSFunction, &ctx_));
  ts_type_ = set_explicit_ts_type(ts_, "train_", config.train.ts_type);
  // sgd and Langevin are Euler steps (MODEL.md §10), whatever the options say.
  if (euler_only && ts_type_ != "euler")
    throw InputError(key_error("-train_ts_type", ts_type_, "train.method = " + method_ + " is an Euler step"));
  if (temperature_ > 0 && ts_type_ != "euler")
    throw InputError(key_error("-train_ts_type", ts_type_, "Langevin dynamics (train.temperature > 0) is Euler-Maruyama"));
  TSAdapt adapt;
  MFT_PETSC(TSGetAdapt(ts_, &adapt));
  MFT_PETSC(TSAdaptSetType(adapt, TSADAPTNONE));
  MFT_PETSC(TSSetExactFinalTime(ts_, TS_EXACTFINALTIME_STEPOVER));
  MFT_PETSC(TSSetMaxSteps(ts_, 1));
}

void GradientFlow::step(long long step, double *theta) {
  ctx_.step = step;
  const auto n = static_cast<size_t>(ctx_.gradient->local_size());
  PetscScalar *x = nullptr;
  MFT_PETSC(VecGetArray(theta_, &x));
  std::memcpy(x, theta, n * sizeof(double));
  MFT_PETSC(VecRestoreArray(theta_, &x));
  // One step of the TS from tau = step dtau (exactly, on any restart); the
  // time limit half a step beyond.
  const double tau = static_cast<double>(step) * dtau_;
  MFT_PETSC(TSSetTime(ts_, tau));
  MFT_PETSC(TSSetStepNumber(ts_, 0));
  MFT_PETSC(TSSetTimeStep(ts_, dtau_));
  MFT_PETSC(TSSetMaxTime(ts_, tau + 1.5 * dtau_));
  petsc_call_with_callbacks(TSSolve(ts_, theta_), ctx_.error, "TSSolve (training)");
  const PetscScalar *y = nullptr;
  MFT_PETSC(VecGetArrayRead(theta_, &y));
  std::memcpy(theta, y, n * sizeof(double));
  MFT_PETSC(VecRestoreArrayRead(theta_, &y));
  if (temperature_ > 0)
    add_langevin_noise(*ctx_.gradient->problem().particles, seed_, step, std::sqrt(2 * temperature_ * dtau_),
                       theta);
}

std::string GradientFlow::describe() const { return describe_as("flow (TS " + ts_type_ + ")"); }

std::string GradientFlow::describe_as(const std::string &method) const {
  std::string out = method;
  if (temperature_ > 0) {
    char t[64];
    std::snprintf(t, sizeof t, " + Langevin noise, T = %g", temperature_);
    out += t;
  }
  return out;
}

} // namespace mft
