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
// token norm), and the precision its kernels compute in (run.precision).
struct FieldOptions : ModelConfig {
  FieldOptions() = default;
  FieldOptions(const ModelConfig &model, bool mixed = false) : ModelConfig(model), mixed_precision(mixed) {}
  // run.precision = mixed: the kernels' products in float
  // (kernel_precision.hpp); the tokens, particles and sums stay double.
  bool mixed_precision = false;
};

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

  // The NTK's rows (MODEL.md §7): dX as add_vjp, but each sequence i's
  // weighted parameter cotangent added into the kernel's own row
  // i * stride + offset (for output `offset` of `stride`), kept apart until
  // clear_rows, with the parameters mapped from the kernel's layout only when
  // a row is read (once per slice, not per stage). Rows are of one slice l at
  // a time. The first call sizes the rows (N stride of them).
  virtual void add_vjp_rows(long long l, const double *X, const double *C, double *dX, double weight,
                            long long stride, long long offset) = 0;
  // Row r's parameter cotangents of slice l, added into d (add_vjp's layout).
  virtual void add_row(long long l, long long r, const std::vector<double *> &d) const = 0;
  virtual void clear_rows() = 0;
  // Bytes of the rows of N sequences at `stride` rows each (the memory estimate).
  virtual double row_bytes(long long N, long long stride) const = 0;

  // Flops of one add_velocity as MODEL.md §3 counts them, this rank's
  // particles (0: not counted).
  virtual double model_flops() const { return 0.0; }

  // Why the tokens may blow up in finite depth ("" when they cannot).
  virtual std::string blow_up_hint() const { return ""; }
};

} // namespace mft
