// The Execute handler of TilingService: one reactor per call, the emulation
// on a worker of the service's ExecuteQueue (queued_reactor.h describes the
// life of such a call).
#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/service/execute.h"
#include "server/service/logging.h"
#include "server/service/queued_reactor.h"
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

class TilingService::ExecuteReactor final : public QueuedUnaryReactor {
 public:
  ExecuteReactor(TilingService* service, grpc::CallbackServerContext* context,
                 const pb::ExecuteRequest* request, pb::ExecuteResponse* response)
      : QueuedUnaryReactor(*service->execute_queue_, context, "emulation"),
        service_(service),
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
    absl::Status submitted = Submit();
    if (!submitted.ok()) Complete(submitted);
  }

  void OnDone() override {
    if (admitted_) service_->Release();
    service_->metrics_.RpcHandled(RpcMethod::kExecute, final_code_,
                                  std::chrono::duration<double>(Clock::now() - start_).count());
    delete this;
  }

 private:
  // On a worker.
  void Work() override {
    const Clock::time_point run_start = Clock::now();
    absl::Status status =
        RunExecute(prepared_, service_->options_.execute, cancel_flag(), response_);
    service_->metrics_.ExecuteRan(std::chrono::duration<double>(Clock::now() - run_start).count());
    if (status.code() == absl::StatusCode::kCancelled && cancelled()) {
      // The emulator saw the flag mid-run and stopped.
      service_->execute_runs_interrupted_.fetch_add(1);
      status = CancelStatus();
    }
    if (status.ok()) {
      service_->metrics_.ExecutePredicted(response_->timing().cube_utilization());
    }
    Complete(status);
  }

  // The one place that finishes the call.
  void Complete(absl::Status status) override {
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
  const pb::ExecuteRequest* const request_;
  pb::ExecuteResponse* const response_;
  const Clock::time_point start_;
  bool admitted_ = false;
  PreparedExecute prepared_;
  // Written by Complete() before Finish(), read by OnDone() after it.
  absl::StatusCode final_code_ = absl::StatusCode::kOk;
};

grpc::ServerUnaryReactor* TilingService::Execute(grpc::CallbackServerContext* context,
                                                 const pb::ExecuteRequest* request,
                                                 pb::ExecuteResponse* response) {
  auto* reactor = new ExecuteReactor(this, context, request, response);
  reactor->Start();
  return reactor;
}

}  // namespace npu::server
