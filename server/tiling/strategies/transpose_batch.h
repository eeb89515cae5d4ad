// The one DAV_3510 strategy of each transposed batch matmul (CANN's BASE):
// TransposeBatchMatMul and TransposeQuantBatchMatMul.
//
// Both start from MatMulV3's DAV_3510 base block (256 x 256, 128 bytes of
// K; the per-core M and N are the block, not shrunk to the problem), stage
// L1, and serialize the 90-word BatchMatMulV3TilingData under the
// high-level Matmul API's TCubeTiling search (cube_tiling_search.h), with
// the one batch in every batch word. Every core runs (block dim = AIC
// count). (CANN: matmul/transpose_batch_mat_mul/op_host/op_tiling/arch35/
// transpose_batch_mat_mul_asw_tiling.cpp and matmul/
// transpose_quant_batch_mat_mul/op_host/op_tiling/arch35/
// transpose_quant_batch_mat_mul_asw_tiling.cpp, on MatMulV3BaseTiling of
// mat_mul_v3.)
#ifndef NPU_SERVER_TILING_STRATEGIES_TRANSPOSE_BATCH_H_
#define NPU_SERVER_TILING_STRATEGIES_TRANSPOSE_BATCH_H_

#include "server/tiling/strategy.h"

namespace npu::tiling {

// TransposeBatchMatMul's BASE: MatMulV3's L1 staging (less the output
// scale's staging), and a rebalance of the block across the cores for one
// decode shape (m <= 16, n = 1024, k = 4096 with fewer batches than cores).
// The key's API level is TENSOR_LEVEL.
class TransposeBatchStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "BASE"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

// TransposeQuantBatchMatMul's BASE: MatMulV3's L1 staging in FP8 mode, its
// own L1 depths, K steps and (MXFP8) scale factors otherwise
// (transpose_quant_l1.h). Not capable in FP8 mode unless the chip has two
// AIV per AIC (the kernel dequantizes on the vector cores). Workspace 0.
class TransposeQuantBatchStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "BASE"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

// The advisor's plans of either op on another base block are
// TransposePlanWithBlock() (custom_plans.h), defined with these strategies.

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_TRANSPOSE_BATCH_H_
