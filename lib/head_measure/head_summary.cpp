#include "head_measure/head_summary.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace sharp::head_measure {

namespace {

// Lemma bounds of one row: {upper violated, lower violated}.
std::pair<bool, bool> lemma_violations(const AttentionRowStats& s) {
  const double k = double(s.keys), bd = s.beta * (s.logit_max - s.logit_min);
  const bool upper = s.alpha_max * k > std::exp(bd) * (1.0 + kLemmaSlack);
  const double lower_bound = std::exp(-bd);
  const bool checkable = lower_bound / k >= DBL_MIN;
  const bool lower = checkable && s.alpha_min * k < lower_bound * (1.0 - kLemmaSlack);
  return {upper, lower};
}

}  // namespace

std::vector<HeadSummary> summarise_heads(const RowRecorder& rec) {
  const std::size_t B = rec.batch(), L = rec.layers(), H = rec.heads(), n = rec.length();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<HeadSummary> out(L * H);
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) {
      HeadSummary& m = out[l * H + h];
      double half_rows = 0, all_rows = 0;
      bool any_beta = false;
      m.beta_max = -std::numeric_limits<double>::infinity();
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < n; ++i) {
          const AttentionRowStats& s = rec.row(b, l, h, i);
          const double delta = s.logit_max - s.logit_min, k = double(s.keys);
          m.delta_max = std::max(m.delta_max, delta);
          m.entropy_all_mean += s.entropy;
          all_rows += 1;
          if (std::isfinite(s.beta)) {
            any_beta = true;
            m.beta_max = std::max(m.beta_max, s.beta);
            ++m.lemma_rows;
            const auto [upper, lower] = lemma_violations(s);
            m.lemma_violations_upper += upper;
            m.lemma_violations_lower += lower;
          }
          if (2 * std::size_t(s.keys) >= n) {
            m.delta_half_max = std::max(m.delta_half_max, delta);
            m.delta_half_mean += delta;
            m.alpha_max_half_max = std::max(m.alpha_max_half_max, s.alpha_max);
            m.alpha_max_half_mean += s.alpha_max;
            m.n_alpha_max_half_mean += k * s.alpha_max;
            m.entropy_half_mean += s.entropy;
            m.entropy_gap_half += std::log(k) - s.entropy;
            m.support_half_mean += double(s.support);
            half_rows += 1;
          }
          if (i + 1 == n) {
            m.delta_last += delta;
            m.alpha_max_last += s.alpha_max;
            m.alpha_min_last += s.alpha_min;
            m.entropy_last += s.entropy;
            m.beta_last += s.beta;
            m.support_last += double(s.support);
          }
        }
      m.delta_half_mean /= half_rows;
      m.alpha_max_half_mean /= half_rows;
      m.n_alpha_max_half_mean /= half_rows;
      m.entropy_half_mean /= half_rows;
      m.entropy_gap_half /= half_rows;
      m.support_half_mean /= half_rows;
      m.entropy_all_mean /= all_rows;
      const double nb = double(B);
      m.delta_last /= nb;
      m.alpha_max_last /= nb;
      m.alpha_min_last /= nb;
      m.entropy_last /= nb;
      m.beta_last /= nb;
      m.support_last /= nb;
      if (!any_beta) m.beta_max = nan;
    }
  return out;
}

std::vector<HeadSummary> combine_summaries(const std::vector<std::vector<HeadSummary>>& parts,
                                           const std::vector<double>& sequences) {
  if (parts.empty() || parts.size() != sequences.size())
    throw std::invalid_argument("combine_summaries: one weight per part, at least one part");
  const std::size_t heads = parts[0].size();
  double total = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].size() != heads) throw std::invalid_argument("combine_summaries: parts of different models");
    total += sequences[i];
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<HeadSummary> out(heads);
  for (std::size_t j = 0; j < heads; ++j) {
    HeadSummary& m = out[j];
    m.beta_max = nan;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const HeadSummary& s = parts[i][j];
      const double w = sequences[i] / total;
      m.delta_max = std::max(m.delta_max, s.delta_max);
      m.delta_half_max = std::max(m.delta_half_max, s.delta_half_max);
      m.alpha_max_half_max = std::max(m.alpha_max_half_max, s.alpha_max_half_max);
      if (std::isfinite(s.beta_max))
        m.beta_max = std::isfinite(m.beta_max) ? std::max(m.beta_max, s.beta_max) : s.beta_max;
      for (auto field : {&HeadSummary::delta_half_mean, &HeadSummary::alpha_max_half_mean,
                         &HeadSummary::n_alpha_max_half_mean, &HeadSummary::entropy_half_mean,
                         &HeadSummary::entropy_gap_half, &HeadSummary::entropy_all_mean, &HeadSummary::delta_last,
                         &HeadSummary::alpha_max_last, &HeadSummary::alpha_min_last, &HeadSummary::entropy_last,
                         &HeadSummary::beta_last, &HeadSummary::support_last, &HeadSummary::support_half_mean})
        m.*field += w * s.*field;
      m.lemma_rows += s.lemma_rows;
      m.lemma_violations_upper += s.lemma_violations_upper;
      m.lemma_violations_lower += s.lemma_violations_lower;
    }
  }
  return out;
}

double uniform_entropy_baseline(std::size_t n, bool causal) {
  return causal ? std::lgamma(double(n) + 1.0) / double(n) : std::log(double(n));
}

}  // namespace sharp::head_measure
