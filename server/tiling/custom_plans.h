// Plans built by CANN's own rules for shapes a caller chooses.
//
// The advisor explores plans CANN's heuristics would not pick (another base
// block, a resident band of one operand, dot products on the AIV cores for
// 16-bit operands). Every such plan must still follow CANN's rules for
// everything the caller did not choose: base_k, the L1 stages, the tail-round
// re-split, the fp32 in-core K split, the tiling-data serialization. These
// functions apply the engine's own heuristics (block_heuristics.h and the
// strategies) to the chosen shape, so the rules live in one place. Part of
// `npu_tiling`'s public API, with registry.h, builtin_strategies.h and
// strategy_id.h.
#ifndef NPU_SERVER_TILING_CUSTOM_PLANS_H_
#define NPU_SERVER_TILING_CUSTOM_PLANS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// The L1 a resident operand (a whole matrix or a band) may take: 3/4 of L1,
// CANN's full-load limit (seeds/001 2.5.1: "(M·K·dtypeA + bias) <= 3/4·L1");
// the rest streams the other operand.
inline uint64_t ResidentLimitBytes(const ChipSpec& chip) { return chip.l1_bytes * 3 / 4; }
// Full-load style kernels stage at most 4 K slices of the streamed operand.
inline constexpr uint64_t kMaxStreamedKSteps = 4;

// CANN's base_k for a base_m x base_n block of `problem` (the whole aligned K
// when it fits the L0A ping-pong half, else the largest aligned slice that
// does); 0 when not even 16 elements fit.
uint64_t BlockBaseK(const MatmulProblem& problem, const ChipSpec& chip, uint64_t base_m,
                    uint64_t base_n);

// CANN's streamed BASIC_ASWT plan (no full load) with base blocks
// base_m x base_n, one block per L1 tile: base_k, the L1 stages, the
// tail-round re-split and the fp32 in-core K split as CANN sets them for that
// block. kFailedPrecondition, saying why, when no base_k or no L1 stage fits
// the block. The caller checks the result with CheckPlanFits().
absl::StatusOr<TilingPlan> StreamedAswtPlan(const MatmulProblem& problem, const ChipSpec& chip,
                                            uint64_t base_m, uint64_t base_n);

// The shape of a BASIC_ASWT plan that keeps a band of one operand resident
// in L1, the whole K deep.
struct ResidentBandShape {
  L1Residency side = L1Residency::kABand;  // kABand: rows of A; kBBand: columns of B
  uint64_t band_base = 0;                  // base block edge along the band (base_m for kABand)
  uint64_t band_steps = 0;        // base blocks per band: the band is band_base x band_steps
  uint64_t streamed_base = 0;     // base block edge of the streamed operand
  uint64_t streamed_k_steps = 0;  // base_k slices per L1 stage of the streamed operand
  uint64_t base_k = 0;
};

// The BASIC_ASWT plan of `shape`: one band and one streamed block per L1
// tile, the tail round re-split along the streamed axis only (so every piece
// keeps its band, as CANN's full-load kernels do), the rest by CANN's rules.
// The plan's l1_residency is `shape.side`; its SWAT window and detail are the
// caller's.
TilingPlan ResidentBandPlan(const MatmulProblem& problem, const ChipSpec& chip,
                            const ResidentBandShape& shape);

// CANN's TO_MUL plan (vector dot products on the AIV cores) for a problem
// with M == 1 or N == 1, whatever its operand dtype.
absl::StatusOr<TilingPlan> VectorMulPlan(const MatmulProblem& problem, const ChipSpec& chip);

// The plan of TransposeBatchMatMul's or TransposeQuantBatchMatMul's BASE
// with the block base_m x base_n instead of CANN's (no decode-shape
// rebalance; defined in strategies/transpose_batch.cc): base_k by the rule CANN applies to a
// rebalanced block (the largest multiple of its K alignment of which the
// block's longer side fits half of L0A, at most K), then the strategy's own L1 staging,
// key and struct, so that the op's kernel runs it. For the advisor's block
// search. kFailedPrecondition when not even one K alignment unit fits, or
// as the strategy fails; kInvalidArgument for a problem of another op.
absl::StatusOr<TilingPlan> TransposePlanWithBlock(const MatmulProblem& problem,
                                                  const ChipSpec& chip, uint64_t base_m,
                                                  uint64_t base_n);

// GroupedMatmul's no-quant plan with the block base_m x base_n in place of
// CANN's (defined in grouped/no_quant/no_quant_strategy.cc): CANN's checks
// of the problem first, then baseK as deep as the double-buffered L0A and
// L0B hold (at most K), the core count, the tail re-split and the L1 steps
// by CANN's rules for that block, serialized as GROUPED_NO_QUANT's struct,
// so that the basic kernel runs it. For the advisor's block search.
// kInvalidArgument for a problem off that path or a block L0 cannot hold.
absl::StatusOr<TilingPlan> GroupedNoQuantPlanWithBlock(const MatmulProblem& problem,
                                                       const ChipSpec& chip, uint64_t base_m,
                                                       uint64_t base_n);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_CUSTOM_PLANS_H_
