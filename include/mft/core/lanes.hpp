#pragma once
// A vector of doubles (or floats) as wide as one register of the ISA the build targets,
// through GCC's vector extension (a compiler feature, also in Clang; no
// library): 8 doubles (16 floats) with AVX-512, 4 (8) with AVX/AVX2, 2 (4)
// with SSE2 alone. The kernels
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
constexpr long long kVectorBytes = 64;
#elif defined(__AVX__)
constexpr long long kVectorBytes = 32;
#else
constexpr long long kVectorBytes = 16;
#endif

// One register of R (double, or float in run.precision = mixed's kernels:
// twice the lanes) and the integer vector its comparisons give.
template <class R> struct VectorOf;
template <> struct VectorOf<double> {
  typedef double type __attribute__((vector_size(kVectorBytes)));
  typedef long long mask __attribute__((vector_size(kVectorBytes)));
};
template <> struct VectorOf<float> {
  typedef float type __attribute__((vector_size(kVectorBytes)));
  typedef int mask __attribute__((vector_size(kVectorBytes)));
};
template <class R> using LanesOf = typename VectorOf<R>::type;
template <class R> constexpr long long lanes_of = kVectorBytes / static_cast<long long>(sizeof(R));

constexpr long long lanes = lanes_of<double>;
using Lanes = LanesOf<double>;
using LanesInt = VectorOf<double>::mask;

// Always inlined, as GCC's vector code wants.
template <class R> [[gnu::always_inline]] inline LanesOf<R> load(const R *p) {
  LanesOf<R> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class R> [[gnu::always_inline]] inline void store(R *p, LanesOf<R> v) { std::memcpy(p, &v, sizeof v); }

// Lane by lane selections (one compare and one blend).
template <class V> [[gnu::always_inline]] inline V lane_max(V a, V b) { return a > b ? a : b; }
// a where x > 0, b elsewhere (and where x is NaN).
template <class V> [[gnu::always_inline]] inline V where_positive(V x, V a, V b) { return x > 0 ? a : b; }

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
template <class R> using AlignedVector = std::vector<R, LineAligned<R>>;
using AlignedDoubles = AlignedVector<double>;

} // namespace mft
