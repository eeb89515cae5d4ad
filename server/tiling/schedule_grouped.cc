// GroupedMatmul's tile loops (the `expand` of its four rows in
// kernel_table.cc): which cube core computes which block of which group's
// C, replayed core by core as the arch35 kernels' block schedulers walk
// them (mirror-cann/ops-transformer gmm/grouped_matmul/op_kernel/arch35/ and
// gmm/common/cgmct/). Every kernel walks the groups in order, deals each
// group's base blocks to the cores round-robin and carries the group's last
// partial round into the next group: the next group's first block goes to
// the core after the one that took the previous group's last block. Inside
// a group the blocks follow the SWAT window of four rows of blocks, N
// serpentine between windows (the weight-quant kernels: N blocks first).
// Each unit is one block over the group's whole K.
//
// - GMMNoQuantTilingData, the basic kernel (KernelGroupedMatmul with
//   BlockSchedulerGroupedMatmulAswt): baseM x baseN blocks; with one group
//   the last round re-split into mTailCnt x nTailCnt pieces.
// - GMMQuantTilingData, the fixpipe and vector dequant kernels (GmmASWKernel,
//   GQmmMixRegbaseKernel with QuantASWBlockSch): baseM x baseN blocks over
//   usedCoreNum cores; the last group's last round re-split when it leaves
//   at least half the cores idle (CalcTailTile).
// - GMMQuantTilingData with KERNEL_TYPE 2, the per-group / per-block kernel
//   (QuantMmGroupedPerTile), and GMMQuantBasicApiTilingData, the MX kernel
//   (KernelQGmmMx), both with BlockSchedulerGmmAswtWithTailSplit; the MX
//   kernel balances baseM to each group's m and re-splits the last group's
//   last round.
// - GMMWeightQuantTilingData: N_FIRST_TAIL_RESPLIT
//   (GMMWeightQuantResplitController) cuts each group's m into mL1 slabs and
//   each slab's N into the struct's main / first tail / second tail blocks;
//   N_FIRST_BASIC_BLOCK (GMMWeightQuantBasicController) walks baseM x baseN
//   blocks row by row, baseM fitted to m and baseN halved for a narrow N.
//
// The groups and their sizes come from the problem and its token histogram
// (grouped/gmm_groups.h). A unit's m names rows of the stacked C (group g's
// rows start at GmmGroup::c_row), its n and k the group's own columns and
// K, its `batch` the group.
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/tiling/grouped/gmm_groups.h"
#include "server/tiling/int_math.h"
#include "server/tiling/schedule_internal.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling::schedule_internal {
namespace {

using grouped::GmmGroup;
using grouped::GmmGroups;

// The SWAT window of the grouped schedulers (WINDOW_LEN).
constexpr uint64_t kWindow = 4;
// The tail re-split's smallest piece along a contiguous axis (the ND2NZ
// cache line, INNER_AXIS_MIN_SPLIT_VAL) and along the other (a cube block).
constexpr uint64_t kInnerAxisMinSplit = 128;
constexpr uint64_t kCubeBlock = 16;
// GroupedMatmul's quant key: KERNEL_TYPE in bits 7:4.
constexpr uint64_t kPerGroupPerBlockKernel = 2;
// GroupedMatmul's weight-quant key: ALGORITHM_SUB_CATEGORY in bits 28:25.
constexpr uint64_t kWqTailResplit = 2;
constexpr uint64_t kWqBasicBlock = 3;

template <typename Field>
absl::StatusOr<uint64_t> Word(const TilingPlan& plan, Field field, std::string_view name) {
  std::optional<uint64_t> value = Get(plan.data, field);
  if (!value) {
    return absl::InvalidArgumentError(
        absl::StrCat("tiling field ", std::string(name), " is missing"));
  }
  return *value;
}

template <typename Field>
absl::StatusOr<uint64_t> PositiveWord(const TilingPlan& plan, Field field, std::string_view name) {
  ASSIGN_OR_RETURN(const uint64_t value, Word(plan, field, name));
  RETURN_IF_ERROR(RequirePositive(name, value));
  return value;
}

// The SWAT walk of one group's block `index` (mCnt x nCnt blocks, windows of
// up to four block rows, the last window taking the rest, odd windows
// walking N backwards): the block's row and column.
std::pair<uint64_t, uint64_t> WindowTile(uint64_t index, uint64_t m_cnt, uint64_t n_cnt) {
  const uint64_t main_window = std::min(kWindow, m_cnt);
  const uint64_t main_row = m_cnt / main_window - 1;
  const uint64_t tail_window = m_cnt - main_window * main_row;
  uint64_t row = index / n_cnt / main_window;
  uint64_t m_idx = 0, n_idx = 0;
  if (row < main_row) {
    m_idx = row * main_window + index % main_window;
    n_idx = (index / main_window) % n_cnt;
  } else {
    row = main_row;
    const uint64_t tail_index = index - main_row * main_window * n_cnt;
    m_idx = main_row * main_window + tail_index % tail_window;
    n_idx = (tail_index / tail_window) % n_cnt;
  }
  if (row % 2 != 0) n_idx = n_cnt - 1 - n_idx;
  return {m_idx, n_idx};
}

// Units of one core in its walking order.
class CoreUnits {
 public:
  CoreUnits(const GmmGroups& groups, uint32_t core, Schedule& schedule)
      : groups_(groups), core_(core), schedule_(schedule) {}

