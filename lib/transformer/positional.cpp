#include "transformer/positional.hpp"

#include <cmath>

namespace sharp::transformer {

template <class T>
void add_sinusoidal(T* x, std::size_t rows, std::size_t d, std::size_t first) {
  for (std::size_t r = 0; r < rows; ++r) {
    const double p = double(first + r);
    for (std::size_t i = 0; 2 * i < d; ++i) {
      const double angle = p * std::pow(1e4, -double(2 * i) / double(d));
      x[r * d + 2 * i] += T(std::sin(angle));
      if (2 * i + 1 < d) x[r * d + 2 * i + 1] += T(std::cos(angle));
    }
  }
}

template <class T>
void add_index(T* x, std::size_t rows, std::size_t d, std::size_t first) {
  for (std::size_t r = 0; r < rows; ++r) x[r * d] += T(double(first + r) / kIndexDivisor);
}

template <class T>
void rope_rotate(T* x, std::size_t rows, std::size_t ld, std::size_t heads, std::size_t d_head, std::size_t first,
                 bool inverse) {
  const std::size_t c = d_head / 2;
  std::vector<double> cs(c), sn(c);
  for (std::size_t r = 0; r < rows; ++r) {
    const double p = double(first + r);
    for (std::size_t i = 0; i < c; ++i) {
      const double angle = p * std::pow(1e4, -double(i) / double(c));
      cs[i] = std::cos(angle);
      sn[i] = inverse ? -std::sin(angle) : std::sin(angle);
    }
    for (std::size_t h = 0; h < heads; ++h) {
      T* v = x + r * ld + h * d_head;
      for (std::size_t i = 0; i < c; ++i) {
        const double a = double(v[i]), b = double(v[i + c]);
        v[i] = T(a * cs[i] - b * sn[i]);
        v[i + c] = T(b * cs[i] + a * sn[i]);
      }
    }
  }
}

std::vector<double> alibi_slopes(std::size_t heads) {
  std::vector<double> s(heads);
  for (std::size_t h = 0; h < heads; ++h) s[h] = std::exp2(-8.0 * double(h + 1) / double(heads));
  return s;
}

template void add_sinusoidal<float>(float*, std::size_t, std::size_t, std::size_t);
template void add_sinusoidal<double>(double*, std::size_t, std::size_t, std::size_t);
template void add_index<float>(float*, std::size_t, std::size_t, std::size_t);
template void add_index<double>(double*, std::size_t, std::size_t, std::size_t);
template void rope_rotate<float>(float*, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t, bool);
template void rope_rotate<double>(double*, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t, bool);

}  // namespace sharp::transformer
