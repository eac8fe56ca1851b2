// sparsemax, 1.5-entmax (exact), alpha-entmax and adaptive-scalable entmax (docs/science.md#sparsemax, #entmax, #asentmax).
// Each forward shifts the row by its max and scales it, w = (alpha - 1) c (z - max z), finds the
// threshold tau (sparse_thresholds.hpp) and sets p = [w - tau]_+^(1/(alpha-1)).
#include <cmath>
#include <limits>

#include "core/errors.hpp"
#include "normalisers/implementation.hpp"
#include "normalisers/registry.hpp"
#include "normalisers/row_checks.hpp"
#include "normalisers/simd_io.hpp"
#include "normalisers/sparse_thresholds.hpp"

namespace sharp::norm::detail {

void weighted_projection_vjp(const double* g, const double* v, double* grad, std::size_t n) {
  double gv = 0.0, gs = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    gv += g[i] * v[i];
    gs += g[i];
  }
  const double mean = gv / gs;
  for (std::size_t i = 0; i < n; ++i) grad[i] = g[i] * (v[i] - mean);
}

namespace {

enum class Solver { Sparsemax, Entmax15, General };

// p = entmax_alpha(scale * z) for one row (float or double; computed in double). Only the
// candidates w_i = (alpha-1) scale (z_i - max z) > -1 are gathered (the support lies among them);
// p is then computed from z with the same arithmetic, so a long row costs three passes (scan,
// gather, output) plus work on the candidates, and no row-sized buffer is touched.
template <class T>
void entmax_forward(const T* z, T* p, std::size_t n, double alpha, double scale, Solver solver, const RowScan& scan,
                    Workspace& ws) {
  using simd::batch_d;
  constexpr std::size_t L = simd::kLanes;
  const double factor = (alpha - 1.0) * scale;
  const batch_d fb(factor), mb(scan.max);
  auto shifted = [&](std::size_t i) { return factor * (static_cast<double>(z[i]) - scan.max); };
  // Gather: whole batches without a candidate (the common case) cost one comparison.
  double* w = ws.doubles(2, n);
  std::size_t k = 0, i = 0;
  for (; i + L <= n; i += L) {
    if (!xsimd::any(fb * (simd::load_batch(z + i) - mb) > batch_d(-1.0))) continue;
    for (std::size_t j = i; j < i + L; ++j) {
      w[k] = shifted(j);
      k += w[k] > -1.0;
    }
  }
  for (; i < n; ++i) {
    w[k] = shifted(i);  // -inf for masked entries
    k += w[k] > -1.0;
  }
  double tau = 0.0;
  if (solver == Solver::Sparsemax) {
    tau = sparsemax_threshold(w, k, ws);
  } else if (solver == Solver::Entmax15) {
    tau = entmax15_threshold(w, k, ws);
  } else {
    tau = entmax_threshold(w, k, scan.unmasked, alpha, RootMethod::SafeguardedNewton, 1e-15, ws).root;
  }
  if (solver != Solver::General) {
    // p = [w - tau]_+ or [w - tau]_+^2 with w computed exactly as in the gather.
    const bool square = solver == Solver::Entmax15;
    const batch_d tb(tau), zero(0.0);
    auto value = [&](batch_d zb) {
      const batch_d x = xsimd::max(fb * (zb - mb) - tb, zero);  // -inf (masked) -> 0
      return square ? x * x : x;
    };
    for (i = 0; i + L <= n; i += L) simd::store_batch(p + i, value(simd::load_batch(z + i)));
    if (i < n) simd::store_partial(p + i, n - i, value(simd::load_partial(z + i, n - i, -INFINITY)));
    return;
  }
  const double r = 1.0 / (alpha - 1.0);
  double sum = 0.0;
  for (i = 0; i < n; ++i) {
    const double x = shifted(i) - tau;
    const double value = x > 0.0 ? power(x, r) : 0.0;
    sum += value;
    p[i] = static_cast<T>(value);
  }
  const double inv_sum = 1.0 / sum;  // absorbs the root's tolerance
  for (i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<double>(p[i]) * inv_sum);
}

Solver solver_for(double alpha) {
  return alpha == 2.0 ? Solver::Sparsemax : alpha == 1.5 ? Solver::Entmax15 : Solver::General;
}

// g = p^(2 - alpha) on the support: the Jacobian of entmax_alpha w.r.t. z is diag(g) - g g^T/sum g.
void entmax_gradient_weights(const double* p, double* g, std::size_t n, double alpha) {
  for (std::size_t i = 0; i < n; ++i) {
    g[i] = p[i] <= 0.0 ? 0.0 : alpha == 2.0 ? 1.0 : alpha == 1.5 ? std::sqrt(p[i]) : std::pow(p[i], 2.0 - alpha);
  }
}

// sparsemax (alpha = 2) and 1.5-entmax (alpha = 1.5): a fixed alpha with an exact threshold
// (sparse_thresholds.hpp), so no parameter and no dp/dalpha.
class ExactEntmax final : public TemplatedForward<ExactEntmax> {
 public:
  ExactEntmax(const Spec& spec, double alpha) : TemplatedForward(spec), alpha_(alpha), solver_(solver_for(alpha)) {}

