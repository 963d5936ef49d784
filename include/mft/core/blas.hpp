#pragma once
// Row-major GEMM through PETSc's BLAS binding (OpenBLAS on Debian once
// libopenblas is installed).
#include <petscsys.h>
#include <petscblaslapack.h>

namespace mft {

// C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C, all row-major
// with leading dimensions lda, ldb, ldc. A row-major matrix is its transpose
// in column-major storage, so this is BLAS's C^T = op(B)^T op(A)^T.
inline void gemm(bool trans_a, bool trans_b, long long m, long long n, long long k, double alpha,
                 const double *A, long long lda, const double *B, long long ldb, double beta,
                 double *C, long long ldc) {
  if (m == 0 || n == 0) return;
  const char ta = trans_a ? 'T' : 'N', tb = trans_b ? 'T' : 'N';
  const PetscBLASInt M = static_cast<PetscBLASInt>(m), N = static_cast<PetscBLASInt>(n),
                     K = static_cast<PetscBLASInt>(k), LDA = static_cast<PetscBLASInt>(lda),
                     LDB = static_cast<PetscBLASInt>(ldb), LDC = static_cast<PetscBLASInt>(ldc);
  BLASgemm_(&tb, &ta, &N, &M, &K, &alpha, B, &LDB, A, &LDA, &beta, C, &LDC);
}

} // namespace mft
