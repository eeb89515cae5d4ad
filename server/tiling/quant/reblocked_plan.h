// QuantBatchMatmulV3 plans with another base block: CANN's own plan for a
// problem, its base block (baseM x baseN x baseK) and L1 staging (the K
// loads of A and B, their buffers, and for MX the scale window) replaced by
// the caller's, everything else (quant modes, key, struct, workspace) kept.
// The sliding window's edge balancing and tail-round split are re-derived
// for the new block by CANN's own rules (sliding_window.h), so that the
// struct is one the kernel walks as CANN's. For the advisor's block search
// (server/advisor/variants.h). Part of `npu_tiling`.
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
#ifndef NPU_SERVER_TILING_QUANT_REBLOCKED_PLAN_H_
#define NPU_SERVER_TILING_QUANT_REBLOCKED_PLAN_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/tiling/types.h"

namespace npu::tiling::quant {

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

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_REBLOCKED_PLAN_H_
