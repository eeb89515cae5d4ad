// Plan generators for the advisor's tiling variants.
//
// Each generator answers one of the weaknesses that seeds/001 section 6 lists
// in CANN's arch35 mat_mul_v3 heuristics, with a plan the emulator can run:
//   * BlockPlan / BlockSearchGrid: any (base_m, base_n) of the streamed ASWT
//     kernel, so the advisor can pick the block by predicted time instead of
//     the cubeBoundParam / balanceRate score (item 1);
//   * WindowPlan / WindowCandidates: the SWAT window length, fixed at 4 rows
//     by CANN, sized against L2 (item 2);
//   * ResidencyPlan: a band of A rows or B columns resident in L1 when the
//     whole matrix exceeds the 3/4-of-L1 full-load limit (item 3);
//   * AivDotPlan: M == 1 or N == 1 float16 / bfloat16 problems as vector dot
//     products on the AIV cores, which CANN only does for fp32 (item 6).
// Item 5 (separate GM read and write bandwidth) is a timing model, not a
// plan: see emulator/timing_model.h.
//
// Generators are pure functions of (problem, chip[, base plan]) and say why
// they do not apply rather than failing. Part of `npu_advisor`, above the
// tiling engine and the emulator.
#ifndef NPU_SERVER_ADVISOR_VARIANTS_H_
#define NPU_SERVER_ADVISOR_VARIANTS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "server/tiling/custom_plans.h"
#include "server/tiling/types.h"

namespace npu::advisor {

// A variant's plan, or why the variant does not apply (`ok` false).
struct Offer {
  bool ok = false;
  std::string reason;  // what the plan does, or why it is not offered
  tiling::TilingPlan plan;

