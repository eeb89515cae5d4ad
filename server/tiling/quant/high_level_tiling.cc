#include "server/tiling/quant/high_level_tiling.h"

#include <algorithm>

#include "server/tiling/int_math.h"
#include "server/tiling/quant/base_block_calculator.h"
#include "server/tiling/quant/quant_capability.h"
#include "server/tiling/quant/quant_dtype.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::quant {
namespace {

constexpr uint64_t kFractalRows = 16;
constexpr uint64_t kReduceBlock = 32;
// A stays under 256 KiB so that B, bias and scale still fit beside it.
constexpr uint64_t kAFullLoadMaxBytes = uint64_t{256} << 10;
// The M block counts whose rows A full load keeps on a fixed set of cores.
constexpr uint64_t kFullLoadRowCounts[] = {1, 2, 4};
// MX scales cover 32 K elements; the kernel pairs them.
constexpr uint64_t kMxGroupSize = 32;
constexpr uint64_t kMxGroupPair = 2;
constexpr uint64_t kDoubleBuffer = 2;
constexpr uint64_t kUbAlignBytes = 32;
constexpr uint64_t kInt32Bytes = 4;
constexpr uint32_t kVectorCoresPerCube = 2;
constexpr uint32_t kMinScaleFactor = 1, kMaxScaleFactor = 127;
constexpr uint32_t kKernelPlain = 0;         // NO_VEC_EPILOGUE_WITH_MMAPI
constexpr uint32_t kKernelAFullLoad = 1;     // NO_VEC_EPILOGUE_CUSTOM_GMTOAL1_WITH_MMAPI
constexpr uint32_t kKernelVec = 2;           // VEC_EPILOGUE_WITH_MMAPI
constexpr uint32_t kKernelVecAFullLoad = 3;  // VEC_EPILOGUE_CUSTOM_GMTOAL1_WITH_MMAPI

bool IsMxKOdd(const QuantFacts& facts) {
  return facts.scale == GeDtype::kFloat8E8M0 && CeilDiv(facts.k, kMxGroupSize) % kMxGroupPair != 0;
}

bool IsMxBackwardLayout(const QuantFacts& facts) {
  return facts.scale == GeDtype::kFloat8E8M0 && (facts.trans_a || !facts.trans_b);
}

}  // namespace

UbTiling CalcPertokenUbTiling(const QuantFacts& facts, const ChipSpec& chip, uint64_t base_m,
                              uint64_t base_n) {
  UbTiling ub;
  ub.calc_n = static_cast<uint32_t>(base_n);
  // Per row: the INT32 input and the output, double-buffered, plus the
  // row's per-token scale, double-buffered. GE's raw dtype sizes, as CANN.
  const uint64_t pertoken_bytes = GeSizeOf(facts.pertoken);
  const uint64_t row_bytes = kDoubleBuffer * (kInt32Bytes + GeSizeOf(facts.y)) * ub.calc_n +
                             kDoubleBuffer * pertoken_bytes;
  uint64_t budget = chip.ub_bytes;
  // CANN takes the two reserves in 32-bit unsigned arithmetic.
  if (!facts.is_per_tensor) budget -= static_cast<uint32_t>(GeSizeOf(facts.scale) * ub.calc_n);
  budget -= static_cast<uint32_t>(kDoubleBuffer * (kUbAlignBytes - pertoken_bytes));
  const uint32_t fit = static_cast<uint32_t>(budget / row_bytes);
  const uint32_t half_base_m =
      static_cast<uint32_t>(CeilDiv(static_cast<uint32_t>(base_m), kVectorCoresPerCube));
  const uint32_t half_m =
      static_cast<uint32_t>(CeilDiv(static_cast<uint32_t>(facts.m), kVectorCoresPerCube));
  ub.calc_m = std::min({fit, half_base_m, half_m});
  return ub;
}

bool DecideHighLevelAFullLoad(const QuantFacts& facts, const ChipSpec& chip, SlidingWindow* w) {
  if (facts.batch_a != 1 || IsMxKOdd(facts) || IsMxBackwardLayout(facts) || facts.is_per_block ||
      facts.y == GeDtype::kInt32) {
    return false;
  }
  const uint64_t row_m = w->m_base_tail_split_count == 1 ? w->base_m : w->m_tail_main;
  const uint64_t a_bytes =
      row_m * (facts.trans_a ? BytesOf(CeilAlign(facts.k, kFractalRows), facts.x1)
                             : CeilAlign(BytesOf(facts.k, facts.x1), kReduceBlock));
  bool rows_fit_cores = false;
  for (uint64_t count : kFullLoadRowCounts) {
    if (w->m_block_count == count && chip.aic_num >= count && chip.aic_num % count == 0) {
      rows_fit_cores = true;
    }
  }
  const bool one_round = w->m_block_count * w->n_block_count <= chip.aic_num;
  const bool full = a_bytes <= kAFullLoadMaxBytes && w->m_block_count <= w->n_block_count &&
                    (rows_fit_cores || one_round);
  if (full && w->base_m != row_m) {
    w->base_m = row_m;
    w->m_base_tail_split_count = 1;
    w->m_tail_main = 0;
  }
  return full;
}

bool HasVectorEpilogue(const QuantFacts& facts) {
  const bool mix = IsScaleVecPostProcess(facts) || facts.is_pertoken || IsBf16Mix(facts);
  return (mix || facts.is_per_block) && facts.y != GeDtype::kInt32;
}

uint32_t HighLevelKernelType(const QuantFacts& facts, bool a_full_load) {
  if (HasVectorEpilogue(facts)) return a_full_load ? kKernelVecAFullLoad : kKernelVec;
  return a_full_load ? kKernelAFullLoad : kKernelPlain;
}

