#include "server/tiling/strategies/batch_searched.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/cube_tiling_search.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/strategies/batch_data_parallel.h"
#include "server/tiling/strategies/batch_shared.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

// When batches cannot share an L0 load, the busiest core may carry at most
// 1/0.8 of the average batch count (as for ITER_BATCH_BASICAPI).
constexpr double kMinBatchBalance = 0.8;
// A batch loop needs at least two batches per L1 load to double-buffer.
constexpr uint64_t kMinBatchesPerLoad = 2;
// ITER_BATCH halves the per-core K when a load holds at most this many
// batches (more mmads would queue behind each other otherwise).
constexpr uint64_t kShortBatchLoop = 4;

// What InitTCubeTilingData hands the high-level API's search
// (matmul_v3_base_tiling_advanced.h): the op's dtypes, formats and
// transposes, M after the merge of A's batch, N, K and the bias.
CubeTilingSearchInput SearchInput(const MatmulProblem& problem, const ProblemFacts& facts) {
  CubeTilingSearchInput input;
  input.a_dtype = problem.dtype_a;
  input.b_dtype = problem.dtype_b;
  input.c_dtype = problem.dtype_c;
  if (problem.has_bias) input.bias_dtype = problem.dtype_bias;
  input.a_format = problem.format_a;
  input.b_format = problem.format_b;
  input.c_format = problem.format_c;
  input.trans_a = problem.trans_a;
  input.trans_b = problem.trans_b;
  input.m = static_cast<int64_t>(facts.m);
  input.n = static_cast<int64_t>(facts.n);
  input.k = static_cast<int64_t>(facts.k);
  return input;
}

// The run state's words of BatchMatMulV3TilingData (the two
// GetTilingDataProcess overloads of matmul_v3_base_tiling_advanced.h); the
// strategy adds its batch-loop words.
HighLevelBatchPlan RunPlan(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip, const CubeRunState& state) {
  HighLevelBatchPlan run = RunStateWords(facts, chip, state, problem.hf32);
  // CANN passes kaL1 and kbL1 separately; these strategies keep stepKa ==
  // stepKb, so one K cut serves both.
  run.l2_cache_disable = static_cast<uint32_t>(
      L2CacheDisableMode(problem, facts, chip, state, state.base_m * state.step_m,
                         state.base_k * state.step_ka, state.base_n * state.step_n));
  run.batch_bias = static_cast<uint32_t>(facts.batch_bias);
  run.slice_m =
      static_cast<uint32_t>(facts.slice_m_override != 0 ? facts.slice_m_override : state.base_m);
  run.src_nd_stride = static_cast<uint32_t>(facts.src_nd_stride);
  return run;
}

// Runs the high-level API's search (its failure fails the strategy, as
// CANN's GetTilingData does) and lays out the 90-word tiling data; the plan's
// block mirrors the run state.
absl::StatusOr<TilingPlan> SearchedPlan(const MatmulProblem& problem, const ProblemFacts& facts,
                                        const ChipSpec& chip, const CubeRunState& state,
                                        const HighLevelBatchPlan& run, const TilingKey& key,
                                        LazyText detail) {
  ASSIGN_OR_RETURN(const CubeTiling searched, SearchCubeTiling(SearchInput(problem, facts), chip));
  TilingPlan plan;
  plan.key = key;
  plan.block_dim = chip.aic_num;
  plan.kernel_type = KernelTypeOf(KernelId::kBatchHighLevel, plan.key);
  plan.workspace_bytes = kRuntimeWorkspaceBytes;
  plan.detail = std::move(detail);
  plan.data = HighLevelBatchTilingData(searched, run);
  BlockTiling& block = plan.block;
  block.base_m = state.base_m;
  block.base_n = state.base_n;
  block.base_k = state.base_k;
  block.m_l1 = Get(plan.data, HighLevelBatchField::kML1).value_or(state.base_m);
  block.n_l1 = Get(plan.data, HighLevelBatchField::kNL1).value_or(state.base_n);
  block.k_l1 = Get(plan.data, HighLevelBatchField::kKL1).value_or(state.base_k);
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
  return plan;
}

// The batch balance of loads of `per_load` batches over the cube cores.
double BatchBalance(const ProblemFacts& facts, const ChipSpec& chip, uint64_t per_load) {
  const double average = static_cast<double>(facts.batch_c) / chip.aic_num;
  const double busiest =
      static_cast<double>(CeilDiv(CeilDiv(facts.batch_c, per_load), chip.aic_num) * per_load);
  return average / busiest;
}

