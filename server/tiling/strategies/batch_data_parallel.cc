#include "server/tiling/strategies/batch_data_parallel.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

constexpr uint64_t kQuadBuffer = 4;
// CANN adds the size of the bias dtype *enum* (4 bytes) per base_n column to
// the L1 stage, not the dtype's size.
constexpr uint64_t kBiasEnumBytes = 4;
// fp32 split-K thresholds of the batched kernels.
constexpr uint64_t kFp32SplitKMinK = 1024;
constexpr uint64_t kFp32SplitKMinKHuge = 8192;
constexpr uint64_t kFp32HugeK = 268435456;

bool BothViews(const MatmulProblem& problem) {
  return ATransposedView(problem) && BTransposedView(problem);
}

}  // namespace

bool BatchUsesFp32SplitK(const MatmulProblem& problem, const ProblemFacts& facts) {
  const bool fp32 = problem.dtype_a == DataType::kFloat32 && problem.dtype_b == DataType::kFloat32;
  const bool nd = problem.format_a == Format::kNd && problem.format_b == Format::kNd;
  const uint64_t threshold = facts.k > kFp32HugeK ? kFp32SplitKMinKHuge : kFp32SplitKMinK;
  return !BothViews(problem) && fp32 && !problem.hf32 && nd && facts.k > threshold;
}

Capability BatchDataParallelStrategy::IsCapable(const MatmulProblem& problem,
                                                const ProblemFacts& facts,
                                                const ChipSpec& /*chip*/) const {
  if (ATransposedView(problem) != BTransposedView(problem)) {
    return Capability::No(Explain(facts, "only one input is a transposed non-contiguous view"));
  }
  if (!EqualBatchSlots(facts)) return Capability::No(Explain(facts, "A and B batches differ"));
  if (facts.batch_bias > 1) return Capability::No(Explain(facts, "batched bias"));
  const auto half = [](DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; };
  if (!(half(problem.dtype_a) && half(problem.dtype_b)) && problem.format_b == Format::kFractalNz) {
    return Capability::No(Explain(facts, "FRACTAL_NZ B needs float16 / bfloat16 inputs"));
  }
  return Capability::Yes(Explain(facts, facts.batch_c, " batches of ", facts.m, "x", facts.n,
                                 " blocks on one swizzled walk"));
}

absl::StatusOr<TilingPlan> BatchDataParallelStrategy::DoTiling(const MatmulProblem& problem,
                                                               const ProblemFacts& facts,
                                                               const ChipSpec& chip) const {
  // Only K_EQUAL_ZERO (ND inputs) tiles k = 0; CANN lets other k = 0
  // problems reach this block search, which divides by k: its host process
  // dies there, so no later strategy is tried.
  if (facts.k == 0) {
    return CannFaultError(
        "ASW_BASIC's block search divides by k=0; only K_EQUAL_ZERO, for ND inputs, tiles k=0");
  }
  CubeRunState state;
  ResetBase(facts, chip, state);
  RebalanceBlock(problem, facts, chip, state);
  StageL1(problem, facts, chip, state);
  uint64_t stage_bytes =
      state.base_k * state.step_ka * (state.base_m + state.base_n) * facts.a_bytes;
  if (problem.has_bias) stage_bytes += state.base_n * kBiasEnumBytes;
  state.l1_buffer_num = stage_bytes * kQuadBuffer <= chip.l1_bytes ? kQuadBuffer : kDoubleBuffer;
  LimitBaseNForBias(problem, chip, state);

  TilingPlan plan;
  const bool basic_only = BothViews(problem) || BatchUsesFp32SplitK(problem, facts);
  plan.key = BatchKey(problem, basic_only ? ApiLevel::kBasic : TensorApiLevel(problem),
                      BatchModel::kForBatch);
  plan.block_dim = chip.aic_num;
  plan.kernel_type = KernelTypeOf(KernelId::kBatchCube, plan.key);
  plan.workspace_bytes = kRuntimeWorkspaceBytes;
  plan.detail = Describe(facts, facts.batch_c, " batches of ", state.base_m, "x", state.base_n,
                         " blocks on ", state.used_core_num, " cores");
  FillBatchBasicTilingData(problem, facts, chip, state, plan);
  // Both inputs transposed views: the kernel walks C's batches inside.
  if (BothViews(problem)) {
    Set(plan.data, BatchBasicField::kInnerBatch, facts.batch_c);
  }
  return plan;
}

}  // namespace npu::tiling
