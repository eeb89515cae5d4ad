#include "emulator/float_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace npu::emu {
namespace {

uintptr_t Address(const FloatBuffer& buffer) { return reinterpret_cast<uintptr_t>(buffer.data()); }

TEST(FloatBufferTest, SmallBuffersAreCacheLineAligned) {
  FloatBuffer buffer(1000);
  ASSERT_EQ(buffer.size(), 1000u);
  EXPECT_EQ(Address(buffer) % 64, 0u);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
  EXPECT_EQ(buffer[999], 999.0f);
}

TEST(FloatBufferTest, LargeBuffersStartOnAHugePageBoundary) {
  // 6 MiB: mapped, so every page of it may be a 2 MiB one.
  FloatBuffer buffer(size_t{6} << 18);
  EXPECT_EQ(Address(buffer) % (size_t{2} << 20), 0u);
  buffer[0] = 1.0f;
  buffer[buffer.size() - 1] = 2.0f;
  EXPECT_EQ(buffer.span().back(), 2.0f);
}

TEST(FloatBufferTest, MovesOwnership) {
  FloatBuffer a(size_t{2} << 20);
  a[5] = 3.0f;
  const float* data = a.data();
  FloatBuffer b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b[5], 3.0f);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  FloatBuffer c(16);
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(c.size(), size_t{2} << 20);
}

TEST(FloatBufferTest, EmptyHasNoStorage) {
  FloatBuffer buffer(0);
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.data(), nullptr);
}

}  // namespace
}  // namespace npu::emu
