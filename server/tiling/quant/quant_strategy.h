// The interface of one QuantBatchMatmulV3 (DAV_3510) tiling strategy.
//
// CANN tries its seven strategies in a fixed order (quant_capability.h,
// QuantStrategyOrder) and keeps the first that succeeds. A strategy that is
// not capable lets the walk go on; one that is capable and then fails ends it:
// CANN's tiling returns that failure and tries nothing else. DoTiling reports
// such a walk-ending failure as kFailedPrecondition (for example, the mix and
// per-block kernels need two vector cores per cube core and fail on any other
// ratio, and a base block or L1 split that cannot be formed fails the same
// way). Any other error code is our own fault. Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_QUANT_STRATEGY_H_
#define NPU_SERVER_TILING_QUANT_QUANT_STRATEGY_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/tiling/quant/quant_facts.h"
#include "server/tiling/types.h"

namespace npu::tiling::quant {

class QuantStrategy {
 public:
  virtual ~QuantStrategy() = default;

  // CANN's strategy name ("PERBLOCK_BASIC_API_ASW", ...).
  virtual std::string_view name() const = 0;

  // Whether CANN's strategy accepts the problem; when `reason` is not null it
  // receives a short explanation either way.
  virtual bool IsCapable(const QuantFacts& facts, const ChipSpec& chip,
                         std::string* reason) const = 0;

  // The plan of a capable problem, or kFailedPrecondition for a failure that
  // ends CANN's strategy walk (see the file comment).
  virtual absl::StatusOr<QuantPlan> DoTiling(const QuantFacts& facts,
                                             const ChipSpec& chip) const = 0;
};

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_QUANT_STRATEGY_H_
