// TO_MULTI_MUL: small fp32 matmuls in forced fp32 accumulation with A
// row-major and B transposed (K contiguous on both sides) run as vector
// multiply-adds on the AIV cores, one (base_m x base_n) output block per core.
#ifndef NPU_SERVER_TILING_STRATEGIES_VECTOR_MULTI_MUL_H_
#define NPU_SERVER_TILING_STRATEGIES_VECTOR_MULTI_MUL_H_

#include "server/tiling/strategy.h"
#include "server/tiling/strategy_id.h"

namespace npu::tiling {

class VectorMultiMulStrategy final : public Strategy {
 public:
  std::string_view name() const override { return StrategyName(StrategyId::kVectorMultiMul); }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_VECTOR_MULTI_MUL_H_