// ITER_BATCH_BROADCAST's view of the batch slots: the one broadcast slot,
// on which side, and the per-batch sizes.
struct BroadcastPlan {
  bool a_broadcast = false;  // A has 1 where B does not
  int axis = kBatchSlots;    // the broadcast slot
  uint64_t m = 0, n = 0, k = 0;
  uint64_t a_bytes = 0, b_bytes = 0, c_bytes = 0, bias_bytes = 0;  // one batch, aligned
  uint64_t per_load_l1 = 0;  // iterBatchL1: batches per L1 load
  uint64_t l0a = 0, l0b = 0, l0c = 0;
  bool l0_fits = false;
};

// Finds the single one-sided broadcast slot: true when found, else false
// with the reason in `why` (kept unformatted).
bool FindBroadcastSlot(const ProblemFacts& facts, BroadcastPlan& plan, LazyText& why) {
  int a_count = 0, b_count = 0;
  for (int i = 0; i < kBatchSlots; ++i) {
    const uint64_t a = facts.batch_a_dims[i], b = facts.batch_b_dims[i];
    if (a == 1 && b != 1) {
      ++a_count;
      plan.a_broadcast = true;
      plan.axis = i;
    } else if (b == 1 && a != 1) {
      ++b_count;
      plan.axis = i;
    }
  }
  if (a_count > 0 && b_count > 0) {
    why = "both sides broadcast";
    return false;
  }
  if (a_count > 1 || b_count > 1) {
    why = "more than one broadcast slot";
    return false;
  }
  if (a_count == 0 && b_count == 0) {
    why = "no broadcast slot";
    return false;
  }
  for (int i = 0; i < kBatchSlots; ++i) {
    if (i != plan.axis && facts.batch_a_dims[i] != facts.batch_b_dims[i]) {
      why = Explain(facts, "slot ", i, " differs and is not broadcast");
      return false;
    }
  }
  return true;
}

}  // namespace

