#pragma once
// Validation of one row of logits: masked entries are -inf; NaN and +inf are errors that must never
// turn into silent NaN output (docs/architecture.md#errors-and-exit-codes). Kernels detect problems cheaply inside their own passes and
// call throw_row_problem only then, to build a precise message (the driver adds the row number).
#include <cstddef>

namespace sharp::norm {

// Throws sharp::NumericError naming the first NaN or +inf entry (by column), or saying that every
// entry is masked. Returns normally if the row is valid.
template <class T>
void throw_row_problem(const T* z, std::size_t n);

// Max over the row and the number of unmasked (> -inf) entries; throws like throw_row_problem.
struct RowScan {
  double max;
  std::size_t unmasked;
};
template <class T>
RowScan scan_row(const T* z, std::size_t n);

}  // namespace sharp::norm
