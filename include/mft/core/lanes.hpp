#pragma once
// A vector of 8 doubles through GCC's vector extension (a compiler feature,
// also in Clang; no library): one AVX-512 register, two AVX2 registers or
// four SSE2 ones, from one loop body. The kernels that vectorise across heads
// or score rows use it where the auto-vectoriser would not keep values in
// registers.
#include <cstring>

namespace mft {

constexpr long long lanes = 8;
typedef double Lanes __attribute__((vector_size(lanes * sizeof(double))));
typedef long long LanesInt __attribute__((vector_size(lanes * sizeof(long long))));

inline Lanes load(const double *p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(double *p, Lanes v) { std::memcpy(p, &v, sizeof v); }

} // namespace mft
