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
#include "max_retrieval/cost.hpp"
#include "max_retrieval/trainer.hpp"
#include "experiments/normaliser_param.hpp"
#include "normalisers/spec.hpp"
#include "runners/main.hpp"

namespace sharp {

using runner::Point;
using runner::Record;

namespace {

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

void narrow_into(const std::vector<double>& from, std::vector<float>& to, const std::string& what) {
  if (from.size() != to.size())
    throw NumericError("checkpoint: '" + what + "' has " + std::to_string(from.size()) + " values, expected " +
                       std::to_string(to.size()));
  for (std::size_t i = 0; i < from.size(); ++i) to[i] = float(from[i]);   // exact: written from floats
}

const std::vector<std::int64_t>& ints(const Record& r, const std::string& name) {
  return std::get<std::vector<std::int64_t>>(r.arrays.at(name).data);
}

// The training curve: one entry every eval_every steps and at the last step. Train loss, accuracy
// and gradient norm are means over the steps since the previous entry; eval figures are on the
// fixed evaluation set.
struct Curve {
  std::vector<std::int64_t> step;
  std::vector<double> train_loss, train_accuracy, grad_norm, lr, eval_loss, eval_accuracy;
  // Running sums over the current window.
  double window_loss = 0.0, window_grad_norm = 0.0;
  std::int64_t window_correct = 0, window_steps = 0;

  static constexpr const char* kReals[] = {"train_loss", "train_accuracy", "grad_norm", "lr", "eval_loss",
                                           "eval_accuracy"};
  std::vector<double>* reals(const std::string& name) {
    if (name == "train_loss") return &train_loss;
    if (name == "train_accuracy") return &train_accuracy;
    if (name == "grad_norm") return &grad_norm;
    if (name == "lr") return &lr;
    if (name == "eval_loss") return &eval_loss;
    return &eval_accuracy;
  }
  void save(Record& r) {
    r.set_array("curve_step", step);
    for (const char* name : kReals) r.set_array(std::string("curve_") + name, *reals(name));
    r.set("window_loss", window_loss);
    r.set("window_grad_norm", window_grad_norm);
    r.set_count("window_correct", window_correct);
    r.set_count("window_steps", window_steps);
  }
  void load(const Record& r) {
    step = ints(r, "curve_step");
    for (const char* name : kReals) *reals(name) = r.reals(std::string("curve_") + name);
    window_loss = r.real("window_loss");
    window_grad_norm = r.real("window_grad_norm");
    window_correct = r.count("window_correct");
    window_steps = r.count("window_steps");
  }
};

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
    normaliser.allowed = "a normaliser spec (docs/science.md#remedies), e.g. softmax, adaptive, ssmax:s=1, entmax15";
    normaliser.check = normaliser_spec_error;
    return {
        normaliser,
        runner::integer_param("train_n", "16", "items per training set", 1).at_most(std::int64_t{1} << 16),
        runner::integer_param("width", "128", "width of every MLP layer and head dimension d", 1).at_most(std::int64_t{1} << 12),
        runner::integer_param("depth", "1", "hidden ReLU layers in each MLP (psi, query MLP, phi)", 1).at_most(std::int64_t{64}),
        runner::integer_param("batch", "128", "sets per optimizer step", 1).at_most(std::int64_t{1} << 16),
        runner::real_param_above("lr", "1e-3", "peak learning rate (AdamW)", 0.0).at_most(10.0),
        runner::real_param_at_least("weight_decay", "1e-3", "AdamW decoupled weight decay", 0.0),
        runner::integer_param("steps", "4000", "optimizer steps", 1).at_most(std::int64_t{10000000}),
        runner::text_param("schedule", "cosine", "learning-rate schedule after warmup", nn::schedule_kind_names()),
        runner::integer_param("warmup", "0", "linear learning-rate warmup steps", 0),
        runner::real_param_at_least("final_lr", "0.01", "cosine: final lr as a fraction of --lr", 0.0),
        runner::real_param_at_least("clip", "0", "clip gradients to this global norm (0 = off)", 0.0),
        runner::integer_param("eval_every", "250", "steps between points of the training curve", 1).at_most(std::int64_t{10000000}),
        runner::integer_param("eval_samples", "4096", "fresh sets of train_n items for the accuracy", 1).at_most(std::int64_t{1} << 20),
    };
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
    return max_retrieval::training_step_flops(model, std::size_t(p.integer("batch")), std::size_t(p.integer("train_n"))) *
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
    config.model = {std::size_t(p.integer("width")), std::size_t(p.integer("depth"))};
    config.normaliser = p.text("normaliser");
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
      narrow_into(saved->reals("params"), trainer.params(), "params");
      narrow_into(saved->reals("adam_m"), trainer.optimizer().m(), "adam_m");
      narrow_into(saved->reals("adam_v"), trainer.optimizer().v(), "adam_v");
      trainer.optimizer().set_steps(saved->count("step"));
      curve.load(*saved);
      step_loss = saved->reals("step_loss");
      step_accuracy = saved->reals("step_accuracy");
    }

