#include "server/tiling/schedule.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/operator_table.h"
#include "server/tiling/schedule_internal.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

using schedule_internal::AxisBlocks;
using schedule_internal::BasicFieldOr;
using schedule_internal::FieldOr;
using schedule_internal::MakeAxis;
using schedule_internal::RequirePositive;
using schedule_internal::SerpentineTile;
using schedule_internal::WindowRows;

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

}  // namespace

namespace schedule_internal {

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

absl::StatusOr<Schedule> ExpandByModel(const TilingPlan& plan, const MatmulProblem& walked,
                                       const ChipSpec& chip, uint64_t batch) {
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
      return ExpandAswt(plan, walked, batch);
    case KernelModel::kStreamK:
    case KernelModel::kStreamKSplitK:
      return ExpandStreamK(plan, walked, batch);
    case KernelModel::kKEqualZero:
    case KernelModel::kToMul:
    case KernelModel::kToMultiMul:
      return ExpandVector(plan, walked, chip, batch);
  }
  return absl::InvalidArgumentError("unknown kernel model");
}

BlockTiling PlanBlock(const TilingPlan& plan, const MatmulProblem& /*walked*/) {
  return plan.block;
}

}  // namespace schedule_internal

BlockTiling KernelBlock(const TilingPlan& plan, const MatmulProblem& problem) {
  return KernelRowOf(plan.data.kernel).block(plan, problem);
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
  // GroupedMatmul: its kernels' walk over this problem's groups.
  if (problem.op == MatmulOp::kGroupedMatmul) {
    return schedule_internal::CheckGroupedTilePattern(plan, problem);
  }
  if (plan.key.model != KernelModel::kStreamK && plan.key.model != KernelModel::kStreamKSplitK) {
    return absl::OkStatus();
  }
  const BlockTiling& b = plan.block;
  const uint64_t used = BasicFieldOr(plan, BasicField::kUsedCoreNum, plan.block_dim);
  assert(b.base_m != 0 && b.base_n != 0 && used != 0 && "CheckTilePattern of an unusable plan");
  const absl::StatusOr<BatchShape> walk = BatchShapeOf(problem);
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
  // GroupedMatmul's sizes are its groups' (grouped/gmm_groups.h).
  const bool grouped = problem.op == MatmulOp::kGroupedMatmul;
  if (!grouped && (problem.m == 0 || problem.n == 0)) {
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
  if (grouped) {
    // The grouped kernels walk each group's blocks; the row reads the
    // groups from the problem itself.
    ASSIGN_OR_RETURN(Schedule schedule,
                     KernelRowOf(plan.data.kernel).expand(plan, problem, chip, 1));
    schedule.model = plan.key.model;
    const BlockTiling block = KernelBlock(plan, problem);
    schedule.base_m = block.base_m;
    schedule.base_n = block.base_n;
    schedule.base_k = block.base_k;
    schedule.k_l1 = block.k_l1;
    SortAndCountRounds(schedule);
    return schedule;
  }
  ASSIGN_OR_RETURN(const BatchShape walk, BatchShapeOf(problem));
  // The kernels walk one batch's rows (A's batch merged into M) batch times.
  MatmulProblem walked = problem;
  walked.m = static_cast<int64_t>(walk.rows);
  const uint64_t batch = walk.batch;
  absl::StatusOr<Schedule> schedule =
      KernelRowOf(plan.data.kernel).expand(plan, walked, chip, batch);
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