absl::StatusOr<HighLevelTiling> ComputeHighLevelTiling(const QuantFacts& facts,
                                                       const ChipSpec& chip) {
  RETURN_IF_ERROR(CheckAswPlatform(chip));
  // The high-level kernel loops over the batch itself: one batch slot.
  constexpr uint64_t kBatchCores = 1;
  ASSIGN_OR_RETURN(const BaseBlock block,
                   ComputeBaseBlock(facts, chip, kBatchCores, BaseBlockMode::kDefault));
  HighLevelTiling t;
  t.window = MakeSlidingWindow(facts, chip, block, kBatchCores);
  BalanceEdgeBlocks(facts, chip, &t.window);
  t.a_full_load = DecideHighLevelAFullLoad(facts, chip, &t.window);
  SplitTailRound(facts, chip, t.a_full_load, &t.window);

  const SlidingWindow& w = t.window;
  t.used_core_count = UsedCoreCount(w, chip);
  t.single_core_m = std::min(facts.m, w.base_m);
  t.single_core_n = std::min(facts.n, w.base_n);
  t.single_core_k = facts.k;
  t.db_l0c = ChooseDbL0c(facts, chip, w.base_m, w.base_n);
  ASSIGN_OR_RETURN(
      t.l1, ComputeL1Tiling(facts, chip, w.base_m, w.base_n, w.base_k,
                            t.a_full_load ? L1TilingMode::kAFullLoad : L1TilingMode::kDefault));
  if (facts.is_pertoken) t.ub = CalcPertokenUbTiling(facts, chip, w.base_m, w.base_n);
  return t;
}

std::vector<uint32_t> WriteHighLevelWords(const QuantFacts& facts, const HighLevelTiling& t) {
  auto u32 = [](uint64_t v) { return static_cast<uint32_t>(v); };
  std::vector<uint32_t> words(kHighLevelWordCount, 0);
  // 0-14: batch products and the right-aligned batch dims of A, B and C.
  words[0] = u32(facts.batch_a);
  words[1] = u32(facts.batch_b);
  words[2] = u32(facts.batch_c);
  for (size_t i = 0; i < 4; ++i) {
    words[3 + i] = u32(facts.batch_a_dims[i]);
    words[7 + i] = u32(facts.batch_b_dims[i]);
    words[11 + i] = u32(facts.batch_c_dims[i]);
  }
  // 15-33: the dequant parameters. singleCoreBatch, needUbBuffer,
  // realSingleCoreM/N, ubSize, isMClash/isNClash and l2CacheDisable stay 0.
  words[16] = facts.is_per_tensor ? 1 : 0;
  words[17] = facts.is_pertoken ? 1 : 0;
  words[18] = facts.is_double_scale ? 1 : 0;
  words[19] = facts.batch_bias > 1 ? 1 : 0;
  words[20] = t.ub.calc_m;
  words[21] = t.ub.calc_n;
  words[25] = static_cast<uint32_t>(facts.bias);
  words[29] = u32(facts.group_size_m);
  words[30] = u32(facts.group_size_n);
  words[31] = u32(facts.group_size_k);
  // 34-83: TCubeTiling. Only the fields below are set; iterateOrder
  // (word 51) is 0, L0A and L0B are always double-buffered.
  const SlidingWindow& w = t.window;
  words[34] = t.used_core_count;
  words[35] = u32(facts.m);
  words[36] = u32(facts.n);
  words[37] = u32(facts.k);  // Ka
  words[38] = u32(facts.k);  // Kb
  words[39] = u32(t.single_core_m);
  words[40] = u32(t.single_core_n);
  words[41] = u32(t.single_core_k);
  words[42] = u32(w.base_m);
  words[43] = u32(w.base_n);
  words[44] = u32(w.base_k);
  words[45] = u32(t.l1.depth_ka);
  words[46] = u32(t.l1.depth_kb);
  words[47] = 1;  // stepM
  words[48] = 1;  // stepN
  words[49] = facts.has_bias ? 1 : 0;
  words[60] = u32(t.l1.step_ka);
  words[61] = u32(t.l1.step_kb);
  words[64] = kDoubleBuffer;  // dbL0A
  words[65] = kDoubleBuffer;  // dbL0B
  words[66] = t.db_l0c;
  if (facts.is_mx) {
    // mxTypePara: 1 | 1 in the top bytes, then the scale factors of B and A
    // when both lie in 1..127, else 1 and 1.
    const bool factors_ok =
        t.l1.scale_factor_a >= kMinScaleFactor && t.l1.scale_factor_a <= kMaxScaleFactor &&
        t.l1.scale_factor_b >= kMinScaleFactor && t.l1.scale_factor_b <= kMaxScaleFactor;
    const uint32_t factor_a = factors_ok ? u32(t.l1.scale_factor_a) : kMinScaleFactor;
    const uint32_t factor_b = factors_ok ? u32(t.l1.scale_factor_b) : kMinScaleFactor;
    words[83] = kMinScaleFactor << 24 | kMinScaleFactor << 16 | factor_b << 8 | factor_a;
  }
  // 90-95: the window's tail split and edge balancing.
  words[90] = u32(w.m_tail_tile);
  words[91] = u32(w.n_tail_tile);
  words[92] = u32(w.m_base_tail_split_count);
  words[93] = u32(w.n_base_tail_split_count);
  words[94] = u32(w.m_tail_main);
  words[95] = u32(w.n_tail_main);
  return words;
}

}  // namespace npu::tiling::quant
