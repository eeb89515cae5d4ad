#include "server/tiling/quant/mix_basic_api_asw.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"
#include "server/tiling/quant/base_block_calculator.h"
#include "server/tiling/quant/l1_tiling_calculator.h"
#include "server/tiling/quant/quant_capability.h"
#include "server/tiling/quant/quant_dtype.h"
#include "server/tiling/quant/sliding_window.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::quant {
namespace {

constexpr uint32_t kVectorCoresPerCube = 2;
constexpr uint64_t kFractalRows = 16;
constexpr uint64_t kReduceBlock = 32;
constexpr uint64_t kL1AlignBytes = 32;
constexpr uint64_t kL2AlignBytes = 128;
constexpr uint64_t kWindowLength = 4;
constexpr uint64_t kL0cBytesPerElement = 4;
constexpr uint64_t kDoubleBuffer = 2;
// A block whose sides differ by this factor or more is penalized.
constexpr uint64_t kAspectLimit = 2;
// baseK above this is halved.
constexpr uint64_t kMaxBaseK = 4095;
// A is fully loaded only when one core's A takes at most half of L1.
constexpr uint64_t kFullAL1Share = 2;
constexpr uint32_t kKernelVec = 2;           // VEC_EPILOGUE_WITH_MMAPI
constexpr uint32_t kKernelVecAFullLoad = 3;  // VEC_EPILOGUE_CUSTOM_GMTOAL1_WITH_MMAPI
constexpr uint32_t kApiTensor = 2;           // BLAZE
constexpr uint32_t kFourBuffers = 4, kTwoBuffers = 2;

// What the base-block re-choice (OptimizeBaseBlock) works with.
struct BlockSearch {
  uint64_t m_align = 0, n_align = 0, k_align = 0;
  uint64_t base_k = 0;  // the DEFAULT block's baseK, kept where it fits
  uint64_t m_blocks = 0, n_blocks = 0;
  uint64_t cores = 0;          // cube cores per output batch
  uint64_t target_blocks = 0;  // max(blocks, cores)
  uint64_t block_count = 0;
};

// Waste (area computed beyond the output) + idle cores (area of the blocks
// missing to fill the cores) + an aspect penalty (the block's area when one
// side is at least twice the other). Lower is better.
uint64_t BlockScore(const QuantFacts& facts, const BlockSearch& s, uint64_t base_m,
                    uint64_t base_n) {
  const uint64_t blocks = CeilDiv(facts.m, base_m) * CeilDiv(facts.n, base_n);
  const uint64_t covered = blocks * base_m * base_n;
  const uint64_t useful = facts.m * facts.n;
  const uint64_t waste = covered > useful ? covered - useful : 0;
  const uint64_t idle = blocks < s.target_blocks ? (s.target_blocks - blocks) * base_m * base_n : 0;
  const bool skewed = base_n >= base_m * kAspectLimit || base_m >= base_n * kAspectLimit;
  return waste + idle + (skewed ? base_m * base_n : 0);
}

// Scores the block that cuts M into `m_cores` and N into `n_cores` pieces
// and keeps it when it fits L0C, the bias table and the fixpipe, leaves room
// for an aligned baseK in half of L0A, and beats `best_score`. baseK stays
// unless it no longer fits; then it is re-derived from K.
void TryBlock(const QuantFacts& facts, const ChipSpec& chip, const BlockSearch& s, uint64_t m_cores,
              uint64_t n_cores, BaseBlock* best, uint64_t* best_score) {
  if (m_cores == 0 || n_cores == 0) return;
  const uint64_t base_m = CeilAlign(CeilDiv(facts.m, m_cores), s.m_align);
  const uint64_t base_n = CeilAlign(CeilDiv(facts.n, n_cores), s.n_align);
  if (base_m == 0 || base_n == 0 || base_m > facts.m || base_n > facts.n ||
      base_m * base_n * kL0cBytesPerElement > chip.l0c_bytes ||
      !CheckBiasAndScale(facts, base_n, /*db_l0c=*/1)) {
    return;
  }
  uint64_t k_max = ElementsIn(chip.l0a_bytes / kDoubleBuffer, facts.x1) / std::max(base_m, base_n);
  if (k_max < s.k_align) return;
  k_max = FloorAlign(k_max, s.k_align);
  uint64_t base_k = s.base_k;
  if (base_k == 0 || base_k > k_max || base_k % s.k_align != 0) {
    base_k = std::min(CeilAlign(facts.k, s.k_align), k_max);
    if (base_k > kMaxBaseK) base_k = CeilAlign(base_k / 2, s.k_align);
  }
  if (base_k == 0 || base_k > k_max || base_k % s.k_align != 0) return;
  const uint64_t score = BlockScore(facts, s, base_m, base_n);
  if (score >= *best_score) return;
  *best_score = score;
  best->base_m = base_m;
  best->base_n = base_n;
  best->base_k = base_k;
}

// OptimizeBaseBlock: only when an edge block is under half a block (and
// there are several) or the blocks do not fill the cores. First the same
// block counts re-aligned, then, for under-filled cores, every M split up
// to the cores with the N split that fills them.
void RechooseBaseBlock(const QuantFacts& facts, const ChipSpec& chip, BaseBlock* block) {
  BlockSearch s;
  s.m_align = kFractalRows;
  s.n_align = facts.trans_b ? kFractalRows : ElementsIn(kL2AlignBytes, facts.x2);
  s.k_align = facts.trans_a && !facts.trans_b ? ElementsIn(kL1AlignBytes, facts.x1)
                                              : ElementsIn(kL2AlignBytes, facts.x1);
  if (s.m_align == 0 || s.n_align == 0 || s.k_align == 0 || block->base_m == 0 ||
      block->base_n == 0 || block->base_k == 0) {
    return;
  }
  s.base_k = block->base_k;
  s.m_blocks = CeilDiv(facts.m, block->base_m);
  s.n_blocks = CeilDiv(facts.n, block->base_n);
  s.cores = std::max<uint64_t>(1, chip.aic_num / std::max<uint64_t>(1, facts.batch_c));
  s.block_count = s.m_blocks * s.n_blocks;
  s.target_blocks = std::max(s.block_count, s.cores);
  const uint64_t m_tail = facts.m % block->base_m;
  const uint64_t n_tail = facts.n % block->base_n;
  const bool small_m_tail = facts.m > block->base_m && m_tail > 0 && m_tail * 2 < block->base_m;
  const bool small_n_tail = facts.n > block->base_n && n_tail > 0 && n_tail * 2 < block->base_n;
  if (!small_m_tail && !small_n_tail && s.block_count >= s.cores) return;

  BaseBlock best = *block;
  uint64_t best_score = BlockScore(facts, s, best.base_m, best.base_n);
  TryBlock(facts, chip, s, s.m_blocks, s.n_blocks, &best, &best_score);
  if (s.block_count < s.cores) {
    const uint64_t m_cores_max = std::min(CeilDiv(facts.m, s.m_align), s.cores);
    const uint64_t n_cores_max = CeilDiv(facts.n, s.n_align);
    for (uint64_t m_cores = 1; m_cores <= m_cores_max; ++m_cores) {
      const uint64_t n_cores = std::min(n_cores_max, std::max<uint64_t>(1, s.cores / m_cores));
      TryBlock(facts, chip, s, m_cores, n_cores, &best, &best_score);
    }
  }
  block->base_m = best.base_m;
  block->base_n = best.base_n;
  block->base_k = best.base_k;
}

// The A full load of this strategy (UpdateAFullLoadStatus): one (balanced)
// block row of A, unaligned, takes at most half of L1; fewer than a window
// of M blocks that divide the cores evenly; more blocks than cores; no
// batch. The block row then takes the balanced height.
bool DecideAFullLoad(const QuantFacts& facts, const ChipSpec& chip, SlidingWindow* w) {
  const uint64_t row_m = w->m_base_tail_split_count == 1 ? w->base_m : w->m_tail_main;
  const uint64_t a_bytes = BytesOf(row_m * facts.k, facts.x1);
  const bool full = a_bytes <= chip.l1_bytes / kFullAL1Share && w->m_block_count < kWindowLength &&
                    chip.aic_num % w->m_block_count == 0 && w->total_block_count > chip.aic_num &&
                    facts.batch_c == 1;
  if (full && w->base_m != row_m) {
    w->base_m = row_m;
    w->m_base_tail_split_count = 1;
    w->m_tail_main = 0;
  }
  return full;
}

// CalculateNBufferNum4Mix: four L1 buffers when four B loads, the
// double-buffered per-channel scale and bias rows and four A loads (or the
// whole of A) stay strictly under L1; then A and B both load the smaller
// K step.
void ChooseBufferCount(const QuantFacts& facts, const ChipSpec& chip, const L1Tiling& l1,
                       bool a_full_load, BasicApiTiling* t) {
  t->k_al1 = l1.step_ka * t->base_k;
  t->k_bl1 = l1.step_kb * t->base_k;
  const uint64_t step_k = std::min(l1.step_ka, l1.step_kb);
  const uint64_t k_l1 = (a_full_load ? l1.step_kb : step_k) * t->base_k;
  uint64_t used = BytesOf(t->base_n * k_l1, facts.x2) * kFourBuffers;
  if (facts.is_per_channel) used += BytesOf(t->base_n, facts.scale) * kTwoBuffers;
  if (facts.has_bias) used += BytesOf(t->base_n, facts.bias) * kTwoBuffers;
  if (a_full_load) {
    const uint64_t k_aligned = CeilAlign(facts.k, facts.trans_a ? kFractalRows : kReduceBlock);
    used += BytesOf(t->base_m * k_aligned, facts.x1);
  } else {
    used += BytesOf(t->base_m * k_l1, facts.x1) * kFourBuffers;
  }
  t->buffer_count = used < chip.l1_bytes ? kFourBuffers : kTwoBuffers;
  if (t->buffer_count == kFourBuffers) t->k_al1 = t->k_bl1 = step_k * t->base_k;
}

}  // namespace

