// sharp-transformer-dispersion — docs/science.md#transformers-disperse: every global head of a
// transformer over a finite vocabulary with bounded positions disperses as the input grows. One point
// is one model (random, from the model axes and the seed) on `samples` inputs of n tokens: a double
// forward pass hands every (layer, head, query row) to a RowRecorder (lib/head_measure), which the
// point summarises per head (docs/science.md#measuring-heads) beside the head's weight-norm bound
// (docs/science.md#weight-norm-bound) and its certificate (the bound with LayerNorm's analytic input
// norm, independent of n). The check across n (β·certificate constant in n, the lemma, the O(1/n)
// rate of α_max) reads the result file: analysis/transformer_theorem.py.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "experiments/normaliser_param.hpp"
#include "experiments/text_checkpoint.hpp"
#include "experiments/text_checkpoint_check.hpp"
#include "head_measure/head_summary.hpp"
#include "head_measure/head_weight_bound.hpp"
#include "head_measure/row_recorder.hpp"
#include "nn/omp_threads.hpp"
#include "rng/counter_rng.hpp"
#include "runners/main.hpp"
#include "text_model/task_prompt.hpp"
#include "transformer/config.hpp"
#include "transformer/model.hpp"

namespace sharp {

using runner::Point;
using runner::Record;

namespace {

const std::vector<std::string> kInputs = {"uniform", "needle", "task"};
// Parameters that shape a random model; a trained model (--checkpoint) brings its own.
// (normaliser too: a trained model's heads keep the normaliser, and learned scalars, they were trained with.)
const std::vector<std::string> kRandomOnly = {"layers",     "heads",      "d_model",    "vocab",      "causal",
                                              "positional", "layer_norm", "init_scale", "max_length", "normaliser"};
runner::ParamSpec flag_param(std::string name, std::string default_value, std::string help) {
  return runner::integer_param(std::move(name), std::move(default_value), std::move(help), 0).at_most(std::int64_t{1});
}

transformer::TransformerConfig random_config(const Point& p) {
  transformer::TransformerConfig c;
  c.layers = std::size_t(p.integer("layers"));
  c.heads = std::size_t(p.integer("heads"));
  c.d_model = std::size_t(p.integer("d_model"));
  c.vocab = std::size_t(p.integer("vocab"));
  c.causal = p.integer("causal") == 1;
  c.positional = transformer::parse_positional(p.text("positional"));
  c.layer_norm = p.integer("layer_norm") == 1;
  c.init_scale = p.real("init_scale");
  c.max_length = std::size_t(p.integer("max_length"));
  c.normaliser = p.text("normaliser");
  return c;
}

// Tokens [samples, n]: i.i.d. uniform over the vocabulary, or one repeated token with a different
// "needle" token at a uniformly random position (one sequence per sample).
std::vector<std::int32_t> make_tokens(const std::string& kind, std::size_t samples, std::size_t n, std::size_t vocab,
                                      std::uint64_t key) {
  std::vector<std::int32_t> tokens(samples * n);
  for (std::size_t s = 0; s < samples; ++s) {
    const std::uint64_t k = rng::child_key(key, s);
    std::int32_t* t = tokens.data() + s * n;
    if (kind == "uniform") {
      for (std::size_t i = 0; i < n; ++i) t[i] = std::int32_t(rng::bits(k, i) % vocab);
    } else {
      const auto filler = std::int32_t(rng::bits(k, 0) % vocab);
      const auto needle =
          vocab > 1 ? std::int32_t((std::uint64_t(filler) + 1 + rng::bits(k, 1) % (vocab - 1)) % vocab) : filler;
      std::fill(t, t + n, filler);
      t[rng::bits(k, 2) % n] = needle;
    }
  }
  return tokens;
}

// One forward pass: its rows, its tokens [batch, length], and per sequence the task length (keys of a
// task prompt; 0 for uniform and needle inputs).
struct Pass {
  head_measure::RowRecorder recorder;
  std::vector<std::int32_t> tokens;
  std::vector<std::int64_t> task_lengths;
};

// One head as the point reports it: its row summary (head_measure::summarise_heads), its weight-norm
// bound, and two quantities of the point's own.
struct Head : head_measure::HeadSummary, head_measure::HeadWeightBound {
  double n_alpha_max_last = 0;  // k·α_max of the last row, k its sequence's length (mean over samples)
  std::int64_t lemma_violations = 0;  // rows above the lemma's upper or below its lower bound
};

// What a point measured, from which every output but the rows is read (output_table).
struct Measured {
  std::size_t layers = 0, heads_per_layer = 0;
  std::vector<Head> heads;  // [layer · head]
  std::vector<double> input_norm_max, certificate_input_norm;  // [layer]
  std::vector<std::int64_t> tokens, task_length;  // [samples]
  double ln_n = 0, uniform_baseline = 0;  // means over the sequences of each sequence's own length