  template <class T>
  void impl(const T* z, T* p, std::size_t n, Workspace& ws) const {
    entmax_forward(z, p, n, alpha_, 1.0, solver_, scan_row(z, n), ws);
  }
  void backward_row(const double*, const double* p, const double* v, double* grad_z, double*, std::size_t n,
                    Workspace& ws) const override {
    double* g = ws.doubles(0, n);
    entmax_gradient_weights(p, g, n, alpha_);
    weighted_projection_vjp(g, v, grad_z, n);
  }

 private:
  double alpha_;
  Solver solver_;
};

// alpha-entmax. dp/dalpha (from p = (u - tau)^r, u = (alpha-1) z, r = 1/(alpha-1), sum p = 1):
//   dp_i/dalpha = r [ g_i (z_i - tau') - p_i ln p_i ],  tau' = (sum g z - sum p ln p) / sum g,
// shift-invariant in z, so z - max z is used.
class Entmax final : public TemplatedForward<Entmax> {
 public:
  explicit Entmax(const Spec& spec) : TemplatedForward(spec), alpha_(spec.param("alpha")) {}
  std::vector<std::string> parameter_names() const override { return {"alpha"}; }

  template <class T>
  void impl(const T* z, T* p, std::size_t n, Workspace& ws) const {
    entmax_forward(z, p, n, alpha_, 1.0, solver_for(alpha_), scan_row(z, n), ws);
  }
  void backward_row(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                    std::size_t n, Workspace& ws) const override {
    double* g = ws.doubles(0, n);
    entmax_gradient_weights(p, g, n, alpha_);
    weighted_projection_vjp(g, v, grad_z, n);
    if (!grad_params) return;
    const double m = scan_row(z, n).max;
    double gs = 0.0, gz = 0.0, plogp = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (p[i] <= 0.0) continue;
      gs += g[i];
      gz += g[i] * (z[i] - m);
      plogp += p[i] * std::log(p[i]);
    }
    const double tau_prime = (gz - plogp) / gs;
    double dalpha = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (p[i] <= 0.0) continue;
      dalpha += v[i] * (g[i] * ((z[i] - m) - tau_prime) - p[i] * std::log(p[i]));
    }
    grad_params[0] = dalpha / (alpha_ - 1.0);
  }

 private:
  double alpha_;
};

// ASEntmax as a static per-head scale (the published method computes b and gamma per query; docs/science.md#asentmax):
// 1.5-entmax(c z), c = delta + b (ln n)^gamma, n = number of unmasked entries. Gradients: dL/dc = sum_i (dL/dy_i) z_i with y = c z, then dc/db = (ln n)^gamma,
// dc/dgamma = b (ln n)^gamma ln ln n, dc/ddelta = 1. A row with one unmasked entry is one-hot
// (for any c) and has zero gradients. Rows may bring their own (b, gamma, delta) (the per-query form,
// takes_row_parameters): the same kernels with the row's values, so a row at the spec's values gets
// the spec's bits.
class Asentmax final : public TemplatedForward<Asentmax> {
 public:
  explicit Asentmax(const Spec& spec)
      : TemplatedForward(spec), b_(spec.param("b")), gamma_(spec.param("gamma")), delta_(spec.param("delta")) {}
  std::vector<std::string> parameter_names() const override { return {"b", "gamma", "delta"}; }
  bool takes_row_parameters() const override { return true; }

