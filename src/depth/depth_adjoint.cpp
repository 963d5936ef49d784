// The adjoint in depth (MODEL.md §5) with PETSc's TSAdjoint: a matrix-free
// Jacobian whose transposed product is the field's vector-Jacobian product.
// Callbacks in the order TSAdjointStep_RK calls them per stage: Jacobian
// (records the stage and its weight), J^T lambda (the token cotangent for
// PETSc; the parameter cotangent, weighted, into dR/dtheta).
#include "mft/depth/depth.hpp"

#include "mft/core/error.hpp"
#include "mft/core/petsc_handle.hpp"
#include "mft/core/petsc_session.hpp"

#include <algorithm>
#include <cstring>

namespace mft {
namespace {

// Records the stage state, its slice and its weight. The step number, which
// TSAdjoint has already moved back to the step being reversed, gives the
// slice; a new step number starts that step's stages from the last one.
PetscErrorCode DepthRHSJacobian(TS ts, PetscReal, Vec U, Mat, Mat, void *ptr) {
  auto *ctx = static_cast<DepthContext *>(ptr);
  PetscInt step = 0;
  PetscReal h = 0;
  const PetscScalar *u = nullptr;
  PetscFunctionBeginUser;
  PetscCall(TSGetStepNumber(ts, &step));
  PetscCall(TSGetTimeStep(ts, &h));
  const auto stages = static_cast<PetscInt>(ctx->rk_b.size());
  if (step != ctx->adjoint_step) {
    ctx->adjoint_step = step;
    ctx->stage_index = stages - (ctx->fsal ? 2 : 1);
  }
  PetscCheck(ctx->stage_index >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "depth adjoint: more Jacobian evaluations in a step than the tableau has stages");
  const PetscReal b = ctx->rk_b[static_cast<size_t>(ctx->stage_index)];
  ctx->stage_weight = -h * (b != 0 ? b : 1.0);
  --ctx->stage_index;
  ctx->stage_slice = std::min<PetscInt>(step / ctx->steps_per_slice, ctx->slices - 1);
  ctx->cost_index = 0;
  PetscCall(VecGetArrayRead(U, &u));
  std::copy(u, u + ctx->stage.size(), ctx->stage.begin());
  PetscCall(VecRestoreArrayRead(U, &u));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// J^T lambda to PETSc (all ranks' heads summed); w_i Jp^T lambda into
// dR/dtheta, from the same pass over the score map's weights.
PetscErrorCode JacobianMultTranspose(Mat J, Vec lambda, Vec out) {
  DepthContext *ctx = nullptr;
  const PetscScalar *l = nullptr;
  PetscScalar *o = nullptr;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(J, &ctx));
  PetscCall(VecGetArrayRead(lambda, &l));
  PetscCall(VecGetArray(out, &o));
  const bool ok = guarded(ctx->error, [&] {
    if (!ctx->rows) {
      ctx->field->vjp(ctx->stage_slice, ctx->stage.data(), l, o, ctx->dtheta.data(), ctx->stage_weight);
      return;
    }
    // The first product below a slice: that slice's rows are complete.
    if (ctx->row_slice != ctx->stage_slice) {
      if (ctx->row_slice >= 0) {
        (*ctx->slice_done)(ctx->row_slice);
        ctx->field->clear_rows();
      }
      ctx->row_slice = ctx->stage_slice;
    }
    ctx->field->vjp_rows(ctx->stage_slice, ctx->stage.data(), l, o, ctx->stage_weight,
                         static_cast<long long>(ctx->cost_count), ctx->cost_index++);
  });
  PetscCall(VecRestoreArray(out, &o));
  PetscCall(VecRestoreArrayRead(lambda, &l));
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_LIB, "vector-Jacobian product failed");
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

void DepthSolver::create_adjoint_objects() {
  const auto n = static_cast<PetscInt>(ctx_.field->state_size());
  const auto p = static_cast<size_t>(ctx_.field->particles().local_size());
  ctx_.stage.resize(static_cast<size_t>(n));
  ctx_.dtheta.resize(p);
  PetscInt s = 1;
  const PetscReal *b = nullptr;
  PetscBool fsal = PETSC_FALSE;
  MFT_PETSC(TSRKGetTableau(ts_, &s, nullptr, &b, nullptr, nullptr, nullptr, nullptr, &fsal));
  ctx_.rk_b.assign(b, b + s);
  ctx_.fsal = fsal == PETSC_TRUE;
  MFT_PETSC(MatCreateShell(PETSC_COMM_SELF, n, n, n, n, &ctx_, J_.out()));
  MFT_PETSC(MatShellSetOperation(J_, MATOP_MULT_TRANSPOSE, MFT_PETSC_OPERATION(JacobianMultTranspose)));
  MFT_PETSC(TSSetRHSJacobian(ts_, J_, J_, DepthRHSJacobian, &ctx_));
  lambdas_.resize(static_cast<size_t>(cotangents_));
  lambda_vecs_.clear();
  for (PetscVec &lambda : lambdas_) {
    MFT_PETSC(VecCreateSeq(PETSC_COMM_SELF, n, lambda.out()));
    lambda_vecs_.push_back(lambda);
  }
  ctx_.cost_count = static_cast<PetscInt>(cotangents_);
  // PETSc keeps the pointer to the array, not a copy: it is a member.
  MFT_PETSC(TSSetCostGradients(ts_, static_cast<PetscInt>(cotangents_), lambda_vecs_.data(), nullptr));
}

void DepthSolver::adjoint(const double *a1, double *a0, double *dtheta) {
  if (!adjoint_ || cotangents_ != 1)
    throw Error("DepthSolver::adjoint: the solver was created without the adjoint of one cotangent");
  const PetscVec &lambda = lambdas_.front();
  PetscScalar *x = nullptr;
  MFT_PETSC(VecGetArray(lambda, &x));
  std::memcpy(x, a1, sizeof(double) * ctx_.stage.size());
  MFT_PETSC(VecRestoreArray(lambda, &x));
  // dR/dtheta accumulates over the stages: start from zero, and from the
  // last stage of the last step.
  std::fill(ctx_.dtheta.begin(), ctx_.dtheta.end(), 0.0);
  reverse_segments({});
  if (a0) {
    const PetscScalar *y = nullptr;
    MFT_PETSC(VecGetArrayRead(lambda, &y));
    std::memcpy(a0, y, sizeof(double) * ctx_.stage.size());
    MFT_PETSC(VecRestoreArrayRead(lambda, &y));
    // The cotangent of the data's tokens, through the token norm's X(0).
    const TokenNorm &norm = ctx_.field->norm();
    if (!norm.identity()) norm.initial_vjp(data_tokens_.data(), a0, ctx_.field->tokens(), ctx_.field->token_dim());
  }
  std::copy(ctx_.dtheta.begin(), ctx_.dtheta.end(), dtheta);
}

void DepthSolver::adjoint_rows(const std::vector<const double *> &a1,
                               const std::function<void(long long)> &slice_done) {
  if (!adjoint_ || static_cast<long long>(a1.size()) != cotangents_)
    throw Error("DepthSolver::adjoint_rows: the solver was not created for " + std::to_string(a1.size()) +
                " cotangents");
  for (size_t k = 0; k < a1.size(); ++k) {
    PetscScalar *x = nullptr;
    MFT_PETSC(VecGetArray(lambdas_[k], &x));
    std::memcpy(x, a1[k], sizeof(double) * ctx_.stage.size());
    MFT_PETSC(VecRestoreArray(lambdas_[k], &x));
  }
  ctx_.rows = true;
  ctx_.row_slice = -1;
  ctx_.slice_done = &slice_done;
  ctx_.field->clear_rows();
  struct Restore { // the solver leaves rows mode however the sweep ends
    DepthContext &ctx;
    ~Restore() {
      ctx.rows = false;
      ctx.slice_done = nullptr;
    }
  } restore{ctx_};
  // Segments start at slice boundaries: the rows of the slice above one
  // are complete before it is recomputed.
  const auto rows_done = [&] {
    if (ctx_.row_slice >= 0) {
      slice_done(ctx_.row_slice);
      ctx_.field->clear_rows();
    }
    ctx_.row_slice = -1;
  };
  reverse_segments(rows_done);
  rows_done();
}

void DepthSolver::reverse_segments(const std::function<void()> &before_recompute) {
  // The cotangents in lambda and dR/dtheta carry from each segment to the
  // one below it; every segment but the last (still in the trajectory) is
  // first recomputed from its checkpoint, by the forward's own operations.
  const long long segments = segment_count();
  const auto size = static_cast<size_t>(ctx_.field->state_size());
  for (long long j = segments - 1; j >= 0; --j) {
    const long long first = segment_first(j), last = segment_first(j + 1);
    if (j < segments - 1) {
      if (before_recompute) before_recompute();
      PetscScalar *x = nullptr;
      MFT_PETSC(VecGetArray(X_, &x));
      std::copy(checkpoints_.begin() + static_cast<std::ptrdiff_t>(j * size),
                checkpoints_.begin() + static_cast<std::ptrdiff_t>((j + 1) * size), x);
      MFT_PETSC(VecRestoreArray(X_, &x));
      MFT_PETSC(TSSetTime(ts_, checkpoint_depths_[static_cast<size_t>(j)]));
      take_steps(first, last);
    }
    ctx_.adjoint_step = -1;
    MFT_PETSC(TSAdjointSetSteps(ts_, static_cast<PetscInt>(last - first)));
    petsc_call_with_callbacks(TSAdjointSolve(ts_), ctx_.error, "TSAdjointSolve (depth)");
  }
}

} // namespace mft