  std::vector<double> column(double Head::*field) const {
    std::vector<double> v;
    v.reserve(heads.size());
    for (const Head& h : heads) v.push_back(h.*field);
    return v;
  }
};

double max_of(const std::vector<double>& v) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : v) m = std::max(m, x);
  return m;
}
double min_of(const std::vector<double>& v) {
  double m = std::numeric_limits<double>::infinity();
  for (double x : v) m = std::min(m, x);
  return m;
}
double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}
double mean_of(const std::vector<std::int64_t>& v) {
  double s = 0;
  for (std::int64_t x : v) s += double(x);
  return s / double(v.size());
}

// One output: its declaration and how it is read from the measurement. Every output name is written
// once, in output_table(); a quantity of a head is a member of Head, so a misspelt field does not compile.
struct Output {
  runner::OutputSpec spec;
  std::function<void(const Measured&, Record&)> record;
};

Output real_metric(const std::string& name, std::string unit, std::string meaning, double (*value)(const Measured&)) {
  return {runner::metric_real(name, std::move(unit), std::move(meaning)),
          [name, value](const Measured& m, Record& r) { r.set(name, value(m)); }};
}
Output count_metric(const std::string& name, std::string unit, std::string meaning,
                    std::int64_t (*value)(const Measured&)) {
  return {runner::metric_integer(name, std::move(unit), std::move(meaning)),
          [name, value](const Measured& m, Record& r) { r.set_count(name, value(m)); }};
}
// A metric of one per-head quantity over the heads: `over` is max_of, min_of or mean_of.
Output over_heads(const std::string& name, std::string unit, std::string meaning, double Head::*field,
                  double (*over)(const std::vector<double>&)) {
  return {runner::metric_real(name, std::move(unit), std::move(meaning)),
          [name, field, over](const Measured& m, Record& r) { r.set(name, over(m.column(field))); }};
}
// A count metric: the sum of one per-head count over the heads.
Output total_over_heads(const std::string& name, std::string unit, std::string meaning, std::int64_t Head::*field) {
  return {runner::metric_integer(name, std::move(unit), std::move(meaning)),
          [name, field](const Measured& m, Record& r) {
            std::int64_t total = 0;
            for (const Head& h : m.heads) total += h.*field;
            r.set_count(name, total);
          }};
}
// Arrays [layer, head], [layer] and [samples]; the meaning gets the shape's prefix.
Output head_array(const std::string& name, std::string unit, const std::string& meaning, double Head::*field) {
  return {runner::array_real(name, {"*", "*"}, std::move(unit), "[layer, head] " + meaning),
          [name, field](const Measured& m, Record& r) {
            r.set_array(name, m.column(field), {m.layers, m.heads_per_layer});
          }};
}
Output head_count_array(const std::string& name, std::string unit, const std::string& meaning,
                        std::int64_t Head::*field) {
  return {runner::array_integer(name, {"*", "*"}, std::move(unit), "[layer, head] " + meaning),
          [name, field](const Measured& m, Record& r) {
            std::vector<std::int64_t> v;
            for (const Head& h : m.heads) v.push_back(h.*field);
            r.arrays[name] = runner::Array{{m.layers, m.heads_per_layer}, std::move(v)};
          }};
}
Output layer_array(const std::string& name, std::string unit, const std::string& meaning,
                   std::vector<double> Measured::*field) {
  return {runner::array_real(name, {"*"}, std::move(unit), "[layer] " + meaning),
          [name, field](const Measured& m, Record& r) { r.set_array(name, m.*field); }};
}
Output sample_array(const std::string& name, std::string unit, const std::string& meaning,
                    std::vector<std::int64_t> Measured::*field) {
  return {runner::array_integer(name, {"samples"}, std::move(unit), "per sample: " + meaning),
          [name, field](const Measured& m, Record& r) { r.set_array(name, m.*field); }};
}

