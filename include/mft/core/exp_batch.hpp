#pragma once
// exp over an array of non-positive arguments, 8 at a time (lanes.hpp); the
// max-subtracted softmax only needs x <= 0.
//
// With AVX-512:
// x = (16 k + j) ln2/16 + r with |r| <= ln2/32: exp(x) = 2^k 2^(j/16) exp(r),
// 2^(j/16) from a table of 16 (one two-register permute on AVX-512), exp(r)
// by its Taylor polynomial of degree 7 (truncation < 2e-18 relative), 2^k
// added to the exponent bits. k and j come from the "add 1.5 * 2^52"
// rounding trick, which needs no double-to-integer conversion. Arguments
// below -708 give 0 (std::exp gives a subnormal there, below 1e-307,
// irrelevant next to the row maximum's 1). Accuracy against std::exp: a
// few ulp (checked in the tests).
#include "mft/core/lanes.hpp"

#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace mft {

#ifdef __AVX512F__
[[gnu::always_inline]] inline Lanes exp_nonpositive(Lanes x) {
  constexpr double sixteen_over_ln2 = 23.083120654223414;
  constexpr double ln2_16_hi = 0.04332169877307024; // ln2/16 in 32 bits: k ln2_16_hi is exact
  constexpr double ln2_16_lo = 1.1926343307941173e-11;
  constexpr double shifter = 6755399441055744.0; // 1.5 * 2^52
  // 2^(j/16), correctly rounded.
  constexpr Lanes low = {1.0,
                         1.0442737824274138,
                         1.0905077326652577,
                         1.1387886347566916,
                         1.189207115002721,
                         1.241857812073484,
                         1.2968395546510096,
                         1.3542555469368927};
  constexpr Lanes high = {1.4142135623730951, 1.4768261459394993, 1.5422108254079407, 1.6104903319492543,
                          1.681792830507429,  1.7562521603732995, 1.8340080864093424, 1.9152065613971474};
  const LanesInt tiny = x < -708.0;
  const Lanes v = tiny ? Lanes{} - 708.0 : x;
  const Lanes t = v * sixteen_over_ln2 + shifter;
  const Lanes kf = t - shifter;
  const Lanes r = (v - kf * ln2_16_hi) - kf * ln2_16_lo;
  Lanes p = r * (1.0 / 5040) + 1.0 / 720;
  p = p * r + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  LanesInt k16, shift_bits;
  std::memcpy(&k16, &t, sizeof t);
  const Lanes s = Lanes{} + shifter;
  std::memcpy(&shift_bits, &s, sizeof s);
  k16 -= shift_bits; // 16 k + j, exactly
  const LanesInt j = k16 & 15;
  const Lanes table = __builtin_shuffle(low, high, j); // vpermi2pd: one instruction
  LanesInt scale_bits;
  std::memcpy(&scale_bits, &table, sizeof table);
  scale_bits += (k16 - j) << 48; // 2^k into the exponent: (16 k) << 48 = k << 52, no arithmetic shift
  Lanes scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return tiny ? Lanes{} : p * scale;
}

#else
// Without AVX-512 a permute of 16 doubles is lowered lane by lane, and AVX2
// has no 64-bit arithmetic shift: x = k ln2 + r, |r| <= ln2/2, exp(r) by its
// Taylor polynomial of degree 13 (truncation < 2e-16 relative), written
// per lane for the auto-vectoriser.
[[gnu::always_inline]] inline Lanes exp_nonpositive(Lanes x) {
  constexpr double log2e = 1.4426950408889634;
  constexpr double ln2_hi = 6.93147180369123816490e-01; // exact in 32 bits
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  constexpr double shifter = 6755399441055744.0; // 1.5 * 2^52
  Lanes y;
  for (long long q = 0; q < lanes; ++q) {
    const double v = x[q] < -708.0 ? -708.0 : x[q];
    const double t = v * log2e + shifter;
    const double k = t - shifter;
    const double r = (v - k * ln2_hi) - k * ln2_lo;
    double p = 1.0 / 6227020800.0;
    for (double c : {1.0 / 479001600, 1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320,
                     1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0})
      p = p * r + c;
    std::int64_t bits_t, bits_s;
    std::memcpy(&bits_t, &t, sizeof t);
    std::memcpy(&bits_s, &shifter, sizeof shifter);
    const std::int64_t scale_bits = (bits_t - bits_s + 1023) << 52;
    double scale;
    std::memcpy(&scale, &scale_bits, sizeof scale);
    y[q] = x[q] < -708.0 ? 0.0 : p * scale;
  }
  return y;
}
#endif

// y[i] = exp(x[i]) for x[i] <= 0; x and y may be the same array.
inline void exp_nonpositive(const double *x, double *y, long long count) {
  long long i = 0;
  for (; i + lanes <= count; i += lanes) store(y + i, exp_nonpositive(load(x + i)));
  if (i < count) {
    double tail[lanes] = {};
    std::memcpy(tail, x + i, sizeof(double) * static_cast<size_t>(count - i));
    store(tail, exp_nonpositive(load(tail)));
    std::memcpy(y + i, tail, sizeof(double) * static_cast<size_t>(count - i));
  }
}

} // namespace mft
