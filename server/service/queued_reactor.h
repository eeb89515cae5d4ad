// The shared half of the unary RPCs whose work runs on the emulation workers
// (Execute, and GetTiling in ADVISE mode): handing the work to the service's
// ExecuteQueue, refusing it when the queue is full, and cancellation.
//
// Life of a call: the handler (a gRPC callback thread) creates the reactor,
// prepares the work and calls Submit(); a worker calls Work(), which finishes
// the call through Complete(). OnCancel (client cancellation, the deadline,
// server shutdown) raises the cancellation flag, which the running work polls,
// and takes a job that has not started out of the queue and completes it
// itself. Exactly one of the handler, the worker and OnCancel calls
// Complete(), and nothing touches the reactor after Finish(): OnDone() may
// delete it at any time.
#ifndef NPU_SERVER_SERVICE_QUEUED_REACTOR_H_
#define NPU_SERVER_SERVICE_QUEUED_REACTOR_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "google/protobuf/message_lite.h"
#include "server/metrics/service_metrics.h"
#include "server/service/execute_queue.h"

namespace npu::server {

class QueuedUnaryReactor : public grpc::ServerUnaryReactor {
 public:
  void OnCancel() final;

 protected:
  // `work` names the job in messages, e.g. "emulation".
  QueuedUnaryReactor(ExecuteQueue& queue, grpc::CallbackServerContext* context, std::string work);

  // Hands Work() to a worker. When every worker is busy and the queue is
  // full, submits nothing and returns RESOURCE_EXHAUSTED naming the flags
  // (`note` is added to the list) for the caller to Complete() with.
  absl::Status Submit(absl::string_view note = "");

  // Why a cancelled call ended: the deadline, or the client (or a server
  // shutdown past its drain window) cancelling it.
  absl::Status CancelStatus() const;

  // Raised by OnCancel(); the work polls it to stop early.
  const std::atomic<bool>* cancel_flag() const { return &cancelled_; }
  bool cancelled() const { return cancelled_.load(); }

  // The shared start of every Complete(): serializes `response` into
  // `bytes` when `status` is OK and counts the message sent (or the error)
  // for `method`. Returns the call's final status.
  static absl::Status Conclude(absl::Status status, const google::protobuf::MessageLite& response,
                               grpc::ByteBuffer* bytes, RpcMethod method, ServiceMetrics& metrics);

  // On a worker, only when the call was not cancelled while it waited.
  virtual void Work() = 0;
  // Finishes the call (calls Finish()); called exactly once.
  virtual void Complete(absl::Status status) = 0;

  grpc::CallbackServerContext* const context_;

 private:
  ExecuteQueue& queue_;
  const std::string work_;
  std::atomic<bool> cancelled_{false};
  absl::Mutex mutex_;
  uint64_t ticket_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_QUEUED_REACTOR_H_
