#pragma once
// The velocity F_l(X) of a depth slice (MODEL.md §3): every rank adds its
// own heads' share, and one all-reduce per evaluation sums the shares, so
// every rank ends with the same full velocity of all tokens.
#include "mft/attention.hpp"
#include "mft/particles.hpp"

#include <mpi.h>
#include <vector>

namespace mft {

class DepthField {
public:
  // comm: the ranks that share the heads (each owns a block of every slice).
  DepthField(MPI_Comm comm, long long N, long long n, const HeadParticles &heads);

  // The particles changed (training): refresh the kernel's per-slice products.
  void particles_changed(const HeadParticles &heads);

  // F = F_l(X) for all N x n x d tokens. Collective on comm.
  void evaluate(long long l, const double *X, double *F);

  long long slices() const { return L_; }
  long long state_size() const { return N_ * n_ * d_; }
  long long evaluations() const { return evaluations_; }
  // Flops of one evaluation summed over all ranks, as MODEL.md §3 counts.
  double model_flops() const { return model_flops_; }
  MPI_Comm comm() const { return comm_; }

private:
  MPI_Comm comm_;
  long long N_, n_, d_, L_;
  AttentionKernel attention_;
  long long evaluations_ = 0;
  double model_flops_ = 0.0;
};

} // namespace mft
