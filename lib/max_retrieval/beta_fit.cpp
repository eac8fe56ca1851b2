#include "max_retrieval/beta_fit.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.hpp"
#include "core/online_softmax.hpp"
#include "nn/gemm.hpp"
#include "nn/mlp.hpp"
#include "nn/omp_threads.hpp"

namespace sharp::max_retrieval {
namespace {

// p_correct(β) for one sample whose items h [n, W] and logits e [n] are known.
class CorrectClassProbability {
 public:
  CorrectClassProbability(const ModelLayout& layout, const float* params, const std::vector<float>& h,
                          const std::vector<float>& e, std::int32_t label)
      : layout_(layout),
        params_(params),
        h_(h),
        e_(e),
        label_(label),
        c_(layout.config.width),
        z_(layout.head.d),
        logits_(kClasses) {}

  double operator()(double beta) { return std::exp(log_p(beta)); }

  // ln p_correct(β), without the underflow of ln(exp(·)) for a confidently wrong model.
  double log_p(double beta) {
    const std::size_t n = e_.size(), W = layout_.config.width;
    double m = -INFINITY;
    for (float x : e_) m = std::max(m, beta * double(x));
    std::vector<double> acc(W, 0.0);
    double s = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double w = std::exp(beta * double(e_[i]) - m);
      s += w;
      const float* hi = h_.data() + i * W;
      for (std::size_t k = 0; k < W; ++k) acc[k] += w * double(hi[k]);
    }
    for (std::size_t k = 0; k < W; ++k) c_[k] = float(acc[k] / s);
    nn::gemm(nn::Trans::No, nn::Trans::Yes, 1, layout_.head.d, W, 1.0f, c_.data(), params_ + layout_.W_V, 0.0f,
             z_.data());
    nn::mlp_forward(logits_.data(), z_.data(), layout_.phi, params_, 1, phi_);
    double lm = -INFINITY, ls = 0.0;
    for (float l : logits_) lm = std::max(lm, double(l));
    for (float l : logits_) ls += std::exp(double(l) - lm);
    return double(logits_[std::size_t(label_)]) - lm - std::log(ls);
  }

 private:
  const ModelLayout& layout_;
  const float* params_;
  const std::vector<float>& h_;
  const std::vector<float>& e_;
  std::int32_t label_;
  std::vector<float> c_, z_, logits_;
  nn::MlpCache<float> phi_;
};

}  // namespace

BetaStar best_beta(const ModelLayout& layout, const float* params, std::uint64_t sample_key, std::size_t n,
                   double beta_max) {
  nn::OmpThreadsScope serial_blas(1);
  const std::size_t W = layout.config.width, d = layout.head.d;
  Batch<float> batch;
  batch.resize(1, n);
  generate_sample(sample_key, batch, 0);
  std::vector<float> h(n * W), hq(W), q(d), u(W), e(n);
  nn::MlpCache<float> cache;
  nn::mlp_forward(h.data(), batch.items.data(), layout.psi, params, n, cache);
  nn::mlp_forward(hq.data(), batch.query.data(), layout.query, params, 1, cache);
  nn::gemm(nn::Trans::No, nn::Trans::Yes, 1, d, W, 1.0f, hq.data(), params + layout.W_Q, 0.0f, q.data());
  nn::gemm(nn::Trans::No, nn::Trans::No, 1, W, d, float(1.0 / std::sqrt(double(d))), q.data(), params + layout.W_K,
           0.0f, u.data());
  nn::gemv(nn::Trans::No, n, W, 1.0f, h.data(), u.data(), 0.0f, e.data());

  BetaStar r;
  r.label = batch.labels[0];
  {  // entropy of softmax(e) at β = 1, in double, relative to the max
    OnlineSoftmax<> at_one;
    for (float x : e) at_one.max = std::max(at_one.max, double(x));
    at_one.shift = at_one.max;
    double s = 0.0, t = 0.0;
    for (float x : e) {
      const double u = double(x) - at_one.shift;
      const double w = std::exp(u);
      s += w;
      t = std::fma(u, w, t);
    }
    at_one.add_sums(s, t);
    r.entropy = at_one.entropy();
  }
  CorrectClassProbability p(layout, params, h, e, r.label);
  // Grid, then golden section between the best grid point's neighbours.
  constexpr double kGrid = kBetaGridStep;
  for (std::size_t k = 0; 1.0 + double(k) * kGrid <= beta_max + 1e-12; ++k)
    r.log_p_grid.push_back(p.log_p(1.0 + double(k) * kGrid));
  r.p_one = std::exp(r.log_p_grid[0]);
  double best = 1.0, best_p = r.p_one;
  for (std::size_t k = 1; k < r.log_p_grid.size(); ++k) {
    const double pb = std::exp(r.log_p_grid[k]);
    if (pb > best_p) best = 1.0 + double(k) * kGrid, best_p = pb;
  }
  double lo = std::max(1.0, best - kGrid), hi = std::min(beta_max, best + kGrid);
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
  double p1 = p(x1), p2 = p(x2);
  while (hi - lo > 1e-4) {
    if (p1 >= p2) {
      hi = x2, x2 = x1, p2 = p1;
      x1 = hi - phi * (hi - lo), p1 = p(x1);
    } else {
      lo = x1, x1 = x2, p1 = p2;
      x2 = lo + phi * (hi - lo), p2 = p(x2);
    }
  }
  const double refined = 0.5 * (lo + hi), refined_p = p(refined);
  if (refined_p > best_p) best = refined, best_p = refined_p;
  r.beta_star = best;
  r.p_star = best_p;
  return r;
}