bool MixBasicApiAswStrategy::IsCapable(const QuantFacts& facts, const ChipSpec& chip,
                                       std::string* reason) const {
  return IsStrategyCapable(QuantStrategyId::kMixBasicApiAsw, facts, chip, reason);
}

absl::StatusOr<QuantPlan> MixBasicApiAswStrategy::DoTiling(const QuantFacts& facts,
                                                           const ChipSpec& chip) const {
  RETURN_IF_ERROR(CheckAswPlatform(chip));
  // Each cube core's output is dequantized by its two vector cores.
  if (chip.aiv_num != kVectorCoresPerCube * chip.aic_num) {
    return absl::FailedPreconditionError(absl::StrCat(
        "MIX_BASIC_API_ASW needs aiv_num == 2 * aic_num, got ", chip.aiv_num, " / ", chip.aic_num));
  }

  // The batch is spread over the cores with the blocks.
  const uint64_t batch_cores = facts.batch_c;
  ASSIGN_OR_RETURN(BaseBlock block,
                   ComputeBaseBlock(facts, chip, batch_cores, BaseBlockMode::kDefault));
  RechooseBaseBlock(facts, chip, &block);
  SlidingWindow window = MakeSlidingWindow(facts, chip, block, batch_cores);
  BalanceEdgeBlocks(facts, chip, &window);
  const bool a_full_load = DecideAFullLoad(facts, chip, &window);
  SplitTailRound(facts, chip, a_full_load, &window);

  ASSIGN_OR_RETURN(
      const L1Tiling l1,
      ComputeL1Tiling(facts, chip, window.base_m, window.base_n, window.base_k,
                      a_full_load ? L1TilingMode::kAFullLoad : L1TilingMode::kDefault));
  BasicApiTiling tiling;
  tiling.base_m = window.base_m;
  tiling.base_n = window.base_n;
  tiling.base_k = window.base_k;
  tiling.db_l0c = ChooseDbL0c(facts, chip, window.base_m, window.base_n);
  ChooseBufferCount(facts, chip, l1, a_full_load, &tiling);
  tiling.weight_must_hit_l2 = IsWeightMustHitL2(facts, window.base_m);
  // The vector dequant's words: x1 1 for a double per-tensor scale, 4 per
  // token; x2 1 per tensor, 2 per channel.
  if (facts.is_double_scale) {
    tiling.x1_quant_mode = kPerTensor;
  } else if (facts.is_pertoken) {
    tiling.x1_quant_mode = kPerToken;
  }
  if (facts.is_per_tensor) {
    tiling.x2_quant_mode = kPerTensor;
  } else if (facts.is_per_channel) {
    tiling.x2_quant_mode = kPerChannel;
  }

  const bool without_batch = facts.batch_c == 1;
  QuantPlan plan;
  plan.strategy = std::string(name());
  plan.key.a_trans = facts.trans_a ? 1 : 0;
  plan.key.b_trans = facts.trans_b ? 1 : 0;
  plan.key.batch_mode = without_batch ? 1 : 0;  // WITHOUT_BATCH : WITH_BATCH
  plan.key.kernel = a_full_load ? kKernelVecAFullLoad : kKernelVec;
  plan.key.api_level = kApiTensor;
  plan.block_dim = UsedCoreCount(window, chip);
  plan.workspace_bytes = kLibraryWorkspaceBytes;
  plan.schedule_mode = 0;
  plan.words = without_batch ? WriteWithoutBatchWords(facts, tiling, window)
                             : WriteBasicApiWords(facts, tiling, window);
  return plan;
}

}  // namespace npu::tiling::quant
