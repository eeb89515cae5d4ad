// ITER_BATCH_BASICAPI: more batches than cube cores, each small enough for
// L1; a core loads iterBatchL1 whole batches into L1 at once and multiplies
// iterBatchL0 of them per L0 load.
//
// When one batch does not fit L0 either, the base block is cut from the
// smallest of the aligned M, N and K, and the strategy only applies if the
// batches still spread evenly over the cores (balance of at least 0.8). A B
// given as a transposed view ([rows, batch, cols] storage) keeps its inner
// batch dim whole per L1 load. BatchMatMulV3's ITER_BATCH_BASICAPI and
// FusedMatMul's ITER_BATCH_BASICAPI_INHERITED_FROM_BMMV3, whose x3
// epilogues always write through the vector cores (CANN:
// matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_iterbatch_basicapi_tiling.cpp,
// matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_iterbatch_basic_tiling.cpp).
#ifndef NPU_SERVER_TILING_STRATEGIES_BATCH_ITERATE_H_
#define NPU_SERVER_TILING_STRATEGIES_BATCH_ITERATE_H_

#include "server/tiling/strategies/batch_shared.h"
#include "server/tiling/strategy.h"

namespace npu::tiling {

class BatchIterateStrategy final : public Strategy {
 public:
  // `op` is the operator whose registry holds this instance.
  explicit BatchIterateStrategy(MatmulOp op) : op_(op) {}
  std::string_view name() const override {
    return BatchStrategyName(op_, "ITER_BATCH_BASICAPI",
                             "ITER_BATCH_BASICAPI_INHERITED_FROM_BMMV3");
  }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;

 private:
  MatmulOp op_;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_BATCH_ITERATE_H_
