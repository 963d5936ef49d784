#pragma once
// The field of one particle species (MODEL.md §3, §5): this rank's particles'
// share of a slice's velocity and its transposed products. A species
// (particles.hpp) makes its kernel; DepthField sums the kernels of the
// species present, each particle weighted 1/(S M_s) with S species of M_s
// particles per slice, so a new species is its particles' class and its
// kernel, and the field does not change.
#include "mft/core/config.hpp"

#include <memory>
#include <string>
#include <vector>

namespace mft {

// The variant of the field (MODEL.md §10) the kernels read: the model's
// keys (the score map and its keys, the mask, the MLP's activation, the
// token norm).
using FieldOptions = ModelConfig;

class SpeciesKernel {
public:
  virtual ~SpeciesKernel() = default;

  // The particles changed (training): refresh the kernel's per-slice
  // products of them.
  virtual void particles_changed() = 0;

  // F += this rank's particles' share of the velocity of slice l at the
  // tokens X (N x n x d, as F).
  virtual void add_velocity(long long l, const double *X, double *F) = 0;

  // For the cotangent C (N x n x d) of the velocity of slice l at X:
  // dX += (dF/dX)^T C from this rank's particles (the caller sums over
  // ranks), and for each matrix k of the species, d[k] (this rank's
  // particles of slice l, layout [m][rows][cols]) += weight (dF/dtheta_k)^T C.
  virtual void add_vjp(long long l, const double *X, const double *C, double *dX, const std::vector<double *> &d,
                       double weight) = 0;

  // Flops of one add_velocity as MODEL.md §3 counts them, this rank's
  // particles (0: not counted).
  virtual double model_flops() const { return 0.0; }

  // Why the tokens may blow up in finite depth ("" when they cannot).
  virtual std::string blow_up_hint() const { return ""; }
};

} // namespace mft
