#include "server/tiling/schedule.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling {
namespace {

// The SWAT walk shared by the ASWT and Stream-K schedulers and the Stream-K
// epilogue: tiles are taken in windows of up to kWindowLen rows of base
// blocks; inside a window the row index moves fastest, then the column; every
// other window walks the columns backwards (serpentine), so consecutive
// rounds stay close in GM and the re-reads hit L2. CANN's window is
// WINDOW_LEN = 4 of block_scheduler_aswt.h / block_scheduler_streamk.h
// (seeds/001 4.1, kCannSwatWindowRows); plans from the advisor may carry
// another length in `swat_window_rows`.
uint64_t WindowRows(const TilingPlan& plan) {
  return plan.swat_window_rows == 0 ? kCannSwatWindowRows : plan.swat_window_rows;
}

std::pair<uint64_t, uint64_t> SerpentineTile(uint64_t idx, uint64_t m_tiles, uint64_t n_tiles,
                                             uint64_t window_rows) {
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

uint64_t FieldOr(const TilingPlan& plan, std::string_view name, uint64_t fallback) {
  std::optional<uint64_t> value = plan.data.Get(name);
  return value.has_value() ? *value : fallback;
}

absl::Status RequirePositive(std::string_view field, uint64_t value) {
  if (value == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tiling field ", std::string(field), "=0 must be positive"));
  }
  return absl::OkStatus();
}

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

// BlockSchedulerAswtBuiltIn with batch 1.
absl::StatusOr<Schedule> ExpandAswt(const TilingPlan& plan, const MatmulProblem& problem) {
  const BlockTiling& b = plan.block;
  RETURN_IF_ERROR(RequirePositive("mL1", b.m_l1));
  RETURN_IF_ERROR(RequirePositive("nL1", b.n_l1));
  RETURN_IF_ERROR(RequirePositive("baseM", b.base_m));
  RETURN_IF_ERROR(RequirePositive("baseN", b.base_n));
  RETURN_IF_ERROR(RequirePositive("baseK", b.base_k));
  RETURN_IF_ERROR(RequirePositive("kL1", b.k_l1));
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  const uint64_t block_num = plan.block_dim;

  absl::StatusOr<AxisBlocks> m_axis =
      MakeAxis("mL1", m, b.m_l1, FieldOr(plan, "mBaseTailSplitCnt", 1), FieldOr(plan, "mTailMain", 0));
  if (!m_axis.ok()) return m_axis.status();
  absl::StatusOr<AxisBlocks> n_axis =
      MakeAxis("nL1", n, b.n_l1, FieldOr(plan, "nBaseTailSplitCnt", 1), FieldOr(plan, "nTailMain", 0));
  if (!n_axis.ok()) return n_axis.status();

  const uint64_t mn_tiles = m_axis->tiles * n_axis->tiles;
  const uint64_t per_core_rounds = CeilDiv(mn_tiles, block_num);
  const uint64_t tail_tiles = mn_tiles % block_num;
  // The tail re-split counts are re-derived from the last block's size, as
  // the device does, so a count that would leave empty pieces shrinks.
  uint64_t m_tail_cnt = std::max<uint64_t>(1, b.m_tail_cnt);
  uint64_t n_tail_cnt = std::max<uint64_t>(1, b.n_tail_cnt);
  m_tail_cnt = CeilDiv(m_axis->tail_last, CeilDiv(m_axis->tail_last, m_tail_cnt));
  n_tail_cnt = CeilDiv(n_axis->tail_last, CeilDiv(n_axis->tail_last, n_tail_cnt));
  const uint64_t tail_cnt = m_tail_cnt * n_tail_cnt;
  const uint64_t tile_num = mn_tiles + (tail_cnt - 1) * tail_tiles;
  const uint64_t cores = std::min<uint64_t>(tile_num, block_num);

  Schedule schedule;
  schedule.aic_cores = static_cast<uint32_t>(cores);
  const bool fp32_split = plan.key.model == KernelModel::kBasicSplitK;
  if (fp32_split) {
    // CANN switches to 8192-element chunks once K exceeds 1024 * 32 * 8192.
    constexpr uint64_t kLargeK = 268435456;
    schedule.split_k_chunk = k > kLargeK ? 8192 : 1024;
  }
  for (uint64_t core = 0; core < cores; ++core) {
    for (uint64_t tile = core; tile < tile_num; tile += block_num) {
      const uint64_t round = tile / block_num;
      const bool tail_round = round == per_core_rounds - 1 && tail_cnt > 1;
      const uint64_t base_tile = tail_round ? round * block_num + core / tail_cnt : tile;
      auto [m_idx, n_idx] =
          SerpentineTile(base_tile % mn_tiles, m_axis->tiles, n_axis->tiles, WindowRows(plan));
      uint64_t blk_m = m_axis->BlockSize(m_idx), blk_n = n_axis->BlockSize(n_idx);
      uint64_t m_off = m_axis->BlockOffset(m_idx), n_off = n_axis->BlockOffset(n_idx);
      if (tail_round) {
        const uint64_t split_m = CeilDiv(blk_m, m_tail_cnt);
        const uint64_t split_n = CeilDiv(blk_n, n_tail_cnt);
        const uint64_t m_split_off = ((core % tail_cnt) % m_tail_cnt) * split_m;
        const uint64_t n_split_off = ((core % tail_cnt) / m_tail_cnt) * split_n;
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
      unit.k = {0, k};
      schedule.units.push_back(unit);
    }
  }
  return schedule;
}

// BlockSchedulerStreamKBuiltIn, the Stream-K kernel's tile loop with the
// DP+SK preload swap, and BlockEpilogueStreamK's split of the reduction over
// the AIV cores.
absl::StatusOr<Schedule> ExpandStreamK(const TilingPlan& plan, const MatmulProblem& problem,
                                       const ScheduleOptions& options) {
  const BlockTiling& b = plan.block;
  RETURN_IF_ERROR(RequirePositive("baseM", b.base_m));
  RETURN_IF_ERROR(RequirePositive("baseN", b.base_n));
  RETURN_IF_ERROR(RequirePositive("baseK", b.base_k));
  RETURN_IF_ERROR(RequirePositive("kL1", b.k_l1));
  RETURN_IF_ERROR(RequirePositive("skSingleCoreK", b.single_core_k));
  const uint64_t used = FieldOr(plan, "usedCoreNum", plan.block_dim);
  RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
  // Partial sums are stored in fixed 256x256 slots.
  if (b.base_m * b.base_n > kWorkspaceSlotElements) {
    return absl::InvalidArgumentError(
        absl::StrCat("tiling field baseM*baseN=", b.base_m * b.base_n,
                     " exceeds the 256x256 Stream-K workspace slot"));
  }
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  const uint64_t m_tiles = CeilDiv(m, b.base_m), n_tiles = CeilDiv(n, b.base_n);
  const uint64_t mn_tiles = m_tiles * n_tiles;
  const uint64_t sk_k = b.single_core_k;
  const uint64_t k_tiles = std::max<uint64_t>(1, CeilDiv(k, sk_k));
  const uint64_t tail_mn = mn_tiles % used;
  if (tail_mn == 0 && !options.skip_stream_k_tail_gate) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Stream-K needs a tail round: ", mn_tiles, " MN tiles are a multiple of usedCoreNum=",
        used, " (seeds/000 section 7, problem 4)"));
  }
  const uint64_t dp_tiles = mn_tiles - tail_mn;
  const uint64_t tile_num = dp_tiles + tail_mn * k_tiles;
  const uint64_t last_round = CeilDiv(tile_num, used);
  auto is_sk = [&](uint64_t tile) { return CeilDiv(tile + 1, used) == last_round; };
  const bool dp_sk = !is_sk(0);
  const uint64_t tail_sk_tiles = tail_mn * k_tiles;
  const uint64_t block_num = plan.block_dim;
  const uint64_t cores = std::min(tile_num, used);

