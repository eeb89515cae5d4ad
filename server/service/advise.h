// ADVISE mode at the edge: the wire options turned into the advisor's, the
// advice turned into the response, and the cache key of an advice.
//
// The advisor library (server/advisor) ranks every applicable tiling of a
// problem by the emulator's predicted time; it knows nothing of protobuf.
// These are the plain functions between it and TilingResponse.advice; the
// queueing, the deadline and the cache live in the service
// (tiling_service.h, advise_reactor.cc). Requests reaching them passed
// ValidateRequest() (validate.h), which enforces the fixed wire limits; the
// server's own caps are applied here.
#ifndef NPU_SERVER_SERVICE_ADVISE_H_
#define NPU_SERVER_SERVICE_ADVISE_H_

#include <cstdint>
#include <string>

#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/advisor/advisor.h"
#include "server/tiling/types.h"

namespace npu::server {

// Server-side limits of ADVISE requests. Defaults are the tiling_server flag
// defaults.
struct AdviseLimits {
  // Candidates when the request leaves max_candidates at 0: the advisor's
  // own default, enough for every capable strategy plus the best variants.
  uint32_t default_candidates = 8;
  // Most candidates one request may get (--max_advise_candidates); larger
  // requests are lowered to it. Each candidate costs ~1 KiB of response.
  uint32_t max_candidates = 16;
  // Most wall-clock milliseconds one advice may spend on emulations
  // (--max_advisory_ms), also the budget of a request that sets none. 2 s
  // covers all but the largest problems of bench/ADVISE_SWEEP.md (the
  // slowest took 9 s) while keeping a worker from being held for long.
  uint32_t max_advisory_ms = 2000;
};

// A validated ADVISE request, resolved: what the worker needs to run it.
struct AdviseWork {
  npu::tiling::MatmulProblem problem;
  npu::tiling::ChipSpec chip;
  // Without a clock: the service installs one per run (see advise_reactor.cc).
  npu::advisor::AdviseOptions options;
  // The cache key (empty when the cache is disabled).
  std::string cache_key;
};

// The advisor's options for the wire options `wire` under `limits`: zero
// fields take the defaults, larger ones are lowered to the caps.
npu::advisor::AdviseOptions AdviseOptionsFor(const npu::tiling::v1::AdviseOptions& wire,
                                             const AdviseLimits& limits);

// The cache key of an advice: DecisionCacheKey() of the canonical request
// with the mode and the options used (after defaults and caps) set, so
// advice never shares an entry with a CANN_COMPATIBLE decision, and two
// requests share one exactly when the advisor would run identically.
std::string AdviseCacheKey(const npu::tiling::MatmulProblem& problem,
                           const npu::tiling::ChipSpec& chip,
                           const npu::advisor::AdviseOptions& options);

// Fills `response` with CANN's decision (as DecisionToProto(), trace
// included) and `advice`. Sets everything but `id`, `from_cache` and
// `status`. The advisor's wall time is left out on purpose: answers are a
// function of the request (when the budget did not run out), so cached and
// fresh ones are identical.
void AdviceToProto(const npu::advisor::Advice& advice, const npu::tiling::ChipSpec& chip,
                   const npu::advisor::AdviseOptions& options,
                   npu::tiling::v1::TilingResponse* response);

// Enum conversions.
npu::tiling::v1::VariantKind VariantKindToProto(npu::advisor::VariantKind kind);
npu::tiling::v1::NumericsStatus NumericsToProto(npu::advisor::NumericsCheck check);
npu::tiling::v1::L1Residency L1ResidencyToProto(npu::tiling::L1Residency residency);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_ADVISE_H_
