// Benchmarks of the normaliser family (docs/science.md#remedies), named
// <kernel>/<variant>/<rows>x<n>/<type>[/threads:<t>] (bench/README.md, docs/architecture.md#benchmarks).
//   build/bin/sharp-bench-normalisers [--benchmark_filter=...] [--benchmark_format=json]
// - forward/<spec>/<rows>x<n>/<type>/threads:<t>: every normaliser on 1x2^24, 1024x1024 and
//   16384x16 logits ~ N(0, 4^2), double and float, 1 thread and all threads. Counters: rows/s,
//   bytes/s (read z + write p) and the fraction of rows where adaptive applied beta != 1.
// - limits: read_bandwidth/sum/1x16777216/double/threads:<t> (a STREAM-style sum, far beyond the
//   caches) and exp/<kernel|base_e|xsimd>/1x4096/double (vectorised exp loops in L1: the kernels'
//   exp2, the base-e exp, xsimd::exp), so scripts/bench_normalisers.sh can report each kernel as a
//   fraction of its own limit. These are the suite's only exp benchmarks.
// - stats/<blocked|softmax_stream>/1x16777216/...: the one-pass statistics (log-sum-exp, entropy,
//   beta) of a 1x2^24 row: the family's blocked kernel, and the chunked SoftmaxStream for comparison.
// - root_<bisection|newton>/<spec>/64x1024/double: for the root-finding normalisers (alpha-entmax,
//   Stieltjes): the f-evaluations a 1024-wide row needs to get p within 1e-9 (max abs) of the
//   converged answer, and the time per row at that accuracy.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "core/simd_exp.hpp"
#include "core/simd_isa.hpp"
#include "normalisers/normaliser.hpp"
#include "normalisers/sparse_thresholds.hpp"
#include "normalisers/softmax_summary.hpp"
#include "normalisers/softmax_stream.hpp"

namespace {

using namespace sharp::norm;

constexpr double kSigma = 4.0;

template <class T>
const std::vector<T>& logits(std::size_t count) {
  static std::map<std::size_t, std::vector<T>> cache;
  auto& v = cache[count];
  if (v.empty()) {
    std::mt19937_64 rng(2024);
    std::normal_distribution<double> normal(0.0, kSigma);
    v.resize(count);
    for (auto& x : v) x = static_cast<T>(normal(rng));
  }
  return v;
}

struct Shape {
  std::size_t rows, n;
};
const Shape kShapes[] = {{1, std::size_t(1) << 24}, {1024, 1024}, {16384, 16}};

const char* const kSpecs[] = {"softmax", "adaptive", "ssmax:s=1", "topk:k=8", "argmax", "sparsemax",
                              "entmax15", "entmax:alpha=1.25", "asentmax:b=0.5:gamma=1", "stieltjes:q=4"};

template <class T>
void forward_benchmark(benchmark::State& state, std::string spec, Shape shape, int threads) {
  omp_set_num_threads(threads);
  const auto nz = make_normaliser(spec);
  const std::vector<T>& z = logits<T>(shape.rows * shape.n);
  std::vector<T> p(z.size());
  for (auto _ : state) {
    nz->forward(z.data(), p.data(), shape.rows, shape.n);
    benchmark::DoNotOptimize(p.data());
    benchmark::ClobberMemory();
  }
  const double iters = static_cast<double>(state.iterations());
  state.counters["rows/s"] = benchmark::Counter(iters * shape.rows, benchmark::Counter::kIsRate);
  state.counters["logits/s"] = benchmark::Counter(iters * shape.rows * shape.n, benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(iters * 2.0 * sizeof(T) * shape.rows * shape.n));
  state.counters["n"] = static_cast<double>(shape.n);
  state.counters["rows"] = static_cast<double>(shape.rows);
  state.counters["threads"] = threads;
  state.counters["bytes_per_logit"] = static_cast<double>(sizeof(T));
  if (const auto* t = nz->temperature(); t && t->needs_entropy_pass()) {   // rows whose beta is not 1
    std::size_t corrected = 0;
    for (std::size_t r = 0; r < shape.rows; ++r) {
      corrected += sharp::norm::row_beta(*t, z.data() + r * shape.n, shape.n) != 1.0;
    }
    state.counters["beta_rows"] = static_cast<double>(corrected) / shape.rows;
  }
  omp_set_num_threads(omp_get_num_procs());
}

// STREAM-style read: sum of 2^24 doubles (128 MiB, far beyond the caches), each thread its share.
void BM_ReadBandwidth(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const std::vector<double>& z = logits<double>(std::size_t(1) << 24);
  using B = xsimd::batch<double>;
  for (auto _ : state) {
    double total = 0.0;
#pragma omp parallel num_threads(threads)
    {
      const std::size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      const std::size_t chunk = z.size() / nt, first = t * chunk, last = t + 1 == nt ? z.size() : first + chunk;
      constexpr std::size_t L = B::size;
      B a(0.0), b(0.0), c(0.0), d(0.0);
      for (std::size_t i = first; i + 4 * L <= last; i += 4 * L) {
        a += B::load_unaligned(&z[i]);
        b += B::load_unaligned(&z[i + L]);
        c += B::load_unaligned(&z[i + 2 * L]);
        d += B::load_unaligned(&z[i + 3 * L]);
      }
      const double s = xsimd::hadd((a + b) + (c + d));
#pragma omp atomic
      total += s;   // a benchmark checksum only, not a result
    }
    benchmark::DoNotOptimize(total);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * z.size() * sizeof(double)));
  state.counters["threads"] = threads;
}
BENCHMARK(BM_ReadBandwidth)->Name("read_bandwidth/sum/1x16777216/double")->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();

