// sharp-weight-bound — docs/science.md#weight-norm-bound, sharpness needs large weights: for e_i = (Q y)ᵀ(K x_i) the spread
// δ = max e − min e never exceeds 2·σ_max(Q)·σ_max(K)·‖y‖·max‖x_i‖. Measures how tight that is.
#include <algorithm>
#include <cmath>

#include "core/parallel_for.hpp"
#include "rng/counter_rng.hpp"
#include "runners/main.hpp"
#include "weight_bound/logit_spread_bound.hpp"

namespace sharp {

using runner::Point;
using runner::Record;

class WeightBoundExperiment final : public runner::Experiment {
 public:
  std::string name() const override { return "weight-bound"; }
  std::string summary() const override {
    return "Sharpness needs large weights (docs/science.md#weight-norm-bound). Random Q, K [d_head, d_model] with entries "
           "N(0, weight_scale^2/d_model), a query y and n items x_i with entries N(0, input_scale^2); "
           "compares the measured logit spread delta with the bound 2 smax(Q) smax(K) |y| max|x_i| over "
           "`trials` instances. Metrics: delta, bound, ratio (means), ratio_max, violations (must be 0).";
  }
  std::vector<runner::ParamSpec> parameters() const override {
    return {
        runner::integer_param("d_model", "64", "model width (length of y and x_i)", 1).at_most(std::int64_t{1} << 14),
        runner::integer_param("d_head", "16", "head width (rows of Q and K)", 1).at_most(std::int64_t{1} << 12),
        runner::real_param_above("weight_scale", "1", "scale of the weights", 0.0).at_most(1e50),
        runner::real_param_above("input_scale", "1", "scale of the inputs", 0.0).at_most(1e50),
        runner::integer_param("n", "16,256,4096", "number of items x_i", 1).at_most(std::int64_t{1} << 20),
        runner::integer_param("trials", "200", "random instances per point", 1).at_most(std::int64_t{1000000}),
    };
  }
  std::vector<runner::OutputSpec> outputs() const override {
    return {
        runner::metric_real("delta", "logit units", "measured logit spread max e - min e, mean over the trials"),
        runner::metric_real("bound", "logit units", "the bound 2 smax(Q) smax(K) |y| max|x_i|, mean over the trials"),
        runner::metric_real("ratio", "", "delta / bound, mean over the trials (tightness; at most 1)"),
        runner::metric_real("ratio_max", "", "largest delta / bound over the trials"),
        runner::metric_integer("violations", "trials", "trials with delta > bound (relative slack 1e-12); must be 0"),
        runner::array_real("delta", {"trials"}, "logit units", "measured spread of each trial"),
        runner::array_real("bound", {"trials"}, "logit units", "bound of each trial"),
        runner::array_real("ratio", {"trials"}, "", "delta / bound of each trial"),
    };
  }
  // Standard normals shared across scales (common random numbers): weights depend on the shapes,
  // inputs on n and d_model.
  std::vector<runner::StreamSpec> streams() const override {
    return {{"weights", {"d_model", "d_head"}}, {"inputs", {"d_model", "n"}}};
  }
  double estimated_cost(const Point& p) const override {
    const double d = double(p.integer("d_model")), h = double(p.integer("d_head"));
    return double(p.integer("trials")) * (double(p.integer("n")) * d + h * h * d + 10 * std::pow(std::min(d, h), 3));
  }

  Record run(const Point& p, runner::PointContext& ctx) const override {
    const std::int64_t trials = p.integer("trials");
    std::vector<double> delta(trials), bound(trials), ratio(trials);
    const std::uint64_t wkey = ctx.stream_key("weights"), ikey = ctx.stream_key("inputs");
    parallel_for(std::size_t(trials), Loop{"weight-bound/trials", ctx.threads()}, [&](std::size_t t) {
      const auto trial = weight_bound::spread_bound_trial(
          p.integer("n"), p.integer("d_model"), p.integer("d_head"), p.real("weight_scale"), p.real("input_scale"),
          rng::child_key(wkey, std::uint64_t(t)), rng::child_key(ikey, std::uint64_t(t)));
      delta[t] = trial.delta;
      bound[t] = trial.bound;
      ratio[t] = trial.delta / trial.bound;
    });
    // Summaries in trial order, whatever the thread count.
    double sd = 0, sb = 0, sr = 0, rmax = 0;
    std::int64_t violations = 0;
    for (std::int64_t t = 0; t < trials; ++t) {
      sd += delta[t];
      sb += bound[t];
      sr += ratio[t];
      rmax = std::max(rmax, ratio[t]);
      violations += delta[t] > bound[t] * (1 + 1e-12);
    }
    Record r;
    r.set("delta", sd / double(trials));
    r.set("bound", sb / double(trials));
    r.set("ratio", sr / double(trials));
    r.set("ratio_max", rmax);
    r.set_count("violations", violations);
    r.set_array("delta", std::move(delta));
    r.set_array("bound", std::move(bound));
    r.set_array("ratio", std::move(ratio));
    return r;
  }
};

}  // namespace sharp

SHARP_EXPERIMENT_MAIN(sharp::WeightBoundExperiment)
