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
// Checkpoints (depth.checkpoint_slices = c): the forward keeps the state at
// every c-th slice boundary and the stored trajectory of the last c slices
// only; the adjoint reverses segment by segment, recomputing each from its
// checkpoint. A segment starts at a slice boundary, where the forward
// restarts the step anyway, so the recomputation repeats the forward's
// operations exactly and the gradient is the same bit for bit.
//
// Adjoint: TSAdjoint with a matrix-free Jacobian J = dF/dX, a MATSHELL whose
// MatMultTranspose is the field's vector-Jacobian product; the Jacobian
// callback only records the stage state, and the parameter part of the same
// product is added to dR/dtheta with the stage's RK weight (depth_adjoint.cpp).
#include "mft/core/config.hpp"
#include "mft/model/field.hpp"

#include "mft/core/petsc_handle.hpp"

#include <petscts.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace mft {

// The TS's application context, as in PETSc's TS tutorials.
// The tokens along depth that a solve records: X(0) and the state after
// every `every` steps (the slice boundaries: k, every step: 1), each a row of
// the state, with its depth s.
struct DepthPath {
  long long every = 1;
  std::vector<double> states;
  std::vector<double> depths;
};

struct DepthContext {
  DepthField *field = nullptr;
  DepthPath *path = nullptr; // the solve's recording, or none
  PetscInt slices = 1;
  PetscInt steps_per_slice = 1;
  PetscInt slice = 0;       // slice of the step being taken (or reversed)
  std::exception_ptr error; // an mft error raised inside a callback

  // Adjoint: the stage state recorded by the Jacobian callback, and dR/dtheta
  // accumulated here, not by PETSc's cost gradient mu: TSAdjointStep_RK
  // reverses the stages i = s-1 .. 0 of a step (s-2 .. 0 for an FSAL
  // tableau), asks for the Jacobian at stage i, then for J^T of a vector
  // lambda_i, and would add w_i Jp^T lambda_i to mu with w_i = -h b_i (-h
  // when b_i = 0). The J^T product adds that share itself, to slice l's
  // particles only: no parameter-sized vector is touched per stage.
  std::vector<double> stage;
  PetscInt stage_slice = 0;
  std::vector<double> dtheta;   // the sum over stages
  std::vector<PetscReal> rk_b;  // the tableau's weights b
  bool fsal = false;
  PetscInt adjoint_step = -1;   // the step whose stages are being reversed
  PetscInt stage_index = 0;     // the stage being reversed
  double stage_weight = 0.0;    // its w_i

  // The NTK's sweep (adjoint_rows): several cotangents at once, which
  // TSAdjointStep_RK transposes in order after each stage's Jacobian, and the
  // parameter cotangents kept per sequence and output by the field's rows.
  bool rows = false;
  PetscInt cost_count = 1;      // cotangents per stage (the solver's)
  PetscInt cost_index = 0;      // the cotangent of the next J^T product of this stage
  PetscInt row_slice = -1;      // the slice the rows hold
  const std::function<void(long long)> *slice_done = nullptr;
};

// The scheme a DepthSolver of `config` runs, as the options database
// (-depth_ts_type, -depth_ts_rk_type) chooses it over the configuration:
// ts_type euler, rk or ssp and the RK tableau (euler runs as tableau 1fe).
// InputError as DepthSolver's. What a run's resolved configuration records.
DepthConfig resolve_depth_scheme(const DepthConfig &config, bool adjoint);
// States (each the size of the tokens) the adjoint's forward trajectory
// keeps for L slices of k steps of `stages` stages: every step's stages and
// the first state, or with checkpoints every c slices (0: none), one
// segment's and the segments' starting states.
double depth_trajectory_states(long long slices, long long steps_per_slice, long long stages,
                               long long checkpoint_slices);
// The stages of one depth step of that scheme, as PETSc's tableau says
// (the memory estimate's trajectory holds them).
long long depth_stages(const DepthConfig &config);

class DepthSolver {
public:
  // Creates the TS with prefix "depth_": the configured type and RK tableau,
  // then the options database (-depth_ts_type, -depth_ts_rk_type,
  // -depth_ts_monitor, ...). With `adjoint`, the trajectory is kept and the
  // Jacobian shells are set for adjoint(). Throws InputError for a type that
  // is not an explicit one-step method, or has no adjoint when one is needed.
  // `cotangents` > 1: an adjoint solver for adjoint_rows of that many
  // cotangents at once.
  DepthSolver(DepthField &field, const DepthConfig &config, bool adjoint = false, long long cotangents = 1);
  DepthSolver(const DepthSolver &) = delete;
  DepthSolver &operator=(const DepthSolver &) = delete;

  // X1 = X(1) from the data's tokens X0 (X(0) = X0, or its image under the
  // field's token norm), each N x n x d. Collective on the field's comm.
  // With `path`, the states along depth are recorded into it.
  void solve(const double *X0, double *X1, DepthPath *path = nullptr);

  // After solve(): integrates the adjoint from a(1) = a1 back to s = 0.
  // a0 = dR/dX0, the cotangent of the data's tokens (may be null); dtheta = dR/dtheta for this rank's
  // particles in the flat layout of Particles (overwritten). Collective.
  void adjoint(const double *a1, double *a0, double *dtheta);

  // The NTK's sweep (MODEL.md §7), after solve(): the adjoint of the solver's
  // `cotangents` a1[k] at once, the field keeping the parameter cotangent of
  // sequence i and cotangent k in its row i cotangents + k
  // (DepthField::vjp_rows). Each slice's rows are complete when the sweep
  // moves below it: slice_done(l) is called then (from L - 1 down to 0), and
  // the rows are cleared after it. Collective.
  void adjoint_rows(const std::vector<const double *> &a1, const std::function<void(long long)> &slice_done);

  // The type and tableau actually in use, after the options database.
  const std::string &ts_type() const { return ts_type_; }
  const std::string &rk_type() const { return rk_type_; }
  long long steps() const { return static_cast<long long>(ctx_.slices * ctx_.steps_per_slice); }
  TS ts() const { return ts_; }
  // Bytes the stored forward trajectory takes (stages, and the
  // checkpoints), 0 without adjoint.
  double trajectory_bytes() const;
  // Forward segments: 1, or with checkpoints one per c slices.
  long long segment_count() const;

private:
  void create_adjoint_objects();
  // TSSolve from step `first` (the state in X_, the time in the TS) to step
  // `last`, with the trajectory emptied first.
  void take_steps(long long first, long long last);
  long long segment_first(long long j) const; // segment j's first step (steps() for j = segment_count())
  // TSAdjointSolve segment by segment from the last, each recomputed from
  // its checkpoint but the last; `before_recompute` runs before each recomputation.
  void reverse_segments(const std::function<void()> &before_recompute);

  DepthContext ctx_;
  PetscTS ts_;
  PetscVec X_;
  PetscMat J_;
  std::vector<PetscVec> lambdas_; // one per cotangent
  std::vector<Vec> lambda_vecs_;  // their handles, the array TSSetCostGradients keeps
  bool adjoint_ = false;
  long long cotangents_ = 1;
  std::string ts_type_, rk_type_;
  PetscInt stages_ = 1;
  std::vector<double> data_tokens_; // the last solve's X0, for a token norm's transpose
  long long checkpoint_slices_ = 0;    // c, 0: the whole trajectory kept
  std::vector<double> checkpoints_;    // the state at each segment's start
  std::vector<PetscReal> checkpoint_depths_; // and its s, as the forward's steps summed it
};

} // namespace mft
