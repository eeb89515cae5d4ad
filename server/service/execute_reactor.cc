// The Execute handler of TilingService: one reactor per call, the emulation
// on a worker of the service's ExecuteQueue.
//
// Life of a call: the handler (a gRPC callback thread) admits the RPC,
// prepares the run and submits it; a worker runs it and finishes the RPC.
// OnCancel (client cancellation, the deadline, server shutdown) sets the
// run's cancellation flag, which the emulator polls, and takes a job that
// has not started out of the queue and finishes it itself. Exactly one of
// the handler, the worker and OnCancel calls Finish(), and nothing touches
// the reactor after that: OnDone() may delete it at any time.
#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/service/execute.h"
#include "server/service/logging.h"
#include "server/service/status_mapping.h"
#include "server/service/tiling_service.h"

namespace npu::server {

namespace pb = ::npu::tiling::v1;
using Clock = std::chrono::steady_clock;

std::unique_ptr<ExecuteQueue> TilingService::NewExecuteQueue(const ExecuteOptions& options,
                                                             ServiceMetrics& metrics) {
  return std::make_unique<ExecuteQueue>(
      options.workers, options.max_queued,
      [&metrics](int queued, int running) { metrics.ExecuteQueueChanged(queued, running); });
}

class TilingService::ExecuteReactor final : public grpc::ServerUnaryReactor {
 public:
  ExecuteReactor(TilingService* service, grpc::CallbackServerContext* context,
                 const pb::ExecuteRequest* request, pb::ExecuteResponse* response)
      : service_(service),
        context_(context),
        request_(request),
        response_(response),
        start_(Clock::now()) {}

  // Runs in the handler, before gRPC binds the reactor to the call, so
  // OnCancel() cannot run concurrently with it (a worker can).
  void Start() {
    service_->metrics_.RpcStarted(RpcMethod::kExecute);
    service_->metrics_.MessageReceived(RpcMethod::kExecute);
    admitted_ = service_->TryAdmit();
    if (!admitted_) {
      Complete(service_->OverloadError());
      return;
    }
    absl::StatusOr<PreparedExecute> prepared =
        PrepareExecute(*request_, service_->registry_, service_->options_.execute);
    if (!prepared.ok()) {
      Complete(prepared.status());
      return;
    }
    prepared_ = *std::move(prepared);
    ExecuteQueue::Job job;
    job.run = [this] { Run(); };
    job.drop = [this] { Complete(absl::UnavailableError("the server is shutting down")); };
    ExecuteQueue& queue = *service_->execute_queue_;
    std::optional<uint64_t> ticket = queue.TrySubmit(std::move(job));
    if (!ticket.has_value()) {
      Complete(absl::ResourceExhaustedError(absl::StrCat(
          "emulation queue full: ", queue.workers(), " running and ", queue.max_queued(),
          " waiting (--execute_threads, --max_execute_queue); retry later or on another "
          "replica")));
      return;
    }
    absl::MutexLock lock(&mutex_);
    ticket_ = *ticket;
  }

  void OnCancel() override {
    cancelled_.store(true);
    uint64_t ticket = 0;
    {
      absl::MutexLock lock(&mutex_);
      ticket = ticket_;
    }
    // A job still waiting never reaches a worker; finish it here. A running
    // one sees the flag and finishes itself.
    if (ticket != 0 && service_->execute_queue_->Remove(ticket)) Complete(CancelStatus());
  }

  void OnDone() override {
    if (admitted_) service_->Release();
    service_->metrics_.RpcHandled(RpcMethod::kExecute, final_code_,
                                  std::chrono::duration<double>(Clock::now() - start_).count());
    delete this;
  }

 private:
  // On a worker.
  void Run() {
    if (cancelled_.load() || context_->IsCancelled()) {
      Complete(CancelStatus());
      return;
    }
    const Clock::time_point run_start = Clock::now();
    absl::Status status = RunExecute(prepared_, service_->options_.execute, &cancelled_, response_);
    service_->metrics_.ExecuteRan(std::chrono::duration<double>(Clock::now() - run_start).count());
    if (status.code() == absl::StatusCode::kCancelled && cancelled_.load()) {
      // The emulator saw the flag mid-run and stopped.
      service_->execute_runs_interrupted_.fetch_add(1);
      status = CancelStatus();
    }
    if (status.ok()) {
      service_->metrics_.ExecutePredicted(response_->timing().cube_utilization());
    }
    Complete(status);
  }

  // Why a cancelled call ended: the deadline, or the client (or a server
  // shutdown past its drain window) cancelling it.
  absl::Status CancelStatus() const {
    if (context_->deadline() <= std::chrono::system_clock::now()) {
      return absl::DeadlineExceededError("deadline exceeded; the emulation was stopped");
    }
    return absl::CancelledError("the call was cancelled; the emulation was stopped");
  }

  // The one place that finishes the call.
  void Complete(const absl::Status& status) {
    final_code_ = status.code();
    if (status.ok()) {
      service_->metrics_.MessageSent(RpcMethod::kExecute);
    } else {
      service_->metrics_.RequestFailed(status.code());
      response_->Clear();
      if (status.code() == absl::StatusCode::kInternal) {
        Log(LogLevel::kError, absl::StrCat("Execute client=\"", request_->client_id(), "\" id=\"",
                                           request_->id(), "\" ", status.ToString()));
      }
    }
    if (LogEnabled(LogLevel::kDebug)) {
      Log(LogLevel::kDebug, absl::StrCat("Execute client=\"", request_->client_id(), "\" id=\"",
                                         request_->id(), "\" ", status.ToString()));
    }
    service_->metrics_.ExecuteFinished(status.code());
    Finish(ToGrpcStatus(status));
  }

  TilingService* const service_;
  grpc::CallbackServerContext* const context_;
  const pb::ExecuteRequest* const request_;
  pb::ExecuteResponse* const response_;
  const Clock::time_point start_;
  bool admitted_ = false;
  PreparedExecute prepared_;
  std::atomic<bool> cancelled_{false};
  // Written by Complete() before Finish(), read by OnDone() after it.
  absl::StatusCode final_code_ = absl::StatusCode::kOk;
  absl::Mutex mutex_;
  uint64_t ticket_ ABSL_GUARDED_BY(mutex_) = 0;
};

grpc::ServerUnaryReactor* TilingService::Execute(grpc::CallbackServerContext* context,
                                                 const pb::ExecuteRequest* request,
                                                 pb::ExecuteResponse* response) {
  auto* reactor = new ExecuteReactor(this, context, request, response);
  reactor->Start();
  return reactor;
}

}  // namespace npu::server
