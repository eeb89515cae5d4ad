#include "server/tiling/quant/sliding_window.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"
#include "server/tiling/quant/quant_dtype.h"

namespace npu::tiling::quant {
namespace {

constexpr uint64_t kFractalRows = 16;
constexpr uint64_t kL1AlignBytes = 32;
constexpr uint64_t kL2AlignBytes = 128;
// Blocks per window row of the sliding window.
constexpr uint64_t kWindowLength = 4;
// Edge balancing also applies to unaligned K once M (or N) reaches this.
constexpr uint64_t kBalanceMinSize = 1792;
// N-tail balancing is not worth it for K below 1024, or K = 1024 with 8 or
// more N blocks.
constexpr uint64_t kBalanceMinK = 1024;
constexpr uint64_t kBalanceManyNBlocks = 8;
// Bias-table and fixpipe limits on baseN, without / with L0C double buffering.
constexpr uint64_t kBiasMaxBaseN = 1024, kBiasMaxBaseNDb = 512;
constexpr uint64_t kScaleMaxBaseN = 512, kScaleMaxBaseNDb = 256;
constexpr uint64_t kL0cBytesPerElement = 4;
constexpr uint32_t kDoubleBuffer = 2;

uint32_t TailCoreCount(const SlidingWindow& w, uint64_t m_tile, uint64_t n_tile) {
  // CANN counts in 32-bit unsigned arithmetic.
  return static_cast<uint32_t>(m_tile) * static_cast<uint32_t>(n_tile) *
         static_cast<uint32_t>(w.tail_window_block_count);
}

// The M-tail merge (GetOuterMAxisTailCnt): merge the tail block with
// `len` main blocks of the last window row into len + 1 equal 16-aligned
// blocks when the rounds of full-height blocks do not grow.
void MergeMTail(const QuantFacts& facts, SlidingWindow* w) {
  const uint64_t tail = facts.m % w->base_m;
  const uint64_t max_count = std::min((w->base_m - tail) / kFractalRows, w->m_block_count);
  const uint64_t window = std::min(kWindowLength, w->m_block_count);
  const uint64_t main_windows = w->m_block_count / window - 1;
  const uint64_t tail_window = w->m_block_count - main_windows * window;
  uint64_t best = (main_windows + 1) * w->base_m;
  uint64_t merged_windows = 1;
  for (uint64_t len = tail_window - 1; len < max_count; len += window, ++merged_windows) {
    const uint64_t main = CeilAlign(CeilDiv(len * w->base_m + tail, len + 1), kFractalRows);
    const uint64_t cost = (main_windows + 1 - merged_windows) * w->base_m + merged_windows * main;
    if (cost <= best) {
      best = cost;
      w->m_tail_main = main;
      w->m_base_tail_split_count = len + 1;
    }
  }
}

// The rounds-weighted cost of merging the N tail with `len` main blocks
// (CalculateCurrentPerf).
uint64_t NMergeCost(const SlidingWindow& w, uint64_t cores, uint64_t len, uint64_t tail,
                    uint64_t* main) {
  const uint64_t rounds = CeilDiv(w.n_block_count * w.m_block_count, cores);
  *main = CeilAlign(CeilDiv(len * w.base_n + tail, len + 1), kFractalRows);
  const uint64_t last = len * (w.base_n - *main) + tail;
  uint64_t main_rounds = 0;
  uint64_t tail_rounds = 0;
  if (len < w.n_block_count - 1) {
    main_rounds = CeilDiv(
        (w.n_block_count - 1 - len) * w.m_block_count + (len + 1) * w.m_block_count % cores, cores);
  }
  if (len > 0) {
    tail_rounds = std::min(CeilDiv(len * w.m_block_count + w.m_block_count % cores, cores),
                           rounds - main_rounds);
  }
  return main_rounds * w.base_n + tail_rounds * *main + (rounds - main_rounds - tail_rounds) * last;
}

// The N-tail merge (GetOuterNAxisTailCnt): pick the merge length with the
// lowest round-count cost, strictly better than no merge.
void MergeNTail(const QuantFacts& facts, const ChipSpec& chip, SlidingWindow* w) {
  const uint64_t cores = chip.aic_num;
  const uint64_t tail = facts.n % w->base_n;
  const uint64_t blocks = w->n_block_count * w->m_block_count;
  const uint64_t rounds = CeilDiv(blocks, cores);
  uint64_t main_rounds =
      CeilDiv((w->n_block_count - 1) * w->m_block_count + w->m_block_count % cores, cores);
  if (blocks <= cores ||
      (w->m_block_count % cores == 0 &&
       (w->n_block_count % kWindowLength == 0 || kWindowLength % w->n_block_count == 0))) {
    main_rounds = rounds;
  }
  uint64_t best = main_rounds * w->base_n + (rounds - main_rounds) * tail;
  const uint64_t max_count = std::min((w->base_n - tail) / kFractalRows, w->n_block_count);
  for (uint64_t len = 1; len < max_count; ++len) {
    uint64_t main = 0;
    const uint64_t cost = NMergeCost(*w, cores, len, tail, &main);
    if (cost < best) {
      best = cost;
      w->n_tail_main = main;
      w->n_base_tail_split_count = len + 1;
    }
  }
}

// An N split of an NZ weight must keep each piece a whole number of 32-byte
// columns (IsInValidWeighNzTailSplit). Without A full load only the splits
// along N are checked.
bool BreaksNzWeight(const QuantFacts& facts, const SlidingWindow& w, bool a_full_load,
                    uint64_t split, bool first_axis) {
  if (!facts.x2_nz) return false;
  const bool m_first = w.m_tail >= w.n_tail;
  if (!a_full_load && ((first_axis && m_first) || (!first_axis && !m_first))) return false;
  return (w.base_n / split) % ElementsIn(kL1AlignBytes, facts.x2) != 0;
}

// Upper bound of one axis's split (GetTailBasicBlockSplitMax): the cores per
// tail block, and no piece below one alignment unit.
uint64_t SplitMax(const QuantFacts& facts, const SlidingWindow& w, bool is_m, uint64_t tile_max,
                  uint64_t size) {
  const uint64_t m_align_bytes =
      (facts.is_per_block || (facts.x2_nz && facts.trans_a && w.window_count == 1)) ? kL2AlignBytes
                                                                                    : kL1AlignBytes;
  const uint64_t n_align_bytes = facts.is_per_block ? kL2AlignBytes : kL1AlignBytes;
  const uint64_t align = is_m ? (facts.trans_a ? ElementsIn(m_align_bytes, facts.x1) : kFractalRows)
                              : BaseNAlign(facts, n_align_bytes);
  return std::min(tile_max, CeilDiv(size, align));
}

// 0: the split is not allowed; 2: it keeps the inner axis 32-byte aligned in
// a single-round case; 1: allowed (GetTailSplitState).
int SplitState(const QuantFacts& facts, const SlidingWindow& w, bool a_full_load, bool m_first,
               bool first_axis, uint64_t split, uint64_t size) {
  const bool is_m = first_axis == m_first;
  const bool check_nz = !facts.is_per_block && facts.x2_nz && (a_full_load || !is_m);
  if (check_nz && BreaksNzWeight(facts, w, a_full_load, split, first_axis)) return 0;
  const bool inner_axis = is_m ? facts.trans_a : !facts.trans_b;
  if (!inner_axis || w.window_count != 1) return 1;
  const uint64_t align = ElementsIn(kL1AlignBytes, is_m ? facts.x1 : facts.x2);
  return CeilDiv(size, split) % align == 0 ? 2 : 1;
}

}  // namespace

absl::Status CheckAswPlatform(const ChipSpec& chip) {
  if (chip.aic_num == 0 || chip.l1_bytes == 0 || chip.l0c_bytes == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("aic_num ", chip.aic_num, ", L1 ", chip.l1_bytes, ", L0C ", chip.l0c_bytes));
  }
  return absl::OkStatus();
}

