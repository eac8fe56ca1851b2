// OnlineSoftmax (core/online_softmax.hpp) on its own: a row in parts merged in order equals the row
// in one pass (plain and compensated sums, base e and 2, any scale), against long double; rescaling
// leaves every derived quantity unchanged; entropy and log-sum-exp against closed forms; an empty
// part changes nothing; and the case the comparisons exist for: a part whose reference was moved
// without rescaling its sums (a wrong shift) must be caught.
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/online_softmax.hpp"
#include "support/random_rows.hpp"

namespace {

using sharp::CompensatedSum;
using sharp::ExpBase;
using sharp::OnlineSoftmax;
using sharp::test::random_uniform;
constexpr double kInf = std::numeric_limits<double>::infinity();

// ln Σ e^(c z), H and the largest weight of softmax(c z), in long double (two passes).
struct Reference {
  long double log_sum_exp, entropy, largest_weight;
};
Reference reference(const std::vector<double>& z, long double c) {
  long double m = -INFINITY;
  for (double v : z) m = std::max<long double>(m, c * v);
  long double s = 0, t = 0;
  for (double v : z) {
    if (v == -kInf) continue;
    const long double u = c * v - m, w = std::exp(u);
    s += w;
    t += u * w;
  }
  return {m + std::log(s), std::log(s) - t / s, 1.0L / s};
}

double rel_err(double got, long double want) {
  return static_cast<double>(std::fabs(got - want) / std::max<long double>(std::fabs(want), 1e-300L));
}

// Logits in base-b units for scale c: base 2 takes y = z·log2(e), so both describe softmax(c z).
template <ExpBase kBase>
double in_base(double z) {
  return kBase == ExpBase::E ? z : z * std::numbers::log2e;
}

// The row fed one logit at a time, cut into parts of `part` logits, the parts merged in order.
template <ExpBase kBase, class Sum>
OnlineSoftmax<kBase, Sum> in_parts(const std::vector<double>& z, std::size_t part, double scale) {
  OnlineSoftmax<kBase, Sum> total;
  for (std::size_t first = 0; first < z.size(); first += part) {
    OnlineSoftmax<kBase, Sum> p;
    for (std::size_t i = first; i < std::min(z.size(), first + part); ++i) p.add(in_base<kBase>(z[i]), scale);
    total.merge(p, scale);
  }
  return total;
}

template <ExpBase kBase, class Sum>
void expect_matches_reference(const OnlineSoftmax<kBase, Sum>& st, const std::vector<double>& z, double scale,
                              double tol) {
  const Reference r = reference(z, scale);
  EXPECT_LT(rel_err(st.log_sum_exp(scale), r.log_sum_exp), tol);
  EXPECT_LT(std::fabs(st.entropy() - static_cast<double>(r.entropy)), tol * std::max(1.0, double(r.entropy)));
  EXPECT_LT(rel_err(st.weight(st.max, scale), r.largest_weight), tol);
}

template <ExpBase kBase, class Sum>
void merge_equals_one_pass() {
  // Rising, falling and shuffled rows: merges rescale the earlier part, the later one, or neither.
  std::vector<std::vector<double>> rows;
  rows.push_back(random_uniform(3000, 1, 5.0, 1.0));
  std::vector<double> rising(3000), falling(3000);
  for (std::size_t i = 0; i < 3000; ++i) {
    rising[i] = 0.01 * static_cast<double>(i) + rows[0][i] * 0.1;
    falling[i] = -rising[i];
  }
  rows.push_back(rising);
  rows.push_back(falling);
  std::vector<double> masked = random_uniform(500, 2, 30.0, 0.0);
  for (std::size_t i = 0; i < masked.size(); i += 3) masked[i] = -kInf;
  rows.push_back(masked);
  for (const auto& z : rows) {
    for (const double scale : {1.0, 0.3, 4.0}) {
      const auto whole = in_parts<kBase, Sum>(z, z.size(), scale);
      expect_matches_reference(whole, z, scale, 1e-13);
      for (const std::size_t part : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
        SCOPED_TRACE(testing::Message() << "part " << part << " scale " << scale);
        const auto merged = in_parts<kBase, Sum>(z, part, scale);
        expect_matches_reference(merged, z, scale, 1e-13);
        EXPECT_EQ(merged.max, whole.max);
        EXPECT_EQ(merged.shift, whole.shift);   // the reference ends at the max either way
        // The same parts merged again: the same bits.
        const auto again = in_parts<kBase, Sum>(z, part, scale);
        EXPECT_EQ(std::memcmp(&merged, &again, sizeof merged), 0);
      }
    }
  }
}

TEST(OnlineSoftmax, MergeOfPartsEqualsOnePass) {
  merge_equals_one_pass<ExpBase::E, double>();
  merge_equals_one_pass<ExpBase::E, CompensatedSum>();
  merge_equals_one_pass<ExpBase::Two, double>();
  merge_equals_one_pass<ExpBase::Two, CompensatedSum>();
}

TEST(OnlineSoftmax, RescaleChangesNothingDerivedAndReturnsItsFactor) {
  const std::vector<double> z = random_uniform(200, 3, 3.0, 0.0);
  for (const double scale : {1.0, 2.5}) {
    OnlineSoftmax<> st;
    for (double v : z) st.add(v, scale);
    const OnlineSoftmax<> before = st;
    const double f = st.rescale_to(st.shift + 1.5, scale);
    EXPECT_NEAR(f, std::exp(-1.5 * scale), 1e-15 * f);
    EXPECT_NEAR(st.total_sum(), f * before.total_sum(), 1e-15 * st.total_sum());
    EXPECT_NEAR(st.log_sum_exp(scale), before.log_sum_exp(scale), 1e-14);
    EXPECT_NEAR(st.entropy(), before.entropy(), 1e-14);
    EXPECT_NEAR(st.weight(z[5], scale), before.weight(z[5], scale), 1e-15);
    // And back: the sums return to within rounding.
    st.rescale_to(before.shift, scale);
    EXPECT_NEAR(st.total_sum(), before.total_sum(), 1e-14 * before.total_sum());
  }
  // A caller's own exp (the one its terms use) gives the factor.
  OnlineSoftmax<> st;
  st.add(1.0);
  EXPECT_EQ(st.rescale_to(3.0, 1.0, [](double d) { return d == -2.0 ? 0.125 : 0.0; }), 0.125);
  EXPECT_EQ(st.total_sum(), 0.125);
  // An empty state only takes the reference.
  OnlineSoftmax<> empty;
  EXPECT_EQ(empty.rescale_to(7.0), 1.0);
  EXPECT_EQ(empty.shift, 7.0);
  EXPECT_EQ(empty.total_sum(), 0.0);
}

TEST(OnlineSoftmax, EntropyAndLogSumExpAgainstClosedForms) {
  // n equal logits c: log-sum-exp = c + ln n, H = ln n, every weight 1/n.
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
    OnlineSoftmax<ExpBase::E, CompensatedSum> st;
    for (std::size_t i = 0; i < n; ++i) st.add(2.5);
    EXPECT_NEAR(st.log_sum_exp(), 2.5 + std::log(double(n)), 1e-14);
    EXPECT_NEAR(st.entropy(), std::log(double(n)), 1e-14);
    EXPECT_NEAR(st.weight(2.5), 1.0 / double(n), 1e-16);
  }
  // Two logits {0, a}: p = σ(a), H = −p ln p − (1 − p) ln(1 − p), at several a and in both bases.
  for (const double a : {-3.0, 0.5, 8.0, 30.0}) {
    const double p = 1.0 / (1.0 + std::exp(-a));
    const double h = -p * std::log(p) - (1 - p) * std::log1p(-p);
    OnlineSoftmax<> e;
    e.add(0.0);
    e.add(a);
    OnlineSoftmax<ExpBase::Two> two;
    two.add(0.0);
    two.add(a * std::numbers::log2e);
    EXPECT_NEAR(e.entropy(), h, 1e-14 + 1e-13 * h) << a;   // H = ln s − t/s: absolute error ~ eps
    EXPECT_NEAR(two.entropy(), h, 1e-14 + 1e-13 * h) << a;   // H = ln s − t/s: absolute error ~ eps
    EXPECT_NEAR(e.log_sum_exp(), std::max(a, 0.0) + std::log1p(std::exp(-std::fabs(a))), 1e-14) << a;
    EXPECT_NEAR(two.log_sum_exp(), e.log_sum_exp(), 1e-13) << a;
    EXPECT_NEAR(e.weight(a), p, 1e-15) << a;
  }
  // Masked logits weigh nothing; an empty or fully masked row has no entropy.
  OnlineSoftmax<> masked;
  masked.add(-kInf);
  EXPECT_TRUE(masked.empty());
  EXPECT_EQ(masked.log_sum_exp(), -kInf);
  EXPECT_EQ(masked.weight(1.0), 0.0);
  EXPECT_THROW(masked.entropy(), sharp::NumericError);
}

