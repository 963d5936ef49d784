#include "mft/model/field.hpp"

#include "mft/core/log_events.hpp"

#include <algorithm>

namespace mft {

DepthField::DepthField(MPI_Comm comm, long long N, long long n, const Particles &particles,
                       const FieldOptions &options)
    : comm_(comm), N_(N), n_(n), d_(particles.token_dim()), L_(particles.species().front()->L), particles_(particles),
      norm_(make_token_norm(options)) {
  const std::vector<const ParticleSpecies *> species = particles.species();
  // The mean over the species of each one's mean over its particles.
  const double share = 1.0 / static_cast<double>(species.size());
  long long at = 0;
  double mine = 0.0;
  for (const ParticleSpecies *s : species) {
    SpeciesPart part{s, s->make_kernel(N, n, share / static_cast<double>(s->M), options), {}};
    for (size_t k = 0; k < s->matrices().size(); ++k) {
      part.offsets.push_back(at);
      at += static_cast<long long>(s->values(k).size());
    }
    mine += part.kernel->model_flops();
    species_.push_back(std::move(part));
  }
  MPI_Allreduce(&mine, &model_flops_, 1, MPI_DOUBLE, MPI_SUM, comm_);
}

void DepthField::particles_changed() {
  for (SpeciesPart &part : species_) part.kernel->particles_changed();
}

void DepthField::evaluate_field(long long l, const double *X, double *F) {
  std::fill(F, F + state_size(), 0.0);
  for (SpeciesPart &part : species_) part.kernel->add_velocity(l, X, F);
  LogScope log(&LogEvents::allreduce);
  const double t0 = MPI_Wtime();
  MPI_Allreduce(MPI_IN_PLACE, F, static_cast<int>(state_size()), MPI_DOUBLE, MPI_SUM, comm_);
  allreduce_seconds_ += MPI_Wtime() - t0;
  ++evaluations_;
}

void DepthField::evaluate(long long l, const double *X, double *F) {
  evaluate_field(l, X, F);
  // Every rank holds the same F: the projection needs no communication.
  if (!norm_->identity()) norm_->project(X, F, N_ * n_, d_);
}

template <class AddSpecies>
void DepthField::vjp_with(long long l, const double *X, const double *C, double *dX, AddSpecies &&add_species) {
  // With a norm: the species' transposed products of Pi^T C, and the
  // norm's own state term (the same on every rank, so added after the sum).
  const bool projected = !norm_->identity();
  if (projected) {
    field_.resize(static_cast<size_t>(state_size()));
    evaluate_field(l, X, field_.data());
    cotangent_.assign(C, C + state_size());
    state_term_.assign(static_cast<size_t>(state_size()), 0.0);
    norm_->vjp(X, field_.data(), cotangent_.data(), state_term_.data(), N_ * n_, d_);
    C = cotangent_.data();
  }
  std::fill(dX, dX + state_size(), 0.0);
  for (SpeciesPart &part : species_) add_species(part, C);
  {
    LogScope log(&LogEvents::allreduce);
    const double t0 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, dX, static_cast<int>(state_size()), MPI_DOUBLE, MPI_SUM, comm_);
    allreduce_seconds_ += MPI_Wtime() - t0;
  }
  if (projected)
    for (long long i = 0; i < state_size(); ++i) dX[i] += state_term_[static_cast<size_t>(i)];
}

void DepthField::vjp(long long l, const double *X, const double *C, double *dX, double *dtheta,
                     double weight) {
  vjp_with(l, X, C, dX, [&](SpeciesPart &part, const double *c) {
    const ParticleSpecies &s = *part.species;
    vjp_blocks_.clear();
    for (size_t k = 0; k < s.matrices().size(); ++k)
      vjp_blocks_.push_back(dtheta + part.offsets[k] + l * s.own.count() * s.matrices()[k].size());
    part.kernel->add_vjp(l, X, c, dX, vjp_blocks_, weight);
  });
}

void DepthField::vjp_rows(long long l, const double *X, const double *C, double *dX, double weight,
                          long long stride, long long offset) {
  vjp_with(l, X, C, dX, [&](SpeciesPart &part, const double *c) {
    part.kernel->add_vjp_rows(l, X, c, dX, weight, stride, offset);
  });
}

long long DepthField::slice_size() const {
  long long size = 0;
  for (const SpeciesPart &part : species_)
    for (const ParticleMatrix &m : part.species->matrices()) size += part.species->own.count() * m.size();
  return size;
}

void DepthField::add_row(long long l, long long r, double *theta_l) const {
  std::vector<double *> blocks;
  for (const SpeciesPart &part : species_) {
    blocks.clear();
    for (const ParticleMatrix &m : part.species->matrices()) {
      blocks.push_back(theta_l);
      theta_l += part.species->own.count() * m.size();
    }
    part.kernel->add_row(l, r, blocks);
  }
}

void DepthField::clear_rows() {
  for (SpeciesPart &part : species_) part.kernel->clear_rows();
}

double DepthField::row_bytes(long long stride) const {
  double bytes = 0.0;
  for (const SpeciesPart &part : species_) bytes += part.kernel->row_bytes(N_, stride);
  return bytes;
}

std::string DepthField::blow_up_hint() const {
  for (const SpeciesPart &part : species_)
    if (std::string hint = part.kernel->blow_up_hint(); !hint.empty()) return hint;
  return "";
}

} // namespace mft
