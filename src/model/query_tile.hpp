#pragma once
// The per-query-token loops of the attention kernel (attention.cpp), for one
// sequence's tokens X (n x d) and one query token a, across all of a slice's
// heads at once. Heads are the vector lanes: every array below is laid out
// [token or k][head m], with the head count padded to a multiple of `lanes`
// (padded heads have B = 0 and V = 0, so they add nothing), and every loop
// over heads is a whole number of `Lanes` vectors (lanes.hpp) kept in
// registers.
//
//   scores   S[b][m] = sum_k x_b[k] Z_a[k][m]       (Z_a[k][m] = (x_a^T B_m)[k])
//   mix      Y_a[k][m] = sum_b P[b][m] x_b[k]        (ybar_{a,m}; also T_a from ds)
//   spread   E[b][k] += sum_m ds[b][m] Z_a[k][m] + P[b][m] G_a[k][m]
//            (the VJP's token terms through the scores and the weights, summed
//             over heads at the end of the sequence by fold_spread)
//
#include "mft/core/lanes.hpp"

#include <cstring>

namespace mft::query_tile {

// Each loop below keeps `ways` independent accumulators (tokens or k in
// groups of 4) so that FMA latency overlaps; the remainder goes one at a time.
constexpr long long ways = 4;

// S (visible x heads) = scores of query a against tokens b < visible.
inline void scores(const double *X, long long d, const double *Za, long long heads, long long visible,
                   double *S) {
  for (long long c = 0; c < heads; c += lanes) {
    long long b = 0;
    for (; b + ways <= visible; b += ways) {
      const double *x = X + b * d;
      const Lanes z = load(Za + c);
      Lanes a0 = x[0] * z, a1 = x[d] * z, a2 = x[2 * d] * z, a3 = x[3 * d] * z;
      for (long long k = 1; k < d; ++k) {
        const Lanes zk = load(Za + k * heads + c);
        a0 += x[k] * zk;
        a1 += x[d + k] * zk;
        a2 += x[2 * d + k] * zk;
        a3 += x[3 * d + k] * zk;
      }
      store(S + b * heads + c, a0);
      store(S + (b + 1) * heads + c, a1);
      store(S + (b + 2) * heads + c, a2);
      store(S + (b + 3) * heads + c, a3);
    }
    for (; b < visible; ++b) {
      const double *x = X + b * d;
      Lanes acc = x[0] * load(Za + c);
      for (long long k = 1; k < d; ++k) acc += x[k] * load(Za + k * heads + c);
      store(S + b * heads + c, acc);
    }
  }
}

// Ya (d x heads) = sum_b P[b][m] x_b[k]: the weighted token means of query a
// (visible >= 1: a attends to itself).
inline void mix(const double *X, long long d, const double *P, long long heads, long long visible,
                double *Ya) {
  for (long long c = 0; c < heads; c += lanes) {
    long long k = 0;
    for (; k + ways <= d; k += ways) {
      const Lanes p = load(P + c);
      Lanes a0 = X[k] * p, a1 = X[k + 1] * p, a2 = X[k + 2] * p, a3 = X[k + 3] * p;
      for (long long b = 1; b < visible; ++b) {
        const Lanes pb = load(P + b * heads + c);
        const double *x = X + b * d + k;
        a0 += x[0] * pb;
        a1 += x[1] * pb;
        a2 += x[2] * pb;
        a3 += x[3] * pb;
      }
      store(Ya + k * heads + c, a0);
      store(Ya + (k + 1) * heads + c, a1);
      store(Ya + (k + 2) * heads + c, a2);
      store(Ya + (k + 3) * heads + c, a3);
    }
    for (; k < d; ++k) {
      Lanes acc = X[k] * load(P + c);
      for (long long b = 1; b < visible; ++b) acc += X[b * d + k] * load(P + b * heads + c);
      store(Ya + k * heads + c, acc);
    }
  }
}

// The VJP's two score-shaped products in one pass, sharing the token reads:
// S = scores against Z_a (then the weights) and T[b][m] = <g_{a,m}, x_b>.
inline void scores_pair(const double *X, long long d, const double *Za, const double *Ga, long long heads,
                        long long visible, double *S, double *T) {
  for (long long c = 0; c < heads; c += lanes) {
    long long b = 0;
    for (; b + 2 <= visible; b += 2) {
      const double *x0 = X + b * d, *x1 = x0 + d;
      const Lanes z = load(Za + c), g = load(Ga + c);
      Lanes s0 = x0[0] * z, s1 = x1[0] * z, t0 = x0[0] * g, t1 = x1[0] * g;
      for (long long k = 1; k < d; ++k) {
        const Lanes zk = load(Za + k * heads + c), gk = load(Ga + k * heads + c);
        s0 += x0[k] * zk;
        s1 += x1[k] * zk;
        t0 += x0[k] * gk;
        t1 += x1[k] * gk;
      }
      store(S + b * heads + c, s0);
      store(S + (b + 1) * heads + c, s1);
      store(T + b * heads + c, t0);
      store(T + (b + 1) * heads + c, t1);
    }
    for (; b < visible; ++b) {
      const double *x = X + b * d;
      Lanes s0 = x[0] * load(Za + c), t0 = x[0] * load(Ga + c);
      for (long long k = 1; k < d; ++k) {
        s0 += x[k] * load(Za + k * heads + c);
        t0 += x[k] * load(Ga + k * heads + c);
      }
      store(S + b * heads + c, s0);
      store(T + b * heads + c, t0);
    }
  }
}

// The VJP's two mixes in one pass: Ya of the weights P and Ta of the score
// cotangents ds, sharing the token reads.
inline void mix_pair(const double *X, long long d, const double *P, const double *ds, long long heads,
                     long long visible, double *Ya, double *Ta) {
  for (long long c = 0; c < heads; c += lanes) {
    long long k = 0;
    for (; k + 2 <= d; k += 2) {
      const Lanes p = load(P + c), s = load(ds + c);
      Lanes y0 = X[k] * p, y1 = X[k + 1] * p, t0 = X[k] * s, t1 = X[k + 1] * s;
      for (long long b = 1; b < visible; ++b) {
        const Lanes pb = load(P + b * heads + c), sb = load(ds + b * heads + c);
        const double *x = X + b * d + k;
        y0 += x[0] * pb;
        y1 += x[1] * pb;
        t0 += x[0] * sb;
        t1 += x[1] * sb;
      }
      store(Ya + k * heads + c, y0);
      store(Ya + (k + 1) * heads + c, y1);
      store(Ta + k * heads + c, t0);
      store(Ta + (k + 1) * heads + c, t1);
    }
    for (; k < d; ++k) {
      Lanes y0 = X[k] * load(P + c), t0 = X[k] * load(ds + c);
      for (long long b = 1; b < visible; ++b) {
        y0 += X[b * d + k] * load(P + b * heads + c);
        t0 += X[b * d + k] * load(ds + b * heads + c);
      }
      store(Ya + k * heads + c, y0);
      store(Ta + k * heads + c, t0);
    }
  }
}

// E (n x d x lanes) += the token cotangents through the scores (ds, with
// Z_a) and through the weights (P, with G_a = g of every head at query a).
// Tokens in pairs and k in fours: 8 accumulators, 12 loads per 16 FMAs.
inline void spread(const double *ds, const double *P, const double *Za, const double *Ga, long long d,
                   long long heads, long long visible, double *E) {
  long long b = 0;
  for (; b + 2 <= visible; b += 2) {
    double *E0 = E + b * d * lanes, *E1 = E0 + d * lanes;
    const double *s0 = ds + b * heads, *s1 = s0 + heads, *p0 = P + b * heads, *p1 = p0 + heads;
    long long k = 0;
    for (; k + ways <= d; k += ways) {
      Lanes a[2][ways];
      for (long long q = 0; q < ways; ++q) {
        a[0][q] = load(E0 + (k + q) * lanes);
        a[1][q] = load(E1 + (k + q) * lanes);
      }
      for (long long c = 0; c < heads; c += lanes) {
        const Lanes ds0 = load(s0 + c), ds1 = load(s1 + c), P0 = load(p0 + c), P1 = load(p1 + c);
        for (long long q = 0; q < ways; ++q) {
          const Lanes z = load(Za + (k + q) * heads + c), g = load(Ga + (k + q) * heads + c);
          a[0][q] += ds0 * z; // two FMAs: "+= s z + p g" would be a product, an FMA and an add
          a[0][q] += P0 * g;
          a[1][q] += ds1 * z;
          a[1][q] += P1 * g;
        }
      }
      for (long long q = 0; q < ways; ++q) {
        store(E0 + (k + q) * lanes, a[0][q]);
        store(E1 + (k + q) * lanes, a[1][q]);
      }
    }
    for (; k < d; ++k) {
      Lanes a0 = load(E0 + k * lanes), a1 = load(E1 + k * lanes);
      for (long long c = 0; c < heads; c += lanes) {
        const Lanes z = load(Za + k * heads + c), g = load(Ga + k * heads + c);
        a0 += load(s0 + c) * z;
        a0 += load(p0 + c) * g;
        a1 += load(s1 + c) * z;
        a1 += load(p1 + c) * g;
      }
      store(E0 + k * lanes, a0);
      store(E1 + k * lanes, a1);
    }
  }
  for (; b < visible; ++b)
    for (long long k = 0; k < d; ++k) {
      double *Ebk = E + (b * d + k) * lanes;
      Lanes acc = load(Ebk);
      for (long long c = 0; c < heads; c += lanes) {
        acc += load(ds + b * heads + c) * load(Za + k * heads + c);
        acc += load(P + b * heads + c) * load(Ga + k * heads + c);
      }
      store(Ebk, acc);
    }
}

// dX (n x d) += the lane sums of E, which is zeroed for the next sequence.
inline void fold_spread(double *E, long long n, long long d, double *dX) {
  for (long long t = 0; t < n * d; ++t) {
    double sum = 0.0;
    for (long long j = 0; j < lanes; ++j) sum += E[t * lanes + j];
    dX[t] += sum;
  }
  std::memset(E, 0, sizeof(double) * static_cast<size_t>(n * d * lanes));
}

} // namespace mft::query_tile
