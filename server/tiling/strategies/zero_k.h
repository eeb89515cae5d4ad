// K_EQUAL_ZERO: C = 0 when K is zero (and there is no bias). The AIV cores
// clear the output; the cube is never started. MatMulV3's strategy and
// BatchMatMulV3's (which clears every batch of C and needs ND inputs).
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

// BATCH_MATMUL_INPUT_K_EQUAL_ZERO
// (matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_k_equal_zero_tiling.cpp):
// the same clear over batch_c * m * n elements; A and B must be ND.
class BatchZeroKStrategy final : public Strategy {
 public:
  std::string_view name() const override { return StrategyName(StrategyId::kBatchZeroK); }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

// The AIV-only K = 0 plan shared by the three operators: a BASIC_LEVEL
// K_EQUAL_ZERO key and MatMulV3KEqZeroBasicTilingData over every element of
// every batch of C. kInvalidArgument when the count does not fit the
// struct's 32-bit field.
absl::StatusOr<TilingPlan> ZeroKPlan(const ProblemFacts& facts, const ChipSpec& chip);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_ZERO_K_H_
