// CANN's CUBE_BASIC_API_ASW QuantBatchMatmulV3 strategy on DAV_3510
// (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/
// adaptive_sliding_window_cube_basic_api_tiling.cpp): quantizations whose
// dequant the fixpipe does alone (quant_capability.h, IsCubeBasicApiCapable),
// on the sliding window with the DEFAULT base block, optionally with A fully
// loaded in L1, and 2 or 4 L1 buffers. INT4 x INT4 is tiled as INT8 x INT8
// (the kernel widens both operands into the workspace first). Emits the
// 38-word basic-API struct, key (tA, tB, WITH_BATCH, kernel 1 with A full
// load else 0, BLAZE with the Tensor API else BASIC). Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_CUBE_BASIC_API_ASW_H_
#define NPU_SERVER_TILING_QUANT_CUBE_BASIC_API_ASW_H_

#include <string>
#include <string_view>

#include "server/tiling/quant/quant_strategy.h"

namespace npu::tiling::quant {

class CubeBasicApiAswStrategy : public QuantStrategy {
 public:
  std::string_view name() const override { return "CUBE_BASIC_API_ASW"; }
  bool IsCapable(const QuantFacts& facts, const ChipSpec& chip, std::string* reason) const override;
  absl::StatusOr<QuantPlan> DoTiling(const QuantFacts& facts, const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_CUBE_BASIC_API_ASW_H_
