// sharp-eval-text — docs/science.md#algorithmic-text, evaluation half: one point evaluates one trained
// text model (one value of the checkpoint axis) on `samples` fresh samples of one algorithm at one
// length, by greedy decoding with the key/value cache, for every normaliser of --normaliser on the
// same samples ("trained": the model's own heads; a spec: that normaliser in every head at inference
// only, e.g. adaptive on a softmax-trained model). Decoding stops at "\n\n" or at the expected answer
// length + 16 tokens, or at the end of a learned positional table (max_length tokens in all: the model
// has no position beyond it); no terminator counts as wrong. The heads are measured on the rows that write the
// answer (docs/science.md#measuring-heads): the last question token's and every generated token's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/errors.hpp"
#include "core/hash.hpp"
#include "core/parallel_for.hpp"
#include "experiments/normaliser_param.hpp"
#include "experiments/text_checkpoint.hpp"
#include "experiments/text_checkpoint_check.hpp"
#include "head_measure/answer_rows.hpp"
#include "runners/main.hpp"
#include "stats/wilson.hpp"
#include "text/answer_score.hpp"
#include "text/tokeniser.hpp"
#include "text_model/greedy_decode.hpp"

namespace sharp {

using runner::Point;
using runner::Record;

namespace {

constexpr std::size_t kExtraTokens = 16;  // decoding budget beyond the expected answer

// The answer rows' head measures of one normaliser: means over heads in /points, [layer, head] in /arrays.
void put_answer_rows(Record& r, const std::string& item, const head_measure::AnswerRows& rows) {
  const std::vector<double> entropy = rows.entropy_mean(), delta = rows.delta_mean(), delta_max = rows.delta_max();
  const std::vector<double> before_beta = rows.entropy_before_beta_mean();
  const double nan = std::nan("");
  const bool any = rows.rows() > 0;  // every head sees the same rows
  double entropy_sum = 0, before_beta_sum = 0, delta_sum = 0, largest = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; any && i < entropy.size(); ++i) {
    entropy_sum += entropy[i];
    before_beta_sum += before_beta[i];
    delta_sum += delta[i];
    largest = std::max(largest, delta_max[i]);
  }
  const double heads = double(entropy.size());
  r.set("answer_entropy." + item, any ? entropy_sum / heads : nan);
  r.set("answer_entropy_before_beta." + item, any ? before_beta_sum / heads : nan);
  r.set("answer_entropy_uniform." + item, rows.ln_k_mean());
  r.set("answer_delta." + item, any ? delta_sum / heads : nan);
  r.set("answer_delta_max." + item, any ? largest : nan);
  const std::vector<std::size_t> shape{rows.layers(), rows.heads()};
  r.set_array("answer_entropy_heads." + item, entropy, shape);
  r.set_array("answer_entropy_before_beta_heads." + item, before_beta, shape);
  r.set_array("answer_delta_heads." + item, delta, shape);
  r.set_array("answer_delta_max_heads." + item, delta_max, shape);
}

std::vector<std::string> normaliser_items(const std::string& text) {
  std::vector<std::string> items = runner::in_point_items(text);
  std::set<std::string> seen;
  for (const std::string& item : items) {
    if (item.empty()) throw BadInput("empty normaliser in '" + text + "'");
    if (item != "trained") {
      if (auto e = normaliser_spec_error(item)) throw BadInput("'" + item + "' " + *e);
      if (item.find("learn") != std::string::npos)
        throw BadInput("'" + item + "': a normaliser applied at inference has fixed scalars (no 'learn')");
    }
    if (!seen.insert(item).second) throw BadInput("normaliser '" + item + "' is repeated");
  }
  return items;
}

// The key of a point's samples: the declared stream (seed, algorithm, length), and with
// sample_seed = training also the model's training seed, so that each training seed is evaluated on
// samples of its own (independent strata, docs/science.md#running-the-text-study) while the models
// of one training seed still share theirs.
std::uint64_t sample_key(runner::PointContext& ctx, const std::string& sample_seed, std::int64_t training_seed) {
  const std::uint64_t key = ctx.stream_key("data");
  return sample_seed == "training" ? hash_combine(key, hash64("training_seed=" + std::to_string(training_seed))) : key;
}

}  // namespace

