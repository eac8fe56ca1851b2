// sharp-bounds — the dispersion lemma (docs/science.md#dispersion-lemma): with logits in [0, δ], every softmax_θ
// coefficient lies in [exp(−δ/θ)/n, exp(δ/θ)/n], so α_max → 0 as n grows. Streams n logits (never
// stored) from a counter-based RNG; n = 2^30 is an ordinary point.
#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "dispersion/dispersion_row.hpp"
#include "dispersion/logit_laws.hpp"
#include "rng/counter_rng.hpp"
#include "runners/main.hpp"

namespace sharp {

using runner::Point;
using runner::Record;

class BoundsExperiment final : public runner::Experiment {
 public:
  std::string name() const override { return "bounds"; }
  std::string summary() const override {
    return "The dispersion lemma (docs/science.md#dispersion-lemma). For each point, `trials` rows of n logits on [0, spread] "
           "are drawn from a logit law and passed through softmax with temperature theta; records the "
           "largest and smallest coefficient over the trials, the mean entropy, the lemma's bounds "
           "exp(+-spread/theta)/n, the worst case 1/(1+(n-1)exp(-spread/theta)) and the number of "
           "coefficients outside the bounds (must be 0).";
  }
  std::vector<runner::ParamSpec> parameters() const override {
    return {
        runner::text_param("logits", "uniform", "logit law on [0, spread]", dispersion::logit_law_names()),
        runner::real_param_at_least("spread", "4", "logit spread delta = M - m", 0.0).at_most(1e6),
        runner::real_param_above("theta", "1", "softmax temperature theta", 0.0),
        runner::integer_param("n", "2^1..2^20", "number of items (logits per row)", 1).at_most(std::int64_t{1} << 30),
        runner::integer_param("trials", "4", "independent rows per point", 1).at_most(std::int64_t{10000}),
    };
  }
  std::vector<runner::OutputSpec> outputs() const override {
    return {
        runner::metric_real("alpha_max", "probability", "largest softmax coefficient over the trials"),
        runner::metric_real("alpha_min", "probability", "smallest softmax coefficient over the trials"),
        runner::metric_real("entropy", "nats", "entropy of the softmax row, mean over the trials"),
        runner::metric_integer("violations", "coefficients",
                               "coefficients outside [bound_lower, bound_upper] (relative slack 1e-12); must be 0"),
        runner::metric_real("bound_upper", "probability", "the lemma's upper bound exp(spread/theta)/n"),
        runner::metric_real("bound_lower", "probability", "the lemma's lower bound exp(-spread/theta)/n"),
        runner::metric_real(
            "worst_case_alpha_max", "probability",
            "largest possible coefficient 1/(1+(n-1)exp(-spread/theta)) (one logit at M, the rest at m)"),
        runner::metric_real("n_alpha_max", "", "n * alpha_max: 1 for a uniform row, bounded by exp(spread/theta)"),
    };
  }
  // The draws depend on n and the law only, so every (spread, theta) sees the same rows.
  std::vector<runner::StreamSpec> streams() const override { return {{"logits", {"n", "logits"}}}; }
  void validate(const Point& p) const override {
    if (p.text("logits") == "two-point" && p.integer("n") < 2)
      throw BadInput("--n: two-point logits need n >= 2 (the row must contain both values), got n=1");
    if (!std::isfinite(p.real("spread") / p.real("theta") * 2.0))
      throw BadInput("--spread, --theta: spread/theta overflows (got " + runner::canonical(p.real("spread")) + "/" +
                     runner::canonical(p.real("theta")) + ")");
  }
  double estimated_cost(const Point& p) const override {
    return double(p.integer("trials")) * (double(p.integer("n")) + 4096.0);
  }
  std::string notes() const override {
    return "one-hot puts the logit at M on index 0; two-point fixes index 0 at M and index 1 at m "
           "(forced to contain both), the rest are M or m with probability 1/2; gaussian is "
           "N(spread/2, (spread/4)^2) clipped to [0, spread]; violations allow a relative slack of 1e-12.";
  }

  Record run(const Point& p, runner::PointContext& ctx) const override {
    const auto law = dispersion::parse_logit_law(p.text("logits"));
    const std::uint64_t n = std::uint64_t(p.integer("n"));
    const double spread = p.real("spread"), theta = p.real("theta");
    const std::int64_t trials = p.integer("trials");
    const std::uint64_t key = ctx.stream_key("logits");

    // Running state over trials; checkpointed between trials for long points.
    runner::CheckpointState state;
    state.set_count("trials_done", 0);
    state.set("alpha_max", 0.0);
    state.set("alpha_min", INFINITY);
    state.set("entropy_sum", 0.0);
    state.set_count("violations", 0);
    if (auto saved = ctx.load_checkpoint()) state = *saved;

    for (std::int64_t t = state.count("trials_done"); t < trials; ++t) {
      const auto row =
          dispersion::dispersion_row(law, n, spread, theta, rng::child_key(key, std::uint64_t(t)), ctx.threads());
      state.set("alpha_max", std::max(state.real("alpha_max"), row.alpha_max));
      state.set("alpha_min", std::min(state.real("alpha_min"), row.alpha_min));
      state.set("entropy_sum", state.real("entropy_sum") + row.entropy);
      state.set_count("violations", state.count("violations") + std::int64_t(row.violations));
      state.set_count("trials_done", t + 1);
      if (t + 1 < trials && ctx.checkpoint_due()) ctx.save_checkpoint(state);
    }

    Record r;
    r.set("alpha_max", state.real("alpha_max"));
    r.set("alpha_min", state.real("alpha_min"));
    r.set("entropy", state.real("entropy_sum") / double(trials));
    r.set_count("violations", state.count("violations"));
    r.set("bound_upper", dispersion::bound_upper(n, spread, theta));
    r.set("bound_lower", dispersion::bound_lower(n, spread, theta));
    r.set("worst_case_alpha_max", dispersion::worst_case_alpha_max(n, spread, theta));
    r.set("n_alpha_max", double(n) * state.real("alpha_max"));
    return r;
  }
};

}  // namespace sharp

SHARP_EXPERIMENT_MAIN(sharp::BoundsExperiment)
