#include "server/tiling/schedule.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/schedule_internal.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

using schedule_internal::BasicFieldOr;
using schedule_internal::FieldOr;
using schedule_internal::RequirePositive;
using schedule_internal::SerpentineTile;
using schedule_internal::WindowRows;

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

absl::StatusOr<AxisBlocks> MakeAxis(std::string_view l1_field, uint64_t size, uint64_t l1,
                                    uint64_t tail_split, uint64_t tail_main) {
  AxisBlocks axis;
  axis.size = size;
  axis.l1 = l1;
  axis.tiles = CeilDiv(size, l1);
  if (tail_split == 0 || tail_split > axis.tiles) {
    return absl::InvalidArgumentError(absl::StrCat("tiling field ", std::string(l1_field),
                                                   " tail split count ", tail_split,
                                                   " is outside [1, ", axis.tiles, "]"));
  }
  axis.norm_cnt = axis.tiles - tail_split;
  const uint64_t tail = size - axis.norm_cnt * l1;
  axis.tail_main = tail_split == 1 ? tail : tail_main;
  if (axis.tail_main == 0 || (tail_split - 1) * axis.tail_main >= tail) {
    return absl::InvalidArgumentError(absl::StrCat("tiling field ", std::string(l1_field),
                                                   " tail main ", axis.tail_main,
                                                   " does not split the tail of ", tail));
  }
  axis.tail_last = tail - (tail_split - 1) * axis.tail_main;
  return axis;
}

void SortAndCountRounds(Schedule& schedule) {
  std::stable_sort(schedule.units.begin(), schedule.units.end(),
                   [](const WorkUnit& a, const WorkUnit& b) {
                     if (a.core_kind != b.core_kind) return a.core_kind < b.core_kind;
                     if (a.core != b.core) return a.core < b.core;
                     return a.round < b.round;
                   });
  schedule.rounds = 0;
  for (const WorkUnit& unit : schedule.units) {
    schedule.rounds = std::max(schedule.rounds, unit.round + 1);
  }
}

// The tile grid of an ASWT plan: L1 blocks per axis and the last round's
// re-split into m_tail_cnt x n_tail_cnt pieces.
struct AswtGrid {
  AxisBlocks m_axis, n_axis;
  uint64_t k = 0;
  uint64_t block_num = 0;  // launched cores: the tile loop's stride
  uint64_t mn_tiles = 0;
  uint64_t per_core_rounds = 0;
  uint64_t m_tail_cnt = 1, n_tail_cnt = 1, tail_cnt = 1;
  uint64_t tile_num = 0;  // MN tiles plus the extra pieces of the tail round
  uint64_t window_rows = 0;
  uint64_t batch = 1, batch_rows = 0;
};

absl::StatusOr<AswtGrid> MakeAswtGrid(const TilingPlan& plan, const MatmulProblem& problem,
                                      uint64_t batch) {
  const BlockTiling& b = plan.block;
  RETURN_IF_ERROR(RequirePositive("mL1", b.m_l1));
  RETURN_IF_ERROR(RequirePositive("nL1", b.n_l1));
  RETURN_IF_ERROR(schedule_internal::RequireBaseBlock(b));
  AswtGrid g;
  ASSIGN_OR_RETURN(g.m_axis, MakeAxis("mL1", problem.m, b.m_l1,
                                      BasicFieldOr(plan, BasicField::kMBaseTailSplitCnt, 1),
                                      BasicFieldOr(plan, BasicField::kMTailMain, 0)));
  ASSIGN_OR_RETURN(g.n_axis, MakeAxis("nL1", problem.n, b.n_l1,
                                      BasicFieldOr(plan, BasicField::kNBaseTailSplitCnt, 1),
                                      BasicFieldOr(plan, BasicField::kNTailMain, 0)));
  g.k = problem.k;
  g.block_num = plan.block_dim;
  g.mn_tiles = g.m_axis.tiles * g.n_axis.tiles;
  g.per_core_rounds = CeilDiv(g.mn_tiles, g.block_num);
  const uint64_t tail_tiles = g.mn_tiles % g.block_num;
  // The tail re-split counts are re-derived from the last block's size, as
  // the device does, so a count that would leave empty pieces shrinks.
  const uint64_t m_tail_cnt = std::max<uint64_t>(1, b.m_tail_cnt);
  const uint64_t n_tail_cnt = std::max<uint64_t>(1, b.n_tail_cnt);
  g.m_tail_cnt = CeilDiv(g.m_axis.tail_last, CeilDiv(g.m_axis.tail_last, m_tail_cnt));
  g.n_tail_cnt = CeilDiv(g.n_axis.tail_last, CeilDiv(g.n_axis.tail_last, n_tail_cnt));
  g.tail_cnt = g.m_tail_cnt * g.n_tail_cnt;
  g.tile_num = g.mn_tiles + (g.tail_cnt - 1) * tail_tiles;
  g.window_rows = WindowRows(plan);
  g.batch = batch;
  g.batch_rows = problem.m;
  if (batch > 1) {
    // BlockSchedulerAswtBuiltIn re-splits the tail only for batch 1; with
    // batches its tiles are batch x MN tiles, batch outermost
    // (matmul/mat_mul_v3/op_kernel/arch35/block_scheduler_aswt.h).
    g.m_tail_cnt = g.n_tail_cnt = g.tail_cnt = 1;
    g.tile_num = g.mn_tiles * batch;
  }
  return g;
}

