// sharp-eval-max — docs/science.md#max-retrieval, the trained-head experiment, evaluation half: a trained max-retrieval
// model (one value of the checkpoint axis) on `samples` fresh sets of n items, with several head
// normalisers on the same samples (paired: they share the item-MLP pass). Items stream through the
// model in chunks (lib/max_retrieval/streaming_eval.hpp), so n = 2^20 needs memory O(chunk).
// Records per normaliser: accuracy with a Wilson 95% interval, mean head entropy, mean weight on
// the true maximum, mean β; per-sample correctness (for McNemar) and attention maps under /arrays.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/errors.hpp"
#include "experiments/checkpoint_param.hpp"
#include "experiments/normaliser_param.hpp"
#include "max_retrieval/streaming_eval.hpp"
#include "max_retrieval/trained_model.hpp"
#include "normalisers/spec.hpp"
#include "runners/main.hpp"
#include "stats/wilson.hpp"

namespace sharp {

using runner::Point;
using runner::Record;

namespace {

// The normalisers of a point: the spec text as given (it names the metrics, e.g. accuracy.adaptive)
// and the parsed spec. `trained` is the model's own training normaliser with its learned scalars
// (the same metric names, accuracy.trained, for every model); without a model (validation) it is
// only checked. Repeats (also in another spelling, softmax vs softmax:beta=1) are errors; `trained`
// may coincide with a listed spec (it is a different question: what the model was trained with).
struct NamedSpec {
  std::string name;
  norm::Spec spec;
};

std::vector<NamedSpec> parse_normaliser_list(const std::string& text, const max_retrieval::TrainedModel* model) {
  std::vector<NamedSpec> specs;
  std::set<std::string> seen;
  for (const std::string& item : runner::in_point_items(text)) {
    if (item.empty()) throw BadInput("empty normaliser in '" + text + "'");
    if (item == kTrainedNormaliser) {
      if (!seen.insert(item).second) throw BadInput("normaliser 'trained' is repeated");
      specs.push_back({item, model ? model->trained : norm::parse_spec("softmax")});
      continue;
    }
    specs.push_back({item, norm::parse_spec(item)});
    if (!seen.insert(norm::format_spec(specs.back().spec)).second)
      throw BadInput("normaliser '" + item + "' is repeated");
  }
  return specs;
}

}  // namespace

class EvalMaxExperiment final : public runner::Experiment {
 public:
  std::string name() const override { return "eval-max"; }
  std::string summary() const override {
    return "Max retrieval, evaluation (docs/science.md#max-retrieval). Evaluates a trained model (--checkpoint FILE.h5 from sharp-train-max: "
           "every model in the file is one value of the checkpoint axis; FILE.h5#ID picks one) on `samples` fresh "
           "sets of n items, for every normaliser of --normaliser on the same samples (a list, comma- or "
           "plus-separated, evaluated inside each point; `trained` is each model's own training normaliser with its "
           "learned scalars, docs/science.md#learned-scalars). Items stream in chunks, so memory is O(chunk) for the "
           "softmax family (softmax, ssmax, adaptive); other normalisers keep the n logits of a set. Metrics per "
           "normaliser X: accuracy.X with ci_low.X/ci_high.X (Wilson 95%), entropy.X, weight_on_max.X, beta.X; "
           "per point the error taken apart: oracle_rate (weight 1 on the true maximum reads the right class) and "
           "ranking_rate (the highest logit is on the true maximum); "
           "arrays: correct.X, entropy.X, beta.X, weight_on_max.X per sample (only correct.X with --per-sample correct), "
           "map.X [map_samples, map_items], labels.";
  }
  std::vector<runner::ParamSpec> parameters() const override {
    runner::ParamSpec checkpoint = checkpoint_param();
    runner::ParamSpec normaliser =
        runner::text_param("normaliser", "softmax+adaptive", "head normalisers, compared on the same samples", {});
    normaliser.list = runner::ListRole::InsidePoint;
    normaliser.allowed = normaliser_spec_allowed() + ", or `trained` (the model's own)";
    normaliser.check = eval_normaliser_spec_error;
    normaliser.identity = normaliser_identity;
    // The model's training normaliser as a parameter of every point: the analysis groups models by
    // it without the training file (models of different remedies are never seeds of one). Read once
    // per training file while the grid is built.
    auto cache = std::make_shared<std::map<std::string, std::string>>();
    runner::ParamSpec train_normaliser = runner::derived_text_param(
        "train_normaliser",
        "head normaliser the model was trained with (docs/science.md#learned-scalars: `learn` for a learned scalar)",
        "--checkpoint (the model's training normaliser)", [cache](const Point& p) -> runner::Value {
          const std::string& reference = p.text("checkpoint");
          auto found = cache->find(reference);
          if (found == cache->end())
            found = cache->emplace(reference, max_retrieval_training_normaliser(reference)).first;
          return found->second;
        });
    return {
        checkpoint,
        runner::model_fingerprint_param("checkpoint", kMaxRetrievalTrainers),  // which weights were scored
        train_normaliser,
        runner::integer_param("n", "2^4..2^14", "items per set", 1).at_most(std::int64_t{1} << 24),
        normaliser,
        runner::integer_param("samples", "1024", "sets per point", 1).at_most(std::int64_t{1} << 20),
        runner::integer_param("chunk", "512", "items per streamed chunk", 1).at_most(std::int64_t{1} << 20),
        runner::integer_param("map_samples", "32", "sets whose attention maps are recorded (at most samples)", 0)
            .at_most(std::int64_t{1} << 16),
        runner::integer_param("map_items", "16", "highest-priority items per attention map", 1)
            .at_most(std::int64_t{1024}),
        runner::text_param(
            "per_sample", kAllSeries,
            "per-sample arrays recorded: `all`, or `correct` (only labels, oracle, ranking and correct.X, "
            "McNemar's pairs; the means of entropy, weight on max and beta stay in the metrics) for "
            "sweeps whose files must stay small",
            {kAllSeries, kCorrectOnly}),
    };
  }
  std::vector<runner::OutputSpec> outputs() const override {
    using runner::metric_integer, runner::metric_real;
    std::vector<runner::OutputSpec> out = {
        metric_integer("train_n", "items", "set size the model was trained on"),
        metric_integer("train_seed", "", "seed of the model's training"),
        metric_real("accuracy.<normaliser>", "fraction", "accuracy over the samples"),
        metric_real("ci_low.<normaliser>", "fraction", "lower end of the Wilson 95% interval of the accuracy"),
        metric_real("ci_high.<normaliser>", "fraction", "upper end of the Wilson 95% interval of the accuracy"),
        metric_integer("correct.<normaliser>", "sets", "correctly classified samples"),
        metric_real("entropy.<normaliser>", "nats", "head entropy, mean over the samples"),
        metric_real("weight_on_max.<normaliser>", "probability",
                    "head weight on the true maximum, mean over the samples"),
        metric_real("beta.<normaliser>", "",
                    "inverse temperature the head used, mean over the samples (1 for plain softmax)"),
        metric_real("oracle_rate", "fraction",
                    "samples whose output MLP, given attention weight 1 on the true maximum, reads the right class"),
        metric_real(
            "ranking_rate", "fraction",
            "samples whose highest head logit is on the true maximum (the ceiling of any normaliser that keeps the argmax)"),
    };
    for (const PerSample::Series& s : PerSample::kSeries) out.push_back(s.spec());
    return out;
  }
  // The sets depend on the seed and n only: every checkpoint and normaliser sees the same samples.
  std::vector<runner::StreamSpec> streams() const override { return {{"sets", {"n"}}}; }
  // Repeats in another spelling (softmax and softmax:beta=1) are one normaliser twice.
  void validate(const Point& p) const override {
    try {
      parse_normaliser_list(p.text("normaliser"), nullptr);
    } catch (const BadInput& e) {
      throw BadInput(std::string("--normaliser: ") + e.what());
    }
  }
  double estimated_cost(const Point& p) const override {
    const double passes = 1.0 + double(parse_normaliser_list(p.text("normaliser"), nullptr).size() > 1);
    return passes * double(p.integer("samples")) * double(p.integer("n"));
  }
  std::string notes() const override {
    return "Samples are a function of (seed, n, index) only: the same sets for every checkpoint and normaliser. "
           "Adaptive temperature (docs/science.md#adaptive-temperature) is applied at inference only, on the head of the trained weights, with "
           "the exact entropy of softmax at beta = 1; ssmax uses beta = s ln n. Non-softmax-family normalisers "
           "(entmax, sparsemax, top-k, Stieltjes) keep the n logits of a set (O(n) floats) and run exactly. "
           "Maps: the weights on the map_items highest-priority items, by decreasing priority. Priorities are "
           "float32 (the model's input): about n/2^24 of the sets have two items tied at the top priority (6% at "
           "n = 2^20, 0.1% at 2^14); the label is then the class of the lower index.";
  }