namespace {

// ITER_BATCH_BROADCAST's capability; on success `plan` holds the broadcast
// slot, the per-batch sizes and the batches per L1 load.
Capability AssessBroadcast(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip, BroadcastPlan& plan) {
  if (problem.format_a != Format::kNd || problem.format_b != Format::kNd) {
    return Capability::No(Explain(facts, "an input is FRACTAL_NZ"));
  }
  // CANN refuses views whose strides, sorted, are not the running products
  // of their dims (a gap or an overlap). The only views the API states, the
  // {1, 0, 2} permutations of a dense tensor, always pass that test, so they
  // do not stop this strategy (unlike ITER_BATCH's transpose test).
  if (facts.batch_bias > 1) return Capability::No(Explain(facts, "batched bias"));
  if (LazyText why; !FindBroadcastSlot(facts, plan, why)) {
    return Capability::No(facts.explain ? std::move(why) : LazyText());
  }
  if (facts.batch_c <= chip.aic_num) {
    return Capability::No(Explain(facts, "batch=", facts.batch_c, " <= aic=", chip.aic_num));
  }
  plan.m = CeilAlign(facts.m, kBlock16);
  plan.n = CeilAlign(facts.n, kBlock16);
  plan.k = CeilAlign(facts.k, kBlock16);
  // Both operands sized with A's dtype, as CANN does.
  plan.a_bytes = plan.m * plan.k * facts.a_bytes;
  plan.b_bytes = plan.n * plan.k * facts.a_bytes;
  plan.c_bytes = plan.m * plan.n * kFp32Bytes;
  plan.bias_bytes = problem.has_bias ? plan.n * facts.bias_bytes : 0;
  if ((plan.a_bytes + plan.b_bytes + plan.bias_bytes) * kDoubleBuffer > chip.l1_bytes) {
    return Capability::No(Explain(facts, "one batch overflows half of L1"));
  }
  // Batches inside the broadcast slot; when there are none the broadcast
  // operand is one matrix that stays resident while the other streams.
  uint64_t inner = 1;
  const auto& side = plan.a_broadcast ? facts.batch_a_dims : facts.batch_b_dims;
  for (int i = plan.axis + 1; i < kBatchSlots; ++i) inner *= side[i];
  const bool resident = inner == 1;
  const uint64_t half_l1 = chip.l1_bytes / kDoubleBuffer;
  uint64_t per_load;
  if (resident) {
    const uint64_t kept = plan.a_broadcast ? plan.a_bytes : plan.b_bytes;
    const uint64_t streamed = plan.a_broadcast ? plan.b_bytes : plan.a_bytes;
    per_load = (half_l1 - kept - plan.bias_bytes) / streamed;
  } else {
    per_load = (half_l1 - plan.bias_bytes) / (plan.a_bytes + plan.b_bytes);
  }
  if (per_load < kMinBatchesPerLoad) {
    return Capability::No(Explain(facts, per_load, " batches per L1 load < ", kMinBatchesPerLoad));
  }
  per_load = std::min(per_load, CeilDiv(facts.batch_c, chip.aic_num));
  // A load must not straddle the broadcast: take a divisor of the batches
  // that share one broadcast operand.
  const auto& other = plan.a_broadcast ? facts.batch_b_dims : facts.batch_a_dims;
  const uint64_t extent = resident ? other[plan.axis] : inner;
  if (extent > 1) {
    uint64_t divisor = std::min(per_load, extent);
    while (divisor >= kMinBatchesPerLoad && extent % divisor != 0) --divisor;
    per_load = divisor;
  }
  if (per_load < kMinBatchesPerLoad) {
    return Capability::No(
        Explain(facts, "no divisor of ", extent, " >= ", kMinBatchesPerLoad, " fits an L1 load"));
  }
  plan.l0a = chip.l0a_bytes / kDoubleBuffer / plan.a_bytes;
  plan.l0b = chip.l0b_bytes / kDoubleBuffer / plan.b_bytes;
  plan.l0c = chip.l0c_bytes / kDoubleBuffer / plan.c_bytes;
  // A single-buffered L0A / L0B load of several batches still saves
  // fixpipe instructions.
  plan.l0_fits =
      std::min({plan.l0a, plan.l0b, plan.l0c}) >= 1 ||
      (chip.l0a_bytes / plan.a_bytes >= 1 && chip.l0b_bytes / plan.b_bytes >= 1 && plan.l0c > 1);
  if (!plan.l0_fits && BatchBalance(facts, chip, per_load) < kMinBatchBalance) {
    return Capability::No(Explain(facts, "one batch overflows L0 and the batch balance ",
                                  BatchBalance(facts, chip, per_load), " < ", kMinBatchBalance));
  }
  plan.per_load_l1 = per_load;
  return Capability::Yes(Explain(facts, plan.a_broadcast ? "A" : "B", " broadcast in batch slot ",
                                 plan.axis, ", ", per_load, " batches per L1 load"));
}

}  // namespace

Capability BatchIterateBroadcastStrategy::IsCapable(const MatmulProblem& problem,
                                                    const ProblemFacts& facts,
                                                    const ChipSpec& chip) const {
  BroadcastPlan plan;
  return AssessBroadcast(problem, facts, chip, plan);
}

absl::StatusOr<TilingPlan> BatchIterateBroadcastStrategy::DoTiling(const MatmulProblem& problem,
                                                                   const ProblemFacts& facts,
                                                                   const ChipSpec& chip) const {
  // IsCapable() holds, so the assessment repeats its numbers.
  BroadcastPlan plan;
  const Capability capability = AssessBroadcast(problem, facts, chip, plan);
  uint64_t base_m = CeilAlign(facts.m, kBlock16), base_n = CeilAlign(facts.n, kBlock16);
  uint64_t base_k = CeilAlign(facts.k, kBlock16);
  const uint64_t a_bytes = base_m * base_k * facts.a_bytes;
  const uint64_t b_bytes = base_n * base_k * facts.a_bytes;
  const uint64_t c_bytes = base_m * base_n * kFp32Bytes;
  const uint64_t l0a = chip.l0a_bytes / kDoubleBuffer / a_bytes;
  const uint64_t l0b = chip.l0b_bytes / kDoubleBuffer / b_bytes;
  const uint64_t l0c = chip.l0c_bytes / kDoubleBuffer / c_bytes;
  const bool l0_fits = std::min({l0a, l0b, l0c}) >= 1 ||
                       (chip.l0a_bytes / a_bytes >= 1 && chip.l0b_bytes / b_bytes >= 1 && l0c > 1);
  if (!l0_fits) {
    CutBatchBaseBlock(problem, chip, facts.a_bytes, facts.a_bytes, base_m, base_n, base_k);
  }
  const uint64_t per_load_l0 = std::max<uint64_t>(std::min({l0a, l0b, l0c, plan.per_load_l1}), 1);
  // CANN sets only the blocks, the core count and the batch loop; every
  // other run word keeps its default (matmul_v3_common_advanced.h), dbL0C 0
  // among them.
  CubeRunState state;
  state.used_core_num = chip.aic_num;
  state.base_m = base_m;
  state.base_n = base_n;
  state.base_k = base_k;
  state.l0c_db = 0;
  HighLevelBatchPlan run = RunPlan(problem, facts, chip, state);
  run.iter_batch_l1 = static_cast<uint32_t>(plan.per_load_l1);
  run.iter_batch_l0 = static_cast<uint32_t>(per_load_l0);
  run.broadcast_axis_a = plan.a_broadcast ? static_cast<uint32_t>(plan.axis) : kBatchSlots;
  run.broadcast_axis_b = plan.a_broadcast ? kBatchSlots : static_cast<uint32_t>(plan.axis);
  const TilingKey key = BatchKey(
      problem, ApiLevel::kTensor,
      plan.a_broadcast ? BatchModel::kIterBatchBroadcastA : BatchModel::kIterBatchBroadcastB);
  return SearchedPlan(problem, facts, chip, state, run, key,
                      Describe(facts, capability.reason, ", iterBatchL0=", per_load_l0, ", base ",
                               base_m, "x", base_n, "x", base_k));
}