// The units of cube core `core`: one L1 block per round, and in a re-split
// tail round its piece of the round's block.
void AppendAswtCoreUnits(const AswtGrid& g, uint64_t core, Schedule& schedule) {
  for (uint64_t tile = core; tile < g.tile_num; tile += g.block_num) {
    const uint64_t round = tile / g.block_num;
    const bool tail_round = round == g.per_core_rounds - 1 && g.tail_cnt > 1;
    const uint64_t base_tile = tail_round ? round * g.block_num + core / g.tail_cnt : tile;
    auto [m_idx, n_idx] =
        SerpentineTile(base_tile % g.mn_tiles, g.m_axis.tiles, g.n_axis.tiles, g.window_rows);
    const uint64_t batch = g.batch > 1 ? tile / g.mn_tiles : 0;
    uint64_t blk_m = g.m_axis.BlockSize(m_idx), blk_n = g.n_axis.BlockSize(n_idx);
    uint64_t m_off = g.m_axis.BlockOffset(m_idx) + batch * g.batch_rows;
    uint64_t n_off = g.n_axis.BlockOffset(n_idx);
    if (tail_round) {
      const uint64_t split_m = CeilDiv(blk_m, g.m_tail_cnt);
      const uint64_t split_n = CeilDiv(blk_n, g.n_tail_cnt);
      const uint64_t m_split_off = ((core % g.tail_cnt) % g.m_tail_cnt) * split_m;
      const uint64_t n_split_off = ((core % g.tail_cnt) / g.m_tail_cnt) * split_n;
      // A piece past the block's end: the core returns.
      if (m_split_off >= blk_m || n_split_off >= blk_n) break;
      m_off += m_split_off;
      n_off += n_split_off;
      blk_m = std::min(blk_m - m_split_off, split_m);
      blk_n = std::min(blk_n - n_split_off, split_n);
    }
    WorkUnit unit;
    unit.core = static_cast<uint32_t>(core);
    unit.round = static_cast<uint32_t>(round);
    unit.tile_idx = static_cast<int64_t>(tile);
    unit.m = {m_off, m_off + blk_m};
    unit.n = {n_off, n_off + blk_n};
    unit.k = {0, g.k};
    unit.batch = static_cast<uint32_t>(batch);
    schedule.units.push_back(unit);
  }
}

// BlockSchedulerAswtBuiltIn, over `batch` batches of `problem`.
absl::StatusOr<Schedule> ExpandAswt(const TilingPlan& plan, const MatmulProblem& problem,
                                    uint64_t batch) {
  ASSIGN_OR_RETURN(const AswtGrid grid, MakeAswtGrid(plan, problem, batch));
  const uint64_t cores = std::min<uint64_t>(grid.tile_num, grid.block_num);
  Schedule schedule;
  schedule.aic_cores = static_cast<uint32_t>(cores);
  if (plan.key.model == KernelModel::kBasicSplitK) {
    // CANN switches to 8192-element chunks once K exceeds 1024 * 32 * 8192.
    constexpr uint64_t kLargeK = 268435456;
    schedule.split_k_chunk = grid.k > kLargeK ? 8192 : 1024;
  }
  for (uint64_t core = 0; core < cores; ++core) AppendAswtCoreUnits(grid, core, schedule);
  return schedule;
}

// Appends the units covering the flat C range [begin, end) (row-major) as at
// most three rectangles: the rest of the first row, whole rows, the start of
// the last row.
void AppendFlatRange(uint64_t begin, uint64_t end, uint64_t n, WorkUnit proto,
                     std::vector<WorkUnit>& units) {
  while (begin < end) {
    const uint64_t row = begin / n, col = begin % n;
    WorkUnit unit = proto;
    if (col != 0 || end - begin < n) {
      const uint64_t stop = std::min(end, (row + 1) * n);
      unit.m = {row, row + 1};
      unit.n = {col, col + (stop - begin)};
      begin = stop;
    } else {
      const uint64_t rows = (end - begin) / n;
      unit.m = {row, row + rows};
      unit.n = {0, n};
      begin += rows * n;
    }
    units.push_back(unit);
  }
}

// MatMulInputKEqZeroClearOutput: every AIV clears one contiguous run of C.
// With batches it clears the stacked C (totalDataAmount = m * n * batchC);
// FusedMatMul's add / mul K=0 plans carry the batch basic struct, whose
// usedCoreNum is the AIV count
// (matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_k_equal_zero_tiling.cpp).
absl::StatusOr<Schedule> ExpandKEqualZero(const TilingPlan& plan, const MatmulProblem& problem,
                                          const ChipSpec& chip, uint64_t batch, WorkUnit proto) {
  const uint64_t n = problem.n;
  const uint64_t total = static_cast<uint64_t>(problem.m) * n * batch;
  const uint64_t aiv = FieldOr(plan, KEqZeroField::kAivNum,
                               FieldOr(plan, BatchBasicField::kUsedCoreNum, chip.aiv_num));
  RETURN_IF_ERROR(RequirePositive("aivNum", aiv));
  const uint64_t per = std::max<uint64_t>(1, CeilDiv(total, aiv));
  Schedule schedule;
  proto.op = UnitOp::kClear;
  uint32_t used = 0;
  for (uint64_t core = 0; core * per < total; ++core) {
    proto.core = static_cast<uint32_t>(core);
    proto.tile_idx = static_cast<int64_t>(core);
    AppendFlatRange(core * per, std::min(total, (core + 1) * per), n, proto, schedule.units);
    used = static_cast<uint32_t>(core + 1);
  }
  schedule.aiv_cores = used;
  return schedule;
}

