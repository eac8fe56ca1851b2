#pragma once
// Neumaier's compensated sum: `sum + comp` carries the exact sum of the added values to O(eps²)
// per step, so a long sequence of additions (one per sub-chunk of a 2^30 row, or a finite
// difference of two nearly equal sums) keeps a relative
// error of a few ulp instead of growing like n·eps.
#include <cmath>

namespace sharp {

struct CompensatedSum {
  double sum = 0.0;
  double comp = 0.0;  // running correction

  void add(double x) {
    const double t = sum + x;
    comp += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  // Adds another compensated sum (the later part of the same sequence).
  void merge(const CompensatedSum& later) {
    add(later.sum);
    comp += later.comp;
  }
  double total() const { return sum + comp; }
};

}  // namespace sharp
