// The optimizer side of lib/nn: AdamW against a direct transcription of its update rule, gradient
// clipping by global norm, and the learning-rate schedules' shapes.
#include <cmath>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "nn/adamw.hpp"
#include "nn/chunk_gradients.hpp"
#include "nn/grad_clip.hpp"
#include "nn/lr_schedule.hpp"

namespace {

TEST(AdamW, MatchesTheUpdateRuleOverSeveralSteps) {
  const sharp::nn::AdamWConfig cfg{0.9, 0.999, 1e-8, 0.01};
  const std::vector<std::vector<float>> grads = {{0.5f, -2.0f, 1e-3f}, {0.1f, -1.0f, 0.0f}, {-0.3f, 4.0f, 2e-3f}};
  const std::vector<double> lrs = {1e-3, 5e-4, 2e-3};
  std::vector<float> params = {1.0f, -0.5f, 0.25f};
  std::vector<double> p(params.begin(), params.end()), m(3, 0.0), v(3, 0.0);
  sharp::nn::AdamW opt(cfg, 3);
  for (std::size_t t = 0; t < grads.size(); ++t) {
    opt.step(params.data(), grads[t].data(), lrs[t]);
    for (std::size_t i = 0; i < 3; ++i) {
      const double g = grads[t][i];
      p[i] -= lrs[t] * cfg.weight_decay * p[i];
      m[i] = cfg.beta1 * m[i] + (1 - cfg.beta1) * g;
      v[i] = cfg.beta2 * v[i] + (1 - cfg.beta2) * g * g;
      const double mh = m[i] / (1 - std::pow(cfg.beta1, t + 1.0)), vh = v[i] / (1 - std::pow(cfg.beta2, t + 1.0));
      p[i] -= lrs[t] * mh / (std::sqrt(vh) + cfg.eps);
      EXPECT_NEAR(params[i], p[i], 1e-6 * std::abs(p[i])) << "step " << t << " coordinate " << i;
      EXPECT_NEAR(opt.m()[i], m[i], 1e-6 * std::abs(m[i]) + 1e-12);
      EXPECT_NEAR(opt.v()[i], v[i], 1e-6 * std::abs(v[i]) + 1e-15);
    }
  }
  EXPECT_EQ(opt.steps(), 3);
}

TEST(AdamW, FirstStepMovesEveryCoordinateByAboutLr) {
  sharp::nn::AdamW opt({0.9, 0.999, 1e-8, 0.0}, 4);
  std::vector<float> params(4, 0.0f);
  const std::vector<float> g = {1e-4f, -3.0f, 100.0f, -1e-2f};
  opt.step(params.data(), g.data(), 1e-3);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(params[i], g[i] > 0 ? -1e-3 : 1e-3, 1e-7);
}

TEST(GradClip, ScalesToTheThresholdOnlyAboveIt) {
  std::vector<float> g = {3.0f, 4.0f};
  EXPECT_DOUBLE_EQ(sharp::nn::clip_by_global_norm(g.data(), 2, 10.0), 5.0);
  EXPECT_FLOAT_EQ(g[0], 3.0f);
  EXPECT_DOUBLE_EQ(sharp::nn::clip_by_global_norm(g.data(), 2, 1.0), 5.0);
  EXPECT_NEAR(sharp::nn::global_norm(g.data(), 2), 1.0, 1e-7);
  EXPECT_NEAR(g[0], 0.6f, 1e-7);
  std::vector<float> big = {3.0f, 4.0f};
  EXPECT_DOUBLE_EQ(sharp::nn::clip_by_global_norm(big.data(), 2, 0.0), 5.0);  // 0 = off
  EXPECT_FLOAT_EQ(big[1], 4.0f);
  std::vector<float> bad = {1.0f, NAN};
  EXPECT_THROW(sharp::nn::clip_by_global_norm(bad.data(), 2, 1.0), sharp::NumericError);
}

// The trainers' fused path: chunk sums with the norm, then clipping inside the AdamW update on
// several threads, give the bits of sum_chunk_gradients, clip_by_global_norm and the serial step (the
// norm to rounding: its squares are summed in another order), and leave the chunk buffers zero.
TEST(FusedStep, EqualsSumClipAndStep) {
  const std::size_t size = 50000, chunks = 3;   // several slices of both loops, a partial last one
  for (double clip : {1e9, 0.5}) {
    SCOPED_TRACE(clip);
    std::vector<std::vector<float>> parts(chunks, std::vector<float>(size));
    for (std::size_t c = 0; c < chunks; ++c)
      for (std::size_t i = 0; i < size; ++i) parts[c][i] = float(0.01 * std::sin(0.1 * double(i * (c + 1)) + 0.3));
    std::vector<float> a(size), b(size);
    sharp::nn::sum_chunk_gradients(a.data(), parts, chunks, size, 1);
    const double norm_a = sharp::nn::clip_by_global_norm(a.data(), size, clip);
    auto cleared = parts;
    const double norm_b = sharp::nn::sum_and_clear_chunk_gradients(b.data(), cleared, chunks, size, 3);
    EXPECT_NEAR(norm_b, norm_a, 1e-14 * norm_a);
    for (const auto& part : cleared)
      for (float x : part) ASSERT_EQ(x, 0.0f);
    sharp::nn::AdamWConfig cfg{0.9, 0.999, 1e-8, 0.01, size / 2};
    sharp::nn::AdamW serial(cfg, size), fused(cfg, size);
    std::vector<float> p(size, 0.5f), q(size, 0.5f);
    for (int step = 0; step < 2; ++step) {
      serial.step(p.data(), a.data(), 1e-3);
      fused.step(q.data(), b.data(), 1e-3, clip < norm_a ? clip / norm_a : 1.0, 3);   // the same scale
    }
    EXPECT_EQ(p, q);
    EXPECT_EQ(serial.m(), fused.m());
    EXPECT_EQ(serial.v(), fused.v());
  }
}

TEST(LrSchedule, ConstantCosineAndStep) {
  using sharp::nn::LrSchedule;
  using sharp::nn::ScheduleKind;
  const LrSchedule constant{ScheduleKind::Constant, 1e-3, 100, 10, 0.0};
  EXPECT_DOUBLE_EQ(constant.at(0), 1e-3);
  EXPECT_DOUBLE_EQ(constant.at(99), 1e-3);

  const LrSchedule cosine{ScheduleKind::Cosine, 1e-3, 110, 10, 0.1};
  EXPECT_DOUBLE_EQ(cosine.at(0), 1e-4);           // warmup: (step + 1) / warmup
  EXPECT_DOUBLE_EQ(cosine.at(9), 1e-3);
  EXPECT_DOUBLE_EQ(cosine.at(10), 1e-3);          // cosine starts at lr
  EXPECT_NEAR(cosine.at(60), 0.55e-3, 1e-15);     // halfway: (lr + lr_end) / 2
  EXPECT_NEAR(cosine.at(110), 1e-4, 1e-15);       // ends at lr · final_fraction
  for (int s = 10; s < 110; ++s) EXPECT_LE(cosine.at(s + 1), cosine.at(s));

  const LrSchedule step{ScheduleKind::Step, 1e-3, 100, 0, 0.0};
  EXPECT_DOUBLE_EQ(step.at(49), 1e-3);
  EXPECT_DOUBLE_EQ(step.at(50), 1e-4);
  EXPECT_DOUBLE_EQ(step.at(75), 1e-5);
  EXPECT_THROW(sharp::nn::parse_schedule_kind("linear"), sharp::BadInput);
  EXPECT_EQ(sharp::nn::parse_schedule_kind("cosine"), ScheduleKind::Cosine);
}

}  // namespace
