#include "mft/model/particles.hpp"

#include "mft/core/rng.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace mft {

ParticleBlock ParticleBlock::block(long long M, int rank, int size) {
  const long long q = M / size, r = M % size;
  ParticleBlock o;
  o.M = M;
  o.begin = rank * q + (rank < r ? rank : r);
  o.end = o.begin + q + (rank < r ? 1 : 0);
  return o;
}

ParticleSpecies::ParticleSpecies(std::string name, Species stream, long long L_, long long M_,
                                 ParticleBlock own_, std::vector<ParticleMatrix> matrices)
    : L(L_), M(M_), own(own_), name_(std::move(name)), stream_(stream),
      matrices_(std::move(matrices)) {
  for (const ParticleMatrix &m : matrices_)
    values_.emplace_back(static_cast<std::size_t>(L * own.count() * m.size()));
}

long long ParticleSpecies::local_size() const {
  long long n = 0;
  for (const auto &v : values_) n += static_cast<long long>(v.size());
  return n;
}

void ParticleSpecies::initialise(std::uint64_t seed, const std::vector<double> &sigmas) {
  for (long long l = 0; l < L; ++l)
    for (long long m = own.begin; m < own.end; ++m) {
      RandomStream rng(seed, stream_, static_cast<std::uint64_t>(l), static_cast<std::uint64_t>(m));
      for (size_t k = 0; k < matrices_.size(); ++k) {
        double *x = at(k, l, m - own.begin);
        for (long long i = 0; i < matrices_[k].size(); ++i) x[i] = sigmas[k] * rng.normal();
      }
    }
}

namespace {
const std::vector<std::string> head_keys = {"model.slices", "model.heads", "model.head_dim", ""};
} // namespace

HeadParticles::HeadParticles(long long L_, long long M_, long long d_h_, long long d_,
                             ParticleBlock own_)
    : ParticleSpecies("heads", Species::Heads, L_, M_, own_,
                      {{"Q", d_h_, d_, "QK", "L, M, d_h, d", "head particles: queries", head_keys},
                       {"K", d_h_, d_, "QK", "L, M, d_h, d", "head particles: keys", head_keys},
                       {"V", d_, d_, "V", "L, M, d, d", "head particles: values", {"model.slices", "model.heads", "", ""}}}),
      d_h(d_h_), d(d_) {}

NeuronParticles::NeuronParticles(long long L_, long long M_, long long d_f_, long long d_,
                                 ParticleBlock own_)
    : ParticleSpecies("neurons", Species::Neurons, L_, M_, own_,
                      {{"W1", d_f_, d_, "mlp", "L, M_f, d_f, d", "neuron particles (with the MLP): W1",
                        {"model.slices", "model.mlp_particles", "model.mlp_width", ""}},
                       {"W2", d_, d_f_, "mlp", "L, M_f, d, d_f", "neuron particles (with the MLP): W2",
                        {"model.slices", "model.mlp_particles", "", "model.mlp_width"}}}),
      d_f(d_f_), d(d_) {}

std::vector<const ParticleSpecies *> Particles::species() const {
  std::vector<const ParticleSpecies *> out = {&heads};
  if (has_mlp()) out.push_back(&neurons);
  return out;
}

std::vector<ParticleSpecies *> Particles::species() {
  std::vector<ParticleSpecies *> out = {&heads};
  if (has_mlp()) out.push_back(&neurons);
  return out;
}

long long Particles::local_size() const {
  long long n = 0;
  for (const ParticleSpecies *s : species()) n += s->local_size();
  return n;
}

long long Particles::offset(const std::string &name) const {
  long long at = 0;
  for (const ParticleSpecies *s : species())
    for (size_t k = 0; k < s->matrices().size(); ++k) {
      if (s->matrices()[k].name == name) return at;
      at += static_cast<long long>(s->values(k).size());
    }
  return at; // an absent matrix is empty at the end
}

void Particles::pack(double *flat) const {
  for (const ParticleSpecies *s : species())
    for (size_t k = 0; k < s->matrices().size(); ++k)
      flat = std::copy(s->values(k).begin(), s->values(k).end(), flat);
}

void Particles::unpack(const double *flat) {
  for (ParticleSpecies *s : species())
    for (size_t k = 0; k < s->matrices().size(); ++k) {
      std::vector<double> &v = s->values(k);
      std::copy(flat, flat + v.size(), v.begin());
      flat += v.size();
    }
}

Particles particle_layout(const ModelConfig &m, long long heads, int rank, int ranks) {
  const auto share = [&](long long M) {
    return ranks > 0 ? ParticleBlock::block(M, rank, ranks) : ParticleBlock{M, 0, 0};
  };
  return Particles{HeadParticles(m.slices, heads, m.head_dim, m.d, share(heads)),
                   NeuronParticles(m.slices, m.mlp_particles, m.mlp_width, m.d, share(m.mlp_particles))};
}

Particles make_particles(const Config &c, MPI_Comm comm, std::uint64_t seed, long long heads) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Particles p = particle_layout(c.model, heads, rank, size);
  p.heads.initialise(seed, c.init.sigma_qk, c.init.sigma_v);
  p.neurons.initialise(seed, c.init.sigma_w1, c.init.sigma_w2);
  return p;
}

} // namespace mft
