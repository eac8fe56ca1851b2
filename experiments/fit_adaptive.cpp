// sharp-fit-adaptive — the reconstructed fit of the adaptive-temperature polynomial (docs/science.md#refitting-the-polynomial): for a
// trained max-retrieval model (one value of the checkpoint axis), `samples` evaluation sets at each
// size n = n_min, 2·n_min, …, n_max; per set the head's entropy H at β = 1 and the β* ∈ [1, beta_max]
// maximising the correct class's probability; then a least-squares degree-4 fit H → β*. Records
// the (H, β*) pairs, our coefficients, and the paper's polynomial evaluated on the same H. A second
// protocol, entropy bins (lib/max_retrieval/beta_fit.hpp says why), fits β(H) through the bins; the
// mean ln p(correct) under β = 1, the paper's β(H), and both refits says which helps this model.
#include <omp.h>
#include <algorithm>
#include <bit>
#include <cmath>

#include "core/errors.hpp"
#include "core/parallel_for.hpp"
#include "experiments/checkpoint_param.hpp"
#include "max_retrieval/beta_fit.hpp"
#include "max_retrieval/trained_model.hpp"
#include "normalisers/adaptive_temperature.hpp"
#include "rng/counter_rng.hpp"
#include "runners/main.hpp"

namespace sharp {

using runner::Point;
using runner::Record;

// Metric names of a degree-4 polynomial's coefficients, highest degree first.
constexpr const char* kCoefficientNames[] = {"c4", "c3", "c2", "c1", "c0"};

class FitAdaptiveExperiment final : public runner::Experiment {
 public:
  std::string name() const override { return "fit-adaptive"; }
  std::string summary() const override {
    return "Refit of the adaptive-temperature polynomial (docs/science.md#refitting-the-polynomial, reconstructed). For a trained model (--checkpoint "
           "FILE.h5 from sharp-train-max: every model in it is one grid value; FILE.h5#ID picks one) and `samples` "
           "sets at each power-of-two size from n_min to n_max: the head's entropy H at beta = 1 and the beta* in "
           "[1, beta_max] that maximises the probability of the correct class; a least-squares degree-4 fit "
           "H -> beta*. Second protocol: the sets cut into `bins` equal-count entropy bins, each bin's one beta "
           "maximising its mean ln p(correct), and a degree-4 fit through the bins. Arrays: n, entropy, beta_star, "
           "p_star, p_one, fit_beta and paper_beta (the paper's polynomial at the same H), coefficients (ours, "
           "highest degree first); bin_entropy, bin_beta, bin_gain, bin_count, coefficients_binned. Metrics: "
           "c4..c0 and binned_c4..binned_c0; rms_fit, rms_paper (against beta*); mean_log_p.one / .paper / .fit / "
           ".binned: mean ln p(correct) with beta = 1, the paper's adaptive beta(H) (gate and clamp), and our two "
           "fits clamped to [1, beta_max].";
  }
  std::vector<runner::ParamSpec> parameters() const override {
    runner::ParamSpec checkpoint = checkpoint_param();
    return {
        checkpoint,
        runner::model_fingerprint_param("checkpoint", kMaxRetrievalTrainers),  // which weights were scored
        runner::integer_param("n_min", "16", "smallest set size (a power of two)", 1).at_most(std::int64_t{1} << 16),
        runner::integer_param("n_max", "4096", "largest set size (a power of two; a set is held in memory)", 1)
            .at_most(std::int64_t{1} << 16),
        runner::integer_param("samples", "256", "sets per size", 1).at_most(std::int64_t{1} << 16),
        runner::real_param_above("beta_max", "20", "upper end of the beta* search interval [1, beta_max]", 1.0)
            .at_most(1000.0),
        runner::integer_param("bins", "16", "equal-count entropy bins of the binned protocol", 5)
            .at_most(std::int64_t{1024}),
    };
  }
  std::vector<runner::OutputSpec> outputs() const override {
    using runner::array_integer, runner::array_real, runner::metric_integer, runner::metric_real;
    std::vector<runner::OutputSpec> out;
    for (const char* c : kCoefficientNames)
      out.push_back(metric_real(c, "", std::string("coefficient of H^") + c[1] + " of the per-set fit beta*(H)"));
    for (const char* c : kCoefficientNames)
      out.push_back(
          metric_real(std::string("binned_") + c, "", std::string("coefficient of H^") + c[1] + " of the binned fit"));
    out.push_back(metric_real("rms_fit", "", "root-mean-square gap between our per-set fit and beta*"));
    out.push_back(metric_real("rms_paper", "", "root-mean-square gap between the paper's polynomial and beta*"));
    out.push_back(metric_real("mean_log_p.one", "nats", "mean ln p(correct) with beta = 1"));
    out.push_back(metric_real("mean_log_p.paper", "nats",
                              "mean ln p(correct) with the paper's adaptive beta(H) (gate and clamp)"));
    out.push_back(
        metric_real("mean_log_p.fit", "nats", "mean ln p(correct) with our per-set fit, clamped to [1, beta_max]"));
    out.push_back(
        metric_real("mean_log_p.binned", "nats", "mean ln p(correct) with the binned fit, clamped to [1, beta_max]"));
    out.push_back(metric_integer("pairs", "sets", "(size, set) pairs of the point: samples x number of sizes"));
    const std::vector<std::string> pairs = {"*"};
    out.push_back(array_real("n", pairs, "items", "set size of each pair"));
    out.push_back(array_real("entropy", pairs, "nats", "head entropy H at beta = 1"));
    out.push_back(array_real("beta_star", pairs, "", "the beta in [1, beta_max] maximising p(correct)"));
    out.push_back(array_real("p_star", pairs, "probability", "p(correct) at beta*"));
    out.push_back(array_real("p_one", pairs, "probability", "p(correct) at beta = 1"));
    out.push_back(array_real("fit_beta", pairs, "", "our per-set fit at H"));
    out.push_back(array_real("paper_beta", pairs, "", "the paper's polynomial at H"));
    out.push_back(array_real("coefficients", {"5"}, "", "our per-set fit, highest degree first"));
    out.push_back(array_real("bin_entropy", {"bins"}, "nats", "mean H of each entropy bin"));
    out.push_back(array_real("bin_beta", {"bins"}, "", "the beta maximising each bin's mean ln p(correct)"));
    out.push_back(array_real("bin_gain", {"bins"}, "nats", "each bin's gain in mean ln p(correct) over beta = 1"));
    out.push_back(array_integer("bin_count", {"bins"}, "sets", "sets in each bin"));
    out.push_back(array_real("coefficients_binned", {"5"}, "", "the binned fit, highest degree first"));
    return out;
  }
  std::vector<runner::StreamSpec> streams() const override { return {{"sets", {}}}; }
  void validate(const Point& p) const override {
    const std::int64_t lo = p.integer("n_min"), hi = p.integer("n_max");
    auto power = [](std::int64_t v) { return (v & (v - 1)) == 0; };
    if (!power(lo) || !power(hi) || lo > hi)
      throw BadInput("--n-min, --n-max: powers of two with n_min <= n_max (got " + std::to_string(lo) + ", " +
                     std::to_string(hi) + ")");
    const std::int64_t sets =
        p.integer("samples") * (std::countr_zero(std::uint64_t(hi)) - std::countr_zero(std::uint64_t(lo)) + 1);
    if (p.integer("bins") > sets)
      throw BadInput("--bins: at most the number of sets (samples x sizes = " + std::to_string(sets) + "), got " +
                     std::to_string(p.integer("bins")));
  }
  double estimated_cost(const Point& p) const override {
    return 2.0 * double(p.integer("samples")) * double(p.integer("n_max"));
  }
  std::string notes() const override {
    return "Reconstruction (docs/science.md#refitting-the-polynomial): beta* maximises the trained model's probability of the correct class with the "
           "head's softmax(beta e), beta in [1, beta_max], found on a 0.25 grid and refined by golden-section search "
           "to 1e-4; H is the exact entropy at beta = 1; the fit is ordinary least squares of beta* on "
           "1, H, .., H^4 over every (size, set) pair of the point (no weighting, no gate at H = 0.5). Binned "
           "protocol (ours): sets ordered by H, cut into equal-count bins; per bin the beta on the same 0.25 grid "
           "maximising the bin's mean ln p(correct) (the smallest beta within 1e-3 nats of the best), refined by the "
           "parabola through its neighbours; ordinary least squares through the bins' (mean H, beta). "
           "mean_log_p interpolates each set's ln p linearly between grid points.";
  }

