#pragma once
// The per-query-token loops of the attention kernel (attention.cpp), for one
// sequence's tokens X (n x d) and one query token a, across all of a slice's
// heads at once. Heads are the vector lanes, the head count padded to a
// multiple of `lanes` (padded heads have B = 0 and V = 0, so they add
// nothing), and every loop over heads is a whole number of `Lanes` vectors
// (lanes.hpp) kept in registers. Arrays over tokens b are laid out [b][m];
// arrays over the token dimension k (Z_a, G_a, Y_a, T_a) are packed
// [m / lanes][k][m % lanes] (at() below), so that the d vectors of a head
// block lie at fixed offsets from one pointer: a loop over k needs one
// address register per array, not one per k.
//
//   scores   S[b][m] = sum_k x_b[k] Z_a[k][m]       (Z_a[k][m] = (x_a^T B_m)[k])
//   mix      Y_a[k][m] = sum_b P[b][m] x_b[k]        (ybar_{a,m}; also T_a from ds)
//   spread   E[b][k] += sum_m ds[b][m] Z_a[k][m] + P[b][m] G_a[k][m]
//            (the VJP's token terms through the scores and the weights, summed
//             over heads at the end of the sequence by fold_spread)
//
// Every loop takes the token dimension as Dim<D>: D > 0 fixes d = D at
// compile time, so the loops over k unroll into registers with no loop
// overhead (about 1.3x faster at d = 8); D = 0 reads d at run time. The
// kernel instantiates d = 1 ... 16 (with_token_dim) and runs larger d with
// D = 0: one code path, two ways of knowing d.
//
// Every loop is a template on the element type R: double, or float for
// run.precision = mixed, where a register holds twice the lanes (16 heads
// with AVX-512) and `lanes` below means lanes_of<R>. The sums run in R: over
// n tokens or d components, and in spread over a sequence's query tokens and
// head blocks (the longest, folded into double by fold_spread).
#include "mft/core/lanes.hpp"

#include <cstring>
#include <type_traits>

