#pragma once
// Particles over depth slices (MODEL.md §2, §9): every species has M
// particles in each of L slices, each particle the same list of matrices,
// and each rank owns a block of every slice. A species is registered by its
// file in src/model/species/ (its matrices, stream, NTK groups, initial
// scales, kernel and memory); generic code (packing, initialisation, weight
// decay, finite checks, the NTK's parameter groups, the run file, and
// through the file's species attribute the Python reader) iterates over
// Particles::species() and their matrices and names none of them.
#include "mft/core/config.hpp"
#include "mft/core/rng.hpp"
#include "mft/model/species_kernel.hpp"

#include <mpi.h>
#include <cstdint>
#include <memory>
#include <stdexcept>
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
  std::string name;     // its /particles dataset (Q, K, V, ...)
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
  // The standard deviation of its entries at initialisation (its
  // species' init key; 0 in a layout that is not drawn).
  double sigma = 0.0;
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
  // What a run's header says of it ("M=32 heads x L=8 slices, d_h=8").
  virtual std::string describe() const = 0;
  virtual std::unique_ptr<ParticleSpecies> clone() const = 0;

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
  // count, and the first M of a wider run are those of a run with M. The
  // first form takes each matrix's own sigma.
  void initialise(std::uint64_t seed);
  void initialise(std::uint64_t seed, const std::vector<double> &sigmas);
  // Each matrix's standard deviation at initialisation, in order.
  void set_sigmas(const std::vector<double> &sigmas);

  long long L = 0, M = 0;
  ParticleBlock own;

private:
  std::string name_;
  Species stream_ = Species::Heads;
  std::vector<ParticleMatrix> matrices_;
  std::vector<std::vector<double>> values_;
};

// What a species is built from: the model's keys, the heads per slice (a
// width sweep or a teacher may differ from model.heads), the initial scales
// (none: a layout whose values are not drawn), and rank `rank` of `ranks`
// owning its block of each slice (ranks = 0: no rank owns any, the layout
// alone, to check a file against).
struct SpeciesSetup {
  const ModelConfig &model;
  const InitConfig *init = nullptr;
  long long heads = 0;
  int rank = 0, ranks = 0;
  ParticleBlock share(long long M) const {
    return ranks > 0 ? ParticleBlock::block(M, rank, ranks) : ParticleBlock{M, 0, 0};
  }
};

// Everything this rank owns, and its flat layout as one vector (the state of
// the training flow): the registered species in registry order (their
// files' names in src/model/species/, sorted), each its matrices in order,
// each matrix in its [l][m] order: [Q | K | V | ...]. A species with no
// particles (M = 0: an MLP left out) is held but takes no part.
class Particles {
public:
  Particles() = default;
  Particles(std::vector<std::unique_ptr<ParticleSpecies>> registered, long long token_dim);
  Particles(const Particles &other);
  Particles &operator=(const Particles &other);
  Particles(Particles &&) = default;
  Particles &operator=(Particles &&) = default;

  // The species present (M > 0), in flat-layout order.
  std::vector<const ParticleSpecies *> species() const;
  std::vector<ParticleSpecies *> species();
  // Every registered species, present or not.
  std::vector<const ParticleSpecies *> registered() const;
  // The species of class S (a test or a species' own code reaches its
  // matrices by name through it); throws if none is registered.
  template <class S> S &get() {
    for (auto &s : species_)
      if (auto *found = dynamic_cast<S *>(s.get())) return *found;
    throw std::logic_error("Particles::get: no such species registered");
  }
  template <class S> const S &get() const { return const_cast<Particles *>(this)->get<S>(); }

  long long slices() const { return species_.empty() ? 0 : species_.front()->L; } // L, every species alike
  long long token_dim() const { return token_dim_; } // d: every species acts on tokens in R^d
  long long local_size() const;
  // Where matrix `name` starts in the flat layout.
  long long offset(const std::string &name) const;
  // The present species' descriptions, for a run's header ("M=32 heads x
  // L=8 slices, d_h=8 + MLP").
  std::string describe() const;

  void pack(double *flat) const;
  void unpack(const double *flat);

private:
  std::vector<std::unique_ptr<ParticleSpecies>> species_;
  long long token_dim_ = 0;
};

// The registered species of the configured architecture, `heads` heads per
// slice: rank `rank` of `ranks` owns its block of each (storage allocated,
// not drawn); with ranks = 0 no rank owns any, the layout alone.
Particles particle_layout(const ModelConfig &model, long long heads, int rank, int ranks);

// The layout (no rank owns any) of every registered species present: each
// model key that sizes a species' matrices (ParticleMatrix::keys) raised to
// at least 1, the others as `model` has them. What a file of any model's
// particles may hold (the format's reference, init.file's shapes).
Particles every_species_layout(const ModelConfig &model);

// The initial scales left at auto (kScaledWithSizes), set by each species
// from the model's sizes (MODEL.md §9); given ones stay.
void resolve_initial_scales(Config &config);

// This rank's particles of the configured architecture, `heads` heads per
// slice, drawn from rho_0 with the streams of `seed` (scales left at auto
// taken as resolve_initial_scales would).
Particles make_particles(const Config &config, MPI_Comm comm, std::uint64_t seed, long long heads);

} // namespace mft

// A species' file src/model/species/ID.cpp holds, at the start of a line, its
// registration line (read by the build: cmake/registries.cmake)
//   MFT_SPECIES(ID, "its NTK groups", "help")
// and defines in namespace mft make_ID_species(const SpeciesSetup &) and
// resolve_ID_scales(InitConfig &, const ModelConfig &) (its init keys left
// at auto, from the sizes).
#define MFT_SPECIES(id, ntk_parts, help)
