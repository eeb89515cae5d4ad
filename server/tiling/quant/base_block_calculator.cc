#include "server/tiling/quant/base_block_calculator.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"
#include "server/tiling/quant/quant_dtype.h"

namespace npu::tiling::quant {
namespace {

constexpr uint64_t kFractalRows = 16;
constexpr uint64_t kL1AlignBytes = 32;
constexpr uint64_t kL2AlignBytes = 128;
constexpr uint64_t kDefaultBaseMn = 256;
constexpr uint64_t kDefaultBaseKBytes = 128;
constexpr uint64_t kMxKGroup = 64;
// Per-block quantization works on 128 x 128 scale blocks.
constexpr uint64_t kPerBlockSize = 128;
constexpr uint64_t kPerBlockWideSide = 256;
// The rebalancing keeps halving the longer side while it is this many times
// the shorter one.
constexpr uint64_t kAspectLimit = 2;
// A baseK above this is halved (the kernel's supported range).
constexpr uint64_t kBaseKLimit = 4095;
// L0A is double-buffered.
constexpr uint64_t kL0aBuffers = 2;

// An E8M0 (MX) scale with x1 transposed or x2 not transposed: the
// rebalanced baseK is aligned to 64 bytes of x1 instead of 128.
bool IsMxBackwardTrans(const QuantFacts& facts) {
  return facts.scale == GeDtype::kFloat8E8M0 && (facts.trans_a || !facts.trans_b);
}

uint64_t BlockCount(const QuantFacts& facts, uint64_t batch_core_count, uint64_t base_m,
                    uint64_t base_n) {
  return batch_core_count * CeilDiv(facts.m, base_m) * CeilDiv(facts.n, base_n);
}

uint64_t MaxRounds(const QuantFacts& facts, const ChipSpec& chip, uint64_t batch_core_count,
                   uint64_t base_m, uint64_t base_n) {
  return CeilDiv(BlockCount(facts, batch_core_count, base_m, base_n), chip.aic_num);
}

double CoreShapeScore(uint64_t a, uint64_t b) {
  return static_cast<double>(std::max(a, b)) / static_cast<double>(std::min(a, b));
}

// MX with x1 plain and x2 transposed: a single-round split whose baseN is not
// 128-aligned may be swapped (M and N exchanged) when that uses as many cores
// and gives a squarer (or equally square, 128-aligned) core grid
// (TrySwapBaseMNForMxFalseTrue).
void MaybeSwapForMx(const QuantFacts& facts, const ChipSpec& chip, uint64_t batch_core_count,
                    uint64_t* base_m, uint64_t* base_n) {
  constexpr double kEps = 1e-12;
  if (!facts.is_mx || facts.trans_a || !facts.trans_b || *base_n % kL2AlignBytes == 0) return;
  const uint64_t swap_m = *base_n;
  const uint64_t swap_n = *base_m;
  if (MaxRounds(facts, chip, batch_core_count, swap_m, swap_n) != 1) return;
  const uint64_t cur_m_cores = CeilDiv(facts.m, *base_m);
  const uint64_t cur_n_cores = CeilDiv(facts.n, *base_n);
  const uint64_t swap_m_cores = CeilDiv(facts.m, swap_m);
  const uint64_t swap_n_cores = CeilDiv(facts.n, swap_n);
  const double cur_score = CoreShapeScore(cur_m_cores, cur_n_cores);
  const double swap_score = CoreShapeScore(swap_m_cores, swap_n_cores);
  const bool squarer = swap_score + kEps < cur_score;
  const bool aligned_tie = swap_score + kEps >= cur_score && cur_score + kEps >= swap_score &&
                           swap_n % kL2AlignBytes == 0;
  if (swap_m_cores * swap_n_cores >= cur_m_cores * cur_n_cores && (squarer || aligned_tie)) {
    *base_m = swap_m;
    *base_n = CeilAlign(swap_n, BaseNAlign(facts, kL2AlignBytes));
  }
}

// Fewer blocks than cores, DEFAULT mode (AdjustBaseBlockDefault): re-derive
// baseM/baseN from core counts on 128-byte alignments, keep the two sides
// within a factor of two, and take the largest baseK that half of L0A holds.
void AdjustDefault(const QuantFacts& facts, const ChipSpec& chip, uint64_t batch_core_count,
                   BaseBlock* block) {
  const uint64_t m_align = facts.trans_a ? ElementsIn(kL2AlignBytes, facts.x1) : kFractalRows;
  const uint64_t n_align = BaseNAlign(facts, kL2AlignBytes);
  uint64_t k_align = (facts.trans_a && !facts.trans_b) ? ElementsIn(kL1AlignBytes, facts.x1)
                                                       : ElementsIn(kL2AlignBytes, facts.x1);
  if (IsMxBackwardTrans(facts)) k_align = ElementsIn(kMxKGroup, facts.x1);
  if (m_align == 0 || n_align == 0 || k_align == 0) return;

  const uint64_t m_max_tiles = CeilDiv(facts.m, m_align);
  const uint64_t n_max_tiles = CeilDiv(facts.n, n_align);
  const uint64_t cores_mn = chip.aic_num / batch_core_count;
  // Even the finest split leaves cores idle and the layout gains nothing.
  if (m_max_tiles * n_max_tiles < cores_mn && (facts.trans_a || !facts.trans_b)) return;

  uint64_t m_cores = CeilDiv(facts.m, block->base_m);
  uint64_t n_cores = CeilDiv(facts.n, block->base_n);
  uint64_t base_m = block->base_m;
  uint64_t base_n = block->base_n;
  if (m_max_tiles < n_max_tiles || (m_max_tiles == n_max_tiles && n_align == kFractalRows)) {
    base_m = CeilAlign(CeilDiv(facts.m, m_cores), m_align);
    m_cores = CeilDiv(facts.m, base_m);
    n_cores = cores_mn / m_cores;
    base_n = CeilAlign(CeilDiv(facts.n, n_cores), n_align);
  } else {
    base_n = CeilAlign(CeilDiv(facts.n, n_cores), n_align);
    n_cores = CeilDiv(facts.n, base_n);
    m_cores = cores_mn / n_cores;
    base_m = CeilAlign(CeilDiv(facts.m, m_cores), m_align);
  }
  while (base_n >= base_m * kAspectLimit && n_cores < cores_mn / 2 && base_n != n_align) {
    n_cores *= 2;
    m_cores = cores_mn / n_cores;
    base_m = CeilAlign(CeilDiv(facts.m, m_cores), m_align);
    base_n = CeilAlign(CeilDiv(facts.n, n_cores), n_align);
    m_cores = CeilDiv(facts.m, base_m);
    n_cores = CeilDiv(facts.n, base_n);
  }
  while (base_m >= base_n * kAspectLimit && m_cores < cores_mn / 2 && base_m != m_align) {
    m_cores *= 2;
    n_cores = cores_mn / m_cores;
    base_m = CeilAlign(CeilDiv(facts.m, m_cores), m_align);
    base_n = CeilAlign(CeilDiv(facts.n, n_cores), n_align);
    m_cores = CeilDiv(facts.m, base_m);
    n_cores = CeilDiv(facts.n, base_n);
  }
  MaybeSwapForMx(facts, chip, batch_core_count, &base_m, &base_n);

  uint64_t k_max = ElementsIn(chip.l0a_bytes / kL0aBuffers, facts.x1) / std::max(base_m, base_n);
  if (k_max < k_align) return;  // L0A cannot hold the new block: keep the old one
  block->base_m = base_m;
  block->base_n = base_n;
  k_max = FloorAlign(k_max, k_align);
  block->base_k = std::min(CeilAlign(facts.k, k_align), k_max);
  if (block->base_k > kBaseKLimit) block->base_k = CeilAlign(block->base_k / 2, k_align);
  block->use_tail_window_logic = false;
}

// Fewer blocks than cores, per-tile (groupSizeM 1, AdjustBaseBlockPertile):
// spread M over the cores left by N's split, halve baseN while the tile count
// still fits, then halve it further while it is more than twice baseM.
void AdjustPerTile(const QuantFacts& facts, uint64_t cores_mn, BaseBlock* block) {
  const uint64_t m_align = facts.trans_a ? ElementsIn(kL2AlignBytes, facts.x1) : kFractalRows;
  const uint64_t n_align = BaseNAlign(facts, kL2AlignBytes);
  uint64_t base_m = block->base_m;
  uint64_t base_n = block->base_n;
  uint64_t m_cores = cores_mn / CeilDiv(facts.n, base_n);
  base_m = CeilAlign(CeilDiv(facts.m, m_cores), m_align);
  m_cores = CeilDiv(facts.m, base_m);
  while (base_n / 2 >= n_align && m_cores * CeilDiv(facts.n, base_n / 2) <= cores_mn) {
    base_n /= 2;
  }
  while (base_n > base_m * kAspectLimit && base_n / 2 >= n_align) {
    const uint64_t half_n = base_n / 2;
    const uint64_t n_cores = CeilDiv(facts.n, half_n);
    if (n_cores == 0 || n_cores > cores_mn) break;
    uint64_t cand_m_cores = cores_mn / n_cores;
    const uint64_t cand_m = CeilAlign(CeilDiv(facts.m, cand_m_cores), m_align);
    cand_m_cores = CeilDiv(facts.m, cand_m);
    if (cand_m_cores * n_cores > cores_mn) break;
    base_m = cand_m;
    base_n = half_n;
  }
  block->base_m = base_m;
  block->base_n = base_n;
}

// Fewer blocks than cores, PERBLOCK mode (AdjustBaseBlockPerblock): per-tile
// has its own rule; per-block shrinks a 256 side to 128 when the finer grid
// still fits on the cores.
void AdjustPerBlock(const QuantFacts& facts, const ChipSpec& chip, uint64_t batch_core_count,
                    BaseBlock* block) {
  const uint64_t cores_mn = chip.aic_num / batch_core_count;
  if (facts.group_size_m == 1) {
    AdjustPerTile(facts, cores_mn, block);
  } else if (block->base_m == kPerBlockWideSide &&
             CeilDiv(facts.m, kPerBlockSize) * CeilDiv(facts.n, block->base_n) <= cores_mn) {
    block->base_m = kPerBlockSize;
  } else if (block->base_n == kPerBlockWideSide &&
             CeilDiv(facts.m, block->base_m) * CeilDiv(facts.n, kPerBlockSize) <= cores_mn) {
    block->base_n = kPerBlockSize;
  }
}

// (baseM + baseN) / (baseM * baseN): the operand bytes one block loads per
// output element; lower is better.
double LoadPerOutputScore(uint64_t base_m, uint64_t base_n) {
  return (static_cast<double>(base_m) + base_n) / (static_cast<double>(base_m) * base_n);
}

// Blocks of the last round; a full round when the blocks divide evenly.
uint64_t LastRoundBlocks(const QuantFacts& facts, const ChipSpec& chip, uint64_t batch_core_count,
                         uint64_t base_m, uint64_t base_n) {
  const uint64_t tail = BlockCount(facts, batch_core_count, base_m, base_n) % chip.aic_num;
  return tail == 0 ? chip.aic_num : tail;
}

// The share of the cores' round time spent on real output.
double BalanceRate(const QuantFacts& facts, const ChipSpec& chip, uint64_t batch_core_count,
                   uint64_t base_m, uint64_t base_n) {
  const uint64_t rounds = MaxRounds(facts, chip, batch_core_count, base_m, base_n);
  return static_cast<double>(batch_core_count) * facts.m * facts.n / chip.aic_num /
         (static_cast<double>(rounds) * base_m * base_n);
}

// MX inputs whose blocks take two or three rounds (OptimizeBaseBlockForLoadBalance):
// search the 128-byte-aligned blocks no larger than the current one, taking
// no more rounds, for the best balance rate (ties: the lower load score).
// A candidate must fill at least as many cores in its last round as the
// current block fills in whole multiples of its last-round blocks, and with
// exactly that many it must not load more per output. A candidate whose baseN
// is not a multiple of 128 is dropped for a short K.
void BalanceMxRounds(const QuantFacts& facts, const ChipSpec& chip, uint64_t batch_core_count,
                     BaseBlock* block) {
  constexpr uint64_t kMaxBalancedRounds = 3;
  constexpr double kEps = 1e-12;
  const uint64_t rounds = MaxRounds(facts, chip, batch_core_count, block->base_m, block->base_n);
  if (rounds == 1 || rounds > kMaxBalancedRounds) return;
  const uint64_t last_blocks =
      LastRoundBlocks(facts, chip, batch_core_count, block->base_m, block->base_n);
  const uint64_t last_cores = last_blocks * (chip.aic_num / last_blocks);
  const double origin_score = LoadPerOutputScore(block->base_m, block->base_n);

  const uint64_t m_step = facts.trans_a ? ElementsIn(kL2AlignBytes, facts.x1) : kFractalRows;
  const uint64_t n_step = BaseNAlign(facts, kL2AlignBytes);
  uint64_t best_m = block->base_m;
  uint64_t best_n = block->base_n;
  double best_rate = 0.0;
  double best_score = 0.0;
  bool found = false;
  // Shrinking a side by one step; 0 ends the walk.
  auto next = [](uint64_t base, uint64_t step) { return base <= step ? 0 : base - step; };
  for (uint64_t m = CeilAlign(block->base_m, m_step); m != 0; m = next(m, m_step)) {
    for (uint64_t n = CeilAlign(block->base_n, n_step); n != 0; n = next(n, n_step)) {
      // A narrower block only adds blocks: the rest of this row is over the limit too.
      if (MaxRounds(facts, chip, batch_core_count, m, n) > rounds) break;
      const uint64_t cand_last = LastRoundBlocks(facts, chip, batch_core_count, m, n);
      const double score = LoadPerOutputScore(m, n);
      const bool is_origin = m == block->base_m && n == block->base_n;
      if (is_origin || cand_last < last_cores ||
          (cand_last == last_cores && score > origin_score + kEps)) {
        continue;
      }
      const double rate = BalanceRate(facts, chip, batch_core_count, m, n);
      const bool better_rate = rate > best_rate + kEps;
      const bool equal_rate = rate + kEps >= best_rate && best_rate + kEps >= rate;
      if (!found || better_rate || (equal_rate && score + kEps < best_score)) {
        best_m = m;
        best_n = n;
        best_rate = rate;
        best_score = score;
        found = true;
      }
    }
  }

  constexpr uint64_t kShortKBytes = 2560;
  if (best_n % kL2AlignBytes != 0 && facts.k < ElementsIn(kShortKBytes, facts.x1)) return;
  block->base_m = best_m > facts.m ? CeilAlign(facts.m, BaseMAlign(facts)) : best_m;
  block->base_n = best_n > facts.n ? CeilAlign(facts.n, BaseNAlign(facts, kL1AlignBytes)) : best_n;
}

}  // namespace

uint64_t BaseMAlign(const QuantFacts& facts) {
  return facts.trans_a ? ElementsIn(kL1AlignBytes, facts.x1) : kFractalRows;
}

uint64_t BaseNAlign(const QuantFacts& facts, uint64_t inner_align_bytes) {
  return facts.trans_b ? kFractalRows : ElementsIn(inner_align_bytes, facts.x2);
}

uint64_t BaseKAlign(const QuantFacts& facts) {
  return facts.is_mx ? kMxKGroup : ElementsIn(kL1AlignBytes, facts.x1);
}

absl::StatusOr<BaseBlock> ComputeBaseBlock(const QuantFacts& facts, const ChipSpec& chip,
                                           uint64_t batch_core_count, BaseBlockMode mode) {
  if (chip.aic_num == 0 || batch_core_count == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("base block: aic_num ", chip.aic_num, ", batch cores ", batch_core_count));
  }
  const uint64_t m_align = BaseMAlign(facts);
  const uint64_t n_align = BaseNAlign(facts, kL1AlignBytes);
  const uint64_t k_align = BaseKAlign(facts);
  if (m_align == 0 || n_align == 0 || k_align == 0) {
    return absl::FailedPreconditionError("base block: a zero alignment (unknown dtype)");
  }

