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

// Saturated work estimates (UINT64_MAX) are divided too: no wrap to 0.
TEST(IntMathTest, CeilDivDoesNotOverflowNearTheTop) {
  EXPECT_EQ(CeilDiv(kMax, 2), kMax / 2 + 1);
  EXPECT_EQ(CeilDiv(kMax, kMax), 1u);
  EXPECT_EQ(CeilDiv(kMax - 1, kMax), 1u);
  EXPECT_EQ(CeilDiv(kMax, 1), kMax);
}

// Agrees with the textbook (value + divisor - 1) / divisor wherever that
// does not overflow, which is what every replaced copy computed.
TEST(IntMathTest, CeilDivMatchesTheClassicFormulaInRange) {
  for (uint64_t divisor = 1; divisor <= 64; ++divisor) {
    for (uint64_t value = 0; value <= 1000; ++value) {
      ASSERT_EQ(CeilDiv(value, divisor), (value + divisor - 1) / divisor)
          << value << " / " << divisor;
      ASSERT_EQ(CeilAlign(value, divisor), (value + divisor - 1) / divisor * divisor);
      ASSERT_EQ(FloorAlign(value, divisor), value / divisor * divisor);
    }
  }
}

// Usable in constant expressions (tile-size constants are derived this way).
static_assert(CeilDiv(257, 256) == 2);
static_assert(CeilAlign(257, 256) == 512);

}  // namespace
}  // namespace npu::tiling