SlidingWindow MakeSlidingWindow(const QuantFacts& facts, const ChipSpec& chip,
                                const BaseBlock& block, uint64_t batch_core_count) {
  SlidingWindow w;
  w.base_m = block.base_m;
  w.base_n = block.base_n;
  w.base_k = block.base_k;
  w.use_tail_window_logic = block.use_tail_window_logic;
  w.m_block_count = CeilDiv(facts.m, w.base_m);
  w.n_block_count = CeilDiv(facts.n, w.base_n);
  w.total_block_count = batch_core_count * w.m_block_count * w.n_block_count;
  w.m_tail = facts.m - (w.m_block_count - 1) * w.base_m;
  w.n_tail = facts.n - (w.n_block_count - 1) * w.base_n;
  w.window_count = CeilDiv(w.total_block_count, chip.aic_num);
  w.tail_window_block_count = w.total_block_count % chip.aic_num;
  return w;
}

void BalanceEdgeBlocks(const QuantFacts& facts, const ChipSpec& chip, SlidingWindow* w) {
  if ((facts.trans_a && !facts.trans_b) || (facts.is_per_block && facts.group_size_m != 1)) {
    return;
  }
  if (w->m_block_count == 1 || w->n_block_count == 1) return;
  const bool mx_fp4 = facts.is_mx && facts.x1 == GeDtype::kFloat4E2M1;
  const bool k_aligned = BytesOf(facts.k, facts.x1) % kL2AlignBytes == 0;
  // With a short K the fixpipe hides the imbalance.
  const bool short_k = facts.k < kBalanceMinK ||
                       (facts.k == kBalanceMinK && w->n_block_count >= kBalanceManyNBlocks);
  if (facts.m % w->base_m != 0 && !facts.trans_a &&
      (k_aligned || (facts.m >= kBalanceMinSize && !mx_fp4))) {
    MergeMTail(facts, w);
  }
  if (facts.n % w->base_n != 0 && facts.trans_b && !short_k && !facts.is_per_block && !mx_fp4 &&
      (k_aligned || facts.n >= kBalanceMinSize)) {
    MergeNTail(facts, chip, w);
  }
}

