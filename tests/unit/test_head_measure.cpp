// lib/head_measure: per-head summaries from hand-made rows (half rows, last row, the lemma check
// catching a row outside its bounds), the layer-input hook seeing every row, the weight-norm
// bound holding on every head of random transformers (ALiBi included), and the certificate (the
// bound with LayerNorm's analytic R) not depending on the input.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "head_measure/head_summary.hpp"
#include "head_measure/head_weight_bound.hpp"
#include "head_measure/row_recorder.hpp"
#include "normalisers/normaliser.hpp"
#include "transformer/attention.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/model.hpp"

namespace {

using namespace sharp;
using transformer::AttentionRowStats;

AttentionRowStats row(double zmax, double zmin, double amax, double amin, double h, std::uint32_t k, double beta = 1) {
  AttentionRowStats s;
  s.logit_max = zmax;
  s.logit_min = zmin;
  s.alpha_max = amax;
  s.alpha_min = amin;
  s.entropy = h;
  s.beta = beta;
  s.keys = k;
  s.support = k;
  return s;
}

void feed(head_measure::RowRecorder& rec, std::size_t head, const std::vector<AttentionRowStats>& rows) {
  transformer::AttentionTile<double> t;
  t.head = head;
  t.rows = rows.size();
  t.stats = rows.data();
  rec.observe(t);
  std::vector<double> input(rows.size(), 1.0);
  transformer::LayerInputChunk<double> c{0, 0, rows.size(), 1, input.data()};
  rec.observe_input(c);
}

TEST(HeadSummary, HalfRowsLastRowAndLemmaCounts) {
  head_measure::RowRecorder rec(1, 1, 2, 4);
  // Head 0: causal rows k = 1..4, uniform, δ 0 on the first row. Uniform rows meet the upper bound
  // with equality (α_max·k = 1 = e^0): not a violation.
  feed(rec, 0, {row(0, 0, 1, 1, 0, 1), row(1, 0, 0.6, 0.4, 0.67, 2), row(2, 0, 0.5, 0.2, 1.0, 3),
                row(1, 1, 0.25, 0.25, std::log(4.0), 4)});
  // Head 1: the last row claims α_max·k = 4·0.9 = 3.6 > e^{1·1}: an upper violation; the third
  // α_min·k = 3·0.01 < e^{-1}: a lower one; the second has no β (a sparse normaliser): unchecked.
  feed(rec, 1, {row(0, 0, 1, 1, 0, 1), row(5, 0, 1, 0, 0, 2, NAN), row(1, 0, 0.5, 0.01, 0.8, 3),
                row(1, 0, 0.9, 0.1, 0.4, 4)});
  EXPECT_EQ(rec.missing_rows(), 0u);
  const auto s = head_measure::summarise_heads(rec);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].delta_max, 2.0);
  EXPECT_EQ(s[0].delta_half_max, 2.0);              // rows with k >= 2
  EXPECT_DOUBLE_EQ(s[0].delta_half_mean, (1.0 + 2.0 + 0.0) / 3.0);
  EXPECT_EQ(s[0].alpha_max_last, 0.25);
  EXPECT_DOUBLE_EQ(s[0].n_alpha_max_half_mean, (2 * 0.6 + 3 * 0.5 + 4 * 0.25) / 3.0);   // mean k·α_max over half rows
  EXPECT_DOUBLE_EQ(s[0].entropy_gap_half, ((std::log(2.0) - 0.67) + (std::log(3.0) - 1.0) + 0.0) / 3.0);
  EXPECT_EQ(s[0].lemma_rows, 4);
  EXPECT_EQ(s[0].lemma_violations_upper + s[0].lemma_violations_lower, 0);
  EXPECT_EQ(s[1].delta_max, 5.0);
  EXPECT_EQ(s[1].lemma_rows, 3);
  EXPECT_EQ(s[1].lemma_violations_upper, 1);
  EXPECT_EQ(s[1].lemma_violations_lower, 1);
  EXPECT_EQ(head_measure::uniform_entropy_baseline(4, false), std::log(4.0));
  EXPECT_NEAR(head_measure::uniform_entropy_baseline(4, true), std::log(24.0) / 4.0, 1e-15);
}

