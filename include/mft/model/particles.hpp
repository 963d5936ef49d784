#pragma once
// Particles over depth slices (MODEL.md §2, §9): every species has M
// particles in each of L slices, each particle the same list of matrices
// (heads: Q, K, V; neurons: W1, W2), and each rank owns a block of every
// slice. Generic code (packing, initialisation, weight decay, finite checks,
// the NTK's parameter groups, the run file, and through the file's species
// attribute the Python reader) iterates over Particles::species() and their
// matrices; only the species' kernels (species_kernel.hpp) know what a
// species computes.
#include "mft/core/config.hpp"
#include "mft/core/rng.hpp"
#include "mft/model/species_kernel.hpp"

#include <mpi.h>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mft {

// The block of a species' M particles that a rank owns: rank r of P owns
// the contiguous block [begin, end) in every slice (heads and neurons
// alike). M need not divide by P; a rank may own none.
struct ParticleBlock {
  long long M = 0;
  long long begin = 0;
  long long end = 0;
  long long count() const { return end - begin; }
  static ParticleBlock block(long long M, int rank, int size);
};

// One matrix that every particle of a species holds.
struct ParticleMatrix {
  std::string name;     // the /particles dataset: Q, K, V, W1, W2
  long long rows = 0, cols = 0;
  std::string ntk_part; // the NTK parameter group it belongs to: V, QK, mlp
  // For the format's reference (mft --format-reference): its dataset's
  // shape after the snapshot axis, in the model's symbols, and what it is.
  std::string shape;
  std::string meaning;
  // The model keys its dataset's dimensions (L, M, rows, cols) give ("" for
  // one no key decides alone): a file of particles sets those left at
  // their defaults (init.file).
  std::vector<std::string> keys;
  long long size() const { return rows * cols; }
};

// A species of particles and this rank's share of it. Each matrix is one
// array [l][m - begin][rows][cols], C order: exactly this rank's hyperslab of
// the file's (L, M, rows, cols) dataset.
class ParticleSpecies {
public:
  ParticleSpecies() = default;
  ParticleSpecies(std::string name, Species stream, long long L, long long M, ParticleBlock own,
                  std::vector<ParticleMatrix> matrices);
  ParticleSpecies(const ParticleSpecies &) = default;
  ParticleSpecies(ParticleSpecies &&) = default;
  ParticleSpecies &operator=(const ParticleSpecies &) = default;
  ParticleSpecies &operator=(ParticleSpecies &&) = default;
  virtual ~ParticleSpecies() = default;

  // What the species computes: its kernel over N sequences of n tokens,
  // each of its particles weighted `scale` (the kernel keeps a reference to
  // these particles, which must outlive it).
  virtual std::unique_ptr<SpeciesKernel> make_kernel(long long N, long long n, double scale,
                                                     const FieldOptions &options) const = 0;
  // Values per particle and slice that its kernel keeps beside the
  // particles (its products of them), for the memory estimate.
  virtual long long kernel_values() const = 0;

  const std::string &name() const { return name_; } // heads, neurons: the file's species attribute
  Species stream() const { return stream_; }          // the key of its particles' random streams
  const std::vector<ParticleMatrix> &matrices() const { return matrices_; }
  std::vector<double> &values(size_t k) { return values_[k]; }
  const std::vector<double> &values(size_t k) const { return values_[k]; }
  double *at(size_t k, long long l, long long local) {
    return values_[k].data() + (l * own.count() + local) * matrices_[k].size();
  }
  const double *at(size_t k, long long l, long long local) const {
    return values_[k].data() + (l * own.count() + local) * matrices_[k].size();
  }
  // This rank's entries, all matrices.
  long long local_size() const;
  // M L: the mean-field time scale (and the normaliser of its weight decay).
  double time_scale() const { return static_cast<double>(M) * static_cast<double>(L); }

  // Particle (l, m) takes its matrices in order, entries sigma_k N(0, 1),
  // from the stream (seed, species, l, m): the same particles on any rank
  // count, and the first M of a wider run are those of a run with M.
  void initialise(std::uint64_t seed, const std::vector<double> &sigmas);

  long long L = 0, M = 0;
  ParticleBlock own;

private:
  std::string name_;
  Species stream_ = Species::Heads;
  std::vector<ParticleMatrix> matrices_;
  std::vector<std::vector<double>> values_;
};

