#pragma once
// The forward problem in depth (MODEL.md §3), dX/ds = F_l(X) on slice l for
// s from 0 to 1, and its adjoint (§5), da/ds = -(dF_l/dX)^T a from
// a(1) = dR/dX(1), both with one PETSc TS (options prefix "depth_").
//
// Fixed steps h = 1/(L k): no step straddles a slice boundary, so the
// parameters are constant inside every step, and the adjoint replays exactly
// the forward steps. The token Vec is replicated on every rank (a TS on
// PETSC_COMM_SELF per rank); the field's all-reduce keeps the ranks' states
// identical, so all ranks take the same steps.
//
// Adjoint: TSAdjoint with matrix-free Jacobians. J = dF/dX and Jp = dF/dtheta
// are MATSHELLs whose MatMultTranspose are the field's vector-Jacobian
// products; the Jacobian callbacks only record the stage state, and both
// products of a stage come from one pass over the softmax.
#include "mft/core/config.hpp"
#include "mft/model/field.hpp"

#include "mft/core/petsc_handle.hpp"

#include <petscts.h>

#include <exception>
#include <string>
#include <vector>

namespace mft {

// The TS's application context, as in PETSc's TS tutorials.
struct DepthContext {
  DepthField *field = nullptr;
  PetscInt slices = 1;
  PetscInt steps_per_slice = 1;
  PetscInt slice = 0;       // slice of the step being taken (or reversed)
  std::exception_ptr error; // an mft error raised inside a callback

  // Adjoint: the stage state recorded by the Jacobian callbacks, and the
  // parameter cotangent computed together with the token cotangent of the
  // same lambda (PETSc asks for J^T lambda, then Jp^T lambda).
  std::vector<double> stage;
  PetscInt stage_slice = 0;
  std::vector<double> dtheta, dX_scratch;
  std::vector<double> lambda; // the lambda that dtheta belongs to
  bool dtheta_ready = false;
};

class DepthSolver {
public:
  // Creates the TS with prefix "depth_": the configured type and RK tableau,
  // then the options database (-depth_ts_type, -depth_ts_rk_type,
  // -depth_ts_monitor, ...). With `adjoint`, the trajectory is kept and the
  // Jacobian shells are set for adjoint(). Throws InputError for a type that
  // is not an explicit one-step method, or has no adjoint when one is needed.
  DepthSolver(DepthField &field, const DepthConfig &config, bool adjoint = false);
  DepthSolver(const DepthSolver &) = delete;
  DepthSolver &operator=(const DepthSolver &) = delete;

  // X1 = X(1) from X0 = X(0), each N x n x d. Collective on the field's comm.
  void solve(const double *X0, double *X1);

  // After solve(): integrates the adjoint from a(1) = a1 back to s = 0.
  // a0 = a(0) = dR/dX(0) (may be null); dtheta = dR/dtheta for this rank's
  // particles in the flat layout of Particles (overwritten). Collective.
  void adjoint(const double *a1, double *a0, double *dtheta);

  // The type and tableau actually in use, after the options database.
  const std::string &ts_type() const { return ts_type_; }
  const std::string &rk_type() const { return rk_type_; }
  long long steps() const { return static_cast<long long>(ctx_.slices * ctx_.steps_per_slice); }
  TS ts() const { return ts_; }
  // Bytes the stored forward trajectory takes (states and stages), 0 without adjoint.
  double trajectory_bytes() const;

private:
  void create_adjoint_objects();

  DepthContext ctx_;
  PetscTS ts_;
  PetscVec X_;
  PetscMat J_, Jp_;
  PetscVec lambda_, mu_;
  bool adjoint_ = false;
  std::string ts_type_, rk_type_;
  PetscInt stages_ = 1;
};

// Runs a PETSc call that may fail in one of mft's callbacks: rethrows the
// callback's own error (with its message), else PETSc's.
void petsc_call_with_callbacks(PetscErrorCode ierr, std::exception_ptr &error, const char *call);

} // namespace mft
