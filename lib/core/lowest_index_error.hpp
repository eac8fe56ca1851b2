#pragma once
// The error of the lowest failing index of a parallel loop, whatever the schedule or thread count,
// so that a run that fails reports the same error every time. Each iteration catches everything and
// calls record(i); after the loop, rethrow_if_any() rethrows the kept error.
#include <cstddef>
#include <exception>
#include <limits>

namespace sharp {

class LowestIndexError {
 public:
  // Call inside catch (...): keeps the exception being handled if i is the lowest failure so far.
  void record(std::size_t i) {
#pragma omp critical(sharp_lowest_index_error)
    if (i < index_) {
      index_ = i;
      error_ = std::current_exception();
    }
  }
  bool any() const { return static_cast<bool>(error_); }
  std::size_t index() const { return index_; }  // valid when any()
  void rethrow_if_any() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::size_t index_ = std::numeric_limits<std::size_t>::max();
  std::exception_ptr error_;
};

}  // namespace sharp
