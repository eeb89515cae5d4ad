// BatchMatMulV3's strategies whose tiling data embeds a TCubeTiling from
// the high-level Matmul API's MultiCoreMatmulTiling search (asc-devkit):
// ITER_BATCH_BROADCAST_BASICAPI, ITER_BATCH and BASE.
//
// Each runs its own block choice, then the search (cube_tiling_search.h):
// a failed search fails the strategy (kFailedPrecondition; the registry then
// tries the next one, and after BASE, the last one, refuses the problem);
// otherwise the 90-word BatchMatMulV3TilingData keeps the search's own words
// (shareL1Size, shareL0CSize and constants) under the strategy's plan. (CANN:
// matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_iterbatch_broadcast_basicapi_tiling.cpp,
// batch_matmul_v3_iterbatch_tiling.cpp, batch_matmul_v3_asw_tiling.cpp;
// the search: asc-devkit impl/adv_api/tiling/matmul/matmul_tiling_algorithm.cpp.)
#ifndef NPU_SERVER_TILING_STRATEGIES_BATCH_SEARCHED_H_
#define NPU_SERVER_TILING_STRATEGIES_BATCH_SEARCHED_H_

#include "server/tiling/strategy.h"

namespace npu::tiling {

// ITER_BATCH_BROADCAST_BASICAPI: one batch slot broadcast on one side; many
// batches per L1 load, the broadcast operand resident when it is a single
// matrix.
class BatchIterateBroadcastStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "ITER_BATCH_BROADCAST_BASICAPI"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

// ITER_BATCH: equal batches, several per L1 load through the high-level
// API's batch loop.
class BatchIterateSearchedStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "ITER_BATCH"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

// BASE: always capable; one batch after another with broadcast batch
// indexing (TENSOR level) or the high-level API's loop.
class BatchSearchedFallbackStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "BASE"; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_BATCH_SEARCHED_H_
