// A fixed pool of host threads for the emulator's numerics.
//
// Host threads only speed up the arithmetic: which thread runs a task never
// changes a result, because tasks write disjoint outputs and simulated time
// is computed separately (timing_model.h).
#ifndef NPU_EMULATOR_THREAD_POOL_H_
#define NPU_EMULATOR_THREAD_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace npu::emu {

class ThreadPool {
 public:
  // Starts `threads - 1` workers; the caller of ParallelFor is the last one.
  // 0 and 1 both mean "run on the calling thread".
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Runs fn(i) for i in [0, count), each exactly once, and returns when all
  // are done. Tasks are claimed dynamically; `fn` must be thread-safe.
  void ParallelFor(size_t count, const std::function<void(size_t)>& fn);

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

 private:
  void WorkerLoop();
  void RunTasks();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  const std::function<void(size_t)>* fn_ = nullptr;  // guarded by mu_
  size_t count_ = 0;
  size_t next_ = 0;
  size_t done_ = 0;
  size_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace npu::emu

#endif  // NPU_EMULATOR_THREAD_POOL_H_
