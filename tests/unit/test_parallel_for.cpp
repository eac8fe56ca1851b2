// parallel_for (core/parallel_for.hpp), the one parallel loop of the library: every iteration runs,
// the error of the lowest failing index comes out whatever the thread count, and an error never
// leaves the OpenMP region (std::terminate). Then a failure injected into each parallel loop of the
// library (set_loop_failure_injection) must come out of its public function as an exception:
// tests/faults/test_parallel_loops.py checks that every loop named in lib/ is listed here.
#include <omp.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/parallel_for.hpp"
#include "dispersion/dispersion_row.hpp"
#include "entropy/entropy_temperature.hpp"
#include "max_retrieval/streaming_eval.hpp"
#include "max_retrieval/trainer.hpp"
#include "normalisers/normaliser.hpp"
#include "transformer/model.hpp"
#include "transformer/trainer.hpp"

namespace {

using sharp::Loop;
using sharp::parallel_for;

TEST(ParallelFor, RunsEveryIterationOnce) {
  for (int threads : {1, 2, 3}) {
    std::vector<std::atomic<int>> hits(1000);
    parallel_for(hits.size(), Loop{"test/count", threads, 7}, [&](std::size_t i) { ++hits[i]; });
    for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
    parallel_for(hits.size(), Loop{"test/count", threads, 0}, [&](std::size_t i) { ++hits[i]; });
    for (const auto& h : hits) EXPECT_EQ(h.load(), 2);
  }
}

TEST(ParallelFor, TheLowestFailingIndexWhateverTheThreads) {
  for (int threads : {1, 2, 4}) {
    for (std::size_t grain : {std::size_t(0), std::size_t(1), std::size_t(5)}) {
      try {
        parallel_for(400, Loop{"test/fail", threads, grain}, [&](std::size_t i) {
          if (i == 391 || i == 57 || i == 203) throw std::runtime_error("failed at " + std::to_string(i));
        });
        FAIL() << "no exception";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "failed at 57") << threads << " threads, grain " << grain;
      }
    }
  }
}

// Inside an enclosing team (the runner runs points in parallel) the index is the loop's own thread,
// not the outer one: per-thread workspaces are indexed with it.
TEST(ParallelFor, ThreadIndexIsWithinTheLoopsTeam) {
  omp_set_max_active_levels(2);
  std::atomic<int> bad{0};
#pragma omp parallel num_threads(3)
  {
    for (int threads : {1, 2}) {
      parallel_for(40, Loop{"test/nested", threads}, [&](std::size_t, int thread) {
        if (thread < 0 || thread >= threads) ++bad;
      });
    }
  }
  EXPECT_EQ(bad.load(), 0);
}

TEST(ParallelFor, InjectionNamesTheLoopAndIndex) {
  sharp::set_loop_failure_injection("test/inject@5");
  std::atomic<int> ran{0};
  try {
    parallel_for(10, Loop{"test/inject", 2}, [&](std::size_t) { ++ran; });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'test/inject' at index 5"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(parallel_for(10, Loop{"test/other", 2}, [&](std::size_t) {}));
  sharp::set_loop_failure_injection("");
  EXPECT_NO_THROW(parallel_for(10, Loop{"test/inject", 2}, [&](std::size_t) {}));
}

// Each loop of the library, reached through its public function with the failure injected.
class InjectedLoopFailure : public ::testing::Test {
protected:
  void TearDown() override { sharp::set_loop_failure_injection(""); }
  template <class F>
  void expect_injected(const std::string& loop, F&& call) {
    sharp::set_loop_failure_injection(loop);
    try {
      call();
      ADD_FAILURE() << loop << ": the injected failure did not come out";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("injected failure in parallel loop '" + loop + "'"), std::string::npos)
          << loop << ": " << e.what();
    }
    sharp::set_loop_failure_injection("");
    EXPECT_NO_THROW(call()) << loop;
  }
};

TEST_F(InjectedLoopFailure, Normalisers) {
  const std::size_t rows = 64, n = 1000;
  std::vector<double> z(rows * n), p(rows * n);
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = double(i % 37) * 0.1;
  const auto sparsemax = sharp::norm::make_normaliser("sparsemax");
  expect_injected("normaliser/rows", [&] { sparsemax->forward(z.data(), p.data(), rows, n); });
  const auto softmax = sharp::norm::make_normaliser("softmax");
  expect_injected("normaliser/lane-groups", [&] { softmax->forward(z.data(), p.data(), rows * n / 16, 16); });
  std::vector<double> longz(1 << 18), longp(1 << 18);
  for (std::size_t i = 0; i < longz.size(); ++i) longz[i] = double(i % 101) * 0.01;
  expect_injected("softmax/blocks", [&] { softmax->forward(longz.data(), longp.data(), 1, longz.size()); });
  expect_injected("softmax/scale-blocks", [&] { softmax->forward(longz.data(), longp.data(), 1, longz.size()); });
}

TEST_F(InjectedLoopFailure, TheoremKernels) {
  std::vector<double> e(64), betas{0.5, 1.0, 2.0};
  for (std::size_t i = 0; i < e.size(); ++i) e[i] = double(i) / 16.0;
  expect_injected("entropy-temperature/betas", [&] { sharp::entropy::entropy_temperature_curve(e, betas, 2); });
  expect_injected("dispersion/blocks", [&] {
    sharp::dispersion::row_statistics(sharp::dispersion::LogitLaw::Uniform, 1 << 20, 4.0, 1.0, 7, 2);
  });
}

TEST_F(InjectedLoopFailure, MaxRetrievalTrainingAndEvaluation) {
  sharp::max_retrieval::TrainConfig config;
  config.model.width = 8;
  config.batch = 64;
  config.schedule.total_steps = 10;
  sharp::max_retrieval::Trainer trainer(config, 1, 2, 2);
  expect_injected("trainer/chunks", [&] { trainer.step(); });
  expect_injected("nn/gradient-slices", [&] { trainer.step(); });
  const sharp::max_retrieval::StreamingEvaluator eval(trainer.layout(), trainer.params().data(),
                                                      {sharp::norm::parse_spec("softmax")}, 64);
  expect_injected("max-retrieval/eval-samples", [&] { eval.evaluate_set(3, 0, 8, 32, 0, 0, 2); });
}

TEST_F(InjectedLoopFailure, Transformer) {
  sharp::transformer::TransformerConfig c;
  c.layers = 1;
  c.heads = 2;
  c.d_model = 16;
  c.vocab = 13;
  c.max_length = 64;
  const sharp::transformer::Transformer model(c);
  std::vector<float> params(model.parameter_count());
  sharp::transformer::init_parameters(model.layout(), params.data(), 1);
  std::vector<std::int32_t> tokens(4 * 64);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = std::int32_t(i % 13);
  std::vector<float> logits(tokens.size() * 13);
  expect_injected("transformer/items", [&] {
    sharp::transformer::transformer_forward(model, params.data(), tokens.data(), 4, 64, logits.data());
  });
  sharp::transformer::TrainerConfig tc;
  tc.model = c;
  tc.schedule.total_steps = 10;
  sharp::transformer::Trainer trainer(tc, 1, 2);
  expect_injected("transformer/trainer-chunks", [&] { trainer.step(tokens.data(), tokens.data(), 8, 32); });
  expect_injected("nn/adamw-slices", [&] { trainer.step(tokens.data(), tokens.data(), 8, 32); });
}

}  // namespace
