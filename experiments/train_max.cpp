// sharp-train-max — docs/science.md#max-retrieval, the trained-head experiment, training half: one point trains one
// max-retrieval model (item MLP ψ, query MLP, one attention head with the chosen normaliser, output
// MLP φ) on sets of train_n items with fresh data every step, and stores the final weights, the
// training curve and the in-distribution accuracy on eval_samples fresh sets. A list of seeds
// trains several models. Long trainings checkpoint (weights, AdamW state, step, curve) through the
// runner, and a killed run resumes to the same weights (the trainer is bit-identical for any
// thread count, see lib/max_retrieval/trainer.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "core/errors.hpp"
#include "experiments/float_training_state.hpp"
#include "experiments/normaliser_param.hpp"
#include "experiments/training_curve.hpp"
#include "max_retrieval/cost.hpp"
#include "max_retrieval/trainer.hpp"
#include "normalisers/spec.hpp"
#include "runners/main.hpp"

namespace sharp {

using runner::Point;
using runner::Record;

namespace {

// The training curve (experiments/training_curve.hpp): train loss, accuracy and gradient norm are
// means over the steps since the previous entry; eval figures are on the fixed evaluation set.
struct CurveEntry {
  double train_loss = 0, train_accuracy = 0, grad_norm = 0, lr = 0, eval_loss = 0, eval_accuracy = 0;

  static constexpr const char* kStepMeaning = "step of each curve entry (every eval_every steps and the last)";
  static inline const CurveSeries<CurveEntry> kSeries[] = {
      {"train_loss", &CurveEntry::train_loss, "nats", "mean training batch loss since the previous entry"},
      {"train_accuracy", &CurveEntry::train_accuracy, "fraction",
       "mean training batch accuracy since the previous entry"},
      {"grad_norm", &CurveEntry::grad_norm, "", "mean global gradient norm since the previous entry"},
      {"lr", &CurveEntry::lr, "", "learning rate of the entry's step"},
      {"eval_loss", &CurveEntry::eval_loss, "nats", "mean cross-entropy on the fixed evaluation sets"},
      {"eval_accuracy", &CurveEntry::eval_accuracy, "fraction", "accuracy on the fixed evaluation sets"},
  };
};
struct CurveWindow {
  double loss = 0.0, grad_norm = 0.0;
  std::int64_t correct = 0, steps = 0;

