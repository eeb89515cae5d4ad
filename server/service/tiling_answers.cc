#include "server/service/tiling_answers.h"

#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/service/convert.h"
#include "server/service/logging.h"
#include "server/service/request_pipeline.h"
#include "server/service/status_mapping.h"
#include "server/service/wire_answer.h"
#include "server/tiling/status_macros.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using Clock = std::chrono::steady_clock;

// What the answer to `request` shows of its decision.
AnswerForm FormOf(const pb::TilingRequest& request, bool from_cache) {
  AnswerForm form;
  form.view = request.view();
  form.include_trace = request.include_trace();
  form.id = request.id();
  form.from_cache = from_cache;
  return form;
}

}  // namespace

TilingAnswers::TilingAnswers(const tl::StrategyRegistry& registry, ServiceMetrics& metrics,
                             size_t cache_capacity)
    : registry_(registry), metrics_(metrics), decisions_(cache_capacity) {}

absl::Status TilingAnswers::Decide(const pb::TilingRequest& request, Decided* decided) {
  RETURN_IF_ERROR(ResolveRequest(request, &decided->resolved));
  const ResolvedRequest& resolved = decided->resolved;

  std::string key;
  if (decisions_.enabled()) {
    key = DecisionCacheKey(resolved.inputs.problem(), resolved.inputs.chip(),
                           request.forced_strategy());
    decided->cached = decisions_.Lookup(key);
    if (decided->cached != nullptr) {
      metrics_.CacheHit();
      decided->from_cache = true;
      return absl::OkStatus();
    }
    metrics_.CacheMiss();
  }

  const Clock::time_point start = Clock::now();
  absl::StatusOr<tl::TilingDecision> decision =
      registry_.Decide(resolved.inputs, DecideOptionsFor(request));
  metrics_.DecisionTimed(SecondsSince(start));
  if (!decision.ok()) {
    return DecisionError(decision.status(), !request.forced_strategy().empty());
  }
  if (decisions_.enabled()) {
    decided->cached = std::make_shared<const tl::TilingDecision>(*std::move(decision));
    decisions_.Insert(key, decided->cached);
  } else {
    decided->fresh = *std::move(decision);
  }
  return absl::OkStatus();
}

tl::DecideOptions TilingAnswers::DecideOptionsFor(const pb::TilingRequest& request) const {
  tl::DecideOptions options;
  options.forced_strategy = request.forced_strategy();
  // Texts only for the answer's readers: the trace when asked for, the
  // plan's detail in the full view. A cached decision may be asked for in
  // full later.
  options.explain = request.include_trace() || decisions_.enabled();
  options.describe = request.view() != pb::RESPONSE_VIEW_COMPACT || decisions_.enabled();
  return options;
}

absl::Status TilingAnswers::DecideAndEncode(const pb::TilingRequest& request, std::string* buffer,
                                            size_t* size) {
  Decided decided;
  RETURN_IF_ERROR(Decide(request, &decided));
  metrics_.DecisionServed(decided.decision().plan.strategy);
  for (const tl::PlanWarning& warning : decided.decision().plan.warnings) {
    metrics_.PlanWarned(warning.buffer);
  }
  *size = EncodeAnswer(decided.decision(), decided.resolved.inputs.chip(),
                       FormOf(request, decided.from_cache), buffer);
  return absl::OkStatus();
}

absl::Status TilingAnswers::Answer(const pb::TilingRequest& request, pb::TilingResponse* response) {
  // The answer as a message (DecisionToProto(), the same walk of the answer
  // as EncodeAnswer()'s), for callers that need one; AnswerSerialized()
  // sends the bytes.
  Decided decided;
  RETURN_IF_ERROR(Decide(request, &decided));
  metrics_.DecisionServed(decided.decision().plan.strategy);
  for (const tl::PlanWarning& warning : decided.decision().plan.warnings) {
    metrics_.PlanWarned(warning.buffer);
  }
  DecisionToProto(decided.decision(), decided.resolved.inputs.chip(), response,
                  request.include_trace(), request.view());
  response->set_id(request.id());
  response->set_from_cache(decided.from_cache);
  return absl::OkStatus();
}

absl::Status TilingAnswers::AnswerSerialized(const pb::TilingRequest& request,
                                             grpc::ByteBuffer* bytes) {
  // Encoded in a buffer kept per thread (it grows to the largest answer the
  // thread wrote), then copied into the call's slice.
  thread_local std::string buffer;
  size_t size = 0;
  RETURN_IF_ERROR(DecideAndEncode(request, &buffer, &size));
  grpc::Slice slice(buffer.data(), size);
  grpc::ByteBuffer answer(&slice, 1);
  bytes->Swap(&answer);
  return absl::OkStatus();
}

}  // namespace npu::server