    while (trainer.steps_done() < steps) {
      const max_retrieval::StepStats s = trainer.step();
      const std::int64_t done = trainer.steps_done();
      step_loss.push_back(s.loss);
      step_accuracy.push_back(double(s.correct) / double(config.batch));
      curve.window_loss += s.loss;
      curve.window_grad_norm += s.grad_norm;
      curve.window_correct += s.correct;
      curve.window_steps += 1;
      if (done % eval_every == 0 || done == steps) {
        const max_retrieval::Evaluation e = trainer.evaluate(eval_key, eval_samples, config.train_n);
        const double w = double(curve.window_steps);
        curve.step.push_back(done);
        curve.train_loss.push_back(curve.window_loss / w);
        curve.train_accuracy.push_back(double(curve.window_correct) / (w * double(config.batch)));
        curve.grad_norm.push_back(curve.window_grad_norm / w);
        curve.lr.push_back(s.lr);
        curve.eval_loss.push_back(e.loss);
        curve.eval_accuracy.push_back(e.accuracy());
        curve.window_loss = curve.window_grad_norm = 0.0;
        curve.window_correct = curve.window_steps = 0;
      }
      if (done < steps && ctx.checkpoint_due()) {
        Record state;
        state.set_array("params", widen(trainer.params()));
        state.set_array("adam_m", widen(trainer.optimizer().m()));
        state.set_array("adam_v", widen(trainer.optimizer().v()));
        state.set_count("step", done);
        curve.save(state);
        state.set_array("step_loss", step_loss);
        state.set_array("step_accuracy", step_accuracy);
        ctx.save_checkpoint(state);
      }
    }

    Record r;
    const double final_accuracy = curve.eval_accuracy.back();
    r.set("accuracy", final_accuracy);
    r.set("eval_loss", curve.eval_loss.back());
    r.set_count("correct", std::int64_t(std::llround(final_accuracy * double(eval_samples))));
    r.set("final_train_loss", curve.train_loss.back());
    r.set_count("parameters", std::int64_t(trainer.params().size()));
    // The target of docs/science.md#max-retrieval on the curve: the first evaluation at >= 98% ("first touched") and the first
    // from which every later evaluation stays >= 98% (-1: none).
    std::int64_t first98 = -1, stable98 = -1;
    for (std::size_t i = 0; i < curve.step.size(); ++i) {
      const bool above = curve.eval_accuracy[i] >= 0.98;
      if (above && first98 < 0) first98 = curve.step[i];
      if (above && stable98 < 0) stable98 = curve.step[i];
      if (!above) stable98 = -1;
    }
    r.set_count("first_step_98", first98);
    r.set_count("stable_step_98", stable98);
    curve.save(r);
    r.metrics.erase("window_loss");
    r.metrics.erase("window_grad_norm");
    r.metrics.erase("window_correct");
    r.metrics.erase("window_steps");
    r.set_array("step_loss", step_loss);
    r.set_array("step_accuracy", step_accuracy);
    // Model description for sharp-eval-max: [item features, width, depth, d, classes].
    r.set_array("model_shape", std::vector<std::int64_t>{std::int64_t(max_retrieval::kItemFeatures),
                                                          p.integer("width"), p.integer("depth"), p.integer("width"),
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
