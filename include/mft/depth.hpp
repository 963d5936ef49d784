#pragma once
// The forward problem in depth (MODEL.md §3): dX/ds = F_l(X) on slice l,
// s from 0 to 1, integrated by a PETSc TS with the options prefix "depth_".
//
// Fixed steps h = 1/(L k): no step straddles a slice boundary, so the
// parameters are constant inside every step. The token Vec is replicated on
// every rank (a TS on PETSC_COMM_SELF per rank); the field's all-reduce keeps
// the ranks' states identical, so all ranks take the same steps.
#include "mft/config.hpp"
#include "mft/field.hpp"

#include <petscts.h>

#include <string>

namespace mft {

// The TS's application context, as in PETSc's TS tutorials.
struct DepthContext {
  DepthField *field = nullptr;
  PetscInt slices = 1;
  PetscInt steps_per_slice = 1;
  PetscInt slice = 0; // slice of the step being taken
};

class DepthSolver {
public:
  // Creates the TS with prefix "depth_": the configured type and RK tableau,
  // then the options database (-depth_ts_type, -depth_ts_rk_type,
  // -depth_ts_monitor, ...). Throws InputError for a type that is not an
  // explicit one-step method or an unknown tableau.
  DepthSolver(DepthField &field, const DepthConfig &config);
  ~DepthSolver();
  DepthSolver(const DepthSolver &) = delete;
  DepthSolver &operator=(const DepthSolver &) = delete;

  // X1 = X(1) from X0 = X(0), each N x n x d. Collective on the field's comm.
  void solve(const double *X0, double *X1);

  // The type and tableau actually in use, after the options database.
  const std::string &ts_type() const { return ts_type_; }
  const std::string &rk_type() const { return rk_type_; }
  long long steps() const { return static_cast<long long>(ctx_.slices * ctx_.steps_per_slice); }
  TS ts() const { return ts_; }

private:
  DepthContext ctx_;
  TS ts_ = nullptr;
  Vec X_ = nullptr;
  std::string ts_type_, rk_type_;
};

} // namespace mft
