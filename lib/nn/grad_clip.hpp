#pragma once
// Gradient clipping by global norm: if ‖g‖₂ > max_norm, g ← g · max_norm/‖g‖₂.
// The norm is accumulated in double in index order (deterministic).
#include <cstddef>

namespace sharp::nn {

double global_norm(const float* g, std::size_t size);

// Returns the norm before clipping; max_norm <= 0 disables clipping (the norm is still returned).
// Throws sharp::NumericError when the norm is not finite (a NaN or inf gradient).
double clip_by_global_norm(float* g, std::size_t size, double max_norm);

}  // namespace sharp::nn
