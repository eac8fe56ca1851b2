// block_kernel(): the block kernels of the ISA chosen at start-up (core/simd_isa.hpp), looked up
// once per instantiation.
#include "core/simd_isa.hpp"
#include "normalisers/simd/softmax_block.hpp"

namespace sharp::norm {

template <class T, bool kStore, FloatLanes kLanes>
BlockKernel<T, kStore, kLanes> block_kernel() {
  static const BlockKernel<T, kStore, kLanes> kernel = active_simd_isa() == SimdIsa::Avx512
                                                           ? &isa_avx512::block<T, kStore, kLanes>
                                                           : &isa_avx2::block<T, kStore, kLanes>;
  return kernel;
}

template BlockKernel<double, false, FloatLanes::kWeighted> block_kernel<double, false, FloatLanes::kWeighted>();
template BlockKernel<double, true, FloatLanes::kWeighted> block_kernel<double, true, FloatLanes::kWeighted>();
template BlockKernel<float, false, FloatLanes::kTwelveDigits> block_kernel<float, false, FloatLanes::kTwelveDigits>();
template BlockKernel<float, true, FloatLanes::kTwelveDigits> block_kernel<float, true, FloatLanes::kTwelveDigits>();
template BlockKernel<float, false, FloatLanes::kSumOnly> block_kernel<float, false, FloatLanes::kSumOnly>();
template BlockKernel<float, true, FloatLanes::kSumOnly> block_kernel<float, true, FloatLanes::kSumOnly>();
template BlockKernel<float, false, FloatLanes::kWeighted> block_kernel<float, false, FloatLanes::kWeighted>();
template BlockKernel<float, true, FloatLanes::kWeighted> block_kernel<float, true, FloatLanes::kWeighted>();

}  // namespace sharp::norm
