#include "emulator/numerics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace npu::emu {
namespace {

TEST(NumericsTest, ConversionsRoundToNearestEven) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(FloatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(HalfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(FloatToBFloat16Bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie to even
  EXPECT_EQ(FloatToBFloat16Bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(RoundToHf32(1.0f + std::ldexp(1.0f, -20)), 1.0f);
}

// Values that exercise every rounding path: ties, subnormals of each 16-bit
// type, overflow, infinities and NaN.
std::vector<float> EdgeValues() {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               -2.5f,
                               65504.0f,
                               65520.0f,
                               1e-8f,
                               -3e-5f,
                               std::ldexp(1.0f, -24),
                               std::ldexp(1.0f, -25),
                               1.0f + std::ldexp(1.0f, -11),
                               1.0f + 3 * std::ldexp(1.0f, -11),
                               1.0f + std::ldexp(1.0f, -8),
                               3.4e38f,
                               1e-40f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
  for (int i = 0; i < 200; ++i)
    values.push_back(std::ldexp(static_cast<float>(i) - 99.7f, i % 40 - 20));
  return values;
}

// A run conversion is element by element the same as Get() / Set().
TEST(NumericsTest, RunsConvertLikeSingleElements) {
  const std::vector<float> values = EdgeValues();
  for (tiling::DataType dtype :
       {tiling::DataType::kFloat16, tiling::DataType::kBFloat16, tiling::DataType::kFloat32}) {
    SCOPED_TRACE(static_cast<int>(dtype));
    const int64_t count = static_cast<int64_t>(values.size());
    HostTensor one = HostTensor::Zeros(dtype, {count + 3});
    HostTensor run = HostTensor::Zeros(dtype, {count + 3});
    for (int64_t i = 0; i < count; ++i) one.Set(i + 3, values[i]);
    run.SetRun(3, values.data(), values.size());
    EXPECT_EQ(one.bytes, run.bytes);
    std::vector<float> back(values.size());
    run.GetRun(3, back.size(), back.data());
    for (int64_t i = 0; i < count; ++i) {
      const float want = one.Get(i + 3);
      EXPECT_EQ(std::memcmp(&back[i], &want, sizeof(float)), 0) << "element " << i;
    }
  }
}

// Operands as the cube reads them: batch by batch, transposed when stored
// [cols, rows], hf32-rounded when asked; the same for any thread count.
TEST(NumericsTest, BatchedOperandsReadEachBatchInItsLayout) {
  constexpr uint64_t kBatches = 3, kRows = 70, kCols = 131;  // not multiples of the tiles
  std::vector<float> stored(kBatches * kRows * kCols);
  for (size_t i = 0; i < stored.size(); ++i) stored[i] = 1.0f + static_cast<float>(i) * 1e-4f;
  const HostTensor tensor = HostTensor::FromFloats(tiling::DataType::kFloat32,
                                                   {static_cast<int64_t>(stored.size())}, stored);
  ThreadPool one(1), three(3);
  for (bool transposed : {false, true}) {
    for (bool hf32 : {false, true}) {
      const FloatBuffer got =
          BatchedOperandAsFloats(tensor, kBatches, kRows, kCols, transposed, hf32, three);
      const FloatBuffer serial =
          BatchedOperandAsFloats(tensor, kBatches, kRows, kCols, transposed, hf32, one);
      ASSERT_EQ(got.size(), stored.size());
      for (uint64_t b = 0; b < kBatches; ++b) {
        for (uint64_t r = 0; r < kRows; ++r) {
          for (uint64_t c = 0; c < kCols; ++c) {
            const uint64_t base = b * kRows * kCols;
            float want = stored[base + (transposed ? c * kRows + r : r * kCols + c)];
            if (hf32) want = RoundToHf32(want);
            ASSERT_EQ(got[base + r * kCols + c], want) << b << " " << r << " " << c;
          }
        }
      }
      EXPECT_EQ(std::memcmp(got.data(), serial.data(), got.size() * sizeof(float)), 0);
    }
  }
}

}  // namespace
}  // namespace npu::emu
