// The host arithmetic behind the cube: an fp32 matrix multiply-accumulate.
//
// `GemmAccumulate()` adds A * B into C so that every element of C is
// accumulated by fused multiply-add in increasing k order, starting from the
// value C holds. The order is fixed by the element, not by the blocking or
// the host thread, so results are bit-identical whatever the thread count or
// CPU; an AVX-512 micro-kernel is used when the CPU has it, and a scalar
// std::fma loop (same roundings) otherwise.
#ifndef NPU_EMULATOR_GEMM_KERNEL_H_
#define NPU_EMULATOR_GEMM_KERNEL_H_

#include <cstdint>

namespace npu::emu {

// C[m x n] += A[m x k] * B[k x n]; row-major with the given row strides.
void GemmAccumulate(uint64_t m, uint64_t n, uint64_t k, const float* a, uint64_t lda,
                    const float* b, uint64_t ldb, float* c, uint64_t ldc);

// True when the AVX-512 micro-kernel is in use on this host.
bool GemmUsesAvx512();

}  // namespace npu::emu

#endif  // NPU_EMULATOR_GEMM_KERNEL_H_