void SplitTailRoundGeneral(const QuantFacts& facts, const ChipSpec& chip, bool a_full_load,
                           SlidingWindow* w) {
  if (w->tail_window_block_count == 0) return;
  const bool m_first = w->m_tail >= w->n_tail;
  const uint64_t tile_max = chip.aic_num / w->tail_window_block_count;
  const uint64_t tail_base_m = w->m_base_tail_split_count != 1 ? w->m_tail_main : w->base_m;
  const uint64_t m_size = std::min(facts.m, tail_base_m);
  const uint64_t n_size = std::min(facts.n, w->base_n);
  const uint64_t m_max = SplitMax(facts, *w, true, tile_max, m_size);
  const uint64_t n_max = SplitMax(facts, *w, false, tile_max, n_size);
  const uint64_t first_max = m_first ? m_max : n_max;
  const uint64_t second_max = m_first ? n_max : m_max;
  const uint64_t first_size = m_first ? m_size : n_size;
  const uint64_t second_size = m_first ? n_size : m_size;

  // Whether the first (second) axis's split can grow by one.
  auto can_grow = [&](bool first_axis, uint64_t first, uint64_t second) {
    const uint64_t next_first = first_axis ? first + 1 : first;
    const uint64_t next_second = first_axis ? second : second + 1;
    const uint64_t m_tile = m_first ? next_first : next_second;
    const uint64_t n_tile = m_first ? next_second : next_first;
    return (first_axis ? first < first_max : second < second_max) &&
           TailCoreCount(*w, m_tile, n_tile) <= chip.aic_num;
  };
  uint64_t first = 1, second = 1;
  uint64_t first_valid = 1, second_valid = 1;
  uint64_t first_aligned = 1, second_aligned = 1;
  while (can_grow(true, first, second) || can_grow(false, first, second)) {
    if (can_grow(true, first, second)) {
      ++first;
      const int state = SplitState(facts, *w, a_full_load, m_first, true, first, first_size);
      if (state > 0) first_valid = first;
      if (state > 1) first_aligned = first;
    }
    if (can_grow(false, first, second)) {
      ++second;
      const int state = SplitState(facts, *w, a_full_load, m_first, false, second, second_size);
      if (state > 0) second_valid = second;
      if (state > 1) second_aligned = second;
    }
  }
  const uint64_t first_tile = first_aligned != 1 ? first_aligned : first_valid;
  const uint64_t second_tile = second_aligned != 1 ? second_aligned : second_valid;
  w->m_tail_tile = m_first ? first_tile : second_tile;
  w->n_tail_tile = m_first ? second_tile : first_tile;
}

