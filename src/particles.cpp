#include "mft/particles.hpp"

#include "mft/rng.hpp"

#include <cstddef>

namespace mft {

HeadOwnership HeadOwnership::block(long long M, int rank, int size) {
  const long long q = M / size, r = M % size;
  HeadOwnership o;
  o.M = M;
  o.begin = rank * q + (rank < r ? rank : r);
  o.end = o.begin + q + (rank < r ? 1 : 0);
  return o;
}

HeadParticles::HeadParticles(long long L_, long long M_, long long d_h_, long long d_,
                             HeadOwnership own_)
    : L(L_), M(M_), d_h(d_h_), d(d_), own(own_),
      Q(static_cast<std::size_t>(L_ * own_.count() * d_h_ * d_)),
      K(static_cast<std::size_t>(L_ * own_.count() * d_h_ * d_)),
      V(static_cast<std::size_t>(L_ * own_.count() * d_ * d_)) {}

void HeadParticles::initialise(std::uint64_t seed, double sigma_qk, double sigma_v) {
  for (long long l = 0; l < L; ++l)
    for (long long m = own.begin; m < own.end; ++m) {
      RandomStream rng(seed, Species::Heads, static_cast<std::uint64_t>(l),
                       static_cast<std::uint64_t>(m));
      const long long local = m - own.begin;
      double *q_ = q(l, local), *k_ = k(l, local), *v_ = v(l, local);
      for (long long i = 0; i < qk_size(); ++i) q_[i] = sigma_qk * rng.normal();
      for (long long i = 0; i < qk_size(); ++i) k_[i] = sigma_qk * rng.normal();
      for (long long i = 0; i < v_size(); ++i) v_[i] = sigma_v * rng.normal();
    }
}

} // namespace mft
