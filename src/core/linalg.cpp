#include "mft/core/linalg.hpp"

#include "mft/core/error.hpp"

#include <petscsys.h>
#include <petscblaslapack.h>

#include <algorithm>
#include <cmath>

namespace mft {
namespace {

// Row-major m x n to column-major (LAPACK's layout).
std::vector<double> to_column_major(const std::vector<double> &A, long long m, long long n) {
  std::vector<double> C(A.size());
  for (long long i = 0; i < m; ++i)
    for (long long j = 0; j < n; ++j) C[j * m + i] = A[i * n + j];
  return C;
}

} // namespace

std::vector<double> symmetric_eigenvalues(std::vector<double> A, long long n) {
  std::vector<double> w(static_cast<size_t>(n));
  if (n == 0) return w;
  const PetscBLASInt N = static_cast<PetscBLASInt>(n);
  PetscBLASInt info = 0, lwork = std::max<PetscBLASInt>(1, 3 * N);
  std::vector<double> work(static_cast<size_t>(lwork));
  // Symmetric: row- and column-major are the same matrix.
  LAPACKsyev_("N", "U", &N, A.data(), &N, w.data(), work.data(), &lwork, &info);
  if (info != 0) throw Error("LAPACK dsyev failed (info " + std::to_string(info) + ")");
  return w;
}

std::vector<double> singular_values(std::vector<double> A, long long m, long long n) {
  std::vector<double> s(static_cast<size_t>(std::min(m, n)));
  if (s.empty()) return s;
  std::vector<double> C = to_column_major(A, m, n);
  const PetscBLASInt M = static_cast<PetscBLASInt>(m), Nn = static_cast<PetscBLASInt>(n);
  PetscBLASInt info = 0, one = 1;
  PetscBLASInt lwork = std::max<PetscBLASInt>(1, 5 * std::max(M, Nn) + 3 * std::min(M, Nn));
  std::vector<double> work(static_cast<size_t>(lwork));
  double dummy = 0.0;
  LAPACKgesvd_("N", "N", &M, &Nn, C.data(), &M, s.data(), &dummy, &one, &dummy, &one, work.data(),
               &lwork, &info);
  if (info != 0) throw Error("LAPACK dgesvd failed (info " + std::to_string(info) + ")");
  return s;
}

std::vector<double> orthonormal_basis(std::vector<double> B, long long m, long long k) {
  // Modified Gram-Schmidt, twice ("twice is enough"), on the columns.
  std::vector<double> Q(static_cast<size_t>(m * k));
  for (long long j = 0; j < k; ++j) {
    std::vector<double> v(static_cast<size_t>(m));
    for (long long i = 0; i < m; ++i) v[i] = B[i * k + j];
    for (int pass = 0; pass < 2; ++pass)
      for (long long q = 0; q < j; ++q) {
        double dot = 0.0;
        for (long long i = 0; i < m; ++i) dot += Q[i * k + q] * v[i];
        for (long long i = 0; i < m; ++i) v[i] -= dot * Q[i * k + q];
      }
    double norm = 0.0;
    for (double x : v) norm += x * x;
    norm = std::sqrt(norm);
    if (norm == 0.0) throw Error("orthonormal_basis: the columns are linearly dependent");
    for (long long i = 0; i < m; ++i) Q[i * k + j] = v[i] / norm;
  }
  return Q;
}

} // namespace mft