double log_p_at(const std::vector<double>& log_p_grid, double beta) {
  if (log_p_grid.empty()) throw BadInput("log_p_at: empty grid");
  const double x = std::clamp((beta - 1.0) / kBetaGridStep, 0.0, double(log_p_grid.size() - 1));
  const std::size_t k = std::min(std::size_t(x), log_p_grid.size() - 1);
  if (k + 1 == log_p_grid.size()) return log_p_grid[k];
  const double f = x - double(k);
  return (1.0 - f) * log_p_grid[k] + f * log_p_grid[k + 1];
}

std::vector<EntropyBin> binned_beta(const std::vector<double>& entropy,
                                    const std::vector<std::vector<double>>& log_p_grids, std::size_t bins) {
  const std::size_t S = entropy.size();
  if (bins < 1 || bins > S || log_p_grids.size() != S)
    throw BadInput("binned_beta: " + std::to_string(bins) + " bins for " + std::to_string(S) + " sets");
  std::vector<std::size_t> order(S);
  for (std::size_t i = 0; i < S; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return entropy[a] < entropy[b]; });
  const std::size_t G = log_p_grids[0].size();
  std::vector<EntropyBin> out(bins);
  std::size_t next = 0;
  for (std::size_t b = 0; b < bins; ++b) {
    EntropyBin& bin = out[b];
    bin.count = S / bins + (b < S % bins ? 1 : 0);
    std::vector<double> mean_log_p(G, 0.0);
    for (std::size_t j = next; j < next + bin.count; ++j) {
      const std::size_t i = order[j];
      if (log_p_grids[i].size() != G) throw BadInput("binned_beta: grids of different lengths");
      bin.entropy += entropy[i];
      for (std::size_t g = 0; g < G; ++g) mean_log_p[g] += log_p_grids[i][g];
    }
    next += bin.count;
    bin.entropy /= double(bin.count);
    for (double& v : mean_log_p) v /= double(bin.count);
    std::size_t best = 0;
    for (std::size_t g = 1; g < G; ++g)
      if (mean_log_p[g] > mean_log_p[best]) best = g;
    // The least sharpening within kBinGainTolerance of the best: bins the head already gets right
    // (H ≈ 0, p ≈ 1) are flat in β, and their argmax would be noise.
    std::size_t k = 0;
    while (mean_log_p[k] < mean_log_p[best] - kBinGainTolerance) ++k;
    // Vertex of the parabola through the best grid point and its neighbours (interior maxima only).
    double offset = 0.0;
    if (k == best && k > 0 && k + 1 < G) {
      const double a = mean_log_p[k - 1], c = mean_log_p[k], d = mean_log_p[k + 1];
      const double curvature = a - 2.0 * c + d;
      if (curvature < 0.0) offset = std::clamp(0.5 * (a - d) / curvature, -0.5, 0.5);
    }
    bin.beta = 1.0 + (double(k) + offset) * kBetaGridStep;
    bin.gain = mean_log_p[k] - mean_log_p[0];
  }
  return out;
}

std::vector<double> polyfit(const std::vector<double>& x, const std::vector<double>& y, int degree) {
  const std::size_t m = x.size(), k = std::size_t(degree) + 1;
  if (m < k || y.size() != m)
    throw NumericError("polyfit: " + std::to_string(m) + " points for " + std::to_string(k) + " coefficients");
  // A [m, k] column-major, columns x^degree .. x^0; b = y. Householder QR, then back substitution.
  std::vector<double> A(m * k), b(y);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < k; ++j) A[j * m + i] = std::pow(x[i], double(degree) - double(j));
  for (std::size_t j = 0; j < k; ++j) {
    double norm = 0.0;
    for (std::size_t i = j; i < m; ++i) norm += A[j * m + i] * A[j * m + i];
    norm = std::sqrt(norm);
    if (norm == 0.0)
      throw NumericError("polyfit: the points do not determine a degree-" + std::to_string(degree) + " polynomial");
    const double alpha = A[j * m + j] > 0 ? -norm : norm;
    std::vector<double> v(m, 0.0);
    for (std::size_t i = j; i < m; ++i) v[i] = A[j * m + i];
    v[j] -= alpha;
    double vv = 0.0;
    for (std::size_t i = j; i < m; ++i) vv += v[i] * v[i];
    auto reflect = [&](double* col) {
      double dot = 0.0;
      for (std::size_t i = j; i < m; ++i) dot += v[i] * col[i];
      const double f = 2.0 * dot / vv;
      for (std::size_t i = j; i < m; ++i) col[i] -= f * v[i];
    };
    for (std::size_t c = j; c < k; ++c) reflect(&A[c * m]);
    reflect(b.data());
  }
  std::vector<double> coef(k);
  for (std::size_t j = k; j-- > 0;) {
    double s = b[j];
    for (std::size_t c = j + 1; c < k; ++c) s -= A[c * m + j] * coef[c];
    coef[j] = s / A[j * m + j];
  }
  return coef;
}

double polyval(const std::vector<double>& coefficients, double x) {
  double r = 0.0;
  for (double c : coefficients) r = r * x + c;
  return r;
}

}  // namespace sharp::max_retrieval
