#pragma once
// Row-major GEMM and SYRK through PETSc's BLAS binding (OpenBLAS on Debian once
// libopenblas is installed).
#include <petscsys.h>
#include <petscblaslapack.h>

// BLAS's single precision GEMM (run.precision = mixed's kernels); PETSc's
// binding names the PetscScalar (double) routines only.
extern "C" void sgemm_(const char *transa, const char *transb, const PetscBLASInt *m, const PetscBLASInt *n,
                       const PetscBLASInt *k, const float *alpha, const float *a, const PetscBLASInt *lda,
                       const float *b, const PetscBLASInt *ldb, const float *beta, float *c,
                       const PetscBLASInt *ldc);

namespace mft {

namespace blas_detail {
// The row-major GEMM through a column-major BLAS routine: the arguments of
// C^T = op(B)^T op(A)^T.
template <class T, class Routine>
inline void row_major_gemm(Routine routine, bool trans_a, bool trans_b, long long m, long long n, long long k,
                           T alpha, const T *A, long long lda, const T *B, long long ldb, T beta, T *C,
                           long long ldc) {
  if (m == 0 || n == 0) return;
  const char ta = trans_a ? 'T' : 'N', tb = trans_b ? 'T' : 'N';
  const PetscBLASInt M = static_cast<PetscBLASInt>(m), N = static_cast<PetscBLASInt>(n),
                     K = static_cast<PetscBLASInt>(k), LDA = static_cast<PetscBLASInt>(lda),
                     LDB = static_cast<PetscBLASInt>(ldb), LDC = static_cast<PetscBLASInt>(ldc);
  routine(&tb, &ta, &N, &M, &K, &alpha, B, &LDB, A, &LDA, &beta, C, &LDC);
}
} // namespace blas_detail

// C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C, all row-major
// with leading dimensions lda, ldb, ldc. A row-major matrix is its transpose
// in column-major storage, so this is BLAS's C^T = op(B)^T op(A)^T.
inline void gemm(bool trans_a, bool trans_b, long long m, long long n, long long k, double alpha,
                 const double *A, long long lda, const double *B, long long ldb, double beta,
                 double *C, long long ldc) {
  blas_detail::row_major_gemm([](auto... args) { BLASgemm_(args...); }, trans_a, trans_b, m, n, k, alpha, A,
                              lda, B, ldb, beta, C, ldc);
}

// The same in single precision.
inline void gemm(bool trans_a, bool trans_b, long long m, long long n, long long k, float alpha, const float *A,
                 long long lda, const float *B, long long ldb, float beta, float *C, long long ldc) {
  blas_detail::row_major_gemm([](auto... args) { sgemm_(args...); }, trans_a, trans_b, m, n, k, alpha, A, lda,
                              B, ldb, beta, C, ldc);
}

// C (n x n, row-major, leading dimension ldc) = alpha A A^T + beta C for A
// (n x k, row-major), the lower triangle only (C[i][j], j <= i); the upper
// is left as it was. Half a GEMM's flops for a Gram matrix.
inline void syrk_lower(long long n, long long k, double alpha, const double *A, long long lda, double beta,
                       double *C, long long ldc) {
  if (n == 0) return;
  // Row-major lower = column-major upper of the same storage; A row-major is
  // A^T column-major, so the column-major product is C' = A'^T A' ('T').
  const char uplo = 'U', trans = 'T';
  const PetscBLASInt N = static_cast<PetscBLASInt>(n), K = static_cast<PetscBLASInt>(k),
                     LDA = static_cast<PetscBLASInt>(lda), LDC = static_cast<PetscBLASInt>(ldc);
  BLASsyrk_(&uplo, &trans, &N, &K, &alpha, A, &LDA, &beta, C, &LDC);
}

} // namespace mft
