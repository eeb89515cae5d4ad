#include "emulator/gemm_kernel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <thread>
#include <tuple>
#include <vector>

namespace npu::emu {
namespace {

struct Operands {
  uint64_t m, n, k;
  std::vector<float> a, b;
};

Operands Make(uint64_t m, uint64_t n, uint64_t k) {
  Operands o{m, n, k, std::vector<float>(m * k), std::vector<float>(k * n)};
  for (uint64_t i = 0; i < o.a.size(); ++i) o.a[i] = std::sin(static_cast<float>(i));
  for (uint64_t i = 0; i < o.b.size(); ++i) o.b[i] = std::cos(static_cast<float>(i) * 0.7f);
  return o;
}

class GemmBackendTest : public ::testing::TestWithParam<GemmBackend> {
 protected:
  void Gemm(uint64_t m, uint64_t n, uint64_t k, const float* a, uint64_t lda, const float* b,
            uint64_t ldb, float* c, uint64_t ldc) {
    GemmAccumulateWith(GetParam(), m, n, k, a, lda, b, ldb, c, ldc);
  }
};

// C += A * B within the fp32 bound of any summation order: for every
// element, |C - exact| <= k * u * sum |a| |b| (plus C's start, which is
// exact), with the exact value in double.
TEST_P(GemmBackendTest, AccumulatesIntoCWithinTheFp32Bound) {
  for (const auto& [m, n, k] : std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>{
           {13, 37, 70}, {1, 1, 1}, {256, 256, 512}, {3, 300, 2000}}) {
    const Operands o = Make(m, n, k);
    std::vector<float> c(m * n, 0.5f);
    Gemm(m, n, k, o.a.data(), k, o.b.data(), n, c.data(), n);
    const double u = std::ldexp(1.0, -24);
    for (uint64_t i = 0; i < m; ++i) {
      for (uint64_t j = 0; j < n; ++j) {
        double exact = 0.5, magnitude = 0.5;
        for (uint64_t p = 0; p < k; ++p) {
          const double term = double{o.a[i * k + p]} * o.b[p * n + j];
          exact += term;
          magnitude += std::fabs(term);
        }
        ASSERT_LE(std::fabs(c[i * n + j] - exact), (k + 1) * u * magnitude)
            << m << "x" << n << "x" << k << " at " << i << "," << j;
      }
    }
  }
}

// Strided operands: a block of A and B inside larger matrices, into a block
// of C, leaving the rest of C alone.
TEST_P(GemmBackendTest, ReadsAndWritesOnlyTheBlock) {
  const uint64_t lda = 50, ldb = 40, ldc = 30;
  const Operands big = Make(20, ldb, lda);
  std::vector<float> c(20 * ldc, 7.0f);
  Gemm(4, 5, 6, big.a.data() + 2 * lda + 3, lda, big.b.data() + 1 * ldb + 2, ldb,
       c.data() + 1 * ldc + 1, ldc);
  for (uint64_t i = 0; i < 20; ++i) {
    for (uint64_t j = 0; j < ldc; ++j) {
      const bool inside = i >= 1 && i < 5 && j >= 1 && j < 6;
      if (!inside) {
        EXPECT_EQ(c[i * ldc + j], 7.0f);
        continue;
      }
      double exact = 7.0;
      for (uint64_t p = 0; p < 6; ++p) {
        exact += double{big.a[(i - 1 + 2) * lda + 3 + p]} * big.b[(1 + p) * ldb + 2 + j - 1];
      }
      EXPECT_NEAR(c[i * ldc + j], exact, 1e-4);
    }
  }
}

// The same block gives the same bits on any host thread, and when several
// threads multiply at once: the emulator's results do not depend on its
// thread count.
TEST_P(GemmBackendTest, SameBitsOnEveryThread) {
  const Operands o = Make(128, 192, 640);
  std::vector<float> first(128 * 192, 0.0f);
  Gemm(128, 192, 640, o.a.data(), 640, o.b.data(), 192, first.data(), 192);
  std::vector<std::vector<float>> results(4, std::vector<float>(128 * 192, 0.0f));
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([this, &o, &result] {
      Gemm(128, 192, 640, o.a.data(), 640, o.b.data(), 192, result.data(), 192);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& result : results) EXPECT_EQ(result, first);
}

TEST_P(GemmBackendTest, EmptyProductsLeaveCAlone) {
  std::vector<float> c(4, 3.0f);
  const float one = 1.0f;
  Gemm(2, 2, 0, &one, 1, &one, 2, c.data(), 2);
  EXPECT_THAT(c, ::testing::Each(3.0f));
}

// A product into C that holds anything (NaN here) gives the bits of an
// accumulation into a zeroed C, edge tiles and K blocks past the first
// included, and writes only the block; an empty product writes zeros.
TEST_P(GemmBackendTest, ProductIsAnAccumulationFromZero) {
  for (const auto& [m, n, k] : std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>{
           {13, 37, 70}, {256, 256, 512}, {3, 300, 2000}}) {
    const Operands o = Make(m, n, k);
    const uint64_t ldc = n + 3;
    std::vector<float> zeroed(m * ldc, 0.0f);
    GemmAccumulateWith(GetParam(), m, n, k, o.a.data(), k, o.b.data(), n, zeroed.data(), ldc);
    std::vector<float> product(m * ldc, std::nanf(""));
    GemmProductWith(GetParam(), m, n, k, o.a.data(), k, o.b.data(), n, product.data(), ldc);
    for (uint64_t i = 0; i < m; ++i) {
      for (uint64_t j = 0; j < ldc; ++j) {
        if (j < n) {
          ASSERT_EQ(product[i * ldc + j], zeroed[i * ldc + j]) << m << "x" << n << "x" << k;
        } else {
          ASSERT_TRUE(std::isnan(product[i * ldc + j]));  // past the block: untouched
        }
      }
    }
  }
  std::vector<float> c(4, 3.0f);
  const float one = 1.0f;
  GemmProductWith(GetParam(), 2, 2, 0, &one, 1, &one, 2, c.data(), 2);
  EXPECT_THAT(c, ::testing::Each(0.0f));
}

INSTANTIATE_TEST_SUITE_P(Backends, GemmBackendTest,
                         ::testing::Values(GemmBackend::kAvx512, GemmBackend::kOpenBlas),
                         [](const ::testing::TestParamInfo<GemmBackend>& info) {
                           return info.param == GemmBackend::kAvx512 ? "Avx512" : "OpenBlas";
                         });

// The AVX-512 micro-kernel keeps the exact k-order chain of fused
// multiply-adds.
TEST(GemmKernelTest, Avx512IsExactFmaOrder) {
  if (!GemmHasAvx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const uint64_t m = 13, n = 37, k = 70;
  const Operands o = Make(m, n, k);
  std::vector<float> c(m * n, 0.5f), expected(m * n, 0.5f);
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t j = 0; j < n; ++j) {
      for (uint64_t p = 0; p < k; ++p) {
        expected[i * n + j] = std::fma(o.a[i * k + p], o.b[p * n + j], expected[i * n + j]);
      }
    }
  }
  GemmAccumulateWith(GemmBackend::kAvx512, m, n, k, o.a.data(), k, o.b.data(), n, c.data(), n);
  EXPECT_EQ(c, expected);
}

TEST(GemmKernelTest, NamesItsBackend) {
  EXPECT_EQ(DefaultGemmBackend(), GemmHasAvx512() ? GemmBackend::kAvx512 : GemmBackend::kOpenBlas);
  EXPECT_THAT(GemmBackendName(GemmBackend::kOpenBlas), ::testing::StartsWith("OpenBLAS "));
  EXPECT_EQ(GemmBackendName(), GemmBackendName(DefaultGemmBackend()));
}

}  // namespace
}  // namespace npu::emu