// The outputs in declaration order: /points metrics (aggregates over heads), then the arrays.
const std::vector<Output>& output_table() {
  static const std::vector<Output> table = {
      count_metric("layers", "", "blocks of the model measured",
                   [](const Measured& m) { return std::int64_t(m.layers); }),
      count_metric("heads", "", "heads per block of the model measured",
                   [](const Measured& m) { return std::int64_t(m.heads_per_layer); }),
      over_heads("delta_max", "logit units", "largest delta_row over every head, row and sample (sup delta at this n)",
                 &Head::delta_max, max_of),
      over_heads("delta_half_mean", "logit units", "delta_row over rows with k >= n/2, mean over rows, then over heads",
                 &Head::delta_half_mean, mean_of),
      over_heads("delta_last_mean", "logit units", "delta of the last row, mean over heads", &Head::delta_last,
                 mean_of),
      over_heads("delta_last_max", "logit units", "delta of the last row, max over heads", &Head::delta_last, max_of),
      over_heads("alpha_max_last_max", "probability", "largest coefficient of the last row, max over heads",
                 &Head::alpha_max_last, max_of),
      over_heads("alpha_max_last_mean", "probability", "largest coefficient of the last row, mean over heads",
                 &Head::alpha_max_last, mean_of),
      over_heads("alpha_max_half_max", "probability", "largest coefficient over rows with k >= n/2 and heads",
                 &Head::alpha_max_half_max, max_of),
      over_heads("alpha_max_half_mean", "probability",
                 "largest coefficient per row, mean over rows with k >= n/2 and heads", &Head::alpha_max_half_mean,
                 mean_of),
      over_heads("n_alpha_max_last_max", "",
                 "k * alpha_max of the last row (k its keys), max over heads (1 for uniform attention)",
                 &Head::n_alpha_max_last, max_of),
      over_heads("n_alpha_max_half_mean", "",
                 "k * alpha_max over rows with k >= n/2, mean over rows and heads (bounded in n for dispersing heads)",
                 &Head::n_alpha_max_half_mean, mean_of),
      over_heads("entropy_last_mean", "nats", "entropy of the last row, mean over heads (ln n when uniform)",
                 &Head::entropy_last, mean_of),
      over_heads("entropy_last_min", "nats", "entropy of the last row, min over heads", &Head::entropy_last, min_of),
      over_heads("entropy_half_mean", "nats", "entropy over rows with k >= n/2, mean over rows and heads",
                 &Head::entropy_half_mean, mean_of),
      over_heads("entropy_gap_half_mean", "nats", "ln k - entropy over rows with k >= n/2, mean over rows and heads",
                 &Head::entropy_gap_half, mean_of),
      over_heads("entropy_all_mean", "nats", "entropy over every row, mean over rows and heads",
                 &Head::entropy_all_mean, mean_of),
      real_metric("ln_n", "nats",
                  "ln of a sequence's length, mean over samples (ln n; a task prompt's own length): the last row's "
                  "entropy under uniform attention",
                  [](const Measured& m) { return m.ln_n; }),
      real_metric("uniform_baseline", "nats",
                  "uniform attention's mean row entropy: ln(n!)/n causal, ln n encoder (n a sequence's length, mean "
                  "over samples)",
                  [](const Measured& m) { return m.uniform_baseline; }),
      real_metric("tokens", "tokens",
                  "length of a sequence, mean over samples: n, or a task prompt's own length (<= n)",
                  [](const Measured& m) { return mean_of(m.tokens); }),
      real_metric("task_length", "keys", "keys of a task prompt, mean over samples (0 for uniform and needle)",
                  [](const Measured& m) { return mean_of(m.task_length); }),
      real_metric("beta_max", "", "largest effective beta over every row and head (NaN outside the softmax family)",
                  [](const Measured& m) {
                    double beta = std::numeric_limits<double>::quiet_NaN();
                    for (const Head& h : m.heads)
                      if (std::isfinite(h.beta_max))
                        beta = std::isfinite(beta) ? std::max(beta, h.beta_max) : h.beta_max;
                    return beta;
                  }),
      over_heads("support_last_mean", "keys", "keys with p > 0 in the last row, mean over heads", &Head::support_last,
                 mean_of),
      total_over_heads("lemma_rows", "rows", "rows checked against the lemma (every row for the softmax family)",
                       &Head::lemma_rows),
      total_over_heads("lemma_violations", "rows",
                       "rows with alpha_max k > exp(beta delta_row) or alpha_min k < exp(-beta delta_row) (relative "
                       "slack 1e-12); must be 0",
                       &Head::lemma_violations),
      over_heads("weight_bound_min", "logit units", "the weight-norm bound on delta_row, min over heads", &Head::bound,
                 min_of),
      real_metric("weight_bound_ratio_max", "", "delta_max / weight-norm bound per head, max over heads (at most 1)",
                  [](const Measured& m) {
                    double ratio = 0;
                    for (const Head& h : m.heads) ratio = std::max(ratio, h.delta_max / h.bound);
                    return ratio;
                  }),
      count_metric("weight_bound_violations", "heads",
                   "heads whose delta_max exceeds their bound (relative slack 1e-12); must be 0",
                   [](const Measured& m) {
                     std::int64_t heads = 0;
                     for (const Head& h : m.heads) heads += h.delta_max > h.bound * (1.0 + head_measure::kLemmaSlack);
                     return heads;
                   }),
      over_heads("certificate_max", "logit units",
                 "the certificate (the weight-norm bound with R analytic where LayerNorm precedes attention), max over "
                 "heads",
                 &Head::certificate, max_of),
      head_array("delta_max", "logit units", "largest delta_row over every row and sample", &Head::delta_max),
      head_array("delta_half_max", "logit units", "largest delta_row over rows with k >= n/2", &Head::delta_half_max),
      head_array("delta_half_mean", "logit units", "mean delta_row over rows with k >= n/2", &Head::delta_half_mean),
      head_array("delta_last", "logit units", "delta of the last row (mean over samples)", &Head::delta_last),
      head_array("alpha_max_last", "probability", "largest coefficient of the last row (mean over samples)",
                 &Head::alpha_max_last),
      head_array("n_alpha_max_last", "", "k * largest coefficient of the last row, k its keys (mean over samples)",
                 &Head::n_alpha_max_last),
      head_array("alpha_min_last", "probability", "smallest coefficient of the last row (mean over samples)",
                 &Head::alpha_min_last),
      head_array("alpha_max_half_max", "probability", "largest coefficient over rows with k >= n/2",
                 &Head::alpha_max_half_max),
      head_array("alpha_max_half_mean", "probability", "mean over rows with k >= n/2 of the row's largest coefficient",
                 &Head::alpha_max_half_mean),
      head_array("n_alpha_max_half_mean", "", "mean over rows with k >= n/2 of k * the row's largest coefficient",
                 &Head::n_alpha_max_half_mean),
      head_array("entropy_last", "nats", "entropy of the last row (mean over samples)", &Head::entropy_last),
      head_array("entropy_half_mean", "nats", "mean entropy over rows with k >= n/2", &Head::entropy_half_mean),
      head_array("entropy_gap_half", "nats", "mean of ln k - entropy over rows with k >= n/2", &Head::entropy_gap_half),
      head_array("entropy_all_mean", "nats", "mean entropy over every row (compare uniform_baseline)",
                 &Head::entropy_all_mean),
      head_array("beta_last", "", "effective beta of the last row (NaN outside the softmax family)", &Head::beta_last),
      head_array("beta_max", "", "largest effective beta over every row", &Head::beta_max),
      head_array("support_last", "keys", "keys with p > 0 in the last row", &Head::support_last),
      head_array("support_half_mean", "keys", "mean support over rows with k >= n/2", &Head::support_half_mean),
      head_count_array("lemma_violations", "rows", "rows outside the lemma's bounds; must be 0",
                       &Head::lemma_violations),
      head_array("weight_bound", "logit units",
                 "2 (smax(W_q) R + |b_q|)(smax(W_k) R + |b_k|)/sqrt(d_head) (+ ALiBi's slope (n-1)), R the largest "
                 "attention input norm of the layer",
                 &Head::bound),
      head_array("certificate", "logit units",
                 "the weight-norm bound with R = certificate_input_norm: independent of n where LayerNorm precedes "
                 "attention (docs/science.md#measuring-heads)",
                 &Head::certificate),
      head_array("sigma_q", "", "largest singular value of the head's query weights", &Head::sigma_q),
      head_array("sigma_k", "", "largest singular value of the head's key weights", &Head::sigma_k),
      layer_array("input_norm_max", "", "largest norm of an attention input row (after LayerNorm)",
                  &Measured::input_norm_max),
      layer_array("certificate_input_norm", "",
                  "R of the certificate: sqrt(d_model) max|gain| + |bias| of the LayerNorm before attention, else "
                  "input_norm_max",
                  &Measured::certificate_input_norm),
      sample_array("tokens", "tokens", "its sequence's length (n, or a task prompt's own length)", &Measured::tokens),
      sample_array("task_length", "keys", "keys of its task prompt (0 for uniform and needle)", &Measured::task_length),
  };
  return table;
}

