#include "server/tiling/grouped/no_quant/no_quant_strategy.h"

#include "server/tiling/grouped/gmm_path.h"

namespace npu::tiling::grouped {

Capability GroupedNoQuantStrategy::IsCapable(const MatmulProblem& problem,
                                             const ProblemFacts& facts,
                                             const ChipSpec& /*chip*/) const {
  if (!OnPath(problem, GmmPath::kNoQuant)) {
    return Capability::No(Explain(facts, "not GroupedMatmul's no-quant path (x = weight, "
                                         "float16 / bfloat16 / float32)"));
  }
  return Capability::Yes(Explain(facts, "no-quant path: x = weight = ",
                                 DataTypeName(problem.grouped[GroupedTensor::kX].dtype)));
}

absl::StatusOr<TilingPlan> GroupedNoQuantStrategy::DoTiling(const MatmulProblem& /*problem*/,
                                                            const ProblemFacts& /*facts*/,
                                                            const ChipSpec& /*chip*/) const {
  return absl::UnimplementedError("GroupedMatmul's no-quant tiling is not written yet");
}

}  // namespace npu::tiling::grouped
