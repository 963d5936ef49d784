#pragma once
// Head particles theta_lm = (Q, K, V) over depth slices, and which rank owns
// which heads (MODEL.md §2, §9).
#include "mft/core/config.hpp"

#include <mpi.h>
#include <cstdint>
#include <vector>

namespace mft {

// Rank r of P owns the contiguous block [begin, end) of heads in every
// slice. M need not divide by P; a rank may own none.
struct HeadOwnership {
  long long M = 0;
  long long begin = 0;
  long long end = 0;
  long long count() const { return end - begin; }
  static HeadOwnership block(long long M, int rank, int size);
};

// The heads of every slice that this rank owns. Layout of each array:
// [l][m - begin][rows][cols], C order, i.e. exactly this rank's hyperslab of
// the file's (L, M, rows, cols) particle datasets.
class HeadParticles {
public:
  HeadParticles(long long L, long long M, long long d_h, long long d, HeadOwnership own);

  // Draws this rank's particles from rho_0: Q, K entries N(0, sigma_qk^2),
  // V entries N(0, sigma_v^2), in that order, from the stream
  // (seed, Heads, l, m).
  void initialise(std::uint64_t seed, double sigma_qk, double sigma_v);

  long long L, M, d_h, d;
  HeadOwnership own;

  std::vector<double> Q, K, V;

  long long qk_size() const { return d_h * d; }
  long long v_size() const { return d * d; }
  double *q(long long l, long long local) { return Q.data() + (l * own.count() + local) * qk_size(); }
  double *k(long long l, long long local) { return K.data() + (l * own.count() + local) * qk_size(); }
  double *v(long long l, long long local) { return V.data() + (l * own.count() + local) * v_size(); }
  const double *q(long long l, long long local) const {
    return Q.data() + (l * own.count() + local) * qk_size();
  }
  const double *k(long long l, long long local) const {
    return K.data() + (l * own.count() + local) * qk_size();
  }
  const double *v(long long l, long long local) const {
    return V.data() + (l * own.count() + local) * v_size();
  }
};

// The MLP neuron particles w_lm = (W1, W2) of every slice that this rank
// owns ([A]'s block, MODEL.md §2), laid out like the heads.
class NeuronParticles {
public:
  NeuronParticles() = default;
  NeuronParticles(long long L, long long M, long long d_f, long long d, HeadOwnership own);

  // W1 entries N(0, sigma_1^2), then W2 entries N(0, sigma_2^2), from the
  // stream (seed, Neurons, l, m).
  void initialise(std::uint64_t seed, double sigma_1, double sigma_2);

  long long L = 0, M = 0, d_f = 0, d = 0;
  HeadOwnership own;
  std::vector<double> W1, W2; // [l][m - begin][d_f][d], [l][m - begin][d][d_f]

  long long w_size() const { return d_f * d; }
  double *w1(long long l, long long local) { return W1.data() + (l * own.count() + local) * w_size(); }
  double *w2(long long l, long long local) { return W2.data() + (l * own.count() + local) * w_size(); }
  const double *w1(long long l, long long local) const {
    return W1.data() + (l * own.count() + local) * w_size();
  }
  const double *w2(long long l, long long local) const {
    return W2.data() + (l * own.count() + local) * w_size();
  }
};

// Everything this rank owns, and its flat layout as one vector (the state of
// the training flow): [Q | K | V | W1 | W2], each in its own [l][m] order.
struct Particles {
  HeadParticles heads;
  NeuronParticles neurons; // M = 0: attention only

  bool has_mlp() const { return neurons.M > 0; }
  long long local_size() const;

  // Offsets of the blocks in the flat layout.
  long long offset_Q() const { return 0; }
  long long offset_K() const { return static_cast<long long>(heads.Q.size()); }
  long long offset_V() const { return offset_K() + static_cast<long long>(heads.K.size()); }
  long long offset_W1() const { return offset_V() + static_cast<long long>(heads.V.size()); }
  long long offset_W2() const { return offset_W1() + static_cast<long long>(neurons.W1.size()); }

  void pack(double *flat) const;
  void unpack(const double *flat);
};

// This rank's particles of the configured architecture, `heads` heads per
// slice, drawn from rho_0 with the streams of `seed`.
Particles make_particles(const Config &config, MPI_Comm comm, std::uint64_t seed, long long heads);

} // namespace mft
