// The max-retrieval trainer: bit-identical results for any thread count (fixed batch chunks summed
// in order), a restart from (weights, AdamW state, step) continues exactly, and a fast deterministic
// smoke training of a tiny model reaches high in-distribution accuracy.
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "max_retrieval/trainer.hpp"

namespace {

using namespace sharp::max_retrieval;

TrainConfig tiny_config(std::int64_t steps) {
  TrainConfig c;
  c.model = {16, 1};
  c.batch = 40;   // chunks of 16, 16 and 8 sets
  c.train_n = 12;
  c.weight_decay = 1e-3;
  c.clip = 1.0;
  c.schedule = {sharp::nn::ScheduleKind::Cosine, 3e-3, steps, 2, 0.1};
  return c;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Trainer, BitIdenticalForAnyThreadCount) {
  std::vector<Trainer> runs;
  for (int threads : {1, 2, 3}) {
    Trainer t(tiny_config(6), 11, 22, threads);
    for (int s = 0; s < 6; ++s) t.step();
    runs.push_back(std::move(t));
  }
  for (std::size_t i = 1; i < runs.size(); ++i) {
    EXPECT_TRUE(same_bits(runs[0].params(), runs[i].params())) << "threads " << i + 1;
    EXPECT_TRUE(same_bits(runs[0].optimizer().m(), runs[i].optimizer().m()));
    EXPECT_TRUE(same_bits(runs[0].optimizer().v(), runs[i].optimizer().v()));
  }
  const Evaluation e1 = runs[0].evaluate(5, 100, 12), e2 = runs[1].evaluate(5, 100, 12);
  EXPECT_EQ(e1.correct, e2.correct);
  EXPECT_EQ(e1.loss, e2.loss);
}

TEST(Trainer, RestartFromWeightsOptimizerStateAndStepContinuesExactly) {
  Trainer straight(tiny_config(6), 1, 2, 2);
  for (int s = 0; s < 6; ++s) straight.step();
  Trainer first(tiny_config(6), 1, 2, 2);
  for (int s = 0; s < 3; ++s) first.step();
  Trainer resumed(tiny_config(6), 999, 2, 1);   // other init: everything must come from the state
  resumed.params() = first.params();
  resumed.optimizer().m() = first.optimizer().m();
  resumed.optimizer().v() = first.optimizer().v();
  resumed.optimizer().set_steps(first.steps_done());
  for (int s = 0; s < 3; ++s) resumed.step();
  EXPECT_EQ(resumed.steps_done(), 6);
  EXPECT_TRUE(same_bits(straight.params(), resumed.params()));
}

TEST(Trainer, StepStatsAreSane) {
  Trainer t(tiny_config(3), 3, 4, 1);
  const StepStats s = t.step();
  EXPECT_GT(s.loss, 1.5);   // about ln 10 at initialisation
  EXPECT_LT(s.loss, 4.0);
  EXPECT_GE(s.correct, 0);
  EXPECT_LE(s.correct, 40);
  EXPECT_GT(s.grad_norm, 0.0);
  EXPECT_DOUBLE_EQ(s.lr, 1.5e-3);   // warmup step 1 of 2
}

TEST(Trainer, EvaluationIsAFunctionOfTheSetKeyAndSize) {
  Trainer t(tiny_config(1), 3, 4, 2);
  const Evaluation a = t.evaluate(7, 50, 16), b = t.evaluate(7, 50, 16), c = t.evaluate(8, 50, 16);
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_NE(a.loss, c.loss);
  EXPECT_EQ(a.samples, 50);
}

// A fast deterministic smoke test (about 0.2 s): width 32, 500 steps of 64 sets at lr 1e-2.
TEST(Trainer, SmokeTrainingOfATinyModelReachesHighAccuracy) {
  TrainConfig c;
  c.model = {32, 1};
  c.batch = 64;
  c.train_n = 16;
  c.schedule = {sharp::nn::ScheduleKind::Cosine, 1e-2, 500, 0, 0.01};
  Trainer t(c, 1, 2, 1);   // one thread: ctest runs tests side by side on the shared cores
  const double before = t.evaluate(77, 1024, 16).accuracy();
  for (int s = 0; s < 500; ++s) t.step();
  const Evaluation after = t.evaluate(77, 1024, 16);
  EXPECT_LT(before, 0.3);
  EXPECT_GE(after.accuracy(), 0.97) << "loss " << after.loss;
}

}  // namespace

namespace {

// Every remedy trained into the head (docs/science.md#remedies): a short training is bit-identical
// for 1 and 2 threads, the loss is finite, and a learned scalar moves from its initial raw value.
class RemedyTraining : public ::testing::TestWithParam<const char*> {};

TEST_P(RemedyTraining, ShortTrainingIsDeterministicAndLearnsItsScalars) {
  TrainConfig c = tiny_config(4);
  c.model.normaliser = GetParam();
  Trainer one(c, 11, 22, 1), two(c, 11, 22, 2);
  const std::vector<float> initial = one.params();
  for (int s = 0; s < 4; ++s) {
    EXPECT_TRUE(std::isfinite(one.step().loss));
    two.step();
  }
  EXPECT_TRUE(same_bits(one.params(), two.params()));
  for (std::size_t offset : one.layout().scalars) EXPECT_NE(one.params()[offset], initial[offset]) << GetParam();
  EXPECT_EQ(one.evaluate(5, 50, 12).correct, two.evaluate(5, 50, 12).correct);
}

INSTANTIATE_TEST_SUITE_P(EveryRemedy, RemedyTraining,
                         ::testing::Values("softmax", "adaptive", "ssmax:s=learn", "entmax15", "sparsemax",
                                           "entmax:alpha=learn", "asentmax:b=learn:gamma=learn", "stieltjes:q=2",
                                           "stieltjes:q=4"));

}  // namespace
