// FusedMatMul's K = 0 strategy, INPUT_K_EQUAL_ZERO_INHERITED_FROM_BMMV3
// (matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_k_equal_zero_tiling.cpp).
//
// The AIV cores write the epilogue of an empty product. Without an x3 the
// plan is BatchMatMulV3's clear under a HIGH_LEVEL fused key. add and mul
// (C = 0 + x3 or 0 * x3) take a BASIC_LEVEL key with the high-performance
// inner precision, and a batched one carries BatchMatMulV3BasicTilingData
// built from CANN's untouched run defaults (unit blocks, two L1 buffers, no
// L0C double buffer).
#ifndef NPU_SERVER_TILING_STRATEGIES_FUSED_ZERO_K_H_
#define NPU_SERVER_TILING_STRATEGIES_FUSED_ZERO_K_H_

#include "server/tiling/strategy.h"
#include "server/tiling/strategy_id.h"

namespace npu::tiling {

class FusedZeroKStrategy final : public Strategy {
 public:
  std::string_view name() const override { return StrategyName(StrategyId::kFusedZeroK); }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

// Whether FusedMatMul sees a batched problem: x1, x2 or y has rank above 2
// (IsFusedMatMulBmmShape, fused_matmul_common.h), even with batch dims of 1.
inline bool IsBatchedShape(const MatmulProblem& problem) {
  return !problem.batch.a.empty() || !problem.batch.b.empty() || !problem.batch.c.empty();
}

// FusedMatMul's key with `problem`'s epilogue and inner precision; the
// caller sets the other fields.
inline TilingKey FusedKey(const MatmulProblem& problem) {
  TilingKey key;
  key.layout = KeyLayout::kFused;
  key.fused_op = problem.fused.op;
  key.inner_precise = static_cast<uint8_t>(problem.fused.inner_precise);
  return key;
}

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_FUSED_ZERO_K_H_
