// The N tail re-split of GroupedMatmul's weight-quant kernel
// (CalcResplitTiling of grouped_weight_quant_batch_matmul_tiling.cpp).
//
// Vocabulary: the kernel walks N in blocks, one per cube core at a time. A
// main block is 256 columns; `main_block_count` rounds of them cover N's
// body on every core. What is left (the tail) is cut into as many blocks as
// there are cores (or twice as many, so that no block exceeds 256): the
// first `first_count` of size `first_size`, then `second_count` one C0 (NZ)
// or one column (ND) wider. When N is at most 128 columns per core, the
// cores cannot all be fed: the blocks are N / 256 rounded up (enough groups
// to fill the cores) or N / 128, and `cube_blocks_n` says how many cores
// take a block. Every block outside [128, 256] (for N of at least 128) is
// refused, as CANN refuses it. Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_RESPLIT_H_
#define NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_RESPLIT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/tiling/grouped/weight_quant/gwq_facts.h"

namespace npu::tiling::grouped::weight_quant {

// The kernel's basic block: 256 x 256 (240 rows with a bias on the vector
// path, whose L0C also stages the bias), K 64 per step.
inline constexpr uint32_t kGwqBaseM = 256;
inline constexpr uint32_t kGwqBaseMWithBias = 240;
inline constexpr uint32_t kGwqBaseN = 256;
inline constexpr uint32_t kGwqBaseK = 64;
// The smallest tail block the re-split makes.
inline constexpr uint32_t kGwqBaseNMin = 128;

// TailBlockResplitParam, and the cores that take N's blocks.
struct GwqResplit {
  uint32_t main_block_size = 0;
  uint64_t main_block_count = 0;  // per core; the struct holds it times aic_num
  uint16_t first_size = 0;
  uint16_t second_size = 0;
  uint16_t first_count = 0;
  uint16_t second_count = 0;
  // cubeNumBlocksN before its uint8 word: aic_num, or the blocks of a
  // narrow N. 0 when the re-split does not run.
  uint64_t cube_blocks_n = 0;
  // Which branch decided it, in words.
  std::string detail;
};

// EnableTailResplit: not for the multi-tensor form, not for a
// non-transposed ND weight, not for a transposed A16W4 ND per-group one.
bool GwqTailResplitEnabled(const GwqFacts& facts);

// C0 of x (elements of one 32-byte block: 32 / bytes per element).
uint64_t GwqC0(DataType x);

// CalcResplitTiling on a parsed problem: all zero (and no check) when the
// re-split is off; INVALID_ARGUMENT where CANN refuses the problem (an NZ
// weight's N not a multiple of C0, a block outside [128, 256]).
absl::StatusOr<GwqResplit> GwqCalcResplit(const GwqFacts& facts);

}  // namespace npu::tiling::grouped::weight_quant

#endif  // NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_RESPLIT_H_
