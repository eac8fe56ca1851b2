// Finite-difference checks (double) of every hand-written backward of lib/transformer: LayerNorm,
// GELU, RoPE, attention (causal and encoder, ALiBi, several normalisers, the normaliser's own
// parameter), the token loss, and the whole model for every positional scheme with softmax,
// adaptive (gradient through β), ssmax with a learned s, and entmax15 heads, and ASEntmax learned
// per query (its gradient through each query's hidden state).
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/finite_differences.hpp"
#include "normalisers/learned_scalars.hpp"
#include "transformer/attention.hpp"
#include "transformer/gelu.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/model.hpp"
#include "transformer/positional.hpp"
#include "transformer/token_loss.hpp"

namespace {

using namespace sharp::transformer;
using sharp::test::dot;
using sharp::test::every;
using sharp::test::gradient_agrees;
using sharp::test::numeric_gradient;
using Vec = std::vector<double>;
using sharp::test::random_normal;
constexpr double kTolerance = 1e-6;

TEST(TransformerGradients, LayerNorm) {
  std::mt19937_64 rng(1);
  const std::size_t rows = 4, d = 7;
  Vec x = random_normal(rows * d, rng), g = random_normal(d, rng, 0.3), b = random_normal(d, rng);
  for (double& gi : g) gi += 1.0;
  const Vec v = random_normal(rows * d, rng);
  auto loss = [&] {
    Vec y(rows * d);
    layer_norm_forward(y.data(), static_cast<double*>(nullptr), static_cast<double*>(nullptr), x.data(), g.data(),
                       b.data(), rows, d);
    return dot(v, y);
  };
  Vec y(rows * d), mean(rows), rstd(rows), dx(rows * d), dg(d, 0.0), db(d, 0.0);
  layer_norm_forward(y.data(), mean.data(), rstd.data(), x.data(), g.data(), b.data(), rows, d);
  layer_norm_backward(dx.data(), dg.data(), db.data(), v.data(), x.data(), mean.data(), rstd.data(), g.data(), rows, d);
  EXPECT_TRUE(gradient_agrees(dx.data(), every(x.size()), numeric_gradient(x.data(), every(x.size()), loss),
                              kTolerance, "dx"));
  EXPECT_TRUE(gradient_agrees(dg.data(), every(d), numeric_gradient(g.data(), every(d), loss), kTolerance, "dgain"));
  EXPECT_TRUE(gradient_agrees(db.data(), every(d), numeric_gradient(b.data(), every(d), loss), kTolerance, "dbias"));
}

TEST(TransformerGradients, Gelu) {
  std::mt19937_64 rng(2);
  Vec x = random_normal(50, rng, 2.0);
  const Vec v = random_normal(50, rng);
  auto loss = [&] {
    Vec y(x.size());
    gelu_forward(y.data(), x.data(), x.size());
    return dot(v, y);
  };
  Vec dx(x.size());
  gelu_backward(dx.data(), v.data(), x.data(), x.size());
  EXPECT_TRUE(gradient_agrees(dx.data(), every(x.size()), numeric_gradient(x.data(), every(x.size()), loss),
                              kTolerance, "gelu"));
}

TEST(TransformerGradients, RopeInverseIsTheTranspose) {
  std::mt19937_64 rng(3);
  const std::size_t rows = 5, heads = 3, dh = 6, ld = 20;
  Vec x = random_normal(rows * ld, rng);
  const Vec v = random_normal(rows * ld, rng);
  auto loss = [&] {
    Vec y = x;
    rope_rotate(y.data(), rows, ld, heads, dh, 11);
    return dot(v, y);
  };
  Vec dx = v;
  rope_rotate(dx.data(), rows, ld, heads, dh, 11, true);
  EXPECT_TRUE(gradient_agrees(dx.data(), every(x.size()), numeric_gradient(x.data(), every(x.size()), loss),
                              kTolerance, "rope"));
}

// A training step rotates by a table of its positions (rope_table): a row of unit vectors at position p
// of a table that starts at `first` turns into (cos θ_i, sin θ_i), θ_i = p·10^4^(−i/c); the inverse
// rotation undoes it; and whole-row rotation (rope_rotate) gives the same bits.
TEST(TransformerGradients, RopeTableRowsRotateByTheirPositionsAngles) {
  const std::size_t heads = 2, dh = 8, c = dh / 2, first = 3, position = 9;
  const RopeTable table = rope_table(first, 10, dh);
  Vec x(heads * dh, 0.0);
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < c; ++i) x[h * dh + i] = 1.0;
  Vec y = x;
  rope_rotate_row(y.data(), heads, dh, position, table);
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < c; ++i) {
      const double angle = double(position) * std::pow(1e4, -double(i) / double(c));
      EXPECT_NEAR(y[h * dh + i], std::cos(angle), 1e-15);
      EXPECT_NEAR(y[h * dh + i + c], std::sin(angle), 1e-15);
    }
  Vec z = x;
  rope_rotate(z.data(), 1, heads * dh, heads, dh, position);
  EXPECT_EQ(z, y);
  rope_rotate_row(y.data(), heads, dh, position, table, true);
  for (std::size_t j = 0; j < x.size(); ++j) EXPECT_NEAR(y[j], x[j], 1e-15);
}

