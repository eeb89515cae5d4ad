// GroupedMatmul's quant path: CANN's two DAV_3510 strategies of registry
// GroupedMatmul, in its order (gmm/grouped_matmul/op_host/op_tiling/arch35/):
//
//   GROUPED_QUANT_BASIC_API  priority 0, GroupedQmmBasicApiTiling: MX only
//                            (E8M0 scales with float8_e4m3fn, float8_e5m2 or
//                            float4 x), GMMQuantBasicApiTilingData, 18 words;
//   GROUPED_QUANT            priority 1, GroupedQmmTiling: every other quant
//                            problem, GMMQuantTilingData, 440 words.
//
// Both run CANN's parse and checks first (gqmm_parse.h): a broken rule is
// INVALID_ARGUMENT naming the field and the rule, and ends the walk, as a
// failed parse ends CANN's (no other strategy runs). The capable one's
// failure ends it too: L1 refusals are FAILED_PRECONDITION, and CANN's
// divisions by zero and endless loops are CannFaultError. The key is
// QUANT_B_TRANS | QUANT_A_TRANS << 2 | KERNEL_TYPE << 4, the block dim the
// platform's cube cores, the workspace 16 MiB. Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_GROUPED_QUANT_GQMM_STRATEGY_H_
#define NPU_SERVER_TILING_GROUPED_QUANT_GQMM_STRATEGY_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "server/tiling/grouped/quant/gqmm_facts.h"
#include "server/tiling/strategy.h"

namespace npu::tiling::grouped {

// The MX basic-API strategy: capable on the quant path when the scale CANN
// reads is E8M0 and x is float8_e4m3fn, float8_e5m2 or float4.
class GroupedQuantBasicApiStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "GROUPED_QUANT_BASIC_API"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

// GroupedQmmTiling: capable of every problem on the quant path.
class GroupedQuantStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "GROUPED_QUANT"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

namespace quant {

// The quant path's view of a grouped problem: its tensor lists and
// attributes in CANN's terms (GE dtypes).
GqmmRequest GqmmRequestOf(const GroupedInputs& grouped);

// GE's number of `dtype` (float32 is GE's FLOAT).
GeType GeTypeOf(DataType dtype);

}  // namespace quant
}  // namespace npu::tiling::grouped

#endif  // NPU_SERVER_TILING_GROUPED_QUANT_GQMM_STRATEGY_H_
