#pragma once
// The neural tangent kernel of the particle system (MODEL.md §7): for a
// parameter group G, J_ik = d yhat_ik / d(G-parameters of all particles) and
//
//     K_G = (M L) J J^T   (the MLP's particles, in group `all`, weigh M_f L),
//
// the Gram matrix of the gradient flow's linearisation: d yhat/d tau =
// -K (yhat - y)/N. yhat_i depends on sequence i alone, so one forward solve
// of all sequences and one adjoint sweep of all outputs at once (a(1) =
// d yhat_ik/dX(1) for every i and k) give every row (i, k) apart: the
// kernels keep each sequence's parameter cotangents separately, slice by
// slice, and K accumulates J_l J_l^T as the sweep leaves slice l (a
// training step's work plus the Gram's N^2 P / 2 flops). Each rank keeps
// its own particles' entries and the ranks' partial Grams are summed by one
// all-reduce.
#include "mft/tasks/problem.hpp"

#include <mpi.h>
#include <string>
#include <vector>

namespace mft {

struct NtkSpectrum {
  long long N = 0;                 // rows: N d_out, row i d_out + k for output k of sequence i
  std::vector<double> gram;        // N x N, row-major (the same on every rank)
  std::vector<double> eigenvalues; // ascending
  double lambda_min() const { return eigenvalues.front(); }
  double lambda_max() const { return eigenvalues.back(); }
};

// Whether flat entry index i of this rank's particles belongs to group
// `part` (V, QK, mlp, all); InputError naming ntk.part otherwise.
void check_ntk_part(const std::string &part, const Particles &particles);

// K_part at the problem's current particles. Collective on its grid.
NtkSpectrum ntk_spectrum(Problem &problem, const std::string &part);

// K of each of `parts`, from one forward solve and one adjoint sweep.
std::vector<NtkSpectrum> ntk_spectra(Problem &problem, const std::vector<std::string> &parts);

// What [B] makes of the kernels, for the squared loss without weight decay:
// the residual r = yhat - y obeys dr/dtau = -(1/N) K_all r near the
// particles, so R = |r|^2 / (2N) decays at least at the rate
// 2 lambda_min(K_V) / N while K_V stays positive definite (the V part
// alone is linear in the parameters), and Euler's step r -> (1 - dtau
// K_all / N) r is stable for dtau < 2 N / lambda_max(K_all). K includes
// the factor M L of training's time scale, so these are in the units of
// train.dtau.
struct NtkReport {
  long long sequences = 0;    // N: the rows the loss averages over (N (n - 1) with the next-token readout)
  double kv_lambda_min = 0.0, kv_lambda_max = 0.0, all_lambda_max = 0.0;
  double tolerance = 0.0;     // K_V is positive definite when lambda_min exceeds this
  bool kv_positive_definite = false;
  double rate_bound = 0.0;    // 2 lambda_min(K_V) / N (0 when K_V is not positive definite)
  double euler_dtau_max = 0.0; // 2 N / lambda_max(K_all)
};
NtkReport ntk_report(const NtkSpectrum &K_V, const NtkSpectrum &K_all, long long sequences);

} // namespace mft
