#include "server/tiling/strategies/transpose_batch.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/cube_tiling_search.h"
#include "server/tiling/custom_plans.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/strategies/batch_shared.h"
#include "server/tiling/strategies/transpose_quant_l1.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/transpose/transpose_parse.h"

namespace npu::tiling {
namespace {

using transpose::PrecisionMode;
using transpose::TransposeFacts;

// The one decode shape whose blocks TransposeBatchMatMul rebalances across
// the cores when the batch leaves cores idle: one token's rows (m <= 16)
// against n = 1024, k = 4096 (CANN states it as the only shape its load
// balance supports).
constexpr uint64_t kBalanceMaxM = 16;
constexpr uint64_t kBalanceN = 1024;
constexpr uint64_t kBalanceK = 4096;
// An INT8 y's dequantization words (64-bit, one per column of the block)
// are staged in L1 beside the blocks.
constexpr uint64_t kScaleWordBytes = 8;

// CANN's ops::CeilDiv and ops::CeilAlign: a divisor of 0 gives x (CeilDiv)
// and 0 (CeilAlign), not a fault.
uint64_t CeilQuot(uint64_t x, uint64_t y) { return y == 0 || x == 0 ? x : (x + y - 1) / y; }
uint64_t AlignUp(uint64_t x, uint64_t align) { return align == 0 ? 0 : CeilQuot(x, align) * align; }

// ResetBasicBlock: adopts a rebalanced (base_m, base_n) when a base_k of at
// least one alignment unit still fits the L0A half beside it.
bool AdoptBalancedBlock(const ProblemFacts& facts, const ChipSpec& chip, bool trans_b,
                        uint64_t base_m, uint64_t base_n, CubeRunState& state) {
  // K is the inner axis of both operands when B is transposed: a 256-byte
  // unit then; else a fractal of 16.
  const uint64_t k_align = trans_b ? 256 / facts.a_bytes : kBlock16;
  const uint64_t k_aligned = AlignUp(facts.k, k_align);
  uint64_t max_base_k = chip.l0a_bytes / kDoubleBuffer / facts.a_bytes / std::max(base_m, base_n);
  if (max_base_k < k_align) return false;
  state.base_m = base_m;
  state.base_n = base_n;
  max_base_k = FloorAlign(max_base_k, k_align);
  state.base_k = std::min(k_aligned, max_base_k);
  return true;
}

// BaseLoadBalance: spreads the output of one batch over aic / batch cores.
// `batch` is not 0 (the caller reports CANN's fault there).
void BalanceDecodeBlock(const ProblemFacts& facts, const ChipSpec& chip, bool trans_b,
                        uint64_t batch, CubeRunState& state) {
  const uint64_t m = facts.m, n = facts.n;
  // A is never read transposed: M aligns to a fractal; N to 256 bytes
  // unless B is transposed (K its inner axis).
  const uint64_t m_align = kBlock16;
  const uint64_t n_align = trans_b ? kBlock16 : 256 / facts.a_bytes;
  const uint64_t m_tiles = CeilQuot(m, m_align), n_tiles = CeilQuot(n, n_align);
  const uint64_t cores = chip.aic_num / batch;
  if (!(m_tiles * n_tiles >= cores || trans_b)) return;
  uint64_t m_cores = CeilQuot(m, state.base_m), n_cores = CeilQuot(n, state.base_n);
  uint64_t base_m = state.base_m, base_n = state.base_n;
  if (m_tiles < n_tiles || (m_tiles == n_tiles && n_align == kBlock16)) {
    base_m = AlignUp(CeilQuot(m, m_cores), m_align);
    m_cores = CeilQuot(m, base_m);
    n_cores = m_cores == 0 ? 0 : cores / m_cores;
    base_n = AlignUp(CeilQuot(n, n_cores), n_align);
  } else {
    base_n = AlignUp(CeilQuot(n, n_cores), n_align);
    n_cores = CeilQuot(n, base_n);
    m_cores = n_cores == 0 ? 0 : cores / n_cores;
    base_m = AlignUp(CeilQuot(m, m_cores), m_align);
  }
  // Halve the longer side of the block while the cores allow.
  const auto resplit = [&] {
    base_m = AlignUp(CeilQuot(m, m_cores), m_align);
    base_n = AlignUp(CeilQuot(n, n_cores), n_align);
    m_cores = CeilQuot(m, base_m);
    n_cores = CeilQuot(n, base_n);
  };
  // (The core counts divided by here are at least 1: m <= 16 makes one M
  // block.)
  while (base_n >= base_m * 2 && n_cores < cores / 2 && base_n != n_align) {
    n_cores *= 2;
    m_cores = n_cores == 0 ? 0 : cores / n_cores;
    resplit();
  }
  while (base_m >= base_n * 2 && m_cores < cores / 2 && base_m != m_align) {
    m_cores *= 2;
    n_cores = m_cores == 0 ? 0 : cores / m_cores;
    resplit();
  }
  (void)AdoptBalancedBlock(facts, chip, trans_b, base_m, base_n, state);
}

// The words of BatchMatMulV3TilingData beside the search's: the run state,
// the one batch in every batch word (slot 3), hf32's mmad flag and the L2
// bypass (both GetTilingDataProcess overloads of MatMulV3BaseTiling).
HighLevelBatchPlan RunWords(const ProblemFacts& facts, const ChipSpec& chip,
                            const CubeRunState& state, bool trans_b, bool hf32) {
  HighLevelBatchPlan run = RunStateWords(facts, chip, state, hf32);
  run.l2_cache_disable = static_cast<uint32_t>(L2CacheDisableMode(
      /*trans_a=*/false, trans_b, facts, chip, state, state.base_m * state.step_m,
      state.base_k * state.step_ka, state.base_k * state.step_kb, state.base_n * state.step_n));
  run.slice_m = static_cast<uint32_t>(state.base_m);
  run.src_nd_stride = 1;
  return run;
}

// Fills `plan`: the search on the problem as InitTCubeTilingData states it
// (x1 and y ND, x2 in its format, B transposed by perm_x2, no bias), its
// failure failing the strategy as CANN's GetTilingData does, then the
// 90 words with the batch split and (MXFP8) mxTypePara over them.
absl::Status FillPlan(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                      const CubeRunState& state, const TransposeFacts& tf, KernelId kernel,
                      const TilingKey& key, std::optional<uint32_t> mx_type_para, LazyText detail,
                      TilingPlan& plan) {
  CubeTilingSearchInput input;
  input.a_dtype = problem.dtype_a;
  input.b_dtype = problem.dtype_b;
  input.c_dtype = problem.dtype_c;
  input.b_format = problem.format_b;
  input.trans_b = tf.trans_b;
  input.m = static_cast<int64_t>(facts.m);
  input.n = static_cast<int64_t>(facts.n);
  input.k = static_cast<int64_t>(facts.k);
  ASSIGN_OR_RETURN(const CubeTiling searched, SearchCubeTiling(input, chip));
  plan.key = key;
  plan.block_dim = chip.aic_num;
  plan.kernel_type = KernelTypeOf(kernel, key);
  plan.detail = std::move(detail);
  plan.data =
      HighLevelBatchTilingData(searched, RunWords(facts, chip, state, tf.trans_b, problem.hf32));
  plan.data.kernel = kernel;
  using F = HighLevelBatchField;
  Set(plan.data, F::kBatchSplitFactor, tf.batch_split_factor);
  if (mx_type_para.has_value()) Set(plan.data, F::kMxTypePara, *mx_type_para);
  BlockTiling& block = plan.block;
  block.base_m = state.base_m;
  block.base_n = state.base_n;
  block.base_k = state.base_k;
  block.m_l1 = Get(plan.data, F::kML1).value_or(state.base_m);
  block.n_l1 = Get(plan.data, F::kNL1).value_or(state.base_n);
  block.k_l1 = Get(plan.data, F::kKL1).value_or(state.base_k);
  block.step_m = state.step_m;
  block.step_n = state.step_n;
  block.step_ka = state.step_ka;
  block.step_kb = state.step_kb;
  block.depth_a1 = state.depth_a1;
  block.depth_b1 = state.depth_b1;
  block.single_core_m = state.single_core_m;
  block.single_core_n = state.single_core_n;
  block.single_core_k = state.single_core_k;
  block.l1_buffer_num = state.l1_buffer_num;
  block.l0c_db = state.l0c_db;
  block.ub_db = state.ub_db;
  return absl::OkStatus();
}

TilingKey KeyOf(const TransposeFacts& tf, KeyLayout layout) {
  TilingKey key;
  key.layout = layout;
  key.perm_x1 = tf.perm_x1;
  key.perm_x2 = tf.perm_x2;
  key.batch_split = tf.batch_split_factor > 1 ? 1 : 0;
  return key;
}

}  // namespace

Capability TransposeBatchStrategy::IsCapable(const MatmulProblem& /*problem*/,
                                             const ProblemFacts& facts,
                                             const ChipSpec& /*chip*/) const {
  return Capability::Yes(Explain(facts, "always capable (the only strategy)"));
}

namespace {

// TransposeBatchMatMul's plan from the base block on: MatMulV3's L1 staging
// (an INT8 y's scale words take L1 first), the key, the struct.
absl::StatusOr<TilingPlan> FinishBatchPlan(const MatmulProblem& problem, const ProblemFacts& facts,
                                           const ChipSpec& chip, const TransposeFacts& tf,
                                           CubeRunState& state, bool balanced) {
  const uint64_t scale_bytes = tf.has_scale ? state.base_n * kScaleWordBytes : 0;
  StageL1Steps(/*k_inner=*/true, chip.l1_bytes - scale_bytes, facts, chip, state);
  TilingKey key = KeyOf(tf, KeyLayout::kTransposeBatch);
  key.api_level = ApiLevel::kTensor;
  // The plan is built in place and every path returns it by name, so it is
  // not moved on its way out.
  absl::StatusOr<TilingPlan> plan(absl::in_place);
  absl::Status filled =
      FillPlan(problem, facts, chip, state, tf, KernelId::kTransposeBatch, key, std::nullopt,
               Describe(facts, balanced ? "decode-shape load balance, " : "", "base ", state.base_m,
                        "x", state.base_n, "x", state.base_k, ", stepKa=stepKb=", state.step_ka,
                        tf.batch_split_factor > 1
                            ? Describe(facts, ", batch split in ", tf.batch_split_factor)
                            : LazyText()),
               *plan);
  if (filled.ok()) {
    plan->workspace_bytes = kRuntimeWorkspaceBytes;
  } else {
    plan = std::move(filled);
  }
  return plan;
}

// TransposeQuantBatchMatMul's L1 staging: MatMulV3's in FP8 mode, its own
// otherwise (with MXFP8's scale factors in `mx_type_para`).
absl::Status StageQuantPlanL1(const ProblemFacts& facts, const ChipSpec& chip,
                              const TransposeFacts& tf, CubeRunState& state,
                              std::optional<uint32_t>& mx_type_para) {
  if (tf.mode == PrecisionMode::kFp8) {
    StageL1Steps(/*k_inner=*/true, chip.l1_bytes, facts, chip, state);
    return absl::OkStatus();
  }
  QuantL1Input input;
  input.mx = tf.mode == PrecisionMode::kMxFp8;
  input.l1_bytes = chip.l1_bytes;
  input.base_m = state.base_m;
  input.base_n = state.base_n;
  input.base_k = state.base_k;
  input.a_bytes = facts.a_bytes;
  input.b_bytes = facts.b_bytes;
  input.k = facts.k;
  ASSIGN_OR_RETURN(const QuantL1Stage stage, StageQuantL1(input));
  state.depth_a1 = stage.depth_a1;
  state.depth_b1 = stage.depth_b1;
  state.step_ka = stage.step_ka;
  state.step_kb = stage.step_kb;
  state.single_core_m = state.base_m;
  state.single_core_n = state.base_n;
  if (input.mx) mx_type_para = MxTypePara(stage.scale_factor_a, stage.scale_factor_b);
  return absl::OkStatus();
}

// TransposeQuantBatchMatMul's plan from the base block on: the L1 staging,
// the key, the struct, mxTypePara. (Built in place and returned by name
// from every path, as FinishBatchPlan's.)
absl::StatusOr<TilingPlan> FinishQuantPlan(const MatmulProblem& problem, const ProblemFacts& facts,
                                           const ChipSpec& chip, const TransposeFacts& tf,
                                           CubeRunState& state) {
  absl::StatusOr<TilingPlan> plan(absl::in_place);
  std::optional<uint32_t> mx_type_para;
  absl::Status status = StageQuantPlanL1(facts, chip, tf, state, mx_type_para);
  if (status.ok()) {
    TilingKey key = KeyOf(tf, KeyLayout::kTransposeQuant);
    key.precision_mode = static_cast<uint8_t>(tf.mode);
    status =
        FillPlan(problem, facts, chip, state, tf, KernelId::kTransposeQuantBatch, key, mx_type_para,
                 Describe(facts, transpose::PrecisionModeName(tf.mode), ", base ", state.base_m,
                          "x", state.base_n, "x", state.base_k, ", stepKa=", state.step_ka,
                          ", stepKb=", state.step_kb),
                 *plan);
  }
  if (status.ok()) {
    plan->quant_mode = transpose::PrecisionModeName(tf.mode);
    plan->workspace_bytes = 0;
  } else {
    plan = std::move(status);
  }
  return plan;
}

}  // namespace

absl::StatusOr<TilingPlan> TransposeBatchStrategy::DoTiling(const MatmulProblem& problem,
                                                            const ProblemFacts& facts,
                                                            const ChipSpec& chip) const {
  const TransposeFacts tf = transpose::TransposeFactsOf(problem);
  CubeRunState state;
  ResetBase(facts, chip, state);
  const uint64_t batch = facts.batch_c;
  const bool decode_shape = facts.m <= kBalanceMaxM && facts.n == kBalanceN && facts.k == kBalanceK;
  // The tail counts that multiply the batch here are still 1.
  const bool balanced = decode_shape && state.tail_m_cnt * state.tail_n_cnt * batch < chip.aic_num;
  if (balanced) {
    if (batch == 0) {
      return CannFaultError(
          "BaseLoadBalance divides the AI core count by the batch, which is 0 (m <= 16, n = "
          "1024, k = 4096)");
    }
    BalanceDecodeBlock(facts, chip, tf.trans_b, batch, state);
  }
  return FinishBatchPlan(problem, facts, chip, tf, state, balanced);
}

Capability TransposeQuantBatchStrategy::IsCapable(const MatmulProblem& problem,
                                                  const ProblemFacts& facts,
                                                  const ChipSpec& chip) const {
  const TransposeFacts tf = transpose::TransposeFactsOf(problem);
  if (tf.mode != PrecisionMode::kMxFp8 && chip.aiv_num != 2 * chip.aic_num) {
    return Capability::No(Explain(facts, transpose::PrecisionModeName(tf.mode),
                                  " mode needs aiv_num == 2 * aic_num (the vector cores "
                                  "dequantize); got aiv_num=",
                                  chip.aiv_num, ", aic_num=", chip.aic_num));
  }
  return Capability::Yes(Explain(facts, transpose::PrecisionModeName(tf.mode), " mode"));
}

absl::StatusOr<TilingPlan> TransposeQuantBatchStrategy::DoTiling(const MatmulProblem& problem,
                                                                 const ProblemFacts& facts,
                                                                 const ChipSpec& chip) const {
  const TransposeFacts tf = transpose::TransposeFactsOf(problem);
  CubeRunState state;
  ResetBase(facts, chip, state);
  return FinishQuantPlan(problem, facts, chip, tf, state);
}

absl::StatusOr<TilingPlan> TransposePlanWithBlock(const MatmulProblem& problem,
                                                  const ChipSpec& chip, uint64_t base_m,
                                                  uint64_t base_n) {
  if (!transpose::IsTransposeOp(problem.op)) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(MatmulOpName(problem.op)), " is not a transposed batch matmul"));
  }
  const ProblemFacts facts = DeriveFacts(problem);
  const TransposeFacts tf = transpose::TransposeFactsOf(problem);
  CubeRunState state;
  ResetBase(facts, chip, state);
  if (!AdoptBalancedBlock(facts, chip, tf.trans_b, base_m, base_n, state)) {
    return absl::FailedPreconditionError(
        absl::StrCat("block ", base_m, "x", base_n, " leaves L0A no room for a K step"));
  }
  absl::StatusOr<TilingPlan> plan =
      problem.op == MatmulOp::kTransposeBatchMatMul
          ? FinishBatchPlan(problem, facts, chip, tf, state, /*balanced=*/false)
          : FinishQuantPlan(problem, facts, chip, tf, state);
  if (plan.ok()) plan->strategy = "BASE";
  return plan;
}

}  // namespace npu::tiling