  static Offer No(std::string why) { return {false, std::move(why), {}}; }
};

// Problems every variant needs: ND operands without a slice view (the
// emulator checks numerics on ND data only) and K > 0. Empty when they hold.
std::string VariantObstacle(const tiling::MatmulProblem& problem);

// QuantBatchMatmulV3: CANN's plan `cann` with the base block and L1
// staging of `choice` on the same kernel (tiling::quant::QuantPlanWithBlock:
// the sliding window re-derived by CANN's rules, A's full load dropped).
// Not offered, with the kernel's reason, for a block or staging the kernel
// would not take.
Offer QuantBlockPlan(const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip,
                     const tiling::TilingPlan& cann, const tiling::quant::QuantBlockChoice& choice);

// The (base_m, base_n) pairs the QuantBatchMatmulV3 block search considers:
// per axis the multiples of 32 up to 256 and the even splits of the axis
// (BlockSearchGrid's rule), rounded up to the kernels' alignment
// (tiling::quant::QuantBlockAlignOf), paired when the fp32 block fits L0C.
// Empty when CANN's parse refuses the problem.
std::vector<std::pair<uint64_t, uint64_t>> QuantBlockSearchGrid(
    const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip);

// EstimateBlockCycles for a QuantBatchMatmulV3 block base_m x base_n x
// base_k: operand bytes at the dtypes' bit widths (4-bit types half a
// byte), the MMAD at the cube's rate for x1's dtype. It only orders the
// search grid.
double EstimateQuantBlockCycles(const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip,
                                uint64_t base_m, uint64_t base_n);

// The streamed data-parallel (BASIC_ASWT, no full load) plan with blocks
// base_m x base_n: base_k, the L1 K stages, the tail-round re-split and the
// fp32 in-core K split follow CANN's rules for that block; only the block is
// chosen by the caller. Not offered when the block breaks the 16-element
// alignment or does not fit L0A / L0B / L0C / L1.
Offer BlockPlan(const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip, uint64_t base_m,
                uint64_t base_n);

// A BatchMatMulV3 / FusedMatMul problem as the block search sees one batch
// of it: M as the kernel walks it (A's batch merged into M when CANN merges
// it), no batch dims, no epilogue, op MatMulV3; `batches` receives the C
// batch count. The problem itself when it is a MatMulV3 one.
tiling::MatmulProblem OneBatchProblem(const tiling::MatmulProblem& problem, uint64_t* batches);

// BlockPlan() for a BatchMatMulV3 / FusedMatMul problem: one batch's
// streamed plan in BatchMatMulV3BasicTilingData with batchDimAll the C
// batches and batchX3 x3's, keyed as CANN keys its ASW_BASIC plans (BASIC
// level, FUSED_BATCH for a batched FusedMatMul, the fused op and
// inner_precise in the fused layout) and launched on min(aic, batches x
// tiles) cores; MIX 1:2 when FusedMatMul's epilogue runs on the AIV.
Offer BatchBlockPlan(const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip,
                     uint64_t base_m, uint64_t base_n);

// The (base_m, base_n) pairs the block search considers for `problem`: per
// axis the multiples of 32 up to 256 that do not exceed the aligned size,
// plus the aligned even splits of a small axis (no tail block), paired when
// the fp32 block fits L0C. Sorted, no duplicates.
std::vector<std::pair<uint64_t, uint64_t>> BlockSearchGrid(const tiling::MatmulProblem& problem,
                                                           const tiling::ChipSpec& chip);

// A first-order estimate of a streamed plan's cycles with blocks
// base_m x base_n (rounds x the slowest of cube, MTE2 port and the chip's
// L2 share, floored by the unique DDR bytes). It only orders the search grid
// so that the emulator times the promising blocks; it never ranks advice.
double EstimateBlockCycles(const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip,
                           uint64_t base_m, uint64_t base_n);

// Pipe operations the emulator would run for a streamed plan with these
// blocks: emu::EstimateEmulationWork's first-order count for that plan (to
// keep the search from timing plans far costlier to emulate than CANN's).
uint64_t EstimateBlockOps(const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip,
                          uint64_t base_m, uint64_t base_n);

// Why the SWAT window length cannot matter for `base` (empty when it can):
// the plan must be a streamed ASWT plan (for QuantBatchMatmulV3, a
// sliding-window kernel without A's full load) with more than one round, at least
// two rows and two columns of tiles, and operands plus output larger than L2
// (otherwise every re-read hits L2 whatever the order).
std::string WindowObstacle(const tiling::TilingPlan& base, const tiling::MatmulProblem& problem,
                           const tiling::ChipSpec& chip);

// Window lengths worth timing for `base`, best guess first: the largest
// window whose A rows stay in L2 next to the B columns and C rows one window
// pass touches, then its neighbours and small powers of two. Never CANN's 4,
// never more than the plan's rows of tiles.
std::vector<uint32_t> WindowCandidates(const tiling::TilingPlan& base,
                                       const tiling::MatmulProblem& problem,
                                       const tiling::ChipSpec& chip);

// `base` walked with a SWAT window of `window_rows` rows of tiles.
Offer WindowPlan(const tiling::TilingPlan& base, const tiling::MatmulProblem& problem,
                 const tiling::ChipSpec& chip, uint32_t window_rows);

// A streamed plan that keeps a band of A rows (kABand) or B columns (kBBand)
// resident in L1, the whole K deep, within the 3/4 of L1 that CANN allows a
// resident matrix. Offered only where CANN's whole-matrix residency is out
// of reach because the matrix exceeds that limit, a band of at least 16
// rows (columns) fits it, and the other operand has at least two tiles that
// re-use the band. `base` is CANN's BASIC_ASWT plan: the streamed side keeps
// its block edge where L0C and L1 allow.
Offer ResidencyPlan(const tiling::TilingPlan& base, const tiling::MatmulProblem& problem,
                    const tiling::ChipSpec& chip, tiling::L1Residency side);

// TO_MUL-style vector dot products on the AIV cores for float16 / bfloat16
// problems with M == 1 or N == 1: the operands are cast to fp32 in UB and
// accumulated in fp32, then C is cast back. Offered only for 16-bit A and B
// (CANN's TO_MUL already covers fp32 with forced fp32 accumulation) on a
// chip with vector cores.
Offer AivDotPlan(const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip);

}  // namespace npu::advisor

#endif  // NPU_SERVER_ADVISOR_VARIANTS_H_
