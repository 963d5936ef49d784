#pragma once
// The kernels' element type R (run.precision): double, or float for
// mixed, where the tokens, their cotangents and the particles stay double
// and only a kernel's own products run in float. These two helpers are the
// whole boundary: operands into R, products back into double.
#include "mft/core/blas.hpp"
#include "mft/core/lanes.hpp"

#include <type_traits>

namespace mft {

// `count` values of x in R: x itself for double, a rounded copy in `buffer`
// (grown as needed) for float.
template <class R> const R *in_precision(const double *x, long long count, AlignedVector<R> &buffer) {
  if constexpr (std::is_same_v<R, double>) {
    return x;
  } else {
    if (static_cast<long long>(buffer.size()) < count) buffer.resize(static_cast<size_t>(count));
    for (long long i = 0; i < count; ++i) buffer[i] = static_cast<R>(x[i]);
    return buffer.data();
  }
}

// C (double, m x n, row-major) += alpha op(A) op(B) for A, B in R: one
// GEMM into C for double; for float a GEMM into `product` (grown as
// needed), added into C in double, so that sums across calls (sequences,
// blocks, slices) accumulate in double, alpha is applied in double, and only
// each product's own sum over k runs in float.
template <class R>
void add_product(bool trans_a, bool trans_b, long long m, long long n, long long k, double alpha, const R *A,
                 long long lda, const R *B, long long ldb, double *C, long long ldc, AlignedVector<R> &product) {
  if constexpr (std::is_same_v<R, double>) {
    gemm(trans_a, trans_b, m, n, k, alpha, A, lda, B, ldb, 1.0, C, ldc);
  } else {
    if (static_cast<long long>(product.size()) < m * n) product.resize(static_cast<size_t>(m * n));
    gemm(trans_a, trans_b, m, n, k, R(1), A, lda, B, ldb, R(0), product.data(), n);
    for (long long i = 0; i < m; ++i)
      for (long long j = 0; j < n; ++j) C[i * ldc + j] += alpha * static_cast<double>(product[i * n + j]);
  }
}

} // namespace mft
