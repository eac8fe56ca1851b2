// sharp-entropy-temperature — docs/science.md#entropy-falls-with-beta: the entropy of softmax(β·e) falls as β rises, with
// dH/dβ = −β·Var_p(e). Checks monotonicity on a β grid and the closed form against a finite difference.
#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "dispersion/logit_laws.hpp"
#include "entropy/entropy_temperature.hpp"
#include "runners/main.hpp"

namespace sharp {

using runner::Point;
using runner::Record;

class EntropyTemperatureExperiment final : public runner::Experiment {
 public:
  std::string name() const override { return "entropy-temperature"; }
  std::string summary() const override {
    return "Entropy falls as the inverse temperature rises (docs/science.md#entropy-falls-with-beta). For a row of n logits on [0, spread] "
           "from a logit law, the entropy of softmax(beta e) on a grid of beta_steps values from beta_min "
           "to beta_max (linear); monotone = 1 when it strictly decreases, max_rel_error = largest relative "
           "gap between the closed form dH/dbeta = -beta Var_p(e) and a central finite difference.";
  }
  std::vector<runner::ParamSpec> parameters() const override {
    return {
        runner::text_param("logits", "uniform", "logit law on [0, spread]", dispersion::logit_law_names()),
        runner::real_param_above("spread", "4", "logit spread delta", 0.0).at_most(1e6),
        runner::integer_param("n", "16,256,4096,65536", "number of items", 2).at_most(std::int64_t{1} << 26),
        runner::real_param_above("beta_min", "0.25", "smallest inverse temperature", 0.0).at_most(1e6),
        runner::real_param_above("beta_max", "8", "largest inverse temperature", 0.0).at_most(1e6),
        runner::integer_param("beta_steps", "32", "points of the beta grid", 2).at_most(std::int64_t{1} << 16),
    };
  }
  std::vector<runner::OutputSpec> outputs() const override {
    return {
        runner::metric_integer("monotone", "0 or 1", "1 when the entropy strictly decreases along the beta grid"),
        runner::metric_real("max_rel_error", "",
                            "largest relative gap between the closed form dH/dbeta and the finite difference"),
        runner::array_real("beta", {"beta_steps"}, "1/logit units", "the inverse temperatures, beta_min to beta_max"),
        runner::array_real("entropy", {"beta_steps"}, "nats", "entropy of softmax(beta e) at each beta"),
        runner::array_real("dH_dbeta", {"beta_steps"}, "nats per unit beta", "closed form -beta Var_p(e)"),
        runner::array_real("dH_dbeta_fd", {"beta_steps"}, "nats per unit beta",
                           "five-point central finite difference of the entropy"),
    };
  }
  std::vector<runner::StreamSpec> streams() const override { return {{"logits", {"n", "logits"}}}; }
  void validate(const Point& p) const override {
    if (!(p.real("beta_max") > p.real("beta_min")))
      throw BadInput("--beta-max must exceed --beta-min (got " + runner::canonical(p.real("beta_max")) +
                     " <= " + runner::canonical(p.real("beta_min")) + ")");
  }
  double estimated_cost(const Point& p) const override {
    return double(p.integer("n")) * double(p.integer("beta_steps")) * 3;
  }
  std::string notes() const override {
    return "dH_dbeta_fd is a five-point central difference, step h = 1e-4*max(1, beta), of H - ln(number of maxima) (same derivative, no rounding floor); entropy and variance are computed relative to the row maximum";
  }

  Record run(const Point& p, runner::PointContext& ctx) const override {
    const std::size_t n = std::size_t(p.integer("n"));
    std::vector<double> e(n);
    dispersion::generate_logits(dispersion::parse_logit_law(p.text("logits")), p.real("spread"), n,
                                ctx.stream_key("logits"), 0, e.data(), n);
    const std::int64_t steps = p.integer("beta_steps");
    const double b0 = p.real("beta_min"), b1 = p.real("beta_max");
    std::vector<double> betas(steps);
    for (std::int64_t i = 0; i < steps; ++i) betas[i] = b0 + (b1 - b0) * double(i) / double(steps - 1);
    const auto curve = entropy::entropy_temperature_curve(e, betas, ctx.threads());

    std::int64_t monotone = 1;
    for (std::int64_t i = 1; i < steps; ++i) monotone &= curve.entropy[i] < curve.entropy[i - 1];
    double max_rel = 0;
    for (std::int64_t i = 0; i < steps; ++i) {
      const double closed = curve.dH_dbeta[i];
      const double rel =
          closed != 0 ? std::abs(curve.dH_dbeta_fd[i] - closed) / std::abs(closed) : std::abs(curve.dH_dbeta_fd[i]);
      max_rel = std::max(max_rel, rel);
    }
    Record r;
    r.set_count("monotone", monotone);
    r.set("max_rel_error", max_rel);
    r.set_array("beta", curve.beta);
    r.set_array("entropy", curve.entropy);
    r.set_array("dH_dbeta", curve.dH_dbeta);
    r.set_array("dH_dbeta_fd", curve.dH_dbeta_fd);
    return r;
  }
};

}  // namespace sharp

SHARP_EXPERIMENT_MAIN(sharp::EntropyTemperatureExperiment)
