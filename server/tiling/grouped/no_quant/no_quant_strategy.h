// GroupedMatmul's no-quant path: x = weight, float16 / bfloat16 / float32
// (CANN's GroupedNoQuantMatmulTiling, gmm/grouped_matmul/op_host/op_tiling/
// arch35/grouped_no_quant_matmul_tiling.cpp). One strategy, serializing the
// 62-word GMMNoQuantTilingData; its key is B_TRANS | A_TRANS << 2.
#ifndef NPU_SERVER_TILING_GROUPED_NO_QUANT_NO_QUANT_STRATEGY_H_
#define NPU_SERVER_TILING_GROUPED_NO_QUANT_NO_QUANT_STRATEGY_H_

#include "server/tiling/strategy.h"

namespace npu::tiling::grouped {

// Capable of every problem on the no-quant path; CANN's checks of the path
// are its tiling's first step (INVALID_ARGUMENT naming the field and the
// rule), and a failure ends the walk: the path has no other strategy.
class GroupedNoQuantStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "GROUPED_NO_QUANT"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling::grouped

#endif  // NPU_SERVER_TILING_GROUPED_NO_QUANT_NO_QUANT_STRATEGY_H_