  BaseBlock block;
  if (mode == BaseBlockMode::kPerBlock) {
    // 128 x 128 scale blocks: 256 x 128 when M is a multiple of 128 above
    // 128, else baseM 128 (or M itself for a short per-tile M) and baseN 256
    // when N is a multiple of 128.
    if (facts.m <= kPerBlockSize || facts.m % kPerBlockSize != 0) {
      block.base_m = (facts.group_size_m == 1 && facts.m < kPerBlockSize)
                         ? CeilAlign(facts.m, m_align)
                         : kPerBlockSize;
      block.base_n = facts.n % kPerBlockSize == 0 ? kPerBlockWideSide : kPerBlockSize;
    } else {
      block.base_m = kPerBlockWideSide;
      block.base_n = kPerBlockSize;
    }
    block.base_k = kPerBlockSize;
  } else {
    block.base_m = CeilAlign(std::min(facts.m, kDefaultBaseMn), m_align);
    block.base_n = CeilAlign(std::min(facts.n, kDefaultBaseMn), n_align);
    block.base_k = CeilAlign(std::min(ElementsIn(kDefaultBaseKBytes, facts.x1), facts.k), k_align);
  }

  if (BlockCount(facts, batch_core_count, block.base_m, block.base_n) < chip.aic_num) {
    if (mode == BaseBlockMode::kPerBlock) {
      AdjustPerBlock(facts, chip, batch_core_count, &block);
    } else {
      AdjustDefault(facts, chip, batch_core_count, &block);
    }
  }
  if (facts.is_mx) BalanceMxRounds(facts, chip, batch_core_count, &block);

  if (block.base_m == 0 || block.base_n == 0 || block.base_k == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("base block ", block.base_m, "x", block.base_n, "x", block.base_k));
  }
  return block;
}

}  // namespace npu::tiling::quant