Capability BatchIterateSearchedStrategy::IsCapable(const MatmulProblem& problem,
                                                   const ProblemFacts& facts,
                                                   const ChipSpec& chip) const {
  if (AnyTransposedView(problem)) {
    return Capability::No(Explain(facts, "an input is a transposed non-contiguous view"));
  }
  if (problem.format_a != Format::kNd || problem.format_b != Format::kNd) {
    return Capability::No(Explain(facts, "an input is FRACTAL_NZ"));
  }
  if (facts.batch_bias > 1) return Capability::No(Explain(facts, "batched bias"));
  if (!EqualBatchSlots(facts)) return Capability::No(Explain(facts, "A and B batches differ"));
  const uint64_t m = CeilAlign(facts.m, kBlock16), n = CeilAlign(facts.n, kBlock16);
  const uint64_t k = CeilAlign(facts.k, kBlock16);
  const uint64_t bias_bytes = problem.has_bias ? n * facts.bias_bytes : 0;
  const uint64_t inputs_bytes = (m * k + k * n) * facts.a_bytes;
  // The whole L1 (the API double-buffers inside it).
  uint64_t per_load = chip.l1_bytes / (inputs_bytes + bias_bytes);
  if (per_load > 1)
    per_load = std::max<uint64_t>(std::min(per_load, CeilDiv(facts.batch_c, chip.aic_num)), 1);
  if (per_load <= 1) {
    return Capability::No(Explain(facts, "L1 holds ", per_load, " batch(es) per load"));
  }
  const uint64_t l0a = FloorDiv(chip.l0a_bytes / kDoubleBuffer, m * k * facts.a_bytes);
  const uint64_t l0b = FloorDiv(chip.l0b_bytes / kDoubleBuffer, k * n * facts.a_bytes);
  const uint64_t l0c = chip.l0c_bytes / kDoubleBuffer / (m * n * kFp32Bytes);
  const uint64_t per_half_l1 = chip.l1_bytes / kDoubleBuffer / inputs_bytes;
  if (std::min({l0a, l0b, l0c}) < 1 && BatchBalance(facts, chip, per_half_l1) < kMinBatchBalance) {
    return Capability::No(Explain(facts, "one batch overflows L0 and the batch balance ",
                                  BatchBalance(facts, chip, per_half_l1), " < ", kMinBatchBalance));
  }
  return Capability::Yes(Explain(facts, per_load, " batches per L1 load"));
}