void SplitTailRoundAFullLoad(const QuantFacts& facts, const ChipSpec& chip, SlidingWindow* w) {
  w->m_tail_tile = 1;
  uint64_t tile = 1;
  uint64_t valid = 1;
  if (w->tail_window_block_count != 0) {
    while (TailCoreCount(*w, w->m_tail_tile, tile + 1) <= chip.aic_num &&
           w->base_n / (tile + 1) >= kFractalRows) {
      ++tile;
      if (BreaksNzWeight(facts, *w, /*a_full_load=*/true, tile, /*first_axis=*/true)) continue;
      valid = tile;
    }
  }
  w->n_tail_tile = valid;
}

void SplitTailRound(const QuantFacts& facts, const ChipSpec& chip, bool a_full_load,
                    SlidingWindow* w) {
  if (!w->use_tail_window_logic) return;
  if (a_full_load) {
    SplitTailRoundAFullLoad(facts, chip, w);
  } else {
    SplitTailRoundGeneral(facts, chip, /*a_full_load=*/false, w);
  }
}

uint32_t UsedCoreCount(const SlidingWindow& w, const ChipSpec& chip) {
  if (w.window_count > 1 || w.tail_window_block_count == 0) return chip.aic_num;
  return static_cast<uint32_t>(w.tail_window_block_count * w.m_tail_tile * w.n_tail_tile);
}

bool CheckBiasAndScale(const QuantFacts& facts, uint64_t base_n, uint32_t db_l0c) {
  // A non-BF16 bias goes through the 4 KiB bias table; without a vector
  // dequant (BF16 output or a per-token scale) the scale goes through the
  // fixpipe buffer. Both limit baseN.
  const uint64_t bias_max = db_l0c == 1 ? kBiasMaxBaseN : kBiasMaxBaseNDb;
  const uint64_t scale_max = db_l0c == 1 ? kScaleMaxBaseN : kScaleMaxBaseNDb;
  const bool bias_too_wide =
      facts.has_bias && facts.bias != GeDtype::kBFloat16 && base_n > bias_max;
  const bool vector_dequant = facts.y == GeDtype::kBFloat16 || facts.is_pertoken;
  const bool scale_too_wide = !vector_dequant && base_n > scale_max;
  return !bias_too_wide && !scale_too_wide;
}

uint32_t ChooseDbL0c(const QuantFacts& facts, const ChipSpec& chip, uint64_t base_m,
                     uint64_t base_n) {
  const bool fits = base_m * base_n * kL0cBytesPerElement * kDoubleBuffer <= chip.l0c_bytes;
  return fits && CheckBiasAndScale(facts, base_n, kDoubleBuffer) ? kDoubleBuffer : 1;
}

bool IsWeightMustHitL2(const QuantFacts& facts, uint64_t base_m) {
  bool batch_broadcast = false;
  for (size_t i = 0; i < facts.batch_b_dims.size(); ++i) {
    if (facts.batch_b_dims[i] == 1 && facts.batch_c_dims[i] > 1) batch_broadcast = true;
  }
  const uint64_t inner = facts.trans_b ? facts.k : facts.n;
  const uint64_t inner_bytes = BytesOf(inner, facts.x2);
  const bool inner_aligned = inner_bytes != 0 && inner_bytes % kL2AlignBytes == 0;
  return base_m < facts.m || batch_broadcast || !inner_aligned;
}

