// The adjoint in depth (MODEL.md §5) with PETSc's TSAdjoint: matrix-free
// Jacobians whose transposed products are the field's vector-Jacobian
// products. Callbacks in the order TSAdjointStep_RK calls them per stage:
// Jacobian (records the stage), JacobianP (likewise), J^T lambda, Jp^T lambda.
#include "mft/depth/depth.hpp"

#include "mft/core/error.hpp"
#include "mft/core/petsc_handle.hpp"
#include "mft/core/petsc_session.hpp"

#include <algorithm>
#include <cstring>

namespace mft {
namespace {

// Records the stage state and its slice. The step number, which TSAdjoint
// has already moved back to the step being reversed, gives the slice.
PetscErrorCode record_stage(TS ts, Vec U, DepthContext *ctx) {
  PetscInt step = 0;
  const PetscScalar *u = nullptr;
  PetscFunctionBeginUser;
  PetscCall(TSGetStepNumber(ts, &step));
  ctx->stage_slice = std::min<PetscInt>(step / ctx->steps_per_slice, ctx->slices - 1);
  PetscCall(VecGetArrayRead(U, &u));
  std::copy(u, u + ctx->stage.size(), ctx->stage.begin());
  PetscCall(VecRestoreArrayRead(U, &u));
  ctx->dtheta_ready = false;
  PetscFunctionReturn(0);
}

PetscErrorCode DepthRHSJacobian(TS ts, PetscReal, Vec U, Mat, Mat, void *ptr) {
  PetscFunctionBeginUser;
  PetscCall(record_stage(ts, U, static_cast<DepthContext *>(ptr)));
  PetscFunctionReturn(0);
}

PetscErrorCode DepthRHSJacobianP(TS ts, PetscReal, Vec U, Mat, void *ptr) {
  PetscFunctionBeginUser;
  PetscCall(record_stage(ts, U, static_cast<DepthContext *>(ptr)));
  PetscFunctionReturn(0);
}

// Both products of the stage in one pass: the token cotangent goes to `out`
// (all ranks' heads summed), the parameter cotangent is kept for Jp.
PetscErrorCode both_products(DepthContext *ctx, Vec lambda, double *dX) {
  const PetscScalar *l = nullptr;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(lambda, &l));
  std::fill(ctx->dtheta.begin(), ctx->dtheta.end(), 0.0);
  const bool ok = guarded(ctx->error, [&] {
    ctx->field->vjp(ctx->stage_slice, ctx->stage.data(), l, dX, ctx->dtheta.data());
  });
  std::copy(l, l + ctx->lambda.size(), ctx->lambda.begin());
  PetscCall(VecRestoreArrayRead(lambda, &l));
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_LIB, "vector-Jacobian product failed");
  ctx->dtheta_ready = true;
  PetscFunctionReturn(0);
}

PetscErrorCode JacobianMultTranspose(Mat J, Vec lambda, Vec out) {
  DepthContext *ctx = nullptr;
  PetscScalar *o = nullptr;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(J, &ctx));
  PetscCall(VecGetArray(out, &o));
  PetscCall(both_products(ctx, lambda, o));
  PetscCall(VecRestoreArray(out, &o));
  PetscFunctionReturn(0);
}

PetscErrorCode JacobianPMultTranspose(Mat Jp, Vec lambda, Vec out) {
  DepthContext *ctx = nullptr;
  const PetscScalar *l = nullptr;
  PetscScalar *o = nullptr;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(Jp, &ctx));
  // Reuse the parameter cotangent of J^T lambda when lambda is the same
  // (every rank decides alike: lambda is replicated).
  PetscCall(VecGetArrayRead(lambda, &l));
  const bool same = ctx->dtheta_ready && std::equal(l, l + ctx->lambda.size(), ctx->lambda.begin());
  PetscCall(VecRestoreArrayRead(lambda, &l));
  if (!same) PetscCall(both_products(ctx, lambda, ctx->dX_scratch.data()));
  PetscCall(VecGetArray(out, &o));
  std::copy(ctx->dtheta.begin(), ctx->dtheta.end(), o);
  PetscCall(VecRestoreArray(out, &o));
  PetscFunctionReturn(0);
}

} // namespace

void DepthSolver::create_adjoint_objects() {
  const auto n = static_cast<PetscInt>(ctx_.field->state_size());
  const auto p = static_cast<PetscInt>(ctx_.field->particles().local_size());
  ctx_.stage.resize(static_cast<size_t>(n));
  ctx_.dX_scratch.resize(static_cast<size_t>(n));
  ctx_.lambda.resize(static_cast<size_t>(n));
  ctx_.dtheta.resize(static_cast<size_t>(p));
  MFT_PETSC(MatCreateShell(PETSC_COMM_SELF, n, n, n, n, &ctx_, J_.out()));
  MFT_PETSC(MatShellSetOperation(J_, MATOP_MULT_TRANSPOSE,
                                 reinterpret_cast<void (*)(void)>(JacobianMultTranspose)));
  MFT_PETSC(MatCreateShell(PETSC_COMM_SELF, n, p, n, p, &ctx_, Jp_.out()));
  MFT_PETSC(MatShellSetOperation(Jp_, MATOP_MULT_TRANSPOSE,
                                 reinterpret_cast<void (*)(void)>(JacobianPMultTranspose)));
  MFT_PETSC(TSSetRHSJacobian(ts_, J_, J_, DepthRHSJacobian, &ctx_));
  MFT_PETSC(TSSetRHSJacobianP(ts_, Jp_, DepthRHSJacobianP, &ctx_));
  MFT_PETSC(VecCreateSeq(PETSC_COMM_SELF, n, lambda_.out()));
  MFT_PETSC(VecCreateSeq(PETSC_COMM_SELF, p, mu_.out()));
  MFT_PETSC(TSSetCostGradients(ts_, 1, lambda_.slot(), mu_.slot()));
}

void DepthSolver::adjoint(const double *a1, double *a0, double *dtheta) {
  if (!adjoint_) throw Error("DepthSolver::adjoint: the solver was created without the adjoint");
  PetscScalar *x = nullptr;
  MFT_PETSC(VecGetArray(lambda_, &x));
  std::memcpy(x, a1, sizeof(double) * ctx_.stage.size());
  MFT_PETSC(VecRestoreArray(lambda_, &x));
  // The parameter cost gradient accumulates over the stages: start from zero.
  MFT_PETSC(VecZeroEntries(mu_));
  ctx_.dtheta_ready = false;
  petsc_call_with_callbacks(TSAdjointSolve(ts_), ctx_.error, "TSAdjointSolve (depth)");
  const PetscScalar *y = nullptr;
  if (a0) {
    MFT_PETSC(VecGetArrayRead(lambda_, &y));
    std::memcpy(a0, y, sizeof(double) * ctx_.stage.size());
    MFT_PETSC(VecRestoreArrayRead(lambda_, &y));
  }
  MFT_PETSC(VecGetArrayRead(mu_, &y));
  std::memcpy(dtheta, y, sizeof(double) * ctx_.dtheta.size());
  MFT_PETSC(VecRestoreArrayRead(mu_, &y));
}

} // namespace mft
