// The host arithmetic behind the cube: an fp32 matrix multiply-accumulate.
//
// `GemmAccumulate()` adds A * B into C in fp32, starting from the value C
// holds (the L0C accumulator of one K step). Two back ends, picked once per
// process by the CPU:
// - on a CPU with AVX-512, the emulator's own blocked micro-kernel: every
//   element of C is a chain of fused multiply-adds in k order. Measured
//   against OpenBLAS on such hosts (bench/RESULTS.md) it is as fast as
//   OpenBLAS's AVX-512 kernels, and much faster where Debian's OpenBLAS
//   0.3.21 does not know the CPU model and falls back to its generic
//   (Prescott) kernels, as on the 2-vCPU build hosts;
// - everywhere else, OpenBLAS's sgemm (Debian's DYNAMIC_ARCH build picks
//   its kernel for the CPU at run time: AVX2 / FMA on Haswell or Zen, SSE,
//   other architectures), called on one thread.
// Every call runs on the calling thread only. The emulator's workers run the
// cube units in parallel, each unit on one worker, so an element of C is
// computed by the same code in the same order whatever the host thread
// count: results are identical across thread counts on one host. Across
// back ends the summation order inside one K step differs; the fp32 error
// bound against fp64 is the same for every order.
#ifndef NPU_EMULATOR_GEMM_KERNEL_H_
#define NPU_EMULATOR_GEMM_KERNEL_H_

#include <cstdint>
#include <string>

namespace npu::emu {

enum class GemmBackend { kAvx512, kOpenBlas };

// C[m x n] += A[m x k] * B[k x n]; row-major with the given row strides,
// on the process's back end (DefaultGemmBackend()).
void GemmAccumulate(uint64_t m, uint64_t n, uint64_t k, const float* a, uint64_t lda,
                    const float* b, uint64_t ldb, float* c, uint64_t ldc);

// The same on a given back end (kAvx512 falls back to OpenBLAS on a CPU
// without AVX-512); for tests and benchmarks.
void GemmAccumulateWith(GemmBackend backend, uint64_t m, uint64_t n, uint64_t k, const float* a,
                        uint64_t lda, const float* b, uint64_t ldb, float* c, uint64_t ldc);

// C[m x n] = A[m x k] * B[k x n]: the same fp32 chains as GemmAccumulate()
// on a zeroed C, without zeroing or reading C first (a fresh L0C
// accumulator).
void GemmProduct(uint64_t m, uint64_t n, uint64_t k, const float* a, uint64_t lda, const float* b,
                 uint64_t ldb, float* c, uint64_t ldc);
void GemmProductWith(GemmBackend backend, uint64_t m, uint64_t n, uint64_t k, const float* a,
                     uint64_t lda, const float* b, uint64_t ldb, float* c, uint64_t ldc);

// Whether this CPU runs the AVX-512 micro-kernel (AVX-512F and FMA).
bool GemmHasAvx512();
// kAvx512 when the CPU has it, else kOpenBlas; the environment variable
// NPU_EMULATOR_GEMM=openblas picks OpenBLAS on any CPU (for example with
// OPENBLAS_CORETYPE naming the kernel).
GemmBackend DefaultGemmBackend();

// "AVX-512 micro-kernel", or "OpenBLAS <the kernel it picked>" (for example
// "OpenBLAS Haswell"; OPENBLAS_CORETYPE overrides OpenBLAS's pick).
std::string GemmBackendName(GemmBackend backend);
std::string GemmBackendName();

}  // namespace npu::emu

#endif  // NPU_EMULATOR_GEMM_KERNEL_H_
