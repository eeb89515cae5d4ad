#include "server/tiling/strategies/stream_k.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"

namespace npu::tiling {
namespace {

// Stream-K pays a workspace round trip per partial sum; below 8192 elements
// of K (or 256 bytes of K per cube core for SK, 128 for DP+SK) the split
// does not win it back.
constexpr uint64_t kMinK = 8192;
// fp32 slices of this many K elements or more are split again inside the
// core, and so are the fp32 split-K data-parallel plans.
constexpr uint64_t kFp32SplitKThreshold = 2048;
// The workspace holds one 256x256 fp32 partial tile per cube core.
constexpr uint64_t kPartialTileBytes = kBlock256 * kBlock256 * kFp32Bytes;

// SK: few blocks, long K.
Capability CheckSplitK(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) {
  const uint64_t k_aligned = CeilAlign(facts.k, kBlock256);
  const uint64_t k_needed = std::max<uint64_t>(kMinK, chip.aic_num * 256) / facts.a_bytes;
  if (k_aligned < k_needed) {
    return Capability::No(Explain(facts, "SK: align256(K)=", k_aligned, " < max(8192, ",
                                  chip.aic_num, "*256)/", facts.a_bytes, "=", k_needed));
  }
  // fp32 without hf32 counts blocks of 32 (one 32-byte line) instead of 256.
  const uint64_t block = (facts.a_bytes == 4 && !problem.hf32) ? 32 : kBlock256;
  const uint64_t blocks = CeilDiv(facts.m, block) * CeilDiv(facts.n, block);
  if (blocks > chip.aic_num / 2) {
    return Capability::No(Explain(facts, "SK: ceil(M/", block, ")*ceil(N/", block, ")=", blocks,
                                  " > aic/2=", chip.aic_num / 2));
  }
  return Capability::Yes(Explain(facts, "SK: K=", facts.k, " >= ", k_needed, " and ", blocks,
                                 " blocks <= aic/2=", chip.aic_num / 2));
}

// DP+SK: whole rounds of 256x256 blocks plus a short tail round.
Capability CheckDataParallelSplitK(const ProblemFacts& facts, const ChipSpec& chip) {
  const uint64_t k_needed = std::max<uint64_t>(kMinK, chip.aic_num * 128) / facts.a_bytes;
  if (facts.m % kBlock256 != 0 || facts.n % kBlock256 != 0) {
    return Capability::No(
        Explain(facts, "DP+SK: M=", facts.m, " or N=", facts.n, " is not a multiple of 256"));
  }
  if (facts.k < k_needed) {
    return Capability::No(Explain(facts, "DP+SK: K=", facts.k, " < max(8192, ", chip.aic_num,
                                  "*128)/", facts.a_bytes, "=", k_needed));
  }
  const uint64_t blocks = (facts.m / kBlock256) * (facts.n / kBlock256);
  const uint64_t tail = blocks % chip.aic_num;
  if (blocks < chip.aic_num) {
    return Capability::No(
        Explain(facts, "DP+SK: ", blocks, " blocks < aic=", chip.aic_num, " (no full round)"));
  }
  if (tail == 0) {
    return Capability::No(Explain(facts, "DP+SK: ", blocks, " blocks fill whole rounds of ",
                                  chip.aic_num, " (no tail)"));
  }
  if (tail > chip.aic_num / 2) {
    return Capability::No(
        Explain(facts, "DP+SK: tail of ", tail, " blocks > aic/2=", chip.aic_num / 2));
  }
  return Capability::Yes(Explain(facts, "DP+SK: ", blocks, " blocks, tail round of ", tail,
                                 " <= aic/2=", chip.aic_num / 2));
}

// Output mode of the SK schedule: an N that is not 16-aligned goes out
// through the AIV cores (fixpipe 1:2) unless the output is tiny.
L0cToOut SplitKOutput(const ProblemFacts& facts) {
  if (facts.n > 64 && facts.n % kBlock16 != 0 && facts.m > 2 && facts.m * facts.n >= 256) {
    return L0cToOut::kNdFixpipe1To2;
  }
  return L0cToOut::kOnTheFly;
}

// How the K reduction is laid out over the cube cores, with the output mode
// it needs and the line the answer shows for it.
struct KSplit {
  uint64_t blocks = 0;
  L0cToOut out = L0cToOut::kOnTheFly;
  LazyText detail;
};

// SK: all blocks run in one round and each block's K is split over the
// cores the blocks leave idle.
KSplit SplitKAcrossCores(const ProblemFacts& facts, const ChipSpec& chip, uint64_t m_cnt,
                         uint64_t n_cnt, CubeRunState& state) {
  // A block count between a third and a half of the cores is rounded up to
  // half so each block gets exactly two K slices.
  const uint64_t half = chip.aic_num / 2;
  const uint64_t third = chip.aic_num / 3;
  if (m_cnt > third && m_cnt < half) m_cnt = half;
  if (n_cnt > third && n_cnt < half) n_cnt = half;
  KSplit split;
  split.blocks = m_cnt * n_cnt;
  state.base_m = CeilAlign(CeilDiv(facts.m, m_cnt), kBlock16);
  state.base_n = CeilAlign(CeilDiv(facts.n, n_cnt), kBlock16);
  state.tail_k_cnt = FloorDiv(chip.aic_num, split.blocks);
  state.single_core_k = CeilDiv(facts.k, state.tail_k_cnt);
  split.out = SplitKOutput(facts);
  split.detail = Describe(facts, "SK: ", split.blocks, " blocks x ", state.tail_k_cnt, " K slices");
  return split;
}

// DP+SK: whole rounds run data-parallel and the tail round's blocks share
// the idle cores. The slice count is recomputed from the rounded-up slice so
// no core gets an empty slice.
KSplit SplitTailRoundK(const ProblemFacts& facts, const ChipSpec& chip, uint64_t blocks,
                       CubeRunState& state) {
  const uint64_t tail = blocks % chip.aic_num;
  state.tail_k_cnt = chip.aic_num / tail;
  const uint64_t slice = CeilDiv(facts.k, state.tail_k_cnt);
  state.tail_k_cnt = CeilDiv(facts.k, slice);
  state.single_core_k = slice;
  KSplit split;
  split.blocks = blocks;
  split.detail =
      Describe(facts, "DP+SK: ", blocks / chip.aic_num, " data-parallel rounds, tail of ", tail,
               " blocks x ", state.tail_k_cnt, " K slices");
  return split;
}

// A K slice of an NZ-format B must start on a fractal boundary: NZ fractals
// are 16 deep in K, 8 for transposed fp32.
void AlignSliceToNzFractal(const MatmulProblem& problem, const ProblemFacts& facts,
                           CubeRunState& state) {
  if (problem.format_b == Format::kNd) return;
  const bool full_fractal = facts.b_bytes == 2 || (facts.b_bytes == 4 && !problem.trans_b);
  state.single_core_k = CeilAlign(state.single_core_k, full_fractal ? kBlock16 : kBlock16 / 2);
}

// Stream-K sizes base_k against a 64 KiB L0A regardless of the platform, as
// CANN does, and never beyond one core's slice.
void ChooseStreamKBaseK(const MatmulProblem& problem, const ProblemFacts& facts,
                        CubeRunState& state) {
  const uint64_t base_k_align = KIsInnerAxis(problem) ? 128 / facts.a_bytes : kBlock16;
  constexpr uint64_t kStreamKL0aBytes = 64 * 1024;
  const uint64_t max_base_k = FloorAlign(
      kStreamKL0aBytes / kDoubleBuffer / facts.a_bytes / std::max(state.base_m, state.base_n),
      base_k_align);
  state.base_k = std::min(state.single_core_k, max_base_k);
}

// Adjusts the L1 steps StageL1() chose to Stream-K's kernels.
void RebalanceL1Steps(const MatmulProblem& problem, const ChipSpec& chip, uint64_t blocks,
                      CubeRunState& state) {
  // Square blocks: give A the deeper L1 pipeline.
  if (state.base_m == state.base_n && state.depth_b1 == state.depth_a1 * 2) {
    state.depth_a1 *= 2;
    state.depth_b1 /= 2;
    state.step_kb = state.depth_b1 / kDoubleBuffer;
    state.step_ka = state.depth_a1 / kDoubleBuffer;
  }
  if (blocks > chip.aic_num && problem.has_bias) {
    // Leave L1 room for the bias tiles.
    state.step_ka = 3;
    state.step_kb = 3;
  }
}

// Packs the chosen blocks into the plan. fp32 slices long enough are split
// again inside the core, which is a separate kernel model.
TilingPlan StreamKPlan(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip, const CubeRunState& state, KSplit&& split) {
  TilingPlan plan;
  const bool fp32_split =
      state.single_core_k >= kFp32SplitKThreshold && facts.a_bytes == 4 && !problem.hf32;
  plan.key.api_level = problem.avoid_tensor_api ? ApiLevel::kBasic : ApiLevel::kTensor;
  plan.key.trans_a = problem.trans_a;
  plan.key.trans_b = problem.trans_b;
  plan.key.model = (fp32_split && !problem.avoid_tensor_api) ? KernelModel::kStreamKSplitK
                                                             : KernelModel::kStreamK;
  plan.key.l0c2out = split.out;
  plan.block_dim = static_cast<uint32_t>(state.used_core_num);
  plan.kernel_type = KernelType::kMixed1To2;
  plan.workspace_bytes = chip.aic_num * kPartialTileBytes + kRuntimeWorkspaceBytes;
  plan.detail = std::move(split.detail);
  FillBasicTilingData(problem, facts, chip, state, plan);
  return plan;
}

}  // namespace

Capability StreamKStrategy::IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const {
  if (problem.deterministic_level > 1) {
    return Capability::No(Explain(facts, "deterministic_level=", problem.deterministic_level,
                                  " > 1 forbids a cross-core K reduction"));
  }
  if (problem.format_a != Format::kNd) return Capability::No(Explain(facts, "A is not ND"));
  if (facts.a_slice_3d)
    return Capability::No(Explain(facts, "A is a non-contiguous 3-D slice view"));
  if (chip.aiv_num != 2 * chip.aic_num) {
    return Capability::No(Explain(facts, "aiv=", chip.aiv_num, " != 2*aic=", 2 * chip.aic_num));
  }
  Capability split_k = CheckSplitK(problem, facts, chip);
  if (split_k.ok) return split_k;
  Capability dp_split_k = CheckDataParallelSplitK(facts, chip);
  if (dp_split_k.ok) return dp_split_k;
  return Capability::No(
      Explain(facts, std::move(split_k.reason), "; ", std::move(dp_split_k.reason)));
}

absl::StatusOr<TilingPlan> StreamKStrategy::DoTiling(const MatmulProblem& problem,
                                                     const ProblemFacts& facts,
                                                     const ChipSpec& chip) const {
  CubeRunState state;
  ResetBase(facts, chip, state);
  const uint64_t m_cnt = CeilDiv(facts.m, state.base_m);
  const uint64_t n_cnt = CeilDiv(facts.n, state.base_n);
  // Blocks that fit in half the cores leave the other half idle, so every
  // block's K is split (SK); otherwise only the tail round is (DP+SK).
  KSplit split = m_cnt * n_cnt <= chip.aic_num / 2
                     ? SplitKAcrossCores(facts, chip, m_cnt, n_cnt, state)
                     : SplitTailRoundK(facts, chip, m_cnt * n_cnt, state);
  AlignSliceToNzFractal(problem, facts, state);
  ChooseStreamKBaseK(problem, facts, state);
  StageL1(problem, facts, chip, state);
  RebalanceL1Steps(problem, chip, split.blocks, state);
  LimitBaseNForBias(problem, chip, state);
  return StreamKPlan(problem, facts, chip, state, std::move(split));
}

}  // namespace npu::tiling