// Attention heads theta = (Q, K, V): Q, K in R^{d_h x d}, V in R^{d x d}.
class HeadParticles : public ParticleSpecies {
public:
  HeadParticles(long long L, long long M, long long d_h, long long d, ParticleBlock own);
  // Q, K entries N(0, sigma_qk^2), then V entries N(0, sigma_v^2).
  void initialise(std::uint64_t seed, double sigma_qk, double sigma_v) {
    ParticleSpecies::initialise(seed, {sigma_qk, sigma_qk, sigma_v});
  }
  // The attention kernel (attention.hpp), with options' score map and mask.
  std::unique_ptr<SpeciesKernel> make_kernel(long long N, long long n, double scale,
                                             const FieldOptions &options) const override;
  long long kernel_values() const override { return 3 * d * d; } // B = Q^T K, scale V, and V^T

  long long d_h, d;
  std::vector<double> &Q() { return values(0); }
  std::vector<double> &K() { return values(1); }
  std::vector<double> &V() { return values(2); }
  const std::vector<double> &Q() const { return values(0); }
  const std::vector<double> &K() const { return values(1); }
  const std::vector<double> &V() const { return values(2); }
  long long qk_size() const { return d_h * d; }
  long long v_size() const { return d * d; }
  double *q(long long l, long long local) { return at(0, l, local); }
  double *k(long long l, long long local) { return at(1, l, local); }
  double *v(long long l, long long local) { return at(2, l, local); }
  const double *q(long long l, long long local) const { return at(0, l, local); }
  const double *k(long long l, long long local) const { return at(1, l, local); }
  const double *v(long long l, long long local) const { return at(2, l, local); }
};

// MLP neurons w = (W1, W2) ([A]'s block): W1 in R^{d_f x d}, W2 in R^{d x d_f}.
class NeuronParticles : public ParticleSpecies {
public:
  NeuronParticles() = default;
  NeuronParticles(long long L, long long M, long long d_f, long long d, ParticleBlock own);
  // W1 entries N(0, sigma_1^2), then W2 entries N(0, sigma_2^2).
  void initialise(std::uint64_t seed, double sigma_1, double sigma_2) {
    ParticleSpecies::initialise(seed, {sigma_1, sigma_2});
  }
  // The MLP kernel (mlp.hpp), with options' activation.
  std::unique_ptr<SpeciesKernel> make_kernel(long long N, long long n, double scale,
                                             const FieldOptions &options) const override;
  long long kernel_values() const override { return 2 * d_f * d; } // W1^T and scale W2^T

  long long d_f = 0, d = 0;
  long long w_size() const { return d_f * d; }
  double *w1(long long l, long long local) { return at(0, l, local); }
  double *w2(long long l, long long local) { return at(1, l, local); }
  const double *w1(long long l, long long local) const { return at(0, l, local); }
  const double *w2(long long l, long long local) const { return at(1, l, local); }
};

// Everything this rank owns, and its flat layout as one vector (the state of
// the training flow): the species in order, each its matrices in order, each
// matrix in its [l][m] order: [Q | K | V | W1 | W2].
struct Particles {
  HeadParticles heads;
  NeuronParticles neurons; // M = 0: attention only

  // The species present, in flat-layout order. Adding a species: its class
  // (with its kernel, species_kernel.hpp), a member above and a line in
  // species().
  std::vector<const ParticleSpecies *> species() const;
  std::vector<ParticleSpecies *> species();

  bool has_mlp() const { return neurons.M > 0; }
  long long token_dim() const { return heads.d; } // d: every species acts on tokens in R^d
  long long local_size() const;
  // Where matrix `name` (Q, K, V, W1, W2) starts in the flat layout.
  long long offset(const std::string &name) const;

  void pack(double *flat) const;
  void unpack(const double *flat);
};

// The configured species, `heads` heads per slice: rank `rank` of `ranks`
// owns its block of each (storage allocated, not drawn); with ranks = 0 no
// rank owns any, the layout alone (to check a file against).
Particles particle_layout(const ModelConfig &model, long long heads, int rank, int ranks);

// This rank's particles of the configured architecture, `heads` heads per
// slice, drawn from rho_0 with the streams of `seed`.
Particles make_particles(const Config &config, MPI_Comm comm, std::uint64_t seed, long long heads);

} // namespace mft
