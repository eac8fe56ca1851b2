// Greedy decoding of text models (docs/science.md#algorithmic-text): decoding with the key/value
// cache gives the same tokens as recomputing the whole sequence with a full forward pass at every
// step (random models on CLRS-Text questions, every positional scheme the text trainer offers, a
// softmax and an adaptive model), it stops at the blank line, and the answer-row head measures
// (docs/science.md#measuring-heads) equal those of the same rows in a full forward pass.
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "head_measure/answer_rows.hpp"
#include "head_measure/row_recorder.hpp"
#include "text/sample.hpp"
#include "text/tokeniser.hpp"
#include "text_model/greedy_decode.hpp"
#include "transformer/layout.hpp"
#include "transformer/model.hpp"

namespace {

using namespace sharp;
using text::Token;

transformer::TransformerConfig text_config(transformer::Positional p, const char* normaliser) {
  transformer::TransformerConfig c;
  c.layers = 2;
  c.heads = 2;
  c.d_model = 16;
  c.vocab = std::size_t(text::vocabulary_size());
  c.positional = p;
  c.normaliser = normaliser;
  c.init_scale = 3.0;   // sharper than the default: greedy outputs vary instead of repeating one token
  return c;
}

template <class T>
std::vector<T> random_params(const transformer::Transformer& model, std::uint64_t key) {
  std::vector<double> p(model.parameter_count());
  transformer::init_parameters(model.layout(), p.data(), key);
  return std::vector<T>(p.begin(), p.end());
}

// The reference: a full forward pass over question + generated tokens at every step, argmax of the
// last row (lowest id on ties), stop after two newlines. min_gap: the smallest gap between the best
// and the second-best logit over the steps (how close a step came to a tie).
template <class T>
std::vector<Token> uncached_greedy(const transformer::Transformer& model, const T* params,
                                   const std::vector<Token>& question, std::size_t budget, double* min_gap) {
  const std::size_t V = model.config().vocab;
  std::vector<Token> seq = question, out;
  *min_gap = INFINITY;
  while (out.size() < budget) {
    std::vector<T> logits(seq.size() * V);
    transformer::transformer_forward(model, params, seq.data(), 1, seq.size(), logits.data());
    const T* last = logits.data() + (seq.size() - 1) * V;
    const Token best = Token(std::max_element(last, last + V) - last);   // first maximum
    double second = -INFINITY;
    for (std::size_t v = 0; v < V; ++v)
      if (Token(v) != best) second = std::max(second, double(last[v]));
    *min_gap = std::min(*min_gap, double(last[best]) - second);
    out.push_back(best);
    seq.push_back(best);
    if (out.size() >= 2 && out.back() == text::newline_token() && out[out.size() - 2] == text::newline_token()) break;
  }
  return out;
}

struct Case {
  text::Algorithm algorithm;
  int length;
};
const Case kCases[] = {{text::Algorithm::minimum, 5}, {text::Algorithm::binary_search, 7},
                       {text::Algorithm::insertion_sort, 6}};

// Double: the cached logits match to 1e-12, so the tokens must be identical. Float matches to 1e-5:
// tokens must be identical wherever no step of the reference came within 1e-3 of a tie.
template <class T>
void expect_same_tokens(double tie_margin) {
  int compared = 0;
  for (const std::string pos : {"none", "rope", "sinusoidal", "learned"})
    for (const char* spec : {"softmax", "adaptive"}) {
      const transformer::Transformer model(text_config(transformer::parse_positional(pos), spec));
      const std::vector<T> params = random_params<T>(model, 11);
      for (const Case& c : kCases)
        for (std::uint64_t i = 0; i < 2; ++i) {
          const text::Sample s = text::draw_sample(5, c.algorithm, c.length, i, false);
          const std::vector<Token> question = text::tokenise(s.question);
          const std::size_t budget = text::tokenise(s.answer).size() + 16;
          double gap = 0;
          const std::vector<Token> reference = uncached_greedy(model, params.data(), question, budget, &gap);
          SCOPED_TRACE(pos + " " + spec + " " + s.question);
          if (gap < tie_margin) continue;
          ++compared;
          const std::vector<Token> cached = text_model::greedy_decode(model, params.data(), question, budget);
          EXPECT_EQ(cached, reference) << text::detokenise(cached) << " vs " << text::detokenise(reference);
        }
    }
  EXPECT_GE(compared, 40);   // of 48: a near-tie skips few
}

TEST(GreedyDecode, CachedEqualsUncachedTokensInDouble) { expect_same_tokens<double>(1e-9); }
TEST(GreedyDecode, CachedEqualsUncachedTokensInFloat) { expect_same_tokens<float>(1e-3); }

// A model whose final LayerNorm bias points along the newline token's embedding writes "\n" first
// whatever the input: greedy decoding stops after the blank line, two tokens.
TEST(GreedyDecode, StopsAtTheBlankLine) {
  const transformer::Transformer model(text_config(transformer::Positional::Rope, "softmax"));
  std::vector<double> p = random_params<double>(model, 3);
  const auto& L = model.layout();
  const std::size_t d = model.config().d_model, nl = std::size_t(text::newline_token());
  for (std::size_t j = 0; j < d; ++j) p[L.final_bias + j] = 100.0 * p[L.unembedding + nl * d + j];
  const text::Sample s = text::draw_sample(1, text::Algorithm::minimum, 4, 0, false);
  const std::vector<Token> question = text::tokenise(s.question);
  double gap = 0;
  const std::vector<Token> expected{text::newline_token(), text::newline_token()};
  EXPECT_EQ(uncached_greedy(model, p.data(), question, 30, &gap), expected);
  EXPECT_EQ(text_model::greedy_decode(model, p.data(), question, 30), expected);
  EXPECT_EQ(text_model::greedy_decode(model, p.data(), question, 1).size(), 1u);   // the budget binds
  EXPECT_THROW(text_model::greedy_decode(model, p.data(), std::vector<Token>{}, 4), BadInput);
}

// A learned positional table of max_length rows bounds the sequence (issue 26 item 9): decoding
// stops at the table's end, question plus generated tokens = max_length, with the tokens a longer
// table would give up to there; a question that fills the table gets none. Other schemes are unbounded.
TEST(GreedyDecode, StopsAtTheEndOfALearnedPositionTable) {
  const text::Sample s = text::draw_sample(1, text::Algorithm::minimum, 4, 0, false);
  const std::vector<Token> question = text::tokenise(s.question);
  const std::size_t q = question.size();
  transformer::TransformerConfig wide = text_config(transformer::Positional::Learned, "softmax");
  wide.max_length = q + 30;
  transformer::TransformerConfig narrow = wide;
  narrow.max_length = q + 3;
  const transformer::Transformer wide_model(wide), narrow_model(narrow);
  const std::vector<double> p = random_params<double>(wide_model, 5);
  // The narrow table is the wide one's first rows: the same model up to position q + 3.
  std::vector<double> narrow_p(narrow_model.parameter_count());
  const auto& W = wide_model.layout();
  const auto& N = narrow_model.layout();
  for (const nn::TensorInfo& t : N.params.tensors())
    for (const nn::TensorInfo& u : W.params.tensors())
      if (u.name == t.name) std::copy(p.begin() + u.offset, p.begin() + u.offset + t.size(), narrow_p.begin() + t.offset);
  const std::vector<Token> full = text_model::greedy_decode(wide_model, p.data(), question, 30);
  ASSERT_GT(full.size(), 3u) << "the model stopped early: pick another seed";
  const std::vector<Token> cut = text_model::greedy_decode(narrow_model, narrow_p.data(), question, 30);
  EXPECT_EQ(cut, std::vector<Token>(full.begin(), full.begin() + 3));
  EXPECT_EQ(text_model::decoding_room(narrow, q, 30), 3u);
  EXPECT_EQ(text_model::decoding_room(narrow, q, 2), 2u);
  narrow.max_length = q;
  EXPECT_EQ(text_model::decoding_room(narrow, q, 30), 0u);
  narrow.max_length = q - 1;
  const transformer::Transformer too_short(narrow);
  EXPECT_TRUE(text_model::greedy_decode(too_short, random_params<double>(too_short, 5).data(), question, 30).empty());
  EXPECT_EQ(text_model::decoding_room(text_config(transformer::Positional::Rope, "softmax"), 5000, 30), 30u);
}

// The answer rows are the question's last row and every pushed generated token's: their entropy and
// δ per head equal those rows of a full forward pass (RowRecorder) over question + answer minus its
// last token; the question's earlier rows are left out.
TEST(AnswerRows, MatchTheSameRowsOfAFullForwardPass) {
  const transformer::Transformer model(text_config(transformer::Positional::Rope, "adaptive"));
  const std::vector<double> params = random_params<double>(model, 17);
  const text::Sample s = text::draw_sample(2, text::Algorithm::minimum, 6, 0, false);
  const std::vector<Token> question = text::tokenise(s.question);
  const std::size_t L = 2, H = 2, q = question.size();
  head_measure::AnswerRows rows(L, H, q - 1);
  const std::vector<Token> out = text_model::greedy_decode(model, params.data(), question, 12, &rows);
  ASSERT_EQ(out.size(), 12u);
  EXPECT_EQ(rows.rows(), std::int64_t(12));   // the question's last row and 11 pushed tokens

  std::vector<Token> seq = question;
  seq.insert(seq.end(), out.begin(), out.end() - 1);
  head_measure::RowRecorder rec(1, L, H, seq.size());
  transformer::transformer_forward(model, params.data(), seq.data(), 1, seq.size(), static_cast<double*>(nullptr),
                                   nullptr, &rec);
  const std::vector<double> entropy = rows.entropy_mean(), delta = rows.delta_mean(), delta_max = rows.delta_max();
  const std::vector<double> before_beta = rows.entropy_before_beta_mean();
  double ln_k = 0;
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) {
      double e = 0, e_before = 0, dsum = 0, dmax = -INFINITY, all_rows_entropy = 0;
      for (std::size_t i = 0; i < seq.size(); ++i) {
        const auto& r = rec.row(0, l, h, i);
        all_rows_entropy += r.entropy;
        if (i + 1 < q) continue;
        e += r.entropy;
        e_before += r.entropy_before_beta;
        dsum += r.logit_max - r.logit_min;
        dmax = std::max(dmax, r.logit_max - r.logit_min);
        if (l == 0 && h == 0) ln_k += std::log(double(r.keys));
      }
      EXPECT_NEAR(entropy[l * H + h], e / 12.0, 1e-9);
      EXPECT_NEAR(before_beta[l * H + h], e_before / 12.0, 1e-9);
      EXPECT_GT(std::abs(before_beta[l * H + h] - entropy[l * H + h]), 1e-6);   // adaptive's β moved it
      EXPECT_NEAR(delta[l * H + h], dsum / 12.0, 1e-9);
      EXPECT_NEAR(delta_max[l * H + h], dmax, 1e-9);
      EXPECT_GT(std::abs(all_rows_entropy / double(seq.size()) - e / 12.0), 1e-6);   // the filter matters
    }
  EXPECT_NEAR(rows.ln_k_mean(), ln_k / 12.0, 1e-12);

  // Merging sums rows; a summary without rows reports NaN.
  head_measure::AnswerRows twice(L, H, 0), none(L, H, 0);
  twice.merge(rows);
  twice.merge(rows);
  EXPECT_EQ(twice.rows(), 24);
  EXPECT_NEAR(twice.entropy_mean()[3], entropy[3], 1e-12);
  EXPECT_DOUBLE_EQ(twice.delta_max()[1], delta_max[1]);
  EXPECT_TRUE(std::isnan(none.entropy_mean()[0]) && std::isnan(none.delta_max()[0]) && std::isnan(none.ln_k_mean()));
}

}  // namespace
