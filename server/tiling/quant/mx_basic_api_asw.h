// CANN's MX_BASIC_API_ASW QuantBatchMatmulV3 strategy on DAV_3510
// (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/
// adaptive_sliding_window_mx_basic_api_tiling.cpp): MX FP8 x FP8 or FP4 x FP4
// (quant_capability.h, IsMxBasicApiCapable) on the sliding window with the
// DEFAULT base block and its MX load balancing. On top of the shared window:
//  - A is fully loaded in L1 when the block rows allow it and an L1 estimate
//    says that keeps (or beats) the multi-buffered pipeline;
//  - a single-round tail split becomes a smaller base block;
//  - the MX scale window (scaleKL1), 2, 3 or 4 L1 buffers from L1 estimates
//    and an MTE2-bound roofline, and the L0C ping-pong kernels for
//    cube-bound problems.
// Emits the 16-word without-batch struct (Tensor API, one output batch) or
// the 38-word basic-API struct; key (tA, tB, WITHOUT_BATCH / WITH_BATCH,
// kernel 0 / 1 A full load / 9 ping-pong / 10 both, BLAZE with the Tensor
// API else BASIC). Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_MX_BASIC_API_ASW_H_
#define NPU_SERVER_TILING_QUANT_MX_BASIC_API_ASW_H_

#include <string>
#include <string_view>

#include "server/tiling/quant/quant_strategy.h"

namespace npu::tiling::quant {

// CANN's IsMxCubeBound: an MX FP8 or FP4 problem whose MMAD time exceeds its
// HBM, L2 and copy-out transfer time (fixed 950 bandwidths and throughputs).
bool IsMxCubeBound(const QuantFacts& facts);

// CANN's IsMxL0CPingpong: MX with an E8M0 scale, FP8 or FP4 data, the Tensor
// API, FP16/BF16 output, both inner axes 128-byte (FP8) or 256-byte (FP4)
// aligned, and cube bound.
bool IsMxL0CPingpong(const QuantFacts& facts);

class MxBasicApiAswStrategy : public QuantStrategy {
 public:
  std::string_view name() const override { return "MX_BASIC_API_ASW"; }
  bool IsCapable(const QuantFacts& facts, const ChipSpec& chip, std::string* reason) const override;
  absl::StatusOr<QuantPlan> DoTiling(const QuantFacts& facts, const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_MX_BASIC_API_ASW_H_
