#include "emulator/gemm_kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace npu::emu {
namespace {

TEST(GemmKernelTest, IsExactFmaOrder) {
  // Every element is a chain of fused multiply-adds in k order.
  const uint64_t m = 13, n = 37, k = 70;
  std::vector<float> a(m * k), b(k * n), c(m * n, 0.5f), expected(m * n, 0.5f);
  for (uint64_t i = 0; i < a.size(); ++i) a[i] = std::sin(static_cast<float>(i));
  for (uint64_t i = 0; i < b.size(); ++i) b[i] = std::cos(static_cast<float>(i) * 0.7f);
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t j = 0; j < n; ++j) {
      for (uint64_t p = 0; p < k; ++p) {
        expected[i * n + j] = std::fma(a[i * k + p], b[p * n + j], expected[i * n + j]);
      }
    }
  }
  GemmAccumulate(m, n, k, a.data(), k, b.data(), n, c.data(), n);
  EXPECT_EQ(c, expected);
}

}  // namespace
}  // namespace npu::emu
