// The Stream-K expansion: BlockSchedulerStreamKBuiltIn's tile loop and
// BlockEpilogueStreamK's AIV reduction (see schedule.h for the vocabulary).
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "server/tiling/schedule.h"
#include "server/tiling/schedule_internal.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::schedule_internal {
namespace {

// The tile grid of a Stream-K plan: data-parallel MN tiles, then the tail
// round's MN tiles each split into `k_tiles` K slices of `sk_k`.
struct StreamKGrid {
  uint64_t m = 0, n = 0, k = 0;  // problem
  uint64_t base_m = 0, base_n = 0;
  uint64_t used = 0;  // usedCoreNum: the cores the tile loop strides over
  uint64_t m_tiles = 0, n_tiles = 0, mn_tiles = 0;
  uint64_t sk_k = 0, k_tiles = 0;
  uint64_t tail_mn = 0;   // MN tiles of the split round
  uint64_t dp_tiles = 0;  // MN tiles run whole
  uint64_t tile_num = 0;  // scheduler tiles: dp_tiles + tail_mn * k_tiles
  uint64_t last_round = 0;
  uint64_t window_rows = 0;
  uint64_t batch = 1;  // C batches: each runs the split round's tiles

  // Whether scheduler tile `tile` falls in the split (last) round.
  bool IsSplit(uint64_t tile) const { return CeilDiv(tile + 1, used) == last_round; }
};

absl::StatusOr<StreamKGrid> MakeStreamKGrid(const TilingPlan& plan, const MatmulProblem& problem,
                                            uint64_t batch) {
  const BlockTiling& b = plan.block;
  RETURN_IF_ERROR(RequireBaseBlock(b));
  RETURN_IF_ERROR(RequirePositive("skSingleCoreK", b.single_core_k));
  StreamKGrid g;
  g.used = BasicFieldOr(plan, BasicField::kUsedCoreNum, plan.block_dim);
  RETURN_IF_ERROR(RequirePositive("usedCoreNum", g.used));
  // Partial sums are stored in fixed 256x256 slots.
  if (b.base_m * b.base_n > kWorkspaceSlotElements) {
    return absl::InvalidArgumentError(absl::StrCat("tiling field baseM*baseN=", b.base_m * b.base_n,
                                                   " exceeds the 256x256 Stream-K workspace slot"));
  }
  g.m = problem.m;
  g.n = problem.n;
  g.k = problem.k;
  g.base_m = b.base_m;
  g.base_n = b.base_n;
  g.m_tiles = CeilDiv(g.m, b.base_m);
  g.n_tiles = CeilDiv(g.n, b.base_n);
  g.mn_tiles = g.m_tiles * g.n_tiles;
  g.sk_k = b.single_core_k;
  g.k_tiles = std::max<uint64_t>(1, CeilDiv(g.k, g.sk_k));
  g.tail_mn = g.mn_tiles % g.used;
  g.dp_tiles = g.mn_tiles - g.tail_mn;
  g.batch = batch;
  if (batch > 1 && g.mn_tiles * batch > g.used) {
    // BlockSchedulerStreamKBuiltIn multiplies only the split tiles by the
    // batch; BATCH_STREAM_K keeps batch x MN tiles within half the cores
    // (batch_matmul_v3_basic_streamk_tiling.cpp), so every tile is split.
    return absl::UnimplementedError(
        absl::StrCat("a Stream-K plan over ", batch, " batches of ", g.mn_tiles,
                     " MN tiles needs more than usedCoreNum=", g.used,
                     " tiles per round; the kernel splits every tile only within one round"));
  }
  g.tile_num = g.dp_tiles + g.tail_mn * g.k_tiles * batch;
  g.last_round = CeilDiv(g.tile_num, g.used);
  g.window_rows = WindowRows(plan);
  return g;
}

// Makes `unit` (scheduler tile `tile`, slice `k_idx`) a K slice of a split
// tile: its K range, its workspace slot, and its place in the reduction group
// of its MN tile (created on first use, in `group_of_tile`).
void MakeKSlice(const TilingPlan& plan, const StreamKGrid& g, uint64_t tile, uint64_t k_idx,
                WorkUnit& unit, std::map<uint64_t, int32_t>& group_of_tile, Schedule& schedule) {
  const uint64_t k_off = k_idx * g.sk_k;
  unit.k = {std::min(g.k, k_off), std::min(g.k, k_off + g.sk_k)};
  unit.k_slice = static_cast<uint32_t>(k_idx);
  unit.writes_partial = true;
  const uint64_t slot = ((tile % g.used) / g.k_tiles) * g.k_tiles + k_idx;
  unit.workspace_slot = static_cast<uint32_t>(slot);
  const uint64_t group_key = (tile % g.used) / g.k_tiles;
  auto [it, inserted] =
      group_of_tile.emplace(group_key, static_cast<int32_t>(schedule.reductions.size()));
  if (inserted) {
    ReductionGroup group;
    group.m = unit.m;
    group.n = unit.n;
    group.slots.assign(g.k_tiles, 0);
    // The AIV-assisted output mode pads partial rows to 32 elements.
    group.workspace_row_stride =
        plan.key.l0c2out == L0cToOut::kNdFixpipe1To2 ? CeilAlign(unit.n.size(), 32) : unit.n.size();
    schedule.reductions.push_back(group);
  }
  unit.reduction = it->second;
  schedule.reductions[it->second].slots[k_idx] = unit.workspace_slot;
}

// The AIC units of core `core`: its tile loop with the DP+SK preload swap;
// the tiles of the split round become K slices (MakeKSlice).
void AppendStreamKCoreUnits(const TilingPlan& plan, const StreamKGrid& g, uint64_t core,
                            std::map<uint64_t, int32_t>& group_of_tile, Schedule& schedule) {
  const bool dp_sk = !g.IsSplit(0);
  const uint64_t tail_sk_tiles = g.tail_mn * g.k_tiles;
  for (uint64_t tile = core; tile < g.tile_num; tile += g.used) {
    uint64_t tmp = tile;
    if (dp_sk && tile % g.used < tail_sk_tiles) {
      // Preload: the split tiles run one round early and the last round's
      // data-parallel tile one round late, so the AIV reduction overlaps
      // the cube's last round.
      if (CeilDiv(tile + 1, g.used) == g.last_round - 1) {
        tmp = tile + g.used;
      } else if (CeilDiv(tile + 1, g.used) == g.last_round) {
        tmp = tile - g.used;
      }
    }
    const bool sk = g.IsSplit(tmp);
    const uint64_t cur_k_tiles = sk ? g.k_tiles : 1;
    const uint64_t batch = tmp / (g.mn_tiles * g.k_tiles);
    const uint64_t mnk_idx = tmp % (g.mn_tiles * g.k_tiles);
    uint64_t k_idx = 0, mn_idx = 0;
    if (sk) {
      k_idx = (mnk_idx % g.used) % cur_k_tiles;
      mn_idx = (mnk_idx % g.used) / cur_k_tiles + g.dp_tiles;
    } else {
      mn_idx = mnk_idx / cur_k_tiles;
    }
    auto [m_idx, n_idx] = SerpentineTile(mn_idx, g.m_tiles, g.n_tiles, g.window_rows);
    WorkUnit unit;
    unit.core = static_cast<uint32_t>(core);
    unit.round = static_cast<uint32_t>((tile - core) / g.used);
    unit.tile_idx = static_cast<int64_t>(tmp);
    unit.batch = static_cast<uint32_t>(batch);
    const uint64_t m_off = m_idx * g.base_m, n_off = n_idx * g.base_n;
    const uint64_t rows = batch * g.m;  // the batch's first row of the stacked C
    unit.m = {rows + m_off, rows + std::min(g.m, m_off + g.base_m)};
    unit.n = {n_off, std::min(g.n, n_off + g.base_n)};
    if (sk) {
      MakeKSlice(plan, g, tmp, k_idx, unit, group_of_tile, schedule);
    } else {
      unit.k = {0, g.k};
    }
    unit.signals_aiv = tmp + g.used >= g.tile_num;
    schedule.units.push_back(unit);
  }
}

// The AIV epilogue: each split tile is reduced by 2 * k_tiles AIV cores, each
// taking a band of rows; the band height is rounded so a band is at least 32
// elements long (UB2GM_SRCGAP_UNIT).
void AppendStreamKReduceUnits(const StreamKGrid& g,
                              const std::map<uint64_t, int32_t>& group_of_tile,
                              Schedule& schedule) {
  const uint64_t ratio = 2;  // AIV per AIC (GetTaskRation)
  const uint64_t active_aiv = g.tail_mn * g.batch * g.k_tiles * ratio;
  for (uint64_t aiv = 0; aiv < std::min<uint64_t>(active_aiv, schedule.aiv_cores); ++aiv) {
    const uint64_t group_pos = aiv / (ratio * g.k_tiles);
    const uint64_t band = aiv % (ratio * g.k_tiles);
    const uint64_t mn_idx = (group_pos + g.dp_tiles) % g.mn_tiles;
    // BlockEpilogueStreamK: the group's batch, C offset by whole batches.
    const uint64_t batch = group_pos / g.mn_tiles;
    auto [m_idx, n_idx] = SerpentineTile(mn_idx, g.m_tiles, g.n_tiles, g.window_rows);
    auto it = group_of_tile.find(group_pos);
    if (it == group_of_tile.end()) continue;  // no AIC produced this tile (faulty plan)
    const ReductionGroup& group = schedule.reductions[it->second];
    const uint64_t cur_m = std::min(g.m, (m_idx + 1) * g.base_m) - m_idx * g.base_m;
    const uint64_t cur_n = group.n.size();
    const uint64_t row_stride = group.workspace_row_stride;
    const uint64_t band_base = [&] {
      const uint64_t rows = CeilDiv(cur_m, g.k_tiles * ratio);
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
    unit.batch = static_cast<uint32_t>(batch);
    const uint64_t row0 = batch * g.m + m_idx * g.base_m + band * band_base;
    unit.m = {row0, row0 + rows};
    unit.n = {n_idx * g.base_n, n_idx * g.base_n + cur_n};
    unit.k = {0, g.k};
    unit.reduction = it->second;
    schedule.units.push_back(unit);
  }
}

}  // namespace

// BlockSchedulerStreamKBuiltIn, the Stream-K kernel's tile loop with the
// DP+SK preload swap, and BlockEpilogueStreamK's split of the reduction over
// the AIV cores.
absl::StatusOr<Schedule> ExpandStreamK(const TilingPlan& plan, const MatmulProblem& problem,
                                       uint64_t batch) {
  ASSIGN_OR_RETURN(const StreamKGrid grid, MakeStreamKGrid(plan, problem, batch));
  const uint64_t block_num = plan.block_dim;
  const uint64_t cores = std::min(grid.tile_num, grid.used);

  Schedule schedule;
  schedule.aic_cores = static_cast<uint32_t>(block_num);
  schedule.aiv_cores = static_cast<uint32_t>(2 * block_num);
  if (plan.key.model == KernelModel::kStreamKSplitK && grid.sk_k > 1024) {
    // The SK_SPLIT_K kernel accumulates fp32 K in chunks of 1024.
    schedule.split_k_chunk = 1024;
  }
  // One reduction group per MN tile of the split round, in round order.
  std::map<uint64_t, int32_t> group_of_tile;
  for (uint64_t core = 0; core < block_num; ++core) {
    if (core >= cores) {
      schedule.idle_aic_cores.push_back(static_cast<uint32_t>(core));
      continue;
    }
    AppendStreamKCoreUnits(plan, grid, core, group_of_tile, schedule);
  }
  // The workspace holds one slot per used core.
  schedule.workspace_slots = static_cast<uint32_t>(grid.used);
  AppendStreamKReduceUnits(grid, group_of_tile, schedule);
  return schedule;
}

}  // namespace npu::tiling::schedule_internal
