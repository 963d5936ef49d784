#pragma once
// Random streams keyed by what they belong to, never by rank order.
//
// A stream is keyed by (seed, species, l, m): particle m of slice l of a
// species always draws the same numbers, whichever rank owns it, and the
// first M heads of a wider run are exactly the heads of an M-head run.
// Generator: xoshiro256** seeded by a SplitMix64 hash of the key; normals by
// Box-Muller, written out here so the numbers do not depend on the C++
// library's distribution code (NormalStream: the same, 8 lanes at a time).
#include <cstdint>

namespace mft {

enum class Species : std::uint64_t {
  Heads = 1,        // attention head particles (Q, K, V)
  Neurons = 2,      // MLP neuron particles
  DataSequence = 3, // the tokens of one sequence (l = sequence index)
  DataTask = 4,     // task-wide quantities (a target functional)
  Minibatch = 5,    // the order of the training sequences in one pass (l = pass)
  DataHeldOut = 6,  // the tokens of one held-out sequence (seed data.test_seed, l = index)
  DataOnline = 7,   // the tokens of one online sequence (l = training step, m = place in its batch)
  DataProbe = 8,    // the symbols of one induction probe (seed data.test_seed, l = index)
};

class RandomStream {
public:
  RandomStream(std::uint64_t seed, Species species, std::uint64_t l, std::uint64_t m);
  // The stream of particle (l, m) at training step `step` (Langevin noise):
  // the key has one more part, so it is unrelated to the particle's own.
  RandomStream(std::uint64_t seed, Species species, std::uint64_t l, std::uint64_t m, std::uint64_t step);

  std::uint64_t next_u64();
  // Uniform on [0, 1) with 53 random bits.
  double uniform();
  // Standard normal.
  double normal();

private:
  friend class NormalStream;
  // The state's seed: a SplitMix64 hash of the key's parts.
  static std::uint64_t key_hash(std::uint64_t seed, const std::uint64_t *parts, int count);
  void seed_from(std::uint64_t seed, const std::uint64_t *parts, int count);
  std::uint64_t s_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// Standard normals in bulk, 16 at a time (Langevin's noise: every
// coordinate of a particle at every step). The stream of key (seed, species,
// l, m, step) runs 8 xoshiro256** generators side by side in the vector
// lanes (lanes.hpp), lane j seeded from the key's hash and j, and turns each
// pair of uniforms into two normals by Box-Muller with its own vector log,
// square root and sine and cosine (normals.cpp; each accurate to a few
// 1e-16 relative): about 1.3 ns a normal against about 14 for
// RandomStream's scalar one (mft-bench). Its numbers are not RandomStream's.
class NormalStream {
public:
  NormalStream(std::uint64_t seed, Species species, std::uint64_t l, std::uint64_t m, std::uint64_t step);
  // out[0 .. count) = the stream's next normals; a count that is not a
  // multiple of 16 drops the rest of the last 16.
  void fill(double *out, long long count);

private:
  alignas(64) std::uint64_t s_[4][8]; // s_[k][j]: state word k of lane j
};

} // namespace mft
