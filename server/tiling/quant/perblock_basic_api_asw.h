// CANN's PERBLOCK_BASIC_API_ASW QuantBatchMatmulV3 strategy on DAV_3510
// (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/
// adaptive_sliding_window_perblock_basic_api_tiling.cpp): per-block and
// per-tile FP8/HIF8 quantization, 128 x 128 scale blocks, dequantized by the
// vector cores, on the sliding window with the PERBLOCK base block, no full
// load and the tail round always split. Emits the 38-word basic-API struct,
// key (tA, tB, WITH_BATCH, kernel 4, BASIC). Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_PERBLOCK_BASIC_API_ASW_H_
#define NPU_SERVER_TILING_QUANT_PERBLOCK_BASIC_API_ASW_H_

#include <string>
#include <string_view>

#include "server/tiling/quant/quant_strategy.h"

namespace npu::tiling::quant {

class PerblockBasicApiAswStrategy : public QuantStrategy {
 public:
  std::string_view name() const override { return "PERBLOCK_BASIC_API_ASW"; }
  bool IsCapable(const QuantFacts& facts, const ChipSpec& chip, std::string* reason) const override;
  // kFailedPrecondition (ending CANN's walk) when aiv_num != 2 * aic_num.
  absl::StatusOr<QuantPlan> DoTiling(const QuantFacts& facts, const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_PERBLOCK_BASIC_API_ASW_H_
