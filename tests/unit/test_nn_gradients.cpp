// Finite-difference gradient checks (double) for every nn layer: linear, ReLU, MLP, softmax
// cross-entropy and the attention head with several normalisers. Each backward is compared with
// central differences of L = <v, output> (v random) for every input and parameter coordinate;
// error = max |analytic − fd| / max |fd| per tensor, <= 1e-6.
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/finite_differences.hpp"
#include "core/errors.hpp"
#include "nn/attention_head.hpp"
#include "nn/cross_entropy.hpp"
#include "nn/linear.hpp"
#include "nn/mlp.hpp"
#include "nn/relu.hpp"
#include "normalisers/normaliser.hpp"

namespace {

using Vec = std::vector<double>;
constexpr double kTolerance = 1e-6;

using sharp::test::agrees_with_finite_differences;
using sharp::test::coordinates;
using sharp::test::dot;
using sharp::test::gradient_agrees;
using sharp::test::numeric_gradient;
using sharp::test::random_normal;

TEST(NnGradients, Linear) {
  std::mt19937_64 rng(1);
  const std::size_t rows = 5, in = 7, out = 4;
  Vec x = random_normal(rows * in, rng), W = random_normal(out * in, rng), b = random_normal(out, rng);
  const Vec v = random_normal(rows * out, rng);
  auto loss = [&] {
    Vec y(rows * out);
    sharp::nn::linear_forward(y.data(), x.data(), W.data(), b.data(), rows, in, out);
    return dot(v, y);
  };
  Vec dx(rows * in), dW(out * in, 0.0), db(out, 0.0);
  sharp::nn::linear_backward(dx.data(), dW.data(), db.data(), v.data(), x.data(), W.data(), rows, in, out);
  EXPECT_TRUE(agrees_with_finite_differences(dx, x, loss, kTolerance, "linear dx"));
  EXPECT_TRUE(agrees_with_finite_differences(dW, W, loss, kTolerance, "linear dW"));
  EXPECT_TRUE(agrees_with_finite_differences(db, b, loss, kTolerance, "linear db"));
}

TEST(NnGradients, LinearAccumulatesIntoWeightGradients) {
  std::mt19937_64 rng(2);
  const std::size_t rows = 3, in = 2, out = 3;
  const Vec x = random_normal(rows * in, rng), W = random_normal(out * in, rng), dy = random_normal(rows * out, rng);
  Vec dW1(out * in, 0.0), db1(out, 0.0), dW2(out * in, 0.0), db2(out, 0.0);
  sharp::nn::linear_backward<double>(nullptr, dW1.data(), db1.data(), dy.data(), x.data(), W.data(), rows, in, out);
  sharp::nn::linear_backward<double>(nullptr, dW2.data(), db2.data(), dy.data(), x.data(), W.data(), rows, in, out);
  sharp::nn::linear_backward<double>(nullptr, dW2.data(), db2.data(), dy.data(), x.data(), W.data(), rows, in, out);
  for (std::size_t i = 0; i < dW1.size(); ++i) EXPECT_NEAR(dW2[i], 2 * dW1[i], 1e-12);
  for (std::size_t i = 0; i < db1.size(); ++i) EXPECT_NEAR(db2[i], 2 * db1[i], 1e-12);
}

TEST(NnGradients, Relu) {
  std::mt19937_64 rng(3);
  Vec x = random_normal(50, rng);
  for (double& xi : x)
    if (std::abs(xi) < 1e-3) xi = 0.5;  // away from the kink
  const Vec v = random_normal(50, rng);
  auto loss = [&] {
    Vec y(x.size());
    sharp::nn::relu_forward(y.data(), x.data(), x.size());
    return dot(v, y);
  };
  Vec y(x.size()), dx(x.size());
  sharp::nn::relu_forward(y.data(), x.data(), x.size());
  sharp::nn::relu_backward(dx.data(), v.data(), y.data(), x.size());
  EXPECT_TRUE(agrees_with_finite_differences(dx, x, loss, kTolerance, "relu dx"));
}

TEST(NnGradients, CrossEntropy) {
  std::mt19937_64 rng(4);
  const std::size_t rows = 6, classes = 10;
  Vec logits = random_normal(rows * classes, rng, 2.0);
  const std::vector<std::int32_t> labels = {0, 3, 9, 3, 5, 1};
  const double scale = 1.0 / rows;
  auto loss = [&] {
    Vec p(rows * classes);
    return scale * sharp::nn::cross_entropy_forward(p.data(), logits.data(), labels.data(), rows, classes).loss_sum;
  };
  Vec p(rows * classes), d(rows * classes);
  sharp::nn::cross_entropy_forward(p.data(), logits.data(), labels.data(), rows, classes);
  sharp::nn::cross_entropy_backward(d.data(), p.data(), labels.data(), rows, classes, scale);
  EXPECT_TRUE(agrees_with_finite_differences(d, logits, loss, kTolerance, "cross-entropy dlogits"));
}

TEST(NnGradients, CrossEntropyIsStableAndCountsCorrectRows) {
  const std::vector<double> logits = {1000.0, 0.0, -1000.0, 5.0, 5.0, 1.0};
  const std::vector<std::int32_t> labels = {0, 1};
  Vec p(6);
  const auto t = sharp::nn::cross_entropy_forward(p.data(), logits.data(), labels.data(), 2, 3);
  EXPECT_TRUE(std::isfinite(t.loss_sum));
  EXPECT_EQ(t.correct, 1);  // row 1: tie between classes 0 and 1 goes to the lower index
  EXPECT_NEAR(t.loss_sum, 0.0 + (std::log(2 * std::exp(5.0) + std::exp(1.0)) - 5.0), 1e-12);
  const std::vector<double> bad = {0.0, NAN, 1.0};
  EXPECT_THROW(sharp::nn::cross_entropy_forward(p.data(), bad.data(), labels.data(), 1, 3), sharp::NumericError);
}

class MlpGradients : public ::testing::TestWithParam<std::size_t> {};

TEST_P(MlpGradients, EveryParameterAndTheInput) {
  const std::size_t hidden = GetParam(), rows = 4;
  sharp::nn::ParameterLayout layout;
  const auto mlp = sharp::nn::add_mlp(layout, "m", {3, 5, 2, hidden});
  std::mt19937_64 rng(10 + hidden);
  Vec params(layout.size());
  sharp::nn::lecun_normal_init(layout, params.data(), 77);
  for (double& p : params) p += 0.1 * random_normal(1, rng)[0];  // non-zero biases too
  Vec x = random_normal(rows * 3, rng);
  const Vec v = random_normal(rows * 2, rng);
  sharp::nn::MlpCache<double> cache;
  auto loss = [&] {
    Vec y(rows * 2);
    sharp::nn::mlp_forward(y.data(), x.data(), mlp, params.data(), rows, cache);
    return dot(v, y);
  };
  loss();
  Vec grads(layout.size(), 0.0), dx(rows * 3);
  sharp::nn::mlp_backward(dx.data(), grads.data(), v.data(), x.data(), mlp, params.data(), rows, cache);
  EXPECT_TRUE(agrees_with_finite_differences(dx, x, loss, kTolerance, "mlp dx"));
  for (const auto& t : layout.tensors()) {
    const auto which = coordinates(t.offset, t.size());
    EXPECT_TRUE(gradient_agrees(grads.data(), which, numeric_gradient(params.data(), which, loss), kTolerance,
                                "mlp " + t.name));
  }
}

INSTANTIATE_TEST_SUITE_P(Depths, MlpGradients, ::testing::Values(1, 2, 3));

class HeadGradients : public ::testing::TestWithParam<const char*> {};

TEST_P(HeadGradients, ItemsQueryAndWeights) {
  const auto normaliser = sharp::norm::make_normaliser(GetParam());
  const std::size_t B = 3, n = 6, W = 5, d = 4;
  const sharp::nn::HeadShape shape{W, d};
  std::mt19937_64 rng(20);
  Vec h = random_normal(B * n * W, rng), hq = random_normal(B * W, rng);
  Vec WQ = random_normal(d * W, rng, 0.7), WK = random_normal(d * W, rng, 0.7), WV = random_normal(d * W, rng);
  const Vec v = random_normal(B * d, rng);
  sharp::nn::HeadCache<double> cache;
  auto loss = [&] {
    Vec z(B * d);
    sharp::nn::head_forward(z.data(), h.data(), hq.data(), {WQ.data(), WK.data(), WV.data()}, shape, *normaliser, B,
                            n, cache);
    return dot(v, z);
  };
  loss();
  Vec dh(B * n * W), dhq(B * W), dWQ(d * W, 0.0), dWK(d * W, 0.0), dWV(d * W, 0.0);
  sharp::nn::head_backward(dh.data(), dhq.data(), {dWQ.data(), dWK.data(), dWV.data()}, v.data(), h.data(),
                           hq.data(), {WQ.data(), WK.data(), WV.data()}, shape, *normaliser, B, n, cache);
  EXPECT_TRUE(agrees_with_finite_differences(dh, h, loss, kTolerance, std::string(GetParam()) + " head dh"));
  EXPECT_TRUE(agrees_with_finite_differences(dhq, hq, loss, kTolerance, std::string(GetParam()) + " head dhq"));
  EXPECT_TRUE(agrees_with_finite_differences(dWQ, WQ, loss, kTolerance, std::string(GetParam()) + " head dW_Q"));
  EXPECT_TRUE(agrees_with_finite_differences(dWK, WK, loss, kTolerance, std::string(GetParam()) + " head dW_K"));
  EXPECT_TRUE(agrees_with_finite_differences(dWV, WV, loss, kTolerance, std::string(GetParam()) + " head dW_V"));
}

INSTANTIATE_TEST_SUITE_P(Normalisers, HeadGradients,
                         ::testing::Values("softmax", "softmax:beta=3", "adaptive", "ssmax:s=0.7", "entmax15",
                                           "stieltjes:q=2"));

// The head equals the textbook form e_i = (W_Q h_q)ᵀ(W_K h_i)/√d, z = Σ α_i W_V h_i (docs/science.md#max-retrieval).
TEST(AttentionHead, AlgebraEqualsTheTextbookForm) {
  const auto softmax = sharp::norm::make_normaliser("softmax");
  const std::size_t B = 2, n = 7, W = 5, d = 3;
  std::mt19937_64 rng(30);
  const Vec h = random_normal(B * n * W, rng), hq = random_normal(B * W, rng);
  const Vec WQ = random_normal(d * W, rng), WK = random_normal(d * W, rng), WV = random_normal(d * W, rng);
  Vec z(B * d);
  sharp::nn::HeadCache<double> cache;
  sharp::nn::head_forward(z.data(), h.data(), hq.data(), {WQ.data(), WK.data(), WV.data()}, {W, d}, *softmax, B, n,
                          cache);
  auto matvec = [&](const Vec& M, const double* x) {
    Vec y(d, 0.0);
    for (std::size_t r = 0; r < d; ++r)
      for (std::size_t c = 0; c < W; ++c) y[r] += M[r * W + c] * x[c];
    return y;
  };
  for (std::size_t b = 0; b < B; ++b) {
    const Vec q = matvec(WQ, hq.data() + b * W);
    Vec e(n), zz(d, 0.0);
    double m = -INFINITY, s = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      e[i] = dot(q, matvec(WK, h.data() + (b * n + i) * W)) / std::sqrt(double(d));
      m = std::max(m, e[i]);
    }
    for (std::size_t i = 0; i < n; ++i) s += std::exp(e[i] - m);
    for (std::size_t i = 0; i < n; ++i) {
      const Vec value = matvec(WV, h.data() + (b * n + i) * W);
      for (std::size_t r = 0; r < d; ++r) zz[r] += std::exp(e[i] - m) / s * value[r];
    }
    for (std::size_t r = 0; r < d; ++r) EXPECT_NEAR(z[b * d + r], zz[r], 1e-12) << "sample " << b << " dim " << r;
  }
}

}  // namespace
