#include "server/tiling/strategies/batch_full_load.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/strategies/swizzled_data_parallel.h"

namespace npu::tiling {
namespace {

// The resident operand has at most this many rows (A) / columns (B).
constexpr uint64_t kMaxResidentEdge = 256;
// The streamed side must give each core at least this many rounds of
// 256-wide blocks unless its data alone exceeds all cores' L1.
constexpr uint64_t kMinRoundsPerCore = 4;
constexpr uint64_t kQuadBuffer = 4;

// The full-load kernels' cube reads NZ B only for 16-bit inputs.
bool NzNeedsHalfInputs(const MatmulProblem& problem) {
  const auto half = [](DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; };
  const bool supported = half(problem.dtype_a) && half(problem.dtype_b);
  return !supported && problem.format_b == Format::kFractalNz;
}

}  // namespace

std::string_view BatchFullLoadStrategy::name() const {
  return resident_ == FullLoad::kA ? "AL1_FULL_LOAD_BASIC" : "BL1_FULL_LOAD_BASIC";
}

Capability BatchFullLoadStrategy::IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                                            const ChipSpec& chip) const {
  if (AnyTransposedView(problem)) {
    return Capability::No(Explain(facts, "an input is a transposed non-contiguous view"));
  }
  if (NzNeedsHalfInputs(problem)) {
    return Capability::No(Explain(facts, "FRACTAL_NZ B needs float16 / bfloat16 inputs"));
  }
  const bool a_resident = resident_ == FullLoad::kA;
  const char* side = a_resident ? "A" : "B";
  const uint64_t resident_batch = a_resident ? facts.batch_a : facts.batch_b;
  if (resident_batch > 1) {
    return Capability::No(Explain(facts, side, " has ", resident_batch, " batches"));
  }
  const uint64_t edge = a_resident ? facts.m : facts.n;
  if (edge > kMaxResidentEdge) {
    return Capability::No(Explain(facts, a_resident ? "M=" : "N=", edge, " > ", kMaxResidentEdge));
  }
  if (facts.batch_bias > 1) return Capability::No(Explain(facts, "batched bias"));
  const uint64_t m_aligned = CeilAlign(facts.m, kBlock16);
  const uint64_t k_aligned = CeilAlign(facts.k, kBlock16);
  const uint64_t n_aligned = CeilAlign(facts.n, kBlock16);
  const uint64_t a_total = facts.batch_a * m_aligned * k_aligned * facts.a_bytes;
  const uint64_t b_total = facts.batch_b * k_aligned * n_aligned * facts.b_bytes;
  const uint64_t streamed_total = a_resident ? b_total : a_total;
  const uint64_t streamed_rounds = a_resident ? facts.batch_b * CeilDiv(facts.n, kBlock256)
                                              : facts.batch_a * CeilDiv(facts.m, kBlock256);
  if (streamed_total < chip.l1_bytes * chip.aic_num &&
      streamed_rounds < kMinRoundsPerCore * chip.aic_num) {
    return Capability::No(Explain(facts, "streamed side too small: ", streamed_total,
                                  " bytes < l1*aic and ", streamed_rounds, " blocks < ",
                                  kMinRoundsPerCore, "*aic"));
  }
  const uint64_t resident_total = a_resident ? a_total : b_total;
  if (resident_total * kDoubleBuffer > chip.l1_bytes) {
    return Capability::No(
        Explain(facts, side, " needs 2*", resident_total, " bytes > l1_bytes=", chip.l1_bytes));
  }
  return Capability::Yes(Explain(facts, "unbatched ", side, " (", resident_total,
                                 " bytes) stays in L1; ", streamed_rounds, " streamed blocks"));
}

absl::StatusOr<TilingPlan> BatchFullLoadStrategy::DoTiling(const MatmulProblem& problem,
                                                           const ProblemFacts& facts,
                                                           const ChipSpec& chip) const {
  CubeRunState state;
  ResetBase(facts, chip, state);
  StageL1(problem, facts, chip, state);
  const bool a_resident = resident_ == FullLoad::kA;
  const uint64_t k_aligned = CeilAlign(facts.k, kBlock16);
  uint64_t resident_bytes = 0, streamed_stage_bytes = 0;
  if (a_resident) {
    RETURN_IF_ERROR(PlanAFullLoad(problem, facts, chip, state));
    state.step_m = CeilDiv(facts.m, state.base_m);
    resident_bytes = k_aligned * CeilAlign(facts.m, kBlock16) * facts.a_bytes;
    streamed_stage_bytes = state.base_n * state.base_k * state.step_kb * facts.b_bytes;
  } else {
    RETURN_IF_ERROR(PlanBFullLoad(problem, facts, chip, state));
    state.step_n = CeilDiv(facts.n, state.base_n);
    resident_bytes = k_aligned * CeilAlign(facts.n, kBlock16) * facts.b_bytes;
    streamed_stage_bytes = state.base_m * state.base_k * state.step_ka * facts.a_bytes;
  }
  state.l0c_db = L0cDoubleBuffer(chip, state.base_m, state.base_n);
  // Four buffers of the streamed operand when they fit next to the resident
  // one (the bias row is not counted, as in CANN).
  state.l1_buffer_num = streamed_stage_bytes * kQuadBuffer + resident_bytes <= chip.l1_bytes
                            ? kQuadBuffer
                            : kDoubleBuffer;
  LimitBaseNForBias(problem, chip, state);

  TilingPlan plan;
  plan.key = BatchKey(problem, TensorApiLevel(problem), BatchModel::kForBatch);
  plan.key.full_load = resident_;
  plan.block_dim = static_cast<uint32_t>(state.used_core_num);
  plan.kernel_type = KernelTypeOf(KernelId::kBatchCube, plan.key);
  plan.workspace_bytes = kRuntimeWorkspaceBytes;
  plan.detail =
      Describe(facts, a_resident ? "A" : "B", " resident, ", state.used_core_num, " cores stream ",
               facts.batch_c, " batches in ", state.base_m, "x", state.base_n, " blocks");
  FillBatchBasicTilingData(problem, facts, chip, state, plan);
  return plan;
}

}  // namespace npu::tiling
