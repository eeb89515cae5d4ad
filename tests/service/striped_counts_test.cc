#include "server/metrics/striped_counts.h"

#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace npu::server {
namespace {

TEST(StripedCountsTest, StartsAtZero) {
  const StripedCounts counts(20);
  EXPECT_EQ(counts.size(), 20u);
  for (size_t i = 0; i < counts.size(); ++i) EXPECT_EQ(counts.Sum(i), 0u) << i;
}

// More threads than stripes, so that some share one; counts on both sides
// of a cache line's end. No add is lost and none lands on another count.
TEST(StripedCountsTest, SumsTheAddsOfEveryThread) {
  constexpr size_t kSize = 20;
  constexpr int kThreads = static_cast<int>(StripedCounts::kStripes) + 8;
  constexpr uint64_t kAdds = 20000;
  StripedCounts counts(kSize);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&counts, t] {
      for (uint64_t i = 0; i < kAdds; ++i) {
        counts.Add(7);
        counts.Add(8, 2);
        counts.Add(kSize - 1, static_cast<uint64_t>(t));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counts.Sum(7), kThreads * kAdds);
  EXPECT_EQ(counts.Sum(8), 2 * kThreads * kAdds);
  EXPECT_EQ(counts.Sum(kSize - 1), kAdds * (kThreads * (kThreads - 1) / 2));
  for (size_t i : {size_t{0}, size_t{6}, size_t{9}, size_t{18}}) EXPECT_EQ(counts.Sum(i), 0u) << i;
}

}  // namespace
}  // namespace npu::server
