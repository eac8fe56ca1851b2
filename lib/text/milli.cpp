#include "text/milli.hpp"

#include <cmath>

#include "core/errors.hpp"

namespace sharp::text {

Milli truncate_to_milli(double x) {
  if (!std::isfinite(x) || std::fabs(x) >= 1e6) throw NumericError("truncate_to_milli: value out of range");
  return static_cast<Milli>(std::trunc(x * 1000.0));
}

std::string format_milli(Milli k) {
  std::string s;
  if (k < 0) s += '-';
  const std::int64_t a = k < 0 ? -static_cast<std::int64_t>(k) : k;
  s += std::to_string(a / 1000);
  std::int64_t frac = a % 1000;
  if (frac != 0) {
    std::string digits = {static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
    while (digits.back() == '0') digits.pop_back();
    s += '.' + digits;
  }
  return s;
}

Milli parse_milli(std::string_view text) {
  const std::string original(text);
  auto bad = [&] {
    return BadInput("'" + original + "' is not a number with at most 3 decimals (e.g. 0.077, -0.5, 0)");
  };
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) throw bad();
  std::int64_t whole = 0, frac = 0;
  std::size_t i = 0, int_digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++int_digits) {
    whole = whole * 10 + (text[i] - '0');
    if (whole >= 1000) throw bad();
  }
  std::size_t frac_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++frac_digits) {
      if (frac_digits == 3) throw bad();
      frac = frac * 10 + (text[i] - '0');
    }
  }
  if (i != text.size() || int_digits + frac_digits == 0) throw bad();
  for (std::size_t d = frac_digits; d < 3; ++d) frac *= 10;
  const std::int64_t k = whole * 1000 + frac;
  return static_cast<Milli>(negative ? -k : k);
}

}  // namespace sharp::text
