// BATCH_MATMUL_TO_MUL: a batched matmul with K = 1 is an outer product per
// batch, which the vector cores compute as broadcast multiplies; the cube is
// never started.
//
// Each AIV core takes ceil(batch / cores) batches and processes them in
// rounds of as many batches as its UB holds (one A column, one B row and the
// m x n product per batch). The tiling data describes the rounds and the
// cores that get a short last round. BatchMatMulV3 only (CANN:
// matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_matmul2mul_tiling.cpp).
#ifndef NPU_SERVER_TILING_STRATEGIES_BATCH_TO_VECTOR_MUL_H_
#define NPU_SERVER_TILING_STRATEGIES_BATCH_TO_VECTOR_MUL_H_

#include "server/tiling/strategy.h"

namespace npu::tiling {

class BatchToVectorMulStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "BATCH_MATMUL_TO_MUL"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_BATCH_TO_VECTOR_MUL_H_
