// The transformer's structure and forward pass beyond the numpy comparison: parameter layout and
// initialisation, bad input, float against double, bit-identical results for any thread count,
// the observer's contract, named-array round trips.
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "transformer/model.hpp"
#include "transformer/blockwise_attention.hpp"
#include "transformer/decoder.hpp"
#include "transformer/model_arrays.hpp"
#include "transformer/positional.hpp"

namespace {

using namespace sharp::transformer;

TransformerConfig small_config(Positional p = Positional::None) {
  TransformerConfig c;
  c.layers = 2;
  c.heads = 2;
  c.d_model = 16;
  c.vocab = 13;
  c.positional = p;
  c.max_length = 100;
  return c;
}

std::vector<std::int32_t> tokens_for(std::size_t count, std::size_t vocab) {
  std::vector<std::int32_t> t(count);
  for (std::size_t i = 0; i < count; ++i) t[i] = std::int32_t((i * 7 + i / 5) % vocab);
  return t;
}

TEST(TransformerLayout, DefaultsAndInitialisation) {
  TransformerConfig c;   // the documented defaults: 4 × 4, d 128, vocab 64, causal, NoPE
  EXPECT_EQ(c.layers, 4u);
  EXPECT_EQ(c.heads, 4u);
  EXPECT_EQ(c.d_model, 128u);
  EXPECT_EQ(c.vocab, 64u);
  EXPECT_TRUE(c.causal);
  EXPECT_EQ(c.positional, Positional::None);
  c.init_scale = 2.0;
  const TransformerLayout layout = make_layout(c);
  std::vector<double> p(layout.params.size());
  init_parameters(layout, p.data(), 7);
  auto moments = [&](const std::string& name) {
    const auto& t = layout.params.find(name);
    double s = 0, s2 = 0;
    for (std::size_t j = 0; j < t.size(); ++j) s += p[t.offset + j], s2 += p[t.offset + j] * p[t.offset + j];
    return std::pair{s / double(t.size()), std::sqrt(s2 / double(t.size()))};
  };
  EXPECT_NEAR(moments("embedding").second, 1.0, 0.03);
  EXPECT_NEAR(moments("layers.0.attn.qkv.weight").second, 2.0 / std::sqrt(128.0), 0.01);
  EXPECT_NEAR(moments("layers.3.mlp.out.weight").second, 2.0 / std::sqrt(512.0), 0.005);
  EXPECT_EQ(moments("layers.1.ln1.gain").first, 1.0);
  EXPECT_EQ(moments("layers.1.ln1.gain").second, 1.0);
  EXPECT_EQ(moments("final_ln.bias").second, 0.0);
  EXPECT_EQ(moments("layers.2.mlp.in.bias").second, 0.0);
  // The same seed gives the same weights; another seed other weights.
  std::vector<double> again(p.size()), other(p.size());
  init_parameters(layout, again.data(), 7);
  init_parameters(layout, other.data(), 8);
  EXPECT_EQ(again, p);
  EXPECT_NE(other, p);
}

TEST(TransformerLayout, TensorsAppendedLaterKeepEarlierWeights) {
  TransformerConfig tied = small_config(), untied = small_config();
  untied.tied = false;
  const TransformerLayout a = make_layout(tied), b = make_layout(untied);
  ASSERT_EQ(b.params.size(), a.params.size() + tied.vocab * tied.d_model);
  std::vector<float> pa(a.params.size()), pb(b.params.size());
  init_parameters(a, pa.data(), 3);
  init_parameters(b, pb.data(), 3);
  EXPECT_TRUE(std::equal(pa.begin(), pa.end(), pb.begin()));
}

TEST(TransformerConfig, BadInputIsRefused) {
  TransformerConfig c = small_config();
  c.heads = 3;
  EXPECT_THROW(make_layout(c), sharp::BadInput);
  c = small_config(Positional::Rope);
  c.heads = 16;   // d_head 1: odd
  EXPECT_THROW(make_layout(c), sharp::BadInput);
  c = small_config();
  c.init_scale = 0;
  EXPECT_THROW(make_layout(c), sharp::BadInput);
  c = small_config();
  c.normaliser = "softmax:bogus=1";
  EXPECT_THROW(make_layout(c), sharp::BadInput);
  EXPECT_THROW(parse_positional("absolute"), sharp::BadInput);
  for (const std::string& name : positional_names()) EXPECT_EQ(positional_name(parse_positional(name)), name);

  c = small_config(Positional::Learned);
  c.max_length = 8;
  const Transformer model(c);
  std::vector<float> p(model.parameter_count());
  init_parameters(model.layout(), p.data(), 1);
  std::vector<std::int32_t> t = tokens_for(9, c.vocab);
  std::vector<float> logits(9 * c.vocab);
  EXPECT_THROW(transformer_forward(model, p.data(), t.data(), 1, 9, logits.data()), sharp::BadInput);
  EXPECT_NO_THROW(transformer_forward(model, p.data(), t.data(), 1, 8, logits.data()));
  t[3] = std::int32_t(c.vocab);
  EXPECT_THROW(transformer_forward(model, p.data(), t.data(), 1, 8, logits.data()), sharp::BadInput);
}

// Float (training, inference) agrees with double to float precision, for every positional scheme.
TEST(TransformerForward, FloatMatchesDouble) {
  for (const std::string& name : positional_names()) {
    const Transformer model(small_config(parse_positional(name)));
    std::vector<double> pd(model.parameter_count());
    init_parameters(model.layout(), pd.data(), 5);
    const std::vector<float> pf(pd.begin(), pd.end());
    const std::size_t B = 2, n = 70, V = model.config().vocab;
    const auto t = tokens_for(B * n, V);
    std::vector<double> ld(B * n * V);
    std::vector<float> lf(B * n * V);
    transformer_forward(model, pd.data(), t.data(), B, n, ld.data());
    transformer_forward(model, pf.data(), t.data(), B, n, lf.data());
    double worst = 0;
    for (std::size_t i = 0; i < ld.size(); ++i) worst = std::max(worst, std::abs(ld[i] - lf[i]) / std::max(1.0, std::abs(ld[i])));
    EXPECT_LT(worst, 1e-4) << name;
  }
}

TEST(TransformerForward, BitIdenticalForAnyThreadCount) {
  TransformerConfig c = small_config(Positional::Rope);
  c.causal = false;
  c.normaliser = "adaptive";
  c.d_model = 32;   // with n = 300, large enough for every stage to run in parallel (parallel_items.hpp)
  const Transformer model(c);
  std::vector<float> p(model.parameter_count());
  init_parameters(model.layout(), p.data(), 9);
  const std::size_t B = 3, n = 300, V = c.vocab;
  const auto t = tokens_for(B * n, V);
  std::vector<std::vector<float>> out;
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    out.emplace_back(B * n * V);
    transformer_forward(model, p.data(), t.data(), B, n, out.back().data());
  }
  omp_set_num_threads(saved);
  EXPECT_EQ(out[0], out[1]);
  EXPECT_EQ(out[0], out[2]);
}

