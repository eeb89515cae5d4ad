// Helpers shared by the files of the schedule expansion (schedule.cc,
// schedule_stream_k.cc, schedule_batch.cc, schedule_quant.cc) and the kernel
// table. Internal to `npu_tiling_types`:
// include it only from those files.
#ifndef NPU_SERVER_TILING_SCHEDULE_INTERNAL_H_
#define NPU_SERVER_TILING_SCHEDULE_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"
#include "server/tiling/schedule.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/types.h"

namespace npu::tiling::schedule_internal {

// The SWAT walk shared by the ASWT and Stream-K schedulers and the Stream-K
// epilogue: tiles are taken in windows of up to kWindowLen rows of base
// blocks; inside a window the row index moves fastest, then the column; every
// other window walks the columns backwards (serpentine), so consecutive
// rounds stay close in GM and the re-reads hit L2. CANN's window is
// WINDOW_LEN = 4 of block_scheduler_aswt.h / block_scheduler_streamk.h
// (seeds/001 4.1, kCannSwatWindowRows); plans from the advisor may carry
// another length in `swat_window_rows`.
inline uint64_t WindowRows(const TilingPlan& plan) {
  return plan.swat_window_rows == 0 ? kCannSwatWindowRows : plan.swat_window_rows;
}

inline std::pair<uint64_t, uint64_t> SerpentineTile(uint64_t idx, uint64_t m_tiles,
                                                    uint64_t n_tiles, uint64_t window_rows) {
  const uint64_t main_window = std::min(window_rows, m_tiles);
  const uint64_t main_rows = m_tiles / main_window - 1;
  const uint64_t tail_window = m_tiles - main_rows * main_window;
  uint64_t row = idx / n_tiles / main_window;
  uint64_t m_idx = 0, n_idx = 0;
  if (row < main_rows) {
    m_idx = row * main_window + idx % main_window;
    n_idx = (idx / main_window) % n_tiles;
  } else {
    row = main_rows;
    const uint64_t tail_idx = idx - main_rows * main_window * n_tiles;
    m_idx = main_rows * main_window + tail_idx % tail_window;
    n_idx = (tail_idx / tail_window) % n_tiles;
  }
  if (row % 2 != 0) n_idx = n_tiles - 1 - n_idx;
  return {m_idx, n_idx};
}

// The value of `field` in the plan's tiling data, or `fallback` when the
// plan carries no struct of that kind (a plan built by hand).
template <typename Field>
uint64_t FieldOr(const TilingPlan& plan, Field field, uint64_t fallback) {
  return Get(plan.data, field).value_or(fallback);
}

// A field of the MatMulV3 basic struct, also read from the batch basic
// struct that extends it word for word (BatchMatMulV3BasicTilingData).
inline uint64_t BasicFieldOr(const TilingPlan& plan, BasicField field, uint64_t fallback) {
  if (std::optional<uint64_t> value = Get(plan.data, field)) return *value;
  return Get(plan.data, static_cast<BatchBasicField>(field)).value_or(fallback);
}

inline absl::Status RequirePositive(std::string_view field, uint64_t value) {
  if (value == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tiling field ", std::string(field), "=0 must be positive"));
  }
  return absl::OkStatus();
}

// The L0 block and the L1 K stage of a cube plan are set (kInvalidArgument
// naming the first zero field otherwise).
inline absl::Status RequireBaseBlock(const BlockTiling& b) {
  RETURN_IF_ERROR(RequirePositive("baseM", b.base_m));
  RETURN_IF_ERROR(RequirePositive("baseN", b.base_n));
  RETURN_IF_ERROR(RequirePositive("baseK", b.base_k));
  return RequirePositive("kL1", b.k_l1);
}

// BlockSchedulerStreamKBuiltIn, the Stream-K kernel's tile loop with the
// DP+SK preload swap, and BlockEpilogueStreamK's split of the reduction over
// the AIV cores (schedule_stream_k.cc), over `batch` C batches (kUnimplemented
// unless every tile of every batch falls in one split round).
absl::StatusOr<Schedule> ExpandStreamK(const TilingPlan& plan, const MatmulProblem& problem,
                                       uint64_t batch);

// The tile loops of the kernels that read MatMulV3's structs (and of a plan
// without a struct), by the key's model: the ASWT walk, Stream-K or the
// vector-only models (schedule.cc).
absl::StatusOr<Schedule> ExpandByModel(const TilingPlan& plan, const MatmulProblem& walked,
                                       const ChipSpec& chip, uint64_t batch);

// The batch kernels' tile loops (schedule_batch.cc), each the `expand` of its
// row in kernel_table.cc. `walked` is the problem as the kernel walks it,
// `batch` its C batches; the batch count a struct states must be `batch`.
// BatchMatMulV3BasicTilingData: MatMulV3's walks over batchDimAll batches.
absl::StatusOr<Schedule> ExpandBatchCube(const TilingPlan& plan, const MatmulProblem& walked,
                                         const ChipSpec& chip, uint64_t batch);
absl::StatusOr<Schedule> ExpandIterBatch(const TilingPlan& plan, const MatmulProblem& walked,
                                         const ChipSpec& chip, uint64_t batch);
absl::StatusOr<Schedule> ExpandMergeBatch(const TilingPlan& plan, const MatmulProblem& walked,
                                          const ChipSpec& chip, uint64_t batch);
absl::StatusOr<Schedule> ExpandBatchToMul(const TilingPlan& plan, const MatmulProblem& walked,
                                          const ChipSpec& chip, uint64_t batch);
absl::StatusOr<Schedule> ExpandHighLevelBatch(const TilingPlan& plan, const MatmulProblem& walked,
                                              const ChipSpec& chip, uint64_t batch);

// QuantBatchMatmulV3's tile loops (schedule_quant.cc), each the `expand` of
// its row in kernel_table.cc. They read C's shape and batches from the
// plan's struct (kInvalidArgument when that is not `walked` x `batch`, or a
// member the walk needs is missing or zero); each tile's whole K is one
// kMmad unit and the mixed kernels get two AIVs per AIC, with no AIV units.
// QuantBatchMatmulV3BasicAPITilingData / ...TensorAPIWithoutBatchTilingData:
// the basic-API scheduler, batch x MN tiles dealt round-robin, the partial
// last round re-split into mTailTile x nTailTile pieces when they fit.
absl::StatusOr<Schedule> ExpandQuantBasic(const TilingPlan& plan, const MatmulProblem& walked,
                                          const ChipSpec& chip, uint64_t batch);
absl::StatusOr<Schedule> ExpandQuantWithoutBatch(const TilingPlan& plan,
                                                 const MatmulProblem& walked, const ChipSpec& chip,
                                                 uint64_t batch);
// QuantBatchMatmulV3StreamKBasicAPITilingData: ExpandStreamK() on the
// struct's block and Stream-K slice, one batch.
absl::StatusOr<Schedule> ExpandQuantStreamK(const TilingPlan& plan, const MatmulProblem& walked,
                                            const ChipSpec& chip, uint64_t batch);
// QuantBatchMatmulV3TilingDataParams: the high-level API kernels' walk of
// one batch, replayed from core 0 for each batch.
absl::StatusOr<Schedule> ExpandQuantHighLevel(const TilingPlan& plan, const MatmulProblem& walked,
                                              const ChipSpec& chip, uint64_t batch);

// WeightQuantBatchMatmulV2's tile loops (schedule_weight_quant.cc): the
// cube-core grid of its three structs, every unit over the whole K.
absl::StatusOr<Schedule> ExpandWeightQuant(const TilingPlan& plan, const MatmulProblem& walked,
                                           const ChipSpec& chip, uint64_t batch);
// GroupedMatmul's kernels (schedule_grouped.cc): each group's base blocks
// dealt to the cores group after group, over the sizes the token histogram
// gives the groups (grouped/gmm_groups.h); `walked` is the grouped problem
// itself and `batch` is not read. A unit's `batch` is its group, its m the
// rows of the stacked C (the groups' C one under the other), its n and k the
// group's own. kInvalidArgument names the tiling field a plan for another
// problem gets wrong (its groupNum, groupType, a zero block).
absl::StatusOr<Schedule> ExpandGrouped(const TilingPlan& plan, const MatmulProblem& walked,
                                       const ChipSpec& chip, uint64_t batch);
// Their blocks: the struct's baseM / baseN / baseK, the L1 K stage baseK *
// stepKa (the MX basic API: kAL1) and dbL0C.
BlockTiling GroupedBlock(const TilingPlan& plan, const MatmulProblem& walked);
// CheckTilePattern() of a grouped plan: kFailedPrecondition ("hazard: ...")
// when the kernel's own walk over this problem's groups leaves part of a
// group's C out or overlaps two different pieces of it.
absl::Status CheckGroupedTilePattern(const TilingPlan& plan, const MatmulProblem& problem);
// CheckScheduleCoverage() of a grouped schedule: every group's C covered
// exactly once over its K by units of that group (kInternal otherwise),
// a unit repeated exactly (the same values computed again) counting once.
absl::Status CheckGroupedCoverage(const Schedule& schedule, const MatmulProblem& problem);
// Its block: plan.block (the struct's TCubeTiling) with the whole K per core.
BlockTiling WeightQuantBlock(const TilingPlan& plan, const MatmulProblem& walked);
// The transposed batch matmuls' tile loop (schedule_transpose.cc): C is
// mL1 x nL1 tiles, batch x mCnt x nCnt of them, batch outermost; core c
// runs tiles c, c + usedCoreNum, ...; inside a batch the tiles follow the
// SWAT window of aswWindowLen rows, serpentine; each tile runs its whole K.
// The perms change where a tile's rows sit in GM, not which tiles a core
// runs.
absl::StatusOr<Schedule> ExpandTransposeBatch(const TilingPlan& plan, const MatmulProblem& walked,
                                              const ChipSpec& chip, uint64_t batch);

// The block sizes a kernel works with (KernelBlock(), the `block` of each
// row): plan.block for most; ITER_BATCH takes baseM/N/K from its struct and
// holds whole batches in L1 (kL1 = K); MERGE_BATCH computes one batch's
// fractal-padded M x N per L0 block with its struct's baseK and kL1; the
// high-level API walks the struct's base blocks through stepKa-deep stages.
BlockTiling PlanBlock(const TilingPlan& plan, const MatmulProblem& walked);
BlockTiling IterBatchBlock(const TilingPlan& plan, const MatmulProblem& walked);
BlockTiling MergeBatchBlock(const TilingPlan& plan, const MatmulProblem& walked);
BlockTiling HighLevelBatchBlock(const TilingPlan& plan, const MatmulProblem& walked);
// QuantBatchMatmulV3's structs: their base block is the tile; the L1 K stage
// is stepKa * baseK (high-level API), streamKTiling.kL1 (Stream-K, whose
// slice is streamKTiling.singleCoreK), kBL1 (MX and A full load) or
// min(kAL1, kBL1).
BlockTiling QuantBlock(const TilingPlan& plan, const MatmulProblem& walked);
// The transposed batch matmuls: the struct's base block, mL1 x nL1 tiles and
// kL1-deep L1 stages.
BlockTiling TransposeBatchBlock(const TilingPlan& plan, const MatmulProblem& walked);

// Per-axis description of the ASWT L1 blocks, including CANN's tail-block
// merge (mBaseTailSplitCnt / mTailMain): the last `tail_split` blocks of the
// axis cover the remainder in pieces of `tail_main`, the last taking the rest.
struct AxisBlocks {
  uint64_t size = 0;
  uint64_t l1 = 0;
  uint64_t tiles = 0;
  uint64_t norm_cnt = 0;
  uint64_t tail_main = 0;
  uint64_t tail_last = 0;

  uint64_t BlockSize(uint64_t idx) const {
    if (idx < norm_cnt) return l1;
    return idx == tiles - 1 ? tail_last : tail_main;
  }
  uint64_t BlockOffset(uint64_t idx) const {
    if (idx <= norm_cnt) return idx * l1;
    return norm_cnt * l1 + (idx - norm_cnt) * tail_main;
  }
};

// The axis of `size` in blocks of `l1` with the last `tail_split` merged
// (1: no merge). kInvalidArgument names `l1_field` when the split or
// tail_main does not fit the axis.
absl::StatusOr<AxisBlocks> MakeAxis(std::string_view l1_field, uint64_t size, uint64_t l1,
                                    uint64_t tail_split, uint64_t tail_main);

}  // namespace npu::tiling::schedule_internal

#endif  // NPU_SERVER_TILING_SCHEDULE_INTERNAL_H_
