#include "head_measure/answer_rows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sharp::head_measure {

AnswerRows::AnswerRows(std::size_t layers, std::size_t heads, std::size_t first_row)
    : layers_(layers),
      heads_(heads),
      first_row_(first_row),
      entropy_sum_(layers * heads),
      entropy_before_beta_sum_(layers * heads),
      delta_sum_(layers * heads),
      delta_max_(layers * heads, -std::numeric_limits<double>::infinity()),
      ln_k_sum_(layers * heads),
      rows_(layers * heads) {}

template <class T>
void AnswerRows::keep(const transformer::AttentionTile<T>& tile) {
  const std::size_t slot = tile.layer * heads_ + tile.head;
  for (std::size_t r = 0; r < tile.rows; ++r) {
    if (tile.first_row + r < first_row_) continue;
    const transformer::AttentionRowStats& s = tile.stats[r];
    const double delta = s.logit_max - s.logit_min;
    entropy_sum_[slot] += s.entropy;
    entropy_before_beta_sum_[slot] += s.entropy_before_beta;
    delta_sum_[slot] += delta;
    delta_max_[slot] = std::max(delta_max_[slot], delta);
    ln_k_sum_[slot] += std::log(double(s.keys));
    ++rows_[slot];
  }
}

void AnswerRows::observe(const transformer::AttentionTile<float>& tile) { keep(tile); }
void AnswerRows::observe(const transformer::AttentionTile<double>& tile) { keep(tile); }

void AnswerRows::merge(const AnswerRows& other) {
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    entropy_sum_[i] += other.entropy_sum_[i];
    entropy_before_beta_sum_[i] += other.entropy_before_beta_sum_[i];
    delta_sum_[i] += other.delta_sum_[i];
    delta_max_[i] = std::max(delta_max_[i], other.delta_max_[i]);
    ln_k_sum_[i] += other.ln_k_sum_[i];
    rows_[i] += other.rows_[i];
  }
}

std::int64_t AnswerRows::rows() const { return rows_.empty() ? 0 : rows_[0]; }

namespace {

std::vector<double> per_row(const std::vector<double>& sum, const std::vector<std::int64_t>& rows) {
  std::vector<double> out(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i)
    out[i] = rows[i] > 0 ? sum[i] / double(rows[i]) : std::numeric_limits<double>::quiet_NaN();
  return out;
}

}  // namespace

std::vector<double> AnswerRows::entropy_mean() const { return per_row(entropy_sum_, rows_); }
std::vector<double> AnswerRows::entropy_before_beta_mean() const { return per_row(entropy_before_beta_sum_, rows_); }
std::vector<double> AnswerRows::delta_mean() const { return per_row(delta_sum_, rows_); }

std::vector<double> AnswerRows::delta_max() const {
  std::vector<double> out = delta_max_;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (rows_[i] == 0) out[i] = std::numeric_limits<double>::quiet_NaN();
  return out;
}

double AnswerRows::ln_k_mean() const {
  return rows() > 0 ? ln_k_sum_[0] / double(rows_[0]) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace sharp::head_measure
