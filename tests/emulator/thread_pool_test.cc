#include "emulator/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

namespace npu::emu {
namespace {

TEST(ThreadPoolTest, RunsEveryIndexExactlyOnce) {
  for (int threads : {0, 1, 2, 4, 7}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads <= 1 ? 1 : threads);
    for (size_t count : {0u, 1u, 3u, 1000u}) {
      std::vector<std::atomic<int>> runs(count);
      pool.ParallelFor(count, [&](size_t i) { runs[i].fetch_add(1); });
      for (size_t i = 0; i < count; ++i) {
        EXPECT_EQ(runs[i].load(), 1) << "threads " << threads << " count " << count << " i " << i;
      }
    }
  }
}

TEST(ThreadPoolTest, SpreadsWorkOverItsThreadsAndIsReusable) {
  ThreadPool pool(4);
  for (int round = 0; round < 20; ++round) {
    std::mutex mu;
    std::set<std::thread::id> seen;
    std::atomic<int> waiting{0};
    // Each of the first four tasks waits until four tasks run at once, which
    // only happens when all four threads take part.
    pool.ParallelFor(4, [&](size_t) {
      {
        std::lock_guard<std::mutex> lock(mu);
        seen.insert(std::this_thread::get_id());
      }
      waiting.fetch_add(1);
      while (waiting.load() < 4) std::this_thread::yield();
    });
    EXPECT_EQ(seen.size(), 4u) << "round " << round;
  }
}

TEST(ThreadPoolTest, SingleThreadRunsInOrderOnTheCaller) {
  ThreadPool pool(1);
  std::vector<size_t> order;
  const std::thread::id caller = std::this_thread::get_id();
  pool.ParallelFor(5, [&](size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace npu::emu