std::vector<uint32_t> WriteBasicApiWords(const QuantFacts& facts, const BasicApiTiling& tiling,
                                         const SlidingWindow& w) {
  auto u32 = [](uint64_t v) { return static_cast<uint32_t>(v); };
  std::vector<uint32_t> words;
  words.reserve(kBasicApiWordCount);
  // 0-14: batch products and the right-aligned batch dims of A, B and C.
  words.push_back(u32(facts.batch_a));
  words.push_back(u32(facts.batch_b));
  words.push_back(u32(facts.batch_c));
  for (uint64_t d : facts.batch_a_dims) words.push_back(u32(d));
  for (uint64_t d : facts.batch_b_dims) words.push_back(u32(d));
  for (uint64_t d : facts.batch_c_dims) words.push_back(u32(d));
  // 15-21: quant modes, bias, group sizes.
  words.push_back(tiling.x1_quant_mode);
  words.push_back(tiling.x2_quant_mode);
  words.push_back(facts.batch_bias > 1 ? 1 : 0);
  words.push_back(static_cast<uint32_t>(facts.bias));
  words.push_back(u32(facts.group_size_m));
  words.push_back(u32(facts.group_size_n));
  words.push_back(u32(facts.group_size_k));
  // 22-31: the cube tiling; word 31 packs four bytes, low byte first.
  words.push_back(u32(facts.m));
  words.push_back(u32(facts.n));
  words.push_back(u32(facts.k));
  words.push_back(u32(tiling.base_m));
  words.push_back(u32(tiling.base_n));
  words.push_back(u32(tiling.base_k));
  words.push_back(u32(tiling.k_al1));
  words.push_back(u32(tiling.k_bl1));
  words.push_back(u32(tiling.scale_k_l1));
  words.push_back((tiling.buffer_count & 0xFF) | (facts.has_bias ? 1u : 0u) << 8 |
                  (tiling.db_l0c & 0xFF) << 16 | (tiling.weight_must_hit_l2 ? 1u : 0u) << 24);
  // 32-37: the window's tail split and edge balancing.
  words.push_back(u32(w.m_tail_tile));
  words.push_back(u32(w.n_tail_tile));
  words.push_back(u32(w.m_base_tail_split_count));
  words.push_back(u32(w.n_base_tail_split_count));
  words.push_back(u32(w.m_tail_main));
  words.push_back(u32(w.n_tail_main));
  return words;
}

std::vector<uint32_t> WriteWithoutBatchWords(const QuantFacts& facts, const BasicApiTiling& tiling,
                                             const SlidingWindow& w) {
  auto u32 = [](uint64_t v) { return static_cast<uint32_t>(v); };
  auto pair16 = [](uint64_t low, uint64_t high) {
    return (static_cast<uint32_t>(low) & 0xFFFF) | (static_cast<uint32_t>(high) & 0xFFFF) << 16;
  };
  auto quad8 = [](uint32_t b0, uint32_t b1, uint32_t b2, uint32_t b3) {
    return (b0 & 0xFF) | (b1 & 0xFF) << 8 | (b2 & 0xFF) << 16 | (b3 & 0xFF) << 24;
  };
  std::vector<uint32_t> words;
  words.reserve(kWithoutBatchWordCount);
  words.push_back(u32(facts.m));
  words.push_back(u32(facts.n));
  words.push_back(u32(facts.k));
  words.push_back(u32(tiling.k_al1));
  words.push_back(u32(tiling.k_bl1));
  words.push_back(u32(tiling.scale_k_l1));
  words.push_back(pair16(tiling.base_m, tiling.base_n));
  words.push_back(pair16(tiling.base_k, facts.group_size_m));
  words.push_back(pair16(facts.group_size_n, facts.group_size_k));
  words.push_back(pair16(w.m_tail_tile, w.n_tail_tile));
  words.push_back(pair16(w.m_base_tail_split_count, w.n_base_tail_split_count));
  words.push_back(pair16(w.m_tail_main, w.n_tail_main));
  words.push_back(quad8(tiling.x1_quant_mode, tiling.x2_quant_mode, facts.has_bias ? 1 : 0,
                        static_cast<uint32_t>(facts.bias)));
  words.push_back(quad8(tiling.buffer_count, tiling.db_l0c, tiling.weight_must_hit_l2 ? 1 : 0, 0));
  words.push_back(0);
  words.push_back(0);
  return words;
}

}  // namespace npu::tiling::quant