  // Group `g`'s block at rows [m, m + rows) and columns [n, n + cols) of
  // its C, over its whole K.
  void Add(size_t g, uint64_t m, uint64_t rows, uint64_t n, uint64_t cols) {
    const GmmGroup& group = groups_.groups[g];
    WorkUnit unit;
    unit.core = core_;
    unit.round = round_++;
    unit.tile_idx = static_cast<int64_t>(schedule_.units.size());
    unit.m = {group.c_row + m, group.c_row + m + rows};
    unit.n = {n, n + cols};
    unit.k = {0, group.k};
    unit.batch = static_cast<uint32_t>(g);
    schedule_.units.push_back(unit);
  }

 private:
  const GmmGroups& groups_;
  uint32_t core_;
  uint32_t round_ = 0;
  Schedule& schedule_;
};

// --- GMMNoQuantTilingData: KernelGroupedMatmul's group loop ---------------

absl::Status ExpandNoQuant(const TilingPlan& plan, const GmmGroups& groups, uint64_t nz_c0,
                           Schedule& s) {
  using F = GmmNoQuantField;
  ASSIGN_OR_RETURN(const uint64_t base_m,
                   PositiveWord(plan, GmmNoQuantCube(TCubeField::kBaseM), "mmTilingData.baseM"));
  ASSIGN_OR_RETURN(const uint64_t base_n,
                   PositiveWord(plan, GmmNoQuantCube(TCubeField::kBaseN), "mmTilingData.baseN"));
  ASSIGN_OR_RETURN(const uint64_t tiling_m, Word(plan, GmmNoQuantCube(TCubeField::kM),
                                                 "mmTilingData.M"));
  ASSIGN_OR_RETURN(const uint64_t group_num,
                   Word(plan, F::kGroupNum, "gmmNoQuantParam.groupNum"));
  ASSIGN_OR_RETURN(uint64_t m_tail_cnt, Word(plan, F::kMTailCnt, "gmmNoQuantParam.mTailCnt"));
  ASSIGN_OR_RETURN(uint64_t n_tail_cnt, Word(plan, F::kNTailCnt, "gmmNoQuantParam.nTailCnt"));
  m_tail_cnt = std::max<uint64_t>(1, m_tail_cnt);
  n_tail_cnt = std::max<uint64_t>(1, n_tail_cnt);
  const uint64_t block_num = plan.block_dim;
  // The pieces of one tail block go to as many cores (CANN's counts keep
  // them within the cores).
  if (m_tail_cnt > block_num || n_tail_cnt > block_num || m_tail_cnt * n_tail_cnt > block_num) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tiling fields gmmNoQuantParam.mTailCnt x nTailCnt = ", m_tail_cnt, " x ", n_tail_cnt,
        " exceed the ", block_num, " cores the tail's pieces go to"));
  }
  const bool one_split_m = groups.group_type == kGroupTypeSplitM && group_num == 1;
  for (uint32_t core = 0; core < block_num; ++core) {
    CoreUnits out(groups, core, s);
    uint64_t count = 0;
    for (size_t g = 0; g < groups.groups.size(); ++g) {
      const GmmGroup& group = groups.groups[g];
      // One split-M group re-splits its tail only when it covers all of M.
      const bool tail_split = !one_split_m || group.m == tiling_m;
      if (!group.computed()) continue;
      const uint64_t m_cnt = CeilDiv(group.m, base_m), n_cnt = CeilDiv(group.n, base_n);
      const uint64_t tiles = m_cnt * n_cnt;
      const uint64_t per_core = CeilDiv(tiles, block_num);
      uint64_t tail_cnt = 1;
      uint64_t total = tiles;
      if ((m_tail_cnt > 1 || n_tail_cnt > 1) && tail_split) {
        tail_cnt = m_tail_cnt * n_tail_cnt;
        total += (tail_cnt - 1) * (total % block_num);
      }
      const uint64_t tail_m = group.m % base_m == 0 ? base_m : group.m % base_m;
      const uint64_t tail_n = group.n % base_n == 0 ? base_n : group.n % base_n;
      uint64_t m_split_cnt = m_tail_cnt;  // the scheduler re-derives it per tail block
      const uint64_t cur_count = count + total;
      for (uint64_t block = core >= count ? core : core + block_num; block < cur_count;
           block += block_num) {
        uint64_t index = block - count;
        if (index / block_num == per_core - 1 && tail_cnt > 1) {
          index = (per_core - 1) * block_num + core / tail_cnt;
        }
        const auto [m_idx, n_idx] = WindowTile(index, m_cnt, n_cnt);
        uint64_t rows = m_idx == m_cnt - 1 ? tail_m : base_m;
        uint64_t cols = n_idx == n_cnt - 1 ? tail_n : base_n;
        uint64_t m_off = 0, n_off = 0;
        // GetBlockShape decides the tail round by the block's place in the
        // whole walk (count included), as the kernel does.
        if (block / block_num == per_core - 1 && tail_cnt > 1) {
          const uint64_t split_m = CeilDiv(rows, m_split_cnt);
          // An NZ weight's pieces stay whole fractal columns.
          const uint64_t split_n = CeilAlign(CeilDiv(cols, n_tail_cnt), nz_c0);
          m_split_cnt = CeilDiv(rows, split_m);
          m_off = ((core % tail_cnt) % m_split_cnt) * split_m;
          n_off = ((core % tail_cnt) / m_split_cnt) * split_n;
          if (m_off >= rows || n_off >= cols) continue;
          rows = std::min(rows - m_off, split_m);
          cols = std::min(cols - n_off, split_n);
        }
        out.Add(g, m_idx * base_m + m_off, rows, n_idx * base_n + n_off, cols);
      }
      count = cur_count % block_num;
    }
  }
  return absl::OkStatus();
}

