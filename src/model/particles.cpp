#include "mft/model/particles.hpp"

#include "mft/core/rng.hpp"

#include <algorithm>
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

NeuronParticles::NeuronParticles(long long L_, long long M_, long long d_f_, long long d_,
                                 HeadOwnership own_)
    : L(L_), M(M_), d_f(d_f_), d(d_), own(own_),
      W1(static_cast<std::size_t>(L_ * own_.count() * d_f_ * d_)),
      W2(static_cast<std::size_t>(L_ * own_.count() * d_f_ * d_)) {}

void NeuronParticles::initialise(std::uint64_t seed, double sigma_1, double sigma_2) {
  for (long long l = 0; l < L; ++l)
    for (long long m = own.begin; m < own.end; ++m) {
      RandomStream rng(seed, Species::Neurons, static_cast<std::uint64_t>(l),
                       static_cast<std::uint64_t>(m));
      const long long local = m - own.begin;
      double *a = w1(l, local), *b = w2(l, local);
      for (long long i = 0; i < w_size(); ++i) a[i] = sigma_1 * rng.normal();
      for (long long i = 0; i < w_size(); ++i) b[i] = sigma_2 * rng.normal();
    }
}

long long Particles::local_size() const {
  return offset_W2() + static_cast<long long>(neurons.W2.size());
}

void Particles::pack(double *flat) const {
  for (const auto *v : {&heads.Q, &heads.K, &heads.V, &neurons.W1, &neurons.W2})
    flat = std::copy(v->begin(), v->end(), flat);
}

void Particles::unpack(const double *flat) {
  for (auto *v : {&heads.Q, &heads.K, &heads.V, &neurons.W1, &neurons.W2}) {
    std::copy(flat, flat + v->size(), v->begin());
    flat += v->size();
  }
}

Particles make_particles(const Config &c, MPI_Comm comm, std::uint64_t seed, long long heads) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const ModelConfig &m = c.model;
  Particles p{HeadParticles(m.slices, heads, m.head_dim, m.d, HeadOwnership::block(heads, rank, size)),
              NeuronParticles(m.slices, m.mlp_particles, m.mlp_width, m.d,
                              HeadOwnership::block(m.mlp_particles, rank, size))};
  p.heads.initialise(seed, c.init.sigma_qk, c.init.sigma_v);
  p.neurons.initialise(seed, c.init.sigma_w1, c.init.sigma_w2);
  return p;
}

} // namespace mft