  Record run(const Point& p, runner::PointContext& ctx) const override {
    const max_retrieval::TrainedModel model = load_max_retrieval_model(p.text("checkpoint"));
    const std::vector<NamedSpec> named = parse_normaliser_list(p.text("normaliser"), &model);
    std::vector<norm::Spec> specs;
    for (const NamedSpec& s : named) specs.push_back(s.spec);
    const std::size_t n = std::size_t(p.integer("n")), samples = std::size_t(p.integer("samples"));
    const std::size_t map_samples = std::min(std::size_t(p.integer("map_samples")), samples);
    const std::size_t map_items = std::min<std::size_t>(std::size_t(p.integer("map_items")), n);
    const max_retrieval::StreamingEvaluator evaluator(model.layout, model.params.data(), specs,
                                                      std::size_t(p.integer("chunk")));

    // Per-sample results, filled block by block; a checkpoint holds the finished blocks.
    PerSample done(named, map_items);
    if (auto saved = ctx.load_checkpoint()) done.load(*saved);
    const std::size_t block = std::size_t(8 * std::max(1, ctx.threads()));
    while (done.count() < samples) {
      const std::size_t first = done.count(), count = std::min(block, samples - first);
      done.append(
          evaluator.evaluate_set(ctx.stream_key("sets"), first, count, n, map_samples, map_items, ctx.threads()));
      if (done.count() < samples && ctx.checkpoint_due()) {
        runner::CheckpointState state;
        done.save(state, PerSample::Kept::All);  // the means need every series on resume
        ctx.save_checkpoint(state);
      }
    }

    Record r;
    done.save(r, p.text("per_sample") == kAllSeries ? PerSample::Kept::All : PerSample::Kept::CorrectOnly);
    r.set_count("train_n", model.train_n);
    r.set_count("train_seed", model.seed);
    r.set("oracle_rate", mean(done.oracle));
    r.set("ranking_rate", mean(done.ranking));
    for (std::size_t k = 0; k < named.size(); ++k) {
      const std::string& x = named[k].name;
      std::int64_t correct = 0;
      for (std::int64_t c : done.correct[k]) correct += c;
      const auto ci = stats::wilson_interval(double(correct), double(samples));
      r.set("accuracy." + x, double(correct) / double(samples));
      r.set("ci_low." + x, ci.low);
      r.set("ci_high." + x, ci.high);
      r.set_count("correct." + x, correct);
      r.set("entropy." + x, mean(done.entropy[k]));
      r.set("weight_on_max." + x, mean(done.weight_on_max[k]));
      r.set("beta." + x, mean(done.beta[k]));
    }
    return r;
  }

