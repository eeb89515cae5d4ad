// BASIC_ASWT: the general data-parallel strategy and the registry's fallback.
//
// Output blocks are handed to the cube cores round by round in a swizzled
// (SWAT window, serpentine) order, the tail round's blocks are re-split to
// fill more cores, and four sub-branches refine the plan in CANN's order:
// A resident in L1 (A_FULL_LOAD), B resident in L1 (B_FULL_LOAD), the plain
// plan with L1 split evenly between A and B stages, or AIV-assisted fixpipe
// output (ND_FIXPIPE_1_1 / 1_2). fp32 plans with K >= 2048 split K inside
// the core (BASIC_SPLIT_K); rank-3 slice views of A use the SLICE model.
#ifndef NPU_SERVER_TILING_STRATEGIES_SWIZZLED_DATA_PARALLEL_H_
#define NPU_SERVER_TILING_STRATEGIES_SWIZZLED_DATA_PARALLEL_H_

#include "server/tiling/strategy.h"
#include "server/tiling/strategy_id.h"

namespace npu::tiling {

class SwizzledDataParallelStrategy final : public Strategy {
 public:
  std::string_view name() const override { return StrategyName(StrategyId::kSwizzledDataParallel); }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_SWIZZLED_DATA_PARALLEL_H_
