#include "linalg/largest_singular_value.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/errors.hpp"

namespace sharp::linalg {

void symmetric_eigenvalues_jacobi(double* s, std::size_t m, double* eigenvalues) {
  auto at = [&](std::size_t i, std::size_t j) -> double& { return s[i * m + j]; };
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, diag = 0;
    for (std::size_t i = 0; i < m; ++i) {
      diag += at(i, i) * at(i, i);
      for (std::size_t j = i + 1; j < m; ++j) off += at(i, j) * at(i, j);
    }
    if (off <= 1e-32 * diag || off == 0) {
      for (std::size_t i = 0; i < m; ++i) eigenvalues[i] = at(i, i);
      return;
    }
    for (std::size_t p = 0; p < m; ++p) {
      for (std::size_t q = p + 1; q < m; ++q) {
        const double apq = at(p, q);
        if (apq == 0) continue;
        // Rotation that zeroes S[p,q] (Golub & Van Loan, Algorithm 8.5.2).
        const double tau = (at(q, q) - at(p, p)) / (2 * apq);
        const double t = (tau >= 0 ? 1.0 : -1.0) / (std::abs(tau) + std::sqrt(1 + tau * tau));
        const double c = 1 / std::sqrt(1 + t * t), sn = t * c;
        for (std::size_t k = 0; k < m; ++k) {
          const double akp = at(k, p), akq = at(k, q);
          at(k, p) = c * akp - sn * akq;
          at(k, q) = sn * akp + c * akq;
        }
        for (std::size_t k = 0; k < m; ++k) {
          const double apk = at(p, k), aqk = at(q, k);
          at(p, k) = c * apk - sn * aqk;
          at(q, k) = sn * apk + c * aqk;
        }
      }
    }
  }
  throw NumericError("Jacobi eigenvalue iteration did not converge in 100 sweeps");
}

double largest_singular_value(const double* a, std::size_t rows, std::size_t cols) {
  const bool by_rows = rows <= cols;  // Gram of the smaller side: A Aᵀ [rows,rows] or Aᵀ A [cols,cols]
  const std::size_t m = by_rows ? rows : cols, k = by_rows ? cols : rows;
  auto elem = [&](std::size_t i, std::size_t l) { return by_rows ? a[i * cols + l] : a[l * cols + i]; };
  std::vector<double> gram(m * m), eig(m);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = i; j < m; ++j) {
      double sum = 0;
      for (std::size_t l = 0; l < k; ++l) sum += elem(i, l) * elem(j, l);
      gram[i * m + j] = gram[j * m + i] = sum;
    }
  symmetric_eigenvalues_jacobi(gram.data(), m, eig.data());
  return std::sqrt(std::max(0.0, *std::max_element(eig.begin(), eig.end())));
}

}  // namespace sharp::linalg
