#pragma once
// A vector of 8 doubles through GCC's vector extension (a compiler feature,
// also in Clang; no library): one AVX-512 register, two AVX2 registers or
// four SSE2 ones, from one loop body. The kernels that vectorise across heads
// or score rows use it where the auto-vectoriser would not keep values in
// registers.
#include <cstddef>
#include <cstring>
#include <new>
#include <vector>

namespace mft {

constexpr long long lanes = 8;
typedef double Lanes __attribute__((vector_size(lanes * sizeof(double))));
typedef long long LanesInt __attribute__((vector_size(lanes * sizeof(long long))));

// Always inlined: a Lanes passed by value to a real call goes through memory
// where the ISA has no 64-byte registers.
[[gnu::always_inline]] inline Lanes load(const double *p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(double *p, Lanes v) { std::memcpy(p, &v, sizeof v); }

// Storage whose every Lanes-sized block starts a cache line: a 64-byte load
// across two lines costs two.
template <class T> struct LineAligned {
  using value_type = T;
  static constexpr std::align_val_t line{64};
  LineAligned() = default;
  template <class U> LineAligned(const LineAligned<U> &) {}
  T *allocate(std::size_t count) { return static_cast<T *>(::operator new(count * sizeof(T), line)); }
  void deallocate(T *p, std::size_t) { ::operator delete(p, line); }
  template <class U> bool operator==(const LineAligned<U> &) const { return true; }
  template <class U> bool operator!=(const LineAligned<U> &) const { return false; }
};
using AlignedDoubles = std::vector<double, LineAligned<double>>;

} // namespace mft
