// ITER_BATCH_BASICAPI: more batches than cube cores, each small enough for
// L1; a core loads iterBatchL1 whole batches into L1 at once and multiplies
// iterBatchL0 of them per L0 load.
//
// When one batch does not fit L0 either, the base block is cut from the
// smallest of the aligned M, N and K, and the strategy only applies if the
// batches still spread evenly over the cores (balance of at least 0.8). A B
// given as a transposed view ([rows, batch, cols] storage) keeps its inner
// batch dim whole per L1 load. BatchMatMulV3's ITER_BATCH_BASICAPI (CANN:
// matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_iterbatch_basicapi_tiling.cpp);
// FusedMatMul inherits it (fused_inherited.h).
#ifndef NPU_SERVER_TILING_STRATEGIES_BATCH_ITERATE_H_
#define NPU_SERVER_TILING_STRATEGIES_BATCH_ITERATE_H_

#include "server/tiling/strategies/batch_shared.h"
#include "server/tiling/strategy.h"

namespace npu::tiling {

// The loads of an ITER_BATCH plan: batches per L1 and per L0 load, the
// inner batch dim of a transposed view of B (0: none) and the base block,
// before the bias table bounds base_n.
struct IterBatchLoads {
  uint64_t batches_l1 = 0, batches_l0 = 0, inner_batch = 0;
  uint64_t base_m = 0, base_n = 0, base_k = 0;
  uint64_t m_l1 = 0, n_l1 = 0;  // one batch, 16-aligned
  bool l0_fits = false;         // one batch fits L0 whole
};
IterBatchLoads IterBatchLoadsOf(const MatmulProblem& problem, const ProblemFacts& facts,
                                const ChipSpec& chip);

class BatchIterateStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "ITER_BATCH_BASICAPI"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_BATCH_ITERATE_H_