// The exp of the softmax kernels alone, on an L1-resident array: exps/s per core. "kernel" is what
// the softmax family runs (2^y on logits pre-scaled by log2 e, core/simd_exp.hpp); "exp" is the
// same header's base-e exp (full range, Cody–Waite reduction); "xsimd" is xsimd::exp.
enum class ExpVariant { Kernel, BaseE, Xsimd };

template <ExpVariant V>
void BM_Exp(benchmark::State& state) {
  std::vector<double> x(4096);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -static_cast<double>(i) / 400.0;
  using B = xsimd::batch<double>;
  auto exp_of = [](const B& v) {
    if constexpr (V == ExpVariant::Kernel) return sharp::simd::exp2_in_range(v);
    else if constexpr (V == ExpVariant::BaseE) return sharp::simd::exp(v);
    else return xsimd::exp(v);
  };
  for (auto _ : state) {
    constexpr std::size_t L = B::size;
    B a(0.0), b(0.0);
    for (std::size_t i = 0; i < x.size(); i += 2 * L) {
      a += exp_of(B::load_unaligned(&x[i]));
      b += exp_of(B::load_unaligned(&x[i + L]));
    }
    benchmark::DoNotOptimize(xsimd::hadd(a + b));
  }
  state.counters["exps/s"] = benchmark::Counter(static_cast<double>(state.iterations() * x.size()),
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Exp<ExpVariant::Kernel>)->Name("exp/kernel/1x4096/double");
BENCHMARK(BM_Exp<ExpVariant::BaseE>)->Name("exp/base_e/1x4096/double");
BENCHMARK(BM_Exp<ExpVariant::Xsimd>)->Name("exp/xsimd/1x4096/double");

// The float kernels' exp (core/simd_exp.hpp) in float lanes, same loop: the float rows' limit.
void BM_ExpFloat(benchmark::State& state) {
  std::vector<float> x(4096);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -static_cast<float>(i) / 400.0f;
  using B = xsimd::batch<float>;
  for (auto _ : state) {
    constexpr std::size_t L = B::size;
    B a(0.0f), b(0.0f);
    for (std::size_t i = 0; i < x.size(); i += 2 * L) {
      a += sharp::simd::exp2_in_range(B::load_unaligned(&x[i]));
      b += sharp::simd::exp2_in_range(B::load_unaligned(&x[i + L]));
    }
    benchmark::DoNotOptimize(xsimd::hadd(a + b));
  }
  state.counters["exps/s"] = benchmark::Counter(static_cast<double>(state.iterations() * x.size()),
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ExpFloat)->Name("exp/kernel/1x4096/float");

// One-pass statistics of one 2^24 row: log-sum-exp, entropy, adaptive beta.
template <class T>
void BM_Stats(benchmark::State& state) {
  const bool parallel = state.range(0) == 2;
  omp_set_num_threads(static_cast<int>(state.range(0)));
  const std::vector<T>& z = logits<T>(std::size_t(1) << 24);
  for (auto _ : state) benchmark::DoNotOptimize(softmax_summary(z.data(), z.size(), parallel));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * z.size() * sizeof(T)));
  state.counters["logits/s"] = benchmark::Counter(static_cast<double>(state.iterations() * z.size()),
                                                  benchmark::Counter::kIsRate);
  state.counters["threads"] = static_cast<double>(state.range(0));
  omp_set_num_threads(omp_get_num_procs());
}
BENCHMARK(BM_Stats<double>)->Name("stats/blocked/1x16777216/double")->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_Stats<float>)->Name("stats/blocked/1x16777216/float")->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();

template <class T>
void BM_StatsSoftmaxStream(benchmark::State& state) {
  const std::vector<T>& z = logits<T>(std::size_t(1) << 24);
  for (auto _ : state) {
    sharp::norm::SoftmaxStream s;
    s.add(z.data(), z.size());
    benchmark::DoNotOptimize(summarize(s));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * z.size() * sizeof(T)));
  state.counters["logits/s"] = benchmark::Counter(static_cast<double>(state.iterations() * z.size()),
                                                  benchmark::Counter::kIsRate);
  state.counters["threads"] = 1;
}
BENCHMARK(BM_StatsSoftmaxStream<double>)->Name("stats/softmax_stream/1x16777216/double")->UseRealTime();
BENCHMARK(BM_StatsSoftmaxStream<float>)->Name("stats/softmax_stream/1x16777216/float")->UseRealTime();

