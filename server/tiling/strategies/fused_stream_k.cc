#include "server/tiling/strategies/fused_stream_k.h"

#include "absl/strings/str_cat.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/strategies/fused_zero_k.h"

namespace npu::tiling {

Capability FusedStreamKStrategy::IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                                           const ChipSpec& chip) const {
  if (facts.batch_c > 1) {
    return Capability::No(Explain(facts, "batch_c=", facts.batch_c, " > 1"));
  }
  if (TraitsOf(problem.fused.op).gelu) {
    return Capability::No(Explain(facts, "fused_op ", std::string(FusedOpName(problem.fused.op)),
                                  " has no Stream-K kernel"));
  }
  if (TraitsOf(problem.fused.op).reads_x3) {
    // x3 is applied by the SK reduction only; DP tiles would skip it.
    const uint64_t blocks = CeilDiv(facts.m, kBlock256) * CeilDiv(facts.n, kBlock256);
    if (blocks > chip.aic_num / 2) {
      return Capability::No(Explain(facts, "fused_op ", std::string(FusedOpName(problem.fused.op)),
                                    " needs pure SK: ceil(M/256)*ceil(N/256)=", blocks,
                                    " > aic/2=", chip.aic_num / 2));
    }
  }
  return stream_k_.IsCapable(problem, facts, chip);
}

absl::StatusOr<TilingPlan> FusedStreamKStrategy::DoTiling(const MatmulProblem& problem,
                                                          const ProblemFacts& facts,
                                                          const ChipSpec& chip) const {
  absl::StatusOr<TilingPlan> plan = stream_k_.DoTiling(problem, facts, chip);
  if (!plan.ok()) return plan;
  const L0cToOut out = plan->key.l0c2out;
  plan->key = FusedKey(problem);
  plan->key.api_level = ApiLevel::kBasic;
  plan->key.trans_a = problem.trans_a;
  plan->key.trans_b = problem.trans_b;
  plan->key.model = KernelModel::kStreamK;
  plan->key.l0c2out = out;
  return plan;
}

}  // namespace npu::tiling