class EvalTextExperiment final : public runner::Experiment {
 public:
  std::string name() const override { return "eval-text"; }
  std::string summary() const override {
    return "Algorithmic text, evaluation (docs/science.md#algorithmic-text). Greedy decoding with the key/value "
           "cache of a sharp-train-text model on fresh samples in the CLRS-Text format "
           "(docs/science.md#clrs-text-format; generated, not the released data) of one algorithm at one length, "
           "with the traces the model was trained with. Exact match of the final output and of the whole answer "
           "and per-element accuracy, each with a Wilson 95% interval, for every normaliser of --normaliser on "
           "the same samples; per-sample correctness and the largest index each expected output names in /arrays for "
           "paired tests; the attention entropy (after and before the normaliser's beta) and logit spread of the rows "
           "that write the answer (docs/science.md#measuring-heads), per head in /arrays.";
  }
  std::vector<runner::ParamSpec> parameters() const override {
    const runner::ParamSpec checkpoint =
        text_checkpoint_param("results/train-text.h5", "trained models (a sharp-train-text result file)");
    std::vector<std::string> names;
    for (text::Algorithm a : text::kAlgorithms) names.emplace_back(text::algorithm_name(a));
    runner::ParamSpec normaliser =
        runner::text_param("normaliser", "trained",
                           "head normalisers compared on the same samples: trained (the model's own) or a spec", {});
    normaliser.list = runner::ListRole::InsidePoint;
    normaliser.allowed = "trained (the model's own) or " + normaliser_spec_allowed() + ", without learned scalars";
    normaliser.check = [](const runner::Value& v) -> std::optional<std::string> {
      try {
        normaliser_items(std::get<std::string>(v));
      } catch (const BadInput& e) {
        return std::string(e.what());
      }
      return std::nullopt;
    };
    normaliser.identity = normaliser_identity;
    return {
        checkpoint,
        runner::model_fingerprint_param("checkpoint", kTextTrainers),  // which weights were scored
        runner::text_param("algorithm", "minimum", "algorithm of the samples", names),
        runner::integer_param("length", "4,5,6,7,8,9,10,11,12,13,14,15,16,20,24,32,48,64", "keys per sample", 4)
            .at_most(std::int64_t{1024}),
        runner::integer_param("samples", "100", "fresh samples per point", 1).at_most(std::int64_t{1} << 20),
        normaliser,
        runner::text_param(
            "sample_seed", "eval",
            "what keys the samples besides algorithm and length: eval (the evaluation's --seed: every "
            "model sees the same samples) or training (also the model's training seed: each training "
            "seed its own samples, the arms of one seed the same; docs/science.md#running-the-text-study)",
            {"eval", "training"}),
    };
  }
  std::vector<runner::OutputSpec> outputs() const override {
    using runner::array_integer, runner::array_real, runner::metric_integer, runner::metric_real;
    return {
        metric_integer(
            "evaluated", "",
            "1 when evaluated; 0 (metrics NaN) when the model was not trained on the algorithm or the length cannot be drawn with its traces"),
        metric_integer("trace", "", "1 when the model was trained (and is evaluated) with traces"),
        metric_integer("in_training_lengths", "", "1 when the length is one of the model's training lengths"),
        metric_integer(
            "applied.<normaliser>", "",
            "1 when the normaliser ran; 0 (its metrics NaN, its arrays empty) for a normaliser at inference on a model with learned scalars, which keeps its own heads"),
        metric_real("exact_final.<normaliser>", "fraction",
                    "samples whose final output (after ' | ') is exactly right"),
        metric_real("exact_final_low.<normaliser>", "fraction", "Wilson 95% interval of exact_final, low end"),
        metric_real("exact_final_high.<normaliser>", "fraction", "Wilson 95% interval of exact_final, high end"),
        metric_real("exact_answer.<normaliser>", "fraction", "samples whose whole answer is exactly right"),
        metric_real("exact_answer_low.<normaliser>", "fraction", "Wilson 95% interval of exact_answer, low end"),
        metric_real("exact_answer_high.<normaliser>", "fraction", "Wilson 95% interval of exact_answer, high end"),
        metric_real("element_accuracy.<normaliser>", "fraction",
                    "final-output elements right, position-wise over the expected elements, pooled"),
        metric_real("element_accuracy_low.<normaliser>", "fraction",
                    "Wilson 95% interval over the pooled elements, low end"),
        metric_real("element_accuracy_high.<normaliser>", "fraction",
                    "Wilson 95% interval over the pooled elements, high end"),
        metric_real("terminated.<normaliser>", "fraction", "samples whose generation ended with the blank line"),
        metric_real(
            "position_table_end.<normaliser>", "fraction",
            "samples whose generation reached the end of the model's learned positional table (max_length tokens in all) without the blank line, so scored wrong; 0 for the other positional schemes"),
        metric_real(
            "answer_entropy.<normaliser>", "nats",
            "attention entropy of the answer rows (the last question token and the generated tokens), mean over rows, samples and heads"),
        metric_real(
            "answer_entropy_before_beta.<normaliser>", "nats",
            "entropy of softmax of the same rows' logits, before the normaliser's beta (for softmax the same as answer_entropy, up to the float rounding of p): the logits' own sharpness, mean over rows, samples and heads"),
        metric_real("answer_entropy_uniform.<normaliser>", "nats",
                    "ln k over the same rows: the entropy of uniform attention over their k keys"),
        metric_real(
            "answer_delta.<normaliser>", "logit units",
            "logit spread delta_row (max - min of the row's scaled, masked logits) of the answer rows, mean over rows, samples and heads"),
        metric_real("answer_delta_max.<normaliser>", "logit units",
                    "largest delta_row of the answer rows over samples and heads"),
        array_integer(
            "answer_index", {"*"}, "",
            "per sample: the largest input index the expected final output names (minimum: the answer's index), -1 when it names none (values, masks); the same samples for every normaliser"),
        array_integer("correct_final.<normaliser>", {"*"}, "", "per sample: 1 when the final output is exactly right"),
        array_integer("correct_answer.<normaliser>", {"*"}, "", "per sample: 1 when the whole answer is exactly right"),
        array_real("element_fraction.<normaliser>", {"*"}, "fraction",
                   "per sample: fraction of final-output elements right"),
        array_real("answer_entropy_heads.<normaliser>", {"*", "*"}, "nats",
                   "[layer, head] entropy of the answer rows, mean over rows and samples"),
        array_real("answer_entropy_before_beta_heads.<normaliser>", {"*", "*"}, "nats",
                   "[layer, head] entropy before beta of the answer rows, mean over rows and samples"),
        array_real("answer_delta_heads.<normaliser>", {"*", "*"}, "logit units",
                   "[layer, head] delta_row of the answer rows, mean over rows and samples"),
        array_real("answer_delta_max_heads.<normaliser>", {"*", "*"}, "logit units",
                   "[layer, head] largest delta_row of the answer rows over samples"),
    };
  }
  // The samples depend on (seed, algorithm, length) only: every model and normaliser sees the same
  // (with sample_seed = training also on the model's training seed, see sample_key).
  std::vector<runner::StreamSpec> streams() const override { return {{"data", {"algorithm", "length"}}}; }
  double estimated_cost(const Point& p) const override {
    const double n = double(p.integer("length"));
    return double(p.integer("samples")) * n * n;
  }
  std::string notes() const override {
    return "Samples generated in the CLRS-Text format by lib/text, not the released data; greedy decoding "
           "(argmax, lowest token id on ties) with the key/value cache, stopped at the blank line, at the expected "
           "answer length + 16 tokens, or at the end of a learned positional table (question and answer at most "
           "max_length tokens; such a sample is scored as generated, unterminated, and counted in "
           "position_table_end); element accuracy pools the elements of all samples for its Wilson interval.";
  }