TEST(TransformerGradients, TokenCrossEntropy) {
  std::mt19937_64 rng(4);
  const std::size_t rows = 6, vocab = 5;
  Vec z = random_normal(rows * vocab, rng);
  const std::vector<std::int32_t> targets = {1, -1, 4, 0, -1, 2};
  auto loss = [&] { return token_cross_entropy<double>(nullptr, z.data(), targets.data(), rows, vocab, 1.0).loss_sum; };
  Vec dz(z.size());
  const TokenLoss totals = token_cross_entropy(dz.data(), z.data(), targets.data(), rows, vocab, 1.0);
  EXPECT_EQ(totals.count, 4);
  EXPECT_TRUE(gradient_agrees(dz.data(), every(z.size()), numeric_gradient(z.data(), every(z.size()), loss),
                              kTolerance, "dlogits"));
  for (std::size_t c = 0; c < vocab; ++c) EXPECT_EQ(dz[1 * vocab + c], 0.0);
}

struct AttentionCase {
  std::string normaliser;
  bool causal;
  bool alibi;
  std::size_t length = 9;   // 130: three query tiles, whose dK and dV sums cross
};

void PrintTo(const AttentionCase& c, std::ostream* os) {   // not a byte dump in ctest's test names
  *os << c.normaliser << (c.causal ? " causal" : " encoder") << (c.alibi ? " alibi" : "") << " n=" << c.length;
}