// TO_MUL: tiles of baseMN consecutive outputs, dealt round-robin.
absl::StatusOr<Schedule> ExpandToMul(const TilingPlan& plan, const MatmulProblem& problem,
                                     WorkUnit proto) {
  const uint64_t n = problem.n;
  const uint64_t total = static_cast<uint64_t>(problem.m) * n;
  const uint64_t used = FieldOr(plan, ToMulField::kUsedCoreNum, plan.block_dim);
  const uint64_t base_mn = FieldOr(plan, ToMulField::kBaseMN, 0);
  RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
  RETURN_IF_ERROR(RequirePositive("baseMN", base_mn));
  Schedule schedule;
  proto.op = UnitOp::kVectorMul;
  const uint64_t tiles = CeilDiv(total, base_mn);
  for (uint64_t tile = 0; tile < tiles; ++tile) {
    proto.core = static_cast<uint32_t>(tile % used);
    proto.round = static_cast<uint32_t>(tile / used);
    proto.tile_idx = static_cast<int64_t>(tile);
    AppendFlatRange(tile * base_mn, std::min(total, (tile + 1) * base_mn), n, proto,
                    schedule.units);
  }
  schedule.aiv_cores = static_cast<uint32_t>(std::min(used, tiles));
  return schedule;
}

// TO_MULTI_MUL: baseM x baseN blocks in row-major order, dealt round-robin
// to the used AIV cores.
absl::StatusOr<Schedule> ExpandToMultiMul(const TilingPlan& plan, const MatmulProblem& problem,
                                          const WorkUnit& proto) {
  const uint64_t m = problem.m, n = problem.n;
  const uint64_t used = FieldOr(plan, ToVectorField::kUsedCoreNum, plan.block_dim);
  const uint64_t base_m = FieldOr(plan, ToVectorField::kBaseM, 0);
  const uint64_t base_n = FieldOr(plan, ToVectorField::kBaseN, 0);
  RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
  RETURN_IF_ERROR(RequirePositive("baseM", base_m));
  RETURN_IF_ERROR(RequirePositive("baseN", base_n));
  Schedule schedule;
  const uint64_t m_blocks = CeilDiv(m, base_m), n_blocks = CeilDiv(n, base_n);
  for (uint64_t tile = 0; tile < m_blocks * n_blocks; ++tile) {
    WorkUnit unit = proto;
    unit.op = UnitOp::kVectorMul;
    unit.core = static_cast<uint32_t>(tile % used);
    unit.round = static_cast<uint32_t>(tile / used);
    unit.tile_idx = static_cast<int64_t>(tile);
    const uint64_t mi = tile / n_blocks, ni = tile % n_blocks;
    unit.m = {mi * base_m, std::min(m, (mi + 1) * base_m)};
    unit.n = {ni * base_n, std::min(n, (ni + 1) * base_n)};
    schedule.units.push_back(unit);
  }
  schedule.aiv_cores = static_cast<uint32_t>(std::min(used, m_blocks * n_blocks));
  return schedule;
}

// The vector-only models, on AIV; every unit takes the whole K.
absl::StatusOr<Schedule> ExpandVector(const TilingPlan& plan, const MatmulProblem& problem,
                                      const ChipSpec& chip, uint64_t batch) {
  WorkUnit proto;
  proto.core_kind = CoreKind::kAiv;
  proto.k = {0, static_cast<uint64_t>(problem.k)};
  switch (plan.key.model) {
    case KernelModel::kKEqualZero:
      return ExpandKEqualZero(plan, problem, chip, batch, proto);
    case KernelModel::kToMul:
      return ExpandToMul(plan, problem, proto);
    case KernelModel::kToMultiMul:
      return ExpandToMultiMul(plan, problem, proto);
    default:
      assert(false && "ExpandVector called for a cube model");
  }
  return Schedule{};
}

// One unit per batch of a multi-batch tile: the whole (stacked) rows, N and
// K of C batch `batch`.
WorkUnit BatchUnit(const MatmulProblem& problem, uint64_t core, uint64_t round, uint64_t tile,
                   uint64_t batch) {
  WorkUnit unit;
  unit.core = static_cast<uint32_t>(core);
  unit.round = static_cast<uint32_t>(round);
  unit.tile_idx = static_cast<int64_t>(tile);
  unit.batch = static_cast<uint32_t>(batch);
  const uint64_t rows = static_cast<uint64_t>(problem.m);
  unit.m = {batch * rows, (batch + 1) * rows};
  unit.n = {0, static_cast<uint64_t>(problem.n)};
  unit.k = {0, static_cast<uint64_t>(problem.k)};
  return unit;
}

// The batch count a batch struct states must be the problem's: the kernel
// walks the struct's count.
absl::Status RequireBatch(std::string_view field, uint64_t stated, uint64_t batch) {
  if (stated != batch) {
    return absl::InvalidArgumentError(absl::StrCat("tiling field ", std::string(field), "=", stated,
                                                   " differs from the problem's ", batch,
                                                   " C batches"));
  }
  return absl::OkStatus();
}

