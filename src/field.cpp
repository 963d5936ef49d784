#include "mft/field.hpp"

#include <algorithm>

namespace mft {

DepthField::DepthField(MPI_Comm comm, long long N, long long n, const HeadParticles &heads)
    : comm_(comm), N_(N), n_(n), d_(heads.d), L_(heads.L), attention_(N, n, heads) {
  const double mine = attention_.model_flops();
  MPI_Allreduce(&mine, &model_flops_, 1, MPI_DOUBLE, MPI_SUM, comm_);
}

void DepthField::particles_changed(const HeadParticles &heads) { attention_.set_particles(heads); }

void DepthField::evaluate(long long l, const double *X, double *F) {
  std::fill(F, F + state_size(), 0.0);
  attention_.add_velocity(l, X, F);
  MPI_Allreduce(MPI_IN_PLACE, F, static_cast<int>(state_size()), MPI_DOUBLE, MPI_SUM, comm_);
  ++evaluations_;
}

} // namespace mft
