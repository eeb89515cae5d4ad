// ASW_BASIC: the batched data-parallel fallback without the high-level API.
// Every batch's blocks join one swizzled walk over the cube cores.
//
// The block search is MatMulV3's roofline-balanced one in the batch context
// (every batch of A adds its blocks to the rounds), followed by the L1 K
// stages; there is no tail re-split, no full load and no fixpipe output.
// The streamed L1 stages get four buffers when they fit a quarter of L1.
// fp32 inputs with a long K (without hf32) and operands that are both
// transposed views need the basic API. BatchMatMulV3's ASW_BASIC (CANN:
// matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_asw_basic_tiling.cpp);
// FusedMatMul inherits it (fused_inherited.h).
#ifndef NPU_SERVER_TILING_STRATEGIES_BATCH_DATA_PARALLEL_H_
#define NPU_SERVER_TILING_STRATEGIES_BATCH_DATA_PARALLEL_H_

#include "server/tiling/strategies/batch_shared.h"
#include "server/tiling/strategy.h"

namespace npu::tiling {

class BatchDataParallelStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "ASW_BASIC"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

// Whether BatchMatMulV3's fp32 data-parallel kernel splits K (and so needs
// the basic API): fp32 A and B without hf32, ND inputs that are not both
// transposed views, and K above 1024 (8192 past 2^28).
bool BatchUsesFp32SplitK(const MatmulProblem& problem, const ProblemFacts& facts);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_BATCH_DATA_PARALLEL_H_
