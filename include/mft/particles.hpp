#pragma once
// Head particles theta_lm = (Q, K, V) over depth slices, and which rank owns
// which heads (MODEL.md §2, §9).
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

} // namespace mft