  Schedule schedule;
  schedule.aic_cores = static_cast<uint32_t>(block_num);
  schedule.aiv_cores = static_cast<uint32_t>(2 * block_num);
  if (plan.key.model == KernelModel::kStreamKSplitK && sk_k > 1024) {
    // The SK_SPLIT_K kernel accumulates fp32 K in chunks of 1024.
    schedule.split_k_chunk = 1024;
  }
  // One reduction group per MN tile of the split round, in round order.
  std::map<uint64_t, int32_t> group_of_tile;
  const uint64_t k_tiles_in_sk = k_tiles;
  for (uint64_t core = 0; core < block_num; ++core) {
    if (core >= cores) {
      schedule.idle_aic_cores.push_back(static_cast<uint32_t>(core));
      continue;
    }
    for (uint64_t tile = core; tile < tile_num; tile += used) {
      uint64_t tmp = tile;
      if (dp_sk && tile % used < tail_sk_tiles) {
        // Preload: the split tiles run one round early and the last round's
        // data-parallel tile one round late, so the AIV reduction overlaps
        // the cube's last round.
        if (CeilDiv(tile + 1, used) == last_round - 1) {
          tmp = tile + used;
        } else if (CeilDiv(tile + 1, used) == last_round) {
          tmp = tile - used;
        }
      }
      const bool sk = is_sk(tmp);
      const uint64_t cur_k_tiles = sk ? k_tiles_in_sk : 1;
      const uint64_t mnk_idx = tmp % (mn_tiles * k_tiles);
      uint64_t k_idx = 0, mn_idx = 0;
      if (sk) {
        k_idx = (mnk_idx % used) % cur_k_tiles;
        mn_idx = (mnk_idx % used) / cur_k_tiles + dp_tiles;
      } else {
        mn_idx = mnk_idx / cur_k_tiles;
      }
      auto [m_idx, n_idx] = SerpentineTile(mn_idx, m_tiles, n_tiles, WindowRows(plan));
      WorkUnit unit;
      unit.core = static_cast<uint32_t>(core);
      unit.round = static_cast<uint32_t>((tile - core) / used);
      unit.tile_idx = static_cast<int64_t>(tmp);
      const uint64_t m_off = m_idx * b.base_m, n_off = n_idx * b.base_n;
      unit.m = {m_off, std::min(m, m_off + b.base_m)};
      unit.n = {n_off, std::min(n, n_off + b.base_n)};
      if (sk) {
        const uint64_t k_off = k_idx * sk_k;
        unit.k = {std::min(k, k_off), std::min(k, k_off + sk_k)};
        unit.k_slice = static_cast<uint32_t>(k_idx);
        unit.writes_partial = true;
        const uint64_t slot = options.workspace_slot_from_tile_idx
                                  ? tmp
                                  : ((tmp % used) / k_tiles) * k_tiles + k_idx;
        unit.workspace_slot = static_cast<uint32_t>(slot);
        const uint64_t group_key = (tmp % used) / k_tiles;
        auto [it, inserted] =
            group_of_tile.emplace(group_key, static_cast<int32_t>(schedule.reductions.size()));
        if (inserted) {
          ReductionGroup group;
          group.m = unit.m;
          group.n = unit.n;
          group.slots.assign(k_tiles, 0);
          // The AIV-assisted output mode pads partial rows to 32 elements.
          group.workspace_row_stride = plan.key.l0c2out == L0cToOut::kNdFixpipe1To2
                                           ? CeilAlign(unit.n.size(), 32)
                                           : unit.n.size();
          schedule.reductions.push_back(group);
        }
        unit.reduction = it->second;
        schedule.reductions[it->second].slots[k_idx] = unit.workspace_slot;
      } else {
        unit.k = {0, k};
      }
      unit.signals_aiv = tmp + used >= tile_num;
      schedule.units.push_back(unit);
    }
  }
  // The workspace holds one slot per used core.
  schedule.workspace_slots = static_cast<uint32_t>(used);

