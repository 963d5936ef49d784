#include "mft/train/objective.hpp"

#include "mft/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace mft {

Objective::Objective(Problem &problem) : Objective(problem, problem.data, *problem.field, *problem.solver) {}

Objective::Objective(Problem &problem, const TokenData &data, DepthField &field, DepthSolver &solver)
    : problem_(problem), data_(data), block_(problem.block_of(data)), field_(field), solver_(solver) {
  const auto p = static_cast<size_t>(problem.particles->local_size());
  const auto x = block_.tokens.size();
  theta_.resize(p);
  state_.dR.resize(p);
  state_.dX0.resize(x);
  X1_.resize(x);
  a1_.resize(x);
  G_.resize(data.targets.size());
}

void Objective::data_changed() {
  valid_ = false;
  block_ = problem_.block_of(data_);
}

void Objective::check_finite(const std::vector<double> &values, const char *what) const {
  // The first non-finite entry over all ranks, coded as (matrix, slice,
  // particle) in flat-layout order, so the ranks agree on which to name.
  const Particles &p = *problem_.particles;
  std::vector<const ParticleMatrix *> matrix;
  std::vector<const ParticleSpecies *> owner;
  for (const ParticleSpecies *s : p.species())
    for (const ParticleMatrix &m : s->matrices()) matrix.push_back(&m), owner.push_back(s);
  long long Mmax = 1;
  for (const ParticleSpecies *s : p.species()) Mmax = std::max(Mmax, s->M);
  const long long L = p.slices();
  long long first = -1, at = 0;
  for (size_t b = 0; b < matrix.size() && first < 0; ++b) {
    const ParticleSpecies &s = *owner[b];
    const long long per = matrix[b]->size(), count = per * s.own.count() * L;
    for (long long i = 0; i < count; ++i)
      if (!std::isfinite(values[static_cast<size_t>(at + i)])) {
        const long long k = i / per;
        first = (static_cast<long long>(b) * L + k / s.own.count()) * Mmax + k % s.own.count() + s.own.begin;
        break;
      }
    at += count;
  }
  // The lowest code among the ranks that found one.
  long long key = first < 0 ? std::numeric_limits<long long>::max() : first, worst = 0;
  MPI_Allreduce(&key, &worst, 1, MPI_LONG_LONG, MPI_MIN, comm());
  if (worst == std::numeric_limits<long long>::max()) return;
  const long long m = worst % Mmax, l = (worst / Mmax) % L, b = worst / Mmax / L;
  const std::string &species = owner[static_cast<size_t>(b)]->name(); // "heads": "head 3"
  throw DivergedError(std::string(what) + matrix[static_cast<size_t>(b)]->name + " of slice " + std::to_string(l) +
              ", " + species.substr(0, species.size() - 1) + " " + std::to_string(m) + " is not finite");
}

void Objective::check_groups_agree() const {
  // The groups stay equal only if every all-reduce across them returns the
  // same bits on every rank (Open MPI's and MPICH's do; MPI does not
  // promise it): a hash of this rank's particles, compared across groups.
  const ProcessGrid &grid = *problem_.grid;
  if (grid.groups() == 1) return;
  unsigned long long hash = 1469598103934665603ULL; // FNV-1a over 64-bit words
  for (const double v : theta_) {
    unsigned long long word = 0;
    std::memcpy(&word, &v, sizeof word);
    hash = (hash ^ word) * 1099511628211ULL;
  }
  unsigned long long low = hash, high = hash;
  MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, grid.across());
  MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, grid.across());
  int differ = low != high, any = 0;
  MPI_Allreduce(&differ, &any, 1, MPI_INT, MPI_MAX, grid.world());
  if (any)
    throw Error("the sequence groups hold different particles: this MPI's all-reduce does not return the same "
                "bits on every rank; run with parallel.sequence_groups = 1");
}

const Gradient &Objective::at(const double *theta) {
  // Every rank holds other particles: the ranks agree whether theta is new.
  int same = valid_ && std::memcmp(theta, theta_.data(), theta_.size() * sizeof(double)) == 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, problem_.grid->world());
  if (same) return state_;
  valid_ = false;
  std::memcpy(theta_.data(), theta, theta_.size() * sizeof(double));
  check_finite(theta_, "particle ");
  check_groups_agree();

  Particles &p = *problem_.particles;
  p.unpack(theta);
  problem_.particles_changed();
  if (&field_ != problem_.field.get()) field_.particles_changed();
  // This group's sequences forward; the predictions of all N (gathered), so
  // R, its cotangent G and the accuracy are those of one rank's run.
  const TokenData &data = data_;
  const ProcessGrid &grid = *problem_.grid;
  // A group whose block diverges throws alone: the groups agree on that
  // before they meet in the gather (a group's ranks agree already).
  std::vector<double> mine;
  collectively(grid.world(), [&] {
    solver_.solve(block_.tokens.data(), X1_.data());
    mine = problem_.readout->predict(block_, X1_.data());
  });
  const std::vector<double> yhat = grid.gather_rows(mine, data.N, data.d_out);
  state_.risk = problem_.risk_of(yhat, data, G_.data());
  if (!std::isfinite(state_.risk)) throw DivergedError("the risk R is not finite");
  state_.accuracy = problem_.loss->classifies() ? problem_.accuracy_of(yhat, data) : 0.0;
  const long long first = grid.block(data.N).begin;
  problem_.readout->pull_back(block_, G_.data() + first * data.d_out, static_cast<double>(problem_.loss_rows(data.N)),
                              a1_.data());
  collectively(grid.world(), [&] { solver_.adjoint(a1_.data(), state_.dX0.data(), state_.dR.data()); });
  // Each group's sequences' share of dR/dtheta, summed: one all-reduce.
  grid.sum_across(state_.dR.data(), static_cast<long long>(state_.dR.size()));
  check_finite(state_.dR, "the gradient dR/d");
  ++evaluations_;
  valid_ = true;
  return state_;
}

Measure measure(const Problem &problem, DepthSolver &solver, const TokenData &data) {
  Measure out;
  if (data.N == 0) return out;
  const TokenData block = problem.block_of(data);
  std::vector<double> X1(block.tokens.size()), mine;
  collectively(problem.grid->world(), [&] {
    solver.solve(block.tokens.data(), X1.data());
    mine = problem.readout->predict(block, X1.data());
  });
  out.predictions = problem.grid->gather_rows(mine, data.N, data.d_out);
  const std::vector<double> &yhat = out.predictions;
  out.risk = problem.risk_of(yhat, data);
  if (problem.loss->classifies()) out.accuracy = problem.accuracy_of(yhat, data);
  return out;
}

} // namespace mft
