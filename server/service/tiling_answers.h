// GetTiling and GetTilingBatch without the transport: a request's decision,
// from the decision cache or the engine, as the answer's bytes.
//
// A request runs the shared pipeline (request_pipeline.h), then the decision
// cache is consulted and, on a miss, the engine's StrategyRegistry decides.
// The decision is encoded straight into the answer's bytes (wire_answer.h),
// without a message; Answer() is the same answer as a message, for callers
// that want one. ADVISE requests are not served here (advice_service.h).
#ifndef NPU_SERVER_SERVICE_TILING_ANSWERS_H_
#define NPU_SERVER_SERVICE_TILING_ANSWERS_H_

#include <grpcpp/support/byte_buffer.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/metrics/service_metrics.h"
#include "server/service/decision_cache.h"
#include "server/service/request_pipeline.h"
#include "server/tiling/registry.h"
#include "server/tiling/types.h"

namespace npu::server {

class TilingAnswers {
 public:
  // Decides with `registry`, reporting to `metrics` (both must outlive this),
  // keeping up to `cache_capacity` decisions (0: no cache).
  TilingAnswers(const npu::tiling::StrategyRegistry& registry, ServiceMetrics& metrics,
                size_t cache_capacity);

  TilingAnswers(const TilingAnswers&) = delete;
  TilingAnswers& operator=(const TilingAnswers&) = delete;

  // The serialized TilingResponse to a (non-ADVISE) `request` in `bytes`, or
  // why not: kInvalidArgument naming the field, kNotFound for an unknown
  // platform or strategy, kFailedPrecondition for a forced strategy that
  // cannot apply, kInternal for an engine bug.
  absl::Status AnswerSerialized(const npu::tiling::v1::TilingRequest& request,
                                grpc::ByteBuffer* bytes);

  // The same answer as a message: every field but `status`.
  absl::Status Answer(const npu::tiling::v1::TilingRequest& request,
                      npu::tiling::v1::TilingResponse* response);

  // The cached decisions (any view is encoded from one).
  const DecisionCache<npu::tiling::TilingDecision>& decision_cache() const { return decisions_; }

 private:
  // What the cache or the engine decided for a request, before it becomes an
  // answer: the decision shared with the cache when it is on (`from_cache`
  // when it was found there), else the engine's fresh one.
  struct Decided {
    std::shared_ptr<const npu::tiling::TilingDecision> cached;
    std::optional<npu::tiling::TilingDecision> fresh;
    bool from_cache = false;
    ResolvedRequest resolved;

    const npu::tiling::TilingDecision& decision() const {
      return cached != nullptr ? *cached : *fresh;
    }
  };
  // Runs the pipeline and decides, from the cache when it can.
  absl::Status Decide(const npu::tiling::v1::TilingRequest& request, Decided* decided);
  // The engine's options for `request`.
  npu::tiling::DecideOptions DecideOptionsFor(const npu::tiling::v1::TilingRequest& request) const;
  // Decide(), then the answer's bytes at the front of `buffer`
  // (EncodeAnswer()), `*size` of them.
  absl::Status DecideAndEncode(const npu::tiling::v1::TilingRequest& request, std::string* buffer,
                               size_t* size);

  const npu::tiling::StrategyRegistry& registry_;
  ServiceMetrics& metrics_;
  DecisionCache<npu::tiling::TilingDecision> decisions_;
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_TILING_ANSWERS_H_
