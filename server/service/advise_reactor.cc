// GetTiling in ADVISE mode: the advisor on a worker of the service's
// emulation queue (the one Execute uses), one reactor per call
// (queued_reactor.h describes the life of such a call). Start() (still on
// the gRPC thread) validates the request, answers a cache hit at once, and
// otherwise submits the advisor. Cancellation ends the advisor's budget,
// which stops it before its next emulation.
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/advisor/advisor.h"
#include "server/service/advise.h"
#include "server/service/convert.h"
#include "server/service/execute.h"
#include "server/service/logging.h"
#include "server/service/queued_reactor.h"
#include "server/service/status_mapping.h"
#include "server/service/tiling_service.h"
#include "server/service/validate.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/validate.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using Clock = std::chrono::steady_clock;

}  // namespace

absl::Status TilingService::PrepareAdvise(const pb::TilingRequest& request, AdviseWork* work,
                                          pb::TilingResponse* response, bool* answered) {
  *answered = false;
  response->Clear();
  RETURN_IF_ERROR(ValidateRequest(request));
  work->problem = ProblemFromProto(request.problem());
  RETURN_IF_ERROR(Prefixed("problem", tl::ValidateProblem(work->problem)));
  ASSIGN_OR_RETURN(work->chip, ResolveChip(request));
  work->options = AdviseOptionsFor(request.advise(), options_.advise);
  work->cache_key.clear();

  if (advice_.enabled()) {
    work->cache_key = AdviseCacheKey(work->problem, work->chip, work->options);
    std::shared_ptr<const pb::TilingResponse> cached = advice_.Lookup(work->cache_key);
    if (cached != nullptr) {
      metrics_.CacheHit();
      *response = *cached;
      response->set_from_cache(true);
      response->set_id(request.id());
      if (!request.include_trace()) response->clear_trace();
      ApplyView(request.view(), response);
      metrics_.DecisionServed(response->strategy());
      *answered = true;
      return absl::OkStatus();
    }
    metrics_.CacheMiss();
  }

  // CANN's choice is always emulated in full, so its size bounds the
  // advice's memory: refuse here, before the request waits for a worker,
  // what Execute would refuse. The decision costs microseconds; the advisor
  // makes it again on the worker.
  absl::StatusOr<tl::TilingDecision> decision = registry_.Decide(work->problem, work->chip);
  if (!decision.ok()) return decision.status();
  return CheckEmulationWork(decision->plan, work->problem, options_.execute.max_simulated_ops);
}

absl::Status TilingService::RunAdvise(const pb::TilingRequest& request, const AdviseWork& work,
                                      const std::atomic<bool>* cancelled,
                                      pb::TilingResponse* response) {
  response->Clear();
  npu::advisor::AdviseOptions options = work.options;
  if (cancelled != nullptr) {
    // The advisor checks its budget against this clock before every
    // emulation; an infinite reading spends the budget at once.
    options.clock_ms = [cancelled] {
      if (cancelled->load()) return std::numeric_limits<double>::infinity();
      return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
    };
  }
  const Clock::time_point start = Clock::now();
  absl::StatusOr<npu::advisor::Advice> advice =
      npu::advisor::Advise(registry_, work.problem, work.chip, options);
  metrics_.AdviseRan(SecondsSince(start));
  if (!advice.ok()) return advice.status();
  AdviceToProto(*advice, work.chip, work.options, response);
  // An advice cut short by the budget depends on the server's speed at the
  // time; only complete ones are a function of the request and are kept.
  const bool interrupted = cancelled != nullptr && cancelled->load();
  if (advice_.enabled() && !advice->budget_exhausted && !interrupted) {
    advice_.Insert(work.cache_key, *response);
  }
  metrics_.DecisionServed(response->strategy());
  response->set_id(request.id());
  if (!request.include_trace()) response->clear_trace();
  ApplyView(request.view(), response);
  return absl::OkStatus();
}

class TilingService::AdviseReactor final : public QueuedUnaryReactor {
 public:
  AdviseReactor(TilingService* service, grpc::CallbackServerContext* context,
                const pb::TilingRequest& request, grpc::ByteBuffer* response_bytes,
                Clock::time_point start)
      : QueuedUnaryReactor(*service->execute_queue_, context, "advice"),
        service_(service),
        request_(request),
        response_bytes_(response_bytes),
        start_(start) {}

  // Runs in the handler, before gRPC binds the reactor to the call, so
  // OnCancel() cannot run concurrently with it (a worker can).
  void Start() {
    bool answered = false;
    absl::Status status = service_->PrepareAdvise(request_, &work_, &response_, &answered);
    if (!status.ok() || answered) {
      Complete(status);
      return;
    }
    status = Submit("; ADVISE shares them with Execute");
    if (!status.ok()) Complete(status);
  }

  void OnDone() override {
    service_->Release();
    service_->metrics_.RpcHandled(RpcMethod::kGetTiling, final_code_, SecondsSince(start_));
    delete this;
  }

 private:
  // On a worker. The advisor has no other way to stop than its budget, which
  // the flag ends (before its next emulation).
  void Work() override {
    absl::Status status = service_->RunAdvise(request_, work_, cancel_flag(), &response_);
    if (cancelled()) status = CancelStatus();
    Complete(status);
  }

  // The one place that finishes the call.
  void Complete(absl::Status status) override {
    if (status.ok()) {
      bool own_buffer = false;
      const grpc::Status serialized = grpc::SerializationTraits<pb::TilingResponse>::Serialize(
          response_, response_bytes_, &own_buffer);
      if (!serialized.ok()) {
        status = absl::InternalError(absl::StrCat("response: ", serialized.error_message()));
      }
    }
    final_code_ = status.code();
    if (status.ok()) {
      service_->metrics_.MessageSent(RpcMethod::kGetTiling);
    } else {
      service_->metrics_.RequestFailed(status.code());
    }
    const bool budget_exhausted = status.ok() && response_.advice().budget_exhausted();
    service_->metrics_.AdviseFinished(status.code(), budget_exhausted);
    if (status.code() == absl::StatusCode::kInternal) {
      Log(LogLevel::kError, absl::StrCat("GetTiling(ADVISE) client=\"", request_.client_id(),
                                         "\" id=\"", request_.id(), "\" ", status.ToString()));
    } else if (LogEnabled(LogLevel::kDebug)) {
      Log(LogLevel::kDebug, absl::StrCat("GetTiling(ADVISE) client=\"", request_.client_id(),
                                         "\" id=\"", request_.id(), "\" ", status.ToString()));
    }
    Finish(ToGrpcStatus(status));
  }

  TilingService* const service_;
  // Copied off the handler's arena, which dies when the handler returns.
  const pb::TilingRequest request_;
  grpc::ByteBuffer* const response_bytes_;
  const Clock::time_point start_;
  AdviseWork work_;
  pb::TilingResponse response_;
  // Written by Complete() before Finish(), read by OnDone() after it.
  absl::StatusCode final_code_ = absl::StatusCode::kOk;
};

grpc::ServerUnaryReactor* TilingService::StartAdvise(grpc::CallbackServerContext* context,
                                                     const pb::TilingRequest& request,
                                                     grpc::ByteBuffer* response_bytes,
                                                     Clock::time_point start) {
  auto* reactor = new AdviseReactor(this, context, request, response_bytes, start);
  reactor->Start();
  return reactor;
}

}  // namespace npu::server
