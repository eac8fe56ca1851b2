#pragma once
// Sets the OpenMP thread count of the calling task for a scope (restored after). Why: OpenBLAS's
// OpenMP build runs serially inside an active parallel region, but inside a one-thread region (not
// "active") or outside any region it uses omp_get_max_threads() threads, so code that owns the
// threads itself sets the count it means (1 for "BLAS serial here").
#include <omp.h>

namespace sharp::nn {

class OmpThreadsScope {
 public:
  explicit OmpThreadsScope(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~OmpThreadsScope() { omp_set_num_threads(saved_); }
  OmpThreadsScope(const OmpThreadsScope&) = delete;
  OmpThreadsScope& operator=(const OmpThreadsScope&) = delete;

 private:
  int saved_;
};

}  // namespace sharp::nn
