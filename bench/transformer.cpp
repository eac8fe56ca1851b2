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
// - train_step/study/64xL/float, threads:T: one AdamW step of the text study's model (2 layers ×
//   4 heads, d_model 64, RoPE, the CLRS-Text vocabulary) on 64 samples of minimum drawn at lengths
//   4–16 as sharp-train-text draws them (prompts of 33–111 tokens, padded to the longest: L), the
//   loss on answer tokens. tokens/s counts the 64·L padded positions, as the PyTorch reference does.
// - decode/{cached,uncached}/minimum_64/float, generated:N: greedy decoding of one minimum question at
//   length 64 (393 tokens) by the study's model (random weights), N tokens generated. cached: the
//   key/value cache (transformer/decoder.hpp, as text_model::greedy_decode: every token pushed, one
//   row at a time); uncached: a full forward over question + generated tokens per token. 1 thread.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/gemm.hpp"
#include "text/sample.hpp"
#include "text/tokeniser.hpp"
#include "transformer/decoder.hpp"
#include "text_model/task_mix.hpp"
#include "text_model/token_batch.hpp"
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

// The study's batch: step 0 of a training on minimum at lengths 4..16 (sharp-train-text's draw).
const sharp::text_model::TokenBatch& study_batch() {
  static const sharp::text_model::TokenBatch batch = [] {
    sharp::text_model::TaskMix mix{{sharp::text::Algorithm::minimum}, {}, false};
    for (int n = 4; n <= 16; ++n) mix.lengths.push_back(n);
    std::vector<sharp::text::Sample> samples;
    for (std::uint64_t i = 0; i < 64; ++i) samples.push_back(sharp::text_model::draw_mixed(mix, 1, i));
    return sharp::text_model::make_token_batch(samples);
  }();
  return batch;
}

TransformerConfig study_model() {
  TransformerConfig c;
  c.layers = 2;
  c.heads = 4;
  c.d_model = 64;
  c.vocab = std::size_t(sharp::text::vocabulary_size());
  c.positional = Positional::Rope;
  return c;
}

void StudyStep(benchmark::State& state) {
  const int threads = int(state.range(0));
  const sharp::text_model::TokenBatch& b = study_batch();
  TrainerConfig c;
  c.model = study_model();
  c.schedule = {sharp::nn::ScheduleKind::Constant, 3e-3, 1, 0, 0.0};
  c.optimiser.weight_decay = 0.01;
  Trainer trainer(c, 1, threads);
  trainer.step(b.inputs.data(), b.targets.data(), b.batch, b.length);   // warm up
  for (auto _ : state) benchmark::DoNotOptimize(trainer.step(b.inputs.data(), b.targets.data(), b.batch, b.length));
  const double steps = double(state.iterations());
  state.counters["tokens/s"] = benchmark::Counter(steps * double(b.batch * b.length), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] =
      benchmark::Counter(steps * train_step_flops(c.model, b.batch, b.length) * 1e-9, benchmark::Counter::kIsRate);
}
[[maybe_unused]] const auto* const kStudyStep =
    benchmark::RegisterBenchmark(("train_step/study/64x" + std::to_string(study_batch().length) + "/float").c_str(),
                                 StudyStep)
        ->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);

// N generated tokens whatever they are (a random model's stop is chance): cached, the question and
// N − 1 tokens pushed through the key/value cache as greedy_decode does; uncached, N full forwards.
template <bool kCached>
void Decode(benchmark::State& state) {
  const Transformer model(study_model());
  std::vector<float> params(model.parameter_count());
  init_parameters(model.layout(), params.data(), 3);
  const sharp::text::Sample s = sharp::text::draw_sample(1, sharp::text::Algorithm::minimum, 64, 0, false);
  const std::vector<sharp::text::Token> question = sharp::text::tokenise(s.question);
  const std::size_t generated = std::size_t(state.range(0)), V = model.config().vocab;
  auto argmax = [&](const float* logits) {
    return sharp::text::Token(std::max_element(logits, logits + V) - logits);
  };
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  for (auto _ : state) {
    std::vector<sharp::text::Token> seq = question;
    if constexpr (kCached) {
      Decoder<float> decoder(model, params.data(), question.size() + generated);
      std::vector<float> logits(V);
      for (sharp::text::Token t : question) decoder.push(t, logits.data());
      while (seq.size() < question.size() + generated) {
        seq.push_back(argmax(logits.data()));
        if (seq.size() < question.size() + generated) decoder.push(seq.back(), logits.data());
      }
    } else {
      std::vector<float> logits;
      while (seq.size() < question.size() + generated) {
        logits.resize(seq.size() * V);
        transformer_forward(model, params.data(), seq.data(), 1, seq.size(), logits.data());
        seq.push_back(argmax(logits.data() + (seq.size() - 1) * V));
      }
    }
    benchmark::DoNotOptimize(seq.data());
  }
  omp_set_num_threads(saved);
  state.counters["prompt"] = double(question.size());
}
// 4: a trained model's answer at length 64 ("37\n\n"); 20: eval-text's budget (the answer + 16).
BENCHMARK(Decode<true>)->Name("decode/cached/minimum_64/float")->Arg(4)->Arg(20)->ArgName("generated")
    ->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(Decode<false>)->Name("decode/uncached/minimum_64/float")->Arg(4)->Arg(20)->ArgName("generated")
    ->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