  template <class T>
  void impl(const T* z, T* p, std::size_t n, Workspace& ws) const {
    forward_at(z, p, n, {b_, gamma_, delta_}, ws);
  }

 protected:
  void forward_row_with(const double* z, double* p, std::size_t n, const double* params, Workspace& ws) const override {
    forward_at(z, p, n, {params[0], params[1], params[2]}, ws);
  }
  void forward_row_with(const float* z, float* p, std::size_t n, const double* params, Workspace& ws) const override {
    forward_at(z, p, n, {params[0], params[1], params[2]}, ws);
  }
  void backward_row(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                    std::size_t n, Workspace& ws) const override {
    backward_at(z, p, v, grad_z, grad_params, n, {b_, gamma_, delta_}, ws);
  }
  void backward_row_with(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                         std::size_t n, const double* params, Workspace& ws) const override {
    backward_at(z, p, v, grad_z, grad_params, n, {params[0], params[1], params[2]}, ws);
  }

 private:
  struct Values {
    double b, gamma, delta;
    double scale(std::size_t unmasked) const {
      return delta + b * std::pow(std::log(static_cast<double>(unmasked)), gamma);
    }
  };

  template <class T>
  static void forward_at(const T* z, T* p, std::size_t n, Values c, Workspace& ws) {
    const RowScan scan = scan_row(z, n);
    if (scan.unmasked == 1) {
      for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<double>(z[i]) > -INFINITY ? T(1) : T(0);
      return;
    }
    entmax_forward(z, p, n, 1.5, c.scale(scan.unmasked), Solver::Entmax15, scan, ws);
  }

  static void backward_at(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                          std::size_t n, Values values, Workspace& ws) {
    const RowScan scan = scan_row(z, n);
    if (scan.unmasked == 1) {
      std::fill(grad_z, grad_z + n, 0.0);
      if (grad_params) std::fill(grad_params, grad_params + 3, 0.0);
      return;
    }
    const double c = values.scale(scan.unmasked);
    double* g = ws.doubles(0, n);
    entmax_gradient_weights(p, g, n, 1.5);
    weighted_projection_vjp(g, v, grad_z, n);  // dL/dy
    double dc = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (p[i] > 0.0) dc += grad_z[i] * (z[i] - scan.max);
      grad_z[i] *= c;
    }
    if (!grad_params) return;
    const double log_n = std::log(static_cast<double>(scan.unmasked));
    const double log_n_gamma = std::pow(log_n, values.gamma);
    grad_params[0] = dc * log_n_gamma;
    grad_params[1] = dc * values.b * log_n_gamma * std::log(log_n);
    grad_params[2] = dc;
  }

  double b_, gamma_, delta_;
};

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return x > 30.0 ? x : std::log1p(std::exp(x)); }

const NormaliserRegistration kSparsemax{{
    .name = "sparsemax",
    .formula = "p = [z − τ]₊, Σ p = 1 (projection onto the simplex)",
    .section = "sparsemax",
    .example = "sparsemax",
    .make = [](const Spec& s) { return std::make_unique<ExactEntmax>(s, 2.0); },
}};

const NormaliserRegistration kEntmax15{{
    .name = "entmax15",
    .formula = "α-entmax with α = 1.5 (exact, sort-based)",
    .section = "entmax",
    .example = "entmax15",
    .make = [](const Spec& s) { return std::make_unique<ExactEntmax>(s, 1.5); },
}};

