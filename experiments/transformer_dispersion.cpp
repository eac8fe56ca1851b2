// sharp-transformer-dispersion — docs/science.md#transformers-disperse: every global head of a
// transformer over a finite vocabulary with bounded positions disperses as the input grows. One point
// is one model (random, from the model axes and the seed) on `samples` inputs of n tokens: a double
// forward pass hands every (layer, head, query row) to a RowRecorder (lib/head_measure), which the
// point summarises per head (docs/science.md#measuring-heads) beside the head's weight-norm bound
// (docs/science.md#weight-norm-bound) and its certificate (the bound with LayerNorm's analytic input
// norm, independent of n). The check across n (β·certificate constant in n, the lemma, the O(1/n)
// rate of α_max) reads the result file: analysis/transformer_theorem.py.
#include <cmath>
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
#include "random/counter_rng.hpp"
#include "text_model/task_prompt.hpp"
#include "runners/main.hpp"
#include "transformer/config.hpp"
#include "transformer/model.hpp"

namespace sharp {

using runner::Point;
using runner::Record;

namespace {

const std::vector<std::string> kInputs = {"uniform", "needle", "task"};
// Parameters that shape a random model; a trained model (--checkpoint) brings its own.
// (normaliser too: a trained model's heads keep the normaliser, and learned scalars, they were trained with.)
const std::vector<std::string> kRandomOnly = {"layers",     "heads",      "d_model",    "vocab",     "causal",
                                              "positional", "layer_norm", "init_scale", "max_length", "normaliser"};
// Per-row statistics stored by --row-arrays 1, [layer, head, sample, row].
const std::vector<std::string> kRowStats = {"delta", "alpha_max", "alpha_min", "entropy", "beta", "support"};

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
      const auto needle = vocab > 1 ? std::int32_t((std::uint64_t(filler) + 1 + rng::bits(k, 1) % (vocab - 1)) % vocab)
                                    : filler;
      std::fill(t, t + n, filler);
      t[rng::bits(k, 2) % n] = needle;
    }
  }
  return tokens;
}

template <class F>
std::vector<double> per_head(const std::vector<head_measure::HeadSummary>& heads, F field) {
  std::vector<double> v;
  v.reserve(heads.size());
  for (const auto& h : heads) v.push_back(field(h));
  return v;
}

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

