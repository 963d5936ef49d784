#pragma once
// exp over an array of non-positive arguments, written so the compiler
// vectorises it (the max-subtracted softmax only needs x <= 0).
//
// x = k ln2 + r with |r| <= ln2/2; exp(r) by its Taylor polynomial of degree
// 13 (truncation < 2e-16 relative), 2^k put into the exponent bits. k comes
// from the "add 1.5 * 2^52" rounding trick, which needs no double-to-integer
// conversion instruction. Arguments below -708 give 0 (std::exp gives a
// subnormal there, below 1e-307, irrelevant next to the row maximum's 1).
// Accuracy against std::exp: a few ulp (checked in the tests).
#include <cstdint>
#include <cstring>

namespace mft {

inline void exp_nonpositive(const double *x, double *y, long long count) {
  constexpr double log2e = 1.4426950408889634;
  constexpr double ln2_hi = 6.93147180369123816490e-01; // exact in 32 bits
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  constexpr double shifter = 6755399441055744.0;         // 1.5 * 2^52
  constexpr double c[14] = {1.0,
                            1.0,
                            1.0 / 2,
                            1.0 / 6,
                            1.0 / 24,
                            1.0 / 120,
                            1.0 / 720,
                            1.0 / 5040,
                            1.0 / 40320,
                            1.0 / 362880,
                            1.0 / 3628800,
                            1.0 / 39916800,
                            1.0 / 479001600,
                            1.0 / 6227020800.0};
#pragma GCC ivdep
  for (long long i = 0; i < count; ++i) {
    double v = x[i];
    const bool tiny = v < -708.0;
    v = tiny ? -708.0 : v;
    const double t = v * log2e + shifter;
    const double k = t - shifter;
    const double r = (v - k * ln2_hi) - k * ln2_lo;
    double p = c[13];
    p = p * r + c[12];
    p = p * r + c[11];
    p = p * r + c[10];
    p = p * r + c[9];
    p = p * r + c[8];
    p = p * r + c[7];
    p = p * r + c[6];
    p = p * r + c[5];
    p = p * r + c[4];
    p = p * r + c[3];
    p = p * r + c[2];
    p = p * r + c[1];
    p = p * r + c[0];
    std::int64_t bits_t, bits_s;
    std::memcpy(&bits_t, &t, sizeof t);
    std::memcpy(&bits_s, &shifter, sizeof shifter);
    const std::int64_t scale_bits = (bits_t - bits_s + 1023) << 52;
    double scale;
    std::memcpy(&scale, &scale_bits, sizeof scale);
    y[i] = tiny ? 0.0 : p * scale;
  }
}

} // namespace mft