// --- GMMQuantTilingData, KERNEL_TYPE 0 / 1: QuantASWBlockSch ---------------

absl::Status ExpandQuantAsw(const TilingPlan& plan, const GmmGroups& groups, bool trans_a,
                            bool trans_b, bool weight_nz, Schedule& s) {
  ASSIGN_OR_RETURN(const uint64_t base_m,
                   PositiveWord(plan, GmmQuantCube(TCubeField::kBaseM), "mmTilingData.baseM"));
  ASSIGN_OR_RETURN(const uint64_t base_n,
                   PositiveWord(plan, GmmQuantCube(TCubeField::kBaseN), "mmTilingData.baseN"));
  ASSIGN_OR_RETURN(const uint64_t used, PositiveWord(plan, GmmQuantCube(TCubeField::kUsedCoreNum),
                                                     "mmTilingData.usedCoreNum"));
  if (used > plan.block_dim) {
    return absl::InvalidArgumentError(absl::StrCat("tiling field mmTilingData.usedCoreNum=", used,
                                                   " exceeds the plan's block_dim=",
                                                   plan.block_dim));
  }
  const size_t group_num = groups.groups.size();
  for (uint32_t core = 0; core < used; ++core) {
    CoreUnits out(groups, core, s);
    uint64_t end = used - 1;
    for (size_t g = 0; g < group_num; ++g) {
      const GmmGroup& group = groups.groups[g];
      if (!group.computed()) continue;
      // UpdateGroupParams: the group's blocks from the core after the
      // previous group's last one.
      const uint64_t m_cnt = CeilDiv(group.m, base_m), n_cnt = CeilDiv(group.n, base_n);
      const uint64_t total = m_cnt * n_cnt;
      const uint64_t m_base_tail = group.m - (m_cnt - 1) * base_m;
      const uint64_t n_base_tail = group.n - (n_cnt - 1) * base_n;
      uint64_t round = CeilDiv(total, used);
      const uint64_t start = end == used - 1 ? 0 : end + 1;
      end = (total + start - 1) % used;
      if ((start > end && core > end && core < start) ||
          (start <= end && (core > end || core < start))) {
        round -= 1;
      }
      uint64_t m_tail_tile = 1, n_tail_tile = 1;
      const bool last_group = g + 1 == group_num;
      if (last_group && end + 1 <= used / 2) {
        // CalcTailTile, then UpdateTailTile.
        const uint64_t remain = used / (end + 1);
        if (remain > 1) {
          const uint64_t m_min = trans_a ? kInnerAxisMinSplit : kCubeBlock;
          const uint64_t n_min = trans_b ? kCubeBlock : kInnerAxisMinSplit;
          uint64_t m_tile = std::min(CeilDiv(m_base_tail, m_min), remain);
          uint64_t n_tile = std::min(CeilDiv(n_base_tail, n_min), remain);
          while (m_tile * n_tile > remain) (m_tile >= n_tile ? m_tile : n_tile) -= 1;
          m_tail_tile = m_tile;
          n_tail_tile = n_tile;
        }
        const uint64_t new_end = m_tail_tile * n_tail_tile * (end + 1) - 1;
        if (core > end && core <= new_end) round += 1;
        end = new_end;
      }
      for (uint64_t r = 0; r < round; ++r) {
        const bool last_round = last_group && r == round - 1 && core <= end;
        // UpdateBasicIndex, in the kernel's unsigned arithmetic.
        const uint64_t new_block = last_round ? core / (m_tail_tile * n_tail_tile) : core;
        uint64_t index = new_block + r * used;
        if (core < start) {
          index += used - start;
        } else {
          index -= start;
        }
        const auto [m_idx, n_idx] = WindowTile(index, m_cnt, n_cnt);
        // UpdateBlockParams.
        uint64_t rows = m_idx != m_cnt - 1 ? base_m : m_base_tail;
        uint64_t cols = n_idx != n_cnt - 1 ? base_n : n_base_tail;
        uint64_t m_off = 0, n_off = 0;
        if (last_round && (m_tail_tile > 1 || n_tail_tile > 1) && r == round - 1) {
          uint64_t split_m = CeilDiv(rows, m_tail_tile);
          uint64_t split_n = CeilDiv(cols, n_tail_tile);
          if (trans_a) split_m = CeilAlign(split_m, kInnerAxisMinSplit);
          if (!trans_b) {
            split_n = CeilAlign(split_n, kInnerAxisMinSplit);
          } else if (weight_nz) {
            split_n = CeilAlign(split_n, kCubeBlock);
          }
          const uint64_t tiles = m_tail_tile * n_tail_tile;
          const uint64_t m_split = (core % tiles) % m_tail_tile;
          const uint64_t n_split = (core % tiles) / m_tail_tile;
          m_off = m_split * split_m;
          n_off = n_split * split_n;
          if (m_off >= rows || n_off >= cols) continue;
          rows = m_off + split_m > rows ? rows - split_m * m_split : split_m;
          cols = n_off + split_n > cols ? cols - split_n * n_split : split_n;
        }
        out.Add(g, m_idx * base_m + m_off, rows, n_idx * base_n + n_off, cols);
      }
    }
  }
  return absl::OkStatus();
}

