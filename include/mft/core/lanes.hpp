#pragma once
// A vector of doubles as wide as one register of the ISA the build targets,
// through GCC's vector extension (a compiler feature, also in Clang; no
// library): 8 with AVX-512, 4 with AVX/AVX2, 2 with SSE2 alone. The kernels
// that vectorise across heads or score rows use it where the auto-vectoriser
// would not keep values in registers; they are written for any width.
// Wider than a register it would not do: GCC splits such vectors, spills
// their arrays and lowers their comparisons element by element (an 8-double
// vector on AVX2 ran the attention kernel at a tenth of its speed).
//
// Sums across lanes (the VJP's token terms, the heads padded to the width)
// make results differ between an AVX2 and an AVX-512 build in the last
// bits: a run and its restart must run one build, as always.
#include <cstddef>
#include <cstring>
#include <new>
#include <vector>

namespace mft {

#if defined(__AVX512F__)
constexpr long long lanes = 8;
#elif defined(__AVX__)
constexpr long long lanes = 4;
#else
constexpr long long lanes = 2;
#endif
typedef double Lanes __attribute__((vector_size(lanes * sizeof(double))));
typedef long long LanesInt __attribute__((vector_size(lanes * sizeof(long long))));

// Always inlined, as GCC's vector code wants.
[[gnu::always_inline]] inline Lanes load(const double *p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(double *p, Lanes v) { std::memcpy(p, &v, sizeof v); }

// Lane by lane selections (one compare and one blend).
[[gnu::always_inline]] inline Lanes lane_max(Lanes a, Lanes b) { return a > b ? a : b; }
// a where x > 0, b elsewhere (and where x is NaN).
[[gnu::always_inline]] inline Lanes where_positive(Lanes x, Lanes a, Lanes b) { return x > 0.0 ? a : b; }

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
