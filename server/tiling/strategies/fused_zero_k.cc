#include "server/tiling/strategies/fused_zero_k.h"

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/strategies/zero_k.h"

namespace npu::tiling {

Capability FusedZeroKStrategy::IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                                         const ChipSpec& chip) const {
  // 16cast32 has no K = 0 kernel.
  if (problem.fused.op == FusedOp::kCast16To32) {
    return Capability::No(Explain(facts, "fused_op 16cast32 has no K=0 kernel"));
  }
  if (TraitsOf(problem.fused.op).gelu && facts.batch_c > 1) {
    return Capability::No(
        Explain(facts, "gelu K=0 kernel clears one batch, batch_c=", facts.batch_c));
  }
  return BatchZeroKStrategy().IsCapable(problem, facts, chip);
}

absl::StatusOr<TilingPlan> FusedZeroKStrategy::DoTiling(const MatmulProblem& problem,
                                                        const ProblemFacts& facts,
                                                        const ChipSpec& chip) const {
  absl::StatusOr<TilingPlan> plan = ZeroKPlan(facts, chip);
  if (!plan.ok()) return plan;
  plan->key = FusedKey(problem);
  plan->key.model = KernelModel::kKEqualZero;
  if (!TraitsOf(problem.fused.op).reads_x3) {
    // The shared fused key object, untouched but for the model: HIGH level.
    plan->key.api_level = ApiLevel::kHigh;
    return plan;
  }
  // add / mul: CANN fixes the level, the precision and the batch model.
  plan->key.api_level = ApiLevel::kBasic;
  plan->key.inner_precise = 1;
  if (!IsBatchedShape(problem)) return plan;
  plan->key.batch_model = static_cast<uint8_t>(BatchModel::kFusedBatch);
  // The batched kernel reads the cube struct, filled from the run defaults
  // no strategy step changed (MatMulV3RunInfo, matmul_v3_common_advanced.h).
  CubeRunState defaults;
  defaults.used_core_num = chip.aiv_num;
  defaults.l0c_db = 0;
  TilingPlan batched = *std::move(plan);
  FillBatchBasicTilingData(problem, facts, chip, defaults, batched);
  batched.block = BlockTiling{};  // the cube never runs
  return batched;
}

}  // namespace npu::tiling
