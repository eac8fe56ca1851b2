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

RopeTable rope_table(std::size_t first, std::size_t count, std::size_t d_head) {
  RopeTable t;
  t.first = first;
  t.half = d_head / 2;
  t.cos.resize(count * t.half);
  t.sin.resize(count * t.half);
  for (std::size_t r = 0; r < count; ++r) {
    const double p = double(first + r);
    for (std::size_t i = 0; i < t.half; ++i) {
      const double angle = p * std::pow(1e4, -double(i) / double(t.half));
      t.cos[r * t.half + i] = std::cos(angle);
      t.sin[r * t.half + i] = std::sin(angle);
    }
  }
  return t;
}

template <class T>
void rope_rotate_row(T* x, std::size_t heads, std::size_t d_head, std::size_t position, const RopeTable& table,
                     bool inverse) {
  const std::size_t c = d_head / 2;
  const double* cs = table.cos.data() + (position - table.first) * c;
  const double* sn = table.sin.data() + (position - table.first) * c;
  const double sign = inverse ? -1.0 : 1.0;  // −sin θ exactly: a sign flip
  for (std::size_t h = 0; h < heads; ++h) {
    T* v = x + h * d_head;
    for (std::size_t i = 0; i < c; ++i) {
      const double a = double(v[i]), b = double(v[i + c]), s = sign * sn[i];
      v[i] = T(a * cs[i] - b * s);
      v[i + c] = T(b * cs[i] + a * s);
    }
  }
}

template <class T>
void rope_rotate(T* x, std::size_t rows, std::size_t ld, std::size_t heads, std::size_t d_head, std::size_t first,
                 bool inverse) {
  const RopeTable table = rope_table(first, rows, d_head);
  for (std::size_t r = 0; r < rows; ++r) rope_rotate_row(x + r * ld, heads, d_head, first + r, table, inverse);
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
template void rope_rotate_row<float>(float*, std::size_t, std::size_t, std::size_t, const RopeTable&, bool);
template void rope_rotate_row<double>(double*, std::size_t, std::size_t, std::size_t, const RopeTable&, bool);

}  // namespace sharp::transformer