// --- BlockSchedulerGmmAswtWithTailSplit (MX and per-group / per-block) -----

struct TailSplitWalk {
  uint64_t base_m = 0, base_n = 0;
  bool trans_a = false, trans_b = false;
  uint64_t n_tail_align = 1;
  bool balance_m = false;  // the MX kernel's BaseMBalance
  bool tail_split = false;  // the MX kernel's last-group re-split
  bool skip_on_n = false;   // the per-tile kernel also skips groups with n 0
};

absl::Status ExpandTailSplit(const TailSplitWalk& w, const GmmGroups& groups, uint64_t block_num,
                             Schedule& s) {
  const size_t group_num = groups.groups.size();
  for (uint32_t core = 0; core < block_num; ++core) {
    CoreUnits out(groups, core, s);
    // The scheduler's state, kept across groups.
    uint64_t m = 0, n = 0, base_m = w.base_m;
    uint64_t m_cnt = 0, n_cnt = 0, total = 0, m_base_tail = 0, n_base_tail = 0;
    uint64_t end = block_num - 1;
    for (size_t g = 0; g < group_num; ++g) {
      const GmmGroup& group = groups.groups[g];
      if (group.m == 0 || group.k == 0 || (w.skip_on_n && group.n == 0)) continue;
      if (w.balance_m && !w.trans_a) {
        base_m = CeilAlign(CeilDiv(group.m, CeilDiv(group.m, w.base_m)), kCubeBlock);
      }
      // UpdateNextProblem (the block counts follow a change of m or n).
      if (m != group.m || n != group.n) {
        m = group.m;
        n = group.n;
        m_cnt = CeilDiv(m, base_m);
        n_cnt = CeilDiv(n, w.base_n);
        m_base_tail = m - (m_cnt - 1) * base_m;
        n_base_tail = n - (n_cnt - 1) * w.base_n;
        total = m_cnt * n_cnt;
      }
      uint64_t round = CeilDiv(total, block_num);
      const uint64_t start = end == block_num - 1 ? 0 : end + 1;
      end = (total + start - 1) % block_num;
      if ((start > end && core > end && core < start) ||
          (start <= end && (core > end || core < start))) {
        round -= 1;
      }
      uint64_t m_tail = 1, n_tail = 1, tail_cnt = 1, tail_base = 0;
      if (w.tail_split && g + 1 == group_num && end + 1 <= block_num / 2) {
        const uint64_t tail_ori = std::min(end + 1, total);
        const uint64_t remain = (block_num - end - 1) / tail_ori + 1;
        if (remain > 1) {
          const uint64_t m_min = w.trans_a ? kInnerAxisMinSplit : kCubeBlock;
          const uint64_t n_min = w.trans_b ? kCubeBlock : kInnerAxisMinSplit;
          uint64_t m_tile = std::min(CeilDiv(m_base_tail, m_min), remain);
          uint64_t n_tile = std::min(CeilDiv(n_base_tail, n_min), remain);
          while (m_tile * n_tile > remain) (m_tile >= n_tile ? m_tile : n_tile) -= 1;
          m_tail = m_tile;
          n_tail = n_tile;
          tail_cnt = m_tail * n_tail;
          const uint64_t new_end = end + tail_ori * (tail_cnt - 1);
          if (core > end && core <= new_end) round += 1;
          if (core > new_end) {
            m_tail = n_tail = tail_cnt = 1;
            tail_base = 0;
          } else if (tail_cnt > 1) {
            tail_base = end + 1 - tail_ori;
          }
          end = new_end;
        }
      }
      for (uint64_t r = 0; r < round; ++r) {
        // GetTileIdx, in the scheduler's signed arithmetic.
        const int64_t cnt = static_cast<int64_t>(tail_cnt);
        const int64_t base = static_cast<int64_t>(tail_base);
        int64_t new_block = core;
        if (r == round - 1 && tail_cnt > 1) {
          new_block = (base + ((new_block - base) / cnt) * cnt) / cnt;
        }
        int64_t index = new_block + static_cast<int64_t>(r * block_num);
        if (core < start) {
          index += static_cast<int64_t>(block_num - start);
        } else if (tail_cnt > 1 && end + 1 >= tail_cnt * total) {
          index -= (base + ((static_cast<int64_t>(start) - base) / cnt) * cnt) / cnt;
        } else {
          index -= static_cast<int64_t>(start);
        }
        if (index < 0) {
          return absl::InternalError(absl::StrCat("core ", core, " of group ", g,
                                                  " gets block index ", index));
        }
        const auto [m_idx, n_idx] = WindowTile(static_cast<uint64_t>(index), m_cnt, n_cnt);
        // GetBlockShape (the round counter has moved past this round).
        uint64_t rows = m_idx != m_cnt - 1 ? base_m : m_base_tail;
        uint64_t cols = n_idx != n_cnt - 1 ? w.base_n : n_base_tail;
        uint64_t m_off = 0, n_off = 0;
        if (tail_cnt > 1 && r + 1 >= round) {
          uint64_t split_m = CeilDiv(rows, m_tail);
          uint64_t split_n = CeilDiv(cols, n_tail);
          if (w.trans_a) split_m = CeilAlign(split_m, kInnerAxisMinSplit);
          split_n = CeilAlign(split_n, w.n_tail_align);
          if (!w.trans_b) split_n = CeilAlign(split_n, kInnerAxisMinSplit);
          m_off = ((core % tail_cnt) % m_tail) * split_m;
          n_off = ((core % tail_cnt) / m_tail) * split_n;
          if (m_off >= rows || n_off >= cols) break;
          rows = std::min(rows - m_off, split_m);
          cols = std::min(cols - n_off, split_n);
        }
        out.Add(g, m_idx * base_m + m_off, rows, n_idx * w.base_n + n_off, cols);
      }
    }
  }
  return absl::OkStatus();
}

