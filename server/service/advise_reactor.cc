#include "server/service/advise_reactor.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "server/service/logging.h"
#include "server/service/queued_reactor.h"
#include "server/service/request_pipeline.h"
#include "server/service/status_mapping.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
using Clock = std::chrono::steady_clock;

class AdviseReactor final : public QueuedUnaryReactor {
 public:
  AdviseReactor(AdviceService& advice, ExecuteQueue& queue, ServiceMetrics& metrics,
                Admission& admission, grpc::CallbackServerContext* context,
                const pb::TilingRequest& request, grpc::ByteBuffer* response_bytes,
                Clock::time_point start)
      : QueuedUnaryReactor(queue, context, "advice"),
        advice_(advice),
        metrics_(metrics),
        admission_(admission),
        request_(request),
        response_bytes_(response_bytes),
        start_(start) {}

  // Runs in the handler, before gRPC binds the reactor to the call, so
  // OnCancel() cannot run concurrently with it (a worker can).
  void Start() {
    bool answered = false;
    absl::Status status = advice_.Prepare(request_, &work_, &response_, &answered);
    if (!status.ok() || answered) {
      Complete(status);
      return;
    }
    status = Submit("; ADVISE shares them with Execute");
    if (!status.ok()) Complete(status);
  }

  void OnDone() override {
    admission_.Release();
    metrics_.RpcHandled(RpcMethod::kGetTiling, final_code_, SecondsSince(start_));
    delete this;
  }

 private:
  // On a worker. The advisor has no other way to stop than its budget, which
  // the flag ends (before its next emulation).
  void Work() override {
    absl::Status status = advice_.Run(request_, work_, cancel_flag(), &response_);
    if (cancelled()) status = CancelStatus();
    Complete(status);
  }

  // The one place that finishes the call.
  void Complete(absl::Status status) override {
    status = Conclude(std::move(status), response_, response_bytes_, RpcMethod::kGetTiling, metrics_);
    final_code_ = status.code();
    const bool budget_exhausted = status.ok() && response_.advice().budget_exhausted();
    metrics_.AdviseFinished(status.code(), budget_exhausted);
    LogOutcome("GetTiling(ADVISE)", request_.client_id(), request_.id(), status);
    Finish(ToGrpcStatus(status));
  }

  AdviceService& advice_;
  ServiceMetrics& metrics_;
  Admission& admission_;
  // Copied off the handler's message, which the thread reuses.
  const pb::TilingRequest request_;
  grpc::ByteBuffer* const response_bytes_;
  const Clock::time_point start_;
  AdviseWork work_;
  pb::TilingResponse response_;
  // Written by Complete() before Finish(), read by OnDone() after it.
  absl::StatusCode final_code_ = absl::StatusCode::kOk;
};

}  // namespace

grpc::ServerUnaryReactor* StartAdvise(AdviceService& advice, ExecuteQueue& queue,
                                      ServiceMetrics& metrics, Admission& admission,
                                      grpc::CallbackServerContext* context,
                                      const pb::TilingRequest& request,
                                      grpc::ByteBuffer* response_bytes, Clock::time_point start) {
  auto* reactor =
      new AdviseReactor(advice, queue, metrics, admission, context, request, response_bytes, start);
  reactor->Start();
  return reactor;
}

}  // namespace npu::server