TEST(HeadSummary, CombinedPassesTakeMaximaSumsAndWeightedMeans) {
  // Two passes of one 1-head model: a batch of 3 sequences and one of 1 (e.g. prompts of two lengths).
  using head_measure::HeadSummary;
  const HeadSummary a{.delta_max = 3, .delta_half_mean = 1, .alpha_max_last = 0.5, .entropy_last = 2,
                      .beta_max = std::numeric_limits<double>::quiet_NaN(), .lemma_rows = 10, .lemma_violations_upper = 1};
  const HeadSummary b{.delta_max = 5, .delta_half_mean = 3, .alpha_max_last = 0.1, .entropy_last = 6, .beta_max = 1.5,
                      .lemma_rows = 4, .lemma_violations_lower = 2};
  const auto c = head_measure::combine_summaries({{a}, {b}}, {3.0, 1.0});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].delta_max, 5.0);
  EXPECT_DOUBLE_EQ(c[0].delta_half_mean, (3 * 1.0 + 3.0) / 4);   // the mean over the 4 sequences
  EXPECT_DOUBLE_EQ(c[0].entropy_last, (3 * 2.0 + 6.0) / 4);
  EXPECT_DOUBLE_EQ(c[0].alpha_max_last, (3 * 0.5 + 0.1) / 4);
  EXPECT_EQ(c[0].beta_max, 1.5);                                 // a part without β is skipped
  EXPECT_EQ(c[0].lemma_rows, 14);
  EXPECT_EQ(c[0].lemma_violations_upper + c[0].lemma_violations_lower, 3);
  // One part comes back unchanged, bit for bit; no part with a β gives NaN.
  const auto one = head_measure::combine_summaries({{b}}, {2.0});
  EXPECT_EQ(one[0].delta_half_mean, b.delta_half_mean);
  EXPECT_EQ(one[0].alpha_max_last, b.alpha_max_last);
  EXPECT_TRUE(std::isnan(head_measure::combine_summaries({{a}}, {1.0})[0].beta_max));
  EXPECT_THROW(head_measure::combine_summaries({{a}, {a, b}}, {1.0, 1.0}), std::invalid_argument);
}

TEST(HeadSummary, RecorderNoticesRowsNeverObserved) {
  head_measure::RowRecorder rec(1, 1, 1, 3);
  feed(rec, 0, {row(0, 0, 1, 1, 0, 1), row(0, 0, 0.5, 0.5, std::log(2.0), 2)});
  EXPECT_GT(rec.missing_rows(), 0u);
}

// 2 layers of 2 heads, d_model 16, vocabulary 11.
transformer::TransformerConfig small_config(transformer::Positional positional, bool layer_norm) {
  transformer::TransformerConfig c;
  c.layers = 2;
  c.heads = 2;
  c.d_model = 16;
  c.vocab = 11;
  c.positional = positional;
  c.layer_norm = layer_norm;
  return c;
}

// The certificate's R: a LayerNorm output y = γ ⊙ x̂ + β has ‖y‖ <= √d·max|γ| + ‖β‖, nearly reached by
// a row of ±a (x̂ = ±√(a²/(a² + eps)) per coordinate) with γ = ±g and β = 0, and not exceeded by
// random rows; a bias adds its norm.
TEST(HeadWeightBound, LayerNormOutputNormBound) {
  const std::size_t d = 8;
  std::vector<double> x(d), y(d), gain(d), bias(d, 0.0);
  for (std::size_t i = 0; i < d; ++i) {
    x[i] = i % 2 ? -3.0 : 3.0;
    gain[i] = i % 3 ? 1.5 : -1.5;
  }
  transformer::layer_norm_forward(y.data(), (double*)nullptr, (double*)nullptr, x.data(), gain.data(), bias.data(), 1, d);
  double norm = 0;
  for (double v : y) norm += v * v;
  const double bound = head_measure::layer_norm_output_norm_bound(gain.data(), bias.data(), d);
  EXPECT_DOUBLE_EQ(bound, std::sqrt(8.0) * 1.5);
  EXPECT_LE(std::sqrt(norm), bound);
  EXPECT_GT(std::sqrt(norm), bound * (1 - 1e-6));   // the bound is tight
  bias[2] = 3.0;
  bias[5] = -4.0;
  EXPECT_DOUBLE_EQ(head_measure::layer_norm_output_norm_bound(gain.data(), bias.data(), d), std::sqrt(8.0) * 1.5 + 5.0);
}

// The certificate (the weight-norm bound with R analytic where LayerNorm precedes attention) is the
// same for every input and length, never below the measured bound; without LayerNorm it is the
// measured bound, which moves with the input.
TEST(HeadWeightBound, CertificateIsIndependentOfTheInputWithLayerNorm) {
  for (bool ln : {true, false}) {
    const transformer::TransformerConfig c = small_config(transformer::Positional::Index, ln);
    const transformer::Transformer model(c);
    std::vector<double> params(model.parameter_count());
    transformer::init_parameters(model.layout(), params.data(), 7);
    std::vector<std::vector<head_measure::HeadWeightBound>> seen;
    for (std::size_t n : {50, 400}) {
      std::vector<std::int32_t> tokens(n);
      for (std::size_t i = 0; i < n; ++i) tokens[i] = std::int32_t((i * 7 + n) % c.vocab);
      head_measure::RowRecorder rec(1, c.layers, c.heads, n);
      transformer::transformer_forward<double>(model, params.data(), tokens.data(), 1, n, nullptr, nullptr, &rec);
      const std::vector<double> norms = {rec.input_norm_max(0), rec.input_norm_max(1)};
      const auto bounds = head_measure::head_weight_bounds(model.layout(), params.data(), norms, n);
      for (std::size_t i = 0; i < bounds.size(); ++i) {
        EXPECT_GE(bounds[i].certificate, bounds[i].bound);
        EXPECT_EQ(bounds[i].certificate_input_norm, ln ? std::sqrt(16.0) : norms[i / c.heads]);   // γ = 1, β = 0 at init
      }
      seen.push_back(bounds);
    }
    for (std::size_t i = 0; i < seen[0].size(); ++i) {
      if (ln) {
        EXPECT_EQ(seen[0][i].certificate, seen[1][i].certificate);
      } else {
        EXPECT_EQ(seen[0][i].certificate, seen[0][i].bound);
        EXPECT_NE(seen[0][i].certificate, seen[1][i].certificate);   // index positions grow the inputs
      }
    }
  }
}

