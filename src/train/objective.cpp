#include "mft/train/objective.hpp"

#include "mft/core/error.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace mft {

Objective::Objective(MPI_Comm comm, Model &model, double lambda)
    : comm_(comm), model_(model), lambda_(lambda) {
  const auto p = static_cast<size_t>(model.particles->local_size());
  const auto x = model.data.tokens.size();
  theta_.resize(p);
  state_.dR.resize(p);
  state_.velocity.resize(p);
  state_.dX0.resize(x);
  X1_.resize(x);
  a1_.resize(x);
}

void Objective::check_finite(const std::vector<double> &values, const char *what) const {
  // The first non-finite entry over all ranks, as (quantity, slice, particle).
  const Particles &p = *model_.particles;
  const long long offsets[6] = {p.offset_Q(), p.offset_K(), p.offset_V(), p.offset_W1(),
                                p.offset_W2(), p.local_size()};
  const char *names[5] = {"Q", "K", "V", "W1", "W2"};
  const long long L = p.heads.L, Mmax = std::max(p.heads.M, p.neurons.M);
  long long first = -1;
  for (size_t i = 0; i < values.size() && first < 0; ++i)
    if (!std::isfinite(values[i])) {
      int b = 0;
      while (static_cast<long long>(i) >= offsets[b + 1]) ++b;
      const bool head = b < 3;
      const long long per = head ? (b < 2 ? p.heads.qk_size() : p.heads.v_size()) : p.neurons.w_size();
      const long long count = head ? p.heads.own.count() : p.neurons.own.count();
      const long long k = (static_cast<long long>(i) - offsets[b]) / per;
      const long long l = k / count, m = k % count + (head ? p.heads.own.begin : p.neurons.own.begin);
      first = (b * L + l) * Mmax + m;
    }
  // The lowest code among the ranks that found one.
  long long key = first < 0 ? std::numeric_limits<long long>::max() : first, worst = 0;
  MPI_Allreduce(&key, &worst, 1, MPI_LONG_LONG, MPI_MIN, comm_);
  if (worst == std::numeric_limits<long long>::max()) return;
  const long long m = worst % Mmax, l = (worst / Mmax) % L, b = worst / Mmax / L;
  throw Error(std::string(what) + names[b] + " of slice " + std::to_string(l) + ", " +
              (b < 3 ? "head " : "neuron ") + std::to_string(m) + " is not finite");
}

const ParticleState &Objective::at(const double *theta) {
  // Every rank holds other particles: the ranks agree whether theta is new.
  int same = valid_ && std::memcmp(theta, theta_.data(), theta_.size() * sizeof(double)) == 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, comm_);
  if (same) return state_;
  valid_ = false;
  std::memcpy(theta_.data(), theta, theta_.size() * sizeof(double));
  check_finite(theta_, "particle ");

  Particles &p = *model_.particles;
  p.unpack(theta);
  model_.field->particles_changed();
  const TokenData &data = model_.data;
  model_.solver->solve(data.tokens.data(), X1_.data());
  state_.risk = model_.readout->risk(data, X1_.data(), a1_.data());
  if (!std::isfinite(state_.risk)) throw Error("the risk R is not finite");
  model_.solver->adjoint(a1_.data(), state_.dX0.data(), state_.dR.data());
  check_finite(state_.dR, "the gradient dR/d");

  // Velocity of §6, species by species, and the sums for Q and grad_norm.
  const double L = static_cast<double>(p.heads.L);
  const double scale_h = static_cast<double>(p.heads.M) * L;
  const double scale_n = p.has_mlp() ? static_cast<double>(p.neurons.M) * L : 1.0;
  const auto split = static_cast<size_t>(p.offset_W1());
  double sums[4] = {0, 0, 0, 0}; // |theta|^2, |v|^2 for heads, then neurons
  for (size_t i = 0; i < theta_.size(); ++i) {
    const bool head = i < split;
    const double v = -(head ? scale_h : scale_n) * state_.dR[i] - lambda_ * theta_[i];
    state_.velocity[i] = v;
    sums[head ? 0 : 2] += theta_[i] * theta_[i];
    sums[head ? 1 : 3] += v * v;
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, comm_);
  state_.objective = state_.risk + 0.5 * lambda_ * (sums[0] / scale_h + sums[2] / scale_n);
  state_.grad_norm = std::sqrt(sums[1] / scale_h + sums[3] / scale_n);
  ++evaluations_;
  valid_ = true;
  return state_;
}

} // namespace mft