namespace mft::query_tile {

// The vector of heads [c, c + lanes) at component k of a packed array.
template <class R> inline const R *at(const R *A, long long k, long long c, long long d) {
  return A + c * d + k * lanes_of<R>;
}
template <class R> inline R *at(R *A, long long k, long long c, long long d) {
  return A + c * d + k * lanes_of<R>;
}
// The index of (k, head m) in a packed array.
template <class R> inline long long packed_index(long long k, long long m, long long d) {
  constexpr long long lanes = lanes_of<R>;
  return (m - m % lanes) * d + k * lanes + m % lanes;
}

template <long long D> struct Dim {
  long long runtime; // d when D = 0
  constexpr long long operator()() const { return D > 0 ? D : runtime; }
};

// Calls f(Dim<D>{d}) with D = d for d in 1 ... kFixedDims, else D = 0.
constexpr long long kFixedDims = 16;
template <class F, long long D = 1> void with_token_dim(long long d, F &&f) {
  if constexpr (D > kFixedDims) {
    f(Dim<0>{d});
  } else {
    if (d == D) return f(Dim<D>{d});
    with_token_dim<F, D + 1>(d, static_cast<F &&>(f));
  }
}

// Each loop below keeps independent accumulators so that FMA latency
// overlaps: tokens or k in groups (`ways`), and heads in groups of G vectors
// (G = 4, 2, 1: as many as the heads fill), which share the token reads (one
// broadcast of x_b[k] feeds G FMAs). for_head_groups runs a loop body
// templated on G over the heads [0, heads) in such groups.
constexpr long long ways = 4;
// Up to 4 groups (16 accumulators) with AVX-512's 32 vector registers, 2
// with AVX2's 16 (8 accumulators).
constexpr int kGroups = kVectorBytes >= 64 ? 4 : 2;

template <class R, int MaxG = kGroups, class Body> void for_head_groups(long long heads, Body &&body) {
  constexpr long long lanes = lanes_of<R>;
  long long c = 0;
  if constexpr (MaxG >= 4)
    for (; c + 4 * lanes <= heads; c += 4 * lanes) body(std::integral_constant<int, 4>{}, c);
  for (; c + 2 * lanes <= heads; c += 2 * lanes) body(std::integral_constant<int, 2>{}, c);
  for (; c < heads; c += lanes) body(std::integral_constant<int, 1>{}, c);
}

// S (visible x heads) = scores of query a against tokens b < visible, and,
// when column_max is not null, column_max[m] = max_b S[b][m] (the softmax's
// shift, found while the scores are in registers).
template <class R, long long D>
inline void scores(const R *X, Dim<D> dim, const R *Za, long long heads, long long visible, R *S,
                   R *column_max) {
  const long long d = dim();
  constexpr long long lanes = lanes_of<R>; // the R lanes of a register
  using Lanes = LanesOf<R>;
  for_head_groups<R>(heads, [&](auto group, long long c) {
    constexpr int G = decltype(group)::value;
    constexpr long long B = G >= 4 ? 2 : ways; // tokens at once: B G accumulators
    Lanes mx[G];
    for (int g = 0; g < G; ++g) mx[g] = Lanes{} - static_cast<R>(__builtin_inf());
    const auto keep = [&](long long b, int g, Lanes value) {
      store(S + b * heads + c + g * lanes, value);
      mx[g] = lane_max(value, mx[g]);
    };
    long long b = 0;
    for (; b + B <= visible; b += B) {
      const R *x = X + b * d;
      Lanes z[G], a[B][G];
      for (int g = 0; g < G; ++g) z[g] = load(at(Za, 0, c + g * lanes, d));
      for (long long q = 0; q < B; ++q)
        for (int g = 0; g < G; ++g) a[q][g] = x[q * d] * z[g];
      for (long long k = 1; k < d; ++k) {
        for (int g = 0; g < G; ++g) z[g] = load(at(Za, k, c + g * lanes, d));
        for (long long q = 0; q < B; ++q)
          for (int g = 0; g < G; ++g) a[q][g] += x[q * d + k] * z[g];
      }
      for (long long q = 0; q < B; ++q)
        for (int g = 0; g < G; ++g) keep(b + q, g, a[q][g]);
    }
    for (; b < visible; ++b) {
      const R *x = X + b * d;
      for (int g = 0; g < G; ++g) {
        Lanes acc = x[0] * load(at(Za, 0, c + g * lanes, d));
        for (long long k = 1; k < d; ++k) acc += x[k] * load(at(Za, k, c + g * lanes, d));
        keep(b, g, acc);
      }
    }
    if (column_max)
      for (int g = 0; g < G; ++g) store(column_max + c + g * lanes, mx[g]);
  });
}

// Ya (d x heads) = sum_b P[b][m] x_b[k]: the weighted token means of query a
// (visible >= 1: a attends to itself), for P = W scale (score_map.hpp): the
// column factors are applied as Ya is stored.
template <class R, long long D>
inline void mix(const R *X, Dim<D> dim, const R *P, const R *scale, long long heads,
                long long visible, R *Ya) {
  const long long d = dim();
  constexpr long long lanes = lanes_of<R>; // the R lanes of a register
  using Lanes = LanesOf<R>;
  for_head_groups<R>(heads, [&](auto group, long long c) {
    constexpr int G = decltype(group)::value;
    long long k = 0;
    for (; k + ways <= d; k += ways) {
      Lanes p[G], a[ways][G];
      for (int g = 0; g < G; ++g) p[g] = load(P + c + g * lanes);
      for (long long q = 0; q < ways; ++q)
        for (int g = 0; g < G; ++g) a[q][g] = X[k + q] * p[g];
      for (long long b = 1; b < visible; ++b) {
        const R *x = X + b * d + k;
        for (int g = 0; g < G; ++g) p[g] = load(P + b * heads + c + g * lanes);
        for (long long q = 0; q < ways; ++q)
          for (int g = 0; g < G; ++g) a[q][g] += x[q] * p[g];
      }
      for (int g = 0; g < G; ++g) p[g] = load(scale + c + g * lanes);
      for (long long q = 0; q < ways; ++q)
        for (int g = 0; g < G; ++g) store(at(Ya, k + q, c + g * lanes, d), a[q][g] * p[g]);
    }
    if constexpr (D == 0 || D % ways != 0) // the k left over (GCC warns of the dead loop otherwise)
      for (; k < d; ++k)
        for (int g = 0; g < G; ++g) {
          Lanes acc = X[k] * load(P + c + g * lanes);
          for (long long b = 1; b < visible; ++b) acc += X[b * d + k] * load(P + b * heads + c + g * lanes);
          store(at(Ya, k, c + g * lanes, d), acc * load(scale + c + g * lanes));
        }
  });
}

// The VJP's two score-shaped products in one pass, sharing the token reads:
// S = scores against Z_a (then the weights), with their column maxima as
// scores() gives them, and T[b][m] = <g_{a,m}, x_b>.
template <class R, long long D>
inline void scores_pair(const R *X, Dim<D> dim, const R *Za, const R *Ga, long long heads,
                        long long visible, R *S, R *T, R *column_max) {
  const long long d = dim();
  constexpr long long lanes = lanes_of<R>; // the R lanes of a register
  using Lanes = LanesOf<R>;
  for_head_groups<R, kGroups / 2>(heads, [&](auto group, long long c) {
    constexpr int G = decltype(group)::value;
    constexpr long long B = 4; // tokens at once: 2 B G accumulators
    Lanes mx[G];
    for (int g = 0; g < G; ++g) mx[g] = Lanes{} - static_cast<R>(__builtin_inf());
    const auto keep = [&](long long b, int g, Lanes score, Lanes t) {
      store(S + b * heads + c + g * lanes, score);
      store(T + b * heads + c + g * lanes, t);
      mx[g] = lane_max(score, mx[g]);
    };
    long long b = 0;
    for (; b + B <= visible; b += B) {
      const R *x = X + b * d;
      Lanes z[G], u[G], s[B][G], t[B][G];
      for (int g = 0; g < G; ++g) z[g] = load(at(Za, 0, c + g * lanes, d)), u[g] = load(at(Ga, 0, c + g * lanes, d));
      for (long long q = 0; q < B; ++q)
        for (int g = 0; g < G; ++g) s[q][g] = x[q * d] * z[g], t[q][g] = x[q * d] * u[g];
      for (long long k = 1; k < d; ++k) {
        for (int g = 0; g < G; ++g) z[g] = load(at(Za, k, c + g * lanes, d)), u[g] = load(at(Ga, k, c + g * lanes, d));
        for (long long q = 0; q < B; ++q)
          for (int g = 0; g < G; ++g) {
            s[q][g] += x[q * d + k] * z[g];
            t[q][g] += x[q * d + k] * u[g];
          }
      }
      for (long long q = 0; q < B; ++q)
        for (int g = 0; g < G; ++g) keep(b + q, g, s[q][g], t[q][g]);
    }
    for (; b < visible; ++b) {
      const R *x = X + b * d;
      for (int g = 0; g < G; ++g) {
        Lanes s0 = x[0] * load(at(Za, 0, c + g * lanes, d)), t0 = x[0] * load(at(Ga, 0, c + g * lanes, d));
        for (long long k = 1; k < d; ++k) {
          s0 += x[k] * load(at(Za, k, c + g * lanes, d));
          t0 += x[k] * load(at(Ga, k, c + g * lanes, d));
        }
        keep(b, g, s0, t0);
      }
    }
    if (column_max)
      for (int g = 0; g < G; ++g) store(column_max + c + g * lanes, mx[g]);
  });
}

// The VJP's two mixes in one pass: Ya of the weights P = W scale (the
// column factors applied as Ya is stored) and Ta of the score cotangents
// ds, sharing the token reads.
template <class R, long long D>
inline void mix_pair(const R *X, Dim<D> dim, const R *W, const R *scale, const R *ds,
                     long long heads, long long visible, R *Ya, R *Ta) {
  const long long d = dim();
  constexpr long long lanes = lanes_of<R>; // the R lanes of a register
  using Lanes = LanesOf<R>;
  for_head_groups<R, kGroups / 2>(heads, [&](auto group, long long c) {
    constexpr int G = decltype(group)::value;
    constexpr long long K = ways; // k at once: 2 K G accumulators
    long long k = 0;
    const auto accumulate = [&](long long k0, auto width) {
      constexpr long long K0 = decltype(width)::value;
      Lanes p[G], e[G], y[K0][G], t[K0][G];
      for (int g = 0; g < G; ++g) p[g] = load(W + c + g * lanes), e[g] = load(ds + c + g * lanes);
      for (long long q = 0; q < K0; ++q)
        for (int g = 0; g < G; ++g) y[q][g] = X[k0 + q] * p[g], t[q][g] = X[k0 + q] * e[g];
      for (long long b = 1; b < visible; ++b) {
        const R *x = X + b * d + k0;
        for (int g = 0; g < G; ++g) p[g] = load(W + b * heads + c + g * lanes), e[g] = load(ds + b * heads + c + g * lanes);
        for (long long q = 0; q < K0; ++q)
          for (int g = 0; g < G; ++g) {
            y[q][g] += x[q] * p[g];
            t[q][g] += x[q] * e[g];
          }
      }
      for (int g = 0; g < G; ++g) p[g] = load(scale + c + g * lanes);
      for (long long q = 0; q < K0; ++q)
        for (int g = 0; g < G; ++g) {
          store(at(Ya, k0 + q, c + g * lanes, d), y[q][g] * p[g]);
          store(at(Ta, k0 + q, c + g * lanes, d), t[q][g]);
        }
    };
    for (; k + K <= d; k += K) accumulate(k, std::integral_constant<long long, K>{});
    for (; k < d; ++k) accumulate(k, std::integral_constant<long long, 1>{});
  });
}

// E (n x d x lanes) += the token cotangents through the scores (ds, with
// Z_a) and through the weights (P = W scale, with G_a = g of every head at
// query a). Tokens in pairs and k in eights (with AVX-512's registers), then
// fours, then ones: up to 16 accumulators, 20 loads per 32 FMAs.
template <class R, long long D>
inline void spread(const R *ds, const R *W, const R *scale, const R *Za, const R *Ga,
                   Dim<D> dim, long long heads, long long visible, R *E) {
  const long long d = dim();
  constexpr long long lanes = lanes_of<R>; // the R lanes of a register
  using Lanes = LanesOf<R>;
  // Tokens [b, b + B) and k [k0, k0 + K).
  const auto block = [&](long long b, long long k0, auto tokens, auto width) {
    constexpr long long B = decltype(tokens)::value, K = decltype(width)::value;
    Lanes a[B][K];
    for (long long q = 0; q < B; ++q)
      for (long long r = 0; r < K; ++r) a[q][r] = load(E + ((b + q) * d + k0 + r) * lanes);
    // One pointer per array, bumped per head block: the loads of Z_a and
    // G_a are fixed offsets from it (an index per k would spill the
    // address registers).
    const R *z_block = at(Za, k0, 0, d), *g_block = at(Ga, k0, 0, d);
    const R *ds_b = ds + b * heads, *w_b = W + b * heads;
    for (long long c = 0; c < heads; c += lanes, z_block += d * lanes, g_block += d * lanes) {
      Lanes s[B], p[B];
      const Lanes f = load(scale + c);
      for (long long q = 0; q < B; ++q) s[q] = load(ds_b + q * heads + c), p[q] = load(w_b + q * heads + c) * f;
      for (long long r = 0; r < K; ++r) {
        const Lanes z = load(z_block + r * lanes), g = load(g_block + r * lanes);
        for (long long q = 0; q < B; ++q) {
          a[q][r] += s[q] * z; // two FMAs: "+= s z + p g" would be a product, an FMA and an add
          a[q][r] += p[q] * g;
        }
      }
    }
    for (long long q = 0; q < B; ++q)
      for (long long r = 0; r < K; ++r) store(E + ((b + q) * d + k0 + r) * lanes, a[q][r]);
  };
  const auto tokens = [&](long long b, auto count) {
    long long k = 0;
    if constexpr (kVectorBytes >= 64) // 16 accumulators need AVX-512's 32 registers
      for (; k + 8 <= d; k += 8) block(b, k, count, std::integral_constant<long long, 8>{});
    for (; k + 4 <= d; k += 4) block(b, k, count, std::integral_constant<long long, 4>{});
    if constexpr (D == 0 || D % 4 != 0) // (GCC warns of the dead loop otherwise)
      for (; k < d; ++k) block(b, k, count, std::integral_constant<long long, 1>{});
  };
  long long b = 0;
  for (; b + 2 <= visible; b += 2) tokens(b, std::integral_constant<long long, 2>{});
  for (; b < visible; ++b) tokens(b, std::integral_constant<long long, 1>{});
}

// dX (n x d) += the lane sums of E, which is zeroed for the next sequence
// (summed in dX's type: double in either precision).
template <class R, class Out> inline void fold_spread(R *E, long long n, long long d, Out *dX) {
  constexpr long long lanes = lanes_of<R>;
  for (long long t = 0; t < n * d; ++t) {
    Out sum = 0;
    for (long long j = 0; j < lanes; ++j) sum += E[t * lanes + j];
    dX[t] += sum;
  }
  std::memset(E, 0, sizeof(R) * static_cast<size_t>(n * d * lanes));
}

} // namespace mft::query_tile