// BlockSchedulerIterBatchBuiltIn and KernelMatmulIterBatch: tile t is the
// iterBatchL1 batches from t * iterBatchL1, each whole; the cores below
// min(b, blockNum) stride over the tiles by the launched block count
// (matmul/batch_mat_mul_v3/op_kernel/arch35/batch_mat_mul_v3_iterbatch_basicapi_block_scheduler.h,
// matmul/common/cmct/kernel/kernel_matmul_iterbatch.h).
absl::StatusOr<Schedule> ExpandIterBatch(const TilingPlan& plan, const MatmulProblem& problem,
                                         uint64_t batch) {
  const uint64_t b = FieldOr(plan, IterBatchField::kB, batch);
  RETURN_IF_ERROR(RequireBatch("b", b, batch));
  const uint64_t iter_l1 = FieldOr(plan, IterBatchField::kIterBatchL1, 0);
  RETURN_IF_ERROR(RequirePositive("iterBatchL1", iter_l1));
  RETURN_IF_ERROR(RequirePositive("iterBatchL0", FieldOr(plan, IterBatchField::kIterBatchL0, 0)));
  RETURN_IF_ERROR(RequirePositive("baseM", FieldOr(plan, IterBatchField::kBaseM, 0)));
  RETURN_IF_ERROR(RequirePositive("baseN", FieldOr(plan, IterBatchField::kBaseN, 0)));
  RETURN_IF_ERROR(RequirePositive("baseK", FieldOr(plan, IterBatchField::kBaseK, 0)));
  const uint64_t block_num = plan.block_dim;
  const uint64_t tiles = CeilDiv(b, iter_l1);
  const uint64_t cores = std::min(b, block_num);
  Schedule schedule;
  schedule.batches_share_loads = true;
  schedule.aic_cores = static_cast<uint32_t>(std::min(cores, tiles));
  for (uint64_t core = 0; core < cores; ++core) {
    for (uint64_t tile = core; tile < tiles; tile += block_num) {
      for (uint64_t i = tile * iter_l1; i < std::min(b, (tile + 1) * iter_l1); ++i) {
        schedule.units.push_back(BatchUnit(problem, core, tile / block_num, tile, i));
      }
    }
  }
  return schedule;
}

// BlockSchedulerMergeBatchBuiltIn: tiles of batchAL1 batches while every
// core gets one (the main loops), then the remaining batches spread over
// the cores, the first `remainder % blockNum` taking one more
// (matmul/batch_mat_mul_v3/op_kernel/arch35/batch_mat_mul_v3_mergebatch_basicapi_block_scheduler.h).
absl::StatusOr<Schedule> ExpandMergeBatch(const TilingPlan& plan, const MatmulProblem& problem,
                                          uint64_t batch) {
  const uint64_t b = FieldOr(plan, MergeBatchField::kB, batch);
  RETURN_IF_ERROR(RequireBatch("b", b, batch));
  const uint64_t per_tile = FieldOr(plan, MergeBatchField::kBatchAL1, 0);
  RETURN_IF_ERROR(RequirePositive("batchAL1", per_tile));
  RETURN_IF_ERROR(RequirePositive("batchL0", FieldOr(plan, MergeBatchField::kBatchL0, 0)));
  RETURN_IF_ERROR(RequirePositive("kL1", FieldOr(plan, MergeBatchField::kKL1, 0)));
  RETURN_IF_ERROR(RequirePositive("baseK", FieldOr(plan, MergeBatchField::kBaseK, 0)));
  const uint64_t block_num = plan.block_dim;
  const uint64_t main_loops = b / per_tile / block_num;
  const uint64_t remainder = b - main_loops * block_num * per_tile;
  const uint64_t tail_batch = CeilDiv(remainder, block_num);
  const uint64_t tail_block = remainder % block_num;
  const uint64_t tiles = CeilAlign(CeilDiv(b, per_tile), block_num);
  Schedule schedule;
  schedule.batches_share_loads = true;
  schedule.aic_cores = static_cast<uint32_t>(std::min(tiles, block_num));
  for (uint64_t core = 0; core < schedule.aic_cores; ++core) {
    for (uint64_t tile = core; tile < tiles; tile += block_num) {
      const uint64_t loop = tile / block_num;
      uint64_t first = tile * per_tile, count = per_tile;
      if (loop >= main_loops && tail_batch > 0) {
        const uint64_t idx = tile % block_num;
        const uint64_t base = main_loops * per_tile * block_num;
        if (tail_block > 0 && idx >= tail_block) {
          first = base + tail_block * tail_batch + (tail_batch - 1) * (idx - tail_block);
          count = tail_batch - 1;
        } else {
          first = base + idx * tail_batch;
          count = tail_batch;
        }
      } else if (loop >= main_loops) {
        count = 0;  // past the batches: the tile is empty
      }
      for (uint64_t i = first; i < std::min(b, first + count); ++i) {
        schedule.units.push_back(BatchUnit(problem, core, loop, tile, i));
      }
    }
  }
  return schedule;
}

// The kernels of the 90-word BatchMatMulV3TilingData (high-level Matmul API
// driven by TCubeTiling) on devkits without the tensor-API headers
// (matmul/batch_mat_mul_v3/op_kernel/arch35/batch_mat_mul_v3.cpp):
//   * ITER_BATCH_SINGLE_BIAS runs BatchMatMulMultiBatchKernel;
//   * every other batch model (BROADCAST_BATCH and FOR_BATCH of BASE,
//     ITER_BATCH_BROADCAST_A / B) runs BatchMatMulAswKernel.
// Simplification: the tensor-API kernels that newer devkits select for
// BROADCAST_BATCH and ITER_BATCH_BROADCAST (their schedulers live in the
// devkit, not in ops-nn) are not modelled; both fall back to the ASW walk.

