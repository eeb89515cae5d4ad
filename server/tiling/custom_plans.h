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

// QuantBatchMatmulV3 plans with another base block: CANN's own plan for a
// problem, its base block (baseM x baseN x baseK) and L1 staging (the K
// loads of A and B, their buffers, and for MX the scale window) replaced by
// the caller's, everything else (quant modes, key, struct, workspace) kept.
// The sliding window's edge balancing and tail-round split are re-derived
// for the new block by CANN's own rules (sliding_window.h), so that the
// struct is one the kernel walks as CANN's. For the advisor's block search
// (server/advisor/variants.h); defined in quant/reblocked_plan.cc.
//
// The kernels that read a re-blocked plan are CANN's plan's own, minus its
// A full load: the 38-word basic-API and 16-word without-batch structs
// (CUBE_BASIC_API_ASW, MX_BASIC_API_ASW, MIX_BASIC_API_ASW,
// PERBLOCK_BASIC_API_ASW) and the 96-word high-level struct (CUBE_ASW,
// MIX_ASW). A plan whose kernel keeps A's whole K in L1 is re-blocked on the
// same kernel without the full load (the key's KERNELTYPE sibling CANN
// itself emits when A is not fully loaded). MX_STREAMK is not re-blocked:
// its block, K slices and reductions are a separate strategy that CANN
// itself ranks.
namespace quant {

// A base block and its L1 staging. A and B load step_k base_k slices of K
// per L1 buffer (stepKa = stepKb, kAL1 = kBL1).
struct QuantBlockChoice {
  uint64_t base_m = 0, base_n = 0, base_k = 0;
  uint64_t step_k = 0;
};

// The alignments CANN's base block calculator keeps (BaseMAlign,
// BaseNAlign at 32 bytes, BaseKAlign): M 16 rows (32 bytes of x1 when x1 is
// transposed), N 16 rows (32 bytes of x2 when x2 is not transposed), K 32
// bytes of x1 (64 values for MX: one pair of e8m0 scales).
struct QuantBlockAlign {
  uint64_t m = 0, n = 0, k = 0;
};

// The alignments of `problem`'s base block; CANN's parse errors
// (kInvalidArgument naming the field) for a problem it refuses.
absl::StatusOr<QuantBlockAlign> QuantBlockAlignOf(const MatmulProblem& problem);

// The deepest staging of a base_m x base_n block: base_k the largest
// multiple of the K alignment whose A and B blocks fit half of L0A and of
// L0B, below the kernels' 4096 and at most K rounded up to the alignment
// (`cann_base_k`, when not 0 and it fits, caps it: deeper L0 steps only
// lengthen the pipeline fill); step_k the most base_k slices (at most 4, at
// most what K holds) whose two L1 buffers of A and B fit L1 beside the
// bias, scale and MX scale rows. kFailedPrecondition saying what does not
// fit.
absl::StatusOr<QuantBlockChoice> DeepestQuantStaging(const MatmulProblem& problem,
                                                     const ChipSpec& chip, uint64_t base_m,
                                                     uint64_t base_n, uint64_t cann_base_k);

// Whether the plan's kernel keeps A's whole K in L1 and each core on its own
// row of tiles (the key's KERNELTYPE 1, 3 or the MX ping-pong 10).
bool KeepsAInL1(const TilingPlan& plan);

// CANN's block and staging as its plan's struct states them (step_k the
// shallower of A's and B's K loads in base_k slices). kInvalidArgument for a
// plan of another struct.
absl::StatusOr<QuantBlockChoice> QuantBlockOfPlan(const TilingPlan& plan);

// `cann` (CANN's plan of `problem` on `chip`) with the block and staging of
// `choice`. kFailedPrecondition, saying why, when the kernel would not
// accept it: a side off its alignment, A or B blocks beyond half of L0A /
// L0B, the fp32 block beyond L0C, baseN beyond the bias table or the
// fixpipe's scale buffer, baseK of 4096 or more, the L1 buffers (with the
// MX scale window, the bias and scale rows) beyond L1, a per-block plan
// whose block does not hold whole scale groups, or MX_STREAMK's struct.
absl::StatusOr<TilingPlan> QuantPlanWithBlock(const MatmulProblem& problem, const ChipSpec& chip,
                                              const TilingPlan& cann,
                                              const QuantBlockChoice& choice);

}  // namespace quant

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_CUSTOM_PLANS_H_
