// Training the transformer: bit-identical for any thread count (learned scalars, and parameters
// learned per query), the loss falls on a learnable task,
// learned normaliser scalars start where their parameterisation says, train and escape weight
// decay; the learned-scalar spec syntax.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "nn/adamw.hpp"
#include "normalisers/learned_scalars.hpp"
#include "transformer/trainer.hpp"

namespace {

using namespace sharp::transformer;

TrainerConfig tiny(const std::string& normaliser = "softmax") {
  TrainerConfig c;
  c.model.layers = 2;
  c.model.heads = 2;
  c.model.d_model = 16;
  c.model.vocab = 8;
  c.model.normaliser = normaliser;
  c.model.train_length = 24;
  c.schedule.kind = sharp::nn::ScheduleKind::Constant;
  c.schedule.lr = 3e-3;
  c.optimiser.weight_decay = 0.01;
  return c;
}

// Task: predict the token two places back (a head must attend to a fixed offset).
void make_batch(std::vector<std::int32_t>& in, std::vector<std::int32_t>& out, std::size_t B, std::size_t n,
                std::uint64_t step) {
  in.resize(B * n);
  out.resize(B * n);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < n; ++t) {
      std::uint64_t h = (step * 1000003 + b * 7919 + t) * 0x9e3779b97f4a7c15ULL;
      h ^= h >> 29;
      in[b * n + t] = std::int32_t(h % 8);
      out[b * n + t] = t >= 2 ? in[b * n + t - 2] : kIgnoreTarget;
    }
}

// Three steps with 1, 2 and 3 threads: the same weights and loss, bit for bit.
void expect_same_training_for_any_thread_count(const std::string& spec) {
  std::vector<std::vector<float>> finals;
  std::vector<double> losses;
  for (int threads : {1, 2, 3}) {
    Trainer trainer(tiny(spec), 11, threads);
    std::vector<std::int32_t> in, out;
    double loss = 0;
    for (std::uint64_t s = 0; s < 3; ++s) {
      make_batch(in, out, 5, 100, s);   // 2 sequences per chunk: 3 chunks, the last one short
      loss = trainer.step(in.data(), out.data(), 5, 100).loss;
    }
    finals.push_back(trainer.params());
    losses.push_back(loss);
  }
  EXPECT_EQ(finals[0], finals[1]);
  EXPECT_EQ(finals[0], finals[2]);
  EXPECT_EQ(losses[0], losses[1]);
}

TEST(TransformerTraining, BitIdenticalForAnyThreadCount) {
  for (const char* spec : {"ssmax:s=learn", "asentmax_query:b=learn:gamma=learn"}) {
    SCOPED_TRACE(spec);
    expect_same_training_for_any_thread_count(spec);
  }
}

// ASEntmax learned per query (docs/science.md#asentmax): c and w leave their start (0), and w is not
// decayed (it comes after decay_size).
TEST(TransformerTraining, PerQueryParametersMove) {
  Trainer trainer(tiny("asentmax_query:b=learn:gamma=learn"), 11, 2);
  std::vector<std::int32_t> in, out;
  for (std::uint64_t s = 0; s < 3; ++s) {
    make_batch(in, out, 5, 100, s);
    trainer.step(in.data(), out.data(), 5, 100);
  }
  const TransformerLayout& L = trainer.model().layout();
  EXPECT_EQ(L.decay_size, L.scalars[0][0]);
  for (std::size_t l = 0; l < 2; ++l)
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_NE(trainer.params()[L.scalars[l][i]], 0.0f) << "c of layer " << l << ", " << L.normaliser.learned[i];
      std::size_t moved = 0;
      for (std::size_t j = 0; j < 2 * 16; ++j) moved += trainer.params()[L.query_weights[l][i] + j] != 0.0f;
      EXPECT_EQ(moved, 2u * 16u) << "w of layer " << l << ", " << L.normaliser.learned[i];
    }
}

// A causal chunk stops at its last counted target (trainer.hpp): the same samples padded to 100 or to
// 120 positions (two sequences per chunk either way) train to the same bits; the rows a chunk keeps
// are its longest sample's, whatever the batch's padded length.
TEST(TransformerTraining, TrailingPadsChangeNothing) {
  const std::size_t B = 5, lengths[B] = {60, 97, 37, 80, 99};
  auto padded = [&](std::size_t n, std::uint64_t step, std::vector<std::int32_t>& in, std::vector<std::int32_t>& out) {
    std::vector<std::int32_t> full_in, full_out;
    make_batch(full_in, full_out, B, 100, step);
    in.assign(B * n, 3);
    out.assign(B * n, kIgnoreTarget);
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < lengths[b]; ++t) {
        in[b * n + t] = full_in[b * 100 + t];
        out[b * n + t] = full_out[b * 100 + t];
      }
  };
  std::vector<std::vector<float>> finals;
  std::vector<double> losses;
  for (std::size_t n : {100, 120}) {
    Trainer trainer(tiny("adaptive"), 7, n == 100 ? 1 : 2);
    std::vector<std::int32_t> in, out;
    double loss = 0;
    for (std::uint64_t s = 0; s < 2; ++s) {
      padded(n, s, in, out);
      loss = trainer.step(in.data(), out.data(), B, n).loss;
    }
    finals.push_back(trainer.params());
    losses.push_back(loss);
  }
  EXPECT_EQ(finals[0], finals[1]);
  EXPECT_EQ(losses[0], losses[1]);
}