// BatchMatMulAswBlock: C is baseM x baseN tiles, batch x mCnt x nCnt of them,
// batch outermost; core c runs tiles c, c + usedCoreNum, ... Inside a batch
// the tiles follow the SWAT window of aswWindowLen rows, serpentine, with no
// tail re-split; each tile runs its whole K through the high-level API
// (matmul/batch_mat_mul_v3/op_kernel/arch35/batch_mat_mul_v3_asw_block_advanced.h).
// fp32 output without hf32 splits a K above 8192 into chunks summed in GM.
absl::StatusOr<Schedule> ExpandHighLevelAsw(const TilingPlan& plan, const MatmulProblem& problem,
                                            uint64_t batch) {
  using F = HighLevelBatchField;
  const uint64_t used = FieldOr(plan, F::kUsedCoreNum, plan.block_dim);
  const uint64_t base_m = FieldOr(plan, F::kBaseM, 0), base_n = FieldOr(plan, F::kBaseN, 0);
  const uint64_t window = FieldOr(plan, F::kAswWindowLen, kCannSwatWindowRows);
  RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
  RETURN_IF_ERROR(RequirePositive("baseM", base_m));
  RETURN_IF_ERROR(RequirePositive("baseN", base_n));
  RETURN_IF_ERROR(RequirePositive("aswWindowLen", window));
  if (used > plan.block_dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tiling field usedCoreNum=", used, " exceeds the plan's block_dim=", plan.block_dim));
  }
  const uint64_t m = static_cast<uint64_t>(problem.m), n = static_cast<uint64_t>(problem.n);
  const uint64_t k = static_cast<uint64_t>(problem.k);
  const uint64_t m_cnt = CeilDiv(m, base_m), n_cnt = CeilDiv(n, base_n);
  const uint64_t mn = m_cnt * n_cnt, total = mn * batch;
  Schedule schedule;
  schedule.aic_cores = static_cast<uint32_t>(std::min(used, total));
  const uint64_t single_k = FieldOr(plan, F::kSingleCoreK, k);
  constexpr uint64_t kFp32SplitK = 8192;
  constexpr uint64_t kFp32PerBlock = 32 / kFp32Bytes;  // chunks align to 32 bytes of fp32
  if (problem.dtype_c == DataType::kFloat32 && FieldOr(plan, F::kMatmulMmadParam, 0) == 0 &&
      problem.format_b == Format::kNd && single_k > kFp32SplitK) {
    // Simplification: SplitKChunks keeps full chunks and gives the last one
    // the rest, where the kernel's last chunk is K % chunk; the two differ
    // only in where the final boundary lies.
    const uint64_t rounds = CeilDiv(single_k, kFp32SplitK);
    schedule.split_k_chunk = CeilAlign(CeilDiv(single_k, rounds), kFp32PerBlock);
  }
  for (uint64_t core = 0; core < schedule.aic_cores; ++core) {
    for (uint64_t index = core, round = 0; index < total; index += used, ++round) {
      const auto [m_idx, n_idx] = SerpentineTile(index % mn, m_cnt, n_cnt, window);
      const uint64_t c_batch = index / mn;
      WorkUnit unit;
      unit.core = static_cast<uint32_t>(core);
      unit.round = static_cast<uint32_t>(round);
      unit.tile_idx = static_cast<int64_t>(index);
      unit.batch = static_cast<uint32_t>(batch > 1 ? c_batch : 0);
      const uint64_t m_off = c_batch * m + m_idx * base_m, n_off = n_idx * base_n;
      unit.m = {m_off, std::min(m_off + base_m, (c_batch + 1) * m)};
      unit.n = {n_off, std::min(n_off + base_n, n)};
      unit.k = {0, k};
      schedule.units.push_back(unit);
    }
  }
  return schedule;
}

// BatchMatMulMultiBatchBaseBlock: each loop a core computes iterBatch
// consecutive whole batches (one IterateBatch, its batches loaded together);
// the last loop spreads the remaining batches over the usedCoreNum cores,
// the first `remaining % usedCoreNum` taking one more
// (matmul/batch_mat_mul_v3/op_kernel/arch35/batch_mat_mul_v3_iterbatch_block_advanced.h).
// Simplification: batchOutNum (how many batch outputs the API leaves in L0C
// before one fixpipe) is not modelled; every batch is written on its own.
absl::StatusOr<Schedule> ExpandHighLevelIterBatch(const TilingPlan& plan,
                                                  const MatmulProblem& problem, uint64_t batch) {
  using F = HighLevelBatchField;
  const uint64_t used = FieldOr(plan, F::kUsedCoreNum, plan.block_dim);
  const uint64_t per_core = FieldOr(plan, F::kIterBatch, 0);
  RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
  RETURN_IF_ERROR(RequirePositive("iterBatch", per_core));
  if (used > plan.block_dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tiling field usedCoreNum=", used, " exceeds the plan's block_dim=", plan.block_dim));
  }
  const uint64_t per_loop = per_core * used;
  const uint64_t loops = CeilDiv(batch, per_loop);
  const uint64_t last_all = batch % per_loop == 0 ? per_loop : batch % per_loop;
  const uint64_t last_per_core = last_all / used, last_extra = last_all % used;
  Schedule schedule;
  schedule.batches_share_loads = true;
  for (uint64_t core = 0; core < used; ++core) {
    for (uint64_t loop = 0; loop < loops; ++loop) {
      uint64_t first = loop * per_loop + core * per_core, count = per_core;
      if (loop + 1 == loops) {
        const uint64_t base = loop * per_loop;
        count = core < last_extra ? last_per_core + 1 : last_per_core;
        first = core < last_extra
                    ? base + core * count
                    : base + last_extra * (last_per_core + 1) + (core - last_extra) * last_per_core;
      }
      for (uint64_t i = first; i < std::min(batch, first + count); ++i) {
        schedule.units.push_back(BatchUnit(problem, core, loop, loop * used + core, i));
        schedule.aic_cores = std::max(schedule.aic_cores, static_cast<uint32_t>(core + 1));
      }
    }
  }
  return schedule;
}