const NormaliserRegistration kEntmax{{
    .name = "entmax",
    .formula = "p = [(α − 1)·z − τ]₊^{1/(α−1)}, Σ p = 1",
    .section = "entmax",
    .example = "entmax:alpha=1.25",
    .parameters = {{"alpha", std::nullopt, ParameterRange::above(1.0).at_most(2.0), "α (2: sparsemax)"}},
    .learnable = {{
        .key = "alpha",
        .parameterisation = "`α = 1.01 + 0.99·sigmoid(a)`, in `(1.01, 2)`",
        .start = "`a₀ = 0` (`α₀ = 1.505`)",
        .initial_raw = [](std::size_t) { return 0.0; },
        .value = [](double raw) { return 1.01 + 0.99 * sigmoid(raw); },
        .derivative = [](double raw) { return 0.99 * sigmoid(raw) * (1.0 - sigmoid(raw)); },
    }},
    .make = [](const Spec& s) { return std::make_unique<Entmax>(s); },
}};

// ASEntmax's parameters, the same in its static and its per-query entry.
std::vector<ParameterInfo> asentmax_parameters() {
  return {{"b", std::nullopt, ParameterRange::at_least(0.0), "scale of (ln n)^γ"},
          {"gamma", std::nullopt, ParameterRange::finite(), "power of ln n"},
          {"delta", 1.0, ParameterRange::at_least(0.0), "offset δ"}};
}

void check_asentmax(const Spec& s) {
  if (s.param("b") + s.param("delta") <= 0.0)
    throw BadInput("normaliser '" + s.name + "': b and delta are both 0 (allowed: b + delta > 0)");
}

// b = softplus(raw) and γ = 2·tanh(raw), raw starting at 0 (b₀ = ln 2, γ₀ = 0): a scalar per head
// (asentmax), or per query, raw = c + w·h_q with w starting at 0 (asentmax_query).
std::vector<LearnableInfo> asentmax_learnable(bool per_query) {
  const std::vector<std::string> shape = per_query ? std::vector<std::string>{"d_model"} : std::vector<std::string>{};
  return {{
              .key = "b",
              .shape = shape,
              .parameterisation = per_query ? "`b_q = softplus(c_β + w_β·h_q)`, `w_β` of `d_model` values, per head"
                                            : "`b = softplus(b′) = ln(1 + e^{b′})`, `b > 0`",
              .start = per_query ? "`w_β = 0`, `c_β = 0` (`b = ln 2`)" : "`b′₀ = 0` (`b₀ = ln 2`)",
              .initial_raw = [](std::size_t) { return 0.0; },
              .value = [](double raw) { return softplus(raw); },
              .derivative = [](double raw) { return sigmoid(raw); },
          },
          {
              .key = "gamma",
              .shape = shape,
              .parameterisation = per_query ? "`γ_q = 2·tanh(c_γ + w_γ·h_q)`, `w_γ` of `d_model` values, per head"
                                            : "`γ = 2·tanh(γ′)`, in `(−2, 2)`",
              .start = per_query ? "`w_γ = 0`, `c_γ = 0` (`γ = 0`)" : "`γ′₀ = 0` (`γ₀ = 0`)",
              .initial_raw = [](std::size_t) { return 0.0; },
              .value = [](double raw) { return 2.0 * std::tanh(raw); },
              .derivative =
                  [](double raw) {
                    const double t = std::tanh(raw);
                    return 2.0 * (1.0 - t * t);
                  },
          }};
}

const NormaliserRegistration kAsentmax{{
    .name = "asentmax",
    .formula = "p = entmax15((δ + b·(ln n)^γ)·z), b and γ static per head",
    .section = "asentmax",
    .example = "asentmax:b=0.5:gamma=1",
    .parameters = asentmax_parameters(),
    .learnable = asentmax_learnable(false),
    .check = check_asentmax,
    .make = [](const Spec& s) { return std::make_unique<Asentmax>(s); },
}};

// The published per-query form: b and γ read from each query's hidden state when learned; on rows
// alone (fixed b and γ, or w = 0) it is asentmax.
const NormaliserRegistration kAsentmaxQuery{{
    .name = "asentmax_query",
    .formula = "p = entmax15((δ + b_q·(ln n)^{γ_q})·z), b_q and γ_q learned from the query's hidden state",
    .section = "asentmax",
    .example = "asentmax_query:b=0.5:gamma=1",
    .parameters = asentmax_parameters(),
    .learnable = asentmax_learnable(true),
    .check = check_asentmax,
    .make = [](const Spec& s) { return std::make_unique<Asentmax>(s); },
}};

}  // namespace

}  // namespace sharp::norm::detail