// Every (sequence, layer, head, row) is observed once; probabilities, when asked for, sum to 1 over
// the row's keys and agree with the statistics.
class CheckingObserver : public AttentionObserver {
 public:
  explicit CheckingObserver(std::size_t slots) : seen(slots, 0) {}
  bool wants_probabilities() const override { return true; }
  void observe(const AttentionTile<float>& t) override {
    for (std::size_t r = 0; r < t.rows; ++r) {
      const std::size_t i = t.first_row + r;
#pragma omp atomic
      seen[((t.sequence * 2 + t.layer) * 2 + t.head) * 100 + i] += 1;
      const AttentionRowStats& s = t.stats[r];
      const float* p = t.probabilities + r * t.stride;
      double sum = 0, mx = 0;
      for (std::size_t j = 0; j < s.keys; ++j) sum += p[j], mx = std::max(mx, double(p[j]));
      if (s.keys != i + 1 || std::abs(sum - 1) > 1e-5 || mx != s.alpha_max || s.logit_max < s.logit_min ||
          s.entropy < -1e-7 || s.entropy > std::log(double(s.keys)) + 1e-6 || s.beta != 1.0)
#pragma omp atomic
        bad += 1;
    }
  }
  std::vector<int> seen;
  int bad = 0;
};

TEST(TransformerForward, ObserverSeesEveryRowOnce) {
  const Transformer model(small_config(Positional::Sinusoidal));
  std::vector<float> p(model.parameter_count());
  init_parameters(model.layout(), p.data(), 2);
  const std::size_t B = 2, n = 100;
  const auto t = tokens_for(B * n, model.config().vocab);
  CheckingObserver obs(B * 2 * 2 * n);
  transformer_forward(model, p.data(), t.data(), B, n, static_cast<float*>(nullptr), nullptr, &obs);
  for (int s : obs.seen) ASSERT_EQ(s, 1);
  EXPECT_EQ(obs.bad, 0);
}

