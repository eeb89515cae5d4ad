// The adaptive sliding window (ASW) shared by CANN's QuantBatchMatmulV3
// strategies on DAV_3510
// (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/adaptive_sliding_window_tiling.cpp):
// the output is cut into base blocks, the blocks are dealt to the cube cores
// in rounds ("windows") of aic_num, and two refinements even out the work:
//  - edge balancing merges the ragged last M (or N) block with its
//    neighbours into equal "tail main" blocks;
//  - the tail round, when it has fewer blocks than cores, splits each of its
//    blocks into mTailTile x nTailTile pieces.
// Also here: the L0C double-buffer rule, the weight-must-hit-L2 flag and the
// 38-word basic-API and 16-word without-batch tiling structs the strategies
// emit.
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_SLIDING_WINDOW_H_
#define NPU_SERVER_TILING_QUANT_SLIDING_WINDOW_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "server/tiling/quant/base_block_calculator.h"
#include "server/tiling/quant/quant_facts.h"
#include "server/tiling/types.h"

namespace npu::tiling::quant {

// The library workspace every ASW plan asks for on DAV_3510 (asc-devkit's
// platform_ascendc.cpp).
inline constexpr uint64_t kLibraryWorkspaceBytes = uint64_t{16} << 20;

// kFailedPrecondition when aic_num, L1 or L0C is zero (the ASW strategies'
// platform check, which ends CANN's walk).
absl::Status CheckAswPlatform(const ChipSpec& chip);

struct SlidingWindow {
  uint64_t base_m = 0, base_n = 0, base_k = 0;
  uint64_t m_block_count = 0, n_block_count = 0;
  uint64_t total_block_count = 0;        // including the batch spread over cores
  uint64_t m_tail = 0, n_tail = 0;       // size of the last block along M / N
  uint64_t window_count = 0;             // rounds: ceil(total blocks / aic_num)
  uint64_t tail_window_block_count = 0;  // blocks of the last, partial round
  // The tail-round split.
  uint64_t m_tail_tile = 1, n_tail_tile = 1;
  // Edge balancing: the last `*_base_tail_split_count` blocks along M (N)
  // become blocks of `*_tail_main` rows (columns).
  uint64_t m_base_tail_split_count = 1, n_base_tail_split_count = 1;
  uint64_t m_tail_main = 0, n_tail_main = 0;
  bool use_tail_window_logic = true;
};

// Block counts and rounds of `block` (CalcBlockWindowInfo), with no
// balancing or tail split yet.
SlidingWindow MakeSlidingWindow(const QuantFacts& facts, const ChipSpec& chip,
                                const BaseBlock& block, uint64_t batch_core_count);

// Edge balancing (OptimizeEdgeBasicBlock): M-tail merge when x1 is not
// transposed and K is 128-byte aligned (or M >= 1792 and not MXFP4); N-tail
// merge under a round-count model when x2 is transposed and K is large.
// Skipped for (transposed x1, plain x2), per-block with groupSizeM != 1 and
// a single block row or column.
void BalanceEdgeBlocks(const QuantFacts& facts, const ChipSpec& chip, SlidingWindow* window);

// The general tail-round split (CalcTailBasicBlock): split the longer tail
// axis first, growing both splits alternately while the tiles fit on the
// cores, preferring 32-byte inner-axis alignment in single-round cases and
// keeping an NZ weight's N splits 32-byte aligned. `a_full_load` changes
// which splits the NZ rule checks.
void SplitTailRoundGeneral(const QuantFacts& facts, const ChipSpec& chip, bool a_full_load,
                           SlidingWindow* window);

// The tail-round split with A fully loaded in L1 (CalcTailBasicBlockAfullLoad):
// N splits only, each piece at least 16 columns.
void SplitTailRoundAFullLoad(const QuantFacts& facts, const ChipSpec& chip, SlidingWindow* window);

// CANN's default dispatch (CalcTailRoundBasicBlockSplit on DAV_3510): nothing
// when the base block came from the core-utilization rebalancing, else the
// A-full-load or the general split.
void SplitTailRound(const QuantFacts& facts, const ChipSpec& chip, bool a_full_load,
                    SlidingWindow* window);

// Cores used (the block dim): all of them when there are several rounds or
// the only round is full, else the tail blocks times their split.
uint32_t UsedCoreCount(const SlidingWindow& window, const ChipSpec& chip);

// Whether baseN suits the bias table and the fixpipe scale buffer with
// `db_l0c` L0C buffers (CheckBiasAndScale).
bool CheckBiasAndScale(const QuantFacts& facts, uint64_t base_n, uint32_t db_l0c);

// 2 when two FP32 baseM x baseN tiles fit in L0C and CheckBiasAndScale allows
// double buffering, else 1.
uint32_t ChooseDbL0c(const QuantFacts& facts, const ChipSpec& chip, uint64_t base_m,
                     uint64_t base_n);

// The weight is read by several cores (baseM < M), broadcast over a batch dim,
// or has an inner axis that is not a multiple of 128 bytes.
bool IsWeightMustHitL2(const QuantFacts& facts, uint64_t base_m);

// The strategy-specific fields of the 38-word basic-API struct.
struct BasicApiTiling {
  uint32_t x1_quant_mode = 0, x2_quant_mode = 0;
  uint64_t base_m = 0, base_n = 0, base_k = 0;
  uint64_t k_al1 = 0, k_bl1 = 0, scale_k_l1 = 0;
  uint32_t buffer_count = 0;  // nBufferNum
  uint32_t db_l0c = 1;
  bool weight_must_hit_l2 = true;
};

inline constexpr int kBasicApiWordCount = 38;

// CANN's QuantBatchMatmulV3BasicAPITilingData as int32 words (batches, quant
// modes, bias, group sizes, the cube tiling, the window's tail fields). The
// bias dtype word is `facts.bias` even without a bias (INT32 then).
std::vector<uint32_t> WriteBasicApiWords(const QuantFacts& facts, const BasicApiTiling& tiling,
                                         const SlidingWindow& window);

inline constexpr int kWithoutBatchWordCount = 16;

// CANN's QuantBatchMatmulV3TensorAPIWithoutBatchTilingData (the Tensor-API
// kernels without a batch) as int32 words: m, n, k, kAL1, kBL1, scaleKL1, then
// 16-bit pairs (base block, group sizes, the window's tail fields) and 8-bit
// quads (quant modes and bias; buffers, dbL0C and the L2 flag), the first
// member in the low bits, and two reserved words.
std::vector<uint32_t> WriteWithoutBatchWords(const QuantFacts& facts, const BasicApiTiling& tiling,
                                             const SlidingWindow& window);

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_SLIDING_WINDOW_H_
