#pragma once
// σ_max of a small dense matrix, computed without BLAS threads so that the value is a function of
// the matrix alone (docs/architecture.md#determinism: BLAS results may change with the thread count).
#include <cstddef>

namespace sharp::linalg {

// Largest singular value of A [rows, cols] (row-major): sqrt of the largest eigenvalue of the
// smaller Gram matrix (A Aᵀ or Aᵀ A), found by cyclic Jacobi rotations to full double precision.
double largest_singular_value(const double* a, std::size_t rows, std::size_t cols);

// Eigenvalues of a symmetric matrix S [m, m] (row-major, overwritten), cyclic Jacobi; returned unsorted.
void symmetric_eigenvalues_jacobi(double* s, std::size_t m, double* eigenvalues);

}  // namespace sharp::linalg
