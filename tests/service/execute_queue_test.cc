// Tests of server/service/execute_queue.h: the bounded emulation queue.
#include "server/service/execute_queue.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/testing/wait.h"

namespace npu::server {
namespace {

using ::npu::testing::WaitFor;

// A job that blocks its worker until `release` is notified.
ExecuteQueue::Job BlockingJob(absl::Notification* release, std::atomic<int>* ran,
                              std::atomic<int>* dropped = nullptr) {
  ExecuteQueue::Job job;
  job.run = [release, ran] {
    release->WaitForNotification();
    ran->fetch_add(1);
  };
  job.drop = [dropped] {
    if (dropped != nullptr) dropped->fetch_add(1);
  };
  return job;
}

TEST(ExecuteQueueTest, RefusesBeyondWorkersPlusQueue) {
  absl::Notification release;
  std::atomic<int> ran{0};
  ExecuteQueue queue(/*workers=*/2, /*max_queued=*/1);
  ASSERT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran)).has_value());
  ASSERT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran)).has_value());
  ASSERT_TRUE(WaitFor([&] { return queue.running() == 2; }));
  ASSERT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran)).has_value());
  EXPECT_EQ(queue.queued(), 1);
  // Two running, one waiting: the next is refused at once.
  EXPECT_FALSE(queue.TrySubmit(BlockingJob(&release, &ran)).has_value());
  release.Notify();
  ASSERT_TRUE(WaitFor([&] { return ran.load() == 3 && queue.running() == 0; }));
  EXPECT_EQ(queue.queued(), 0);
}

TEST(ExecuteQueueTest, ZeroQueueAcceptsOnlyWhenAWorkerIsIdle) {
  absl::Notification release;
  std::atomic<int> ran{0};
  ExecuteQueue queue(/*workers=*/1, /*max_queued=*/0);
  ASSERT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran)).has_value());
  ASSERT_TRUE(WaitFor([&] { return queue.running() == 1; }));
  EXPECT_FALSE(queue.TrySubmit(BlockingJob(&release, &ran)).has_value());
  release.Notify();
  ASSERT_TRUE(WaitFor([&] { return queue.running() == 0; }));
  EXPECT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran)).has_value());
  ASSERT_TRUE(WaitFor([&] { return ran.load() == 2; }));
}

TEST(ExecuteQueueTest, RemoveTakesOutOnlyWaitingJobs) {
  absl::Notification release;
  std::atomic<int> ran{0}, dropped{0};
  ExecuteQueue queue(/*workers=*/1, /*max_queued=*/4);
  const std::optional<uint64_t> running = queue.TrySubmit(BlockingJob(&release, &ran, &dropped));
  ASSERT_TRUE(WaitFor([&] { return queue.running() == 1; }));
  const std::optional<uint64_t> waiting = queue.TrySubmit(BlockingJob(&release, &ran, &dropped));
  ASSERT_TRUE(running.has_value() && waiting.has_value());
  EXPECT_FALSE(queue.Remove(*running));  // already on a worker
  EXPECT_TRUE(queue.Remove(*waiting));
  EXPECT_FALSE(queue.Remove(*waiting));  // once
  EXPECT_EQ(queue.queued(), 0);
  release.Notify();
  ASSERT_TRUE(WaitFor([&] { return queue.running() == 0; }));
  EXPECT_EQ(ran.load(), 1);  // the removed job never ran
  EXPECT_EQ(dropped.load(), 0);
}

TEST(ExecuteQueueTest, RunsInArrivalOrder) {
  absl::Mutex mutex;
  std::vector<int> order;
  absl::Notification release;
  std::atomic<int> ran{0};
  ExecuteQueue queue(/*workers=*/1, /*max_queued=*/8);
  ASSERT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran)).has_value());
  for (int i = 0; i < 5; ++i) {
    ExecuteQueue::Job job;
    job.run = [&, i] {
      absl::MutexLock lock(&mutex);
      order.push_back(i);
    };
    ASSERT_TRUE(queue.TrySubmit(std::move(job)).has_value());
  }
  release.Notify();
  ASSERT_TRUE(WaitFor([&] {
    absl::MutexLock lock(&mutex);
    return order.size() == 5;
  }));
  absl::MutexLock lock(&mutex);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(ExecuteQueueTest, DestructionDropsWaitingJobsAndFinishesRunningOnes) {
  absl::Notification release;
  std::atomic<int> ran{0}, dropped{0};
  {
    ExecuteQueue queue(/*workers=*/1, /*max_queued=*/4);
    ASSERT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran, &dropped)).has_value());
    ASSERT_TRUE(WaitFor([&] { return queue.running() == 1; }));
    ASSERT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran, &dropped)).has_value());
    ASSERT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran, &dropped)).has_value());
    std::thread releaser([&] { release.Notify(); });
    releaser.join();
  }
  // Every job had exactly one of its callbacks called.
  EXPECT_EQ(ran.load() + dropped.load(), 3);
  EXPECT_GE(ran.load(), 1);
}

TEST(ExecuteQueueTest, ObserverSeesDepthAndRunning) {
  absl::Mutex mutex;
  int last_queued = -1, last_running = -1, max_queued = 0;
  absl::Notification release;
  std::atomic<int> ran{0};
  {
    ExecuteQueue queue(/*workers=*/1, /*max_queued=*/2, [&](int queued, int running) {
      absl::MutexLock lock(&mutex);
      last_queued = queued;
      last_running = running;
      max_queued = std::max(max_queued, queued);
    });
    ASSERT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran)).has_value());
    ASSERT_TRUE(WaitFor([&] { return queue.running() == 1; }));
    ASSERT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran)).has_value());
    ASSERT_TRUE(queue.TrySubmit(BlockingJob(&release, &ran)).has_value());
    {
      absl::MutexLock lock(&mutex);
      EXPECT_EQ(last_queued, 2);
      EXPECT_EQ(last_running, 1);
    }
    release.Notify();
    ASSERT_TRUE(WaitFor([&] { return ran.load() == 3 && queue.running() == 0; }));
  }
  absl::MutexLock lock(&mutex);
  EXPECT_EQ(last_queued, 0);
  EXPECT_EQ(last_running, 0);
  EXPECT_EQ(max_queued, 2);
}

}  // namespace
}  // namespace npu::server
