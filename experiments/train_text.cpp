// sharp-train-text — docs/science.md#algorithmic-text, training half: one point trains one causal
// transformer from scratch on text in the CLRS-Text format (docs/science.md#clrs-text-format) generated
// by lib/text, with the point's normaliser in every head (learned scalars trained in), fresh samples
// every step drawn uniformly over the allowed (algorithm, length) pairs of the mix, and the loss on
// answer tokens only. Checkpoints (weights, AdamW state, curve) go through the runner, so a killed run
// resumes to the same weights; the trainer is bit-identical for any thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "core/errors.hpp"
#include "experiments/float_training_state.hpp"
#include "experiments/text_model_params.hpp"
#include "experiments/training_curve.hpp"
#include "normalisers/learned_scalars.hpp"
#include "runners/main.hpp"
#include "text/sample.hpp"
#include "text/tokeniser.hpp"
#include "text_model/task_mix.hpp"
#include "text_model/teacher_forced.hpp"
#include "text_model/token_batch.hpp"
#include "transformer/layout.hpp"
#include "transformer/model_arrays.hpp"
#include "transformer/trainer.hpp"

namespace sharp {

using runner::Point;
using runner::Record;

namespace {

text_model::TaskMix task_mix(const Point& p) {
  return {text_model::parse_algorithm_mix(p.text("algorithms")), text_model::parse_lengths(p.text("lengths")),
          p.text("trace") == "on"};
}

// The longest row the model sees in training: the largest token bound of prompt plus answer over the
// mix's (algorithm, length) pairs (2 when there is none; validate refuses that mix).
std::size_t longest_training_row(const text_model::TaskMix& mix) {
  int longest = 2;
  for (const auto& [a, n] : mix.pairs()) longest = std::max(longest, text::token_bound(a, n, mix.trace));
  return std::size_t(longest);
}

transformer::TransformerConfig model_config(const Point& p) {
  transformer::TransformerConfig c;
  c.layers = std::size_t(p.integer("layers"));
  c.heads = std::size_t(p.integer("heads"));
  c.d_model = std::size_t(p.integer("d_model"));
  c.vocab = std::size_t(text::vocabulary_size());
  c.positional = transformer::parse_positional(p.text("positional"));
  c.normaliser = p.text("normaliser");
  c.max_length = std::size_t(p.integer("max_length"));
  // ssmax:s=learn starts at s = 1/ln T with T the longest training row, so s·ln n = 1 there
  // (docs/science.md#learned-scalars), not at max_length, which only bounds the positions.
  c.train_length = longest_training_row(task_mix(p));
  return c;
}

std::vector<text::Sample> draw_batch(const text_model::TaskMix& mix, std::uint64_t key, std::uint64_t first,
                                     std::size_t count) {
  std::vector<text::Sample> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(text_model::draw_mixed(mix, key, first + i));
  return out;
}

// The training curve (experiments/training_curve.hpp): train figures are means over the steps since
// the previous entry, eval figures teacher-forced on the fixed evaluation set.
struct CurveEntry {
  double train_loss = 0, train_token_accuracy = 0, grad_norm = 0, lr = 0, eval_loss = 0, eval_token_accuracy = 0,
         eval_exact_match = 0;

  static constexpr const char* kStepMeaning = "step of each curve entry";
  static inline const CurveSeries<CurveEntry> kSeries[] = {
      {"train_loss", &CurveEntry::train_loss, "nats", "mean training loss per answer token since the previous entry"},
      {"train_token_accuracy", &CurveEntry::train_token_accuracy, "fraction",
       "answer tokens predicted right (teacher-forced) since the previous entry"},
      {"grad_norm", &CurveEntry::grad_norm, "", "mean global gradient norm since the previous entry"},
      {"lr", &CurveEntry::lr, "", "learning rate of the entry's step"},
      {"eval_loss", &CurveEntry::eval_loss, "nats", "mean loss per answer token on the fixed evaluation set"},
      {"eval_token_accuracy", &CurveEntry::eval_token_accuracy, "fraction",
       "answer tokens right on the evaluation set (teacher-forced)"},
      {"eval_exact_match", &CurveEntry::eval_exact_match, "fraction",
       "evaluation samples with every answer token right (= greedy exact match of the answer)"},
  };
};
// Sums as reals, as earlier checkpoints hold them.
struct CurveWindow {
  double loss = 0, grad_norm = 0, targets = 0, correct = 0, steps = 0;