  // Epilogue: each split tile is reduced by 2 * k_tiles AIV cores, each
  // taking a band of rows; the band height is rounded so a band is at least
  // 32 elements long (UB2GM_SRCGAP_UNIT).
  const uint64_t ratio = 2;  // AIV per AIC (GetTaskRation)
  const uint64_t active_aiv = tail_mn * k_tiles * ratio;
  for (uint64_t aiv = 0; aiv < std::min<uint64_t>(active_aiv, schedule.aiv_cores); ++aiv) {
    const uint64_t group_pos = aiv / (ratio * k_tiles);
    const uint64_t band = aiv % (ratio * k_tiles);
    const uint64_t mn_idx = (group_pos + dp_tiles) % mn_tiles;
    auto [m_idx, n_idx] = SerpentineTile(mn_idx, m_tiles, n_tiles, WindowRows(plan));
    auto it = group_of_tile.find(group_pos);
    if (it == group_of_tile.end()) continue;  // no AIC produced this tile (faulty plan)
    const ReductionGroup& group = schedule.reductions[it->second];
    const uint64_t cur_m = std::min(m, (m_idx + 1) * b.base_m) - m_idx * b.base_m;
    const uint64_t cur_n = group.n.size();
    const uint64_t row_stride = group.workspace_row_stride;
    const uint64_t band_base = [&] {
      const uint64_t rows = CeilDiv(cur_m, k_tiles * ratio);
      const uint64_t align = CeilDiv(32, row_stride);
      return CeilAlign(rows, align);
    }();
    const uint64_t bands = CeilDiv(cur_m, band_base);
    if (band >= bands) continue;
    const uint64_t rows = band == bands - 1 ? cur_m - (bands - 1) * band_base : band_base;
    WorkUnit unit;
    unit.core_kind = CoreKind::kAiv;
    unit.core = static_cast<uint32_t>(aiv);
    unit.round = 0;
    unit.tile_idx = static_cast<int64_t>(group_pos);
    unit.op = UnitOp::kReduce;
    const uint64_t row0 = m_idx * b.base_m + band * band_base;
    unit.m = {row0, row0 + rows};
    unit.n = {n_idx * b.base_n, n_idx * b.base_n + cur_n};
    unit.k = {0, k};
    unit.reduction = it->second;
    schedule.units.push_back(unit);
  }
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

absl::StatusOr<Schedule> ExpandVector(const TilingPlan& plan, const MatmulProblem& problem,
                                      const ChipSpec& chip) {
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  const uint64_t total = m * n;
  Schedule schedule;
  WorkUnit proto;
  proto.core_kind = CoreKind::kAiv;
  proto.k = {0, k};
  switch (plan.key.model) {
    case KernelModel::kKEqualZero: {
      // MatMulInputKEqZeroClearOutput: every AIV clears one contiguous run.
      const uint64_t aiv = FieldOr(plan, "aivNum", chip.aiv_num);
      RETURN_IF_ERROR(RequirePositive("aivNum", aiv));
      const uint64_t per = std::max<uint64_t>(1, CeilDiv(total, aiv));
      proto.op = UnitOp::kClear;
      uint32_t used = 0;
      for (uint64_t core = 0; core * per < total; ++core) {
        proto.core = static_cast<uint32_t>(core);
        proto.tile_idx = static_cast<int64_t>(core);
        AppendFlatRange(core * per, std::min(total, (core + 1) * per), n, proto, schedule.units);
        used = static_cast<uint32_t>(core + 1);
      }
      schedule.aiv_cores = used;
      break;
    }
    case KernelModel::kToMul: {
      // TO_MUL: tiles of baseMN consecutive outputs, dealt round-robin.
      const uint64_t used = FieldOr(plan, "usedCoreNum", plan.block_dim);
      const uint64_t base_mn = FieldOr(plan, "baseMN", 0);
      RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
      RETURN_IF_ERROR(RequirePositive("baseMN", base_mn));
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
      break;
    }
    case KernelModel::kToMultiMul: {
      // TO_MULTI_MUL: baseM x baseN blocks in row-major order, dealt
      // round-robin to the used AIV cores.
      const uint64_t used = FieldOr(plan, "usedCoreNum", plan.block_dim);
      const uint64_t base_m = FieldOr(plan, "baseM", 0), base_n = FieldOr(plan, "baseN", 0);
      RETURN_IF_ERROR(RequirePositive("usedCoreNum", used));
      RETURN_IF_ERROR(RequirePositive("baseM", base_m));
      RETURN_IF_ERROR(RequirePositive("baseN", base_n));
      proto.op = UnitOp::kVectorMul;
      const uint64_t m_blocks = CeilDiv(m, base_m), n_blocks = CeilDiv(n, base_n);
      for (uint64_t tile = 0; tile < m_blocks * n_blocks; ++tile) {
        WorkUnit unit = proto;
        unit.core = static_cast<uint32_t>(tile % used);
        unit.round = static_cast<uint32_t>(tile / used);
        unit.tile_idx = static_cast<int64_t>(tile);
        const uint64_t mi = tile / n_blocks, ni = tile % n_blocks;
        unit.m = {mi * base_m, std::min(m, (mi + 1) * base_m)};
        unit.n = {ni * base_n, std::min(n, (ni + 1) * base_n)};
        schedule.units.push_back(unit);
      }
      schedule.aiv_cores = static_cast<uint32_t>(std::min(used, m_blocks * n_blocks));
      break;
    }
    default:
      assert(false && "ExpandVector called for a cube model");
  }
  return schedule;
}

}  // namespace

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
                                        const ChipSpec& chip, const ScheduleOptions& options) {
  if (problem.m == 0 || problem.n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("problem has an empty output: m=", problem.m, " n=", problem.n));
  }
  const bool vector_only = plan.kernel_type == KernelType::kAivOnly;
  const uint64_t core_limit = vector_only ? chip.aiv_num : chip.aic_num;
  if (plan.block_dim == 0 || plan.block_dim > core_limit) {
    return absl::InvalidArgumentError(absl::StrCat("plan block_dim=", plan.block_dim,
                                                   " is outside [1, ", core_limit, "] of ",
                                                   chip.name));
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
  absl::StatusOr<Schedule> schedule;
  switch (plan.key.model) {
    case KernelModel::kBasic:
    case KernelModel::kSlice:
    case KernelModel::kBasicSplitK:
      schedule = ExpandAswt(plan, problem);
      break;
    case KernelModel::kStreamK:
    case KernelModel::kStreamKSplitK:
      schedule = ExpandStreamK(plan, problem, options);
      break;
    case KernelModel::kKEqualZero:
    case KernelModel::kToMul:
    case KernelModel::kToMultiMul:
      schedule = ExpandVector(plan, problem, chip);
      break;
  }
  if (!schedule.ok()) return schedule.status();
  schedule->model = plan.key.model;
  schedule->full_load = plan.key.full_load;
  schedule->swat_window_rows = static_cast<uint32_t>(WindowRows(plan));
  schedule->l1_residency = plan.l1_residency;
  if (!vector_only) {
    schedule->base_m = plan.block.base_m;
    schedule->base_n = plan.block.base_n;
    schedule->base_k = plan.block.base_k;
    schedule->k_l1 = plan.block.k_l1;
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

namespace {

struct Box {
  Range m, n, k;
  size_t unit = 0;
};

bool Overlap(const Range& a, const Range& b) { return a.begin < b.end && b.begin < a.end; }

// Exact cover of [0, M) x [0, N) (x [0, K) when `use_k`): the boxes stay in
// bounds, do not overlap, and their volumes add up to the whole.
absl::Status CheckExactCover(std::vector<Box> boxes, uint64_t m, uint64_t n, uint64_t k,
                             bool use_k, std::string_view what) {
  uint64_t volume = 0;
  for (const Box& box : boxes) {
    if (box.m.end > m || box.n.end > n || (use_k && box.k.end > k)) {
      return absl::InternalError(absl::StrCat(std::string(what), ": unit ", box.unit,
                                              " reaches outside the problem"));
    }
    volume += box.m.size() * box.n.size() * (use_k ? box.k.size() : 1);
  }
  // Zero-volume boxes (cores whose piece is empty) cannot overlap anything.
  boxes.erase(std::remove_if(boxes.begin(), boxes.end(),
                             [&](const Box& box) {
                               return box.m.empty() || box.n.empty() || (use_k && box.k.empty());
                             }),
              boxes.end());
  std::sort(boxes.begin(), boxes.end(),
            [](const Box& a, const Box& b) { return a.m.begin < b.m.begin; });
  for (size_t i = 0; i < boxes.size(); ++i) {
    for (size_t j = i + 1; j < boxes.size() && boxes[j].m.begin < boxes[i].m.end; ++j) {
      if (Overlap(boxes[i].n, boxes[j].n) && (!use_k || Overlap(boxes[i].k, boxes[j].k))) {
        return absl::InternalError(absl::StrCat(std::string(what), ": units ", boxes[i].unit,
                                                " and ", boxes[j].unit, " overlap"));
      }
    }
  }
  const uint64_t expected = m * n * (use_k ? k : 1);
  if (volume != expected) {
    return absl::InternalError(absl::StrCat(std::string(what), ": units cover ", volume,
                                            " of ", expected, " elements"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckScheduleCoverage(const Schedule& schedule, const MatmulProblem& problem) {
  std::vector<Box> mmad, outputs;
  std::map<uint32_t, size_t> slot_writer;
  for (size_t i = 0; i < schedule.units.size(); ++i) {
    const WorkUnit& unit = schedule.units[i];
    const Box box{unit.m, unit.n, unit.k, i};
    switch (unit.op) {
      case UnitOp::kMmad:
        mmad.push_back(box);
        if (unit.writes_partial) {
          if (unit.workspace_slot >= schedule.workspace_slots) {
            return absl::InternalError(absl::StrCat("unit ", i, " writes workspace slot ",
                                                    unit.workspace_slot, " of ",
                                                    schedule.workspace_slots));
          }
          auto [it, inserted] = slot_writer.emplace(unit.workspace_slot, i);
          if (!inserted) {
            return absl::InternalError(absl::StrCat("units ", it->second, " and ", i,
                                                    " both write workspace slot ",
                                                    unit.workspace_slot));
          }
        } else {
          outputs.push_back(box);
        }
        break;
      case UnitOp::kReduce: {
        if (unit.reduction < 0 ||
            static_cast<size_t>(unit.reduction) >= schedule.reductions.size()) {
          return absl::InternalError(absl::StrCat("reduce unit ", i, " has no group"));
        }
        for (uint32_t slot : schedule.reductions[unit.reduction].slots) {
          if (slot_writer.count(slot) == 0) {
            return absl::InternalError(absl::StrCat("reduce unit ", i, " reads workspace slot ",
                                                    slot, " that no unit writes"));
          }
        }
        outputs.push_back(box);
        break;
      }
      case UnitOp::kVectorMul:
        mmad.push_back(box);
        outputs.push_back(box);
        break;
      case UnitOp::kClear:
        outputs.push_back(box);
        break;
    }
  }
  RETURN_IF_ERROR(CheckExactCover(mmad, problem.m, problem.n, problem.k, true, "(m, n, k)"));
  return CheckExactCover(outputs, problem.m, problem.n, problem.k, false, "C (m, n)");
}

}  // namespace npu::tiling
