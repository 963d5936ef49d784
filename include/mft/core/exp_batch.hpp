#pragma once
// exp over the non-positive arguments of a vector (lanes.hpp) of doubles, or
// of floats (at the end): the max-subtracted softmax and the sigmoid only
// need x <= 0. Accuracy of the double version against std::exp: under 4 ulp
// relative for x in [-708, 0] (tests/test_attention.cpp); 0 for -inf.
// Below -708 the AVX-512 path gives std::exp's subnormals (0 below -745),
// the other 0 (instead of numbers under 3e-308, nothing next to a softmax
// row's largest weight, 1).
//
// Both paths reduce x to r with |r| <= ln2/32 (AVX-512) or ln2/2
// (otherwise) by Cody and Waite's two-part ln2, and evaluate
// exp(r) = 1 + r (1 + r q(r)), q of degree 4 (resp. 9) interpolating
// (e^r - 1 - r)/r^2 at Chebyshev points (near minimax): truncation below
// 3e-17 relative in both, so the ulps left are the rounding of the
// operations after the reduction.
//
// AVX-512: x = (16 k + j) ln2/16 + r, exp(x) = 2^k 2^(j/16) exp(r).
// t = x 16/ln2 + 1.5 2^52 rounds 16 k + j into t's low mantissa bits, which
// vpermi2pd reads as the index of 2^(j/16) in a 16-entry table (it uses the
// low 4 bits alone), and vscalefpd multiplies by 2^floor((16 k + j)/16) =
// 2^k with the underflow to subnormals and 0 done right: 14 operations per
// 8 values, no integer arithmetic.
// Otherwise (AVX2, SSE, other ISAs; GCC's vector extension): x = k ln2 + r,
// 2^k put into the exponent bits (k from the same rounding trick): about 20
// vector operations per 4 (AVX2) or 2 (SSE2) values.
#include "mft/core/lanes.hpp"

#include <cstring>

#ifdef __AVX512F__
#include <immintrin.h>
#endif

namespace mft {

namespace exp_detail {
constexpr double shifter = 6755399441055744.0; // 1.5 * 2^52: adding it rounds to an integer
// Below this exp(x) < 2^-1076 rounds to 0; the clamp keeps k in range.
constexpr double floor_argument = -746.0;
} // namespace exp_detail

#ifdef __AVX512F__
[[gnu::always_inline]] inline Lanes exp_nonpositive(Lanes x) {
  using namespace exp_detail;
  constexpr double sixteen_over_ln2 = 23.083120654223414;
  // ln2/16 in 32 bits (times 16: exact), so that (k'/16) ln2_hi is exact.
  constexpr double ln2_hi = 16 * 0.04332169877307024, ln2_lo = 16 * 1.1926343307941173e-11;
  // 2^(j/16), correctly rounded.
  const __m512d low = _mm512_setr_pd(1.0, 1.0442737824274138, 1.0905077326652577, 1.1387886347566916,
                                     1.189207115002721, 1.241857812073484, 1.2968395546510096, 1.3542555469368927);
  const __m512d high = _mm512_setr_pd(1.4142135623730951, 1.4768261459394993, 1.5422108254079407,
                                      1.6104903319492543, 1.681792830507429, 1.7562521603732995,
                                      1.8340080864093424, 1.9152065613971474);
  // Not below the floor, in one vmaxpd (it returns its second operand, x,
  // when either is a NaN: a NaN passes through). The zero-masking forms
  // with every lane selected: the plain intrinsics' undefined pass-through
  // operand trips GCC 12's -Wmaybe-uninitialized.
  const __m512d v =
      _mm512_maskz_max_pd(__mmask8(0xff), _mm512_set1_pd(floor_argument), reinterpret_cast<__m512d>(x));
  const __m512d t = _mm512_fmadd_pd(v, _mm512_set1_pd(sixteen_over_ln2), _mm512_set1_pd(shifter));
  // k' / 16 = (16 k + j) / 16, exactly, in one operation: t / 16 - shifter / 16.
  const __m512d kf16 = _mm512_fmadd_pd(t, _mm512_set1_pd(1.0 / 16), _mm512_set1_pd(-shifter / 16));
  __m512d r = _mm512_fnmadd_pd(kf16, _mm512_set1_pd(ln2_hi), v);
  r = _mm512_fnmadd_pd(kf16, _mm512_set1_pd(ln2_lo), r);
  __m512d q = _mm512_fmadd_pd(_mm512_set1_pd(0.0013889034377693012), r, _mm512_set1_pd(0.008333449724528355));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(0.041666666664959766));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(0.16666666665301144));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(0.5));
  const __m512d p = _mm512_fmadd_pd(q, r, _mm512_set1_pd(1.0)); // exp(r) = 1 + r p
  const __m512d table = _mm512_permutex2var_pd(low, _mm512_castpd_si512(t), high);
  // 2^(j/16) exp(r) = table + (table r) p, the last operation adding the larger term.
  const __m512d scaled = _mm512_fmadd_pd(_mm512_mul_pd(table, r), p, table);
  return reinterpret_cast<Lanes>(
      _mm512_maskz_scalef_pd(__mmask8(0xff), scaled, kf16));
}