TEST(TransformerArrays, RoundTripAndErrors) {
  const Transformer model(small_config(Positional::Learned));
  std::vector<float> p(model.parameter_count());
  init_parameters(model.layout(), p.data(), 4);
  const auto record = model_arrays(model.layout(), p.data());
  EXPECT_EQ(record.size(), model.layout().params.tensors().size());
  EXPECT_EQ(record.at("param.position").shape, (std::vector<std::size_t>{100, 16}));
  // As the result reader's arrays_with_prefix(id, "param.") returns them: keyed without the prefix.
  std::map<std::string, sharp::ShapedArray> arrays;
  for (const auto& [name, a] : record) arrays[name.substr(kParamPrefix.size())] = a;
  EXPECT_EQ(params_from_arrays<float>(model.layout(), arrays), p);
  auto wrong = arrays;
  wrong.at("layers.1.attn.qkv.weight").shape = {16, 48};
  EXPECT_THROW(params_from_arrays<float>(model.layout(), wrong), sharp::BadInput);
  wrong = arrays;
  wrong.erase("embedding");
  EXPECT_THROW(params_from_arrays<float>(model.layout(), wrong), sharp::BadInput);
  wrong = arrays;
  std::get<std::vector<double>>(wrong.at("embedding").data)[3] = 0.1;   // not a float32 value
  EXPECT_THROW(params_from_arrays<float>(model.layout(), wrong), sharp::NumericError);
  EXPECT_NO_THROW(params_from_arrays<double>(model.layout(), wrong));
}

}  // namespace

namespace {

// Blockwise attention (online row statistics) equals query-tiled attention (each row through the
// normaliser): outputs and every row statistic, across tiles and key blocks.
struct CollectAll : AttentionObserver {
  explicit CollectAll(std::size_t slots) : stats(slots) {}
  template <class T>
  void keep(const AttentionTile<T>& t) {
    for (std::size_t r = 0; r < t.rows; ++r)
      stats[(t.sequence * 2 + t.head) * 300 + t.first_row + r] = t.stats[r];
  }
  void observe(const AttentionTile<double>& t) override { keep(t); }
  void observe(const AttentionTile<float>& t) override { keep(t); }
  std::vector<AttentionRowStats> stats;
};

// A NaN or infinite logit is an error, as in the normalisers, not a silent NaN output.
template <class T>
void expect_non_finite_logits_throw() {
  auto softmax = sharp::norm::make_normaliser("softmax");
  AttentionHeads one;
  one.normalisers = {softmax.get()};
  for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
    std::vector<T> qkv(300 * 3 * 4, T(0.5)), out(300 * 4);
    qkv[280 * 12 + 4] = bad;   // the key of token 280
    EXPECT_THROW(attention_forward_blockwise(out.data(), qkv.data(), AttentionShape{1, 300, 1, 4, true}, one, nullptr),
                 sharp::NumericError);
  }
}

