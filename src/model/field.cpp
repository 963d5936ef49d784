#include "mft/model/field.hpp"

#include "mft/core/log_events.hpp"

#include <algorithm>

namespace mft {
namespace {

double attention_scale(const Particles &p) {
  return (p.has_mlp() ? 0.5 : 1.0) / static_cast<double>(p.heads.M);
}

} // namespace

FieldOptions FieldOptions::of(const ModelConfig &model) {
  return {model.attention, model.causal, parse_activation(model.activation)};
}

DepthField::DepthField(MPI_Comm comm, long long N, long long n, const Particles &particles,
                       const FieldOptions &options)
    : comm_(comm), N_(N), n_(n), d_(particles.heads.d), L_(particles.heads.L),
      particles_(particles),
      attention_(N, n, particles.heads, attention_scale(particles),
                 make_score_map(options.attention, options.causal)) {
  if (particles.has_mlp())
    mlp_ = std::make_unique<MlpKernel>(N * n, particles.neurons,
                                       0.5 / static_cast<double>(particles.neurons.M),
                                       options.activation);
  const double mine = attention_.model_flops();
  MPI_Allreduce(&mine, &model_flops_, 1, MPI_DOUBLE, MPI_SUM, comm_);
}

void DepthField::particles_changed() {
  attention_.set_particles(particles_.heads);
  if (mlp_) mlp_->set_particles(particles_.neurons);
}

void DepthField::evaluate(long long l, const double *X, double *F) {
  std::fill(F, F + state_size(), 0.0);
  attention_.add_velocity(l, X, F);
  if (mlp_) mlp_->add_velocity(l, X, F);
  LogScope log(&LogEvents::allreduce);
  MPI_Allreduce(MPI_IN_PLACE, F, static_cast<int>(state_size()), MPI_DOUBLE, MPI_SUM, comm_);
  ++evaluations_;
}

void DepthField::vjp(long long l, const double *X, const double *C, double *dX, double *dtheta,
                     double weight) {
  const Particles &p = particles_;
  const long long Ml = p.heads.own.count(), qk = p.heads.qk_size(), vv = p.heads.v_size();
  std::fill(dX, dX + state_size(), 0.0);
  attention_.add_vjp(l, X, C, dX, dtheta + p.offset("Q") + l * Ml * qk,
                     dtheta + p.offset("K") + l * Ml * qk, dtheta + p.offset("V") + l * Ml * vv, weight);
  if (mlp_) {
    const long long Mf = p.neurons.own.count(), w = p.neurons.w_size();
    mlp_->add_vjp(l, X, C, dX, dtheta + p.offset("W1") + l * Mf * w,
                  dtheta + p.offset("W2") + l * Mf * w, weight);
  }
  LogScope log(&LogEvents::allreduce);
  MPI_Allreduce(MPI_IN_PLACE, dX, static_cast<int>(state_size()), MPI_DOUBLE, MPI_SUM, comm_);
}

} // namespace mft
