// ASEntmax in its per-query form (docs/science.md#asentmax), asentmax_query:b=learn:gamma=learn:
//  - rows with parameters of their own (Normaliser::forward/backward with row parameters): at the
//    spec's values the spec's bits (float and double, masked rows, a one-entry row), one ulp away
//    other bits; the backward against finite differences with every row at other values;
//  - the transformer with w = 0 equals the static asentmax:b=learn:gamma=learn with the same c, bit
//    for bit, at three (c_β, c_γ): inference, training and cached decoding; a w of one tiny entry
//    does not;
//  - cached decoding equals the full forward with w ≠ 0.
// The whole model's backward (the h_q path included) is checked against finite differences in
// test_transformer_gradients.cpp, training (the same bits for any thread count, w and c move) in
// test_transformer_training.cpp.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/finite_differences.hpp"

#include "normalisers/learned_scalars.hpp"
#include "normalisers/normaliser.hpp"
#include "normalisers/registry.hpp"
#include "transformer/decoder.hpp"
#include "transformer/model.hpp"

namespace {

using namespace sharp::transformer;
using sharp::norm::make_normaliser;
using sharp::norm::Normaliser;
using sharp::norm::Spec;
using sharp::test::random_normal;
using Vec = std::vector<double>;

constexpr double kMasked = -std::numeric_limits<double>::infinity();

// The three (c_β, c_γ) of the w = 0 checks.
const std::vector<std::pair<double, double>> kRaws = {{0.0, 0.0}, {1.3, -0.4}, {-2.0, 0.9}};

// b = softplus(c_β), γ = 2·tanh(c_γ) by the registry's own parameterisation.
std::pair<double, double> values_of(double c_b, double c_gamma) {
  const auto& e = sharp::norm::normaliser_entry("asentmax_query");
  return {e.learnable_parameter("b")->value(c_b), e.learnable_parameter("gamma")->value(c_gamma)};
}

// Rows of several lengths, with masked entries, one row of one unmasked entry: [rows, n].
Vec test_rows(std::size_t rows, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Vec z = random_normal(rows * n, rng, 2.0);
  for (std::size_t i = 0; i < z.size(); i += 5) z[i] = kMasked;
  z[0] = 0.3;
  for (std::size_t j = 1; j < n; ++j) z[j] = kMasked;   // row 0: one unmasked entry
  return z;
}

template <class T>
void expect_row_parameters_give_spec_bits(const Normaliser& fixed, const Vec& zd, std::size_t rows, std::size_t n,
                                          const Vec& params) {
  const std::vector<T> z(zd.begin(), zd.end());
  std::vector<T> p1(z.size()), p2(z.size()), v(z.size()), g1(z.size()), g2(z.size());
  std::mt19937_64 rng(9);
  const Vec vd = random_normal(z.size(), rng);
  for (std::size_t i = 0; i < z.size(); ++i) v[i] = T(vd[i]);
  Vec row_params;
  for (std::size_t r = 0; r < rows; ++r) row_params.insert(row_params.end(), params.begin(), params.end());
  fixed.forward(z.data(), p1.data(), rows, n);
  fixed.forward(z.data(), p2.data(), rows, n, row_params.data());
  EXPECT_EQ(std::memcmp(p1.data(), p2.data(), p1.size() * sizeof(T)), 0) << "forward, n " << n;
  Vec gp1(rows * 3), gp2(rows * 3);
  fixed.backward(z.data(), p1.data(), v.data(), g1.data(), gp1.data(), rows, n);
  fixed.backward(z.data(), p1.data(), v.data(), g2.data(), gp2.data(), rows, n, row_params.data());
  EXPECT_EQ(std::memcmp(g1.data(), g2.data(), g1.size() * sizeof(T)), 0) << "grad_z, n " << n;
  EXPECT_EQ(gp1, gp2) << "grad_params, n " << n;
}

TEST(AsentmaxQueryRows, RowParametersAtTheSpecValuesGiveTheSpecBits) {
  for (const auto& [cb, cg] : kRaws) {
    const auto [b, gamma] = values_of(cb, cg);
    SCOPED_TRACE("c_b " + std::to_string(cb) + ", c_gamma " + std::to_string(cg));
    const auto fixed = make_normaliser(Spec{"asentmax_query", {{"b", b}, {"gamma", gamma}, {"delta", 1.0}}});
    const auto static_form = make_normaliser(Spec{"asentmax", {{"b", b}, {"gamma", gamma}, {"delta", 1.0}}});
    for (const std::size_t n : {1u, 2u, 7u, 64u, 300u}) {
      const std::size_t rows = 5;
      const Vec z = test_rows(rows, n, 100 + n);
      expect_row_parameters_give_spec_bits<double>(*fixed, z, rows, n, {b, gamma, 1.0});
      expect_row_parameters_give_spec_bits<float>(*fixed, z, rows, n, {b, gamma, 1.0});
      // On rows alone the per-query form is asentmax.
      Vec p1(z.size()), p2(z.size());
      fixed->forward(z.data(), p1.data(), rows, n);
      static_form->forward(z.data(), p2.data(), rows, n);
      EXPECT_EQ(p1, p2);
    }
    // The check can fail: b off by 1e-9 (relative) changes the bits of a long row.
    const std::size_t n = 300;
    const Vec z = random_normal(n, 7, 2.0);
    Vec p1(n), p2(n);
    const Vec moved = {b * (1.0 + 1e-9), gamma, 1.0};
    fixed->forward(z.data(), p1.data(), 1, n);
    fixed->forward(z.data(), p2.data(), 1, n, moved.data());
    EXPECT_NE(p1, p2);
  }
}

// L = Σ_r <v_r, p_r> with row r at its own (b, γ, δ): grad_z and every row's grad_params against
// central differences, away from support changes.
TEST(AsentmaxQueryRows, BackwardWithRowParametersAgainstFiniteDifferences) {
  const auto nz = make_normaliser("asentmax_query:b=0.5:gamma=1");
  const std::size_t rows = 4, n = 9;
  std::mt19937_64 rng(4);
  Vec z = random_normal(rows * n, rng, 0.7);
  z[3] = kMasked;
  z[n + 5] = kMasked;
  const Vec v = random_normal(rows * n, rng);
  Vec params = {0.4, 1.2, 1.0, 1.7, -0.6, 0.5, 0.05, 0.3, 2.0, 2.5, 1.9, 0.7};   // [rows, 3]
  auto loss = [&] {
    Vec p(rows * n);
    nz->forward(z.data(), p.data(), rows, n, params.data());
    return sharp::test::dot(v, p);
  };
  Vec p(rows * n), gz(rows * n), gp(rows * 3);
  nz->forward(z.data(), p.data(), rows, n, params.data());
  std::size_t zeros = 0;
  for (const double x : p) zeros += x == 0.0;
  EXPECT_GT(zeros, 2u) << "the rows should be sparse";
  nz->backward(z.data(), p.data(), v.data(), gz.data(), gp.data(), rows, n, params.data());
  std::vector<std::size_t> unmasked;
  for (std::size_t i = 0; i < z.size(); ++i)
    if (z[i] != kMasked) unmasked.push_back(i);
  EXPECT_TRUE(sharp::test::gradient_agrees(gz.data(), unmasked, sharp::test::numeric_gradient(z.data(), unmasked, loss),
                                           1e-6, "grad_z"));
  const auto all = sharp::test::every(params.size());
  EXPECT_TRUE(sharp::test::gradient_agrees(gp.data(), all, sharp::test::numeric_gradient(params.data(), all, loss),
                                           1e-6, "grad_params"));
}

TEST(AsentmaxQueryRows, OnlyNormalisersThatTakeRowParameters) {
  const auto softmax = make_normaliser("softmax");
  EXPECT_FALSE(softmax->takes_row_parameters());
  EXPECT_TRUE(make_normaliser("asentmax:b=1:gamma=1")->takes_row_parameters());
  const Vec z = {0.1, 0.2, 0.3}, beta = {2.0};
  Vec p(3);
  EXPECT_THROW(softmax->forward(z.data(), p.data(), 1, 3, beta.data()), std::logic_error);
}

// ---- the transformer -------------------------------------------------------------------------

TransformerConfig small(const std::string& normaliser, Positional positional = Positional::Rope) {
  TransformerConfig c;
  c.layers = 2;
  c.heads = 2;
  c.d_model = 16;
  c.vocab = 13;
  c.positional = positional;
  c.max_length = 80;
  c.train_length = 16;
  c.normaliser = normaliser;
  return c;
}

std::vector<std::int32_t> tokens_for(std::size_t count, std::size_t vocab) {
  std::vector<std::int32_t> t(count);
  for (std::size_t i = 0; i < count; ++i) t[i] = std::int32_t((i * 7 + i / 5) % vocab);
  return t;
}

// Random weights for `model`: its initial weights with N(0, 0.05²) noise, the per-query w
// N(0, w_scale²) (so w·h_q is of order w_scale·√d with LayerNorm), and the learned scalars c set to
// (c_b, c_gamma) in every layer and head.
template <class T>
std::vector<T> weights(const Transformer& model, double c_b, double c_gamma, double w_scale) {
  const TransformerLayout& L = model.layout();
  Vec p(model.parameter_count());
  init_parameters(L, p.data(), 31);
  std::mt19937_64 rng(12);
  const Vec noise = random_normal(p.size(), rng, 0.05);
  for (std::size_t i = 0; i < p.size(); ++i) p[i] += noise[i];
  for (std::size_t l = 0; l < L.config.layers; ++l)
    for (std::size_t i = 0; i < L.normaliser.learned.size(); ++i) {
      for (std::size_t h = 0; h < L.config.heads; ++h) p[L.scalars[l][i] + h] = i == 0 ? c_b : c_gamma;
      if (L.normaliser.per_query[i])
        for (std::size_t j = 0; j < L.config.heads * L.config.d_model; ++j) p[L.query_weights[l][i] + j] *= w_scale / 0.05;
    }
  return std::vector<T>(p.begin(), p.end());
}

// The per-query model's weights carried over to the static model, tensor by tensor (its layout has
// no w).
template <class T>
std::vector<T> static_weights(const Transformer& per_query, const std::vector<T>& p, const Transformer& fixed) {
  std::vector<T> out(fixed.parameter_count());
  for (const auto& t : fixed.layout().params.tensors()) {
    const auto& from = per_query.layout().params.find(t.name);
    std::copy_n(p.begin() + std::ptrdiff_t(from.offset), t.size(), out.begin() + std::ptrdiff_t(t.offset));
  }
  return out;
}

template <class T>
std::vector<T> logits_of(const Transformer& model, const std::vector<T>& p, const std::vector<std::int32_t>& tokens,
                         std::size_t B, std::size_t n, bool training) {
  std::vector<T> logits(B * n * model.config().vocab);
  ForwardCache<T> cache;
  transformer_forward(model, p.data(), tokens.data(), B, n, logits.data(), training ? &cache : nullptr);
  return logits;
}

template <class T>
std::vector<T> decoded_logits(const Transformer& model, const std::vector<T>& p, const std::vector<std::int32_t>& tokens) {
  const std::size_t V = model.config().vocab;
  Decoder<T> decoder(model, p.data(), tokens.size());
  std::vector<T> out(tokens.size() * V);
  for (std::size_t t = 0; t < tokens.size(); ++t) decoder.push(tokens[t], out.data() + t * V);
  return out;
}

template <class T>
void expect_zero_w_equals_static(double c_b, double c_gamma) {
  const Transformer per_query(small("asentmax_query:b=learn:gamma=learn"));
  const Transformer fixed(small("asentmax:b=learn:gamma=learn"));
  ASSERT_EQ(per_query.parameter_count(), fixed.parameter_count() + 2 * 2 * 2 * 16);   // w: [layers][2][heads, d]
  const std::vector<T> pq = weights<T>(per_query, c_b, c_gamma, 0.0);
  const std::vector<T> pf = static_weights(per_query, pq, fixed);
  const std::size_t B = 2, n = 70;   // two query tiles
  const auto tokens = tokens_for(B * n, 13);
  for (const bool training : {false, true})
    EXPECT_EQ(logits_of(per_query, pq, tokens, B, n, training), logits_of(fixed, pf, tokens, B, n, training))
        << (training ? "training" : "inference") << " forward";
  const std::vector<std::int32_t> one(tokens.begin(), tokens.begin() + 40);
  EXPECT_EQ(decoded_logits(per_query, pq, one), decoded_logits(fixed, pf, one)) << "cached decoding";
  // The check can fail: one tiny entry of w in the last layer, and the logits differ.
  std::vector<T> moved = pq;
  moved[per_query.layout().query_weights[1][0] + 3] = T(1e-3);
  EXPECT_NE(logits_of(per_query, moved, tokens, B, n, false), logits_of(fixed, pf, tokens, B, n, false));
}

TEST(AsentmaxQueryTransformer, WithZeroWeightsEqualsTheStaticSpecBitForBit) {
  for (const auto& [cb, cg] : kRaws) {
    SCOPED_TRACE("c_b " + std::to_string(cb) + ", c_gamma " + std::to_string(cg));
    expect_zero_w_equals_static<float>(cb, cg);
    expect_zero_w_equals_static<double>(cb, cg);
  }
}

TEST(AsentmaxQueryTransformer, StartsAtTheStaticLearnedScalarsStart) {
  const Transformer model(small("asentmax_query:b=learn:gamma=learn"));
  const TransformerLayout& L = model.layout();
  std::vector<float> p(model.parameter_count());
  init_parameters(L, p.data(), 1);
  EXPECT_EQ(L.decay_size, L.scalars[0][0]);   // c and w come last, without weight decay
  for (std::size_t l = 0; l < 2; ++l)
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(p[L.scalars[l][i]], 0.0f);
      const auto& w = L.params.find("layers." + std::to_string(l) + ".norm." + L.normaliser.learned[i] + ".weight");
      EXPECT_EQ(w.offset, L.query_weights[l][i]);
      EXPECT_EQ(w.shape, (std::vector<std::size_t>{2, 16}));
      for (std::size_t j = 0; j < w.size(); ++j) EXPECT_EQ(p[w.offset + j], 0.0f);
    }
  // A fixed parameter is not learned, and has no w.
  const Transformer half(small("asentmax_query:b=learn:gamma=0.5"));
  EXPECT_EQ(half.layout().normaliser.learned, std::vector<std::string>{"b"});
  EXPECT_EQ(half.parameter_count(), model.parameter_count() - 2 * (2 + 2 * 16));
}