 private:
  static constexpr const char* kAllSeries = "all";
  static constexpr const char* kCorrectOnly = "correct";

  // The real-valued per-sample series (entropy, beta, weight on max per normaliser) exist only with
  // per_sample = all: at paper scale they were 90% of a 145 MB file the analysis reads only as means.
  static runner::OutputSpec per_sample_only(runner::OutputSpec spec) {
    spec.items = [](const Point& p) {
      return p.text("per_sample") == kAllSeries ? runner::in_point_items(p.text("normaliser"))
                                                : std::vector<std::string>{};
    };
    spec.items_help = "one per normaliser with per_sample = all; none with per_sample = correct";
    return spec;
  }

  // Mean in sample order (deterministic).
  template <class T>
  static double mean(const std::vector<T>& v) {
    double sum = 0.0;
    for (T a : v) sum += double(a);
    return v.empty() ? 0.0 : sum / double(v.size());
  }

  // Per-sample outcomes of the samples evaluated so far: per point [samples], per normaliser k
  // [normaliser][samples], the maps [normaliser][map samples · map_items]. kSeries names each series
  // once: its output (X.<normaliser> per normaliser), the record and the checkpoint follow from it.
  struct PerSample {
    std::vector<std::string> names;
    std::size_t map_items;
    std::vector<std::int64_t> labels, oracle, ranking;
    std::vector<std::vector<std::int64_t>> correct;
    std::vector<std::vector<double>> entropy, beta, weight_on_max, map;

    // Which series a save keeps: every one (a checkpoint: the means need them on resume; a result
    // with per_sample = all), or those of per_sample = correct (McNemar's pairs and the maps).
    enum class Kept { All, CorrectOnly };
    using Counts = std::vector<std::int64_t>;  // one per point
    using CountsEach = std::vector<Counts>;  // per normaliser
    using RealsEach = std::vector<std::vector<double>>;  // per normaliser
    using Member = std::variant<Counts PerSample::*, CountsEach PerSample::*, RealsEach PerSample::*>;
    struct Series {
      const char* name;  // a per-normaliser series is stored as name.<normaliser>
      Member values;
      std::vector<std::string> shape;
      const char* unit;
      const char* meaning;
      Kept kept;  // CorrectOnly: kept by every save; All: only by Kept::All

