// The base block (baseM x baseN x baseK, one L0 tile) of CANN's
// QuantBatchMatmulV3 sliding-window strategies on DAV_3510
// (matmul/quant_batch_matmul_v3/op_host/op_tiling/arch35/base_block_calculator.cpp).
//
// Two modes are ported: DEFAULT (the cube, mix and MX strategies) and
// PERBLOCK, each followed for MX inputs by the 2-3-round load-balancing
// search (OptimizeBaseBlockForLoadBalance). Not ported: the Stream-K mode.
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_BASE_BLOCK_CALCULATOR_H_
#define NPU_SERVER_TILING_QUANT_BASE_BLOCK_CALCULATOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/tiling/quant/quant_facts.h"
#include "server/tiling/types.h"

namespace npu::tiling::quant {

enum class BaseBlockMode { kDefault, kPerBlock };

struct BaseBlock {
  uint64_t base_m = 0, base_n = 0, base_k = 0;
  // False when the block was re-derived to fill under-used cores; the
  // sliding window then does not split its last round further.
  bool use_tail_window_logic = true;
};

// Alignment of baseM: 32 bytes of x1 when x1 is transposed (M is its inner
// axis), else one 16-row fractal.
uint64_t BaseMAlign(const QuantFacts& facts);
// Alignment of baseN: `inner_align_bytes` bytes of x2 when N is x2's inner
// axis (x2 not transposed), else 16 rows.
uint64_t BaseNAlign(const QuantFacts& facts, uint64_t inner_align_bytes);
// Alignment of baseK: 64 for MX, else 32 bytes of x1.
uint64_t BaseKAlign(const QuantFacts& facts);

// CANN's BaseBlockCalculator::Compute for `mode`, with the output batch
// spread over the cores `batch_core_count` times. kFailedPrecondition where
// CANN fails (no cores, a zero alignment or block).
absl::StatusOr<BaseBlock> ComputeBaseBlock(const QuantFacts& facts, const ChipSpec& chip,
                                           uint64_t batch_core_count, BaseBlockMode mode);

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_BASE_BLOCK_CALCULATOR_H_
