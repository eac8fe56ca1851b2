// Benchmarks of the dispersion pipeline (sharp-bounds), named <kernel>/<variant>/<rows>x<n>/<type>
// (bench/README.md): the whole per-row kernel for each logit law at n = 2^24 with 1 and 2 threads
// (dispersion_row/<law>/1x16777216/double/threads:T) and at the numpy reference's point
// (dispersion_row/uniform/1x268435456/...), one block's fused top pass per law (block_top_pass), and
// the parts alone — the uniform draws split between lanes and scalar code, the counter RNG, the
// stored logit generation, and SoftmaxStream::add (no longer used by the kernel; kept for
// comparison) — so a report can say which part limits the rate. The exp loops are measured once, by
// sharp-bench-normalisers (exp/...).
//   build/bin/sharp-bench-dispersion --benchmark_repetitions=3
// Counters: logits/s (wall clock) and logits/s/core (per CPU-second of the process: robust on a
// shared machine).
#include <benchmark/benchmark.h>

#include <time.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dispersion/block_pass.hpp"
#include "dispersion/dispersion_row.hpp"
#include "dispersion/logit_laws.hpp"
#include "dispersion/uniform_draws.hpp"
#include "rng/counter_rng.hpp"
#include "normalisers/softmax_stream.hpp"

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

// One row of n logits of `law` (δ = 4, θ = 1) on `threads` threads. At n = 2^28, uniform, it is
// the numpy reference's point (bench/numpy_dispersion.py); bench/numpy_dispersion_ref.sh runs both
// and prints the ratio.
void BM_DispersionRow(benchmark::State& state, dispersion::LogitLaw law, std::uint64_t n, int threads,
                      std::uint64_t key) {
  run(state, static_cast<double>(n),
      [&] { benchmark::DoNotOptimize(dispersion::dispersion_row(law, n, 4.0, 1.0, key, threads)); });
}

// One block (2^16 logits) of the fused top pass (SumsFromTop), δ/θ = 4: the kernel without the
// row's threading, merging and second looks.
void BM_BlockTopPass(benchmark::State& state, dispersion::LogitLaw law) {
  const double C = 4.0 * 1.4426950408889634;  // (δ/θ)·log2(e)
  std::uint64_t first = 0;
  run(state, static_cast<double>(dispersion::kDispersionBlock), [&] {
    benchmark::DoNotOptimize(dispersion::block_pass(law, 9, C, dispersion::Pass{dispersion::PassKind::SumsFromTop},
                                                    first, dispersion::kDispersionBlock));
    first += dispersion::kDispersionBlock;
  });
}

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

void BM_FillBits(benchmark::State& state) {
  std::vector<std::uint64_t> out(kChunk);
  std::uint64_t first = 0;
  run(state, kChunk, [&] {
    rng::fill_bits(7, first, out.data(), kChunk);
    benchmark::DoNotOptimize(out.data());
    first += kChunk;
  });
}

void BM_FillUniform(benchmark::State& state) {
  std::vector<double> out(kChunk);
  std::uint64_t first = 0;
  run(state, kChunk, [&] {
    rng::fill_uniform(7, first, out.data(), kChunk);
    benchmark::DoNotOptimize(out.data());
    first += kChunk;
  });
}

void BM_FillNormal(benchmark::State& state) {
  std::vector<double> out(kChunk);
  std::uint64_t first = 0;
  run(state, kChunk, [&] {
    rng::fill_normal(7, first, out.data(), kChunk);
    benchmark::DoNotOptimize(out.data());
    first += kChunk;
  });
}

// Logit generation alone (RNG + law + scaling by 1/θ), as the kernel calls it.
void BM_GenerateLogits(benchmark::State& state, dispersion::LogitLaw law) {
  std::vector<double> out(kChunk);
  const std::uint64_t n = std::uint64_t{1} << 62;
  std::uint64_t first = 0;
  run(state, kChunk, [&] {
    dispersion::generate_scaled_logits(law, 4.0, n, 7, first, 1.0 / 1.5, out.data(), kChunk);
    benchmark::DoNotOptimize(out.data());
    first += kChunk;
  });
}

// SoftmaxStream::add alone (extremes pass + exp and sums pass) on an L1-resident chunk.
void BM_SoftmaxStreamAdd(benchmark::State& state) {
  std::vector<double> z(kChunk);
  rng::fill_uniform(3, 0, z.data(), kChunk);
  for (auto& v : z) v *= 4.0;
  run(state, kChunk, [&] {
    norm::SoftmaxStream stream;
    stream.add(z.data(), kChunk);
    benchmark::DoNotOptimize(stream);
  });
}

constexpr dispersion::LogitLaw kLaws[] = {dispersion::LogitLaw::Uniform, dispersion::LogitLaw::OneHot,
                                          dispersion::LogitLaw::TwoPoint, dispersion::LogitLaw::Gaussian};

void register_benchmarks() {
  const std::string chunk = "/1x" + std::to_string(kChunk);
  for (const auto law : kLaws) {
    const std::string name(dispersion::logit_law_name(law));
    for (const int threads : {1, 2}) {
      benchmark::RegisterBenchmark(("dispersion_row/" + name + "/1x16777216/double/threads:" + std::to_string(threads)).c_str(),
                                   BM_DispersionRow, law, std::uint64_t{1} << 24, threads, std::uint64_t{12345})
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  for (const int threads : {1, 2}) {
    benchmark::RegisterBenchmark(("dispersion_row/uniform/1x268435456/double/threads:" + std::to_string(threads)).c_str(),
                                 BM_DispersionRow, dispersion::LogitLaw::Uniform, std::uint64_t{1} << 28, threads,
                                 std::uint64_t{1})
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  for (const auto law : kLaws) {
    const std::string name(dispersion::logit_law_name(law));
    benchmark::RegisterBenchmark(("block_top_pass/" + name + "/1x" + std::to_string(dispersion::kDispersionBlock) +
                                  "/double").c_str(), BM_BlockTopPass, law);
    benchmark::RegisterBenchmark(("generate_logits/" + name + chunk + "/double").c_str(), BM_GenerateLogits, law);
  }
  benchmark::RegisterBenchmark(("uniform_draws/lanes_and_scalar" + chunk + "/double").c_str(), BM_UniformDraws);
  benchmark::RegisterBenchmark(("counter_rng/bits" + chunk + "/uint64").c_str(), BM_FillBits);
  benchmark::RegisterBenchmark(("counter_rng/uniform" + chunk + "/double").c_str(), BM_FillUniform);
  benchmark::RegisterBenchmark(("counter_rng/normal" + chunk + "/double").c_str(), BM_FillNormal);
  benchmark::RegisterBenchmark(("softmax_stream/add" + chunk + "/double").c_str(), BM_SoftmaxStreamAdd);
}


// Named registrations (bench/README.md), at static initialisation like BENCHMARK's.
const bool kRegistered = [] {
  register_benchmarks();
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
