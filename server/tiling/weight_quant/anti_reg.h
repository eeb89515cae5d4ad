// ANTI_REG: WeightQuantBatchMatmulV2's second DAV_3510 strategy
// (arch35/weight_quant_batch_matmul_v2_reg_base_tiling.cpp, priority 8):
// per-group int4, int8 and float4 weights (NZ only with C0 16) that
// ADAPTIVE_SPLIT declined. The basic-block solver (basic_block_solver.h)
// picks the core split, the L0 blocks and the L1 steps; the vector cores'
// weight slice in UB (nBubSize x kBubSize) follows from the weight's layout.
// Its struct is WeightQuantBatchMatmulV2RegBaseTilingDataParams (64 words);
// the workspace adds a pointer per cube core to the system workspace.
//
// CANN leaves nBubSize and kBubSize unset for a float4 ND weight (none of
// its three layouts is that one), so its words there are whatever its stack
// held; the engine writes 0 and says so in the plan's detail. Part of
// `npu_tiling`.
#ifndef NPU_SERVER_TILING_WEIGHT_QUANT_ANTI_REG_H_
#define NPU_SERVER_TILING_WEIGHT_QUANT_ANTI_REG_H_

#include "server/tiling/weight_quant/wq_strategy.h"

namespace npu::tiling::weight_quant {

class AntiRegStrategy final : public WqStrategy {
 public:
  std::string_view name() const override { return "ANTI_REG"; }
  bool IsCapable(const WqFacts& facts, const ChipSpec& chip, std::string* reason) const override;
  absl::StatusOr<WqPlan> DoTiling(const WqFacts& facts, const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::weight_quant

#endif  // NPU_SERVER_TILING_WEIGHT_QUANT_ANTI_REG_H_