absl::StatusOr<Schedule> ExpandHighLevelBatch(const TilingPlan& plan, const MatmulProblem& problem,
                                              uint64_t batch) {
  RETURN_IF_ERROR(
      RequireBatch("cBatchDimAll", FieldOr(plan, HighLevelBatchField::kCBatchDimAll, 1), batch));
  if (plan.key.batch_model == static_cast<uint8_t>(BatchModel::kIterBatchSingleBias)) {
    return ExpandHighLevelIterBatch(plan, problem, batch);
  }
  return ExpandHighLevelAsw(plan, problem, batch);
}

// KernelBatchMatMulToMul: in round r core c takes batchNum batches from
// (r * usedCoreNum + c) * batchNum; in the last round batchNumLastRound
// each, core lastCoreNum batchNumLastRoundTail and the cores after it none
// (matmul/common/cmct/kernel/kernel_batch_matmul_to_mul.h). The AIV
// multiplies each batch's [m, 1] x [1, n] on the vector unit.
absl::StatusOr<Schedule> ExpandBatchToMul(const TilingPlan& plan, const MatmulProblem& problem,
                                          uint64_t batch) {
  const uint64_t b = FieldOr(plan, BatchToMulField::kB, batch);
  RETURN_IF_ERROR(RequireBatch("b", b, batch));
  const uint64_t used = FieldOr(plan, BatchToMulField::kUsedCoreNum, plan.block_dim);
  const uint64_t single = FieldOr(plan, BatchToMulField::kSingleCoreBatch, 0);
  const uint64_t batch_num = FieldOr(plan, BatchToMulField::kBatchNum, 0);
  const uint64_t last_round = FieldOr(plan, BatchToMulField::kBatchNumLastRound, 0);
  const uint64_t last_tail = FieldOr(plan, BatchToMulField::kBatchNumLastRoundTail, 0);
  // lastCoreNum is an unsigned word CANN may wrap (issue17 brief 2, TO_MUL).
  const uint32_t last_core = static_cast<uint32_t>(FieldOr(plan, BatchToMulField::kLastCoreNum, 0));
  RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
  RETURN_IF_ERROR(RequirePositive("singleCoreBatch", single));
  RETURN_IF_ERROR(RequirePositive("batchNum", batch_num));
  if (problem.k != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("BATCH_MATMUL_TO_MUL multiplies k=1 matrices, the problem has k=", problem.k));
  }
  const uint64_t block_num = plan.block_dim;
  const uint64_t tiles = used * CeilDiv(b, batch_num * used);
  Schedule schedule;
  uint32_t cores_used = 0;
  for (uint64_t core = 0; core < block_num; ++core) {
    for (uint64_t tile = core; tile < tiles; tile += block_num) {
      const uint64_t round = tile / used;
      uint64_t first = round * batch_num * used;
      uint64_t count = batch_num;
      bool stop = false;
      if (batch_num >= single - first / used) {
        count = last_round;
        first += core * count;
        if (core > last_core) break;
        if (core == last_core) {
          count = last_tail;
          stop = true;
        }
      } else {
        first += core * batch_num;
      }
      for (uint64_t i = first; i < std::min(b, first + count); ++i) {
        WorkUnit unit = BatchUnit(problem, core, round, tile, i);
        unit.core_kind = CoreKind::kAiv;
        unit.op = UnitOp::kVectorMul;
        schedule.units.push_back(unit);
        cores_used = std::max(cores_used, static_cast<uint32_t>(core + 1));
      }
      if (stop) break;
    }
  }
  schedule.aiv_cores = cores_used;
  return schedule;
}

uint64_t Product(const std::vector<int64_t>& dims) {
  uint64_t product = 1;
  for (int64_t d : dims) product *= static_cast<uint64_t>(d);
  return product;
}

// `dims` right-aligned into kMaxBatchDims slots, missing slots 1.
std::vector<int64_t> RightAligned(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out(kMaxBatchDims, 1);
  std::copy(dims.begin(), dims.end(), out.end() - static_cast<std::ptrdiff_t>(dims.size()));
  return out;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) absl::StrAppend(&text, i ? "," : "", dims[i]);
  return text + "]";
}

}  // namespace

uint64_t BatchWalk::OperandBatch(const std::vector<int64_t>& dims, uint64_t c_index) const {
  // Walk C's slots innermost first, keeping the operand's index where its
  // dim is not broadcast.
  const std::vector<int64_t> aligned = RightAligned(dims);
  uint64_t index = 0, stride = 1;
  for (size_t slot = kMaxBatchDims; slot-- > 0;) {
    const uint64_t c_dim = static_cast<uint64_t>(c[slot]);
    const uint64_t pos = c_index % c_dim;
    c_index /= c_dim;
    const uint64_t dim = static_cast<uint64_t>(aligned[slot]);
    if (dim != 1) index += pos * stride;
    stride *= dim;
  }
  return index;
}
uint64_t BatchWalk::ABatch(uint64_t c_index) const { return OperandBatch(a, c_index); }
uint64_t BatchWalk::BBatch(uint64_t c_index) const { return OperandBatch(b, c_index); }