  static inline const WindowSum<CurveWindow> kSums[] = {{"window_loss", &CurveWindow::loss},
                                                        {"window_grad_norm", &CurveWindow::grad_norm},
                                                        {"window_correct", &CurveWindow::correct},
                                                        {"window_steps", &CurveWindow::steps}};
};
using Curve = TrainingCurve<CurveEntry, CurveWindow>;

// The names of the model's weight tensors for a point (param.<tensor> outputs).
max_retrieval::ModelConfig model_config(const Point& p) {
  return {std::size_t(p.integer("width")), std::size_t(p.integer("depth")), p.text("normaliser"),
          std::size_t(p.integer("train_n"))};
}

std::vector<std::string> tensor_names(const Point& p) {
  std::vector<std::string> names;
  const max_retrieval::ModelLayout layout = max_retrieval::make_model_layout(model_config(p));
  for (const nn::TensorInfo& t : layout.params.tensors()) names.push_back(t.name);
  return names;
}

// The learned normaliser scalars of a point's spec (learned.<scalar> outputs; none for a fixed spec).
std::vector<std::string> learned_scalar_names(const Point& p) {
  return norm::parse_learnable_spec(p.text("normaliser"), std::size_t(p.integer("train_n"))).learned;
}

}  // namespace

class TrainMaxExperiment final : public runner::Experiment {
 public:
  std::string name() const override { return "train-max"; }
  std::string summary() const override {
    return "Max retrieval, training (docs/science.md#max-retrieval). Trains the model of docs/science.md#max-retrieval (item MLP psi, query MLP, one attention "
           "head with the given normaliser, output MLP phi; float32, AdamW) on sets of train_n items with fresh "
           "data every step. Records the in-distribution accuracy on eval_samples fresh sets of train_n items, the "
           "training curve every eval_every steps, the per-step batch loss, and the final weights "
           "(/arrays/<id>/param.<tensor>).";
  }
  std::vector<runner::ParamSpec> parameters() const override {
    runner::ParamSpec normaliser =
        runner::text_param("normaliser", "softmax", "normaliser of the attention head during training", {});
    normaliser.allowed = learnable_normaliser_spec_allowed();
    normaliser.check = learnable_normaliser_spec_error;
    normaliser.identity = normaliser_identity;
    return {
        normaliser,
        runner::integer_param("train_n", "16", "items per training set", 1).at_most(std::int64_t{1} << 16),
        runner::integer_param("width", "128", "width of every MLP layer and head dimension d", 1)
            .at_most(std::int64_t{1} << 12),
        runner::integer_param("depth", "1", "hidden ReLU layers in each MLP (psi, query MLP, phi)", 1)
            .at_most(std::int64_t{64}),
        runner::integer_param("batch", "128", "sets per optimizer step", 1).at_most(std::int64_t{1} << 16),
        runner::real_param_above("lr", "1e-3", "peak learning rate (AdamW)", 0.0).at_most(10.0),
        runner::real_param_at_least("weight_decay", "1e-3", "AdamW decoupled weight decay", 0.0),
        runner::integer_param("steps", "4000", "optimizer steps", 1).at_most(std::int64_t{10000000}),
        runner::text_param("schedule", "cosine", "learning-rate schedule after warmup", nn::schedule_kind_names()),
        runner::integer_param("warmup", "0", "linear learning-rate warmup steps", 0),
        runner::real_param_at_least("final_lr", "0.01", "cosine: final lr as a fraction of --lr", 0.0),
        runner::real_param_at_least("clip", "0", "clip gradients to this global norm (0 = off)", 0.0),
        runner::integer_param("eval_every", "250", "steps between points of the training curve", 1)
            .at_most(std::int64_t{10000000}),
        runner::integer_param("eval_samples", "4096", "fresh sets of train_n items for the accuracy", 1)
            .at_most(std::int64_t{1} << 20),
    };
  }
  std::vector<runner::OutputSpec> outputs() const override {
    using runner::array_integer, runner::array_real, runner::metric_integer, runner::metric_real;
    std::vector<runner::OutputSpec> out = {
        metric_real("accuracy", "fraction",
                    "in-distribution accuracy on eval_samples fresh sets of train_n items (last curve entry)"),
        metric_real("eval_loss", "nats", "mean cross-entropy on the same sets"),
        metric_integer("correct", "sets", "correctly classified evaluation sets"),
        metric_real("final_train_loss", "nats", "mean training batch loss of the last curve window"),
        metric_integer("parameters", "weights", "number of trained weights"),
        metric_integer("first_step_98", "steps", "first curve step with eval accuracy >= 0.98 (-1: none)"),
        metric_integer("stable_step_98", "steps",
                       "first curve step from which every later entry stays >= 0.98 (-1: none)"),
    };
    for (runner::OutputSpec& o : Curve::outputs()) out.push_back(std::move(o));
    out.push_back(array_real("step_loss", {"steps"}, "nats", "training batch loss of every step"));
    out.push_back(array_real("step_accuracy", {"steps"}, "fraction", "training batch accuracy of every step"));
    out.push_back(
        array_integer("model_shape", {"5"}, "",
                      "the model for sharp-eval-max: [item features, width, depth, head dimension d, classes]"));
    // An array, not a metric: /points columns must be the same for every point of a file, and
    // models with and without learned scalars share one training file.
    runner::OutputSpec learned = array_real(
        "learned.<scalar>", {"1"}, "", "final value of a learned normaliser scalar (docs/science.md#learned-scalars)");
    learned.items = learned_scalar_names;
    learned.items_help =
        "one per learned scalar of the normaliser (e.g. learned.s for ssmax:s=learn; none for a fixed spec)";
    out.push_back(learned);
    runner::OutputSpec param =
        array_real("param.<tensor>", {"..."}, "",
                   "final weights of one tensor (float32 values stored as float64), in its own shape");
    param.items = tensor_names;
    param.items_help =
        "one per weight tensor of the model, e.g. param.psi.0.weight [width, 11]; a learned "
        "normaliser scalar's raw value is param.head.norm.<scalar> [1], the last tensor";
    out.push_back(param);
    return out;
  }
  // Training data depend on the seed and the set size only (so hyperparameter sweeps see the same
  // data); the initial weights on the seed and the shapes; the evaluation sets on seed and set size.
  std::vector<runner::StreamSpec> streams() const override {
    return {{"data", {"train_n"}}, {"init", {"width", "depth"}}, {"eval", {"train_n"}}};
  }
  void validate(const Point& p) const override {
    if (p.integer("warmup") >= p.integer("steps"))
      throw BadInput("--warmup: must be smaller than --steps (got warmup=" + std::to_string(p.integer("warmup")) +
                     ", steps=" + std::to_string(p.integer("steps")) + ")");
    if (p.real("final_lr") > 1.0) throw BadInput("--final-lr: a fraction of --lr, allowed: reals in [0, 1]");
  }
  double estimated_cost(const Point& p) const override {
    const max_retrieval::ModelConfig model{std::size_t(p.integer("width")), std::size_t(p.integer("depth"))};
    return max_retrieval::training_step_flops(model, std::size_t(p.integer("batch")),
                                              std::size_t(p.integer("train_n"))) *
           double(p.integer("steps"));
  }
  std::string notes() const override {
    return "Reconstructed choices (docs/science.md#max-retrieval-reconstructed): query input ~ U(0,1) carries no information; psi 11->W->ReLU->W, query "
           "MLP 1->W->ReLU->W, phi W->W->ReLU->10 (depth = hidden ReLU layers of each), d = W, no bias in W_Q, "
           "W_K, W_V, LeCun-normal weights (std 1/sqrt(fan_in)), zero biases, float32; AdamW beta1 0.9, beta2 "
           "0.999, eps 1e-8, weight decay on every parameter; priorities rounded to float32 and the label is the "
           "class of the first maximum; the batch runs in fixed chunks of 16 sets whose gradients are summed in "
           "chunk order, so results do not depend on the thread count.";
  }

