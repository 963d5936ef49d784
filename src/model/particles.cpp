#include "mft/model/particles.hpp"

#include "mft/core/error.hpp"
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

void ParticleSpecies::initialise(std::uint64_t seed) {
  std::vector<double> sigmas;
  for (const ParticleMatrix &m : matrices_) sigmas.push_back(m.sigma);
  initialise(seed, sigmas);
}

void ParticleSpecies::set_sigmas(const std::vector<double> &sigmas) {
  if (sigmas.size() != matrices_.size()) throw Error("species " + name_ + ": one initial scale per matrix");
  for (size_t k = 0; k < sigmas.size(); ++k) matrices_[k].sigma = sigmas[k];
}

#undef MFT_SPECIES
#define MFT_SPECIES(id, ntk_parts, help)                                                                        \
  std::unique_ptr<ParticleSpecies> make_##id##_species(const SpeciesSetup &setup);                            \
  void resolve_##id##_scales(InitConfig &init, const ModelConfig &model);
#include "mft/registry/species.inc"
#undef MFT_SPECIES

void resolve_initial_scales(Config &config) {
#define MFT_SPECIES(id, ntk_parts, help) resolve_##id##_scales(config.init, config.model);
#include "mft/registry/species.inc"
#undef MFT_SPECIES
}

namespace {

Particles registered_species(const SpeciesSetup &setup) {
  std::vector<std::unique_ptr<ParticleSpecies>> list;
#define MFT_SPECIES(id, ntk_parts, help) list.push_back(make_##id##_species(setup));
#include "mft/registry/species.inc"
#undef MFT_SPECIES
  return Particles(std::move(list), setup.model.d);
}

template <class P, class List> std::vector<P> present(const List &list) {
  std::vector<P> out;
  for (const auto &s : list)
    if (s->M > 0) out.push_back(s.get());
  return out;
}

} // namespace

Particles::Particles(std::vector<std::unique_ptr<ParticleSpecies>> registered, long long token_dim)
    : species_(std::move(registered)), token_dim_(token_dim) {}

Particles::Particles(const Particles &other) : token_dim_(other.token_dim_) {
  for (const auto &s : other.species_) species_.push_back(s->clone());
}

Particles &Particles::operator=(const Particles &other) {
  if (this != &other) *this = Particles(other);
  return *this;
}

std::vector<const ParticleSpecies *> Particles::registered() const {
  std::vector<const ParticleSpecies *> out;
  for (const auto &s : species_) out.push_back(s.get());
  return out;
}

std::vector<const ParticleSpecies *> Particles::species() const {
  return present<const ParticleSpecies *>(species_);
}

std::vector<ParticleSpecies *> Particles::species() { return present<ParticleSpecies *>(species_); }

std::string Particles::describe() const {
  std::string out;
  for (const ParticleSpecies *s : species()) out += (out.empty() ? "" : " + ") + s->describe();
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
  return registered_species({m, nullptr, heads, rank, ranks});
}

Particles every_species_layout(const ModelConfig &model) {
  Config c;
  c.model = model;
  const Particles given = particle_layout(model, model.heads, 0, 0);
  for (const ParticleSpecies *s : given.registered())
    for (const ParticleMatrix &m : s->matrices())
      for (const std::string &key : m.keys)
        if (!key.empty() && std::stoll(config_value(c, key)) < 1) set_config_key(c, key, "1");
  return particle_layout(c.model, c.model.heads, 0, 0);
}

Particles make_particles(const Config &c, MPI_Comm comm, std::uint64_t seed, long long heads) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Particles p = registered_species({c.model, &c.init, heads, rank, size});
  for (ParticleSpecies *s : p.species()) s->initialise(seed);
  return p;
}

} // namespace mft
