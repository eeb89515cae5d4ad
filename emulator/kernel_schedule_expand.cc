#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "emulator/kernel_schedule.h"
#include "emulator/kernel_schedule_internal.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/status_macros.h"

namespace npu::emu {
namespace internal {

using tiling::CeilDiv;
using tiling::Range;

std::vector<Range> StreamKSlices(uint64_t k, uint64_t base_k, uint64_t splits) {
  const uint64_t steps = CeilDiv(k, base_k);
  const uint64_t per = steps / splits, extra = steps % splits;
  std::vector<Range> slices;
  uint64_t step = 0;
  for (uint64_t j = 0; j < splits; ++j) {
    const uint64_t count = per + (j < extra ? 1 : 0);
    slices.push_back({std::min(k, step * base_k), std::min(k, (step + count) * base_k)});
    step += count;
  }
  return slices;
}

TileGrid MakeGrid(const KernelSchedule& kernel, const tiling::MatmulProblem& problem) {
  TileGrid g;
  g.m = static_cast<uint64_t>(problem.m);
  g.n = static_cast<uint64_t>(problem.n);
  g.k = static_cast<uint64_t>(problem.k);
  g.l1_m = kernel.l1_m;
  g.l1_n = kernel.l1_n;
  g.m_tiles = CeilDiv(g.m, g.l1_m);
  g.n_tiles = CeilDiv(g.n, g.l1_n);
  return g;
}

StreamKSplit MakeStreamKSplit(const KernelSchedule& kernel, const TileGrid& g) {
  StreamKSplit s;
  s.tail_tiles = g.tiles() % kernel.block_dim;
  s.dp_tiles = g.tiles() - s.tail_tiles;
  s.splits = s.tail_tiles == 0 ? 1 : kernel.sk_k_splits;
  return s;
}

}  // namespace internal

namespace {

using internal::MakeGrid;
using internal::MakeStreamKSplit;
using internal::StreamKSlices;
using internal::StreamKSplit;
using internal::TileGrid;
using tiling::CeilAlign;
using tiling::CeilDiv;
using tiling::CoreKind;
using tiling::Range;
using tiling::Schedule;
using tiling::UnitOp;
using tiling::WorkUnit;

// ---------------------------------------------------------------------------
// Expansion. Every kind fills one list of units per core, in the core's loop
// order; Flatten() numbers the rounds and lays the lists out core by core.

using CoreUnits = std::vector<std::vector<WorkUnit>>;

// An AIC unit of tile `tile_idx`; Flatten() sets its core and round.
WorkUnit MmadUnit(int64_t tile_idx, Range m, Range n, Range k) {
  WorkUnit unit;
  unit.core_kind = CoreKind::kAic;
  unit.tile_idx = tile_idx;
  unit.op = UnitOp::kMmad;
  unit.m = m;
  unit.n = n;
  unit.k = k;
  return unit;
}

// The schedule's header fields for `kernel`, without units.
Schedule EmptySchedule(const KernelSchedule& kernel, tiling::KernelModel model) {
  Schedule schedule;
  schedule.model = model;
  schedule.full_load = tiling::FullLoad::kNone;
  schedule.aic_cores = kernel.block_dim;
  schedule.base_m = kernel.base_m;
  schedule.base_n = kernel.base_n;
  schedule.base_k = kernel.base_k;
  schedule.k_l1 = kernel.l1_k;
  const bool windowed =
      kernel.kind == KernelScheduleKind::kAswt || kernel.kind == KernelScheduleKind::kSwat;
  schedule.swat_window_rows = windowed ? kernel.aswt_window : tiling::kCannSwatWindowRows;
  // A resident A: a band of l1_m rows the whole K deep, reloaded when a
  // core's tile moves to other rows.
  if (kernel.full_load_a) schedule.l1_residency = tiling::L1Residency::kABand;
  return schedule;
}

// Appends the per-core lists to `schedule` (AIC units first), numbering
// each core's units 0, 1, ... as its loop runs them.
void Flatten(CoreUnits& per_core, Schedule& schedule) {
  for (uint32_t core = 0; core < per_core.size(); ++core) {
    for (uint32_t round = 0; round < per_core[core].size(); ++round) {
      WorkUnit& unit = per_core[core][round];
      unit.core = core;
      unit.round = round;
      schedule.units.push_back(unit);
    }
    schedule.rounds = std::max(schedule.rounds, static_cast<uint32_t>(per_core[core].size()));
  }
}

// Appends the L1 tiles of the region m x n (cut at its edge) to `out` in
// `order`: along N first (row-major) or down M first (column-major).
void AppendRegionTiles(const KernelSchedule& kernel, const Range& m, const Range& n, uint64_t k,
                       TileOrder order, int64_t tile_idx, std::vector<WorkUnit>& out) {
  const uint64_t m_tiles = CeilDiv(m.size(), kernel.l1_m);
  const uint64_t n_tiles = CeilDiv(n.size(), kernel.l1_n);
  const bool row_major = order == TileOrder::kRowMajor;
  const uint64_t outer = row_major ? m_tiles : n_tiles;
  const uint64_t inner = row_major ? n_tiles : m_tiles;
  for (uint64_t o = 0; o < outer; ++o) {
    for (uint64_t i = 0; i < inner; ++i) {
      const uint64_t mi = row_major ? o : i, ni = row_major ? i : o;
      const uint64_t m0 = m.begin + mi * kernel.l1_m, n0 = n.begin + ni * kernel.l1_n;
      out.push_back(MmadUnit(tile_idx, {m0, std::min(m.end, m0 + kernel.l1_m)},
                             {n0, std::min(n.end, n0 + kernel.l1_n)}, {0, k}));
    }
  }
}

// kSingleCore: the Matmul API's Iterate() over all of C on one core; the
// tile index is the iteration.
Schedule ExpandSingleCore(const KernelSchedule& kernel, const TileGrid& g) {
  CoreUnits per_core(1);
  AppendRegionTiles(kernel, {0, g.m}, {0, g.n}, g.k, kernel.inner_order, 0, per_core[0]);
  for (size_t i = 0; i < per_core[0].size(); ++i) {
    per_core[0][i].tile_idx = static_cast<int64_t>(i);
  }
  Schedule schedule = EmptySchedule(kernel, tiling::KernelModel::kBasic);
  Flatten(per_core, schedule);
  return schedule;
}

// kStaticGrid: the Matmul API's multi-core split (blocks of single_core_m x
// single_core_n numbered down M first, block b on core b % block_dim). With
// an L2 split, C's M range is cut into l2_split_rounds consecutive parts of
// equal height (rounded up to l1_m) and each part is gridded the same way in
// turn: with 8192 rows, 2 parts and 1024-row blocks on 32 cores, core c
// runs block (m c % 4 + 4 r, n c / 4) in part r, as the A1 case 6 kernel
// does. The tile index is the block's global number.
Schedule ExpandStaticGrid(const KernelSchedule& kernel, const TileGrid& g) {
  CoreUnits per_core(kernel.block_dim);
  const uint64_t parts = std::max<uint32_t>(1, kernel.l2_split_rounds);
  const uint64_t part_rows = CeilAlign(CeilDiv(g.m, parts), kernel.l1_m);
  const uint64_t n_blocks = CeilDiv(g.n, kernel.single_core_n);
  uint64_t block_base = 0;
  for (uint64_t part = 0; part < parts && part * part_rows < g.m; ++part) {
    const Range rows{part * part_rows, std::min(g.m, (part + 1) * part_rows)};
    const uint64_t m_blocks = CeilDiv(rows.size(), kernel.single_core_m);
    for (uint64_t b = 0; b < m_blocks * n_blocks; ++b) {
      const uint64_t m0 = rows.begin + (b % m_blocks) * kernel.single_core_m;
      const uint64_t n0 = (b / m_blocks) * kernel.single_core_n;
      const Range m{m0, std::min(rows.end, m0 + kernel.single_core_m)};
      const Range n{n0, std::min(g.n, n0 + kernel.single_core_n)};
      AppendRegionTiles(kernel, m, n, g.k, kernel.inner_order, static_cast<int64_t>(block_base + b),
                        per_core[b % kernel.block_dim]);
    }
    block_base += m_blocks * n_blocks;
  }
  Schedule schedule = EmptySchedule(kernel, tiling::KernelModel::kBasic);
  Flatten(per_core, schedule);
  return schedule;
}

// Deals the tiles 0, 1, ... of a loop `for (i = block; i < tiles; i += block_dim)`
// to the blocks; `coord(i)` gives tile i's (m index, n index). Block b runs
// on core b % cores, after the core's earlier blocks (`cores` below
// block_dim only for round_robin_tiles launching more blocks than cores).
template <typename Coord>
Schedule ExpandStrided(const KernelSchedule& kernel, const TileGrid& g, uint32_t cores,
                       Coord coord) {
  const uint32_t block_dim = kernel.block_dim;
  CoreUnits per_core(std::min(block_dim, cores));
  for (uint64_t block = 0; block < block_dim; ++block) {
    for (uint64_t i = block; i < g.tiles(); i += block_dim) {
      const auto [m_idx, n_idx] = coord(i);
      per_core[block % per_core.size()].push_back(
          MmadUnit(static_cast<int64_t>(i), g.MRange(m_idx), g.NRange(n_idx), {0, g.k}));
    }
  }
  Schedule schedule = EmptySchedule(kernel, tiling::KernelModel::kBasic);
  Flatten(per_core, schedule);
  schedule.aic_cores = static_cast<uint32_t>(per_core.size());
  return schedule;
}

// The (m index, n index) of tile `t` numbered `numbering` on a grid of
// m_tiles x n_tiles.
std::pair<uint64_t, uint64_t> NumberedTile(TileNumbering numbering, uint64_t t, uint64_t m_tiles,
                                           uint64_t n_tiles) {
  if (numbering == TileNumbering::kColMajor) return {t % m_tiles, t / m_tiles};
  return {t / n_tiles, t % n_tiles};
}

// kGroupedRoundRobin: every group's blocks numbered in `tile_numbering`,
// the groups one after another, block j of the whole list on core
// j % block_dim; inside a block the L1 tiles in `inner_order`. Units carry
// their group as `batch` (B's group when b_per_group).
Schedule ExpandGrouped(const KernelSchedule& kernel, const TileGrid& g) {
  CoreUnits per_core(kernel.block_dim);
  uint64_t row0 = 0, block = 0;
  for (size_t group = 0; group < kernel.group_m.size(); ++group) {
    const uint64_t rows = kernel.group_m[group];
    const uint64_t m_blocks = CeilDiv(rows, kernel.single_core_m);
    const uint64_t n_blocks = CeilDiv(g.n, kernel.single_core_n);
    for (uint64_t j = 0; j < m_blocks * n_blocks; ++j, ++block) {
      const auto [mb, nb] = NumberedTile(kernel.tile_numbering, j, m_blocks, n_blocks);
      const uint64_t m0 = row0 + mb * kernel.single_core_m;
      const uint64_t n0 = nb * kernel.single_core_n;
      std::vector<WorkUnit>& units = per_core[block % kernel.block_dim];
      const size_t first = units.size();
      AppendRegionTiles(kernel, {m0, std::min(row0 + rows, m0 + kernel.single_core_m)},
                        {n0, std::min(g.n, n0 + kernel.single_core_n)}, g.k, kernel.inner_order,
                        static_cast<int64_t>(block), units);
      for (size_t u = first; u < units.size(); ++u) units[u].batch = static_cast<uint32_t>(group);
    }
    row0 += rows;
  }
  Schedule schedule = EmptySchedule(kernel, tiling::KernelModel::kBasic);
  Flatten(per_core, schedule);
  return schedule;
}

// catlass GemmIdentityBlockSwizzle<offset, direction>::GetBlockCoord: the
// tile grid is cut into bands of `offset` tile rows (direction 0) or
// columns (direction 1), the last band taking what is left. Inside a band
// the index runs across the band first (down its rows for direction 0,
// along its columns for direction 1), then along it; every odd band is
// walked backwards along its length, so consecutive tiles stay adjacent.
std::pair<uint64_t, uint64_t> IdentitySwizzleCoord(uint64_t idx, uint64_t m_tiles, uint64_t n_tiles,
                                                   uint64_t offset, uint32_t direction) {
  // Direction 1 is direction 0 on the transposed grid.
  const uint64_t across = direction == 0 ? m_tiles : n_tiles;
  const uint64_t along = direction == 0 ? n_tiles : m_tiles;
  const uint64_t bands = CeilDiv(across, offset);
  const uint64_t band = idx / (offset * along);
  const uint64_t in_band = idx % (offset * along);
  const uint64_t width = band == bands - 1 ? across - offset * band : offset;
  const uint64_t a = band * offset + in_band % width;
  uint64_t l = in_band / width;
  if (band % 2 == 1) l = along - 1 - l;
  return direction == 0 ? std::make_pair(a, l) : std::make_pair(l, a);
}

// catlass BlockSchedulerAswt::UpdateTailTile (Ascend 950, example 46): when
// the last round holds at most half the cores' worth of tiles, each of its
// tiles is re-split so the idle cores share it. The split takes up to
// block_dim / tail tiles pieces: start from that many per axis (capped by
// the size of C's last tile row / column, in elements) and lower the larger
// count until their product fits. Returns (m count, n count).
std::pair<uint64_t, uint64_t> AswtTailSplit(const TileGrid& g, uint64_t block_dim) {
  const uint64_t tail_tiles = (g.tiles() - 1) % block_dim + 1;
  if (tail_tiles > block_dim / 2) return {1, 1};
  const uint64_t pieces = block_dim / tail_tiles;
  const uint64_t tail_m = g.m - (g.m_tiles - 1) * g.l1_m;
  const uint64_t tail_n = g.n - (g.n_tiles - 1) * g.l1_n;
  uint64_t m_cnt = std::min(tail_m, pieces), n_cnt = std::min(tail_n, pieces);
  while (m_cnt * n_cnt > pieces) {
    if (m_cnt >= n_cnt) {
      --m_cnt;
    } else {
      --n_cnt;
    }
  }
  return {m_cnt, n_cnt};
}

// kAswt: CANN's ASWT expansion (the same serpentine window walk and
// last-round re-split as catlass's scheduler) driven by a plan that carries
// the kernel's tiles, window and tail split counts.
absl::StatusOr<Schedule> ExpandAswt(const KernelSchedule& kernel,
                                    const tiling::MatmulProblem& problem,
                                    const tiling::ChipSpec& chip, const TileGrid& g) {
  tiling::TilingPlan plan;
  plan.strategy = "kernel_schedule.aswt";
  plan.key.model = tiling::KernelModel::kBasic;
  plan.block_dim = kernel.block_dim;
  plan.kernel_type = tiling::KernelType::kAicOnly;
  plan.block.base_m = kernel.base_m;
  plan.block.base_n = kernel.base_n;
  plan.block.base_k = kernel.base_k;
  plan.block.m_l1 = kernel.l1_m;
  plan.block.n_l1 = kernel.l1_n;
  plan.block.k_l1 = kernel.l1_k;
  if (kernel.kind == KernelScheduleKind::kSwat) {
    // The given split, when the last round is short enough for it.
    const uint64_t tail = g.tiles() % kernel.block_dim;
    const uint64_t pieces = uint64_t{kernel.tail_split_m} * kernel.tail_split_n;
    const bool split = tail != 0 && tail * pieces <= kernel.block_dim;
    plan.block.m_tail_cnt = split ? kernel.tail_split_m : 1;
    plan.block.n_tail_cnt = split ? kernel.tail_split_n : 1;
  } else {
    std::tie(plan.block.m_tail_cnt, plan.block.n_tail_cnt) = AswtTailSplit(g, kernel.block_dim);
  }
  plan.swat_window_rows = kernel.aswt_window;
  tiling::MatmulProblem walked = problem;
  // The loops walk C's tiles; the operand types do not enter them.
  walked.op = tiling::MatmulOp::kMatMulV3;
  ASSIGN_OR_RETURN(Schedule expanded, tiling::ExpandTileLoops(plan, walked, chip));
  Schedule schedule = EmptySchedule(kernel, tiling::KernelModel::kBasic);
  schedule.units = std::move(expanded.units);
  schedule.rounds = expanded.rounds;
  return schedule;
}

}  // namespace

namespace internal {

// kStreamKDp: the Stream-K loop of cann-samples' streamk matmul (the same
// index formulas as CANN's BlockSchedulerStreamKBuiltIn, with its tiles
// numbered row-major instead of SWAT windows). Scheduler tiles are the
// data-parallel MN tiles, then the tail MN tiles' K slices; core c runs
// tiles c, c + used, ... where used = min(tiles, block_dim). With
// data-parallel rounds, the slices of the last round swap places with the
// round before (the DP+SK preload), so the AIV reduction overlaps the last
// whole tiles. Slices write fp32 partials to workspace slot (index within
// the round); the AIV cores 2 * block_dim sum them by bands of rows, the
// layout schedule_stream_k.cc gives CANN's plans.
absl::StatusOr<tiling::Schedule> ExpandStreamKDp(const KernelSchedule& kernel,
                                                 const tiling::MatmulProblem& problem) {
  const TileGrid g = MakeGrid(kernel, problem);
  const StreamKSplit split = MakeStreamKSplit(kernel, g);
  const uint64_t sk_tiles = split.tail_tiles * split.splits;
  const uint64_t tile_num = split.dp_tiles + sk_tiles;
  const uint64_t used = std::min<uint64_t>(tile_num, kernel.block_dim);
  const uint64_t last_round = CeilDiv(tile_num, used);
  const std::vector<Range> slices = StreamKSlices(g.k, kernel.base_k, split.splits);

  Schedule schedule = EmptySchedule(kernel, tiling::KernelModel::kStreamK);
  schedule.aiv_cores = 2 * kernel.block_dim;
  schedule.workspace_slots = kernel.block_dim;
  for (uint64_t t = 0; t < split.tail_tiles; ++t) {
    const uint64_t mn = split.dp_tiles + t;
    tiling::ReductionGroup group;
    group.m = g.MRange(mn / g.n_tiles);
    group.n = g.NRange(mn % g.n_tiles);
    for (uint64_t j = 0; j < split.splits; ++j) {
      group.slots.push_back(static_cast<uint32_t>(t * split.splits + j));
    }
    group.workspace_row_stride = group.n.size();  // FIXPIPE writes partial rows packed
    schedule.reductions.push_back(group);
  }

  CoreUnits per_core(kernel.block_dim);
  for (uint64_t core = 0; core < kernel.block_dim; ++core) {
    if (core >= used) {
      schedule.idle_aic_cores.push_back(static_cast<uint32_t>(core));
      continue;
    }
    for (uint64_t tile = core; tile < tile_num; tile += used) {
      uint64_t tmp = tile;
      const uint64_t round = CeilDiv(tile + 1, used);
      if (last_round > 1 && tile % used < sk_tiles) {
        if (round == last_round - 1) tmp = tile + used;
        if (round == last_round) tmp = tile - used;
      }
      const bool sk = tmp >= split.dp_tiles;
      const uint64_t local = tmp - (sk ? split.dp_tiles : 0);
      const uint64_t mn = sk ? split.dp_tiles + local / split.splits : tmp;
      WorkUnit unit = MmadUnit(static_cast<int64_t>(tmp), g.MRange(mn / g.n_tiles),
                               g.NRange(mn % g.n_tiles), {0, g.k});
      if (sk) {
        const uint64_t k_idx = local % split.splits;
        unit.k = slices[k_idx];
        unit.k_slice = static_cast<uint32_t>(k_idx);
        unit.writes_partial = true;
        unit.workspace_slot = static_cast<uint32_t>(local);
        unit.reduction = static_cast<int32_t>(local / split.splits);
      }
      unit.signals_aiv = tmp + used >= tile_num;
      per_core[core].push_back(unit);
    }
  }
  Flatten(per_core, schedule);

  // 2 * splits AIV cores per tail tile, each reducing one band of its rows;
  // a band is at least 32 fp32 elements long (UB2GM_SRCGAP_UNIT).
  const uint64_t aiv_per_tile = 2 * split.splits;
  for (uint64_t aiv = 0; aiv < split.tail_tiles * aiv_per_tile; ++aiv) {
    const uint64_t t = aiv / aiv_per_tile, band = aiv % aiv_per_tile;
    const tiling::ReductionGroup& group = schedule.reductions[t];
    const uint64_t rows = group.m.size();
    const uint64_t band_rows =
        CeilAlign(CeilDiv(rows, aiv_per_tile), CeilDiv(32, group.workspace_row_stride));
    if (band * band_rows >= rows) continue;
    WorkUnit unit;
    unit.core_kind = CoreKind::kAiv;
    unit.core = static_cast<uint32_t>(aiv);
    unit.round = 0;
    unit.tile_idx = static_cast<int64_t>(t);
    unit.op = UnitOp::kReduce;
    const uint64_t row0 = group.m.begin + band * band_rows;
    unit.m = {row0, std::min(group.m.end, row0 + band_rows)};
    unit.n = group.n;
    unit.k = {0, g.k};
    unit.reduction = static_cast<int32_t>(t);
    schedule.units.push_back(unit);
  }
  return schedule;
}

}  // namespace internal

using internal::ExpandStreamKDp;

absl::StatusOr<Schedule> ExpandKernelSchedule(const KernelSchedule& kernel,
                                              const tiling::MatmulProblem& problem,
                                              const tiling::ChipSpec& chip) {
  RETURN_IF_ERROR(ValidateKernelSchedule(kernel, problem, chip));
  const TileGrid g = MakeGrid(kernel, problem);
  switch (kernel.kind) {
    case KernelScheduleKind::kSingleCore:
      return ExpandSingleCore(kernel, g);
    case KernelScheduleKind::kStaticGrid:
      return ExpandStaticGrid(kernel, g);
    case KernelScheduleKind::kRoundRobinTiles:
      return ExpandStrided(kernel, g, chip.aic_num, [&](uint64_t i) {
        return NumberedTile(kernel.tile_numbering, i, g.m_tiles, g.n_tiles);
      });
    case KernelScheduleKind::kIdentitySwizzle:
      return ExpandStrided(kernel, g, kernel.block_dim, [&](uint64_t i) {
        return IdentitySwizzleCoord(i, g.m_tiles, g.n_tiles, kernel.swizzle_offset,
                                    kernel.swizzle_direction);
      });
    case KernelScheduleKind::kAswt:
    case KernelScheduleKind::kSwat:
      return ExpandAswt(kernel, problem, chip, g);
    case KernelScheduleKind::kGroupedRoundRobin:
      return ExpandGrouped(kernel, g);
    case KernelScheduleKind::kStreamKDp:
      return ExpandStreamKDp(kernel, problem);
  }
  return absl::InternalError("ExpandKernelSchedule: unknown kind");
}

}  // namespace npu::emu