// --- GMMWeightQuantTilingData -----------------------------------------------

absl::Status ExpandWeightQuantResplit(const TilingPlan& plan, const GmmGroups& groups,
                                      Schedule& s) {
  using F = GmmWeightQuantField;
  ASSIGN_OR_RETURN(const uint64_t core_num,
                   PositiveWord(plan, F::kCoreNum, "gmmWeightQuantParam.coreNum"));
  ASSIGN_OR_RETURN(const uint64_t base_m,
                   PositiveWord(plan, GmmWeightQuantCube(TCubeField::kBaseM), "mmTilingData.baseM"));
  ASSIGN_OR_RETURN(const uint64_t n_size, Word(plan, F::kNSize, "gmmWeightQuantParam.nSize"));
  const struct {
    F count, size;
    const char* count_name;
    const char* size_name;
  } kPieces[] = {
      {F::kMainBlockCount, F::kMainBlockSize, "gmmWeightQuantParam.mainBlockCount",
       "gmmWeightQuantParam.mainBlockSize"},
      {F::kFirstTailBlockCount, F::kFirstTailBlockSize, "gmmWeightQuantParam.firstTailBlockCount",
       "gmmWeightQuantParam.firstTailBlockSize"},
      {F::kSecondTailBlockCount, F::kSecondTailBlockSize,
       "gmmWeightQuantParam.secondTailBlockCount", "gmmWeightQuantParam.secondTailBlockSize"},
  };
  uint64_t counts[3], sizes[3];
  uint64_t covered = 0;
  for (int i = 0; i < 3; ++i) {
    ASSIGN_OR_RETURN(counts[i], Word(plan, kPieces[i].count, kPieces[i].count_name));
    ASSIGN_OR_RETURN(sizes[i], Word(plan, kPieces[i].size, kPieces[i].size_name));
    // Each kind of block lies within N (the controller cuts the last one).
    if (counts[i] > 0 && (sizes[i] == 0 || counts[i] > CeilDiv(n_size, sizes[i]))) {
      return absl::InvalidArgumentError(
          absl::StrCat("tiling fields ", kPieces[i].count_name, "=", counts[i], " and ",
                       kPieces[i].size_name, "=", sizes[i], " do not fit nSize=", n_size));
    }
    covered += counts[i] * sizes[i];
  }
  if (core_num > plan.block_dim) {
    return absl::InvalidArgumentError(absl::StrCat("tiling field gmmWeightQuantParam.coreNum=",
                                                   core_num, " exceeds the plan's block_dim=",
                                                   plan.block_dim));
  }
  if (groups.group_type != kGroupTypeSplitM) {
    return absl::UnimplementedError(
        "GMMWeightQuantResplitController takes each group's m from group_list (split M); the "
        "problem has no split M");
  }
  for (const GmmGroup& group : groups.groups) {
    if (group.computed() && (group.n != n_size || covered < n_size)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tiling field gmmWeightQuantParam.nSize=", n_size, " and its N blocks (", covered,
          " columns) do not cover the groups' n=", group.n));
    }
  }
  for (uint32_t core = 0; core < core_num; ++core) {
    CoreUnits out(groups, core, s);
    uint64_t start = 0;
    for (size_t g = 0; g < groups.groups.size(); ++g) {
      const GmmGroup& group = groups.groups[g];
      if (group.m == 0 || n_size == 0) continue;
      const uint64_t m_l1 = CeilDiv(group.m, CeilDiv(group.m, base_m));
      uint64_t block = core >= start ? core : core + core_num;
      uint64_t limit = start;
      for (uint64_t m_off = 0; m_off < group.m; m_off += m_l1) {
        uint64_t n_off = 0;
        for (int i = 0; i < 3; ++i) {
          for (; block < limit + counts[i]; block += core_num) {
            const uint64_t n_begin = n_off + ((block - limit) % counts[i]) * sizes[i];
            const uint64_t cols = n_begin + sizes[i] > n_size ? n_size - n_begin : sizes[i];
            out.Add(g, m_off, std::min(m_l1, group.m - m_off), n_begin, cols);
          }
          n_off += sizes[i] * counts[i];
          limit += counts[i];
        }
      }
      start = limit % core_num;
    }
  }
  return absl::OkStatus();
}

