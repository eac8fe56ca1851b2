// Benchmarks of lib/transformer (docs/architecture.md#benchmarks).
//   build/bin/sharp-bench-transformer [--benchmark_filter=...]
// - attention/<variant>/1x16384/float, threads:T: one causal softmax head, d_head 64, n = 2^14:
//   blockwise (online row statistics, the inference path) and query_tiled (each row through the
//   normaliser). GFLOP/s counts only the causal lower triangle: QKᵀ and PV, 4·d_head·n(n+1)/2 flops
//   (row statistics included in the time, not in the count).
// - attention/sgemm/1x16384/float, threads:T: OpenBLAS SGEMM 4096×4096×1024 with T threads, the same
//   flop count: the reference rate. Achieved fraction = attention GFLOP/s / this.
// - train_step/default/<B>x<n>/float, threads:T: one AdamW step of the default model (4 layers ×
//   4 heads, d_model 128, vocab 64, causal, NoPE, softmax) on B sequences of n tokens. Counter:
//   tokens/s, and GFLOP/s from 6·(matrix parameters)·tokens + 6·(attention flops of the forward).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "nn/gemm.hpp"
#include "normalisers/normaliser.hpp"
#include "transformer/attention.hpp"
#include "transformer/blockwise_attention.hpp"
#include "transformer/trainer.hpp"

namespace {

using namespace sharp::transformer;

constexpr std::size_t kN = 1 << 14, kDHead = 64;
const double kAttentionFlops = 4.0 * double(kDHead) * double(kN) * double(kN + 1) / 2.0;

std::vector<float> random_qkv() {
  std::vector<float> qkv(kN * 3 * kDHead);
  for (std::size_t i = 0; i < qkv.size(); ++i) qkv[i] = float(std::sin(0.7 * double(i)) * 1.5);
  return qkv;
}

template <bool kBlockwise>
void Attention(benchmark::State& state) {
  const int threads = int(state.range(0));
  const std::vector<float> qkv = random_qkv();
  std::vector<float> out(kN * kDHead);
  auto softmax = sharp::norm::make_normaliser("softmax");
  AttentionHeads heads;
  heads.normalisers = {softmax.get()};
  const AttentionShape shape{1, kN, 1, kDHead, true};
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  for (auto _ : state) {
    if constexpr (kBlockwise)
      attention_forward_blockwise(out.data(), qkv.data(), shape, heads, nullptr);
    else
      attention_forward(out.data(), qkv.data(), shape, heads, nullptr, nullptr);
    benchmark::DoNotOptimize(out.data());
  }
  omp_set_num_threads(saved);
  state.counters["GFLOP/s"] =
      benchmark::Counter(double(state.iterations()) * kAttentionFlops * 1e-9, benchmark::Counter::kIsRate);
}
BENCHMARK(Attention<true>)->Name("attention/blockwise/1x16384/float")->Arg(1)->Arg(2)->ArgName("threads")
    ->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(Attention<false>)->Name("attention/query_tiled/1x16384/float")->Arg(1)->Arg(2)->ArgName("threads")
    ->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

void Sgemm(benchmark::State& state) {
  const int threads = int(state.range(0));
  const std::size_t M = 4096, N = 4096, K = std::size_t(std::llround(kAttentionFlops / (2.0 * 4096 * 4096)));
  std::vector<float> A(M * K, 0.01f), B(K * N, 0.02f), C(M * N, 0.0f);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);   // BLAS threads (outside any parallel region)
  for (auto _ : state) {
    sharp::nn::gemm(sharp::nn::Trans::No, sharp::nn::Trans::No, M, N, K, 1.0f, A.data(), B.data(), 0.0f, C.data());
    benchmark::DoNotOptimize(C.data());
  }
  omp_set_num_threads(saved);
  state.counters["GFLOP/s"] = benchmark::Counter(double(state.iterations()) * 2.0 * double(M * N * K) * 1e-9,
                                                 benchmark::Counter::kIsRate);
}
BENCHMARK(Sgemm)->Name("attention/sgemm/1x16384/float")->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()
    ->Unit(benchmark::kMillisecond)->MinTime(2.0);

// Flops of one training step: 3 × forward (forward, and twice it for the backward).
double train_step_flops(const TransformerConfig& c, std::size_t B, std::size_t n) {
  const double d = double(c.d_model), tokens = double(B * n);
  const double matrix_params = double(c.layers) * (3 * d * d + d * d + 8 * d * d) + double(c.vocab) * d;
  const double attention = double(c.layers) * double(B) * 4.0 * d * double(n) * double(n + 1) / 2.0;
  return 3.0 * (2.0 * matrix_params * tokens + attention);
}

void TrainStep(benchmark::State& state) {
  const int threads = int(state.range(0));
  const std::size_t B = std::size_t(state.range(1)), n = std::size_t(state.range(2));
  TrainerConfig c;   // the default model
  c.schedule = {sharp::nn::ScheduleKind::Constant, 1e-3, 1, 0, 0.0};
  c.optimiser.weight_decay = 0.01;
  Trainer trainer(c, 1, threads);
  std::vector<std::int32_t> in(B * n), out(B * n);
  for (std::size_t i = 0; i < B * n; ++i) {
    in[i] = std::int32_t((i * 2654435761u) % c.model.vocab);
    out[i] = std::int32_t((i * 40503u + 7) % c.model.vocab);
  }
  trainer.step(in.data(), out.data(), B, n);   // warm up (allocations, page faults)
  for (auto _ : state) benchmark::DoNotOptimize(trainer.step(in.data(), out.data(), B, n));
  const double steps = double(state.iterations());
  state.counters["tokens/s"] = benchmark::Counter(steps * double(B * n), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] =
      benchmark::Counter(steps * train_step_flops(c.model, B, n) * 1e-9, benchmark::Counter::kIsRate);
}
BENCHMARK(TrainStep)->Name("train_step/default/32x256/float")->Args({1, 32, 256})->Args({2, 32, 256})
    ->ArgNames({"threads", "B", "n"})->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);
BENCHMARK(TrainStep)->Name("train_step/default/8x64/float")->Args({1, 8, 64})->Args({2, 8, 64})
    ->ArgNames({"threads", "B", "n"})->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
