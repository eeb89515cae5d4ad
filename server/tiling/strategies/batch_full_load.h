// AL1_FULL_LOAD_BASIC / BL1_FULL_LOAD_BASIC: one operand is a single
// unbatched matrix small enough to stay in L1 for the whole kernel while the
// cores stream the other, batched operand.
//
// The resident operand has at most 256 rows (A) or columns (B); the
// streamed side must be big enough to keep every core busy for several
// rounds. The plan reuses the MatMulV3 full-load planners (PlanAFullLoad /
// PlanBFullLoad in the batch context) from DAV_3510's default blocks, then
// re-derives the L0C double buffer, the resident side's L1 step and the
// streamed side's buffer count. BatchMatMulV3's AL1/BL1_FULL_LOAD_BASIC (CANN:
// matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_asw_al1_full_load_basic_tiling.cpp,
// batch_matmul_v3_asw_bl1_full_load_basic_tiling.cpp); FusedMatMul inherits
// them (fused_inherited.h).
#ifndef NPU_SERVER_TILING_STRATEGIES_BATCH_FULL_LOAD_H_
#define NPU_SERVER_TILING_STRATEGIES_BATCH_FULL_LOAD_H_

#include "server/tiling/strategies/batch_shared.h"
#include "server/tiling/strategy.h"

namespace npu::tiling {

class BatchFullLoadStrategy final : public Strategy {
 public:
  // `resident` is FullLoad::kA or FullLoad::kB.
  explicit BatchFullLoadStrategy(FullLoad resident) : resident_(resident) {}
  std::string_view name() const override;
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;

 private:
  FullLoad resident_;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_BATCH_FULL_LOAD_H_
