#include "server/service/advice_service.h"

#include <chrono>
#include <limits>
#include <memory>
#include <utility>

#include "server/advisor/advisor.h"
#include "server/service/convert.h"
#include "server/service/execute.h"
#include "server/service/request_pipeline.h"
#include "server/tiling/status_macros.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using Clock = std::chrono::steady_clock;

// The part of an advice that depends on the call rather than the problem:
// the id, the trace when asked for, the view.
void ApplyCall(const pb::TilingRequest& request, pb::TilingResponse* response) {
  response->set_id(request.id());
  if (!request.include_trace()) response->clear_trace();
  ApplyView(request.view(), response);
}

}  // namespace

AdviceService::AdviceService(const tl::StrategyRegistry& registry, ServiceMetrics& metrics,
                             AdviseLimits limits, uint64_t max_simulated_ops, size_t cache_capacity)
    : registry_(registry),
      metrics_(metrics),
      limits_(limits),
      max_simulated_ops_(max_simulated_ops),
      advice_(cache_capacity) {}

void AdviceService::AnswerFromCache(const pb::TilingResponse& cached,
                                    const pb::TilingRequest& request,
                                    pb::TilingResponse* response) {
  *response = cached;
  response->set_from_cache(true);
  ApplyCall(request, response);
  metrics_.DecisionServed(response->strategy());
  for (const pb::PlanWarning& warning : response->warnings()) metrics_.PlanWarned(warning.buffer());
}

absl::Status AdviceService::Prepare(const pb::TilingRequest& request, AdviseWork* work,
                                    pb::TilingResponse* response, bool* answered) {
  *answered = false;
  response->Clear();
  ResolvedRequest resolved;
  RETURN_IF_ERROR(ResolveRequest(request, &resolved));
  work->problem = resolved.inputs.TakeProblem();
  work->chip = resolved.inputs.TakeChip();
  work->options = AdviseOptionsFor(request.advise(), limits_);
  work->cache_key.clear();

  if (advice_.enabled()) {
    work->cache_key = AdviseCacheKey(work->problem, work->chip, work->options);
    std::shared_ptr<const pb::TilingResponse> cached = advice_.Lookup(work->cache_key);
    if (cached != nullptr) {
      metrics_.CacheHit();
      AnswerFromCache(*cached, request, response);
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
  return CheckEmulationWork(decision->plan, work->problem, max_simulated_ops_);
}

absl::Status AdviceService::Run(const pb::TilingRequest& request, const AdviseWork& work,
                                const std::atomic<bool>* cancelled, pb::TilingResponse* response) {
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
  for (const pb::PlanWarning& warning : response->warnings()) metrics_.PlanWarned(warning.buffer());
  ApplyCall(request, response);
  return absl::OkStatus();
}

absl::Status AdviceService::Answer(const pb::TilingRequest& request, pb::TilingResponse* response) {
  AdviseWork work;
  bool answered = false;
  RETURN_IF_ERROR(Prepare(request, &work, response, &answered));
  if (answered) return absl::OkStatus();
  return Run(request, work, /*cancelled=*/nullptr, response);
}

}  // namespace npu::server