TEST(TransformerTraining, LossFallsAndLearnedScalarsMove) {
  Trainer trainer(tiny("ssmax:s=learn"), 3, 2);
  const TransformerLayout& layout = trainer.model().layout();
  const auto& s_tensor = layout.params.find("layers.0.norm.s");
  EXPECT_EQ(s_tensor.offset, layout.decay_size);   // learned scalars come last and are not decayed
  EXPECT_FLOAT_EQ(trainer.params()[s_tensor.offset], float(1.0 / std::log(24.0)));
  std::vector<std::int32_t> in, out;
  double first = 0, last = 0;
  for (std::uint64_t s = 0; s < 120; ++s) {
    make_batch(in, out, 8, 24, s);
    const StepStats st = trainer.step(in.data(), out.data(), 8, 24);
    if (s == 0) first = st.loss;
    last = st.loss;
    ASSERT_TRUE(std::isfinite(st.loss));
    EXPECT_EQ(st.targets, 8 * 22);
  }
  // Tied N(0, 1) embeddings make the initial logits large (std ≈ √d), so the first loss is far above ln 8.
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;
  EXPECT_LT(last, std::log(8.0)) << "first " << first << " last " << last;
  EXPECT_NE(trainer.params()[s_tensor.offset], float(1.0 / std::log(24.0)));
}

TEST(TransformerTraining, RefusesABatchWithoutTargets) {
  Trainer trainer(tiny(), 1, 1);
  std::vector<std::int32_t> in(16, 1), out(16, kIgnoreTarget);
  EXPECT_THROW(trainer.step(in.data(), out.data(), 2, 8), sharp::BadInput);
}

TEST(AdamWDecaySize, NoDecayBeyondIt) {
  sharp::nn::AdamWConfig c;
  c.weight_decay = 0.5;
  c.decay_size = 3;
  sharp::nn::AdamW opt(c, 5);
  std::vector<float> p = {1, 1, 1, 1, 1}, g(5, 0.0f);
  opt.step(p.data(), g.data(), 0.1);
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(p[i], 0.95f);
  for (int i = 3; i < 5; ++i) EXPECT_EQ(p[i], 1.0f);
}

TEST(LearnedScalars, SpecSyntaxAndParameterisation) {
  using namespace sharp::norm;
  const LearnableSpec s = parse_learnable_spec("ssmax:s=learn", 16);
  ASSERT_EQ(s.learned, std::vector<std::string>{"s"});
  EXPECT_DOUBLE_EQ(s.spec.param("s"), 1.0 / std::log(16.0));
  const LearnableSpec a = parse_learnable_spec("entmax:alpha=learn", 16);
  EXPECT_DOUBLE_EQ(a.spec.param("alpha"), 1.505);
  const LearnableSpec as = parse_learnable_spec("asentmax:b=learn:gamma=learn", 16);
  ASSERT_EQ(as.learned, (std::vector<std::string>{"b", "gamma"}));
  EXPECT_EQ(as.index, (std::vector<std::size_t>{0, 1}));
  EXPECT_DOUBLE_EQ(as.spec.param("b"), std::log(2.0));
  EXPECT_DOUBLE_EQ(as.spec.param("gamma"), 0.0);
  EXPECT_DOUBLE_EQ(as.spec.param("delta"), 1.0);
  const LearnableSpec half = parse_learnable_spec("asentmax:b=0.3:gamma=learn", 16);
  EXPECT_EQ(half.learned, std::vector<std::string>{"gamma"});
  EXPECT_DOUBLE_EQ(half.spec.param("b"), 0.3);
  EXPECT_FALSE(parse_learnable_spec("softmax:beta=2", 16).any());
  // Bound back to fixed specs: α in (1.01, 2), b > 0, γ in (−2, 2).
  const double raw[2] = {-3.0, 0.4};
  const Spec bound = bind(as, raw);
  EXPECT_DOUBLE_EQ(bound.param("b"), std::log1p(std::exp(-3.0)));
  EXPECT_DOUBLE_EQ(bound.param("gamma"), 2.0 * std::tanh(0.4));
  const double big = 40.0;
  EXPECT_LT(bind(a, &big).param("alpha"), 2.0 + 1e-12);
  EXPECT_THROW(parse_learnable_spec("softmax:beta=learn", 16), sharp::BadInput);
  EXPECT_THROW(parse_learnable_spec("entmax15:alpha=learn", 16), sharp::BadInput);
  EXPECT_THROW(parse_learnable_spec("ssmax:s=learn", 1), sharp::BadInput);
  EXPECT_THROW(parse_learnable_spec("ssmax:s=lern", 16), sharp::BadInput);
  // Derivatives against central differences.
  for (std::size_t i = 0; i < as.learned.size(); ++i)
    for (double r : {-2.0, 0.0, 1.3}) {
      const double h = 1e-6;
      const double fd = (learned_value(as, i, r + h) - learned_value(as, i, r - h)) / (2 * h);
      EXPECT_NEAR(learned_derivative(as, i, r), fd, 1e-8);
    }
}

TEST(LearnedScalars, ModelBindsEachHead) {
  TransformerConfig c = tiny("asentmax:b=learn:gamma=0.5").model;
  const Transformer model(c);
  ASSERT_TRUE(model.learns_scalars());
  std::vector<double> p(model.parameter_count());
  init_parameters(model.layout(), p.data(), 1);
  p[model.layout().scalars[1][0] + 1] = 2.0;   // layer 1, head 1: b′ = 2
  const auto heads = model.bind(p.data());
  const sharp::norm::Spec s00 = sharp::norm::parse_spec(heads->spec(0, 0));
  EXPECT_DOUBLE_EQ(s00.param("b"), std::log(2.0));
  const sharp::norm::Spec s11 = sharp::norm::parse_spec(heads->spec(1, 1));
  EXPECT_DOUBLE_EQ(s11.param("b"), std::log1p(std::exp(2.0)));
  EXPECT_DOUBLE_EQ(s11.param("gamma"), 0.5);
}

}  // namespace
