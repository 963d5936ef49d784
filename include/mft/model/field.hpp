#pragma once
// The velocity F_l(X) of a depth slice (MODEL.md §3) and its transposed
// products (§5). Every rank adds its own particles' share, and one
// all-reduce per evaluation sums the shares, so every rank ends with the
// same full velocity (or token cotangent) of all tokens.
//
//   attention only:  F = (1/M) sum_m phi_{theta_m}
//   with the MLP:    F = (1/2) ((1/M) sum_m phi_{theta_m} + (1/M_f) sum_m h_{w_m})
//
// in general the mean over the S species present of each one's mean over
// its particles: each species' kernel (species_kernel.hpp) weighs its
// particles 1/(S M_s). With a token norm (model.norm, token_norm.hpp) the
// field is its projection Pi(x) F, and vjp the transpose of that.
#include "mft/model/particles.hpp"
#include "mft/model/species_kernel.hpp"
#include "mft/model/token_norm.hpp"

#include <mpi.h>
#include <memory>
#include <string>
#include <vector>

namespace mft {

class DepthField {
public:
  // comm: the ranks that share the particles (each owns a block of every
  // slice). `particles` must outlive the field.
  DepthField(MPI_Comm comm, long long N, long long n, const Particles &particles,
             const FieldOptions &options = {});

  // The particles changed (training): refresh the kernels' per-slice products.
  void particles_changed();

  // F = F_l(X) for all N x n x d tokens (projected by the token norm).
  // Collective on comm.
  void evaluate(long long l, const double *X, double *F);

  // For the cotangent C of F_l at X: dX = (dF_l/dX)^T C summed over all
  // ranks (collective), and dtheta (this rank's particles, flat layout of
  // Particles) += weight (dF_l/dtheta)^T C for slice l's particles (the
  // adjoint adds each stage's share with its RK weight).
  void vjp(long long l, const double *X, const double *C, double *dX, double *dtheta, double weight = 1.0);

  // The NTK's sweep (MODEL.md §7): dX as vjp, and each sequence i's
  // weighted parameter cotangent of slice l kept apart by the kernels in
  // row i * stride + offset (SpeciesKernel::add_vjp_rows) until clear_rows.
  void vjp_rows(long long l, const double *X, const double *C, double *dX, double weight, long long stride,
                long long offset);
  // theta_l += row r's parameter cotangents of slice l, theta_l laid out as
  // this rank's particles of one slice: the species in order, each its
  // matrices in order, each own.count() x rows x cols (slice_size doubles).
  void add_row(long long l, long long r, double *theta_l) const;
  void clear_rows();
  long long slice_size() const;
  // Bytes the kernels' rows take at `stride` rows per sequence.
  double row_bytes(long long stride) const;

  long long slices() const { return L_; }
  long long state_size() const { return N_ * n_ * d_; }
  long long tokens() const { return N_ * n_; } // rows of d values: the N sequences' tokens
  long long token_dim() const { return d_; }
  long long evaluations() const { return evaluations_; }
  // Wall seconds this rank spent in the field's all-reduces (the sum over
  // the head ranks, waiting for the slowest of them included).
  double allreduce_seconds() const { return allreduce_seconds_; }
  // Flops of one evaluation summed over all ranks, as MODEL.md §3 counts.
  double model_flops() const { return model_flops_; }
  MPI_Comm comm() const { return comm_; }
  // Why tokens of this field may blow up in finite depth ("" when they cannot).
  std::string blow_up_hint() const;
  // The constraint on the tokens (what X(0) is and how the velocity is projected).
  const TokenNorm &norm() const { return *norm_; }
  const Particles &particles() const { return particles_; }

private:
  // One species of the particles: its kernel, and where each of its
  // matrices starts in the flat layout of Particles.
  struct SpeciesPart {
    const ParticleSpecies *species;
    std::unique_ptr<SpeciesKernel> kernel;
    std::vector<long long> offsets;
  };

  MPI_Comm comm_;
  long long N_, n_, d_, L_;
  const Particles &particles_;
  // The species' share of F_l(X), unprojected, summed over the ranks.
  void evaluate_field(long long l, const double *X, double *F);
  // vjp's frame (the norm's projection, the sum over ranks) around
  // add_species(part, C) for each species.
  template <class AddSpecies>
  void vjp_with(long long l, const double *X, const double *C, double *dX, AddSpecies &&add_species);

  std::vector<SpeciesPart> species_;
  std::unique_ptr<TokenNorm> norm_;
  std::vector<double *> vjp_blocks_; // a species' matrices' cotangents of a slice (vjp's work)
  // With a norm, the vjp's work: F at its state, Pi^T C, the state term.
  std::vector<double> field_, cotangent_, state_term_;
  long long evaluations_ = 0;
  double allreduce_seconds_ = 0.0;
  double model_flops_ = 0.0;
};

} // namespace mft
