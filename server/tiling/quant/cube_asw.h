// CANN's CUBE_ASW QuantBatchMatmulV3 strategy on DAV_3510
// (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/
// adaptive_sliding_window_cube_tiling.cpp): pure-cube dequant with an NZ
// weight on the high-level Matmul API (high_level_tiling.h). With the
// Tensor API CUBE_BASIC_API_ASW takes every such problem first, so this
// strategy runs only on a runtime without it. Emits the 96-word struct, key
// (tA, tB, WITH_BATCH, kernel 1 with A full load else 0, HIGH).
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_CUBE_ASW_H_
#define NPU_SERVER_TILING_QUANT_CUBE_ASW_H_

#include <string>
#include <string_view>

#include "server/tiling/quant/quant_strategy.h"

namespace npu::tiling::quant {

class CubeAswStrategy : public QuantStrategy {
 public:
  std::string_view name() const override { return "CUBE_ASW"; }
  bool IsCapable(const QuantFacts& facts, const ChipSpec& chip, std::string* reason) const override;
  absl::StatusOr<QuantPlan> DoTiling(const QuantFacts& facts, const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_CUBE_ASW_H_
