// Benchmarks of the max-retrieval model (docs/science.md#max-retrieval; docs/architecture.md#benchmarks),
// named <kernel>/<variant>/<rows>x<n>/<type>/threads:<t> (bench/README.md).
//   build/bin/sharp-bench-train-max [--benchmark_filter=...]
// - train_step/max_retrieval/128x16/float/threads:T: one optimizer step of the model of
//   docs/science.md#max-retrieval (width 128, depth 1, batch 128 sets of n = 16 items). Counters:
//   samples/s and GFLOP/s (lib/max_retrieval/cost.hpp's flop count).
// - train_step_gemms/max_retrieval/128x16/float/threads:T: the same step's GEMMs, back to back at
//   whole-batch shapes, through OpenBLAS with T threads: the reference rate. Achieved fraction =
//   train_step GFLOP/s / this.
// - eval_set/<normalisers>/<sets>x<n>/float/threads:T: the streaming evaluation (softmax, or
//   softmax+adaptive, which needs a second pass) of 2T sets of n items. Counter: items/s (item
//   passes of the first pass).
// - train_step/<remedy>/128x16/float/threads:1: the same step with each remedy of
//   docs/science.md#remedies trained into the head (learned scalars included): its cost relative
//   to softmax's.
// - eval_set/<normaliser>/2x1048576/float/threads:1: the evaluation with each normaliser at
//   n = 2^20 (the softmax family streams; the others keep the set's n logits, see
//   scripts/bench_train_max.sh for their measured memory).
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

void TrainStep(benchmark::State& state, int threads, std::string normaliser) {
  TrainConfig c = default_config();
  c.model.normaliser = normaliser;
  Trainer t(c, 1, 2, threads);
  for (int i = 0; i < 3; ++i) t.step();   // warm up (allocations, page faults)
  for (auto _ : state) benchmark::DoNotOptimize(t.step());
  const double steps = double(state.iterations());
  state.counters["samples/s"] = benchmark::Counter(steps * double(c.batch), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] = benchmark::Counter(steps * training_step_flops(c.model, c.batch, c.train_n) * 1e-9,
                                                 benchmark::Counter::kIsRate);
}

void StepGemms(benchmark::State& state, int threads) {
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

void EvalSet(benchmark::State& state, std::vector<std::string> names, std::size_t n, int threads) {
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
void register_benchmarks() {
  const TrainConfig c = default_config();
  const std::string step = "/max_retrieval/" + std::to_string(c.batch) + "x" + std::to_string(c.train_n) + "/float";
  for (const int threads : {1, 2}) {
    const std::string t = "/threads:" + std::to_string(threads);
    benchmark::RegisterBenchmark(("train_step" + step + t).c_str(), TrainStep, threads, "softmax")->UseRealTime()->MinTime(3.0);
    benchmark::RegisterBenchmark(("train_step_gemms" + step + t).c_str(), StepGemms, threads)->UseRealTime()->MinTime(3.0);
  }
  auto eval = [](std::vector<std::string> names, std::size_t n, int threads) {
    std::string list;
    for (const auto& s : names) list += (list.empty() ? "" : "+") + s;
    const std::string name = "eval_set/" + list + "/" + std::to_string(2 * threads) + "x" + std::to_string(n) +
                             "/float/threads:" + std::to_string(threads);
    benchmark::RegisterBenchmark(name.c_str(), EvalSet, names, n, threads)->UseRealTime()->Unit(benchmark::kMillisecond);
  };
  for (const std::size_t n : {std::size_t{1} << 16, std::size_t{1} << 20})
    for (const int threads : {1, 2}) eval({"softmax"}, n, threads);
  eval({"softmax", "adaptive"}, std::size_t{1} << 20, 2);
  // Every remedy trained in (one thread: relative cost), and every other normaliser evaluated at
  // 2^20 (softmax: eval_set/softmax/2x1048576 above).
  for (const char* remedy : {"softmax", "adaptive", "ssmax:s=learn", "entmax15", "sparsemax", "entmax:alpha=learn",
                             "asentmax:b=learn:gamma=learn", "stieltjes:q=2", "stieltjes:q=4"}) {
    const std::string name = std::string("train_step/") + remedy + "/" + std::to_string(c.batch) + "x" +
                             std::to_string(c.train_n) + "/float/threads:1";
    benchmark::RegisterBenchmark(name.c_str(), TrainStep, 1, std::string(remedy))->UseRealTime()->MinTime(1.0);
  }
  for (const char* x : {"adaptive", "ssmax:s=0.36067376022224085", "argmax", "topk:k=4", "entmax15",
                        "sparsemax", "entmax:alpha=1.3", "asentmax:b=0.5:gamma=0.5", "stieltjes:q=2"})
    eval({x}, std::size_t{1} << 20, 1);
}


// Named registrations (bench/README.md), at static initialisation like BENCHMARK's.
const bool kRegistered = [] {
  register_benchmarks();
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
