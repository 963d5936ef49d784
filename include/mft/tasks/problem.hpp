#pragma once
// The configured problem on this rank: the model's particles with the data
// they are trained on, its depth field and solver, readout and loss, as every
// command builds it (runs/build_problem.hpp).
#include "mft/core/process_grid.hpp"
#include "mft/depth/depth.hpp"
#include "mft/model/field.hpp"
#include "mft/model/loss.hpp"
#include "mft/model/particles.hpp"
#include "mft/model/readout.hpp"
#include "mft/model/tokens.hpp"
#include "mft/tasks/symbols.hpp"

#include <memory>

namespace mft {

struct Problem {
  // The ranks' grid (heads x sequence groups). First, so that its
  // communicators outlive the fields that use them.
  std::unique_ptr<ProcessGrid> grid;
  // The training sequences, all N of them on every rank; the field and the
  // solver hold this group's block of them (grid->block(N)).
  TokenData data;
  std::unique_ptr<Particles> particles;
  std::unique_ptr<DepthField> field;
  std::unique_ptr<DepthSolver> solver;
  std::unique_ptr<Readout> readout;
  std::unique_ptr<Loss> loss;
  // Held-out sequences (N = 0: none; all on every rank), with a forward-only
  // field and solver of their own for this group's block, over the same
  // particles: measured, never trained on.
  TokenData test_data;
  std::unique_ptr<DepthField> test_field;
  std::unique_ptr<DepthSolver> test_solver;
  // A task of symbols: the induction probe (data.probe_sequences; N = 0:
  // none), all on every rank, with a forward-only field and solver of its
  // own for this group's block: the mechanism's scores are measured on it.
  TokenData probe;
  std::unique_ptr<DepthField> probe_field;
  std::unique_ptr<DepthSolver> probe_solver;
  // How the field and solver were made: further ones over the same
  // particles (minibatches, one sequence for the NTK) are made alike.
  FieldOptions field_options;
  DepthConfig depth_config;
  // A task of symbols: its baselines on the held-out sequences (empty otherwise).
  std::vector<Baseline> baselines;

  // The ranks that share the particles of this group (the fields' communicator).
  MPI_Comm heads_comm() const { return grid->heads(); }
  // This group's block of `all` (data or test_data).
  TokenData block_of(const TokenData &all) const {
    const SequenceBlock b = grid->block(all.N);
    return all.rows(b.begin, b.end);
  }

  // The loss of predictions yhat (N x d_out) of `data`, over the readout's
  // rows: N x predictions() of d_out / predictions() values each (every
  // position of the next-token readout). G, when given: rows x dR/dyhat, to
  // be pulled back with divisor loss_rows(N).
  long long loss_rows(long long N) const { return N * readout->predictions(); }
  double risk_of(const std::vector<double> &yhat, const TokenData &data, double *G = nullptr) const {
    return loss->risk(yhat, data.targets, loss_rows(data.N), data.d_out / readout->predictions(), G);
  }
  double accuracy_of(const std::vector<double> &yhat, const TokenData &data) const {
    return accuracy(yhat, data.targets, loss_rows(data.N), data.d_out / readout->predictions());
  }

  // The particles changed (training): refresh every field's products.
  void particles_changed() {
    field->particles_changed();
    if (test_field) test_field->particles_changed();
    if (probe_field) probe_field->particles_changed();
  }
};

} // namespace mft
