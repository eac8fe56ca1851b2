#include "normalisers/row_checks.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/errors.hpp"
#include "normalisers/simd_io.hpp"

namespace sharp::norm {

template <class T>
void throw_row_problem(const T* z, std::size_t n) {
  std::size_t unmasked = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(z[i]);
    if (std::isnan(x)) throw NumericError("NaN logit at column " + std::to_string(i));
    if (x == std::numeric_limits<double>::infinity()) {
      throw NumericError("+inf logit at column " + std::to_string(i) + " (masked entries are -inf)");
    }
    unmasked += x > -std::numeric_limits<double>::infinity();
  }
  if (n == 0) throw NumericError("empty row");
  if (unmasked == 0) throw NumericError("every entry is masked (-inf)");
}

template <class T>
RowScan scan_row(const T* z, std::size_t n) {
  using simd::batch_d;
  constexpr std::size_t L = simd::kLanes;
  const batch_d ninf(-std::numeric_limits<double>::infinity()), one(1.0), zero(0.0);
  // Two independent accumulators of each kind, so the loop is not bound by the add latency.
  batch_d mx0(ninf), mx1(ninf), c0(zero), c1(zero);
  auto bad = xsimd::isnan(zero);  // all false
  auto step = [&](batch_d x, batch_d& mx, batch_d& count) {
    bad = bad | xsimd::isnan(x);  // not x != x: xsimd 8.1 compares with _CMP_NEQ_OQ (false for NaN)
    mx = xsimd::max(mx, x);
    count += xsimd::select(x > ninf, one, zero);
  };
  std::size_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    step(simd::load_batch(z + i), mx0, c0);
    step(simd::load_batch(z + i + L), mx1, c1);
  }
  for (; i + L <= n; i += L) step(simd::load_batch(z + i), mx0, c0);
  if (i < n) step(simd::load_partial(z + i, n - i, -std::numeric_limits<double>::infinity()), mx1, c1);
  const double m = simd::horizontal_max(xsimd::max(mx0, mx1));
  const double unmasked = xsimd::hadd(c0 + c1);  // exact: whole numbers below 2^53
  if (xsimd::any(bad) || m == std::numeric_limits<double>::infinity() || unmasked == 0.0 || n == 0) {
    throw_row_problem(z, n);
  }
  return {m, static_cast<std::size_t>(unmasked)};
}

template void throw_row_problem<double>(const double*, std::size_t);
template void throw_row_problem<float>(const float*, std::size_t);
template RowScan scan_row<double>(const double*, std::size_t);
template RowScan scan_row<float>(const float*, std::size_t);

}  // namespace sharp::norm