absl::StatusOr<TilingPlan> BatchIterateSearchedStrategy::DoTiling(const MatmulProblem& problem,
                                                                  const ProblemFacts& facts,
                                                                  const ChipSpec& chip) const {
  const uint64_t m_al = CeilAlign(facts.m, kBlock16), n_al = CeilAlign(facts.n, kBlock16);
  const uint64_t k_al = CeilAlign(facts.k, kBlock16);
  const uint64_t bias_bytes = problem.has_bias ? n_al * facts.bias_bytes : 0;
  uint64_t per_load = chip.l1_bytes / ((m_al * k_al + k_al * n_al) * facts.a_bytes + bias_bytes);
  per_load = std::max<uint64_t>(std::min(per_load, CeilDiv(facts.batch_c, chip.aic_num)), 1);
  CubeRunState state;
  ResetBase(facts, chip, state);
  StageL1(problem, facts, chip, state);
  bool several_outputs = false;
  if (state.base_m >= facts.m && state.base_n >= facts.n) {
    state.base_m = m_al;
    state.base_n = n_al;
    several_outputs = true;
  }
  const uint64_t base_k_a = chip.l0a_bytes / kDoubleBuffer / state.base_m / facts.a_bytes;
  const uint64_t base_k_b = chip.l0b_bytes / kDoubleBuffer / state.base_n / facts.b_bytes;
  const uint64_t base_k = FloorAlign(std::min(base_k_a, base_k_b), kBlock16);
  const uint64_t core_k =
      base_k < facts.k || per_load <= kShortBatchLoop ? facts.k / kDoubleBuffer : facts.k;
  state.base_k = std::max(CeilAlign(std::min(core_k, base_k), kBlock16), state.base_k);
  const uint64_t step_k = CeilDiv(facts.k, state.base_k);
  const uint64_t even_load = FloorAlign(per_load, 2);
  uint64_t outputs =
      several_outputs
          ? std::min(chip.l0c_bytes / (state.base_m * state.base_n * state.l0c_db * kFp32Bytes),
                     even_load)
          : 1;
  if (outputs == even_load) outputs = even_load >> 1;
  // One core computes whole batches: the single-core shape is the problem,
  // L1 holds all of its K (batch_matmul_v3_iterbatch_tiling.cpp).
  state.single_core_m = facts.m;
  state.single_core_n = facts.n;
  state.single_core_k = facts.k;
  state.step_ka = step_k;
  state.step_kb = step_k;
  state.step_m = CeilDiv(facts.m, state.base_m);
  state.step_n = CeilDiv(facts.n, state.base_n);
  state.depth_a1 = state.step_ka * state.step_m;
  state.depth_b1 = state.step_kb * state.step_n;
  HighLevelBatchPlan run = RunPlan(problem, facts, chip, state);
  run.iter_batch = static_cast<uint32_t>(even_load);
  run.batch_out_num = static_cast<uint32_t>(outputs);
  const TilingKey key = BatchKey(problem, ApiLevel::kHigh, BatchModel::kIterBatchSingleBias);
  return SearchedPlan(
      problem, facts, chip, state, run, key,
      Describe(facts, "iterBatch=", even_load, ", batchOutNum=", outputs, ", base ", state.base_m,
               "x", state.base_n, "x", state.base_k, ", stepKa=stepKb=", step_k));
}

Capability BatchSearchedFallbackStrategy::IsCapable(const MatmulProblem& /*problem*/,
                                                    const ProblemFacts& facts,
                                                    const ChipSpec& /*chip*/) const {
  return Capability::Yes(Explain(facts, "always capable (last strategy)"));
}

absl::StatusOr<TilingPlan> BatchSearchedFallbackStrategy::DoTiling(const MatmulProblem& problem,
                                                                   const ProblemFacts& facts,
                                                                   const ChipSpec& chip) const {
  CubeRunState state;
  ResetBase(facts, chip, state);
  StageL1(problem, facts, chip, state);
  state.ub_db = state.base_m * state.base_n * kFp32Bytes <= chip.ub_bytes ? kDoubleBuffer : 1;
  const bool both_views = ATransposedView(problem) && BTransposedView(problem);
  const bool tensor = problem.op == MatmulOp::kBatchMatMulV3 && !both_views &&
                      !BatchUsesFp32SplitK(problem, facts) && !problem.avoid_tensor_api;
  HighLevelBatchPlan run = RunPlan(problem, facts, chip, state);
  if (both_views) run.inner_batch = static_cast<uint32_t>(facts.batch_c);
  const TilingKey key = BatchKey(problem, tensor ? ApiLevel::kTensor : ApiLevel::kHigh,
                                 tensor ? BatchModel::kBroadcastBatch : BatchModel::kForBatch);
  return SearchedPlan(
      problem, facts, chip, state, run, key,
      Describe(facts, tensor ? "TENSOR_LEVEL, BROADCAST_BATCH" : "HIGH_LEVEL, FOR_BATCH", ", base ",
               state.base_m, "x", state.base_n, "x", state.base_k, ", stepKa=", state.step_ka,
               ", ubDB=", state.ub_db,
               both_views ? absl::StrCat(", innerBatch=", facts.batch_c) : ""));
}

}  // namespace npu::tiling
