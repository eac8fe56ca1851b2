// The whole max-retrieval model (docs/science.md#max-retrieval) on a tiny instance: the backward of the batch-mean
// cross-entropy against central finite differences (double) for every parameter tensor, for
// several normalisers and depths; learned normaliser scalars (docs/science.md#learned-scalars) the same way;
// the float32 path against the double path; the layout.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/finite_differences.hpp"

#include "max_retrieval/cost.hpp"
#include "core/errors.hpp"
#include "max_retrieval/model.hpp"

namespace {

using namespace sharp::max_retrieval;

constexpr double kTolerance = 1e-6;

struct Case {
  const char* normaliser;
  std::size_t depth;
};

class ModelGradients : public ::testing::TestWithParam<Case> {};

TEST_P(ModelGradients, EveryParameterTensorAgainstFiniteDifferences) {
  const Case c = GetParam();
  const ModelLayout layout = make_model_layout({6, c.depth});
  const auto normaliser = sharp::norm::make_normaliser(c.normaliser);
  Batch<double> batch;
  generate_batch(batch, 3, 5, 0, [](std::int64_t i) { return set_sample_key(99, i); });
  std::vector<double> params(layout.params.size());
  sharp::nn::lecun_normal_init(layout.params, params.data(), 1234);
  // Non-zero biases, so their gradients are exercised away from the initial point.
  for (const auto& t : layout.params.tensors())
    if (t.fan_in == 0)
      for (std::size_t j = 0; j < t.size(); ++j) params[t.offset + j] = 0.05 * std::sin(double(t.offset + 3 * j));
  ModelCache<double> cache;
  const double scale = 1.0 / double(batch.size);
  auto loss = [&] { return scale * model_forward(layout, *normaliser, params.data(), batch, cache).loss_sum; };

  loss();
  std::vector<double> grads(params.size(), 0.0);
  model_backward(layout, *normaliser, params.data(), grads.data(), batch, cache, scale);

  for (const auto& t : layout.params.tensors()) {
    const auto which = sharp::test::coordinates(t.offset, t.size());
    EXPECT_TRUE(sharp::test::gradient_agrees(grads.data(), which,
                                             sharp::test::numeric_gradient(params.data(), which, loss), kTolerance,
                                             std::string(c.normaliser) + " " + t.name));
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, ModelGradients,
                         ::testing::Values(Case{"softmax", 1}, Case{"softmax", 2}, Case{"adaptive", 1},
                                           Case{"ssmax:s=1.5", 1}, Case{"entmax15", 2}));

// Learned scalars: the forward binds them from the buffer, so the loss is rebuilt from params each
// time; every tensor (the scalars last) against central differences, away from the initial raw
// values (gamma' = 0 would make tanh's curvature vanish there).
class LearnedScalarGradients : public ::testing::TestWithParam<const char*> {};

TEST_P(LearnedScalarGradients, ScalarsAndWeightsAgainstFiniteDifferences) {
  const ModelLayout layout = make_model_layout({6, 1, GetParam(), 5});
  ASSERT_FALSE(layout.scalars.empty());
  Batch<double> batch;
  generate_batch(batch, 3, 5, 0, [](std::int64_t i) { return set_sample_key(99, i); });
  std::vector<double> params(layout.params.size());
  init_model_parameters(layout, params.data(), 1234);
  for (std::size_t i = 0; i < layout.scalars.size(); ++i) params[layout.scalars[i]] += 0.3 + 0.2 * double(i);
  ModelCache<double> cache;
  const double scale = 1.0 / double(batch.size);
  auto loss = [&] {
    const auto normaliser = sharp::norm::make_normaliser(bound_normaliser_spec(layout, params.data()));
    return scale * model_forward(layout, *normaliser, params.data(), batch, cache).loss_sum;
  };
  loss();
  std::vector<double> grads(params.size(), 0.0);
  const auto normaliser = sharp::norm::make_normaliser(bound_normaliser_spec(layout, params.data()));
  model_backward(layout, *normaliser, params.data(), grads.data(), batch, cache, scale);
  for (const auto& t : layout.params.tensors()) {
    const auto which = sharp::test::coordinates(t.offset, t.size());
    EXPECT_TRUE(sharp::test::gradient_agrees(grads.data(), which,
                                             sharp::test::numeric_gradient(params.data(), which, loss), kTolerance,
                                             std::string(GetParam()) + " " + t.name));
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, LearnedScalarGradients,
                         ::testing::Values("ssmax:s=learn", "entmax:alpha=learn", "asentmax:b=learn:gamma=learn",
                                           "asentmax:b=learn:gamma=0.5"));

// The learned scalars are the last tensors, so a seed gives every remedy the same initial weights;
// weight decay stops before them; the initial raw values are those of normalisers/learned_scalars.hpp.
TEST(Model, LearnedScalarsArePlacedLast) {
  const ModelLayout plain = make_model_layout({16, 1, "softmax", 16});
  const ModelLayout learned = make_model_layout({16, 1, "asentmax:b=learn:gamma=learn", 16});
  EXPECT_TRUE(plain.scalars.empty());
  EXPECT_EQ(plain.decay_size, plain.params.size());
  ASSERT_EQ(learned.scalars.size(), 2u);
  EXPECT_EQ(learned.params.tensors().back().name, "head.norm.gamma");
  EXPECT_EQ(learned.scalars[0], plain.params.size());
  EXPECT_EQ(learned.decay_size, plain.params.size());
  std::vector<float> a(plain.params.size()), b(learned.params.size());
  init_model_parameters(plain, a.data(), 7);
  init_model_parameters(learned, b.data(), 7);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin()));
  EXPECT_EQ(b[learned.scalars[0]], 0.0f);   // b' = 0: b = ln 2
  const ModelLayout ssmax = make_model_layout({16, 1, "ssmax:s=learn", 16});
  std::vector<float> c(ssmax.params.size());
  init_model_parameters(ssmax, c.data(), 7);
  EXPECT_FLOAT_EQ(c.back(), float(1.0 / std::log(16.0)));
  EXPECT_NEAR(bound_normaliser_spec(ssmax, c.data()).params.at("s"), 1.0 / std::log(16.0), 1e-7);
  EXPECT_THROW(make_model_layout({16, 1, "softmax:beta=learn", 16}), sharp::BadInput);
}

TEST(Model, FloatPathAgreesWithDoublePath) {
  const ModelLayout layout = make_model_layout({32, 1});
  const auto normaliser = sharp::norm::make_normaliser("softmax");
  Batch<double> bd;
  Batch<float> bf;
  auto key = [](std::int64_t i) { return set_sample_key(5, i); };
  generate_batch(bd, 8, 16, 0, key);
  generate_batch(bf, 8, 16, 0, key);
  std::vector<double> pd(layout.params.size());
  std::vector<float> pf(layout.params.size());
  sharp::nn::lecun_normal_init(layout.params, pf.data(), 7);
  for (std::size_t i = 0; i < pf.size(); ++i) pd[i] = pf[i];
  ModelCache<double> cd;
  ModelCache<float> cf;
  const auto td = model_forward(layout, *normaliser, pd.data(), bd, cd);
  const auto tf = model_forward(layout, *normaliser, pf.data(), bf, cf);
  EXPECT_NEAR(tf.loss_sum, td.loss_sum, 1e-5 * td.loss_sum);
  std::vector<double> gd(pd.size(), 0.0);
  std::vector<float> gf(pf.size(), 0.0f);
  model_backward(layout, *normaliser, pd.data(), gd.data(), bd, cd, 1.0 / 8);
  model_backward(layout, *normaliser, pf.data(), gf.data(), bf, cf, 1.0 / 8);
  double norm = 0.0, diff = 0.0;
  for (std::size_t i = 0; i < gd.size(); ++i) {
    norm += gd[i] * gd[i];
    diff += (gd[i] - gf[i]) * (gd[i] - gf[i]);
  }
  EXPECT_LT(std::sqrt(diff / norm), 1e-4);
}

TEST(Model, LayoutOfSpecSection4) {
  const ModelLayout m = make_model_layout({128, 1});
  // ψ 11→128→128, query 1→128→128, W_Q, W_K, W_V 128×128, φ 128→128→10.
  const std::size_t psi = 11 * 128 + 128 + 128 * 128 + 128, query = 128 + 128 + 128 * 128 + 128;
  const std::size_t head = 3 * 128 * 128, phi = 128 * 128 + 128 + 128 * 10 + 10;
  EXPECT_EQ(m.params.size(), psi + query + head + phi);
  EXPECT_EQ(m.params.find("psi.0.weight").shape, (std::vector<std::size_t>{128, 11}));
  EXPECT_EQ(m.params.find("phi.1.weight").shape, (std::vector<std::size_t>{10, 128}));
  EXPECT_EQ(m.params.find("head.W_K").shape, (std::vector<std::size_t>{128, 128}));
  EXPECT_EQ(make_model_layout({16, 3}).params.find("psi.3.bias").shape, (std::vector<std::size_t>{16}));
}

TEST(Model, InitialisationIsLecunNormalWithZeroBiases) {
  const ModelLayout m = make_model_layout({128, 1});
  std::vector<float> p(m.params.size());
  sharp::nn::lecun_normal_init(m.params, p.data(), 3);
  const auto& w = m.params.find("psi.1.weight");
  double s = 0.0, s2 = 0.0;
  for (std::size_t j = 0; j < w.size(); ++j) s += p[w.offset + j], s2 += double(p[w.offset + j]) * p[w.offset + j];
  EXPECT_NEAR(s / double(w.size()), 0.0, 4 * std::sqrt(1.0 / 128 / double(w.size())));
  EXPECT_NEAR(s2 / double(w.size()), 1.0 / 128, 0.05 / 128);
  const auto& b = m.params.find("psi.1.bias");
  for (std::size_t j = 0; j < b.size(); ++j) EXPECT_EQ(p[b.offset + j], 0.0f);
}

}  // namespace

// The flop count of one training step, by hand for the configuration of docs/science.md#max-retrieval-reconstructed (W = 128, depth 1,
// B = 128, n = 16, R = B·n = 2048 item rows): ψ 2R(11·128 + 128²)·2 + 2R·128², query MLP
// 2B(128 + 128²)·2 + 2B·128², φ 2B(128² + 1280)·3, nine head GEMMs 2B·128², six per-set GEMV/GER 2RW.
TEST(Model, TrainingStepFlopsByHand) {
  const double R = 2048, B = 128, W = 128;
  const double psi = 2 * R * (11 * W + W * W) * 2 + 2 * R * W * W;
  const double query = 2 * B * (W + W * W) * 2 + 2 * B * W * W;
  const double phi = 2 * B * (W * W + W * 10) * 3;
  const double head = 9 * 2 * B * W * W + 6 * 2 * R * W;
  EXPECT_DOUBLE_EQ(training_step_flops({128, 1}, 128, 16), psi + query + phi + head);
  EXPECT_DOUBLE_EQ(psi + query + phi + head, 279969792.0);
}
