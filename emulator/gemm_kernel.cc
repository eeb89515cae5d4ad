#include "emulator/gemm_kernel.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "server/tiling/int_math.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace npu::emu {
namespace {

// Micro-tile of 12 rows x 32 columns: 24 zmm accumulators, two B vectors and
// one broadcast stay within the 32 AVX-512 registers. Blocking: a KC-deep
// slice of B (KC x NC fp32 = 256 KiB) stays in L2 while MC x KC of A
// (96 KiB) is packed and streamed through it.
constexpr uint64_t kMr = 12;
constexpr uint64_t kNr = 32;
constexpr uint64_t kKc = 256;
constexpr uint64_t kMc = 96;
constexpr uint64_t kNc = 256;

// Packs rows [0, mr) x k [0, kc) of A as kc groups of kMr values (zero rows
// past mr).
void PackA(uint64_t mr, uint64_t kc, const float* a, uint64_t lda, float* out) {
  for (uint64_t p = 0; p < kc; ++p) {
    for (uint64_t r = 0; r < kMr; ++r) out[p * kMr + r] = r < mr ? a[r * lda + p] : 0.0f;
  }
}

// Packs k [0, kc) x columns [0, nr) of B as kc groups of kNr values.
void PackB(uint64_t nr, uint64_t kc, const float* b, uint64_t ldb, float* out) {
  for (uint64_t p = 0; p < kc; ++p) {
    const float* row = b + p * ldb;
    float* dst = out + p * kNr;
    std::memcpy(dst, row, nr * sizeof(float));
    for (uint64_t c = nr; c < kNr; ++c) dst[c] = 0.0f;
  }
}

#if defined(__x86_64__)
// `overwrite`: the tile starts from +0 instead of C's values (the same
// fused multiply-adds as from a zeroed C, without reading it).
__attribute__((target("avx512f,fma"))) void MicroKernelAvx512(uint64_t kc, const float* ap,
                                                              const float* bp, float* c,
                                                              uint64_t ldc, bool overwrite) {
  __m512 acc[kMr][2];
#pragma GCC unroll 12
  for (uint64_t r = 0; r < kMr; ++r) {
    acc[r][0] = overwrite ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc);
    acc[r][1] = overwrite ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + 16);
  }
  for (uint64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(bp);
    const __m512 b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 12
    for (uint64_t r = 0; r < kMr; ++r) {
      const __m512 a = _mm512_set1_ps(ap[r]);
      acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
    }
    ap += kMr;
    bp += kNr;
  }
#pragma GCC unroll 12
  for (uint64_t r = 0; r < kMr; ++r) {
    _mm512_storeu_ps(c + r * ldc, acc[r][0]);
    _mm512_storeu_ps(c + r * ldc + 16, acc[r][1]);
  }
}
#endif

bool DetectAvx512() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// 64-byte aligned scratch per host thread.
struct Scratch {
  std::vector<float> storage;
  float* Get(size_t floats) {
    if (storage.size() < floats + 16) storage.resize(floats + 16);
    auto addr = reinterpret_cast<uintptr_t>(storage.data());
    return reinterpret_cast<float*>((addr + 63) & ~uintptr_t{63});
  }
};

#if defined(__x86_64__)
// The blocked product with the AVX-512 micro-kernel: every element of C is a
// chain of fused multiply-adds in k order.
void BlockedAvx512(uint64_t m, uint64_t n, uint64_t k, const float* a, uint64_t lda, const float* b,
                   uint64_t ldb, float* c, uint64_t ldc, bool overwrite) {
  thread_local Scratch a_scratch, b_scratch;
  float edge[kMr * kNr] __attribute__((aligned(64)));
  for (uint64_t kk = 0; kk < k; kk += kKc) {
    const uint64_t kc = std::min(kKc, k - kk);
    // Only the first K block may start from zero; the later ones add to it.
    const bool fresh = overwrite && kk == 0;
    for (uint64_t jj = 0; jj < n; jj += kNc) {
      const uint64_t nc = std::min(kNc, n - jj);
      const uint64_t n_panels = tiling::CeilDiv(nc, kNr);
      float* bp = b_scratch.Get(n_panels * kNr * kc);
      for (uint64_t jp = 0; jp < n_panels; ++jp) {
        PackB(std::min(kNr, nc - jp * kNr), kc, b + kk * ldb + jj + jp * kNr, ldb,
              bp + jp * kNr * kc);
      }
      for (uint64_t ii = 0; ii < m; ii += kMc) {
        const uint64_t mc = std::min(kMc, m - ii);
        const uint64_t m_panels = tiling::CeilDiv(mc, kMr);
        float* ap = a_scratch.Get(m_panels * kMr * kc);
        for (uint64_t ip = 0; ip < m_panels; ++ip) {
          PackA(std::min(kMr, mc - ip * kMr), kc, a + (ii + ip * kMr) * lda + kk, lda,
                ap + ip * kMr * kc);
        }
        for (uint64_t jp = 0; jp < n_panels; ++jp) {
          const uint64_t nr = std::min(kNr, nc - jp * kNr);
          for (uint64_t ip = 0; ip < m_panels; ++ip) {
            const uint64_t mr = std::min(kMr, mc - ip * kMr);
            float* ct = c + (ii + ip * kMr) * ldc + jj + jp * kNr;
            if (mr == kMr && nr == kNr) {
              MicroKernelAvx512(kc, ap + ip * kMr * kc, bp + jp * kNr * kc, ct, ldc, fresh);
              continue;
            }
            // Edge tile: run on a padded copy, write back the valid part.
            for (uint64_t r = 0; r < kMr; ++r) {
              for (uint64_t j = 0; j < kNr; ++j) {
                edge[r * kNr + j] = (!fresh && r < mr && j < nr) ? ct[r * ldc + j] : 0.0f;
              }
            }
            MicroKernelAvx512(kc, ap + ip * kMr * kc, bp + jp * kNr * kc, edge, kNr, false);
            for (uint64_t r = 0; r < mr; ++r) {
              std::memcpy(ct + r * ldc, edge + r * kNr, nr * sizeof(float));
            }
          }
        }
      }
    }
  }
}
#endif