  Record run(const Point& p, runner::PointContext& ctx) const override {
    max_retrieval::TrainConfig config;
    config.model = model_config(p);
    config.train_n = std::size_t(p.integer("train_n"));
    config.batch = std::size_t(p.integer("batch"));
    config.weight_decay = p.real("weight_decay");
    config.clip = p.real("clip");
    const std::int64_t steps = p.integer("steps"), eval_every = p.integer("eval_every");
    config.schedule = {nn::parse_schedule_kind(p.text("schedule")), p.real("lr"), steps, p.integer("warmup"),
                       p.real("final_lr")};
    const std::size_t eval_samples = std::size_t(p.integer("eval_samples"));
    const std::uint64_t eval_key = ctx.stream_key("eval");

    max_retrieval::Trainer trainer(config, ctx.stream_key("init"), ctx.stream_key("data"), ctx.threads());
    Curve curve;
    std::vector<double> step_loss, step_accuracy;
    if (auto saved = ctx.load_checkpoint()) {
      load_training_checkpoint(*saved, steps, [&](std::int64_t step) {
        load_float_training_state(*saved, trainer.params(), trainer.optimizer().m(), trainer.optimizer().v());
        trainer.optimizer().set_steps(step);
        curve.load_state(*saved);
        step_loss = saved->reals("step_loss");
        step_accuracy = saved->reals("step_accuracy");
        if (step_loss.size() != std::size_t(step) || step_accuracy.size() != std::size_t(step))
          throw runner::BadCheckpoint("the per-step curves hold " + std::to_string(step_loss.size()) + " and " +
                                      std::to_string(step_accuracy.size()) + " values for step " +
                                      std::to_string(step));
      });
    }

    while (trainer.steps_done() < steps) {
      const max_retrieval::StepStats s = trainer.step();
      const std::int64_t done = trainer.steps_done();
      step_loss.push_back(s.loss);
      step_accuracy.push_back(double(s.correct) / double(config.batch));
      curve.window.loss += s.loss;
      curve.window.grad_norm += s.grad_norm;
      curve.window.correct += s.correct;
      curve.window.steps += 1;
      if (done % eval_every == 0 || done == steps) {
        const max_retrieval::Evaluation e = trainer.evaluate(eval_key, eval_samples, config.train_n);
        const double w = double(curve.window.steps);
        curve.append(done, {.train_loss = curve.window.loss / w,
                            .train_accuracy = double(curve.window.correct) / (w * double(config.batch)),
                            .grad_norm = curve.window.grad_norm / w,
                            .lr = s.lr,
                            .eval_loss = e.loss,
                            .eval_accuracy = e.accuracy()});
      }
      if (done < steps && ctx.checkpoint_due()) {
        runner::CheckpointState state;
        save_float_training_state(state, trainer.params(), trainer.optimizer().m(), trainer.optimizer().v());
        state.set_count("step", done);
        curve.save_state(state);
        state.set_array("step_loss", step_loss);
        state.set_array("step_accuracy", step_accuracy);
        ctx.save_checkpoint(state);
      }
    }

    Record r;
    const double final_accuracy = curve.last().eval_accuracy;
    r.set("accuracy", final_accuracy);
    r.set("eval_loss", curve.last().eval_loss);
    r.set_count("correct", std::int64_t(std::llround(final_accuracy * double(eval_samples))));
    r.set("final_train_loss", curve.last().train_loss);
    r.set_count("parameters", std::int64_t(trainer.params().size()));
    const norm::Spec bound = max_retrieval::bound_normaliser_spec(trainer.layout(), trainer.params().data());
    for (const std::string& key : trainer.layout().normaliser.learned)
      r.set_array("learned." + key, std::vector<double>{bound.params.at(key)});
    // The target of docs/science.md#max-retrieval on the curve: the first evaluation at >= 98% ("first touched") and the first
    // from which every later evaluation stays >= 98% (-1: none).
    std::int64_t first98 = -1, stable98 = -1;
    for (std::size_t i = 0; i < curve.steps().size(); ++i) {
      const bool above = curve.entries()[i].eval_accuracy >= 0.98;
      if (above && first98 < 0) first98 = curve.steps()[i];
      if (above && stable98 < 0) stable98 = curve.steps()[i];
      if (!above) stable98 = -1;
    }
    r.set_count("first_step_98", first98);
    r.set_count("stable_step_98", stable98);
    curve.save(r);
    r.set_array("step_loss", step_loss);
    r.set_array("step_accuracy", step_accuracy);
    // Model description for sharp-eval-max: [item features, width, depth, d, classes].
    r.set_array("model_shape", std::vector<std::int64_t>{std::int64_t(max_retrieval::kItemFeatures), p.integer("width"),
                                                         p.integer("depth"), p.integer("width"),
                                                         std::int64_t(max_retrieval::kClasses)});
    for (const nn::TensorInfo& t : trainer.layout().params.tensors()) {
      std::vector<double> values(trainer.params().begin() + std::ptrdiff_t(t.offset),
                                 trainer.params().begin() + std::ptrdiff_t(t.offset + t.size()));
      r.set_array("param." + t.name, std::move(values), t.shape);
    }
    return r;
  }
};

}  // namespace sharp

SHARP_EXPERIMENT_MAIN(sharp::TrainMaxExperiment)