  static inline const WindowSum<CurveWindow> kSums[] = {{"window.loss", &CurveWindow::loss},
                                                        {"window.grad_norm", &CurveWindow::grad_norm},
                                                        {"window.targets", &CurveWindow::targets},
                                                        {"window.correct", &CurveWindow::correct},
                                                        {"window.steps", &CurveWindow::steps}};
};
using Curve = TrainingCurve<CurveEntry, CurveWindow>;

// The progress line of a curve entry: its training loss and the evaluation set's figures.
std::string progress_detail(const Curve& curve) {
  char b[160];
  std::snprintf(b, sizeof b, "train loss %.4f, eval loss %.4f, exact match %.3f on the evaluation set",
                curve.last().train_loss, curve.last().eval_loss, curve.last().eval_exact_match);
  return b;
}

std::vector<std::string> tensor_names(const Point& p) {
  std::vector<std::string> names;
  const transformer::TransformerLayout layout = transformer::make_layout(model_config(p));
  for (const nn::TensorInfo& t : layout.params.tensors()) names.push_back(t.name);
  return names;
}

}  // namespace

class TrainTextExperiment final : public runner::Experiment {
 public:
  std::string name() const override { return "train-text"; }
  std::string summary() const override {
    return "Algorithmic text, training (docs/science.md#algorithmic-text). Trains a causal transformer from scratch "
           "on samples generated in the CLRS-Text format (docs/science.md#clrs-text-format; not the released data), "
           "every head with the given normaliser (learned scalars trained in, docs/science.md#learned-scalars), "
           "loss on answer tokens only, fresh samples every step over the (algorithm, length) pairs of the mix. "
           "Records the training curve, teacher-forced scores on a fixed set at the training lengths, and the "
           "final weights (/arrays/<id>/param.<tensor>) for sharp-eval-text.";
  }
  std::vector<runner::ParamSpec> parameters() const override {
    std::vector<runner::ParamSpec> p = text_model_parameters();  // the model's description, shared with its readers
    p.insert(p.end(),
             {
                 runner::integer_param("batch", "32", "samples per optimiser step", 1).at_most(std::int64_t{1} << 14),
                 runner::integer_param("steps", "3000", "optimiser steps", 1).at_most(std::int64_t{10000000}),
                 runner::real_param_above("lr", "1e-3", "peak learning rate (AdamW)", 0.0).at_most(10.0),
                 runner::real_param_at_least("weight_decay", "0.01",
                                             "AdamW decoupled weight decay (not on learned scalars)", 0.0),
                 runner::integer_param("warmup", "100", "linear learning-rate warmup steps", 0),
                 runner::real_param_at_least("clip", "1", "clip gradients to this global norm (0 = off)", 0.0),
                 runner::integer_param("eval_every", "250", "steps between entries of the training curve", 1)
                     .at_most(std::int64_t{10000000}),
                 runner::integer_param("eval_samples", "256", "fixed evaluation samples at the training lengths", 1)
                     .at_most(std::int64_t{1} << 20),
             });
    return p;
  }
  std::vector<runner::OutputSpec> outputs() const override {
    using runner::array_integer, runner::array_real, runner::metric_integer, runner::metric_real;
    std::vector<runner::OutputSpec> out = {
        metric_real("exact_match", "fraction",
                    "evaluation samples at the training lengths with the whole answer right (teacher-forced = greedy)"),
        metric_real("token_accuracy", "fraction", "answer tokens right on the evaluation samples (teacher-forced)"),
        metric_real("eval_loss", "nats", "mean loss per answer token on the evaluation samples"),
        metric_real("final_train_loss", "nats", "mean training loss per answer token of the last curve window"),
        metric_integer("parameters", "weights", "number of trained weights"),
    };
    for (runner::OutputSpec& o : Curve::outputs()) out.push_back(std::move(o));
    runner::OutputSpec param =
        array_real("param.<tensor>", {"..."}, "", "final weights of one tensor (float32 values stored as float64)");
    param.items = tensor_names;
    param.items_help = "one per weight tensor of the transformer, e.g. param.embedding [vocab, d_model]";
    out.push_back(param);
    return out;
  }
  // Training and evaluation data depend on the task only, so models of one sweep see the same text.
  std::vector<runner::StreamSpec> streams() const override {
    return {{"data", {"algorithms", "lengths", "trace"}},
            {"init", {"layers", "heads", "d_model", "positional", "normaliser", "max_length"}},
            {"eval", {"algorithms", "lengths", "trace"}}};
  }
  void validate(const Point& p) const override {
    model_config(p).validate();
    if (p.integer("warmup") >= p.integer("steps"))
      throw BadInput("--warmup: must be smaller than --steps (got warmup=" + std::to_string(p.integer("warmup")) +
                     ", steps=" + std::to_string(p.integer("steps")) + ")");
    const text_model::TaskMix mix = task_mix(p);
    if (mix.pairs().empty())
      throw BadInput("--algorithms/--lengths/--trace: no (algorithm, length) pair may be drawn: " +
                     text::length_refusal(mix.algorithms.front(), mix.lengths.front(), mix.trace));
    for (const auto& [a, n] : mix.pairs())
      if (std::int64_t(text::token_bound(a, n, mix.trace)) > p.integer("max_length"))
        throw BadInput("--max-length: " + std::string(text::algorithm_name(a)) + " at length " + std::to_string(n) +
                       " may need " + std::to_string(text::token_bound(a, n, mix.trace)) + " tokens");
  }
  double estimated_cost(const Point& p) const override {
    const double d = double(p.integer("d_model"));
    return double(p.integer("steps")) * double(p.integer("batch")) * double(p.integer("layers")) * 12.0 * d * d;
  }
  std::string notes() const override {
    return "Text generated in the CLRS-Text format by lib/text (docs/science.md#clrs-text-format), not the released "
           "data; character tokens plus one token per algorithm and field name; the loss is on answer tokens only "
           "(prompt targets ignored, pads at the end); AdamW beta1 0.9, beta2 0.999, eps 1e-8, cosine schedule to 1% "
           "after linear warmup; the curve's exact match is teacher-forced, which equals greedy decoding's exact "
           "match of the whole answer.";
  }

