// ADAPTIVE_SPLIT: WeightQuantBatchMatmulV2's first DAV_3510 strategy
// (arch35/weight_quant_batch_matmul_v2_adaptive_split_tiling.cpp, priority
// 7). It takes per-tensor, per-channel and MX problems, and per-group ones
// only for an int4 NZ weight with group 32, 64, 128 or 256 (an NZ weight
// needs C0 16). The cube cores split N first (M only when N alone leaves
// cores idle); the vector cores dequantize the weight into L1 in slices of
// 256, 512 or 1024 along K (the key's MTE2 template).
//
// Two paths, named by the key's sub-algorithm: the high-performance one
// (x not transposed and y not int8, with a transposed per-channel ND
// weight, a transposed MXFP4 ND weight, or an int4 / MXFP4 NZ weight),
// N_FIRST_TAIL_RESPLIT, searches the M : N core split by the bytes MTE2
// moves, re-splits the N tail over the cores (and, between 8192 and 16384
// columns on 32 cores, widens the tail blocks when UB, L1 and L0C allow) and
// preloads A; the other, N_FIRST_BASIC_BLOCK, splits by fixed 256-column
// blocks. Its struct is WeightQuantBatchMatmulV2ASTilingDataParams (70
// words). Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_WEIGHT_QUANT_ADAPTIVE_SPLIT_H_
#define NPU_SERVER_TILING_WEIGHT_QUANT_ADAPTIVE_SPLIT_H_

#include "server/tiling/weight_quant/wq_strategy.h"

namespace npu::tiling::weight_quant {

class AdaptiveSplitStrategy final : public WqStrategy {
 public:
  std::string_view name() const override { return "ADAPTIVE_SPLIT"; }
  bool IsCapable(const WqFacts& facts, const ChipSpec& chip, std::string* reason) const override;
  absl::StatusOr<WqPlan> DoTiling(const WqFacts& facts, const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::weight_quant

#endif  // NPU_SERVER_TILING_WEIGHT_QUANT_ADAPTIVE_SPLIT_H_
