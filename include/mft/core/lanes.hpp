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

// Lane by lane selections. GCC lowers ?: and comparisons of the 8-double
// vector element by element when the ISA has no 8-double registers, so there
// the work is done on halves of 4 doubles (one AVX2 register each).
typedef double HalfLanes __attribute__((vector_size(lanes / 2 * sizeof(double))));
typedef long long HalfLanesInt __attribute__((vector_size(lanes / 2 * sizeof(long long))));
#ifdef __AVX512F__
[[gnu::always_inline]] inline Lanes lane_max(Lanes a, Lanes b) { return a > b ? a : b; }
// a where x > 0, b elsewhere (and where x is NaN).
[[gnu::always_inline]] inline Lanes where_positive(Lanes x, Lanes a, Lanes b) { return x > 0.0 ? a : b; }
#else
[[gnu::always_inline]] inline Lanes lane_max(Lanes a, Lanes b) {
  HalfLanes ha[2], hb[2];
  std::memcpy(ha, &a, sizeof a);
  std::memcpy(hb, &b, sizeof b);
  for (int h = 0; h < 2; ++h) ha[h] = ha[h] > hb[h] ? ha[h] : hb[h];
  std::memcpy(&a, ha, sizeof a);
  return a;
}
[[gnu::always_inline]] inline Lanes where_positive(Lanes x, Lanes a, Lanes b) {
  HalfLanes hx[2], ha[2], hb[2];
  std::memcpy(hx, &x, sizeof x);
  std::memcpy(ha, &a, sizeof a);
  std::memcpy(hb, &b, sizeof b);
  for (int h = 0; h < 2; ++h) ha[h] = hx[h] > 0.0 ? ha[h] : hb[h];
  std::memcpy(&a, ha, sizeof a);
  return a;
}
#endif

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
