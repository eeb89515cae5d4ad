// CANN's MIX_ASW QuantBatchMatmulV3 strategy on DAV_3510
// (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/
// adaptive_sliding_window_mix_tiling.cpp): quantizations the vector cores
// dequantize (quant_capability.h) that the mix basic-API kernel does not
// take, on the high-level Matmul API (high_level_tiling.h). INT4 x INT4 is
// tiled as INT8 x INT8, the kernel first widening both operands into the
// workspace. Emits the 96-word struct, key (tA, tB, WITH_BATCH, kernel 3
// with A full load else 2 when the vector cores dequantize, 1 / 0 when not
// (INT4 with an integer scale), HIGH). Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_MIX_ASW_H_
#define NPU_SERVER_TILING_QUANT_MIX_ASW_H_

#include <string>
#include <string_view>

#include "server/tiling/quant/quant_strategy.h"

namespace npu::tiling::quant {

class MixAswStrategy : public QuantStrategy {
 public:
  std::string_view name() const override { return "MIX_ASW"; }
  bool IsCapable(const QuantFacts& facts, const ChipSpec& chip, std::string* reason) const override;
  // kFailedPrecondition (ending CANN's walk) when aiv_num != 2 * aic_num.
  absl::StatusOr<QuantPlan> DoTiling(const QuantFacts& facts, const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_MIX_ASW_H_