  Record run(const Point& p, runner::PointContext& ctx) const override {
    const max_retrieval::TrainedModel model = load_max_retrieval_model(p.text("checkpoint"));
    const std::size_t samples = std::size_t(p.integer("samples"));
    const double beta_max = p.real("beta_max");
    std::vector<std::size_t> sizes;
    for (std::int64_t n = p.integer("n_min"); n <= p.integer("n_max"); n *= 2) sizes.push_back(std::size_t(n));

    // Every (size, set) pair in parallel; BLAS is serial inside best_beta.
    const std::size_t pairs = sizes.size() * samples;
    std::vector<max_retrieval::BetaStar> out(pairs);
    const std::uint64_t key = ctx.stream_key("sets");
    parallel_for(pairs, Loop{"fit-adaptive/pairs", ctx.threads()}, [&](std::size_t j) {
      const std::size_t n = sizes[j / samples];
      const std::uint64_t set_key = rng::child_key(key, n);
      out[j] = max_retrieval::best_beta(model.layout, model.params.data(),
                                        max_retrieval::set_sample_key(set_key, std::int64_t(j % samples)), n, beta_max);
    });

    std::vector<double> n_of(pairs), entropy(pairs), beta_star(pairs), p_star(pairs), p_one(pairs);
    for (std::size_t j = 0; j < pairs; ++j) {
      n_of[j] = double(sizes[j / samples]);
      entropy[j] = out[j].entropy;
      beta_star[j] = out[j].beta_star;
      p_star[j] = out[j].p_star;
      p_one[j] = out[j].p_one;
    }
    const std::vector<double> coef = max_retrieval::polyfit(entropy, beta_star, 4);
    std::vector<double> fit(pairs), paper(pairs);
    double ss_fit = 0.0, ss_paper = 0.0;
    for (std::size_t j = 0; j < pairs; ++j) {
      fit[j] = max_retrieval::polyval(coef, entropy[j]);
      paper[j] = norm::adaptive_beta_polynomial(entropy[j]);
      ss_fit += (fit[j] - beta_star[j]) * (fit[j] - beta_star[j]);
      ss_paper += (paper[j] - beta_star[j]) * (paper[j] - beta_star[j]);
    }
    // The binned protocol and the mean ln p(correct) each β(H) rule gives on these sets.
    std::vector<std::vector<double>> grids(pairs);
    for (std::size_t j = 0; j < pairs; ++j) grids[j] = std::move(out[j].log_p_grid);
    const auto bins = max_retrieval::binned_beta(entropy, grids, std::size_t(p.integer("bins")));
    std::vector<double> bin_entropy, bin_beta, bin_gain;
    std::vector<std::int64_t> bin_count;
    for (const auto& b : bins) {
      bin_entropy.push_back(b.entropy);
      bin_beta.push_back(b.beta);
      bin_gain.push_back(b.gain);
      bin_count.push_back(std::int64_t(b.count));
    }
    const std::vector<double> coef_binned = max_retrieval::polyfit(bin_entropy, bin_beta, 4);
    auto clamp_beta = [&](double b) { return std::clamp(b, 1.0, beta_max); };
    double lp_one = 0.0, lp_paper = 0.0, lp_fit = 0.0, lp_binned = 0.0;
    for (std::size_t j = 0; j < pairs; ++j) {
      const double h = entropy[j];
      lp_one += grids[j][0];
      lp_paper += max_retrieval::log_p_at(grids[j], norm::adaptive_beta(h));
      lp_fit += max_retrieval::log_p_at(grids[j], clamp_beta(fit[j]));
      lp_binned += max_retrieval::log_p_at(grids[j], clamp_beta(max_retrieval::polyval(coef_binned, h)));
    }

    Record r;
    r.set_array("bin_entropy", bin_entropy);
    r.set_array("bin_beta", bin_beta);
    r.set_array("bin_gain", bin_gain);
    r.set_array("bin_count", bin_count);
    r.set_array("coefficients_binned", coef_binned);
    for (std::size_t k = 0; k < coef_binned.size(); ++k)
      r.set(std::string("binned_") + kCoefficientNames[k], coef_binned[k]);
    r.set("mean_log_p.one", lp_one / double(pairs));
    r.set("mean_log_p.paper", lp_paper / double(pairs));
    r.set("mean_log_p.fit", lp_fit / double(pairs));
    r.set("mean_log_p.binned", lp_binned / double(pairs));
    r.set_array("n", n_of);
    r.set_array("entropy", entropy);
    r.set_array("beta_star", beta_star);
    r.set_array("p_star", p_star);
    r.set_array("p_one", p_one);
    r.set_array("fit_beta", fit);
    r.set_array("paper_beta", paper);
    r.set_array("coefficients", coef);
    for (std::size_t k = 0; k < coef.size(); ++k) r.set(kCoefficientNames[k], coef[k]);
    r.set("rms_fit", std::sqrt(ss_fit / double(pairs)));
    r.set("rms_paper", std::sqrt(ss_paper / double(pairs)));
    r.set_count("pairs", std::int64_t(pairs));
    return r;
  }
};

}  // namespace sharp

SHARP_EXPERIMENT_MAIN(sharp::FitAdaptiveExperiment)