// Per-row statistics stored by --row-arrays 1 (row.<stat> [layer, head, sample, row]).
struct RowStat {
  const char* name;
  double (*value)(const transformer::AttentionRowStats&);
};
const RowStat kRowStats[] = {
    {"delta", [](const transformer::AttentionRowStats& s) { return s.logit_max - s.logit_min; }},
    {"alpha_max", [](const transformer::AttentionRowStats& s) { return s.alpha_max; }},
    {"alpha_min", [](const transformer::AttentionRowStats& s) { return s.alpha_min; }},
    {"entropy", [](const transformer::AttentionRowStats& s) { return s.entropy; }},
    {"beta", [](const transformer::AttentionRowStats& s) { return s.beta; }},
    {"support", [](const transformer::AttentionRowStats& s) { return double(s.support); }},
};

// The point's measurement: `passes` (each a batch of sequences of one length), the head summaries of
// each pass (`parts`) and of all of them (`summaries`), the heads' weight-norm bounds and the layers'
// largest attention input norms.
Measured measure(bool causal, std::size_t samples, const std::vector<Pass>& passes,
                 const std::vector<std::vector<head_measure::HeadSummary>>& parts,
                 const std::vector<head_measure::HeadSummary>& summaries,
                 const std::vector<head_measure::HeadWeightBound>& bounds, std::vector<double> input_norms) {
  Measured m;
  m.layers = passes[0].recorder.layers();
  m.heads_per_layer = passes[0].recorder.heads();
  m.heads.resize(summaries.size());
  m.certificate_input_norm.resize(m.layers);
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    Head& h = m.heads[i];
    static_cast<head_measure::HeadSummary&>(h) = summaries[i];
    static_cast<head_measure::HeadWeightBound&>(h) = bounds[i];
    h.lemma_violations = summaries[i].lemma_violations_upper + summaries[i].lemma_violations_lower;
    m.certificate_input_norm[i / m.heads_per_layer] = bounds[i].certificate_input_norm;
  }
  m.input_norm_max = std::move(input_norms);
  for (std::size_t i = 0; i < passes.size(); ++i) {
    const std::size_t length = passes[i].recorder.length(), batch = passes[i].recorder.batch();
    const double w = double(batch) / double(samples);
    m.ln_n += w * std::log(double(length));
    m.uniform_baseline += w * head_measure::uniform_entropy_baseline(length, causal);
    for (std::size_t j = 0; j < m.heads.size(); ++j)
      m.heads[j].n_alpha_max_last += w * double(length) * parts[i][j].alpha_max_last;
    m.tokens.insert(m.tokens.end(), batch, std::int64_t(length));
    m.task_length.insert(m.task_length.end(), passes[i].task_lengths.begin(), passes[i].task_lengths.end());
  }
  return m;
}

