// Benchmarks of the max-retrieval model (docs/science.md#max-retrieval; docs/architecture.md#benchmarks).
//   build/bin/sharp-bench-train-max [--benchmark_filter=...]
// - TrainStep/threads:T: one optimizer step of the model of docs/science.md#max-retrieval (width 128, depth 1, batch 128,
//   n = 16). Counters: samples/s and GFLOP/s (lib/max_retrieval/cost.hpp's flop count).
// - StepGemms/threads:T: the same step's GEMMs, back to back at whole-batch shapes, through
//   OpenBLAS with T threads: the reference rate. Achieved fraction = TrainStep GFLOP/s / this.
// - EvalSet/n:N/<normalisers>/threads:T: the streaming evaluation (softmax, or softmax+adaptive,
//   which needs a second pass) of 2T sets of N items. Counter: items/s (item passes of the first pass).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <vector>

#include "max_retrieval/cost.hpp"
#include "max_retrieval/streaming_eval.hpp"
#include "max_retrieval/trainer.hpp"
#include "normalisers/spec.hpp"

namespace {

using namespace sharp::max_retrieval;

TrainConfig default_config() {
  TrainConfig c;   // defaults of docs/science.md#max-retrieval: width 128, depth 1, batch 128, n = 16
  c.schedule = {sharp::nn::ScheduleKind::Cosine, 1e-3, 100000, 0, 0.01};
  return c;
}

void TrainStep(benchmark::State& state) {
  const int threads = int(state.range(0));
  const TrainConfig c = default_config();
  Trainer t(c, 1, 2, threads);
  for (int i = 0; i < 3; ++i) t.step();   // warm up (allocations, page faults)
  for (auto _ : state) benchmark::DoNotOptimize(t.step());
  const double steps = double(state.iterations());
  state.counters["samples/s"] = benchmark::Counter(steps * double(c.batch), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] = benchmark::Counter(steps * training_step_flops(c.model, c.batch, c.train_n) * 1e-9,
                                                 benchmark::Counter::kIsRate);
}
BENCHMARK(TrainStep)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->MinTime(3.0);

void StepGemms(benchmark::State& state) {
  const int threads = int(state.range(0));
  const TrainConfig c = default_config();
  const auto shapes = training_step_gemms(c.model, c.batch, c.train_n);
  std::size_t biggest = 0;
  double flops = 0.0;
  for (const auto& s : shapes) {
    biggest = std::max({biggest, s.M * s.K, s.K * s.N, s.M * s.N});
    flops += s.flops();
  }
  std::vector<float> A(biggest, 0.01f), B(biggest, 0.02f), C(biggest, 0.0f);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);   // BLAS threads (outside any parallel region)
  for (auto _ : state)
    for (const auto& s : shapes) sharp::nn::gemm(s.ta, s.tb, s.M, s.N, s.K, 1.0f, A.data(), B.data(), 0.0f, C.data());
  omp_set_num_threads(saved);
  state.counters["GFLOP/s"] = benchmark::Counter(double(state.iterations()) * flops * 1e-9, benchmark::Counter::kIsRate);
}
BENCHMARK(StepGemms)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->MinTime(3.0);

void EvalSet(benchmark::State& state, std::vector<std::string> names) {
  const std::size_t n = std::size_t(state.range(0));
  const int threads = int(state.range(1));
  const ModelLayout layout = make_model_layout({128, 1});
  std::vector<float> params(layout.params.size());
  sharp::nn::lecun_normal_init(layout.params, params.data(), 3);
  std::vector<sharp::norm::Spec> specs;
  for (const auto& s : names) specs.push_back(sharp::norm::parse_spec(s));
  const StreamingEvaluator e(layout, params.data(), specs, 512);
  const std::size_t sets = std::size_t(2 * threads);
  for (auto _ : state) benchmark::DoNotOptimize(e.evaluate_set(7, 0, sets, n, 0, 0, threads));
  state.counters["items/s"] =
      benchmark::Counter(double(state.iterations()) * double(sets) * double(n), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(EvalSet, softmax, {"softmax"})
    ->ArgsProduct({{1 << 16, 1 << 20}, {1, 2}})->ArgNames({"n", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(EvalSet, softmax_adaptive, {"softmax", "adaptive"})
    ->ArgsProduct({{1 << 20}, {2}})->ArgNames({"n", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
