#pragma once
// Dense linear algebra of the nn layers: row-major GEMM, GEMV and rank-1 updates through OpenBLAS
// cblas, for float (training) and double (finite-difference gradient checks).
//
// Every matrix is contiguous row-major; an operand marked Trans::Yes is stored transposed, so
//   gemm: C[M,N] = alpha · op(A)[M,K] · op(B)[K,N] + beta · C, A stored [M,K] or [K,M], B [K,N] or [N,K].
// Threads: the OpenMP build of OpenBLAS runs serially inside an active OpenMP parallel region and
// with omp_get_max_threads() threads outside one. The trainer calls these from inside its own region
// over fixed batch chunks, so it alone owns the threads (docs/architecture.md#determinism).
#include <cstddef>

namespace sharp::nn {

enum class Trans : bool { No = false, Yes = true };

void gemm(Trans ta, Trans tb, std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, const float* B,
          float beta, float* C);
void gemm(Trans ta, Trans tb, std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A,
          const double* B, double beta, double* C);
// The same with explicit row strides (leading dimensions) lda, ldb, ldc, for column blocks of a wider
// row-major matrix (e.g. one head's d_head columns of a [rows, heads·d_head] array).
void gemm(Trans ta, Trans tb, std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, std::size_t lda,
          const float* B, std::size_t ldb, float beta, float* C, std::size_t ldc);
void gemm(Trans ta, Trans tb, std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A,
          std::size_t lda, const double* B, std::size_t ldb, double beta, double* C, std::size_t ldc);

// y[M or N] = alpha · op(A) x + beta · y, A stored [M, N]: op = A gives y[M] from x[N], op = Aᵀ y[N] from x[M].
void gemv(Trans ta, std::size_t M, std::size_t N, float alpha, const float* A, const float* x, float beta, float* y);
void gemv(Trans ta, std::size_t M, std::size_t N, double alpha, const double* A, const double* x, double beta,
          double* y);

// A[M, N] += alpha · x[M] y[N]ᵀ.
void ger(std::size_t M, std::size_t N, float alpha, const float* x, const float* y, float* A);
void ger(std::size_t M, std::size_t N, double alpha, const double* x, const double* y, double* A);

}  // namespace sharp::nn
