#pragma once
// The hot part of the softmax-family row kernels — one block of up to kSoftmaxBlock entries — built
// twice, for AVX2/FMA (x86-64-v3) and for AVX-512 (x86-64-v4), and chosen at start-up from the CPU or
// SHARP_SIMD (core/simd_isa.hpp). Both builds give the same bits (docs/architecture.md#determinism):
// the elementwise math is the same operations in both widths, and the sums run over 8 fixed partial
// sums (entry i goes to partial i mod 8, in index order; the partials are added in one fixed order),
// whatever the lanes of a register. softmax_block_impl.hpp holds the code; softmax_block_avx2.cpp and
// softmax_block_avx512.cpp compile it for each ISA.
#include <cstddef>

#include "core/online_softmax.hpp"

namespace sharp::norm {

// One block's statistics relative to its reference (core/online_softmax.hpp with scale beta), NaN or
// +inf seen, and the 2^stored_log2 its stored terms carry (the fused shift's residual).
struct BlockResult {
  OnlineSoftmax<> stats;
  bool bad = false;
  double stored_log2 = 0.0;
};

// How a float row's blocks run: in double lanes with an exp to 12 digits (kTwelveDigits, adaptive
// temperature's first pass), or in float lanes with the weighted sum (statistics) or without it
// (weights only). Double rows ignore it (double lanes, the full exp).
//
// Why adaptive's first pass needs 12 digits (docs/science.md#adaptive-temperature): the entropy H at
// beta = 1 sets beta(H), and an error dbeta moves weight k by dbeta |z_k − E_p z| relative. Float
// weights above FLT_MIN lie within 88/beta of the max (beta ≥ 1), so half a float ulp (3e-8) over
// |z_k − E_p z| ≤ 90 asks dbeta ≤ 3e-10, and with |beta'(H)| ≤ 2.53 (its largest, at the upper
// kink H = 5.94) dH ≤ 1.2e-10. Relative errors e_k of the terms move H by
// sum_k p_k e_k (1 − (u_k − E_p u)), u_k the log of term k: at most max|e| (1 + sd_p(u)). Float
// lanes (|e| ~ 1e-7) put tail weights tens of ulp off (41 measured); the 12-digit exp (|e| ≤ 6e-13)
// keeps dH below 3e-11 for sd_p(u) up to 40 (tests/unit/test_softmax_float.cpp).
enum class FloatLanes { kTwelveDigits, kSumOnly, kWeighted };

// The terms exp(beta (z − shift)) of z[0, len) (stored into p when kStore) and their statistics.
template <class T, bool kStore, FloatLanes kLanes>
using BlockKernel = BlockResult (*)(const T* z, T* p, std::size_t len, double beta);

namespace isa_avx2 {
template <class T, bool kStore, FloatLanes kLanes>
BlockResult block(const T* z, T* p, std::size_t len, double beta);
}
namespace isa_avx512 {
template <class T, bool kStore, FloatLanes kLanes>
BlockResult block(const T* z, T* p, std::size_t len, double beta);
}

// The build of the ISA chosen at start-up.
template <class T, bool kStore, FloatLanes kLanes>
BlockKernel<T, kStore, kLanes> block_kernel();

}  // namespace sharp::norm
