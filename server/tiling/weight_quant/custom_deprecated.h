// CUSTOM_DEPRECATED: WeightQuantBatchMatmulV2's third DAV_3510 strategy
// (arch35/backward_compatible/..._tiling_custom_backward_compatible.cpp,
// priority 11, over the Ascend 910B custom tiling
// weight_quant_batch_matmul_v2_tiling_custom.cpp): int8 NZ weights whose
// C0 is 32, per-channel, or per-group 64 / 128 with K and N multiples of 64
// and no transposed weight.
//
// CANN's 910B base first asks two cache tilings of Huawei's closed legacy
// library (libophost_comm_legacy.so: GenWqbmmTiling, then GenTiling). On a
// runtime without that library both answer nothing, and the strategy runs
// its own fallback, asc-devkit's high-level MultiCoreMatmulTiling::GetTiling
// (server/tiling/cube_tiling_search.h), with x's dtype for both operands and
// the weight's K aligned as its origin Kb. This engine answers as such a
// runtime does; with the library present CANN may choose other cube blocks.
// The vector cores' slices are fixed per x dtype and transpose; its struct
// is the 910B's WeightQuantBatchMatmulV2TilingData (120 words), and the
// workspace caches up to three N loops of the dequantized weight. Part of
// `npu_tiling`.
#ifndef NPU_SERVER_TILING_WEIGHT_QUANT_CUSTOM_DEPRECATED_H_
#define NPU_SERVER_TILING_WEIGHT_QUANT_CUSTOM_DEPRECATED_H_

#include "server/tiling/weight_quant/wq_strategy.h"

namespace npu::tiling::weight_quant {

class CustomDeprecatedStrategy final : public WqStrategy {
 public:
  std::string_view name() const override { return "CUSTOM_DEPRECATED"; }
  bool IsCapable(const WqFacts& facts, const ChipSpec& chip, std::string* reason) const override;
  absl::StatusOr<WqPlan> DoTiling(const WqFacts& facts, const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::weight_quant

#endif  // NPU_SERVER_TILING_WEIGHT_QUANT_CUSTOM_DEPRECATED_H_
