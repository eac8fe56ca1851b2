// LowestIndexError (core/lowest_index_error.hpp): a parallel loop with several failing iterations
// reports the lowest one's error, on every run and for any schedule; no failure, nothing thrown.
#include <omp.h>

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "core/lowest_index_error.hpp"

namespace {

void run_loop(sharp::LowestIndexError& failure, std::size_t count, std::size_t bad_a, std::size_t bad_b) {
#pragma omp parallel for num_threads(2) schedule(dynamic, 1)
  for (std::size_t i = 0; i < count; ++i) {
    try {
      if (i == bad_a || i == bad_b) throw std::runtime_error("failed at " + std::to_string(i));
    } catch (...) {
      failure.record(i);
    }
  }
}

TEST(LowestIndexError, KeepsTheLowestFailingIndex) {
  for (int run = 0; run < 20; ++run) {
    sharp::LowestIndexError failure;
    run_loop(failure, 1000, 900, 37);   // the higher index is often caught first
    ASSERT_TRUE(failure.any());
    EXPECT_EQ(failure.index(), 37u);
    try {
      failure.rethrow_if_any();
      FAIL() << "nothing rethrown";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "failed at 37");
    }
  }
}

TEST(LowestIndexError, NoFailureNothingThrown) {
  sharp::LowestIndexError failure;
  run_loop(failure, 100, 1000, 1000);
  EXPECT_FALSE(failure.any());
  EXPECT_NO_THROW(failure.rethrow_if_any());
}

}  // namespace
