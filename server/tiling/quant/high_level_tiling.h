// What CANN's two high-level-API QuantBatchMatmulV3 strategies on DAV_3510
// share (MIX_ASW and CUBE_ASW, matmul/quant_batch_matmul_v3/op_host/
// op_tiling/arch35/adaptive_sliding_window_{mix,cube}_tiling.cpp and their
// base, adaptive_sliding_window_tiling.cpp): the sliding window over the
// output with no batch spread (the kernel walks the batch itself), their A
// full load, the UB split of the per-token dequant and the 96-word
// QuantBatchMatmulV3TilingDataParams with the high-level TCubeTiling filled
// directly (no Matmul API search runs on this chip).
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_HIGH_LEVEL_TILING_H_
#define NPU_SERVER_TILING_QUANT_HIGH_LEVEL_TILING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "server/tiling/quant/l1_tiling_calculator.h"
#include "server/tiling/quant/quant_facts.h"
#include "server/tiling/quant/sliding_window.h"
#include "server/tiling/types.h"

namespace npu::tiling::quant {

inline constexpr int kHighLevelWordCount = 96;

// The rows and columns of one per-token dequant pass in UB (ubCalcM x
// ubCalcN).
struct UbTiling {
  uint32_t calc_m = 0, calc_n = 0;
};

// CANN's CalcUbTiling: ubCalcN = baseN; ubCalcM = the rows whose
// double-buffered INT32 input, output and per-token scale fit in UB once
// one baseN row of the per-channel scale (when not per tensor) and the
// per-token scale's 32-byte padding are set aside, capped at half of baseM
// and half of M (one half per vector core).
UbTiling CalcPertokenUbTiling(const QuantFacts& facts, const ChipSpec& chip, uint64_t base_m,
                              uint64_t base_n);

// The A full load of MIX_ASW and CUBE_ASW (UpdateAFullLoadStatus): no A
// batch, no per-block, no INT32 output, not MX with an odd number of K
// groups or a layout other than (x1 plain, x2 transposed); one block row of
// A (at most 256 KiB, 32-byte aligned K) and no more M blocks than N blocks;
// and either 1, 2 or 4 M blocks dividing the cores, or one round of blocks.
// When it holds, the block row takes the balanced height and the M
// balancing is dropped.
bool DecideHighLevelAFullLoad(const QuantFacts& facts, const ChipSpec& chip, SlidingWindow* window);

// The vector cores dequantize the output (HasVecPostProcess): a float
// per-channel scale, a per-token scale, the bf16 mix or per-block, and not
// INT32 output.
bool HasVectorEpilogue(const QuantFacts& facts);

// The key's kernel type of the high-level strategies (GetKernelType): 3 / 2
// (A full load or not) with a vector epilogue, 1 / 0 without.
uint32_t HighLevelKernelType(const QuantFacts& facts, bool a_full_load);

// Everything the 96-word struct needs.
struct HighLevelTiling {
  SlidingWindow window;
  bool a_full_load = false;
  uint32_t used_core_count = 0;
  uint64_t single_core_m = 0, single_core_n = 0, single_core_k = 0;
  uint32_t db_l0c = 1;
  L1Tiling l1;
  UbTiling ub;  // zero unless the x1 scale is per token
};

// The high-level strategies' pipeline on `facts` (already INT4-rewritten by
// the caller where CANN rewrites): DEFAULT base block with one batch slot,
// edge balancing, A full load, tail-round split, L0C double buffering, L1
// split (A_L1_FULL_LOAD or DEFAULT) and the per-token UB split.
// kFailedPrecondition where CANN's tiling fails.
absl::StatusOr<HighLevelTiling> ComputeHighLevelTiling(const QuantFacts& facts,
                                                       const ChipSpec& chip);

// CANN's QuantBatchMatmulV3TilingDataParams as int32 words: 0-33 params,
// 34-83 TCubeTiling, 84-89 the (unused) L2 tile params, 90-95 the window.
// l2CacheDisable (word 32) is 0: CANN turns the L2 bypass on only through
// the enable_uncache attribute, which requests do not carry.
std::vector<uint32_t> WriteHighLevelWords(const QuantFacts& facts, const HighLevelTiling& tiling);

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_HIGH_LEVEL_TILING_H_
