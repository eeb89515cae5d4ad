// Tests of server/tiling/small_divisors.h: the table's quotients and
// divisibility tests against the hardware's, on every divisor of the table
// (and beyond it) over the whole range of each operand.
#include "server/tiling/small_divisors.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace npu::tiling {
namespace {

// Dividends: the small ones, the ones around each multiple of every table
// divisor near 2^31 and 2^32, and a pseudo-random sweep of the rest.
std::vector<uint32_t> Dividends() {
  std::vector<uint32_t> out;
  for (uint32_t n = 0; n < 20000; ++n) out.push_back(n);
  for (uint64_t top : {uint64_t{1} << 31, uint64_t{1} << 32}) {
    for (uint64_t n = top - 20000; n < top; ++n) out.push_back(static_cast<uint32_t>(n));
  }
  uint64_t state = 12345;
  for (int i = 0; i < 50000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    out.push_back(static_cast<uint32_t>(state >> 32));
  }
  return out;
}

TEST(SmallDivisorsTest, UnsignedQuotientsAndDivisibilityMatchTheHardware) {
  const std::vector<uint32_t> dividends = Dividends();
  for (uint32_t d = 1; d <= kMaxTableDivisor + 3; ++d) {
    for (uint32_t n : dividends) {
      ASSERT_EQ(Quotient(n, d), n / d) << n << " / " << d;
      ASSERT_EQ(Divides(n, d), n % d == 0) << n << " % " << d;
    }
  }
}

TEST(SmallDivisorsTest, SignedOperandsTruncateAsTheOperatorsDo) {
  const int32_t values[] = {
      INT32_MIN, INT32_MIN + 1, -1000001, -129, -128,    -64,      -7, -1, 0, 1, 7,
      64,        127,           128,      129,  1000001, INT32_MAX};
  for (int32_t n : values) {
    for (int32_t d : values) {
      if (d == 0 || (n == INT32_MIN && d == -1)) continue;
      EXPECT_EQ(Quotient(n, d), n / d) << n << " / " << d;
      EXPECT_EQ(Divides(n, d), n % d == 0) << n << " % " << d;
    }
  }
}

}  // namespace
}  // namespace npu::tiling