// The entropy before β (docs/science.md#algorithmic-text): softmax of the row's own logits, whatever
// the normaliser did with them. Logits ln(1, 2, 3) give softmax (1, 2, 3)/6 in closed form; a
// softmax row's entropy equals it, an adaptive or SSMax row's (β > 1 here) is lower; one key gives 0.
TEST(AttentionRowStats, EntropyBeforeBetaIsTheSoftmaxEntropyOfTheLogits) {
  const double z[3] = {std::log(1.0), std::log(2.0), std::log(3.0)};
  const double closed = -(1.0 / 6 * std::log(1.0 / 6) + 2.0 / 6 * std::log(2.0 / 6) + 3.0 / 6 * std::log(3.0 / 6));
  for (const char* spec : {"softmax", "adaptive", "ssmax:s=2", "entmax15"}) {
    const auto normaliser = norm::make_normaliser(spec);
    double p[3];
    normaliser->forward(z, p, 1, 3);
    const AttentionRowStats s = transformer::attention_row_stats(z, p, 3, *normaliser);
    EXPECT_NEAR(s.entropy_before_beta, closed, 1e-14) << spec;
    if (std::string(spec) == "softmax") EXPECT_NEAR(s.entropy, closed, 1e-14);
    else EXPECT_LT(s.entropy, closed - 1e-3) << spec;   // sharpened by its β (entmax: sparse)
  }
  const double shifted[3] = {z[0] + 700.0, z[1] + 700.0, z[2] + 700.0};   // no overflow: referenced at the max
  const auto softmax = norm::make_normaliser("softmax");
  double p[3];
  softmax->forward(shifted, p, 1, 3);
  EXPECT_NEAR(transformer::attention_row_stats(shifted, p, 3, *softmax).entropy_before_beta, closed, 1e-12);
  const double one = 5.0, p_one = 1.0;
  EXPECT_EQ(transformer::attention_row_stats(&one, &p_one, 1, *softmax).entropy_before_beta, 0.0);
}

// Every head's largest δ_row on a random model stays under its weight-norm bound (for ALiBi with
// the bias term slope·(n − 1)), and the lemma has no violating row.
TEST(HeadWeightBound, HoldsOnRandomModels) {
  for (auto pos : {transformer::Positional::None, transformer::Positional::Rope, transformer::Positional::Index,
                   transformer::Positional::Alibi}) {
    for (bool ln : {true, false}) {
      const transformer::TransformerConfig c = small_config(pos, ln);
      const transformer::Transformer model(c);
      std::vector<double> params(model.parameter_count());
      transformer::init_parameters(model.layout(), params.data(), 42);
      const std::size_t n = 300;
      std::vector<std::int32_t> tokens(n);
      for (std::size_t i = 0; i < n; ++i) tokens[i] = std::int32_t((i * 5 + i / 7) % c.vocab);
      head_measure::RowRecorder rec(1, c.layers, c.heads, n);
      transformer::transformer_forward<double>(model, params.data(), tokens.data(), 1, n, nullptr, nullptr, &rec);
      ASSERT_EQ(rec.missing_rows(), 0u);
      std::vector<double> norms = {rec.input_norm_max(0), rec.input_norm_max(1)};
      if (ln) {   // LayerNorm output, gain 1, bias 0
        EXPECT_LE(norms[0], std::sqrt(16.0) * (1 + 1e-9));
      }
      const auto bounds = head_measure::head_weight_bounds(model.layout(), params.data(), norms, n);
      const auto heads = head_measure::summarise_heads(rec);
      for (std::size_t i = 0; i < heads.size(); ++i) {
        EXPECT_LE(heads[i].delta_max, bounds[i].bound) << transformer::positional_name(pos) << " ln " << ln;
        EXPECT_LE(bounds[i].bound, bounds[i].certificate);
        EXPECT_GT(bounds[i].sigma_q, 0.0);
        EXPECT_EQ(heads[i].lemma_violations_upper + heads[i].lemma_violations_lower, 0);
      }
    }
  }
}

}  // namespace