absl::Status ExpandWeightQuantBasic(const TilingPlan& plan, const GmmGroups& groups, Schedule& s) {
  using F = GmmWeightQuantField;
  ASSIGN_OR_RETURN(const uint64_t core_num,
                   PositiveWord(plan, F::kCoreNum, "gmmWeightQuantParam.coreNum"));
  ASSIGN_OR_RETURN(const uint64_t tiling_base_m,
                   PositiveWord(plan, GmmWeightQuantCube(TCubeField::kBaseM), "mmTilingData.baseM"));
  ASSIGN_OR_RETURN(const uint64_t tiling_base_n,
                   PositiveWord(plan, GmmWeightQuantCube(TCubeField::kBaseN), "mmTilingData.baseN"));
  if (core_num > plan.block_dim) {
    return absl::InvalidArgumentError(absl::StrCat("tiling field gmmWeightQuantParam.coreNum=",
                                                   core_num, " exceeds the plan's block_dim=",
                                                   plan.block_dim));
  }
  for (uint32_t core = 0; core < core_num; ++core) {
    CoreUnits out(groups, core, s);
    uint64_t count = 0;
    for (size_t g = 0; g < groups.groups.size(); ++g) {
      const GmmGroup& group = groups.groups[g];
      if (group.m == 0 || group.n == 0) continue;
      // baseM fitted to m: halves or quarters of m between one and four
      // tiling blocks; baseN halved when N does not fill the cores.
      const uint64_t b = tiling_base_m;
      const uint64_t base_m = group.m <= b || group.m >= 4 * b
                                  ? b
                                  : (group.m <= 2 * b ? CeilDiv(group.m, 2) : CeilDiv(group.m, 4));
      const uint64_t base_n =
          group.n >= tiling_base_n * core_num ? tiling_base_n : tiling_base_n / 2;
      if (base_n == 0) return RequirePositive("mmTilingData.baseN / 2", 0);
      const uint64_t m_blocks = CeilDiv(group.m, base_m), n_blocks = CeilDiv(group.n, base_n);
      const uint64_t cur_count = count + m_blocks * n_blocks;
      for (uint64_t block = core >= count ? core : core + core_num; block < cur_count;
           block += core_num) {
        const uint64_t m_off = ((block - count) / n_blocks) * base_m;
        const uint64_t n_off = ((block - count) % n_blocks) * base_n;
        out.Add(g, m_off, std::min(base_m, group.m - m_off), n_off,
                std::min(base_n, group.n - n_off));
      }
      count = cur_count % core_num;
    }
  }
  return absl::OkStatus();
}

// The struct's group count and group type (a signed member of `type_bits`)
// are the problem's as its kernels read it: a plan made for another
// problem is refused, naming the field.
absl::Status CheckGroupWords(const GmmGroups& groups,
                             std::string_view prefix, std::optional<uint64_t> group_num,
                             std::optional<uint64_t> group_type, int type_bits) {
  if (!group_num || !group_type) {
    return absl::InvalidArgumentError(absl::StrCat("tiling field ", std::string(prefix),
                                                   ".groupNum / groupType is missing"));
  }
  if (*group_num != groups.groups.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tiling field ", std::string(prefix), ".groupNum=", *group_num, ", but the problem has ",
        groups.groups.size(), " groups (", groups.FormName(), ")"));
  }
  const uint64_t sign = uint64_t{1} << (type_bits - 1);
  const int64_t type = static_cast<int64_t>((*group_type ^ sign) - sign);
  if (type != groups.group_type) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tiling field ", std::string(prefix), ".groupType=", type, ", but the problem reads as ",
        groups.group_type, " (", groups.FormName(), ")"));
  }
  return absl::OkStatus();
}

// The N alignment of the MX kernel's tail pieces: a cube block with B
// transposed, else its fractal's K0 (64 fp4 or 32 fp8 elements).
uint64_t MxTailAlign(const MatmulProblem& problem, bool trans_b) {
  if (trans_b) return kCubeBlock;
  const DataType w = problem.grouped[GroupedTensor::kWeight].dtype;
  return DataTypeBits(w) == 4 ? 64 : 32;
}

}  // namespace

