// Work decomposition: a tiling plan expanded into per-core work units.
//
// `ExpandSchedule()` is the strategy-agnostic half of the tiling engine (the
// CUTLASS "tile scheduler"): strategies choose parameters, this file decides
// which core computes which part of C in which round, exactly as the device
// schedulers of CANN's arch35 mat_mul_v3 kernels index their tiles:
//   * ASWT (BASIC, SLICE, BASIC_SPLIT_K, A / B full load): the SWAT window of
//     four base rows (or the plan's `swat_window_rows`) walked serpentine, and
//     the last round re-split into mTailCnt x nTailCnt pieces;
//   * Stream-K (STREAM_K, SK_SPLIT_K): data-parallel rounds plus a round whose
//     tiles are split along K into fp32 partial sums, the DP+SK preload swap,
//     and the AIV reduction that sums the partials and casts them into C;
//   * the vector-only models (K_EQUAL_ZERO, TO_MUL, TO_MULTI_MUL) on AIV.
// It sits in `npu_tiling_types`, below the strategies and the emulator, and is
// pure: no threads, clocks or I/O. Kernel faults are not modelled here: the
// emulator reproduces them from ExpandTileLoops(). Implementation:
// schedule.cc (entry points, ASWT, vector models), schedule_stream_k.cc,
// schedule_batch.cc (the batch kernels) and schedule_coverage.cc; which
// expansion a plan gets is its kernel's row (kernel_table.h).
//
// Batched problems (BatchMatMulV3, FusedMatMul): C is walked as the stacked
// [batch * rows, n] matrix of its batches (rows = Schedule::batch_rows, M
// after CANN merges A's batch into it), so a unit's m range names stacked
// rows; cube and TO_MUL units stay inside one batch (WorkUnit::batch), the
// K=0 clear runs may span batches. The kernels walk batches as follows:
//   * ASWT with batchDimAll (BatchMatMulV3BasicTilingData): the scheduler's
//     tiles are batch x MN tiles, batch outermost, no tail re-split;
//   * ITER_BATCH (IterBatchBasic): a tile is iterBatchL1 whole batches;
//   * MERGE_BATCH (MergeBatchBasic): batchAL1 batches per tile, the batches
//     past the main loops spread evenly over the cores;
//   * BATCH_MATMUL_TO_MUL (AIV): batchNum batches per core and round.
//
// Vocabulary: a *tile* is the scheduler's unit of indexing (an L1 block, or a
// K slice of one under Stream-K); a *work unit* is one tile as one core runs
// it in one round (one batch of it for the batch kernels); a *workspace slot*
// holds one 256x256 fp32 partial sum.
#ifndef NPU_SERVER_TILING_SCHEDULE_H_
#define NPU_SERVER_TILING_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/tiling/batch_shape.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// Half-open element range [begin, end).
struct Range {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
  bool operator==(const Range& other) const { return begin == other.begin && end == other.end; }
};

enum class CoreKind { kAic, kAiv };
// "AIC" or "AIV".
std::string CoreKindName(CoreKind kind);

enum class UnitOp {
  kMmad,       // AIC: C[m, n] (+)= A[m, k] * B[k, n] through L1 / L0 / L0C
  kReduce,     // AIV: C[m, n] = cast(sum of the fp32 partials of a group)
  kClear,      // AIV: C[m, n] = 0 (K_EQUAL_ZERO)
  kVectorMul,  // AIV: C[m, n] = A[m, k] * B[k, n] on the vector unit (TO_MUL, TO_MULTI_MUL)
};
std::string UnitOpName(UnitOp op);

// One unit of work of one core in one round.
struct WorkUnit {
  CoreKind core_kind = CoreKind::kAic;
  uint32_t core = 0;     // index among the cores of `core_kind`
  uint32_t round = 0;    // iteration of the core's tile loop
  int64_t tile_idx = 0;  // scheduler tile index the unit was derived from
  UnitOp op = UnitOp::kMmad;
  Range m, n, k;
  // kMmad under Stream-K: the unit writes an fp32 partial sum to workspace
  // slot `workspace_slot` (row stride `workspace_row_stride`) instead of C.
  bool writes_partial = false;
  uint32_t workspace_slot = 0;
  // kMmad: index of the unit's K slice within its tile (adds the bias when 0).
  uint32_t k_slice = 0;
  // kMmad / kReduce: the reduction group (index into Schedule::reductions)
  // the unit contributes to or finalizes; -1 when none.
  int32_t reduction = -1;
  // kMmad: after this unit the AIC signals its two AIV cores that its
  // partial sums are in the workspace (AIC_SYNC_AIV).
  bool signals_aiv = false;
  // The C batch the unit computes (0 for a 2-D problem); `m` lies inside
  // rows [batch * batch_rows, (batch + 1) * batch_rows) of the stacked C.
  uint32_t batch = 0;
};

