// Benchmarks of the dispersion pipeline (sharp-bounds): the whole per-row kernel for each logit law
// at n = 2^24 with 1 and 2 threads, one block's fused top pass per law, and the parts alone — the
// RNG, the uniform draws split between lanes and scalar code, the stored logit generation, exp and
// exp2, and SoftmaxStream (no longer used by the kernel; kept for comparison) — so a report can say
// which part limits the rate.
//   build/bin/sharp-bench-dispersion --benchmark_repetitions=3
// Counters: logits/s (wall clock) and logits/s/core (per CPU-second of the process: robust on a
// shared machine).
#include <benchmark/benchmark.h>

#include <time.h>

#include <cstdint>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "dispersion/block_pass.hpp"
#include "dispersion/dispersion_row.hpp"
#include "dispersion/logit_laws.hpp"
#include "dispersion/uniform_draws.hpp"
#include "random/counter_rng.hpp"
#include "core/simd_exp.hpp"
#include "stats/softmax_stream.hpp"

namespace {

using namespace sharp;
constexpr std::size_t kChunk = 2048;  // values per call in the parts' benchmarks (16 KiB: in L1)

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// logits/s: wall-clock rate. logits/s/core: logits per CPU-second of the whole process (all
// threads), which stays meaningful when other jobs share the cores.
void set_rate(benchmark::State& state, double items_per_iteration, double cpu_seconds) {
  const double items = items_per_iteration * static_cast<double>(state.iterations());
  state.counters["logits/s"] = benchmark::Counter(items, benchmark::Counter::kIsRate);
  state.counters["logits/s/core"] = benchmark::Counter(items / cpu_seconds);
}

// Runs `body` once per iteration and sets both rates.
template <class Body>
void run(benchmark::State& state, double items_per_iteration, Body&& body) {
  const double cpu0 = process_cpu_seconds();
  for (auto _ : state) body();
  set_rate(state, items_per_iteration, process_cpu_seconds() - cpu0);
}

void BM_DispersionRow(benchmark::State& state) {
  const auto law = static_cast<dispersion::LogitLaw>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const std::uint64_t n = std::uint64_t{1} << 24;
  run(state, static_cast<double>(n),
      [&] { benchmark::DoNotOptimize(dispersion::dispersion_row(law, n, 4.0, 1.0, 12345, threads)); });
  state.SetLabel(std::string(dispersion::logit_law_name(law)));
}
BENCHMARK(BM_DispersionRow)
    ->ArgNames({"law", "threads"})
    ->ArgsProduct({{0, 1, 2, 3}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The numpy reference's point (bench/numpy_dispersion.py: uniform, n = 2^28, δ = 4, θ = 1);
// bench/numpy_dispersion_ref.sh runs both and prints the ratio.
void BM_NumpyPoint(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const std::uint64_t n = std::uint64_t{1} << 28;
  run(state, static_cast<double>(n), [&] {
    benchmark::DoNotOptimize(dispersion::dispersion_row(dispersion::LogitLaw::Uniform, n, 4.0, 1.0, 1, threads));
  });
}
BENCHMARK(BM_NumpyPoint)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// One block (2^16 logits) of the fused top pass (SumsFromTop), δ/θ = 4: the kernel without the
// row's threading, merging and second looks.
void BM_BlockTopPass(benchmark::State& state) {
  const auto law = static_cast<dispersion::LogitLaw>(state.range(0));
  const double C = 4.0 * 1.4426950408889634;  // (δ/θ)·log2(e)
  std::uint64_t first = 0;
  run(state, static_cast<double>(dispersion::kDispersionBlock), [&] {
    benchmark::DoNotOptimize(dispersion::block_pass(law, 9, C, dispersion::Pass{dispersion::PassKind::SumsFromTop},
                                                    first, dispersion::kDispersionBlock));
    first += dispersion::kDispersionBlock;
  });
  state.SetLabel(std::string(dispersion::logit_law_name(law)));
}
BENCHMARK(BM_BlockTopPass)->ArgName("law")->DenseRange(0, 3);

// The uniform draws 1 + U of a sub-chunk, both halves in turn (in the kernel the scalar half
// overlaps with the sums of the previous sub-chunk).
void BM_UniformDraws(benchmark::State& state) {
  alignas(64) double out[kChunk];
  const dispersion::UniformDraws draws(7);
  std::uint64_t first = 0;
  run(state, kChunk, [&] {
    draws.fill(first, kChunk, out);
    benchmark::DoNotOptimize(out);
    first += kChunk;
  });
}
BENCHMARK(BM_UniformDraws);

void BM_FillBits(benchmark::State& state) {
  std::vector<std::uint64_t> out(kChunk);
  std::uint64_t first = 0;
  run(state, kChunk, [&] {
    rng::fill_bits(7, first, out.data(), kChunk);
    benchmark::DoNotOptimize(out.data());
    first += kChunk;
  });
}
BENCHMARK(BM_FillBits);

void BM_FillUniform(benchmark::State& state) {
  std::vector<double> out(kChunk);
  std::uint64_t first = 0;
  run(state, kChunk, [&] {
    rng::fill_uniform(7, first, out.data(), kChunk);
    benchmark::DoNotOptimize(out.data());
    first += kChunk;
  });
}
BENCHMARK(BM_FillUniform);

void BM_FillNormal(benchmark::State& state) {
  std::vector<double> out(kChunk);
  std::uint64_t first = 0;
  run(state, kChunk, [&] {
    rng::fill_normal(7, first, out.data(), kChunk);
    benchmark::DoNotOptimize(out.data());
    first += kChunk;
  });
}
BENCHMARK(BM_FillNormal);

// Logit generation alone (RNG + law + scaling by 1/θ), as the kernel calls it.
void BM_GenerateLogits(benchmark::State& state) {
  const auto law = static_cast<dispersion::LogitLaw>(state.range(0));
  std::vector<double> out(kChunk);
  const std::uint64_t n = std::uint64_t{1} << 62;
  std::uint64_t first = 0;
  run(state, kChunk, [&] {
    dispersion::generate_scaled_logits(law, 4.0, n, 7, first, 1.0 / 1.5, out.data(), kChunk);
    benchmark::DoNotOptimize(out.data());
    first += kChunk;
  });
  state.SetLabel(std::string(dispersion::logit_law_name(law)));
}
BENCHMARK(BM_GenerateLogits)->ArgName("law")->DenseRange(0, 3);

// exp alone on L1-resident data (load, exp, store).
void BM_SimdExp(benchmark::State& state) {
  using B = xsimd::batch<double>;
  std::vector<double> in(kChunk), out(kChunk);
  for (std::size_t i = 0; i < kChunk; ++i) in[i] = -4.0 * static_cast<double>(i) / kChunk;
  run(state, kChunk, [&] {
    for (std::size_t i = 0; i < kChunk; i += B::size)
      simd::exp(B::load_unaligned(in.data() + i)).store_unaligned(out.data() + i);
    benchmark::DoNotOptimize(out.data());
  });
}
BENCHMARK(BM_SimdExp);

// 2^y, the kernel's weight (exact argument reduction), on the same data.
void BM_SimdExp2(benchmark::State& state) {
  using B = xsimd::batch<double>;
  std::vector<double> in(kChunk), out(kChunk);
  for (std::size_t i = 0; i < kChunk; ++i) in[i] = -4.0 * static_cast<double>(i) / kChunk;
  run(state, kChunk, [&] {
    for (std::size_t i = 0; i < kChunk; i += B::size)
      simd::exp2_in_range(B::load_unaligned(in.data() + i)).store_unaligned(out.data() + i);
    benchmark::DoNotOptimize(out.data());
  });
}
BENCHMARK(BM_SimdExp2);

// The same with xsimd's own exp, for comparison.
void BM_XsimdExp(benchmark::State& state) {
  using B = xsimd::batch<double>;
  std::vector<double> in(kChunk), out(kChunk);
  for (std::size_t i = 0; i < kChunk; ++i) in[i] = -4.0 * static_cast<double>(i) / kChunk;
  run(state, kChunk, [&] {
    for (std::size_t i = 0; i < kChunk; i += B::size)
      xsimd::exp(B::load_unaligned(in.data() + i)).store_unaligned(out.data() + i);
    benchmark::DoNotOptimize(out.data());
  });
}
BENCHMARK(BM_XsimdExp);

// SoftmaxStream::add alone (extremes pass + exp and sums pass) on an L1-resident chunk.
void BM_SoftmaxStreamAdd(benchmark::State& state) {
  std::vector<double> z(kChunk);
  rng::fill_uniform(3, 0, z.data(), kChunk);
  for (auto& v : z) v *= 4.0;
  run(state, kChunk, [&] {
    stats::SoftmaxStream stream;
    stream.add(z.data(), kChunk);
    benchmark::DoNotOptimize(stream);
  });
}
BENCHMARK(BM_SoftmaxStreamAdd);

}  // namespace

BENCHMARK_MAIN();
