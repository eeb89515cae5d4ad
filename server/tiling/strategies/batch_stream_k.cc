#include "server/tiling/strategies/batch_stream_k.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"

namespace npu::tiling {
namespace {

// Past two million fp32 elements of K (without hf32) a split reduction
// loses the precision the binary accumulation of the basic kernel keeps.
constexpr uint64_t kMaxFp32K = 2000000;
// Below 8192 elements of K (or 256 bytes per cube core) the workspace round
// trip of the partial sums does not pay off.
constexpr uint64_t kMinK = 8192;
// The workspace holds one 256x256 fp32 partial tile per cube core.
constexpr uint64_t kPartialTileBytes = kBlock256 * kBlock256 * kFp32Bytes;
// Stream-K sizes base_k against a 64 KiB L0A whatever the platform's.
constexpr uint64_t kStreamKL0aBytes = 64 * 1024;

// fp32 without hf32 counts blocks of one 32-byte line instead of 256.
uint64_t CountingBlock(const MatmulProblem& problem, const ProblemFacts& facts) {
  return facts.a_bytes == 4 && !problem.hf32 ? 32 : kBlock256;
}

// The SK output goes through the AIV cores when N is not 16-aligned, unless
// the output is tiny.
L0cToOut SplitKOutput(const ProblemFacts& facts) {
  if (facts.n > 64 && facts.n % kBlock16 != 0 && facts.m > 2 && facts.m * facts.n >= 256) {
    return L0cToOut::kNdFixpipe1To2;
  }
  return L0cToOut::kOnTheFly;
}

}  // namespace

Capability BatchStreamKStrategy::IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                                           const ChipSpec& chip) const {
  if (problem.deterministic_level > 1) {
    return Capability::No(Explain(facts, "deterministic_level=", problem.deterministic_level,
                                  " > 1 forbids a cross-core K reduction"));
  }
  if (!EqualBatchSlots(facts)) return Capability::No(Explain(facts, "A and B batches differ"));
  if (problem.format_a != Format::kNd) return Capability::No(Explain(facts, "A is not ND"));
  if (facts.batch_bias > 1) return Capability::No(Explain(facts, "batched bias"));
  if (AnyTransposedView(problem)) {
    return Capability::No(Explain(facts, "an input is a transposed non-contiguous view"));
  }
  if (chip.aiv_num != 2 * chip.aic_num) {
    return Capability::No(Explain(facts, "aiv=", chip.aiv_num, " != 2*aic=", 2 * chip.aic_num));
  }
  if (facts.a_bytes == 4 && !problem.hf32 && facts.k > kMaxFp32K) {
    return Capability::No(Explain(facts, "fp32 K=", facts.k, " > ", kMaxFp32K));
  }
  const uint64_t k_aligned = CeilAlign(facts.k, kBlock256);
  const uint64_t k_needed = std::max<uint64_t>(kMinK, chip.aic_num * 256) / facts.a_bytes;
  if (k_aligned < k_needed) {
    return Capability::No(Explain(facts, "align256(K)=", k_aligned, " < max(8192, ", chip.aic_num,
                                  "*256)/", facts.a_bytes, "=", k_needed));
  }
  const uint64_t block = CountingBlock(problem, facts);
  const uint64_t blocks = facts.batch_c * CeilDiv(facts.m, block) * CeilDiv(facts.n, block);
  if (blocks > chip.aic_num / 2) {
    return Capability::No(Explain(facts, "batch*ceil(M/", block, ")*ceil(N/", block, ")=", blocks,
                                  " > aic/2=", chip.aic_num / 2));
  }
  return Capability::Yes(Explain(facts, "K=", facts.k, " >= ", k_needed, " and ", blocks,
                                 " blocks over all batches <= aic/2=", chip.aic_num / 2));
}

absl::StatusOr<TilingPlan> BatchStreamKStrategy::DoTiling(const MatmulProblem& problem,
                                                          const ProblemFacts& facts,
                                                          const ChipSpec& chip) const {
  CubeRunState state;
  ResetBase(facts, chip, state);
  uint64_t m_cnt = CeilDiv(facts.m, state.base_m);
  uint64_t n_cnt = CeilDiv(facts.n, state.base_n);
  // Each batch gets an equal share of the cores. Block counts between a
  // third and a half of the share are rounded up to half, so each block
  // gets exactly two K slices.
  const uint64_t share = FloorDiv(chip.aic_num, facts.batch_c);
  if (m_cnt > share / 3 && m_cnt < share / 2) m_cnt = share / 2;
  if (n_cnt > share / 3 && n_cnt < share / 2) n_cnt = share / 2;
  state.base_m = CeilAlign(CeilDiv(facts.m, m_cnt), kBlock16);
  state.base_n = CeilAlign(CeilDiv(facts.n, n_cnt), kBlock16);
  state.tail_k_cnt = FloorDiv(share, m_cnt * n_cnt);
  state.single_core_k = CeilDiv(facts.k, state.tail_k_cnt);
  const uint64_t base_k_align = KIsInnerAxis(problem) ? 128 / facts.a_bytes : kBlock16;
  const uint64_t max_base_k = FloorAlign(
      kStreamKL0aBytes / kDoubleBuffer / facts.a_bytes / std::max(state.base_m, state.base_n),
      base_k_align);
  state.base_k = std::min(state.single_core_k, max_base_k);
  StageL1(problem, facts, chip, state);
  // Square blocks: give A the deeper L1 pipeline.
  if (state.base_m == state.base_n && state.depth_b1 == state.depth_a1 * 2) {
    state.depth_a1 *= 2;
    state.depth_b1 /= 2;
    state.step_kb = state.depth_b1 / kDoubleBuffer;
    state.step_ka = state.depth_a1 / kDoubleBuffer;
  }
  LimitBaseNForBias(problem, chip, state);

  TilingPlan plan;
  plan.key = BatchKey(problem, TensorApiLevel(problem), BatchModel::kForBatch);
  plan.key.model = KernelModel::kStreamK;
  plan.key.l0c2out = SplitKOutput(facts);
  plan.block_dim = static_cast<uint32_t>(state.used_core_num);
  plan.kernel_type = KernelType::kMixed1To2;
  plan.workspace_bytes = chip.aic_num * kPartialTileBytes + kRuntimeWorkspaceBytes;
  plan.detail = Describe(facts, facts.batch_c, " batches x ", m_cnt * n_cnt, " blocks x ",
                         state.tail_k_cnt, " K slices");
  FillBatchBasicTilingData(problem, facts, chip, state, plan);
  return plan;
}

}  // namespace npu::tiling
