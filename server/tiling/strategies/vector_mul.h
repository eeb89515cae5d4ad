// TO_MUL: a matmul with M == 1 or N == 1 in forced fp32 accumulation is a
// batch of dot products; the AIV cores compute it with vector multiply-adds
// because the cube would use 1 of its 16 rows.
#ifndef NPU_SERVER_TILING_STRATEGIES_VECTOR_MUL_H_
#define NPU_SERVER_TILING_STRATEGIES_VECTOR_MUL_H_

#include "server/tiling/strategy.h"
#include "server/tiling/strategy_id.h"

namespace npu::tiling {

class VectorMulStrategy final : public Strategy {
 public:
  std::string_view name() const override { return StrategyName(StrategyId::kVectorMul); }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_VECTOR_MUL_H_
