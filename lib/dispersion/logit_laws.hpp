#pragma once
// Logit laws of the dispersion check (docs/science.md#dispersion-lemma), all on [m, M] = [0, δ] with δ = spread.
// Logits are a pure function of (law, spread, key, index), generated in any chunk by any thread:
//   uniform    e_i = δ·U_i, U_i = rng::uniform(key, i) ∈ [0, 1)
//   one-hot    e_0 = δ, every other e_i = 0 (the lemma's tight worst case; needs no randomness)
//   two-point  e_i = δ or 0 with probability 1/2 each (top bit of rng::bits(key, i)), except that
//              e_0 = δ and e_1 = 0 are fixed so the row contains both values and its spread is
//              exactly δ. This needs n ≥ 2; with n = 1 the row is the single logit δ.
//   gaussian   e_i = clip(δ/2 + (δ/4)·N_i, 0, δ), N_i = rng::normal(key, i) (about 4.6% clipped)
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sharp::dispersion {

enum class LogitLaw { Uniform, OneHot, TwoPoint, Gaussian };

// "uniform", "one-hot", "two-point", "gaussian"; anything else throws sharp::BadInput.
LogitLaw parse_logit_law(std::string_view name);
std::string_view logit_law_name(LogitLaw law);
// All names, in enum order.
const std::vector<std::string>& logit_law_names();

// out[j] = e_{first+j} for j < count, logits of a row of n. Throws sharp::BadInput when
// first + count > n, n == 0, or spread is negative or not finite.
void generate_logits(LogitLaw law, double spread, std::uint64_t n, std::uint64_t key, std::uint64_t first, double* out,
                     std::size_t count);

// out[j] = e_{first+j} · scale: bit-identical to generate_logits followed by a multiplication,
// in one pass (z = e·(1/θ)). The dispersion kernel does not store logits: it makes the same laws
// on SIMD lanes in registers (logit_lanes.hpp; tested against this form).
void generate_scaled_logits(LogitLaw law, double spread, std::uint64_t n, std::uint64_t key, std::uint64_t first,
                            double scale, double* out, std::size_t count);

}  // namespace sharp::dispersion
