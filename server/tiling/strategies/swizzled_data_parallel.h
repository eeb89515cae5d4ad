// BASIC_ASWT: the general data-parallel strategy and the registry's fallback.
//
// Output blocks are handed to the cube cores round by round in a swizzled
// (SWAT window, serpentine) order, the tail round's blocks are re-split to
// fill more cores, and four sub-branches refine the plan in CANN's order:
// A resident in L1 (A_FULL_LOAD), B resident in L1 (B_FULL_LOAD), the plain
// plan with L1 split evenly between A and B stages, or AIV-assisted fixpipe
// output (ND_FIXPIPE_1_1 / 1_2). fp32 plans with K >= 2048 split K inside
// the core (BASIC_SPLIT_K); rank-3 slice views of A use the SLICE model.
#ifndef NPU_SERVER_TILING_STRATEGIES_SWIZZLED_DATA_PARALLEL_H_
#define NPU_SERVER_TILING_STRATEGIES_SWIZZLED_DATA_PARALLEL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/strategy.h"
#include "server/tiling/strategy_id.h"

namespace npu::tiling {

// BASIC_ASWT's decision before the bias limit and the packing: the blocks,
// what stays resident in L1, the output path and the key's level and model.
struct SwizzledChoice {
  CubeRunState state;
  FullLoad full_load = FullLoad::kNone;
  L0cToOut out = L0cToOut::kOnTheFly;
  ApiLevel api_level = ApiLevel::kBasic;
  KernelModel model = KernelModel::kBasic;
  LazyText detail;
};

// Decides BASIC_ASWT's plan (CANN's MatMulV3BasicAswtTiling::DoOpTiling):
// roofline-balanced blocks, the tail split, L1 stages, the fixpipe output,
// then A resident, B resident or both streamed. FusedMatMul's inherited
// strategy refines the result before packing it.
absl::StatusOr<SwizzledChoice> ChooseSwizzledPlan(const MatmulProblem& problem,
                                                  const ProblemFacts& facts, const ChipSpec& chip);

// Packs `choice` into a plan with MatMulV3BasicTilingData; the key carries
// the choice's level, model, full load and output (the caller adjusts it
// for other ops). Only the AIV output path needs the vector cores.
TilingPlan PackSwizzledPlan(const MatmulProblem& problem, const ProblemFacts& facts,
                            const ChipSpec& chip, SwizzledChoice& choice);

// Plans A resident in L1 for the whole kernel while each core streams its
// own columns of B (CANN's DoAL1FullLoad, matmul_v3_basic_aswt_tiling.cpp):
// base_n, the K steps, depths, L1 buffer count, L0C double buffer, used
// cores and the N-only tail split. In the batch context base_n is bounded by
// the buffers only and the batches of C multiply the used cores. Expects the
// blocks of ResetBase()/StageL1() (or a rebalanced search) in `s`.
// kFailedPrecondition when the platform's L1 / L0C leave no 16-wide block.
absl::Status PlanAFullLoad(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip, CubeRunState& s);

// The mirror image with B resident and rows of A streamed (DoBL1FullLoad);
// also sets the UB double buffer.
absl::Status PlanBFullLoad(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip, CubeRunState& s);

class SwizzledDataParallelStrategy final : public Strategy {
 public:
  std::string_view name() const override { return StrategyName(StrategyId::kSwizzledDataParallel); }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_SWIZZLED_DATA_PARALLEL_H_