BlockTiling GroupedBlock(const TilingPlan& plan, const MatmulProblem& /*walked*/) {
  BlockTiling block = plan.block;
  auto cube = [&](TCubeField field) -> std::optional<uint64_t> {
    switch (plan.data.kernel) {
      case KernelId::kGroupedNoQuant:
        return Get(plan.data, GmmNoQuantCube(field));
      case KernelId::kGroupedQuant:
        return Get(plan.data, GmmQuantCube(field));
      case KernelId::kGroupedWeightQuant:
        return Get(plan.data, GmmWeightQuantCube(field));
      default:
        return std::nullopt;
    }
  };
  if (plan.data.kernel == KernelId::kGroupedQuantBasicApi) {
    using F = GmmQuantBasicApiField;
    if (auto v = Get(plan.data, F::kBaseM)) block.base_m = *v;
    if (auto v = Get(plan.data, F::kBaseN)) block.base_n = *v;
    if (auto v = Get(plan.data, F::kBaseK)) block.base_k = *v;
    if (auto v = Get(plan.data, F::kKAL1)) block.k_l1 = *v;
    if (auto v = Get(plan.data, F::kDbL0C)) block.l0c_db = std::max<uint64_t>(1, *v);
    return block;
  }
  if (auto v = cube(TCubeField::kBaseM)) block.base_m = *v;
  if (auto v = cube(TCubeField::kBaseN)) block.base_n = *v;
  if (auto v = cube(TCubeField::kBaseK)) block.base_k = *v;
  if (auto v = cube(TCubeField::kStepKa)) block.step_ka = std::max<uint64_t>(1, *v);
  if (auto v = cube(TCubeField::kStepKb)) block.step_kb = std::max<uint64_t>(1, *v);
  if (auto v = cube(TCubeField::kDepthA1)) block.depth_a1 = *v;
  if (auto v = cube(TCubeField::kDepthB1)) block.depth_b1 = *v;
  if (auto v = cube(TCubeField::kDbL0c)) block.l0c_db = std::max<uint64_t>(1, *v);
  if (block.base_k > 0) block.k_l1 = block.base_k * block.step_ka;
  return block;
}

absl::StatusOr<Schedule> ExpandGrouped(const TilingPlan& plan, const MatmulProblem& walked,
                                       const ChipSpec& /*chip*/, uint64_t /*batch*/) {
  ASSIGN_OR_RETURN(const GmmGroups groups, grouped::GroupsOf(walked.grouped));
  // The cube's L0 block and L1 K stage, which every kernel iterates by.
  const BlockTiling block = GroupedBlock(plan, walked);
  const bool basic_api = plan.data.kernel == KernelId::kGroupedQuantBasicApi;
  RETURN_IF_ERROR(RequirePositive("mmTilingData.baseM", block.base_m));
  RETURN_IF_ERROR(RequirePositive("mmTilingData.baseN", block.base_n));
  RETURN_IF_ERROR(RequirePositive("mmTilingData.baseK", block.base_k));
  RETURN_IF_ERROR(
      RequirePositive(basic_api ? "mmTilingData.kAL1" : "mmTilingData.stepKa", block.k_l1));
  Schedule s;
  s.aic_cores = plan.block_dim;
  s.batch = groups.groups.size();
  s.batch_rows = 0;
  const bool trans_a = groups.trans_x, trans_b = groups.trans_w;
  const bool weight_nz = walked.grouped[GroupedTensor::kWeight].format == Format::kFractalNz;
  switch (plan.data.kernel) {
    case KernelId::kGroupedNoQuant:
      RETURN_IF_ERROR(CheckGroupWords(groups, "gmmNoQuantParam",
                                      Get(plan.data, GmmNoQuantField::kGroupNum),
                                      Get(plan.data, GmmNoQuantField::kGroupType), 32));
      RETURN_IF_ERROR(ExpandNoQuant(
          plan, groups,
          weight_nz ? 32 / std::max<uint64_t>(1, DataTypeBytes(
                                                     walked.grouped[GroupedTensor::kWeight].dtype))
                    : 0,
          s));
      break;
    case KernelId::kGroupedQuant: {
      RETURN_IF_ERROR(CheckGroupWords(groups, "gmmQuantParams",
                                      Get(plan.data, GmmQuantField::kGroupNum),
                                      Get(plan.data, GmmQuantField::kGroupType), 8));
      if (((plan.key.grouped_bits >> 4) & 0xF) == kPerGroupPerBlockKernel) {
        TailSplitWalk w;
        ASSIGN_OR_RETURN(w.base_m, PositiveWord(plan, GmmQuantCube(TCubeField::kBaseM),
                                                "mmTilingData.baseM"));
        ASSIGN_OR_RETURN(w.base_n, PositiveWord(plan, GmmQuantCube(TCubeField::kBaseN),
                                                "mmTilingData.baseN"));
        w.trans_a = trans_a;
        w.trans_b = trans_b;
        w.skip_on_n = true;
        RETURN_IF_ERROR(ExpandTailSplit(w, groups, plan.block_dim, s));
      } else {
        RETURN_IF_ERROR(ExpandQuantAsw(plan, groups, trans_a, trans_b, weight_nz, s));
      }
      break;
    }
    case KernelId::kGroupedQuantBasicApi: {
      using F = GmmQuantBasicApiField;
      RETURN_IF_ERROR(CheckGroupWords(groups, "gmmQuantParams",
                                      Get(plan.data, F::kGroupNum), Get(plan.data, F::kGroupType),
                                      8));
      TailSplitWalk w;
      ASSIGN_OR_RETURN(w.base_m, PositiveWord(plan, F::kBaseM, "mmTilingData.baseM"));
      ASSIGN_OR_RETURN(w.base_n, PositiveWord(plan, F::kBaseN, "mmTilingData.baseN"));
      w.trans_a = trans_a;
      w.trans_b = trans_b;
      w.balance_m = true;
      w.tail_split = true;
      w.n_tail_align = trans_a ? 1 : MxTailAlign(walked, trans_b);
      RETURN_IF_ERROR(ExpandTailSplit(w, groups, plan.block_dim, s));
      break;
    }
    case KernelId::kGroupedWeightQuant: {
      RETURN_IF_ERROR(CheckGroupWords(groups, "gmmWeightQuantParam",
                                      Get(plan.data, GmmWeightQuantField::kGroupNum),
                                      Get(plan.data, GmmWeightQuantField::kGroupType), 8));
      const uint64_t sub_category = (plan.key.grouped_bits >> 25) & 0xF;
      if (sub_category == kWqTailResplit) {
        RETURN_IF_ERROR(ExpandWeightQuantResplit(plan, groups, s));
      } else if (sub_category == kWqBasicBlock) {
        RETURN_IF_ERROR(ExpandWeightQuantBasic(plan, groups, s));
      } else {
        return absl::UnimplementedError(absl::StrCat(
            "GroupedMatmul's weight-quant kernel of ALGORITHM_SUB_CATEGORY ", sub_category,
            " is not modelled (N_FIRST_TAIL_RESPLIT and N_FIRST_BASIC_BLOCK are)"));
      }
      break;
    }
    default:
      return absl::InternalError(absl::StrCat("ExpandGrouped of a ",
                                              std::string(plan.data.struct_name()), " plan"));
  }
  return s;
}

