// GroupedMatmul's weight-quant path: x and weight of different dtypes (CANN's
// GroupedWeightQuantBatchMatmulTiling, gmm/grouped_matmul/op_host/
// op_tiling/arch35/grouped_weight_quant_batch_matmul_tiling.cpp). One
// strategy: the checks and parse (gwq_parse.h), then the plan (gwq_plan.h),
// serialized as the 448-word GMMWeightQuantTilingData with the 33-bit key of
// layout GROUPED_WEIGHT_QUANT. Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_STRATEGY_H_
#define NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_STRATEGY_H_

#include "server/tiling/strategy.h"

namespace npu::tiling::grouped {

// Capable of every problem on the weight-quant path; CANN's checks of the
// path are its tiling's first step (INVALID_ARGUMENT naming the field and
// the rule), and a failure ends the walk: the path has no other strategy.
class GroupedWeightQuantStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "GROUPED_WEIGHT_QUANT"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::grouped

#endif  // NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_STRATEGY_H_