      bool per_normaliser() const { return !std::holds_alternative<Counts PerSample::*>(values); }
      bool real() const { return std::holds_alternative<RealsEach PerSample::*>(values); }
      runner::OutputSpec spec() const {
        const std::string output = per_normaliser() ? std::string(name) + ".<normaliser>" : name;
        runner::OutputSpec s = real() ? runner::array_real(output, shape, unit, meaning)
                                      : runner::array_integer(output, shape, unit, meaning);
        return kept == Kept::All ? per_sample_only(std::move(s)) : s;
      }
    };
    static inline const Series kSeries[] = {
        {"labels", &PerSample::labels, {"samples"}, "class", "true class of each sample", Kept::CorrectOnly},
        {"oracle",
         &PerSample::oracle,
         {"samples"},
         "0 or 1",
         "1 when weight 1 on the true maximum gives the right class",
         Kept::CorrectOnly},
        {"ranking",
         &PerSample::ranking,
         {"samples"},
         "0 or 1",
         "1 when the highest head logit is on the true maximum",
         Kept::CorrectOnly},
        {"correct",
         &PerSample::correct,
         {"samples"},
         "0 or 1",
         "1 when the sample is classified correctly (for McNemar)",
         Kept::CorrectOnly},
        {"entropy", &PerSample::entropy, {"samples"}, "nats", "head entropy of each sample", Kept::All},
        {"beta", &PerSample::beta, {"samples"}, "", "inverse temperature of each sample", Kept::All},
        {"weight_on_max",
         &PerSample::weight_on_max,
         {"samples"},
         "probability",
         "head weight on the true maximum of each sample",
         Kept::All},
        {"map",
         &PerSample::map,
         {"*", "*"},
         "probability",
         "attention maps [min(map_samples, samples), min(map_items, n)]: weights on the highest-priority items, by "
         "decreasing priority",
         Kept::CorrectOnly},
    };

    PerSample(const std::vector<NamedSpec>& named, std::size_t map_items_)
        : map_items(map_items_),
          correct(named.size()),
          entropy(named.size()),
          beta(named.size()),
          weight_on_max(named.size()),
          map(named.size()) {
      for (const NamedSpec& s : named) names.push_back(s.name);
    }
    std::size_t count() const { return labels.size(); }
    void append(const std::vector<max_retrieval::SampleResult>& results) {
      for (const auto& res : results) {
        labels.push_back(res.label);
        oracle.push_back(res.oracle);
        ranking.push_back(res.ranking);
        for (std::size_t k = 0; k < names.size(); ++k) {
          const auto& o = res.outcomes[k];
          correct[k].push_back(o.prediction == res.label);
          entropy[k].push_back(o.entropy);
          beta[k].push_back(o.beta);
          weight_on_max[k].push_back(o.weight_on_max);
          map[k].insert(map[k].end(), o.map.begin(), o.map.end());
        }
      }
    }
    // The shape a series is stored in: [samples], or a map's [map samples, map_items].
    std::vector<std::size_t> shape_of(const Series& s, std::size_t size) const {
      if (s.shape.size() == 2) return {size / map_items, map_items};
      return {size};
    }
    void save(runner::NamedValues& r, Kept kept) const {
      for (const Series& s : kSeries) {
        if (kept == Kept::CorrectOnly && s.kept == Kept::All) continue;
        std::visit(
            [&](auto member) {
              const auto& values = this->*member;
              if constexpr (std::is_same_v<decltype(member), Counts PerSample::*>) {
                r.arrays[s.name] = runner::Array{shape_of(s, values.size()), values};
              } else {
                for (std::size_t k = 0; k < names.size(); ++k)
                  r.arrays[s.name + ("." + names[k])] = runner::Array{shape_of(s, values[k].size()), values[k]};
              }
            },
            s.values);
      }
    }
    void load(const runner::CheckpointState& r) {
      for (const Series& s : kSeries)
        std::visit(
            [&](auto member) {
              auto& values = this->*member;
              if constexpr (std::is_same_v<decltype(member), Counts PerSample::*>) {
                values = std::get<Counts>(r.arrays.at(s.name).data);
              } else {
                for (std::size_t k = 0; k < names.size(); ++k)
                  values[k] = std::get<typename std::decay_t<decltype(values)>::value_type>(
                      r.arrays.at(s.name + ("." + names[k])).data);
              }
            },
            s.values);
    }
  };
};

}  // namespace sharp

SHARP_EXPERIMENT_MAIN(sharp::EvalMaxExperiment)
