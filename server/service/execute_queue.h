// A bounded queue of emulation jobs in front of a fixed pool of workers.
//
// Execute calls can take seconds of CPU; running them on gRPC's callback
// threads would stall every other RPC of the server behind them. Instead the
// handler prepares a job and hands it to this queue: `workers` threads run
// jobs in arrival order, at most `max_queued` jobs wait, and a job beyond
// that is refused at once (the caller answers RESOURCE_EXHAUSTED) rather than
// piling up behind work that may never finish in time.
//
// A job is two callbacks: `run`, called on a worker, and `drop`, called
// instead when the queue is destroyed with the job still waiting. Exactly
// one of them is called, unless Remove() takes the job out first, in which
// case neither is. Jobs own their completion (they finish their RPC), so the
// queue never blocks on a client.
#ifndef NPU_SERVER_SERVICE_EXECUTE_QUEUE_H_
#define NPU_SERVER_SERVICE_EXECUTE_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace npu::server {

class ExecuteQueue {
 public:
  struct Job {
    std::function<void()> run;
    std::function<void()> drop;
  };
  // Called under the queue's lock after every change, e.g. to set gauges;
  // it must not call back into the queue.
  using Observer = std::function<void(int queued, int running)>;

  // Starts `workers` threads (at least 1); `max_queued` may be 0 (no
  // waiting: a job is accepted only when a worker is idle).
  ExecuteQueue(int workers, int max_queued, Observer observer = nullptr);
  // Stops the workers after their current jobs and drops the waiting ones.
  ~ExecuteQueue();

  ExecuteQueue(const ExecuteQueue&) = delete;
  ExecuteQueue& operator=(const ExecuteQueue&) = delete;

  // Accepts `job` and returns its ticket, or nullopt when every worker is
  // busy and `max_queued` jobs are waiting (the job is discarded uncalled).
  std::optional<uint64_t> TrySubmit(Job job);

  // Takes the job `ticket` out if it is still waiting; true when it did, in
  // which case neither of its callbacks will be called.
  bool Remove(uint64_t ticket);

  int queued() const;
  int running() const;
  int workers() const { return static_cast<int>(threads_.size()); }
  int max_queued() const { return max_queued_; }

 private:
  void WorkerLoop();
  void NotifyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const int max_queued_;
  const Observer observer_;
  mutable absl::Mutex mutex_;
  std::deque<std::pair<uint64_t, Job>> waiting_ ABSL_GUARDED_BY(mutex_);
  int running_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t next_ticket_ ABSL_GUARDED_BY(mutex_) = 1;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_EXECUTE_QUEUE_H_