BlockTiling KernelBlock(const TilingPlan& plan, const MatmulProblem& problem) {
  BlockTiling block = plan.block;
  const uint64_t m = static_cast<uint64_t>(problem.m), n = static_cast<uint64_t>(problem.n);
  const uint64_t k = static_cast<uint64_t>(problem.k);
  if (IsStruct<IterBatchField>(plan.data)) {
    block.base_m = FieldOr(plan, IterBatchField::kBaseM, 0);
    block.base_n = FieldOr(plan, IterBatchField::kBaseN, 0);
    block.base_k = FieldOr(plan, IterBatchField::kBaseK, 0);
    block.m_l1 = m;
    block.n_l1 = n;
    block.k_l1 = std::max<uint64_t>(k, 1);
  } else if (IsStruct<MergeBatchField>(plan.data)) {
    block.base_m = CeilAlign(m, kBlock16);
    block.base_n = CeilAlign(n, kBlock16);
    block.base_k = FieldOr(plan, MergeBatchField::kBaseK, 0);
    block.m_l1 = m;
    block.n_l1 = n;
    block.k_l1 = FieldOr(plan, MergeBatchField::kKL1, 0);
  } else if (IsStruct<HighLevelBatchField>(plan.data)) {
    // The high-level API walks baseM x baseN x baseK L0 blocks through L1
    // stages of stepKa base K blocks; an ASW tile is one baseM x baseN block,
    // an ITER_BATCH unit one whole batch.
    using F = HighLevelBatchField;
    block.base_m = FieldOr(plan, F::kBaseM, block.base_m);
    block.base_n = FieldOr(plan, F::kBaseN, block.base_n);
    block.base_k = FieldOr(plan, F::kBaseK, block.base_k);
    const bool whole_batches =
        plan.key.batch_model == static_cast<uint8_t>(BatchModel::kIterBatchSingleBias);
    block.m_l1 = whole_batches ? m : block.base_m;
    block.n_l1 = whole_batches ? n : block.base_n;
    block.k_l1 = block.base_k * std::max<uint64_t>(1, FieldOr(plan, F::kStepKa, 1));
  }
  return block;
}

absl::StatusOr<BatchWalk> BatchWalkOf(const MatmulProblem& problem) {
  for (const auto* dims : {&problem.batch_a, &problem.batch_b, &problem.batch_c}) {
    if (dims->size() > kMaxBatchDims) {
      return absl::InvalidArgumentError(
          absl::StrCat("batch dims ", DimsText(*dims), " exceed ", kMaxBatchDims, " dims"));
    }
    for (int64_t d : *dims) {
      if (d <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("batch dims ", DimsText(*dims), " must be positive"));
      }
    }
  }
  BatchWalk walk;
  walk.rows = static_cast<uint64_t>(problem.m);
  walk.a = RightAligned(problem.batch_a);
  walk.b = RightAligned(problem.batch_b);
  walk.c.assign(kMaxBatchDims, 1);
  for (size_t slot = 0; slot < kMaxBatchDims; ++slot) {
    const int64_t a = walk.a[slot], b = walk.b[slot];
    if (a != b && a != 1 && b != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch dims ", DimsText(problem.batch_a), " of A and ", DimsText(problem.batch_b),
          " of B do not broadcast (NumPy rule: equal or 1)"));
    }
    walk.c[slot] = std::max(a, b);
  }
  if (!problem.batch_c.empty() && RightAligned(problem.batch_c) != walk.c) {
    return absl::InvalidArgumentError(absl::StrCat("batch_c ", DimsText(problem.batch_c),
                                                   " is not the broadcast ", DimsText(walk.c),
                                                   " of A's and B's batch dims"));
  }
  walk.batch = Product(walk.c);
  if (problem.op != MatmulOp::kMatMulV3 && Product(walk.b) == 1 && !problem.trans_a &&
      Product(walk.a) > 1) {
    walk.merged_into_m = true;
    walk.rows *= Product(walk.a);
    walk.batch = 1;
    walk.a.assign(kMaxBatchDims, 1);
    walk.c.assign(kMaxBatchDims, 1);
  }
  return walk;
}

std::string CoreKindName(CoreKind kind) { return kind == CoreKind::kAic ? "AIC" : "AIV"; }

std::string UnitOpName(UnitOp op) {
  switch (op) {
    case UnitOp::kMmad:
      return "MMAD";
    case UnitOp::kReduce:
      return "REDUCE";
    case UnitOp::kClear:
      return "CLEAR";
    case UnitOp::kVectorMul:
      return "VECTOR_MUL";
  }
  return "?";
}

absl::StatusOr<Schedule> ExpandSchedule(const TilingPlan& plan, const MatmulProblem& problem,
                                        const ChipSpec& chip) {
  absl::StatusOr<Schedule> schedule = ExpandTileLoops(plan, problem, chip);
  if (!schedule.ok()) return schedule;
  RETURN_IF_ERROR(CheckTilePattern(plan, problem));
  return schedule;
}