TEST(BlockwiseAttention, EqualsQueryTiledAttention) {
  for (const std::string spec : {"softmax", "softmax:beta=2.5", "ssmax:s=0.4", "adaptive"})
    for (bool causal : {true, false})
      for (bool alibi : {false, true}) {
        SCOPED_TRACE(spec + (causal ? " causal" : " encoder") + (alibi ? " alibi" : ""));
        const AttentionShape shape{2, 300, 2, 8, causal};   // 5 query tiles, 2 key blocks
        std::vector<double> qkv(shape.batch * shape.length * 3 * shape.width());
        for (std::size_t i = 0; i < qkv.size(); ++i) qkv[i] = 2.0 * std::sin(0.37 * double(i) + 0.001 * double(i * i));
        auto normaliser = sharp::norm::make_normaliser(spec);
        AttentionHeads heads;
        heads.normalisers = {normaliser.get(), normaliser.get()};
        if (alibi) heads.alibi = alibi_slopes(2);
        const std::size_t out_size = shape.batch * shape.length * shape.width();
        std::vector<double> naive(out_size), blocked(out_size);
        CollectAll a(2 * 2 * 300), b(2 * 2 * 300);
        attention_forward(naive.data(), qkv.data(), shape, heads, nullptr, &a);
        attention_forward_blockwise(blocked.data(), qkv.data(), shape, heads, &b);
        double worst = 0;
        for (std::size_t i = 0; i < out_size; ++i)
          worst = std::max(worst, std::abs(naive[i] - blocked[i]) / std::max(1.0, std::abs(naive[i])));
        EXPECT_LT(worst, 1e-12);
        double worst_stat = 0, worst_entropy = 0;
        for (std::size_t i = 0; i < a.stats.size(); ++i) {
          const AttentionRowStats &x = a.stats[i], &y = b.stats[i];
          ASSERT_EQ(x.keys, y.keys);
          EXPECT_EQ(x.logit_max, y.logit_max);
          EXPECT_EQ(x.logit_min, y.logit_min);
          for (auto [u, w] : {std::pair{x.alpha_max, y.alpha_max}, {x.alpha_min, y.alpha_min}, {x.beta, y.beta}})
            worst_stat = std::max(worst_stat, std::abs(u - w) / std::max(1e-300, std::abs(u)));
          // ln s − t/s carries the absolute rounding of s (≈1e-16) however small H is.
          worst_entropy = std::max(worst_entropy, std::abs(x.entropy - y.entropy) / std::max(1e-4, x.entropy));
          worst_entropy = std::max(worst_entropy, std::abs(x.entropy_before_beta - y.entropy_before_beta) /
                                                     std::max(1e-4, x.entropy_before_beta));
        }
        EXPECT_LT(worst_stat, 1e-11);
        EXPECT_LT(worst_entropy, 1e-11);
      }
  expect_non_finite_logits_throw<double>();
  auto entmax = sharp::norm::make_normaliser("entmax15");
  AttentionHeads heads;
  heads.normalisers = {entmax.get()};
  std::vector<double> qkv(3 * 4), out(4);
  EXPECT_THROW(attention_forward_blockwise(out.data(), qkv.data(), AttentionShape{1, 1, 1, 4, true}, heads, nullptr),
               sharp::BadInput);
}

