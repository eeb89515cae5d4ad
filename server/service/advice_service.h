// GetTiling in ADVISE mode without the transport: the advisor's ranking of
// every applicable tiling, cached.
//
// An advice runs tens of emulations, so it comes in two halves. Prepare() is
// cheap enough for an RPC thread: the shared pipeline (request_pipeline.h),
// the advice cache, and the emulation work limit on CANN's plan, so that a
// request the server would refuse is refused before it waits for a worker.
// Run() is for an emulation worker (advise_reactor.h): the advisor itself.
// Answer() runs both on the calling thread.
#ifndef NPU_SERVER_SERVICE_ADVICE_SERVICE_H_
#define NPU_SERVER_SERVICE_ADVICE_SERVICE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/metrics/service_metrics.h"
#include "server/service/advise.h"
#include "server/service/decision_cache.h"
#include "server/tiling/registry.h"

namespace npu::server {

class AdviceService {
 public:
  // Advises with `registry`, reporting to `metrics` (both must outlive
  // this), under `limits`; refuses advice whose CANN plan needs more than
  // `max_simulated_ops` (ExecuteOptions); keeps up to `cache_capacity`
  // answers (0: no cache).
  AdviceService(const npu::tiling::StrategyRegistry& registry, ServiceMetrics& metrics,
                AdviseLimits limits, uint64_t max_simulated_ops, size_t cache_capacity);

  AdviceService(const AdviceService&) = delete;
  AdviceService& operator=(const AdviceService&) = delete;

  // The first half: validates and resolves `request` into `work`, checks the
  // emulation work limit on CANN's plan (kResourceExhausted), and looks the
  // advice up in the cache. On a hit it fills `response` (id included) and
  // sets `*answered`.
  absl::Status Prepare(const npu::tiling::v1::TilingRequest& request, AdviseWork* work,
                       npu::tiling::v1::TilingResponse* response, bool* answered);
  // The second half: runs the advisor, fills `response` (id included) and
  // caches a complete advice. When `cancelled` turns true the advisor's
  // budget ends, so it stops before its next emulation; the caller then
  // discards the answer.
  absl::Status Run(const npu::tiling::v1::TilingRequest& request, const AdviseWork& work,
                   const std::atomic<bool>* cancelled, npu::tiling::v1::TilingResponse* response);
  // Both halves on the calling thread.
  absl::Status Answer(const npu::tiling::v1::TilingRequest& request,
                      npu::tiling::v1::TilingResponse* response);

 private:
  // Fills `response` from the cached advice `cached` for `request`.
  void AnswerFromCache(const npu::tiling::v1::TilingResponse& cached,
                       const npu::tiling::v1::TilingRequest& request,
                       npu::tiling::v1::TilingResponse* response);

  const npu::tiling::StrategyRegistry& registry_;
  ServiceMetrics& metrics_;
  const AdviseLimits limits_;
  const uint64_t max_simulated_ops_;
  DecisionCache<npu::tiling::v1::TilingResponse> advice_;
};

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_ADVICE_SERVICE_H_
