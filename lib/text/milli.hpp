#pragma once
// Numbers of the CLRS-Text format as integer thousandths ("milli"): CLRS's sampler truncates every
// drawn value to 3 decimals and runs the algorithm on those, so the values are exactly k/1000 and
// integers hold them without rounding (comparisons and Kadane's sums are exact).
#include <cstdint>
#include <string>
#include <string_view>

namespace sharp::text {

using Milli = std::int32_t;

// trunc(x·1000) toward zero, as numpy's trunc; -0 becomes 0 (an integer has no -0).
Milli truncate_to_milli(double x);
// k/1000 with at most 3 decimals, trailing zeros and a trailing point stripped: 549 -> "0.549",
// 90 -> "0.09", 0 -> "0", -153 -> "-0.153", 2000 -> "2".
std::string format_milli(Milli k);
// Inverse of format_milli for user input such as "0.077" or "-0.5"; throws BadInput for anything
// else (more than 3 decimals, not a number, |x| >= 1000).
Milli parse_milli(std::string_view text);

}  // namespace sharp::text