  Record run(const Point& p, runner::PointContext& ctx) const override {
    const TrainedTextModel m = load_text_model(p.text("checkpoint"));
    const text::Algorithm algorithm = text::parse_algorithm(p.text("algorithm"));
    const int length = int(p.integer("length"));
    const std::size_t samples = std::size_t(p.integer("samples"));
    const std::vector<std::string> items = normaliser_items(p.text("normaliser"));
    // A model is evaluated only on the algorithms it was trained on (a grid over several models and
    // algorithms skips the other pairs at no cost) and at lengths that may be drawn with its traces.
    const bool trained_on =
        std::find(m.mix.algorithms.begin(), m.mix.algorithms.end(), algorithm) != m.mix.algorithms.end();
    const bool allowed = trained_on && text::length_refusal(algorithm, length, m.mix.trace).empty();

    Record r;
    r.set_count("evaluated", allowed ? 1 : 0);
    r.set_count("trace", m.mix.trace ? 1 : 0);
    bool in_training = false;
    for (int n : m.mix.lengths) in_training = in_training || n == length;
    r.set_count("in_training_lengths", in_training ? 1 : 0);

    std::vector<text::Sample> drawn;
    if (allowed) {
      const std::uint64_t key = sample_key(ctx, p.text("sample_seed"), m.seed);
      for (std::size_t i = 0; i < samples; ++i)
        drawn.push_back(text::draw_sample(key, algorithm, length, i, m.mix.trace));
    }
    std::vector<std::int64_t> answer_index;
    for (const text::Sample& s : drawn) answer_index.push_back(text::largest_output_index(algorithm, s));
    r.set_array("answer_index", answer_index);
    for (const std::string& item : items) {
      transformer::TransformerConfig config = m.config;
      if (item != "trained") config.normaliser = item;
      const transformer::Transformer model(config);
      // A normaliser applied at inference replaces the heads of models without learned scalars only
      // (a grid over several models skips the others, as it skips algorithms a model was not trained
      // on): a model with learned scalars keeps its own, and the item's row says applied 0.
      const bool applies = model.parameter_count() == m.params.size();
      r.set_count("applied." + item, applies ? 1 : 0);
      const std::vector<text::Sample> none;
      const std::vector<text::Sample>& used = applies ? drawn : none;
      const std::size_t L = config.layers, H = config.heads;
      std::vector<text::AnswerScore> scores(used.size());
      std::vector<char> table_end(used.size(), 0);
      std::vector<head_measure::AnswerRows> heads(used.size(), head_measure::AnswerRows(L, H, 0));
      parallel_for(used.size(), {"eval-text/samples", ctx.threads()}, [&](std::size_t i) {
        const text::Sample& s = used[i];
        const std::vector<text::Token> question = text::tokenise(s.question);
        const std::size_t budget = text::tokenise(s.answer).size() + kExtraTokens;
        heads[i] = head_measure::AnswerRows(L, H, question.size() - 1);
        const std::vector<text::Token> out =
            text_model::greedy_decode(model, m.params.data(), question, budget, &heads[i]);
        scores[i] = text::score_answer(s, text::detokenise(out), m.mix.trace);
        table_end[i] = text_model::decoding_room(config, question.size(), budget) < budget && !scores[i].terminated;
      });
      head_measure::AnswerRows answer_rows(L, H, 0);  // merged in sample order: any thread count
      for (const head_measure::AnswerRows& h : heads) answer_rows.merge(h);
      std::vector<std::int64_t> final_ok, answer_ok;
      std::vector<double> fraction;
      double finals = 0, answers = 0, right = 0, expected = 0, terminated = 0, ended = 0;
      for (const text::AnswerScore& s : scores) {
        final_ok.push_back(s.exact_final ? 1 : 0);
        answer_ok.push_back(s.exact_answer ? 1 : 0);
        fraction.push_back(double(s.elements_right) / double(s.elements_expected));
        finals += s.exact_final;
        answers += s.exact_answer;
        right += s.elements_right;
        expected += s.elements_expected;
        terminated += s.terminated;
      }
      for (char e : table_end) ended += e;
      const double n = double(scores.size());
      auto put = [&](const std::string& name, double k, double total) {
        const auto [low, high] = stats::wilson_interval(k, total);
        r.set(name + "." + item, total > 0 ? k / total : std::nan(""));
        r.set(name + "_low." + item, low);
        r.set(name + "_high." + item, high);
      };
      put("exact_final", finals, n);
      put("exact_answer", answers, n);
      put("element_accuracy", right, expected);
      r.set("terminated." + item, n > 0 ? terminated / n : std::nan(""));
      r.set("position_table_end." + item, n > 0 ? ended / n : std::nan(""));
      put_answer_rows(r, item, answer_rows);
      r.set_array("correct_final." + item, final_ok);
      r.set_array("correct_answer." + item, answer_ok);
      r.set_array("element_fraction." + item, fraction);
    }
    return r;
  }
};

}  // namespace sharp

SHARP_EXPERIMENT_MAIN(sharp::EvalTextExperiment)