// The K slices of one Stream-K tile, summed by AIV cores in slot order.
struct ReductionGroup {
  Range m, n;
  std::vector<uint32_t> slots;        // in K order; summed left to right
  uint64_t workspace_row_stride = 0;  // fp32 elements between partial rows
};

struct Schedule {
  KernelModel model = KernelModel::kBasic;
  FullLoad full_load = FullLoad::kNone;
  uint32_t aic_cores = 0;  // cube cores launched (block_dim for cube plans)
  uint32_t aiv_cores = 0;  // vector cores launched
  uint32_t rounds = 0;     // longest tile loop of any core
  // Units in (core kind, core, round) order; a core's units are contiguous.
  std::vector<WorkUnit> units;
  std::vector<ReductionGroup> reductions;
  // Stream-K: AIC cores that run no tile; the kernel makes them signal the
  // AIV cores before returning (seeds/000 section 7, problem 2).
  std::vector<uint32_t> idle_aic_cores;
  // Partial-sum slots in the workspace, each kWorkspaceSlotElements fp32.
  uint32_t workspace_slots = 0;
  // fp32 split of one core's K into chunks accumulated in GM (BASIC_SPLIT_K,
  // SK_SPLIT_K); 0 when the core accumulates its whole K in L0C.
  uint64_t split_k_chunk = 0;
  // L0 block shape inside each unit (the cube iterates base blocks of the
  // unit's L1 block); zero for vector units.
  uint64_t base_m = 0, base_n = 0, base_k = 0;
  uint64_t k_l1 = 0;
  // Advisor extensions copied from the plan (defaults: CANN's behaviour).
  uint32_t swat_window_rows = kCannSwatWindowRows;
  L1Residency l1_residency = L1Residency::kStreamed;
  // C batches walked and the rows of each (BatchShape); 1 and m for 2-D.
  uint64_t batch = 1;
  uint64_t batch_rows = 0;
  // ITER_BATCH / MERGE_BATCH: the consecutive units of one tile (its
  // batches) are read by one MTE2 transfer per operand and L1 stage.
  bool batches_share_loads = false;
};

// One workspace slot: a 256x256 fp32 partial tile (CANN's BLOCK_BASE_M x
// BLOCK_BASE_N in the Stream-K kernel and its GetWorkSpace()).
inline constexpr uint64_t kWorkspaceSlotElements = 256 * 256;

// The block sizes the cube kernel of `plan` works with for `problem` (M as
// walked, BatchShape): plan.block, except for the batch structs that carry
// their own: ITER_BATCH takes baseM/N/K from its struct and holds whole
// batches in L1 (kL1 = K); MERGE_BATCH computes one batch's fractal-padded
// M x N per L0 block with its struct's baseK and kL1.
BlockTiling KernelBlock(const TilingPlan& plan, const MatmulProblem& problem);

// Expands `plan` for `problem` on `chip` into per-core work units, using the
// device schedulers' own index formulas. kInvalidArgument names the tiling
// field that makes the plan unusable (zero block sizes, block_dim above the
// chip); kFailedPrecondition when the kernel would run a wrong tile pattern
// (Stream-K without a tail round). The same as ExpandTileLoops() followed by
// CheckTilePattern().
absl::StatusOr<Schedule> ExpandSchedule(const TilingPlan& plan, const MatmulProblem& problem,
                                        const ChipSpec& chip);

// The work units the kernels' tile loops produce for `plan`, also where that
// tile pattern is wrong (Stream-K without a tail round): what such a launch
// would really do, for the emulator to reproduce. kInvalidArgument as for
// ExpandSchedule().
absl::StatusOr<Schedule> ExpandTileLoops(const TilingPlan& plan, const MatmulProblem& problem,
                                         const ChipSpec& chip);

// kFailedPrecondition when the kernel of `plan` would run a wrong tile
// pattern for `problem`: a Stream-K plan whose MN tiles are a multiple of its
// used cores has no tail round to split (seeds/000 section 7, problem 4);
// a GroupedMatmul kernel whose walk over the problem's groups covers a
// group's C twice or not at all ("hazard: ...": the general quant kernel's
// re-split of the last group's tail after groups that ended mid-way through
// the cores). Expects a plan ExpandTileLoops() accepts.
absl::Status CheckTilePattern(const TilingPlan& plan, const MatmulProblem& problem);

// The K chunks a core accumulates separately when `split_k_chunk` is set
// (CANN's splitSingleK: full chunks, the last one taking the remainder).
std::vector<Range> SplitKChunks(const Range& k, uint64_t split_k_chunk);

// Checks that the schedule computes every element of C exactly once: each
// (m, n, k) point is covered by exactly one kMmad unit (or, for the vector
// models, each C element by one vector unit), every partial sum is reduced by
// exactly one AIV unit, and no two units write the same workspace slot.
// kInternal describes the first violation.
absl::Status CheckScheduleCoverage(const Schedule& schedule, const MatmulProblem& problem);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_SCHEDULE_H_
