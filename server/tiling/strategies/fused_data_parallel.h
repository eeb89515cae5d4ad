// FusedMatMul's 2-D data-parallel strategy, BASIC_ASWT_INHERITED_FROM_MMV3
// (matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_asw_basic_tiling.cpp).
//
// Without gelu it is MatMulV3's BASIC_ASWT plan (swizzled blocks, A or B
// resident, fixpipe output) under a basic-API fused key: the split-K and
// slice models do not exist for the epilogue kernels, and the 1:1 ND
// fixpipe output is written on the fly. add and mul with a narrow N and B
// resident widen the blocks along M ("small N") and restage A around the
// resident B. gelu runs the plain swizzled blocks with both operands
// streamed, the small-N widening for N < 16 (which also needs an fp32
// workspace of the whole output for the AIV epilogue).
#ifndef NPU_SERVER_TILING_STRATEGIES_FUSED_DATA_PARALLEL_H_
#define NPU_SERVER_TILING_STRATEGIES_FUSED_DATA_PARALLEL_H_

#include "server/tiling/block_heuristics.h"
#include "server/tiling/strategy.h"
#include "server/tiling/strategy_id.h"

namespace npu::tiling {

class FusedDataParallelStrategy final : public Strategy {
 public:
  std::string_view name() const override {
    return StrategyName(StrategyId::kFusedSwizzledDataParallel);
  }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

// Whether the epilogue counts `problem` as narrow in N: add / mul with
// N <= 32 and K <= 4096, other epilogues N < 16 (IsSmallNShape).
bool IsSmallN(const MatmulProblem& problem, const ProblemFacts& facts);

// Widens the blocks of a narrow-N problem along M: one aligned N block, a
// base_m target by epilogue and K, base_k from a 64 KiB L0A half, L0C
// double-buffered, the tail round spread over M then N, and the used cores.
// Leaves `state` unchanged when L0C cannot hold the target or no base_k
// fits (AdjustSmallNTiling).
void WidenSmallNBlocks(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip, CubeRunState& state);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_FUSED_DATA_PARALLEL_H_