absl::Status CheckTilePattern(const TilingPlan& plan, const MatmulProblem& problem) {
  if (plan.key.model != KernelModel::kStreamK && plan.key.model != KernelModel::kStreamKSplitK) {
    return absl::OkStatus();
  }
  const BlockTiling& b = plan.block;
  const uint64_t used = BasicFieldOr(plan, BasicField::kUsedCoreNum, plan.block_dim);
  assert(b.base_m != 0 && b.base_n != 0 && used != 0 && "CheckTilePattern of an unusable plan");
  const absl::StatusOr<BatchWalk> walk = BatchWalkOf(problem);
  const uint64_t rows = walk.ok() ? walk->rows : static_cast<uint64_t>(problem.m);
  const uint64_t mn_tiles =
      CeilDiv(rows, b.base_m) * CeilDiv(static_cast<uint64_t>(problem.n), b.base_n);
  if (mn_tiles % used == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Stream-K needs a tail round: ", mn_tiles, " MN tiles are a multiple of usedCoreNum=", used,
        " (seeds/000 section 7, problem 4)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Schedule> ExpandTileLoops(const TilingPlan& plan, const MatmulProblem& problem,
                                         const ChipSpec& chip) {
  if (problem.m == 0 || problem.n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("problem has an empty output: m=", problem.m, " n=", problem.n));
  }
  const bool vector_only = plan.kernel_type == KernelType::kAivOnly;
  const uint64_t core_limit = vector_only ? chip.aiv_num : chip.aic_num;
  if (plan.block_dim == 0 || plan.block_dim > core_limit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan block_dim=", plan.block_dim, " is outside [1, ", core_limit, "] of ", chip.name));
  }
  if (plan.l1_residency != L1Residency::kStreamed) {
    // A resident band only exists in the data-parallel (ASWT) tile loop, and
    // never together with whole-matrix residency.
    const bool aswt =
        plan.key.model == KernelModel::kBasic || plan.key.model == KernelModel::kBasicSplitK;
    if (!aswt || plan.key.full_load != FullLoad::kNone) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan field l1_residency=", std::string(L1ResidencyName(plan.l1_residency)),
                       " needs the BASIC or BASIC_SPLIT_K model without full load, not ",
                       std::string(KernelModelName(plan.key.model)), " / ",
                       std::string(FullLoadName(plan.key.full_load))));
    }
  }
  ASSIGN_OR_RETURN(const BatchWalk walk, BatchWalkOf(problem));
  // The kernels walk one batch's rows (A's batch merged into M) batch times.
  MatmulProblem walked = problem;
  walked.m = static_cast<int64_t>(walk.rows);
  const uint64_t batch = walk.batch;
  absl::StatusOr<Schedule> schedule;
  if (IsStruct<IterBatchField>(plan.data)) {
    schedule = ExpandIterBatch(plan, walked, batch);
  } else if (IsStruct<MergeBatchField>(plan.data)) {
    schedule = ExpandMergeBatch(plan, walked, batch);
  } else if (IsStruct<BatchToMulField>(plan.data)) {
    schedule = ExpandBatchToMul(plan, walked, batch);
  } else if (IsStruct<HighLevelBatchField>(plan.data)) {
    schedule = ExpandHighLevelBatch(plan, walked, batch);
  } else {
    if (IsStruct<BatchBasicField>(plan.data) && plan.key.model != KernelModel::kKEqualZero) {
      RETURN_IF_ERROR(
          RequireBatch("batchDimAll", FieldOr(plan, BatchBasicField::kBatchDimAll, 1), batch));
    }
    if (batch > 1 &&
        (plan.key.model == KernelModel::kToMul || plan.key.model == KernelModel::kToMultiMul)) {
      return absl::UnimplementedError(
          absl::StrCat("the emulator runs ", std::string(KernelModelName(plan.key.model)),
                       " plans on one batch only, the problem has ", batch));
    }
    switch (plan.key.model) {
      case KernelModel::kBasic:
      case KernelModel::kSlice:
      case KernelModel::kBasicSplitK:
        schedule = ExpandAswt(plan, walked, batch);
        break;
      case KernelModel::kStreamK:
      case KernelModel::kStreamKSplitK:
        schedule = schedule_internal::ExpandStreamK(plan, walked, batch);
        break;
      case KernelModel::kKEqualZero:
      case KernelModel::kToMul:
      case KernelModel::kToMultiMul:
        schedule = ExpandVector(plan, walked, chip, batch);
        break;
    }
  }
  if (!schedule.ok()) return schedule.status();
  schedule->batch = batch;
  schedule->batch_rows = walk.rows;
  schedule->model = plan.key.model;
  schedule->full_load = plan.key.full_load;
  schedule->swat_window_rows = static_cast<uint32_t>(WindowRows(plan));
  schedule->l1_residency = plan.l1_residency;
  if (!vector_only) {
    const BlockTiling block = KernelBlock(plan, walked);
    schedule->base_m = block.base_m;
    schedule->base_n = block.base_n;
    schedule->base_k = block.base_k;
    schedule->k_l1 = block.k_l1;
  }
  SortAndCountRounds(*schedule);
  return schedule;
}

std::vector<Range> SplitKChunks(const Range& k, uint64_t split_k_chunk) {
  if (split_k_chunk == 0 || k.size() <= split_k_chunk) return {k};
  std::vector<Range> chunks;
  const uint64_t rounds = k.size() / split_k_chunk;
  for (uint64_t i = 0; i + 1 < rounds; ++i) {
    chunks.push_back({k.begin + i * split_k_chunk, k.begin + (i + 1) * split_k_chunk});
  }
  chunks.push_back({k.begin + (rounds - 1) * split_k_chunk, k.end});
  return chunks;
}

}  // namespace npu::tiling