class AttentionGradients : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionGradients, MatchFiniteDifferences) {
  const AttentionCase& tc = GetParam();
  std::mt19937_64 rng(5);
  const AttentionShape shape{tc.length > 9 ? 1u : 2u, tc.length, 2, 4, tc.causal};
  const std::size_t R = shape.batch * shape.length, W = shape.width();
  Vec qkv = random_normal(R * 3 * W, rng, 1.5);
  const Vec v = random_normal(R * W, rng);
  auto normaliser = sharp::norm::make_normaliser(tc.normaliser);
  AttentionHeads heads;
  heads.normalisers = {normaliser.get(), normaliser.get()};
  if (tc.alibi) heads.alibi = alibi_slopes(shape.heads);
  auto loss = [&] {
    Vec out(R * W);
    attention_forward(out.data(), qkv.data(), shape, heads, nullptr, nullptr);
    return dot(v, out);
  };
  Vec out(R * W), dqkv(R * 3 * W);
  AttentionCache<double> cache;
  attention_forward(out.data(), qkv.data(), shape, heads, &cache, nullptr);
  EXPECT_NEAR(dot(v, out), loss(), 1e-13 * std::abs(loss()) + 1e-13);   // training and inference paths agree
  const std::size_t np = normaliser->parameter_names().size();
  Vec dparams(shape.heads * np, 0.0);
  attention_backward(dqkv.data(), v.data(), qkv.data(), shape, heads, cache, np ? dparams.data() : nullptr);
  EXPECT_TRUE(gradient_agrees(dqkv.data(), every(qkv.size()), numeric_gradient(qkv.data(), every(qkv.size()), loss),
                              kTolerance, "dqkv"));
  // The normaliser's first parameter (beta, s, ...), shared by both heads here: its gradient is the sum.
  if (np) {
    auto loss_at = [&](double value) {
      sharp::norm::Spec spec = normaliser->spec();
      spec.params[normaliser->parameter_names()[0]] = value;
      auto other = sharp::norm::make_normaliser(spec);
      AttentionHeads h2 = heads;
      h2.normalisers = {other.get(), other.get()};
      Vec o(R * W);
      attention_forward(o.data(), qkv.data(), shape, h2, nullptr, nullptr);
      return dot(v, o);
    };
    const double p0 = normaliser->spec().param(normaliser->parameter_names()[0]), h = 1e-5;
    const double numeric = (loss_at(p0 + h) - loss_at(p0 - h)) / (2 * h);
    const double analytic = dparams[0] + dparams[np];
    EXPECT_NEAR(analytic, numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << normaliser->parameter_names()[0];
  }
}

INSTANTIATE_TEST_SUITE_P(
    Normalisers, AttentionGradients,
    ::testing::Values(AttentionCase{"softmax", true, false}, AttentionCase{"softmax:beta=1.7", false, true},
                      AttentionCase{"adaptive", true, true}, AttentionCase{"adaptive", false, false},
                      AttentionCase{"ssmax:s=0.8", true, false}, AttentionCase{"ssmax:s=0.8", false, true},
                      AttentionCase{"entmax15", true, false}, AttentionCase{"entmax15", false, true},
                      AttentionCase{"entmax:alpha=1.3", true, false},
                      AttentionCase{"asentmax:b=0.7:gamma=0.5", false, false},
                      AttentionCase{"ssmax:s=0.8", true, true, 130}),
    [](const auto& info) {
      std::string name = info.param.normaliser + (info.param.causal ? "_causal" : "_encoder") +
                         (info.param.alibi ? "_alibi" : "") + "_n" + std::to_string(info.param.length);
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

// The whole model: loss = mean token cross-entropy (some targets ignored) of a small model with
// random weights (LayerNorm gains and biases too), gradient of every parameter.
struct ModelCase {
  Positional positional;
  std::string normaliser;
  bool causal = true, layer_norm = true, tied = true;
};

// gtest prints a parameter without PrintTo as a byte dump, which ctest then shows in the test's name.
void PrintTo(const ModelCase& c, std::ostream* os) {
  *os << positional_name(c.positional) << ' ' << c.normaliser << (c.causal ? "" : " encoder")
      << (c.layer_norm ? "" : " noLN") << (c.tied ? "" : " untied");
}

class ModelGradients : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ModelGradients, MatchFiniteDifferences) {
  const ModelCase& mc = GetParam();
  TransformerConfig c;
  c.layers = 2;
  c.heads = 2;
  c.d_model = 8;
  c.vocab = 7;
  c.max_length = 8;
  c.train_length = 6;
  c.positional = mc.positional;
  c.normaliser = mc.normaliser;
  c.causal = mc.causal;
  c.layer_norm = mc.layer_norm;
  c.tied = mc.tied;
  const Transformer model(c);
  const std::size_t B = 2, n = 6, P = model.parameter_count();
  Vec params(P);
  init_parameters(model.layout(), params.data(), 17);
  std::mt19937_64 rng(6);
  const Vec noise = random_normal(P, rng, 0.2);
  for (std::size_t i = 0; i < P; ++i) params[i] += noise[i];
  std::vector<std::int32_t> tokens(B * n), targets(B * n);
  for (std::size_t i = 0; i < B * n; ++i) {
    tokens[i] = std::int32_t((i * 5 + 3) % c.vocab);
    targets[i] = i % 4 == 1 ? kIgnoreTarget : std::int32_t((i * 3 + 1) % c.vocab);
  }
  auto loss = [&] {
    Vec logits(B * n * c.vocab);
    transformer_forward(model, params.data(), tokens.data(), B, n, logits.data());
    const TokenLoss t = token_cross_entropy<double>(nullptr, logits.data(), targets.data(), B * n, c.vocab, 1.0);
    return t.loss_sum / double(t.count);
  };
  Vec logits(B * n * c.vocab), dlogits(logits.size()), grads(P, 0.0);
  ForwardCache<double> cache;
  transformer_forward(model, params.data(), tokens.data(), B, n, logits.data(), &cache);
  const TokenLoss t = token_cross_entropy<double>(nullptr, logits.data(), targets.data(), B * n, c.vocab, 1.0);
  token_cross_entropy(dlogits.data(), logits.data(), targets.data(), B * n, c.vocab, 1.0 / double(t.count));
  transformer_backward(model, params.data(), tokens.data(), dlogits.data(), cache, grads.data());
  // Tensor by tensor, so that a wrong one is named.
  for (const auto& info : model.layout().params.tensors()) {
    std::vector<std::size_t> which;
    for (std::size_t j = 0; j < info.size(); ++j) which.push_back(info.offset + j);
    if (info.name == "position") which.resize(n * c.d_model);   // rows beyond the input get no gradient
    const Vec numeric = numeric_gradient(params.data(), which, loss);
    EXPECT_TRUE(gradient_agrees(grads.data(), which, numeric, kTolerance, info.name));
  }
}

std::vector<ModelCase> model_cases() {
  std::vector<ModelCase> out;
  for (const std::string& name : positional_names())
    for (const std::string& spec : {"softmax", "adaptive", "ssmax:s=learn", "entmax15"})
      out.push_back(ModelCase{parse_positional(name), spec});
  out.push_back(ModelCase{Positional::Rope, "entmax:alpha=learn", false, true, false});
  out.push_back(ModelCase{Positional::Alibi, "asentmax:b=learn:gamma=learn", true, false, true});
  out.push_back(ModelCase{Positional::Index, "ssmax:s=learn", false, false, false});
  // Per query (w ≠ 0 from the noise): the gradient reaches c, w and, through each query's hidden
  // state, every tensor before the attention.
  out.push_back(ModelCase{Positional::Rope, "asentmax_query:b=learn:gamma=learn"});
  out.push_back(ModelCase{Positional::None, "asentmax_query:b=learn:gamma=learn", false, false, true});
  out.push_back(ModelCase{Positional::Alibi, "asentmax_query:b=learn:gamma=0.5", true, true, false});
  out.push_back(ModelCase{Positional::Learned, "adaptive", false, true, false});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Schemes, ModelGradients, ::testing::ValuesIn(model_cases()), [](const auto& info) {
  std::string name = positional_name(info.param.positional) + "_" + info.param.normaliser +
                     (info.param.causal ? "" : "_encoder") + (info.param.layer_norm ? "" : "_noLN") +
                     (info.param.tied ? "" : "_untied");
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
});

}  // namespace

namespace {

// The float GELU (vectorised erf and exp) agrees with the double one to float precision, forward and
// backward, tails included, and does not depend on where a value sits in the array.
TEST(TransformerGelu, FloatMatchesDouble) {
  const std::size_t n = 203;   // not a multiple of the SIMD width
  std::vector<double> xd(n), yd(n), gd(n), dyd(n, 1.0);
  std::vector<float> xf(n), yf(n), gf(n), dyf(n, 1.0f);
  for (std::size_t i = 0; i < n; ++i) xf[i] = float(-9.0 + 0.09 * double(i)), xd[i] = double(xf[i]);
  gelu_forward(yd.data(), xd.data(), n);
  gelu_forward(yf.data(), xf.data(), n);
  gelu_backward(gd.data(), dyd.data(), xd.data(), n);
  gelu_backward(gf.data(), dyf.data(), xf.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_NEAR(yf[i], yd[i], 4e-7 * std::max(1.0, std::abs(yd[i]))) << xd[i];
    EXPECT_NEAR(gf[i], gd[i], 4e-7 * std::max(1.0, std::abs(gd[i]))) << xd[i];
  }
  std::vector<float> shifted(n - 3), ys(n - 3);
  std::copy(xf.begin() + 3, xf.end(), shifted.begin());
  gelu_forward(ys.data(), shifted.data(), n - 3);
  for (std::size_t i = 0; i + 3 < n; ++i) EXPECT_EQ(ys[i], yf[i + 3]);
}

// The training forward keeps GELU′ beside GELU (gelu_forward_with_slope): the same bits as
// gelu_forward, and dy·slope the same bits as gelu_backward, in float and in double.
template <class T>
void expect_slope_matches_backward() {
  const std::size_t n = 203;
  std::vector<T> x(n), y(n), dy(n), y2(n), slope(n), dx(n), dx2(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = T(-9.0 + 0.09 * double(i));
    dy[i] = T(std::sin(double(i)));
  }
  gelu_forward(y.data(), x.data(), n);
  gelu_backward(dx.data(), dy.data(), x.data(), n);
  gelu_forward_with_slope(y2.data(), slope.data(), x.data(), n);
  gelu_backward_from_slope(dx2.data(), dy.data(), slope.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(y2[i], y[i]) << x[i];
    EXPECT_EQ(dx2[i], dx[i]) << x[i];
  }
}

TEST(TransformerGelu, SlopeKeptByTheForwardEqualsTheBackward) {
  expect_slope_matches_backward<float>();
  expect_slope_matches_backward<double>();
}

}  // namespace
