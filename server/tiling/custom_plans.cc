#include "server/tiling/custom_plans.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/registry.h"
#include "server/tiling/strategies/vector_mul.h"
#include "server/tiling/strategy_id.h"

namespace npu::tiling {
namespace {

// Key, kernel and bookkeeping of a streamed data-parallel plan; the block
// fields come from `state` through CANN's serializer.
TilingPlan FinishAswtPlan(const MatmulProblem& problem, const ProblemFacts& facts,
                          const ChipSpec& chip, const CubeRunState& state) {
  TilingPlan plan;
  plan.strategy = std::string(StrategyName(StrategyId::kSwizzledDataParallel));
  plan.key.api_level = problem.avoid_tensor_api ? ApiLevel::kBasic : ApiLevel::kTensor;
  plan.key.trans_a = problem.trans_a;
  plan.key.trans_b = problem.trans_b;
  plan.key.model = UsesFp32SplitK(problem, facts) ? KernelModel::kBasicSplitK : KernelModel::kBasic;
  plan.key.full_load = FullLoad::kNone;
  plan.key.l0c2out = L0cToOut::kOnTheFly;
  plan.block_dim = static_cast<uint32_t>(state.used_core_num);
  plan.kernel_type = KernelType::kAicOnly;
  plan.workspace_bytes = kRuntimeWorkspaceBytes;
  FillBasicTilingData(problem, facts, chip, state, plan);
  return plan;
}

}  // namespace

uint64_t BlockBaseK(const MatmulProblem& problem, const ChipSpec& chip, uint64_t base_m,
                    uint64_t base_n) {
  return CannBaseK(problem, DeriveFacts(problem), chip, base_m, base_n);
}

absl::StatusOr<TilingPlan> StreamedAswtPlan(const MatmulProblem& problem, const ChipSpec& chip,
                                            uint64_t base_m, uint64_t base_n) {
  const ProblemFacts facts = DeriveFacts(problem);
  CubeRunState s;
  ResetBase(facts, chip, s);
  s.base_m = base_m;
  s.base_n = base_n;
  s.base_k = CannBaseK(problem, facts, chip, base_m, base_n);
  if (s.base_k == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("block ", base_m, "x", base_n, " leaves no 16-deep base_k in the L0A half"));
  }
  const uint64_t blocks = CeilDiv(facts.m, base_m) * CeilDiv(facts.n, base_n);
  s.used_core_num = std::min<uint64_t>(blocks, chip.aic_num);
  s.l0c_db = L0cDoubleBuffer(chip, base_m, base_n);
  s.ub_db = base_m * base_n * kFp32Bytes <= chip.ub_bytes ? kDoubleBuffer : 1;
  SplitTailRound(problem, facts, chip, s);
  if (!StageStreamedL1(problem, facts, chip, s)) {
    return absl::FailedPreconditionError(absl::StrCat("one base_k=", s.base_k,
                                                      " stage of A and B for block ", base_m, "x",
                                                      base_n, " does not fit L1 twice"));
  }
  s.single_core_m = base_m;
  s.single_core_n = base_n;
  return FinishAswtPlan(problem, facts, chip, s);
}

TilingPlan ResidentBandPlan(const MatmulProblem& problem, const ChipSpec& chip,
                            const ResidentBandShape& shape) {
  const ProblemFacts facts = DeriveFacts(problem);
  const bool a_side = shape.side == L1Residency::kABand;
  const uint64_t base_m = a_side ? shape.band_base : shape.streamed_base;
  const uint64_t base_n = a_side ? shape.streamed_base : shape.band_base;
  const uint64_t band = shape.band_base * shape.band_steps;
  CubeRunState s;
  ResetBase(facts, chip, s);
  s.base_m = base_m;
  s.base_n = base_n;
  s.base_k = shape.base_k;
  const uint64_t k_slices = CeilDiv(CeilAlign(facts.k, kBlock16), shape.base_k);
  if (a_side) {
    s.step_m = shape.band_steps;
    s.step_ka = k_slices;
    s.step_kb = shape.streamed_k_steps;
    s.depth_a1 = shape.band_steps * k_slices;
    s.depth_b1 = shape.streamed_k_steps * kDoubleBuffer;
    s.single_core_m = band;
    s.single_core_n = base_n;
  } else {
    s.step_n = shape.band_steps;
    s.step_kb = k_slices;
    s.step_ka = shape.streamed_k_steps;
    s.depth_b1 = shape.band_steps * k_slices;
    s.depth_a1 = shape.streamed_k_steps * kDoubleBuffer;
    s.single_core_m = base_m;
    s.single_core_n = band;
  }
  const uint64_t edge = a_side ? facts.m : facts.n;
  const uint64_t other_dim = a_side ? facts.n : facts.m;
  const uint64_t tiles = CeilDiv(edge, band) * CeilDiv(other_dim, shape.streamed_base);
  s.used_core_num = std::min<uint64_t>(tiles, chip.aic_num);
  s.l0c_db = L0cDoubleBuffer(chip, base_m, base_n);
  s.ub_db = base_m * base_n * kFp32Bytes <= chip.ub_bytes ? kDoubleBuffer : 1;
  SplitTailRoundAlong(problem, facts, chip, tiles, /*along_n=*/a_side, s);
  TilingPlan plan = FinishAswtPlan(problem, facts, chip, s);
  plan.l1_residency = shape.side;
  return plan;
}

absl::StatusOr<TilingPlan> VectorMulPlan(const MatmulProblem& problem, const ChipSpec& chip) {
  return VectorMulStrategy().DoTiling(problem, DeriveFacts(problem), chip);
}

}  // namespace npu::tiling
