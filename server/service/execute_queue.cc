#include "server/service/execute_queue.h"

#include <algorithm>
#include <utility>

namespace npu::server {

ExecuteQueue::ExecuteQueue(int workers, int max_queued, Observer observer)
    : max_queued_(std::max(0, max_queued)), observer_(std::move(observer)) {
  const int count = std::max(1, workers);
  threads_.reserve(count);
  for (int i = 0; i < count; ++i) threads_.emplace_back([this] { WorkerLoop(); });
  absl::MutexLock lock(&mutex_);
  NotifyLocked();
}

ExecuteQueue::~ExecuteQueue() {
  std::deque<std::pair<uint64_t, Job>> left;
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
    left.swap(waiting_);
    NotifyLocked();
  }
  for (std::thread& thread : threads_) thread.join();
  // The server shuts gRPC down (which cancels and removes waiting jobs)
  // before it destroys the queue, so this only runs for jobs submitted
  // without a server, e.g. in tests.
  for (auto& [ticket, job] : left) {
    if (job.drop) job.drop();
  }
}

void ExecuteQueue::NotifyLocked() {
  if (observer_) observer_(static_cast<int>(waiting_.size()), running_);
}

std::optional<uint64_t> ExecuteQueue::TrySubmit(Job job) {
  absl::MutexLock lock(&mutex_);
  // Idle workers take jobs at once, so they count as extra room: with
  // max_queued = 0 a job is accepted exactly when a worker is free.
  const int idle = static_cast<int>(threads_.size()) - running_;
  if (stopping_ || static_cast<int>(waiting_.size()) >= max_queued_ + std::max(0, idle)) {
    return std::nullopt;
  }
  const uint64_t ticket = next_ticket_++;
  waiting_.emplace_back(ticket, std::move(job));
  NotifyLocked();
  return ticket;
}

bool ExecuteQueue::Remove(uint64_t ticket) {
  absl::MutexLock lock(&mutex_);
  auto it = std::find_if(waiting_.begin(), waiting_.end(),
                         [ticket](const auto& entry) { return entry.first == ticket; });
  if (it == waiting_.end()) return false;
  waiting_.erase(it);
  NotifyLocked();
  return true;
}

int ExecuteQueue::queued() const {
  absl::MutexLock lock(&mutex_);
  return static_cast<int>(waiting_.size());
}

int ExecuteQueue::running() const {
  absl::MutexLock lock(&mutex_);
  return running_;
}

void ExecuteQueue::WorkerLoop() {
  while (true) {
    Job job;
    {
      absl::MutexLock lock(&mutex_);
      mutex_.Await(absl::Condition(
          +[](ExecuteQueue* self) { return self->stopping_ || !self->waiting_.empty(); }, this));
      if (stopping_) return;
      job = std::move(waiting_.front().second);
      waiting_.pop_front();
      ++running_;
      NotifyLocked();
    }
    job.run();
    // Release the job's captures before the count drops, so that a caller
    // that waits for running() == 0 sees them gone.
    job = Job();
    absl::MutexLock lock(&mutex_);
    --running_;
    NotifyLocked();
  }
}

}  // namespace npu::server
