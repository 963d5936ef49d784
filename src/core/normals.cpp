// NormalStream (rng.hpp): 8 xoshiro256** generators in the vector lanes and
// Box-Muller, z0 = r cos(2 pi u2), z1 = r sin(2 pi u2), r = sqrt(-2 log u1),
// with the logarithm and the sine and cosine written here for the lanes.
// Only shifts, bit operations, additions and multiplications of 64-bit
// lanes and double lanes (no comparison: GCC would lower it lane by lane
// where 8 doubles are two registers). The 8 generators are 8 on every ISA,
// so the numbers do not depend on the build's vector width.
//
// log u, u in (0, 1]: u = 2^e m, m in [sqrt(1/2), sqrt 2), s = (m - 1)/(m + 1),
// log m = 2 atanh s = 2 s (1 + s^2 g(s^2)), g of degree 6 interpolating
// (atanh(s)/s - 1)/s^2 at Chebyshev points (error 5e-18).
// sin, cos of 2 pi u: 4 u = k + f, |f| <= 1/2, phi = (pi/2) f in [-pi/4, pi/4],
// sin phi = phi (1 + phi^2 S(phi^2)), cos phi = 1 + phi^2 C(phi^2) (degrees
// 5 and 6, errors 2e-17 and 4e-19), then the quarter turns k by swapping and
// signs.
#include "mft/core/rng.hpp"
#include "xoshiro.hpp"

#include <cstring>

namespace mft {
namespace {

// 8 generators side by side: one AVX-512 register, two AVX2 ones.
constexpr long long width = 8;
typedef double Lanes __attribute__((vector_size(width * sizeof(double))));
typedef unsigned long long LanesUint __attribute__((vector_size(width * sizeof(unsigned long long))));

[[gnu::always_inline]] inline Lanes load(const double *p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(double *p, Lanes v) { std::memcpy(p, &v, sizeof v); }

template <class To, class From> [[gnu::always_inline]] inline To bits(From from) {
  To to;
  static_assert(sizeof to == sizeof from);
  std::memcpy(&to, &from, sizeof to);
  return to;
}

// Uniform in [1, 2) from the top 52 bits, by the exponent of 1.
[[gnu::always_inline]] inline Lanes one_to_two(LanesUint x) {
  return bits<Lanes>((x >> 12) | 0x3ff0000000000000ULL);
}

// log u for u in (0, 1] (normal numbers).
[[gnu::always_inline]] inline Lanes log_unit(Lanes u) {
  const LanesUint b = bits<LanesUint>(u);
  // m in [1, 2) and e; m above sqrt 2 is halved (e + 1): the exponent field
  // of m is 1023, or 1022 after halving.
  const LanesUint mantissa = b & 0x000fffffffffffffULL;
  const LanesUint halve = (0x6a09e667f3bccULL - mantissa) >> 63; // 1 where m > sqrt 2 (the difference wraps)
  const Lanes m = bits<Lanes>(mantissa | (0x3ff0000000000000ULL - (halve << 52)));
  // e as a double: the integer added to the bits of 1.5 2^52, which is then
  // subtracted (no 64-bit integer conversion on AVX2).
  const LanesUint e_bits = (b >> 52) + halve - 1023 + 0x4338000000000000ULL;
  const Lanes e = bits<Lanes>(e_bits) - 6755399441055744.0;
  const Lanes s = (m - 1.0) / (m + 1.0), z = s * s;
  Lanes g = z * 0.07308292712444311 + 0.07665855309105386;
  g = g * z + 0.09091444727837474;
  g = g * z + 0.11111105565129939;
  g = g * z + 0.14285714313001635;
  g = g * z + 0.19999999999949722;
  g = g * z + 0.3333333333333335;
  constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  return e * ln2_hi + ((2.0 * s) * (z * g) + (2.0 * s + e * ln2_lo));
}

// cos and sin of 2 pi u.
[[gnu::always_inline]] inline void cos_sin_turns(Lanes u, Lanes &c, Lanes &s) {
  constexpr double shifter = 6755399441055744.0; // 1.5 * 2^52
  const Lanes y = u * 4.0;
  const Lanes t = y + shifter;
  const LanesUint k = bits<LanesUint>(t); // the low bits: k = round(4 u)
  const Lanes phi = (y - (t - shifter)) * 1.5707963267948966;
  const Lanes z = phi * phi;
  Lanes p = z * 1.5918115263265974e-10 - 2.505113165023518e-08;
  p = p * z + 2.7557316101617874e-06;
  p = p * z - 0.00019841269836756774;
  p = p * z + 0.008333333333330948;
  p = p * z - 0.16666666666666666;
  const Lanes sin_phi = phi + phi * (z * p);
  Lanes q = z * -1.1367988423294987e-11 + 2.0875886564482672e-09;
  q = q * z - 2.755731556524682e-07;
  q = q * z + 2.4801587293690305e-05;
  q = q * z - 0.001388888888888077;
  q = q * z + 0.04166666666666664;
  q = q * z - 0.5;
  const Lanes cos_phi = 1.0 + z * q;
  // theta = k pi/2 + phi: odd k swaps sine and cosine; the signs follow
  // (cos, sin) -> (-sin, cos) per quarter turn.
  const LanesUint odd = -(k & 1);
  const LanesUint cb = bits<LanesUint>(cos_phi), sb = bits<LanesUint>(sin_phi);
  const LanesUint c_bits = (cb & ~odd) | (sb & odd), s_bits = (sb & ~odd) | (cb & odd);
  // cos theta: negative for k = 1, 2 (mod 4); sin theta: for k = 2, 3.
  const LanesUint c_sign = (((k + 1) >> 1) & 1) << 63, s_sign = ((k >> 1) & 1) << 63;
  c = bits<Lanes>(c_bits ^ c_sign);
  s = bits<Lanes>(s_bits ^ s_sign);
}

} // namespace

void NormalStream::fill(double *out, long long count) {
  LanesUint s[4];
  for (int k = 0; k < 4; ++k) std::memcpy(&s[k], s_[k], sizeof s[k]);
  double block[2 * width];
  for (long long at = 0; at < count; at += 2 * width) {
    const Lanes u1 = 2.0 - one_to_two(xoshiro::next(s)); // (0, 1]: log is finite
    const Lanes u2 = one_to_two(xoshiro::next(s)) - 1.0; // [0, 1)
    alignas(64) double r2[width];
    store(r2, -2.0 * log_unit(u1));
    for (long long j = 0; j < width; ++j) r2[j] = __builtin_sqrt(r2[j]); // vsqrtpd: no errno (CMakeLists.txt)
    const Lanes r = load(r2);
    Lanes c, sn;
    cos_sin_turns(u2, c, sn);
    const long long left = count - at;
    if (left >= 2 * width) {
      store(out + at, r * c);
      store(out + at + width, r * sn);
    } else {
      store(block, r * c);
      store(block + width, r * sn);
      std::memcpy(out + at, block, sizeof(double) * static_cast<size_t>(left));
    }
  }
  for (int k = 0; k < 4; ++k) std::memcpy(s_[k], &s[k], sizeof s[k]);
}

} // namespace mft