// With w ≠ 0 (every query its own b and γ), the cached decoder equals the full forward, for schemes
// with and without positions in the logits and without LayerNorm: double to 1e-12; float to 1e-4
// (measured up to 4.3e-5; the static asentmax at w = 0 on the same weights shows 2e-5: the float
// GEMMs' summation orders differ and the entmax threshold amplifies that, more than the 1e-5 of the
// other normalisers' decoder test on unperturbed weights).
TEST(AsentmaxQueryTransformer, CachedDecodingEqualsTheForward) {
  constexpr double kWScale = 0.3;
  for (const Positional positional : {Positional::Rope, Positional::Alibi, Positional::None})
    for (const bool layer_norm : {true, false}) {
      TransformerConfig c = small("asentmax_query:b=learn:gamma=learn", positional);
      c.layer_norm = layer_norm;
      const Transformer model(c);
      SCOPED_TRACE(positional_name(positional) + (layer_norm ? "" : " noLN"));
      const auto tokens = tokens_for(70, c.vocab);
      const std::vector<double> pd = weights<double>(model, 0.2, -0.3, kWScale);
      const std::vector<float> pf(pd.begin(), pd.end());
      double worst_d = 0, worst_f = 0;
      const auto full_d = logits_of(model, pd, tokens, 1, 70, false);
      const auto step_d = decoded_logits(model, pd, tokens);
      const auto full_f = logits_of(model, pf, tokens, 1, 70, false);
      const auto step_f = decoded_logits(model, pf, tokens);
      for (std::size_t i = 0; i < full_d.size(); ++i) {
        worst_d = std::max(worst_d, std::abs(step_d[i] - full_d[i]) / std::max(1.0, std::abs(full_d[i])));
        worst_f = std::max(worst_f, std::abs(double(step_f[i]) - double(full_f[i])) / std::max(1.0, std::abs(double(full_f[i]))));
      }
      EXPECT_LT(worst_d, 1e-12);
      EXPECT_LT(worst_f, 1e-4);
      // w matters: the same model at w = 0 gives other logits.
      EXPECT_NE(logits_of(model, weights<double>(model, 0.2, -0.3, 0.0), tokens, 1, 70, false), full_d);
    }
}

}  // namespace
