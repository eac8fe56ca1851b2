#include "normalisers/input_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/errors.hpp"

namespace sharp::norm {

std::optional<std::string> logit_problem(double x) {
  if (std::isnan(x)) return "NaN logit (allowed: finite numbers, -inf for a masked entry)";
  if (x == std::numeric_limits<double>::infinity())
    return "+inf logit (allowed: finite numbers, -inf for a masked entry)";
  return std::nullopt;
}

template <class T>
void check_input_row(const T* z, std::size_t n, std::size_t line) {
  const std::string where = "line " + std::to_string(line);
  constexpr double kMasked = -std::numeric_limits<double>::infinity();
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(z[i]);
    if (auto problem = logit_problem(x)) throw BadInput(where + ", column " + std::to_string(i + 1) + ": " + *problem);
    if (x == kMasked) continue;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  if (n == 0) throw BadInput(where + ": empty row (expected logits)");
  if (hi == kMasked) throw BadInput(where + ": every entry is masked (-inf)");
  if (std::isinf(hi - lo)) {
    char text[96];
    std::snprintf(text, sizeof text, "max %.17g, min %.17g", hi, lo);
    throw BadInput(where + ": the logits span more than the largest double (" + text + "); shift or scale the row");
  }
}

template void check_input_row<double>(const double*, std::size_t, std::size_t);
template void check_input_row<float>(const float*, std::size_t, std::size_t);

}  // namespace sharp::norm
