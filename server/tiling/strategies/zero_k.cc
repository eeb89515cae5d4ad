#include "server/tiling/strategies/zero_k.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {

Capability ZeroKStrategy::IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                                    const ChipSpec& /*chip*/) const {
  if (problem.has_bias)
    return Capability::No(Explain(facts, "bias present: C = bias is not a pure clear"));
  if (facts.k != 0) return Capability::No(Explain(facts, "K=", facts.k, " != 0"));
  return Capability::Yes(Explain(facts, "K=0 and no bias: the vector cores clear C"));
}

absl::StatusOr<TilingPlan> ZeroKStrategy::DoTiling(const MatmulProblem& /*problem*/,
                                                   const ProblemFacts& facts,
                                                   const ChipSpec& chip) const {
  return ZeroKPlan(facts, chip);
}

Capability BatchZeroKStrategy::IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                                         const ChipSpec& chip) const {
  if (problem.format_a != Format::kNd || problem.format_b != Format::kNd) {
    return Capability::No(Explain(facts, "FRACTAL_NZ input: the batched clear reads ND only"));
  }
  return ZeroKStrategy().IsCapable(problem, facts, chip);
}

absl::StatusOr<TilingPlan> BatchZeroKStrategy::DoTiling(const MatmulProblem& /*problem*/,
                                                        const ProblemFacts& facts,
                                                        const ChipSpec& chip) const {
  return ZeroKPlan(facts, chip);
}

absl::StatusOr<TilingPlan> ZeroKPlan(const ProblemFacts& facts, const ChipSpec& chip) {
  // batch_c is 1 outside the batch context.
  const uint64_t elements = facts.m * facts.n * facts.batch_c;
  // totalDataAmount is a 32-bit field of the kernel's tiling data.
  if (elements > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(facts.batch_context ? "m*n*batch_c=" : "m*n=", elements,
                     " exceeds 4294967295, the limit of totalDataAmount for K=0"));
  }
  TilingPlan plan;
  plan.key.api_level = ApiLevel::kBasic;
  plan.key.model = KernelModel::kKEqualZero;
  plan.block_dim = chip.aiv_num;
  plan.kernel_type = KernelType::kAivOnly;
  plan.workspace_bytes = kRuntimeWorkspaceBytes;
  plan.detail = Describe(facts, chip.aiv_num, " vector cores clear ", elements, " elements");
  plan.data = NewTilingData<KEqZeroField>();
  Set(plan.data, KEqZeroField::kTotalDataAmount, elements);
  Set(plan.data, KEqZeroField::kAivNum, chip.aiv_num);
  return plan;
}

}  // namespace npu::tiling