// One forward pass: its rows, its tokens [batch, length], and per sequence the task length (keys of a
// task prompt; 0 for uniform and needle inputs).
struct Pass {
  head_measure::RowRecorder recorder;
  std::vector<std::int32_t> tokens;
  std::vector<std::int64_t> task_lengths;
};

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
        flag_param("row_arrays", "0", "1: also store every row's statistics (row.<stat> [layer, head, sample, n]; 32 MB at n = 2^16)"),
    };
  }
  std::vector<runner::OutputSpec> outputs() const override {
    using runner::array_integer, runner::array_real, runner::metric_integer, runner::metric_real;
    const std::vector<std::string> lh = {"*", "*"};
    runner::OutputSpec rows = array_real("row.<stat>", {"*", "*", "samples", "n"}, "",
                                         "one statistic of every query row: delta (logit units), alpha_max, alpha_min "
                                         "(probability), entropy (nats), beta (NaN outside the softmax family), support; "
                                         "NaN past the end of a task prompt shorter than n");
    rows.items = [](const Point& p) { return p.integer("row_arrays") == 1 ? kRowStats : std::vector<std::string>{}; };
    rows.items_help = "delta, alpha_max, alpha_min, entropy, beta, support with --row-arrays 1; none otherwise";
    return {
        metric_integer("layers", "", "blocks of the model measured"),
        metric_integer("heads", "", "heads per block of the model measured"),
        metric_real("delta_max", "logit units", "largest delta_row over every head, row and sample (sup delta at this n)"),
        metric_real("delta_half_mean", "logit units", "delta_row over rows with k >= n/2, mean over rows, then over heads"),
        metric_real("delta_last_mean", "logit units", "delta of the last row, mean over heads"),
        metric_real("delta_last_max", "logit units", "delta of the last row, max over heads"),
        metric_real("alpha_max_last_max", "probability", "largest coefficient of the last row, max over heads"),
        metric_real("alpha_max_last_mean", "probability", "largest coefficient of the last row, mean over heads"),
        metric_real("alpha_max_half_max", "probability", "largest coefficient over rows with k >= n/2 and heads"),
        metric_real("alpha_max_half_mean", "probability", "largest coefficient per row, mean over rows with k >= n/2 and heads"),
        metric_real("n_alpha_max_last_max", "", "k * alpha_max of the last row (k its keys), max over heads (1 for uniform attention)"),
        metric_real("n_alpha_max_half_mean", "",
                    "k * alpha_max over rows with k >= n/2, mean over rows and heads (bounded in n for dispersing heads)"),
        metric_real("entropy_last_mean", "nats", "entropy of the last row, mean over heads (ln n when uniform)"),
        metric_real("entropy_last_min", "nats", "entropy of the last row, min over heads"),
        metric_real("entropy_half_mean", "nats", "entropy over rows with k >= n/2, mean over rows and heads"),
        metric_real("entropy_gap_half_mean", "nats", "ln k - entropy over rows with k >= n/2, mean over rows and heads"),
        metric_real("entropy_all_mean", "nats", "entropy over every row, mean over rows and heads"),
        metric_real("ln_n", "nats", "ln of a sequence's length, mean over samples (ln n; a task prompt's own length): the last row's entropy under uniform attention"),
        metric_real("uniform_baseline", "nats", "uniform attention's mean row entropy: ln(n!)/n causal, ln n encoder (n a sequence's length, mean over samples)"),
        metric_real("tokens", "tokens", "length of a sequence, mean over samples: n, or a task prompt's own length (<= n)"),
        metric_real("task_length", "keys", "keys of a task prompt, mean over samples (0 for uniform and needle)"),
        metric_real("beta_max", "", "largest effective beta over every row and head (NaN outside the softmax family)"),
        metric_real("support_last_mean", "keys", "keys with p > 0 in the last row, mean over heads"),
        metric_integer("lemma_rows", "rows", "rows checked against the lemma (every row for the softmax family)"),
        metric_integer("lemma_violations", "rows",
                       "rows with alpha_max k > exp(beta delta_row) or alpha_min k < exp(-beta delta_row) (relative slack 1e-12); must be 0"),
        metric_real("weight_bound_min", "logit units", "the weight-norm bound on delta_row, min over heads"),
        metric_real("weight_bound_ratio_max", "", "delta_max / weight-norm bound per head, max over heads (at most 1)"),
        metric_integer("weight_bound_violations", "heads", "heads whose delta_max exceeds their bound (relative slack 1e-12); must be 0"),
        metric_real("certificate_max", "logit units",
                    "the certificate (the weight-norm bound with R analytic where LayerNorm precedes attention), max over heads"),
        array_real("delta_max", lh, "logit units", "[layer, head] largest delta_row over every row and sample"),
        array_real("delta_half_max", lh, "logit units", "[layer, head] largest delta_row over rows with k >= n/2"),
        array_real("delta_half_mean", lh, "logit units", "[layer, head] mean delta_row over rows with k >= n/2"),
        array_real("delta_last", lh, "logit units", "[layer, head] delta of the last row (mean over samples)"),
        array_real("alpha_max_last", lh, "probability", "[layer, head] largest coefficient of the last row (mean over samples)"),
        array_real("n_alpha_max_last", lh, "", "[layer, head] k * largest coefficient of the last row, k its keys (mean over samples)"),
        array_real("alpha_min_last", lh, "probability", "[layer, head] smallest coefficient of the last row (mean over samples)"),
        array_real("alpha_max_half_max", lh, "probability", "[layer, head] largest coefficient over rows with k >= n/2"),
        array_real("alpha_max_half_mean", lh, "probability", "[layer, head] mean over rows with k >= n/2 of the row's largest coefficient"),
        array_real("n_alpha_max_half_mean", lh, "", "[layer, head] mean over rows with k >= n/2 of k * the row's largest coefficient"),
        array_real("entropy_last", lh, "nats", "[layer, head] entropy of the last row (mean over samples)"),
        array_real("entropy_half_mean", lh, "nats", "[layer, head] mean entropy over rows with k >= n/2"),
        array_real("entropy_gap_half", lh, "nats", "[layer, head] mean of ln k - entropy over rows with k >= n/2"),
        array_real("entropy_all_mean", lh, "nats", "[layer, head] mean entropy over every row (compare uniform_baseline)"),
        array_real("beta_last", lh, "", "[layer, head] effective beta of the last row (NaN outside the softmax family)"),
        array_real("beta_max", lh, "", "[layer, head] largest effective beta over every row"),
        array_real("support_last", lh, "keys", "[layer, head] keys with p > 0 in the last row"),
        array_real("support_half_mean", lh, "keys", "[layer, head] mean support over rows with k >= n/2"),
        array_integer("lemma_violations", lh, "rows", "[layer, head] rows outside the lemma's bounds; must be 0"),
        array_real("weight_bound", lh, "logit units",
                   "[layer, head] 2 (smax(W_q) R + |b_q|)(smax(W_k) R + |b_k|)/sqrt(d_head) (+ ALiBi's slope (n-1)), "
                   "R the largest attention input norm of the layer"),
        array_real("certificate", lh, "logit units",
                   "[layer, head] the weight-norm bound with R = certificate_input_norm: independent of n where "
                   "LayerNorm precedes attention (docs/science.md#measuring-heads)"),
        array_real("sigma_q", lh, "", "[layer, head] largest singular value of the head's query weights"),
        array_real("sigma_k", lh, "", "[layer, head] largest singular value of the head's key weights"),
        array_real("input_norm_max", {"*"}, "", "[layer] largest norm of an attention input row (after LayerNorm)"),
        array_real("certificate_input_norm", {"*"}, "",
                   "[layer] R of the certificate: sqrt(d_model) max|gain| + |bias| of the LayerNorm before attention, "
                   "else input_norm_max"),
        array_integer("tokens", {"samples"}, "tokens", "per sample: its sequence's length (n, or a task prompt's own length)"),
        array_integer("task_length", {"samples"}, "keys", "per sample: keys of its task prompt (0 for uniform and needle)"),
        rows,
    };
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
            throw BadInput("--checkpoint: " + s.flag() + " shapes a random model; a trained model brings its own (drop " +
                           s.flag() + ")");
      const std::size_t n = std::size_t(p.integer("n"));
      TrainedTextModel trained;   // its description only: run() reads the weights, once
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
    const double attention = (p.integer("causal") == 1 ? 0.5 : 1.0) * n * n * (4.0 * d + 40.0 * double(p.integer("heads")));
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
      params.assign(trained.params.begin(), trained.params.end());   // float weights, measured in double
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
        passes.push_back({head_measure::RowRecorder(1, L, H, prompt.tokens.size()), std::move(prompt.tokens),
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
    return record(p, config.causal, passes, parts, heads, bounds, input_norms);
  }

private:
  static Record record(const Point& p, bool causal, const std::vector<Pass>& passes,
                       const std::vector<std::vector<head_measure::HeadSummary>>& parts,
                       const std::vector<head_measure::HeadSummary>& heads,
                       const std::vector<head_measure::HeadWeightBound>& bounds, const std::vector<double>& input_norms) {
    using head_measure::HeadSummary;
    const std::size_t L = passes[0].recorder.layers(), H = passes[0].recorder.heads();
    const std::size_t n = std::size_t(p.integer("n")), B = std::size_t(p.integer("samples"));
    const std::vector<std::size_t> lh = {L, H};
    // Means over the sequences of quantities of each sequence's own length (n but for task prompts).
    std::vector<std::int64_t> tokens, task_lengths;
    double ln_n = 0, baseline = 0;
    std::vector<double> n_alpha_last(L * H, 0.0);
    for (std::size_t i = 0; i < passes.size(); ++i) {
      const std::size_t length = passes[i].recorder.length(), batch = passes[i].recorder.batch();
      const double w = double(batch) / double(B);
      ln_n += w * std::log(double(length));
      baseline += w * head_measure::uniform_entropy_baseline(length, causal);
      for (std::size_t j = 0; j < L * H; ++j) n_alpha_last[j] += w * double(length) * parts[i][j].alpha_max_last;
      tokens.insert(tokens.end(), batch, std::int64_t(length));
      task_lengths.insert(task_lengths.end(), passes[i].task_lengths.begin(), passes[i].task_lengths.end());
    }
    auto mean_integer = [](const std::vector<std::int64_t>& v) {
      double sum = 0;
      for (std::int64_t x : v) sum += double(x);
      return sum / double(v.size());
    };
    Record r;
    auto both = [&](const std::string& name, std::vector<double> v) { r.set_array(name, std::move(v), lh); };
    const auto delta_max = per_head(heads, [](const HeadSummary& h) { return h.delta_max; });
    const auto delta_half_mean = per_head(heads, [](const HeadSummary& h) { return h.delta_half_mean; });
    const auto delta_last = per_head(heads, [](const HeadSummary& h) { return h.delta_last; });
    const auto alpha_last = per_head(heads, [](const HeadSummary& h) { return h.alpha_max_last; });
    const auto alpha_half_max = per_head(heads, [](const HeadSummary& h) { return h.alpha_max_half_max; });
    const auto alpha_half_mean = per_head(heads, [](const HeadSummary& h) { return h.alpha_max_half_mean; });
    const auto n_alpha_half_mean = per_head(heads, [](const HeadSummary& h) { return h.n_alpha_max_half_mean; });
    const auto entropy_last = per_head(heads, [](const HeadSummary& h) { return h.entropy_last; });
    const auto entropy_half = per_head(heads, [](const HeadSummary& h) { return h.entropy_half_mean; });
    const auto entropy_gap = per_head(heads, [](const HeadSummary& h) { return h.entropy_gap_half; });
    const auto entropy_all = per_head(heads, [](const HeadSummary& h) { return h.entropy_all_mean; });
    const auto beta_max = per_head(heads, [](const HeadSummary& h) { return h.beta_max; });
    const auto support_last = per_head(heads, [](const HeadSummary& h) { return h.support_last; });
    std::vector<double> bound(heads.size()), certificate(heads.size()), sigma_q(heads.size()), sigma_k(heads.size());
    std::vector<double> certificate_input_norm(L);
    std::vector<std::int64_t> violations(heads.size());
    double ratio_max = 0;
    std::int64_t bound_violations = 0, lemma_rows = 0, lemma_violations = 0;
    for (std::size_t i = 0; i < heads.size(); ++i) {
      bound[i] = bounds[i].bound;
      certificate[i] = bounds[i].certificate;
      certificate_input_norm[i / H] = bounds[i].certificate_input_norm;
      sigma_q[i] = bounds[i].sigma_q;
      sigma_k[i] = bounds[i].sigma_k;
      ratio_max = std::max(ratio_max, delta_max[i] / bound[i]);
      bound_violations += delta_max[i] > bound[i] * (1.0 + head_measure::kLemmaSlack);
      violations[i] = heads[i].lemma_violations_upper + heads[i].lemma_violations_lower;
      lemma_rows += heads[i].lemma_rows;
      lemma_violations += violations[i];
    }
    double beta_overall = std::numeric_limits<double>::quiet_NaN();
    for (double b : beta_max)
      if (std::isfinite(b)) beta_overall = std::isfinite(beta_overall) ? std::max(beta_overall, b) : b;

    r.set_count("layers", std::int64_t(L));
    r.set_count("heads", std::int64_t(H));
    r.set("delta_max", max_of(delta_max));
    r.set("delta_half_mean", mean_of(delta_half_mean));
    r.set("delta_last_mean", mean_of(delta_last));
    r.set("delta_last_max", max_of(delta_last));
    r.set("alpha_max_last_max", max_of(alpha_last));
    r.set("alpha_max_last_mean", mean_of(alpha_last));
    r.set("alpha_max_half_max", max_of(alpha_half_max));
    r.set("alpha_max_half_mean", mean_of(alpha_half_mean));
    r.set("n_alpha_max_last_max", max_of(n_alpha_last));
    r.set("n_alpha_max_half_mean", mean_of(n_alpha_half_mean));
    r.set("entropy_last_mean", mean_of(entropy_last));
    r.set("entropy_last_min", min_of(entropy_last));
    r.set("entropy_half_mean", mean_of(entropy_half));
    r.set("entropy_gap_half_mean", mean_of(entropy_gap));
    r.set("entropy_all_mean", mean_of(entropy_all));
    r.set("ln_n", ln_n);
    r.set("uniform_baseline", baseline);
    r.set("tokens", mean_integer(tokens));
    r.set("task_length", mean_integer(task_lengths));
    r.set("beta_max", beta_overall);
    r.set("support_last_mean", mean_of(support_last));
    r.set_count("lemma_rows", lemma_rows);
    r.set_count("lemma_violations", lemma_violations);
    r.set("weight_bound_min", min_of(bound));
    r.set("weight_bound_ratio_max", ratio_max);
    r.set_count("weight_bound_violations", bound_violations);
    r.set("certificate_max", max_of(certificate));

    both("delta_max", delta_max);
    both("delta_half_max", per_head(heads, [](const HeadSummary& h) { return h.delta_half_max; }));
    both("delta_half_mean", delta_half_mean);
    both("delta_last", delta_last);
    both("alpha_max_last", alpha_last);
    both("n_alpha_max_last", n_alpha_last);
    both("alpha_min_last", per_head(heads, [](const HeadSummary& h) { return h.alpha_min_last; }));
    both("alpha_max_half_max", alpha_half_max);
    both("alpha_max_half_mean", alpha_half_mean);
    both("n_alpha_max_half_mean", n_alpha_half_mean);
    both("entropy_last", entropy_last);
    both("entropy_half_mean", entropy_half);
    both("entropy_gap_half", entropy_gap);
    both("entropy_all_mean", entropy_all);
    both("beta_last", per_head(heads, [](const HeadSummary& h) { return h.beta_last; }));
    both("beta_max", beta_max);
    both("support_last", support_last);
    both("support_half_mean", per_head(heads, [](const HeadSummary& h) { return h.support_half_mean; }));
    both("weight_bound", bound);
    both("certificate", certificate);
    both("sigma_q", sigma_q);
    both("sigma_k", sigma_k);
    r.arrays["lemma_violations"] = runner::Array{lh, std::move(violations)};
    r.set_array("input_norm_max", input_norms);
    r.set_array("certificate_input_norm", std::move(certificate_input_norm));
    r.arrays["tokens"] = runner::Array{{B}, std::move(tokens)};
    r.arrays["task_length"] = runner::Array{{B}, std::move(task_lengths)};

    if (p.integer("row_arrays") == 1) {
      // Rows past the end of a shorter task prompt are NaN.
      const std::vector<std::size_t> shape = {L, H, B, n};
      std::vector<std::vector<double>> rows(kRowStats.size(),
                                            std::vector<double>(L * H * B * n, std::numeric_limits<double>::quiet_NaN()));
      std::size_t first = 0;   // the pass's first sample
      for (const Pass& pass : passes) {
        const head_measure::RowRecorder& rec = pass.recorder;
        for (std::size_t l = 0; l < L; ++l)
          for (std::size_t h = 0; h < H; ++h)
            for (std::size_t b = 0; b < rec.batch(); ++b)
              for (std::size_t i = 0; i < rec.length(); ++i) {
                const auto& s = rec.row(b, l, h, i);
                const std::size_t at = ((l * H + h) * B + first + b) * n + i;
                const double values[] = {s.logit_max - s.logit_min, s.alpha_max, s.alpha_min, s.entropy, s.beta,
                                         double(s.support)};
                for (std::size_t k = 0; k < kRowStats.size(); ++k) rows[k][at] = values[k];
              }
        first += rec.batch();
      }
      for (std::size_t k = 0; k < kRowStats.size(); ++k) r.set_array("row." + kRowStats[k], std::move(rows[k]), shape);
    }
    return r;
  }
};

}  // namespace sharp

SHARP_EXPERIMENT_MAIN(sharp::TransformerDispersionExperiment)
