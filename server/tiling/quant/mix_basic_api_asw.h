// CANN's MIX_BASIC_API_ASW QuantBatchMatmulV3 strategy on DAV_3510
// (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/
// adaptive_sliding_window_mix_basic_api_tiling.cpp): vector-core dequant of
// INT8 -> BF16 or E4M3 / HIF8 with an NZ weight on the Tensor-API kernel.
// The sliding window spreads the output batch over the cores; the DEFAULT
// base block is then re-chosen by a waste / idle-core / aspect score when
// the edge blocks are small or the blocks do not fill the cores. A may be
// fully loaded in L1, and 2 or 4 L1 buffers are used. Emits the 16-word
// without-batch struct (key batch mode WITHOUT_BATCH) when the output has
// no batch, else the 38-word basic-API struct (WITH_BATCH); key kernel 3
// with A full load else 2, BLAZE. Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_MIX_BASIC_API_ASW_H_
#define NPU_SERVER_TILING_QUANT_MIX_BASIC_API_ASW_H_

#include <string>
#include <string_view>

#include "server/tiling/quant/quant_strategy.h"

namespace npu::tiling::quant {

class MixBasicApiAswStrategy : public QuantStrategy {
 public:
  std::string_view name() const override { return "MIX_BASIC_API_ASW"; }
  bool IsCapable(const QuantFacts& facts, const ChipSpec& chip, std::string* reason) const override;
  // kFailedPrecondition (ending CANN's walk) when aiv_num != 2 * aic_num.
  absl::StatusOr<QuantPlan> DoTiling(const QuantFacts& facts, const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_MIX_BASIC_API_ASW_H_