  Record run(const Point& p, runner::PointContext& ctx) const override {
    transformer::TrainerConfig config;
    config.model = model_config(p);
    config.optimiser.weight_decay = p.real("weight_decay");
    config.clip = p.real("clip");
    const std::int64_t steps = p.integer("steps"), eval_every = p.integer("eval_every");
    config.schedule = {nn::ScheduleKind::Cosine, p.real("lr"), steps, p.integer("warmup"), 0.01};
    const text_model::TaskMix mix = task_mix(p);
    const std::size_t batch = std::size_t(p.integer("batch"));
    const std::uint64_t data_key = ctx.stream_key("data");
    const std::vector<text::Sample> eval_set =
        draw_batch(mix, ctx.stream_key("eval"), 0, std::size_t(p.integer("eval_samples")));

    transformer::Trainer trainer(config, ctx.stream_key("init"), ctx.threads());
    Curve curve;
    if (auto saved = ctx.load_checkpoint()) {
      load_training_checkpoint(*saved, steps, [&](std::int64_t step) {
        load_float_training_state(*saved, trainer.params(), trainer.optimiser().m(), trainer.optimiser().v());
        trainer.optimiser().set_steps(step);
        curve.load_state(*saved);
      });
    }
    const std::int64_t first_step = trainer.steps_done();
    while (trainer.steps_done() < steps) {
      const std::uint64_t first = std::uint64_t(trainer.steps_done()) * batch;
      const text_model::TokenBatch b = text_model::make_token_batch(draw_batch(mix, data_key, first, batch));
      const transformer::StepStats s = trainer.step(b.inputs.data(), b.targets.data(), b.batch, b.length);
      const std::int64_t done = trainer.steps_done();
      curve.window.loss += s.loss;
      curve.window.grad_norm += s.grad_norm;
      curve.window.targets += double(s.targets);
      curve.window.correct += double(s.correct);
      curve.window.steps += 1.0;
      if (done % eval_every == 0 || done == steps) {
        const text_model::TeacherForcedScore e =
            text_model::teacher_forced_score(trainer.model(), trainer.params().data(), eval_set, ctx.threads());
        const double w = curve.window.steps;
        curve.append(done, {.train_loss = curve.window.loss / w,
                            .train_token_accuracy = curve.window.correct / std::max(1.0, curve.window.targets),
                            .grad_norm = curve.window.grad_norm / w,
                            .lr = s.lr,
                            .eval_loss = e.loss,
                            .eval_token_accuracy = e.token_accuracy,
                            .eval_exact_match = e.exact_match});
        ctx.report_progress({"step", done, steps, first_step, progress_detail(curve)});
      }
      if (done < steps && ctx.checkpoint_due()) {
        runner::CheckpointState state;
        save_float_training_state(state, trainer.params(), trainer.optimiser().m(), trainer.optimiser().v());
        state.set_count("step", done);
        curve.save_state(state);
        ctx.save_checkpoint(state);
      }
    }

    Record r;
    r.set("exact_match", curve.last().eval_exact_match);
    r.set("token_accuracy", curve.last().eval_token_accuracy);
    r.set("eval_loss", curve.last().eval_loss);
    r.set("final_train_loss", curve.last().train_loss);
    r.set_count("parameters", std::int64_t(trainer.params().size()));
    curve.save(r);
    for (auto& [name, array] : transformer::model_arrays(trainer.model().layout(), trainer.params().data()))
      r.arrays[name] = std::move(array);
    return r;
  }
};

}  // namespace sharp

SHARP_EXPERIMENT_MAIN(sharp::TrainTextExperiment)
