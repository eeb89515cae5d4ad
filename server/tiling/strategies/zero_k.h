// K_EQUAL_ZERO: C = 0 when K is zero (and there is no bias). The AIV cores
// clear the output; the cube is never started.
#ifndef NPU_SERVER_TILING_STRATEGIES_ZERO_K_H_
#define NPU_SERVER_TILING_STRATEGIES_ZERO_K_H_

#include "server/tiling/strategy.h"
#include "server/tiling/strategy_id.h"

namespace npu::tiling {

class ZeroKStrategy final : public Strategy {
 public:
  std::string_view name() const override { return StrategyName(StrategyId::kZeroK); }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_ZERO_K_H_
