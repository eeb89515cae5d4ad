#include "server/service/execute_service.h"

#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/service/logging.h"
#include "server/service/queued_reactor.h"
#include "server/service/request_pipeline.h"
#include "server/service/status_mapping.h"

namespace npu::server {

namespace pb = ::npu::tiling::v1;
using Clock = std::chrono::steady_clock;

ExecuteService::ExecuteService(const npu::tiling::StrategyRegistry& registry,
                               ServiceMetrics& metrics, const ExecuteOptions& options)
    : registry_(registry),
      metrics_(metrics),
      options_(options),
      queue_(options.workers, options.max_queued, [&metrics](int queued, int running) {
        metrics.ExecuteQueueChanged(queued, running);
      }) {}

class ExecuteService::Reactor final : public QueuedUnaryReactor {
 public:
  Reactor(ExecuteService* service, Admission& admission, grpc::CallbackServerContext* context,
          grpc::ByteBuffer* response_bytes)
      : QueuedUnaryReactor(service->queue_, context, "emulation"),
        service_(service),
        admission_(admission),
        response_bytes_(response_bytes),
        start_(Clock::now()) {}

  // Runs in the handler, before gRPC binds the reactor to the call, so
  // OnCancel() cannot run concurrently with it (a worker can).
  void Start(const grpc::ByteBuffer& request_bytes) {
    service_->metrics_.RpcStarted(RpcMethod::kExecute);
    service_->metrics_.MessageReceived(RpcMethod::kExecute);
    admitted_ = admission_.TryAdmit();
    if (!admitted_) {
      Complete(admission_.RefusalError());
      return;
    }
    absl::Status status = ParseRequestBytes(request_bytes, &request_);
    if (!status.ok()) {
      Complete(status);
      return;
    }
    absl::StatusOr<PreparedExecute> prepared =
        PrepareExecute(request_, service_->registry_, service_->options_);
    if (!prepared.ok()) {
      Complete(prepared.status());
      return;
    }
    prepared_ = *std::move(prepared);
    status = Submit();
    if (!status.ok()) Complete(status);
  }

  void OnDone() override {
    if (admitted_) admission_.Release();
    service_->metrics_.RpcHandled(RpcMethod::kExecute, final_code_,
                                  std::chrono::duration<double>(Clock::now() - start_).count());
    delete this;
  }

 private:
  // On a worker.
  void Work() override {
    const Clock::time_point run_start = Clock::now();
    absl::Status status = RunExecute(prepared_, service_->options_, cancel_flag(), &response_);
    service_->metrics_.ExecuteRan(std::chrono::duration<double>(Clock::now() - run_start).count());
    if (status.code() == absl::StatusCode::kCancelled && cancelled()) {
      // The emulator saw the flag mid-run and stopped.
      service_->runs_interrupted_.fetch_add(1);
      status = CancelStatus();
    }
    if (status.ok()) {
      service_->metrics_.ExecutePredicted(response_.timing().cube_utilization());
    }
    Complete(status);
  }

  // The one place that finishes the call.
  void Complete(absl::Status status) override {
    status = Conclude(std::move(status), response_, response_bytes_, RpcMethod::kExecute,
                      service_->metrics_);
    final_code_ = status.code();
    if (status.code() == absl::StatusCode::kInternal) {
      Log(LogLevel::kError, absl::StrCat("Execute client=\"", request_.client_id(), "\" id=\"",
                                         request_.id(), "\" ", status.ToString()));
    }
    if (LogEnabled(LogLevel::kDebug)) {
      Log(LogLevel::kDebug, absl::StrCat("Execute client=\"", request_.client_id(), "\" id=\"",
                                         request_.id(), "\" ", status.ToString()));
    }
    service_->metrics_.ExecuteFinished(status.code());
    Finish(ToGrpcStatus(status));
  }

  ExecuteService* const service_;
  Admission& admission_;
  grpc::ByteBuffer* const response_bytes_;
  const Clock::time_point start_;
  bool admitted_ = false;
  // The request lives as long as the call: `prepared_.inputs` points into it.
  pb::ExecuteRequest request_;
  pb::ExecuteResponse response_;
  PreparedExecute prepared_;
  // Written by Complete() before Finish(), read by OnDone() after it.
  absl::StatusCode final_code_ = absl::StatusCode::kOk;
};

grpc::ServerUnaryReactor* ExecuteService::Start(Admission& admission,
                                                grpc::CallbackServerContext* context,
                                                const grpc::ByteBuffer* request_bytes,
                                                grpc::ByteBuffer* response_bytes) {
  auto* reactor = new Reactor(this, admission, context, response_bytes);
  reactor->Start(*request_bytes);
  return reactor;
}

}  // namespace npu::server