// OpenBLAS's thread count is process-wide, and Debian's OpenBLAS (the
// pthread build) starts its worker threads while the library loads, before
// main(). Both are settled here, at static initialisation, still
// single-threaded:
// - one thread, so that a call runs on the calling emulator worker only
//   and never fans out behind (or contends with) the other workers;
// - the loader-started threads stopped: they would take process signals
//   the server's threads block and wait for (a SIGTERM meant for the drain
//   would kill the process instead). OpenBLAS starts them again only for a
//   call with more than one thread, from the calling thread, whose signal
//   mask they then inherit. blas_thread_shutdown_ is the exported function
//   OpenBLAS itself runs around fork().
extern "C" int blas_thread_shutdown_(void);
[[maybe_unused]] const bool kOpenBlasOnCallingThread = [] {
  openblas_set_num_threads(1);
  blas_thread_shutdown_();
  return true;
}();

void OpenBlas(uint64_t m, uint64_t n, uint64_t k, const float* a, uint64_t lda, const float* b,
              uint64_t ldb, float* c, uint64_t ldc, bool overwrite) {
  // BLAS takes int sizes: every extent and stride here is a problem dim or a
  // part of one, at most 2147483647 (validation's limit).
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb),
              overwrite ? 0.0f : 1.0f, c, static_cast<int>(ldc));
}

}  // namespace

bool GemmHasAvx512() {
  static const bool has = DetectAvx512();
  return has;
}

GemmBackend DefaultGemmBackend() {
  const char* forced = std::getenv("NPU_EMULATOR_GEMM");
  if (forced != nullptr && std::strcmp(forced, "openblas") == 0) return GemmBackend::kOpenBlas;
  return GemmHasAvx512() ? GemmBackend::kAvx512 : GemmBackend::kOpenBlas;
}

namespace {

void Gemm(GemmBackend backend, uint64_t m, uint64_t n, uint64_t k, const float* a, uint64_t lda,
          const float* b, uint64_t ldb, float* c, uint64_t ldc, bool overwrite) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (overwrite) {
      for (uint64_t r = 0; r < m; ++r) std::fill(c + r * ldc, c + r * ldc + n, 0.0f);
    }
    return;
  }
#if defined(__x86_64__)
  if (backend == GemmBackend::kAvx512 && GemmHasAvx512()) {
    BlockedAvx512(m, n, k, a, lda, b, ldb, c, ldc, overwrite);
    return;
  }
#endif
  OpenBlas(m, n, k, a, lda, b, ldb, c, ldc, overwrite);
}

GemmBackend ProcessBackend() {
  static const GemmBackend backend = DefaultGemmBackend();
  return backend;
}

}  // namespace

void GemmAccumulateWith(GemmBackend backend, uint64_t m, uint64_t n, uint64_t k, const float* a,
                        uint64_t lda, const float* b, uint64_t ldb, float* c, uint64_t ldc) {
  Gemm(backend, m, n, k, a, lda, b, ldb, c, ldc, /*overwrite=*/false);
}

void GemmProductWith(GemmBackend backend, uint64_t m, uint64_t n, uint64_t k, const float* a,
                     uint64_t lda, const float* b, uint64_t ldb, float* c, uint64_t ldc) {
  Gemm(backend, m, n, k, a, lda, b, ldb, c, ldc, /*overwrite=*/true);
}

void GemmAccumulate(uint64_t m, uint64_t n, uint64_t k, const float* a, uint64_t lda,
                    const float* b, uint64_t ldb, float* c, uint64_t ldc) {
  Gemm(ProcessBackend(), m, n, k, a, lda, b, ldb, c, ldc, /*overwrite=*/false);
}

void GemmProduct(uint64_t m, uint64_t n, uint64_t k, const float* a, uint64_t lda, const float* b,
                 uint64_t ldb, float* c, uint64_t ldc) {
  Gemm(ProcessBackend(), m, n, k, a, lda, b, ldb, c, ldc, /*overwrite=*/true);
}

std::string GemmBackendName(GemmBackend backend) {
  if (backend == GemmBackend::kAvx512 && GemmHasAvx512()) return "AVX-512 micro-kernel";
  const char* core = openblas_get_corename();
  return std::string("OpenBLAS ") + (core != nullptr ? core : "unknown");
}

std::string GemmBackendName() { return GemmBackendName(DefaultGemmBackend()); }

}  // namespace npu::emu