TEST(OnlineSoftmax, EmptyPartsChangeNothing) {
  const std::vector<double> z = random_uniform(50, 4, 2.0, 0.0);
  OnlineSoftmax<ExpBase::E, CompensatedSum> st;
  for (double v : z) st.add(v);
  OnlineSoftmax<ExpBase::E, CompensatedSum> left = st, right;
  left.merge({});
  right.merge(st);
  EXPECT_EQ(std::memcmp(&left, &st, sizeof st), 0);
  EXPECT_EQ(std::memcmp(&right, &st, sizeof st), 0);
  // A part that only tracked its max (no sums) still passes the max on.
  OnlineSoftmax<ExpBase::Two, CompensatedSum> extremes, more;
  more.max = 3.0;
  extremes.merge(more);
  EXPECT_EQ(extremes.max, 3.0);
  EXPECT_TRUE(extremes.empty());
}

TEST(OnlineSoftmax, APartWithAWrongShiftIsCaught) {
  // The second half's reference moved by 0.75 without its sums: every derived number of the merge
  // is off, by far more than the tolerance the tests above use (the comparison can fail).
  const std::vector<double> z = random_uniform(400, 5, 2.0, 0.0);
  const std::vector<double> first(z.begin(), z.begin() + 200), second(z.begin() + 200, z.end());
  OnlineSoftmax<> a, b;
  for (double v : first) a.add(v);
  for (double v : second) b.add(v);
  b.shift += 0.75;   // wrong: sums still relative to the old shift
  a.merge(b);
  const Reference r = reference(z, 1.0);
  EXPECT_GT(rel_err(a.log_sum_exp(), r.log_sum_exp), 1e-6);
  EXPECT_GT(std::fabs(a.entropy() - static_cast<double>(r.entropy)), 1e-6);
}

}  // namespace