#else
[[gnu::always_inline]] inline Lanes exp_nonpositive(Lanes x) {
  using namespace exp_detail;
  constexpr double log2e = 1.4426950408889634;
  constexpr double ln2_hi = 6.93147180369123816490e-01; // ln2 in 32 bits: k ln2_hi is exact
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  constexpr double lowest = -708.0; // 2^k stays a normal number above it
  const LanesInt below = x < lowest; // all ones where x < lowest (false for NaN)
  const Lanes v = below ? Lanes{} + lowest : x;
  const Lanes t = v * log2e + shifter;
  const Lanes k = t - shifter;
  const Lanes r = (v - k * ln2_hi) - k * ln2_lo;
  Lanes q = r * 2.510038549551032e-08 + 2.7620088445409746e-07;
  q = q * r + 2.7557268459997064e-06;
  q = q * r + 2.4801521295954376e-05;
  q = q * r + 0.00019841269863053618;
  q = q * r + 0.0013888888917213717;
  q = q * r + 0.008333333333330062;
  q = q * r + 0.04166666666662413;
  q = q * r + 0.16666666666666669;
  q = q * r + 0.5000000000000001;
  const Lanes p = (q * r + 1.0) * r + 1.0;
  // 2^k into the exponent bits: t's integer bits minus the shifter's are k;
  // 0 below lowest.
  LanesInt bits, shift_bits;
  std::memcpy(&bits, &t, sizeof t);
  const Lanes s = Lanes{} + shifter;
  std::memcpy(&shift_bits, &s, sizeof s);
  const LanesInt scale_bits = ((bits - shift_bits + 1023) << 52) & ~below;
  Lanes scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return p * scale;
}
#endif

// float (run.precision = mixed), either ISA: x = k ln2 + r, |r| <= ln2/2,
// exp(r) by its Taylor polynomial of degree 7 (truncation under 1e-8
// relative, a sixth of float's half ulp), ln2 in Cody and Waite's two
// parts (0.693359375 has 9 bits: k ln2_hi is exact), 2^k into the exponent
// bits. 0 below -87, where 2^k would leave the normal floats (weights under
// 2e-38, nothing beside a softmax row's largest, 1). Under 4 float ulp
// relative over [-87, 0] (tests/test_precision.cpp).
[[gnu::always_inline]] inline LanesOf<float> exp_nonpositive(LanesOf<float> x) {
  using V = LanesOf<float>;
  using Mask = VectorOf<float>::mask;
  constexpr float shifter = 12582912.0f; // 1.5 * 2^23: adding it rounds to an integer
  constexpr float log2e = 1.44269504f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
  constexpr float lowest = -87.0f;
  const Mask below = x < lowest; // all ones where x < lowest (false for NaN)
  const V v = below ? V{} + lowest : x;
  const V t = v * log2e + shifter;
  const V k = t - shifter;
  const V r = (v - k * ln2_hi) - k * ln2_lo;
  V q = r * (1.0f / 5040) + 1.0f / 720;
  q = q * r + 1.0f / 120;
  q = q * r + 1.0f / 24;
  q = q * r + 1.0f / 6;
  q = q * r + 0.5f;
  const V p = (q * r + 1.0f) * r + 1.0f;
  // The exponent's arithmetic unsigned: a NaN lane's bits must not overflow.
  typedef unsigned Bits __attribute__((vector_size(kVectorBytes)));
  Bits bits, shift_bits, below_bits;
  std::memcpy(&bits, &t, sizeof t);
  const V s = V{} + shifter;
  std::memcpy(&shift_bits, &s, sizeof s);
  std::memcpy(&below_bits, &below, sizeof below);
  const Bits scale_bits = ((bits - shift_bits + 127u) << 23) & ~below_bits;
  V scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return p * scale;
}

// y[i] = exp(x[i]) for x[i] <= 0; x and y may be the same array.
template <class R> inline void exp_nonpositive(const R *x, R *y, long long count) {
  constexpr long long width = lanes_of<R>;
  long long i = 0;
  for (; i + width <= count; i += width) store(y + i, exp_nonpositive(load(x + i)));
  if (i < count) {
    R tail[width] = {};
    std::memcpy(tail, x + i, sizeof(R) * static_cast<size_t>(count - i));
    store(tail, exp_nonpositive(load(tail)));
    std::memcpy(y + i, tail, sizeof(R) * static_cast<size_t>(count - i));
  }
}

} // namespace mft