absl::Status CheckGroupedTilePattern(const TilingPlan& plan, const MatmulProblem& problem) {
  // The walks read the plan and the groups only, not the chip.
  absl::StatusOr<Schedule> schedule = ExpandGrouped(plan, problem, ChipSpec{}, 1);
  if (!schedule.ok()) return absl::OkStatus();  // ExpandTileLoops() reports it
  const absl::Status covered = CheckGroupedCoverage(*schedule, problem);
  if (covered.ok()) return covered;
  const bool quant_asw = plan.data.kernel == KernelId::kGroupedQuant &&
                         ((plan.key.grouped_bits >> 4) & 0xF) != kPerGroupPerBlockKernel;
  return absl::FailedPreconditionError(absl::StrCat(
      "hazard: CANN's ", std::string(plan.data.struct_name()), " kernel walks a wrong tile pattern "
      "on this token histogram (", covered.message(), ")",
      quant_asw ? "; its scheduler (QuantASWBlockSch) re-splits the last group's last round as "
                  "if that round began at core 0, but the group starts after the earlier groups' "
                  "blocks, so cores repeat some pieces and leave others out: CANN's kernel "
                  "computes a wrong y here"
                : "",
      ". The emulator does not run a kernel over a wrong tile pattern"));
}

absl::Status CheckGroupedCoverage(const Schedule& schedule, const MatmulProblem& problem) {
  ASSIGN_OR_RETURN(const GmmGroups groups, grouped::GroupsOf(problem.grouped));
  // Each group's units, checked as a matmul of its own.
  std::vector<Schedule> per_group(groups.groups.size());
  for (size_t i = 0; i < schedule.units.size(); ++i) {
    const WorkUnit& unit = schedule.units[i];
    if (unit.op != UnitOp::kMmad || unit.batch >= groups.groups.size()) {
      return absl::InternalError(absl::StrCat("unit ", i, " is no MMAD of a group"));
    }
    const GmmGroup& group = groups.groups[unit.batch];
    WorkUnit local = unit;
    if (unit.m.begin < group.c_row) {
      return absl::InternalError(absl::StrCat("unit ", i, " of group ", unit.batch,
                                              " starts above the group's rows"));
    }
    local.m = {unit.m.begin - group.c_row, unit.m.end - group.c_row};
    local.batch = 0;
    per_group[unit.batch].units.push_back(local);
  }
  // Units that repeat another of their group exactly compute the same
  // values again (the general quant kernel's tail re-split after a group
  // that ended mid-way through the cores sends several cores to one piece):
  // wasted time, not a wrong y, so they count once here.
  for (Schedule& one : per_group) {
    std::vector<WorkUnit>& units = one.units;
    auto key = [](const WorkUnit& u) {
      return std::tuple{u.m.begin, u.m.end, u.n.begin, u.n.end, u.k.begin, u.k.end};
    };
    std::sort(units.begin(), units.end(),
              [&](const WorkUnit& a, const WorkUnit& b) { return key(a) < key(b); });
    units.erase(std::unique(units.begin(), units.end(),
                            [&](const WorkUnit& a, const WorkUnit& b) { return key(a) == key(b); }),
                units.end());
  }
  for (size_t g = 0; g < groups.groups.size(); ++g) {
    const GmmGroup& group = groups.groups[g];
    // A group without rows or columns has no C; one with K 0 is left to the
    // zero fill, or covered by units of an empty K.
    if (group.m == 0 || group.n == 0 || (group.k == 0 && per_group[g].units.empty())) {
      if (!per_group[g].units.empty()) {
        return absl::InternalError(absl::StrCat("group ", g, " (m=", group.m, " n=", group.n,
                                                " k=", group.k, ") is empty but has units"));
      }
      continue;
    }
    MatmulProblem one;
    one.m = static_cast<int64_t>(group.m);
    one.n = static_cast<int64_t>(group.n);
    one.k = static_cast<int64_t>(group.k);
    if (absl::Status status = CheckScheduleCoverage(per_group[g], one); !status.ok()) {
      return absl::InternalError(absl::StrCat("group ", g, " (m=", group.m, " n=", group.n,
                                              " k=", group.k, "): ", status.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace npu::tiling::schedule_internal
