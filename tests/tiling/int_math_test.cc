#include "server/tiling/int_math.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace npu::tiling {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

TEST(IntMathTest, CeilDivRoundsUp) {
  EXPECT_EQ(CeilDiv(0, 16), 0u);
  EXPECT_EQ(CeilDiv(1, 16), 1u);
  EXPECT_EQ(CeilDiv(16, 16), 1u);
  EXPECT_EQ(CeilDiv(17, 16), 2u);
  EXPECT_EQ(CeilDiv(4097, 1), 4097u);
}

TEST(IntMathTest, FloorDivRoundsDown) {
  EXPECT_EQ(FloorDiv(15, 16), 0u);
  EXPECT_EQ(FloorDiv(31, 16), 1u);
  EXPECT_EQ(FloorDiv(32, 16), 2u);
}

TEST(IntMathTest, AlignmentsRoundToMultiples) {
  EXPECT_EQ(CeilAlign(1, 16), 16u);
  EXPECT_EQ(CeilAlign(16, 16), 16u);
  EXPECT_EQ(CeilAlign(17, 16), 32u);
  EXPECT_EQ(CeilAlign(0, 16), 0u);
  EXPECT_EQ(FloorAlign(17, 16), 16u);
  EXPECT_EQ(FloorAlign(15, 16), 0u);
  EXPECT_EQ(FloorAlign(256, 128), 256u);
}

// The one rule for a zero divisor or alignment: the value comes back as is.
TEST(IntMathTest, ZeroDivisorLeavesValueUnchanged) {
  for (uint64_t value : {uint64_t{0}, uint64_t{1}, uint64_t{17}, kMax}) {
    EXPECT_EQ(CeilDiv(value, 0), value);
    EXPECT_EQ(FloorDiv(value, 0), value);
    EXPECT_EQ(CeilAlign(value, 0), value);
    EXPECT_EQ(FloorAlign(value, 0), value);
  }
}

// The largest operands a caller passes: products of two dimensions below 2^31
// divided by 32-bit tiling fields.
TEST(IntMathTest, CeilDivAtTheLargestOperandsCallersPass) {
  constexpr uint64_t kMaxDim = (uint64_t{1} << 31) - 1;
  constexpr uint64_t kMaxField = (uint64_t{1} << 32) - 1;
  EXPECT_EQ(CeilDiv(kMaxDim * kMaxDim, kMaxField), (kMaxDim * kMaxDim - 1) / kMaxField + 1);
  EXPECT_EQ(CeilDiv(kMaxDim * kMaxDim, 1), kMaxDim * kMaxDim);
  EXPECT_EQ(CeilDiv(kMaxDim, kMaxField), 1u);
  EXPECT_EQ(CeilAlign(kMaxDim, 256), uint64_t{1} << 31);
}

// Agrees with the exact quotient rounded up (q + (r != 0)) over a sweep.
TEST(IntMathTest, CeilDivRoundsTheExactQuotientUp) {
  for (uint64_t divisor = 1; divisor <= 64; ++divisor) {
    for (uint64_t value = 0; value <= 1000; ++value) {
      const uint64_t rounded_up = value / divisor + (value % divisor != 0 ? 1 : 0);
      ASSERT_EQ(CeilDiv(value, divisor), rounded_up) << value << " / " << divisor;
      ASSERT_EQ(CeilAlign(value, divisor), rounded_up * divisor);
      ASSERT_EQ(FloorAlign(value, divisor), value / divisor * divisor);
    }
  }
}

// Usable in constant expressions (tile-size constants are derived this way).
static_assert(CeilDiv(257, 256) == 2);
static_assert(CeilAlign(257, 256) == 512);

}  // namespace
}  // namespace npu::tiling
