#pragma once
// Dense symmetric eigenvalues and singular values through LAPACK (PETSc's
// binding), for the NTK Gram matrix and the log-sum-exp test.
#include <vector>

namespace mft {

// Eigenvalues of the symmetric n x n matrix A (row-major), ascending.
std::vector<double> symmetric_eigenvalues(std::vector<double> A, long long n);

// Singular values of the m x n matrix A (row-major), descending.
std::vector<double> singular_values(std::vector<double> A, long long m, long long n);

// Orthonormal columns spanning the columns of the m x k matrix B (row-major,
// k <= m, full column rank): Householder QR. Returns m x k, row-major.
std::vector<double> orthonormal_basis(std::vector<double> B, long long m, long long k);

} // namespace mft
