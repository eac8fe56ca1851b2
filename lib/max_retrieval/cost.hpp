#pragma once
// Floating-point work of the max-retrieval model (2 flops per multiply-add of the GEMMs, GEMVs and
// rank-1 updates; elementwise work is not counted), and the GEMM shapes of one training step at
// whole-batch sizes — the reference for "achieved GFLOP/s as a fraction of OpenBLAS GEMM on the
// model's own shapes" (bench/train_max.cpp).
#include <cstddef>
#include <vector>

#include "max_retrieval/model.hpp"
#include "nn/gemm.hpp"

namespace sharp::max_retrieval {

struct GemmShape {
  nn::Trans ta, tb;
  std::size_t M, N, K;
  double flops() const { return 2.0 * double(M) * double(N) * double(K); }
};

// Every GEMM of one training step (forward and backward) on B sets of n items, as if the whole
// batch were one chunk.
std::vector<GemmShape> training_step_gemms(const ModelConfig& config, std::size_t B, std::size_t n);

// Flops of one training step: the GEMMs above plus the head's per-set GEMVs and rank-1 updates.
double training_step_flops(const ModelConfig& config, std::size_t B, std::size_t n);

}  // namespace sharp::max_retrieval
