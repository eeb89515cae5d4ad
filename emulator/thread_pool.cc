#include "emulator/thread_pool.h"

#include <cassert>

namespace npu::emu {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::RunTasks() {
  std::unique_lock<std::mutex> lock(mu_);
  while (fn_ != nullptr && next_ < count_) {
    const size_t index = next_++;
    const std::function<void(size_t)>* fn = fn_;
    lock.unlock();
    (*fn)(index);
    lock.lock();
    if (++done_ == count_) done_cv_.notify_all();
  }
}

void ThreadPool::WorkerLoop() {
  size_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    RunTasks();
  }
}

void ThreadPool::ParallelFor(size_t count, const std::function<void(size_t)>& fn) {
  if (count == 0) return;
  if (workers_.empty() || count == 1) {
    for (size_t i = 0; i < count; ++i) fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    assert(fn_ == nullptr && "ParallelFor is not reentrant");
    fn_ = &fn;
    count_ = count;
    next_ = 0;
    done_ = 0;
    ++generation_;
  }
  work_cv_.notify_all();
  RunTasks();
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return done_ == count_; });
  fn_ = nullptr;
}

}  // namespace npu::emu