// Float models weigh keys in float exp lanes (core/simd_exp.hpp) with the row statistics in
// double: against query-tiled attention in double on the same (float) inputs, outputs and statistics
// agree to float rounding, and a NaN or infinite logit is still an error.
TEST(BlockwiseAttention, FloatLanesEqualDoubleAttention) {
  double worst_out = 0, worst_stat = 0, worst_entropy = 0;
  for (const std::string spec : {"softmax", "softmax:beta=2.5", "ssmax:s=0.4", "adaptive"})
    for (bool causal : {true, false})
      for (bool alibi : {false, true}) {
        SCOPED_TRACE(spec + (causal ? " causal" : " encoder") + (alibi ? " alibi" : ""));
        const AttentionShape shape{2, 300, 2, 8, causal};   // 5 query tiles, 2 key blocks
        std::vector<float> qkv(shape.batch * shape.length * 3 * shape.width());
        for (std::size_t i = 0; i < qkv.size(); ++i)
          qkv[i] = float(2.0 * std::sin(0.37 * double(i) + 0.001 * double(i * i)));
        const std::vector<double> qkv_d(qkv.begin(), qkv.end());
        auto normaliser = sharp::norm::make_normaliser(spec);
        AttentionHeads heads;
        heads.normalisers = {normaliser.get(), normaliser.get()};
        if (alibi) heads.alibi = alibi_slopes(2);
        const std::size_t out_size = shape.batch * shape.length * shape.width();
        std::vector<double> naive(out_size);
        std::vector<float> blocked(out_size);
        CollectAll a(2 * 2 * 300), b(2 * 2 * 300);
        attention_forward(naive.data(), qkv_d.data(), shape, heads, nullptr, &a);
        attention_forward_blockwise(blocked.data(), qkv.data(), shape, heads, &b);
        for (std::size_t i = 0; i < out_size; ++i)
          worst_out = std::max(worst_out, std::abs(naive[i] - double(blocked[i])) / std::max(1.0, std::abs(naive[i])));
        for (std::size_t i = 0; i < a.stats.size(); ++i) {
          const AttentionRowStats &x = a.stats[i], &y = b.stats[i];
          ASSERT_EQ(x.keys, y.keys);
          ASSERT_EQ(x.support, y.support);
          for (auto [u, w] : {std::pair{x.logit_max, y.logit_max}, {x.logit_min, y.logit_min},
                              {x.alpha_max, y.alpha_max}, {x.beta, y.beta}})
            worst_stat = std::max(worst_stat, std::abs(u - w) / std::max(1e-30, std::abs(u)));
          // α_min = e^{−β·δ}/s carries the relative error of β (adaptive's β(H)) times β·δ.
          const double beta_delta = x.beta * (x.logit_max - x.logit_min);
          worst_stat = std::max(worst_stat, std::abs(std::log(x.alpha_min / y.alpha_min)) / (1.0 + beta_delta));
          worst_entropy = std::max(worst_entropy, std::abs(x.entropy - y.entropy) / std::max(1.0, x.entropy));
          worst_entropy = std::max(worst_entropy, std::abs(x.entropy_before_beta - y.entropy_before_beta) /
                                                     std::max(1.0, x.entropy_before_beta));
        }
      }
  EXPECT_LT(worst_out, 1e-5);   // as cached decoding in float
  EXPECT_LT(worst_stat, 1e-5);
  EXPECT_LT(worst_entropy, 1e-5);
  std::printf("float lanes against double: output %.2e, statistics %.2e, entropy %.2e (relative)\n", worst_out,
              worst_stat, worst_entropy);
  expect_non_finite_logits_throw<float>();
}

}  // namespace

namespace {

// Cached decoding equals the full forward pass at every position, for every positional scheme and a
// whole-row normaliser too: double to 1e-12, float to 1e-5.
template <class T>
double worst_decode_difference(const TransformerConfig& c) {
  const Transformer model(c);
  std::vector<double> pd(model.parameter_count());
  init_parameters(model.layout(), pd.data(), 21);
  const std::vector<T> p(pd.begin(), pd.end());
  const std::size_t n = 70, V = c.vocab;
  const auto tokens = tokens_for(n, V);
  std::vector<T> full(n * V), step(V);
  transformer_forward(model, p.data(), tokens.data(), 1, n, full.data());
  Decoder<T> decoder(model, p.data(), n);
  double worst = 0;
  for (std::size_t t = 0; t < n; ++t) {
    decoder.push(tokens[t], step.data());
    for (std::size_t v = 0; v < V; ++v)
      worst = std::max(worst, std::abs(double(step[v]) - double(full[t * V + v])) / std::max(1.0, std::abs(double(full[t * V + v]))));
  }
  EXPECT_THROW(decoder.push(0, step.data()), sharp::BadInput);
  return worst;
}

TEST(Decoder, CachedDecodingEqualsFullForward) {
  for (const std::string& name : positional_names())
    for (const std::string spec : {"softmax", "adaptive", "entmax15"}) {
      TransformerConfig c = small_config(parse_positional(name));
      c.normaliser = spec;
      SCOPED_TRACE(name + " " + spec);
      EXPECT_LT(worst_decode_difference<double>(c), 1e-12);
      EXPECT_LT(worst_decode_difference<float>(c), 1e-5);
    }
  TransformerConfig encoder = small_config();
  encoder.causal = false;
  const Transformer model(encoder);
  std::vector<float> p(model.parameter_count());
  EXPECT_THROW(Decoder<float>(model, p.data(), 8), sharp::BadInput);
}

}  // namespace