// row.<stat> [layer, head, sample, n] of every pass; rows past the end of a shorter task prompt are NaN.
void record_rows(const std::vector<Pass>& passes, std::size_t samples, std::size_t n, Record& r) {
  const std::size_t L = passes[0].recorder.layers(), H = passes[0].recorder.heads();
  const std::size_t stats = std::size(kRowStats);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<double>> rows(stats, std::vector<double>(L * H * samples * n, nan));
  std::size_t first = 0;  // the pass's first sample
  for (const Pass& pass : passes) {
    const head_measure::RowRecorder& rec = pass.recorder;
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t b = 0; b < rec.batch(); ++b)
          for (std::size_t i = 0; i < rec.length(); ++i) {
            const std::size_t at = ((l * H + h) * samples + first + b) * n + i;
            for (std::size_t k = 0; k < stats; ++k) rows[k][at] = kRowStats[k].value(rec.row(b, l, h, i));
          }
    first += rec.batch();
  }
  for (std::size_t k = 0; k < stats; ++k)
    r.set_array(std::string("row.") + kRowStats[k].name, std::move(rows[k]), {L, H, samples, n});
}

}  // namespace

class TransformerDispersionExperiment final : public runner::Experiment {
 public:
  std::string name() const override { return "transformer-dispersion"; }
  std::string summary() const override {
    return "Transformers disperse (docs/science.md#transformers-disperse). A random transformer (token embedding "
           "N(0,1), LeCun-normal weights x init_scale, pre-LayerNorm blocks of attention + 4d GELU MLP; defaults "
           "4 layers x 4 heads, d_model 128, vocab 64, causal, no positions) runs in double on `samples` inputs of "
           "n tokens (uniform tokens, or one repeated token with a needle). Per head and query row: the spread "
           "delta_row of the scaled, masked logits, alpha_max, alpha_min, entropy, and the dispersion lemma with "
           "the row's effective beta (violations must be 0), summarised per head (docs/science.md#measuring-heads) "
           "over the last row and over rows with k >= n/2, beside the head's weight-norm bound "
           "(docs/science.md#weight-norm-bound). /points hold aggregates over heads, /arrays the per-head values "
           "[layer, head]. A trained text model (--checkpoint) can instead read prompts of its own task of growing "
           "length (--input task), measured at the answer position. The check across n: "
           "analysis/transformer_theorem.py FILE.h5.";
  }
  std::vector<runner::ParamSpec> parameters() const override {
    // A sharp-train-text model (FILE.h5 = every model of the file, FILE.h5#ID = one), or `none`.
    runner::ParamSpec checkpoint =
        text_checkpoint_param("none", "a trained transformer (FILE.h5 or FILE.h5#ID) instead of a random one");
    checkpoint.allowed = "none (a random model) or " + checkpoint.allowed +
                         "; the random-model parameters must then keep their defaults";
    checkpoint.expand = [expand = checkpoint.expand](const std::string& item) {
      return item == "none" ? std::vector<std::string>{item} : expand(item);
    };
    checkpoint.check = [check = checkpoint.check](const runner::Value& v) -> std::optional<std::string> {
      if (std::get<std::string>(v) == "none") return std::nullopt;
      return check(v);
    };
    runner::ParamSpec normaliser =
        runner::text_param("normaliser", "softmax", "every head's normaliser (docs/science.md#remedies)", {});
    normaliser.allowed = "normaliser specs (docs/science.md#remedies)";
    normaliser.check = normaliser_spec_error;
    normaliser.identity = normaliser_identity;
    return {
        checkpoint,
        runner::model_fingerprint_param("checkpoint", kTextTrainers),  // which weights were scored
        runner::integer_param("layers", "4", "transformer blocks", 1).at_most(std::int64_t{64}),
        runner::integer_param("heads", "4", "attention heads per block", 1).at_most(std::int64_t{64}),
        runner::integer_param("d_model", "128", "model width (a multiple of heads)", 1).at_most(std::int64_t{4096}),
        runner::integer_param("vocab", "64", "vocabulary size", 1).at_most(std::int64_t{1} << 20),
        flag_param("causal", "1", "1: decoder (causal rows, k = i + 1 keys), 0: encoder (every row sees n keys)"),
        runner::text_param("positional", "none",
                           "positional scheme; alibi and index are unbounded in n (the negative controls)",
                           transformer::positional_names()),
        flag_param("layer_norm", "1", "1: pre-LayerNorm blocks and a final LayerNorm, 0: none"),
        runner::real_param_above("init_scale", "1", "multiplies every LeCun-normal weight", 0.0).at_most(1e6),
        runner::integer_param("max_length", "1024", "rows of the learned positional table (longest input it allows)", 1)
            .at_most(std::int64_t{1} << 20),
        normaliser,
        runner::integer_param("n", "2^4..2^14", "input length (tokens)", 1).at_most(std::int64_t{1} << 17),
        runner::text_param("input", "uniform",
                           "uniform: i.i.d. uniform tokens; needle: one repeated token and one other token at a random "
                           "position; task (--checkpoint only): the prompt of the model's task with the most keys that "
                           "fits n tokens, measured at its last row, the answer position",
                           kInputs),
        runner::integer_param("samples", "1", "input sequences per point", 1).at_most(std::int64_t{1024}),
        flag_param("row_arrays", "0",
                   "1: also store every row's statistics (row.<stat> [layer, head, sample, n]; 32 MB at n = 2^16)"),
    };
  }
  std::vector<runner::OutputSpec> outputs() const override {
    std::vector<runner::OutputSpec> out;
    for (const Output& o : output_table()) out.push_back(o.spec);
    runner::OutputSpec rows = runner::array_real(
        "row.<stat>", {"*", "*", "samples", "n"}, "",
        "one statistic of every query row: delta (logit units), alpha_max, alpha_min (probability), entropy (nats), "
        "beta (NaN outside the softmax family), support; NaN past the end of a task prompt shorter than n");
    rows.items = [](const Point& p) {
      std::vector<std::string> names;
      if (p.integer("row_arrays") == 1)
        for (const RowStat& s : kRowStats) names.push_back(s.name);
      return names;
    };
    for (const RowStat& s : kRowStats) rows.items_help += std::string(rows.items_help.empty() ? "" : ", ") + s.name;
    rows.items_help += " with --row-arrays 1; none otherwise";
    out.push_back(rows);
    return out;
  }
  // The model depends on its shape and the seed only (not on init_scale, which multiplies the same
  // standard normals, nor on n or the input); the inputs on n, the vocabulary and the input kind.
  std::vector<runner::StreamSpec> streams() const override {
    return {{"model", {"layers", "heads", "d_model", "vocab", "causal", "positional", "layer_norm", "max_length"}},
            {"inputs", {"n", "vocab", "input", "samples"}}};
  }
  void validate(const Point& p) const override {
    if (p.text("checkpoint") != "none") {
      // The random-model parameters first: that refusal does not depend on the file.
      for (const runner::ParamSpec& s : parameters())
        for (const std::string& r : kRandomOnly)
          if (s.name == r && runner::canonical(p.value(r)) != s.default_value)
            throw BadInput("--checkpoint: " + s.flag() +
                           " shapes a random model; a trained model brings its own (drop " + s.flag() + ")");
      const std::size_t n = std::size_t(p.integer("n"));
      TrainedTextModel trained;  // its description only: run() reads the weights, once
      try {
        trained = load_text_config(p.text("checkpoint"));
        trained.config.check_length(n);
      } catch (const BadInput& e) {
        throw BadInput(std::string("--checkpoint: ") + e.what() + " (--n)");
      }
      if (p.text("input") == "task") {
        if (n > std::size_t(text::kMaxSampleTokens))
          throw BadInput("--input task: --n " + std::to_string(n) + " is longer than the longest sample drawn (" +
                         std::to_string(text::kMaxSampleTokens) + " tokens)");
        for (text::Algorithm a : trained.mix.algorithms) {
          const std::string why = text_model::prompt_budget_refusal(a, trained.mix.trace, n);
          if (!why.empty()) throw BadInput("--input task --n " + std::to_string(n) + ": " + why);
        }
      }
      return;
    }
    if (p.text("input") == "task")
      throw BadInput("--input task: task prompts need a trained text model (--checkpoint FILE.h5)");
    const transformer::TransformerConfig config = random_config(p);
    try {
      config.validate();
    } catch (const BadInput& e) {
      throw BadInput(std::string(e.what()) + " (--layers, --heads, --d-model, --positional, --normaliser)");
    }
    try {
      config.check_length(std::size_t(p.integer("n")));
    } catch (const BadInput& e) {
      throw BadInput(std::string(e.what()) + " (--n, --max-length)");
    }
  }
  double estimated_cost(const Point& p) const override {
    const double n = double(p.integer("n")), d = double(p.integer("d_model"));
    const double attention =
        (p.integer("causal") == 1 ? 0.5 : 1.0) * n * n * (4.0 * d + 40.0 * double(p.integer("heads")));
    return double(p.integer("samples")) * double(p.integer("layers")) * (attention + 24.0 * n * d * d);
  }
  std::string notes() const override {
    return "Forward pass in double; every row's statistics come from the logits the normaliser saw (scaled by "
           "1/sqrt(d_head), ALiBi bias included, masked keys excluded). Effective beta: softmax's beta, adaptive's "
           "beta(H), ssmax's s ln k; other normalisers have none (NaN) and are not checked against the lemma. The "
           "lemma's lower bound is checked only where exp(-beta delta_row)/k is a normal double. The same seed gives "
           "the same model for every n, input and init_scale (init_scale multiplies fixed standard normals), so a "
           "head's delta can be followed across n. The certificate is the weight-norm bound with R = sqrt(d_model) "
           "max|gain| + |bias| of the LayerNorm before attention (a bound on every LayerNorm output, so the "
           "certificate does not depend on n or the input), or the measured R without LayerNorm. 'needle': one token repeated n times except one other token at a "
           "uniformly random position. --checkpoint: a sharp-train-text model, in double, with its own shape, "
           "positional scheme and normaliser (learned scalars included), on the same uniform or needle inputs over "
           "its character vocabulary, or ('task') on prompts of its own task: sample s is a prompt of the s-th algorithm "
           "of its mix (cyclically), at the largest allowed length (keys) whose question fits n tokens (the lengths "
           "are tried upwards and the first question longer than n stops the search), so n can run past the "
           "training lengths up to 2048 tokens; the prompt ends where the answer begins, so its last row is the "
           "answer position, and its rows are all real (no padding): ln_n, uniform_baseline and n * alpha_max use "
           "each prompt's own length (the metric tokens, <= n).";
  }