// Root finding to 1e-9: per 1024-wide row, the smallest tolerance setting (10^-k) whose p is within
// 1e-9 of the converged p; reports the f-evaluations it took and the time per row at that setting.
double entmax_p(const double* w, std::size_t n, double alpha, RootMethod method, double tol,
                Workspace& ws, double* p, int* evaluations) {
  const RootResult r = entmax_threshold(w, n, n, alpha, method, tol, ws);
  *evaluations = r.evaluations;
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += p[i] = w[i] > r.root ? power(w[i] - r.root, 1.0 / (alpha - 1.0)) : 0.0;
  for (std::size_t i = 0; i < n; ++i) p[i] /= sum;
  return r.root;
}

// w = z - max z (<= 0): p_i = (mu - w_i)^(-q).
double stieltjes_p(const double* w, std::size_t n, double q, RootMethod method, double tol, double* p,
                   int* evaluations) {
  const RootResult r = stieltjes_shift(w, n, 0.0, n, q, method, tol);
  *evaluations = r.evaluations;
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += p[i] = 1.0 / power(r.root - w[i], q);
  for (std::size_t i = 0; i < n; ++i) p[i] /= sum;
  return r.root;
}

void BM_RootTo1e9(benchmark::State& state, bool stieltjes, RootMethod method) {
  const std::size_t n = 1024, rows = 64;
  const double alpha = 1.25, q = 4.0;
  const std::vector<double>& z = logits<double>(1024 * 1024);
  std::vector<double> w(rows * n), ref(rows * n), p(n);
  Workspace ws;
  int evals = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const double* zr = z.data() + r * n;
    const double m = *std::max_element(zr, zr + n);
    for (std::size_t i = 0; i < n; ++i) w[r * n + i] = (stieltjes ? 1.0 : alpha - 1.0) * (zr[i] - m);
    if (stieltjes) {
      stieltjes_p(&w[r * n], n, q, RootMethod::SafeguardedNewton, 1e-16, &ref[r * n], &evals);
    } else {
      entmax_p(&w[r * n], n, alpha, RootMethod::SafeguardedNewton, 1e-16, ws, &ref[r * n], &evals);
    }
  }
  auto solve_all = [&](double tol, double* max_error, double* mean_evals) {
    double worst = 0.0, total = 0.0;
    for (std::size_t r = 0; r < rows; ++r) {
      if (stieltjes) {
        stieltjes_p(&w[r * n], n, q, method, tol, p.data(), &evals);
      } else {
        entmax_p(&w[r * n], n, alpha, method, tol, ws, p.data(), &evals);
      }
      total += evals;
      for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(p[i] - ref[r * n + i]));
    }
    *max_error = worst;
    *mean_evals = total / rows;
  };
  double tol = 1e-1, err = 1.0, mean_evals = 0.0;
  for (; tol > 1e-17; tol /= 10) {
    solve_all(tol, &err, &mean_evals);
    if (err <= 1e-9) break;
  }
  for (auto _ : state) solve_all(tol, &err, &mean_evals);
  state.counters["evaluations"] = mean_evals;
  state.counters["tolerance"] = tol;
  state.counters["max_error"] = err;
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(state.iterations() * rows),
                                                benchmark::Counter::kIsRate);
}

void register_root_benchmarks() {
  for (const bool stieltjes : {false, true}) {
    for (const RootMethod method : {RootMethod::Bisection, RootMethod::SafeguardedNewton}) {
      const std::string name = std::string(method == RootMethod::Bisection ? "root_bisection/" : "root_newton/") +
                               (stieltjes ? "stieltjes:q=4" : "entmax:alpha=1.25") + "/64x1024/double";
      benchmark::RegisterBenchmark(name.c_str(), BM_RootTo1e9, stieltjes, method);
    }
  }
}

void register_forward_benchmarks() {
  const int all = omp_get_num_procs();
  for (const char* spec : kSpecs) {
    for (const Shape& shape : kShapes) {
      for (int threads : {1, all}) {
        const std::string base = std::string("forward/") + spec + "/" + std::to_string(shape.rows) + "x" +
                                 std::to_string(shape.n);
        benchmark::RegisterBenchmark((base + "/double/threads:" + std::to_string(threads)).c_str(),
                                     forward_benchmark<double>, std::string(spec), shape, threads)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark((base + "/float/threads:" + std::to_string(threads)).c_str(),
                                     forward_benchmark<float>, std::string(spec), shape, threads)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
        if (all == 1) break;
      }
    }
  }
}


// Named registrations (bench/README.md), at static initialisation like BENCHMARK's.
const bool kRegistered = [] {
  benchmark::AddCustomContext("simd", sharp::simd_isa_name(sharp::active_simd_isa()));   // the JSON's context
  register_forward_benchmarks();
  register_root_benchmarks();
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
