#include "server/service/queued_reactor.h"

#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/service/request_pipeline.h"

namespace npu::server {

QueuedUnaryReactor::QueuedUnaryReactor(ExecuteQueue& queue, grpc::CallbackServerContext* context,
                                       std::string work)
    : context_(context), queue_(queue), work_(std::move(work)) {}

absl::Status QueuedUnaryReactor::Conclude(absl::Status status,
                                          const google::protobuf::MessageLite& response,
                                          grpc::ByteBuffer* bytes, RpcMethod method,
                                          ServiceMetrics& metrics) {
  if (status.ok()) status = SerializeMessage(response, bytes);
  if (status.ok()) {
    metrics.MessageSent(method);
  } else {
    metrics.RequestFailed(status.code());
  }
  return status;
}

absl::Status QueuedUnaryReactor::Submit(absl::string_view note) {
  ExecuteQueue::Job job;
  job.run = [this] {
    if (cancelled_.load() || context_->IsCancelled()) {
      Complete(CancelStatus());
      return;
    }
    Work();
  };
  job.drop = [this] { Complete(absl::UnavailableError("the server is shutting down")); };
  std::optional<uint64_t> ticket = queue_.TrySubmit(std::move(job));
  if (!ticket.has_value()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("emulation queue full: ", queue_.workers(), " running and ",
                     queue_.max_queued(), " waiting (--execute_threads, --max_execute_queue", note,
                     "); retry later or on another replica"));
  }
  absl::MutexLock lock(&mutex_);
  ticket_ = *ticket;
  return absl::OkStatus();
}

void QueuedUnaryReactor::OnCancel() {
  cancelled_.store(true);
  uint64_t ticket = 0;
  {
    absl::MutexLock lock(&mutex_);
    ticket = ticket_;
  }
  // A job still waiting never reaches a worker; finish it here. A running
  // one sees the flag and finishes itself.
  if (ticket != 0 && queue_.Remove(ticket)) Complete(CancelStatus());
}

absl::Status QueuedUnaryReactor::CancelStatus() const {
  if (context_->deadline() <= std::chrono::system_clock::now()) {
    return absl::DeadlineExceededError(
        absl::StrCat("deadline exceeded; the ", work_, " was stopped"));
  }
  return absl::CancelledError(absl::StrCat("the call was cancelled; the ", work_, " was stopped"));
}

}  // namespace npu::server