  Record run(const Point& p, runner::PointContext& ctx) const override {
    transformer::TransformerConfig config;
    std::vector<double> params;
    text_model::TaskMix mix;
    if (p.text("checkpoint") != "none") {
      TrainedTextModel trained = load_text_model(p.text("checkpoint"));
      config = trained.config;
      mix = std::move(trained.mix);
      params.assign(trained.params.begin(), trained.params.end());  // float weights, measured in double
    } else {
      config = random_config(p);
      const transformer::Transformer random(config);
      params.resize(random.parameter_count());
      transformer::init_parameters(random.layout(), params.data(), ctx.stream_key("model"));
    }
    const transformer::Transformer model(config);

    const std::size_t n = std::size_t(p.integer("n")), samples = std::size_t(p.integer("samples"));
    const std::size_t L = config.layers, H = config.heads;
    // Passes of the forward: uniform and needle inputs are one batch [samples, n]; task prompts have
    // their own lengths (<= n), one pass each.
    std::vector<Pass> passes;
    if (p.text("input") == "task") {
      for (std::size_t s = 0; s < samples; ++s) {
        const text::Algorithm a = mix.algorithms[s % mix.algorithms.size()];
        text_model::TaskPrompt prompt = text_model::longest_prompt(a, mix.trace, ctx.stream_key("inputs"), s, n);
        passes.push_back({head_measure::RowRecorder(1, L, H, prompt.tokens.size()),
                          std::move(prompt.tokens),
                          {std::int64_t(prompt.length)}});
      }
    } else {
      passes.push_back({head_measure::RowRecorder(samples, L, H, n),
                        make_tokens(p.text("input"), samples, n, config.vocab, ctx.stream_key("inputs")),
                        std::vector<std::int64_t>(samples, 0)});
    }
    std::vector<std::vector<head_measure::HeadSummary>> parts;
    std::vector<double> weights;
    std::vector<double> input_norms(L, 0.0);
    std::size_t longest = 0;
    for (Pass& pass : passes) {
      head_measure::RowRecorder& recorder = pass.recorder;
      {
        const nn::OmpThreadsScope threads(ctx.threads());
        transformer::transformer_forward<double>(model, params.data(), pass.tokens.data(), recorder.batch(),
                                                 recorder.length(), nullptr, nullptr, &recorder);
      }
      if (recorder.missing_rows() != 0)
        throw std::logic_error("transformer-dispersion: the forward pass skipped " +
                               std::to_string(recorder.missing_rows()) + " rows");
      parts.push_back(head_measure::summarise_heads(recorder));
      weights.push_back(double(recorder.batch()));
      for (std::size_t l = 0; l < L; ++l) input_norms[l] = std::max(input_norms[l], recorder.input_norm_max(l));
      longest = std::max(longest, recorder.length());
    }
    const std::vector<head_measure::HeadSummary> heads = head_measure::combine_summaries(parts, weights);
    const std::vector<head_measure::HeadWeightBound> bounds =
        head_measure::head_weight_bounds(model.layout(), params.data(), input_norms, longest);
    const Measured measured = measure(config.causal, samples, passes, parts, heads, bounds, input_norms);
    Record r;
    for (const Output& o : output_table()) o.record(measured, r);
    if (p.integer("row_arrays") == 1) record_rows(passes, samples, n, r);
    return r;
  }
};

}  // namespace sharp

SHARP_EXPERIMENT_MAIN(sharp::TransformerDispersionExperiment)
