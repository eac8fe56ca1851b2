#pragma once
// Positional schemes (config.hpp) other than the learned table, which is a parameter tensor.
// Positions count from `first` (0 for a whole input, the cache length when decoding one token).
#include <cstddef>
#include <vector>

namespace sharp::transformer {

// x [rows, d] += PE[first + r]: PE[p, 2i] = sin(p·ω_i), PE[p, 2i+1] = cos(p·ω_i), ω_i = 10^4^(−2i/d).
template <class T>
void add_sinusoidal(T* x, std::size_t rows, std::size_t d, std::size_t first);

// x [rows, d]: x[r, 0] += (first + r)/64.
template <class T>
void add_index(T* x, std::size_t rows, std::size_t d, std::size_t first);
inline constexpr double kIndexDivisor = 64.0;

// Rotary embedding (rotate-half, base 10^4) of every head block of x, in place: x holds `rows` rows
// of stride ld, head h's block at columns h·d_head … (h+1)·d_head − 1. With c = d_head/2 and
// θ_i = p·10^4^(−i/c): (x_i, x_{i+c}) ← (x_i cos θ_i − x_{i+c} sin θ_i, x_{i+c} cos θ_i + x_i sin θ_i).
// inverse = true rotates by −θ (the transpose: the backward of the rotation).
template <class T>
void rope_rotate(T* x, std::size_t rows, std::size_t ld, std::size_t heads, std::size_t d_head, std::size_t first,
                 bool inverse = false);

// cos θ_i and sin θ_i of positions first … first + count − 1, [count, d_head/2] each, in double: a
// training step rotates every row of a batch, and its rows repeat the positions 0 … length − 1.
struct RopeTable {
  std::size_t first = 0, half = 0;
  std::vector<double> cos, sin;
};
RopeTable rope_table(std::size_t first, std::size_t count, std::size_t d_head);

// rope_rotate of one row at `position` (inside the table), by the table's angles.
template <class T>
void rope_rotate_row(T* x, std::size_t heads, std::size_t d_head, std::size_t position, const RopeTable& table,
                     bool inverse = false);

// ALiBi slopes [heads]: slope_h = 2^(−8(h+1)/heads). Head h adds −slope_h·(i − j) (causal) or
// −slope_h·|i − j| (encoder) to the scaled logit of query i and key j.
std::vector<double> alibi_slopes(std::size_t heads);

}  // namespace sharp::transformer
