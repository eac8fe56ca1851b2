// The max-retrieval data generator (docs/science.md#max-retrieval): determinism (a sample is a function of (key, index)),
// the features' layout, the label's definition and the statistics of priorities, classes, labels
// and the position of the maximum.
#include <cmath>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "max_retrieval/data.hpp"

namespace {

using namespace sharp::max_retrieval;

Batch<float> make(std::uint64_t key, std::int64_t step, std::size_t samples, std::size_t n, std::int64_t first = 0) {
  Batch<float> b;
  generate_batch(b, samples, n, first, [&](std::int64_t i) { return train_sample_key(key, step, i); });
  return b;
}

TEST(MaxRetrievalData, SampleIsAFunctionOfKeyStepAndIndexOnly) {
  const Batch<float> a = make(7, 3, 32, 16);
  const Batch<float> b = make(7, 3, 32, 16);
  EXPECT_EQ(a.items, b.items);
  EXPECT_EQ(a.labels, b.labels);
  // Samples 8..15 generated alone equal the same samples inside the batch.
  const Batch<float> part = make(7, 3, 8, 16, 8);
  EXPECT_TRUE(std::equal(part.items.begin(), part.items.end(), a.items.begin() + 8 * 16 * kItemFeatures));
  EXPECT_TRUE(std::equal(part.labels.begin(), part.labels.end(), a.labels.begin() + 8));
  // Another step, another seed: other data.
  EXPECT_NE(make(7, 4, 32, 16).items, a.items);
  EXPECT_NE(make(8, 3, 32, 16).items, a.items);
}

TEST(MaxRetrievalData, FeaturesAreAPriorityAndAOneHotClassAndTheLabelIsTheMaximumsClass) {
  const std::size_t n = 16;
  const Batch<float> b = make(1, 0, 64, n);
  for (std::size_t s = 0; s < b.size; ++s) {
    EXPECT_GE(b.query[s], 0.0f);
    EXPECT_LT(b.query[s], 1.0f);
    float best = -1.0f;
    std::size_t best_i = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const float* x = b.items.data() + (s * n + i) * kItemFeatures;
      EXPECT_GE(x[0], 0.0f);
      EXPECT_LE(x[0], 1.0f);
      int ones = 0;
      for (std::size_t c = 0; c < kClasses; ++c) {
        EXPECT_TRUE(x[1 + c] == 0.0f || x[1 + c] == 1.0f);
        ones += x[1 + c] == 1.0f;
      }
      EXPECT_EQ(ones, 1);
      if (x[0] > best) best = x[0], best_i = i;
    }
    EXPECT_EQ(std::size_t(b.argmax[s]), best_i);
    EXPECT_EQ(b.items[(s * n + best_i) * kItemFeatures + 1 + std::size_t(b.labels[s])], 1.0f);
  }
}

// Chi-square goodness of fit with k − 1 degrees of freedom; the bound is far in the tail
// (p ≈ 1e-6 for 9 dof at 45, for 15 dof at 56), and the test is deterministic.
double chi_square(const std::vector<double>& counts) {
  double total = 0.0, chi = 0.0;
  for (double c : counts) total += c;
  const double expected = total / double(counts.size());
  for (double c : counts) chi += (c - expected) * (c - expected) / expected;
  return chi;
}

TEST(MaxRetrievalData, PrioritiesClassesLabelsAndArgmaxAreUniform) {
  const std::size_t n = 16, samples = 20000;
  const Batch<float> b = make(42, 5, samples, n);
  std::vector<double> classes(kClasses, 0.0), labels(kClasses, 0.0), position(n, 0.0);
  double sum = 0.0, sum_sq = 0.0, max_sum = 0.0, query_sum = 0.0;
  for (std::size_t s = 0; s < samples; ++s) {
    for (std::size_t i = 0; i < n; ++i) {
      const float* x = b.items.data() + (s * n + i) * kItemFeatures;
      sum += x[0];
      sum_sq += double(x[0]) * x[0];
      for (std::size_t c = 0; c < kClasses; ++c) classes[c] += x[1 + c];
    }
    labels[std::size_t(b.labels[s])] += 1;
    position[std::size_t(b.argmax[s])] += 1;
    max_sum += b.items[(s * n + std::size_t(b.argmax[s])) * kItemFeatures];
    query_sum += b.query[s];
  }
  const double items = double(samples * n);
  EXPECT_NEAR(sum / items, 0.5, 4 * std::sqrt(1.0 / 12 / items));
  EXPECT_NEAR(sum_sq / items - std::pow(sum / items, 2), 1.0 / 12, 2e-3);
  EXPECT_NEAR(query_sum / samples, 0.5, 4 * std::sqrt(1.0 / 12 / samples));
  // The maximum of n uniforms has mean n / (n + 1) and variance n / ((n + 1)^2 (n + 2)).
  const double var_max = double(n) / ((n + 1.0) * (n + 1.0) * (n + 2.0));
  EXPECT_NEAR(max_sum / samples, double(n) / (n + 1.0), 4 * std::sqrt(var_max / samples));
  EXPECT_LT(chi_square(classes), 45.0);
  EXPECT_LT(chi_square(labels), 45.0);
  EXPECT_LT(chi_square(position), 56.0);
}

TEST(MaxRetrievalData, StepsAndIndicesGiveDistinctKeys) {
  std::set<std::uint64_t> keys;
  for (std::int64_t step = 0; step < 100; ++step)
    for (std::int64_t i = 0; i < 100; ++i) keys.insert(train_sample_key(3, step, i));
  EXPECT_EQ(keys.size(), 10000u);
}

}  // namespace
