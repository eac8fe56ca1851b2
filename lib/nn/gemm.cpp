#include "nn/gemm.hpp"

#include <cblas.h>

namespace sharp::nn {
namespace {

CBLAS_TRANSPOSE op(Trans t) { return t == Trans::Yes ? CblasTrans : CblasNoTrans; }
// Leading dimension of a contiguous operand whose op() has `cols` columns (stored transposed: `rows`).
blasint lead(Trans t, std::size_t rows, std::size_t cols) { return blasint(t == Trans::Yes ? rows : cols); }

}  // namespace

void gemm(Trans ta, Trans tb, std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, const float* B,
          float beta, float* C) {
  if (M == 0 || N == 0) return;
  cblas_sgemm(CblasRowMajor, op(ta), op(tb), blasint(M), blasint(N), blasint(K), alpha, A, lead(ta, M, K), B,
              lead(tb, K, N), beta, C, blasint(N));
}

void gemm(Trans ta, Trans tb, std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A,
          const double* B, double beta, double* C) {
  if (M == 0 || N == 0) return;
  cblas_dgemm(CblasRowMajor, op(ta), op(tb), blasint(M), blasint(N), blasint(K), alpha, A, lead(ta, M, K), B,
              lead(tb, K, N), beta, C, blasint(N));
}

void gemm(Trans ta, Trans tb, std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, std::size_t lda,
          const float* B, std::size_t ldb, float beta, float* C, std::size_t ldc) {
  if (M == 0 || N == 0) return;
  cblas_sgemm(CblasRowMajor, op(ta), op(tb), blasint(M), blasint(N), blasint(K), alpha, A, blasint(lda), B,
              blasint(ldb), beta, C, blasint(ldc));
}

void gemm(Trans ta, Trans tb, std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A,
          std::size_t lda, const double* B, std::size_t ldb, double beta, double* C, std::size_t ldc) {
  if (M == 0 || N == 0) return;
  cblas_dgemm(CblasRowMajor, op(ta), op(tb), blasint(M), blasint(N), blasint(K), alpha, A, blasint(lda), B,
              blasint(ldb), beta, C, blasint(ldc));
}

void gemv(Trans ta, std::size_t M, std::size_t N, float alpha, const float* A, const float* x, float beta, float* y) {
  cblas_sgemv(CblasRowMajor, op(ta), blasint(M), blasint(N), alpha, A, blasint(N), x, 1, beta, y, 1);
}

void gemv(Trans ta, std::size_t M, std::size_t N, double alpha, const double* A, const double* x, double beta,
          double* y) {
  cblas_dgemv(CblasRowMajor, op(ta), blasint(M), blasint(N), alpha, A, blasint(N), x, 1, beta, y, 1);
}

void ger(std::size_t M, std::size_t N, float alpha, const float* x, const float* y, float* A) {
  cblas_sger(CblasRowMajor, blasint(M), blasint(N), alpha, x, 1, y, 1, A, blasint(N));
}

void ger(std::size_t M, std::size_t N, double alpha, const double* x, const double* y, double* A) {
  cblas_dger(CblasRowMajor, blasint(M), blasint(N), alpha, x, 1, y, 1, A, blasint(N));
}

}  // namespace sharp::nn
