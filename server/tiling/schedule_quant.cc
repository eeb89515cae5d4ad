// The tile loops of QuantBatchMatmulV3's arch35 (DAV_3510) kernels, each the
// `expand` of its row in kernel_table.cc (see schedule.h for the vocabulary):
//   * the basic-API scheduler (BlockSchedulerQuantBatchMatmulV3, cmct and
//     tensor-API copies) of MX_BASIC_API_ASW, CUBE_BASIC_API_ASW,
//     MIX_BASIC_API_ASW and PERBLOCK_BASIC_API_ASW, over the 38-word and the
//     16-word structs;
//   * QuantBmmAswBlock, the high-level Matmul API walk of CUBE_ASW and
//     MIX_ASW (the 96-word struct);
//   * MX_STREAMK, which is MatMulV3's Stream-K walk (schedule_stream_k.cc).
// Sources: ops-nn e5c3fa93 matmul/common/cmct/block/block_scheduler_qbmm.h,
// matmul/common/cmct/kernel/kernel_qbmm_{cube,mx,pertile}.h,
// matmul/quant_batch_matmul_v3/op_kernel/arch35/qbmm_asw_block.h,
// qbmm_cube_on_the_fly*.h and qbmm_mix_online_dynamic*.h; ops-tensor's
// include/blaze/gemm/block/block_scheduler_qbmm.h and the kernel_qbmm_*
// kernels that use it.
//
// The walks read the kernel's struct, not the problem: C is the struct's
// batchC batches of its m x n (m after CANN folds A's batch into M). That
// is the same stacked matrix as the problem's BatchShape, whose fold of A's
// batch CANN's parse may decline (a per-token x1 scale, a per-batch bias,
// per-block row groups that straddle batches); then BatchShape walks one
// batch of batch_a * m rows and the kernel batch_a batches of m rows. The
// units keep the kernel's tiles (none crosses one of its batches) and name
// the BatchShape batch they lie in (WorkUnit::batch), so the schedule's
// batch / batch_rows, which ExpandTileLoops() sets from BatchShape, hold.
//
// Each tile runs its whole K as one kMmad unit, K range [0, k). The vector
// epilogues of the mixed kernels (the MIX dequant, the PERBLOCK per-group
// scaling) are no units here: their AIVs follow their AIC tile by tile.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"
#include "server/tiling/schedule.h"
#include "server/tiling/schedule_internal.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/types.h"

namespace npu::tiling::schedule_internal {
namespace {

// The x1QuantMode / x2QuantMode words the schedulers' piece rounding depends
// on (QuantBatchMatmul::QuantMode; the strategies' QuantModeBits in
// server/tiling/quant/quant_facts.h, which this layer cannot include).
constexpr uint64_t kMxPerGroupMode = 8;
// The key's KERNELTYPE values whose kernels keep A's whole K in L1 and walk
// the "A full load" scheduler: NO_VEC_EPILOGUE_CUSTOM_GMTOAL1_WITH_MMAPI (1),
// VEC_EPILOGUE_CUSTOM_GMTOAL1_WITH_MMAPI (3) and the MX L0C ping-pong one
// (10), quant_batch_matmul_v3_apt_tiling_key.h.
constexpr uint8_t kKernelAFullLoad = 1;
constexpr uint8_t kKernelVecAFullLoad = 3;
constexpr uint8_t kKernelPerBlock = 4;  // VEC_EPILOGUE_WITH_CUSTOM_MM
constexpr uint8_t kKernelMxAFullLoadPingpong = 10;
// A per-block (per-group) scale covers 128 rows or columns (PER_BLOCK_SIZE).
constexpr uint64_t kPerBlockSize = 128;
// The fractal side of an NZ weight (BLOCK_CUBE) and its C0: 32 bytes of the
// weight's elements (32 for 8-bit, 64 for 4-bit ones).
constexpr uint64_t kCubeBlock = 16;
constexpr uint64_t kC0Bytes = 32;

bool IsAFullLoad(uint8_t quant_kernel) {
  return quant_kernel == kKernelAFullLoad || quant_kernel == kKernelVecAFullLoad ||
         quant_kernel == kKernelMxAFullLoadPingpong;
}

// Member `name` of the plan's struct; kInvalidArgument naming the struct
// when it has no such member (a hand-built plan).
absl::StatusOr<uint64_t> Member(const TilingPlan& plan, std::string_view name) {
  if (std::optional<uint64_t> value = plan.data.Get(name)) return *value;
  return absl::InvalidArgumentError(absl::StrCat("tiling struct ",
                                                 std::string(plan.data.struct_name()),
                                                 " has no member ", std::string(name)));
}

// A member that must be positive (a count or a block side the walk divides by).
absl::StatusOr<uint64_t> PositiveMember(const TilingPlan& plan, std::string_view name) {
  ASSIGN_OR_RETURN(const uint64_t value, Member(plan, name));
  RETURN_IF_ERROR(RequirePositive(name, value));
  return value;
}

// How the kernel rounds the side of a tail piece, ceil(tile / split), before
// clipping it at the tile's end.
struct PieceRounding {
  bool even = false;            // fp4 packs two elements per byte
  bool per_block_pair = false;  // 128, or 256 above 128 (PER_BLOCK_SIZE)
  bool power_of_two = false;    // CeilPowerOfTwo
  uint64_t align = 1;           // NZ weight: C0 or the 16-row fractal

  uint64_t Apply(uint64_t split) const;
};

// The kernels' CeilPowerOfTwo: smears the top bit over the 7 bits below it,
// exact for 1..256 (the range the kernel assumes).
uint64_t KernelCeilPowerOfTwo(uint64_t value) {
  uint64_t v = value - 1;
  v |= v >> 1;
  v |= v >> 2;
  v |= v >> 4;
  return v + 1;
}

uint64_t PieceRounding::Apply(uint64_t split) const {
  if (even) split = CeilAlign(split, 2);
  if (per_block_pair) {
    split = split > kPerBlockSize ? 2 * kPerBlockSize : kPerBlockSize;
  } else if (power_of_two) {
    split = KernelCeilPowerOfTwo(split);
  }
  return CeilAlign(split, align);
}

// The piece `idx` of `count` along a tile of `size` elements: its offset in
// the tile and its size, or nullopt when it starts past the tile's end.
std::optional<Range> Piece(uint64_t size, uint64_t count, uint64_t idx,
                           const PieceRounding& rounding) {
  const uint64_t split = rounding.Apply(CeilDiv(size, count));
  const uint64_t offset = idx * split;
  if (offset >= size) return std::nullopt;
  return Range{offset, offset + std::min(split, size - offset)};
}

// One batch of C as the kernel tiles it, and the last round's re-split.
struct QuantGrid {
  AxisBlocks m_axis, n_axis;
  uint64_t k = 0;
  uint64_t batch = 1;  // C batches, each m_axis.size rows of the stacked C
  uint64_t m_tail_tile = 1, n_tail_tile = 1;
  PieceRounding m_round, n_round;
  uint64_t window_rows = kCannSwatWindowRows;

  uint64_t MnTiles() const { return m_axis.tiles * n_axis.tiles; }
  uint64_t Pieces() const { return m_tail_tile * n_tail_tile; }
};

// Where a unit lies: C batch `batch`, tile (m_idx, n_idx) of it, and when
// `split` the piece (m_piece, n_piece) of m_count x n_count pieces.
struct Place {
  uint64_t batch = 0, m_idx = 0, n_idx = 0;
  bool split = false;
  uint64_t m_count = 1, n_count = 1, m_piece = 0, n_piece = 0;
};

// Appends the unit of `place` run by `core` in `round`; nothing when its
// piece starts past the tile's end (the kernel's empty block shape).
void AppendTile(const QuantGrid& g, uint64_t walked_rows, uint64_t core, uint64_t round,
                uint64_t tile, const Place& place, Schedule& schedule) {
  const uint64_t m_size = g.m_axis.BlockSize(place.m_idx);
  const uint64_t n_size = g.n_axis.BlockSize(place.n_idx);
  Range m{0, m_size}, n{0, n_size};
  if (place.split) {
    const std::optional<Range> m_part = Piece(m_size, place.m_count, place.m_piece, g.m_round);
    const std::optional<Range> n_part = Piece(n_size, place.n_count, place.n_piece, g.n_round);
    if (!m_part || !n_part) return;
    m = *m_part;
    n = *n_part;
  }
  const uint64_t row0 = place.batch * g.m_axis.size + g.m_axis.BlockOffset(place.m_idx);
  const uint64_t col0 = g.n_axis.BlockOffset(place.n_idx);
  WorkUnit unit;
  unit.core = static_cast<uint32_t>(core);
  unit.round = static_cast<uint32_t>(round);
  unit.tile_idx = static_cast<int64_t>(tile);
  unit.m = {row0 + m.begin, row0 + m.end};
  unit.n = {col0 + n.begin, col0 + n.end};
  unit.k = {0, g.k};
  unit.batch = static_cast<uint32_t>(unit.m.begin / walked_rows);
  schedule.units.push_back(unit);
}

// The struct's C (c_batch batches of m x n, K deep) must be the walked
// problem's stacked matrix.
absl::Status RequireSameC(uint64_t m, uint64_t n, uint64_t k, uint64_t c_batch,
                          const MatmulProblem& walked, uint64_t batch) {
  if (n != static_cast<uint64_t>(walked.n) || k != static_cast<uint64_t>(walked.k) ||
      m * c_batch != static_cast<uint64_t>(walked.m) * batch) {
    return absl::InvalidArgumentError(
        absl::StrCat("the tiling struct's C (", c_batch, " batches of m=", m, " n=", n, " k=", k,
                     ") is not the problem's (", batch, " of m=", walked.m, " n=", walked.n,
                     " k=", walked.k, ")"));
  }
  return absl::OkStatus();
}

absl::Status RequireSameC(const QuantGrid& g, const MatmulProblem& walked, uint64_t batch) {
  return RequireSameC(g.m_axis.size, g.n_axis.size, g.k, g.batch, walked, batch);
}

void SetCores(const TilingPlan& plan, uint64_t aic, Schedule& schedule) {
  schedule.aic_cores = static_cast<uint32_t>(aic);
  // Both AIVs of a mixed kernel's AIC work on its tile (GetTaskRation). Only
  // Stream-K's reductions are AIV units of the schedule; the other mixed
  // kernels' dequantization is the emulator's epilogue of each AIC's tiles,
  // as for FusedMatMul (schedule.aiv_cores 0).
  if (plan.kernel_type == KernelType::kMixed1To2 && plan.data.kernel == KernelId::kQuantStreamK) {
    schedule.aiv_cores = 2 * schedule.aic_cores;
  }
}

// ---------------------------------------------------------------------------
// The basic-API scheduler (38- and 16-word structs).

// Which kernel reads a basic-API plan, as far as its piece rounding goes.
struct BasicKernel {
  bool tensor_api = false;  // the ops-tensor (Blaze) copy of the scheduler
  bool mx = false;
  bool per_block = false;  // QbmmCmctPertileKernel
  bool pertile = false;    // per-block with groupSizeM 1: x1's scale per row
  bool a_full_load = false;
};

// The piece rounding of GetBlockShape<aQuantMode, bQuantMode, formatB>:
//   * fp4 A: even sides (cmct: both; tensor API: M when A is transposed, N
//     when B is not);
//   * NZ weight (the MX kernels, the tensor-API cube and mix ones; the
//     cmct cube kernel reads ND weights only and the per-block one passes no
//     format): N aligned to C0 when B is not transposed, else to 16;
//   * per-block (cmct only): A transposed, per group or block: 128 or 256;
//     A per block otherwise: a power of two; B per block: 128 or 256 when
//     B is not transposed, else a power of two.
void SetBasicRounding(const BasicKernel& kernel, const TilingPlan& plan,
                      const MatmulProblem& walked, QuantGrid& g) {
  const bool trans_a = plan.key.trans_a, trans_b = plan.key.trans_b;
  const bool fp4 = walked.dtype_a == DataType::kFloat4E2M1;
  g.m_round.even = fp4 && (!kernel.tensor_api || trans_a);
  g.n_round.even = fp4 && (!kernel.tensor_api || !trans_b);
  const bool nz_rounding = walked.format_b == Format::kFractalNz && !kernel.per_block &&
                           (kernel.tensor_api || kernel.mx);
  if (nz_rounding) g.n_round.align = trans_b ? kCubeBlock : (fp4 ? 2 * kC0Bytes : kC0Bytes);
  if (kernel.per_block) {
    g.m_round.per_block_pair = trans_a;
    g.m_round.power_of_two = !trans_a && !kernel.pertile;
    g.n_round.per_block_pair = !trans_b;
    g.n_round.power_of_two = trans_b;
  }
}

// Names of the basic-API members in the 38-word struct ("matmulTiling.baseM")
// or the 16-word one ("baseM").
struct BasicNames {
  std::string_view m, n, k, base_m, base_n;
  std::string_view m_tail_tile, n_tail_tile, m_split, n_split, m_main, n_main;
  std::string_view x1_mode, group_size_m;
  std::string_view batch_c;  // empty: one batch
};

constexpr BasicNames kWithBatchNames = {
    "matmulTiling.m",
    "matmulTiling.n",
    "matmulTiling.k",
    "matmulTiling.baseM",
    "matmulTiling.baseN",
    "adaptiveSlidingWin.mTailTile",
    "adaptiveSlidingWin.nTailTile",
    "adaptiveSlidingWin.mBaseTailSplitCnt",
    "adaptiveSlidingWin.nBaseTailSplitCnt",
    "adaptiveSlidingWin.mTailMain",
    "adaptiveSlidingWin.nTailMain",
    "params.x1QuantMode",
    "params.groupSizeM",
    "params.batchC",
};
constexpr BasicNames kWithoutBatchNames = {
    "m",
    "n",
    "k",
    "baseM",
    "baseN",
    "mTailTile",
    "nTailTile",
    "mBaseTailSplitCnt",
    "nBaseTailSplitCnt",
    "mTailMain",
    "nTailMain",
    "x1QuantMode",
    "groupSizeM",
    "",
};

absl::StatusOr<QuantGrid> MakeBasicGrid(const TilingPlan& plan, const MatmulProblem& walked,
                                        const BasicNames& names, const BasicKernel& kernel) {
  QuantGrid g;
  ASSIGN_OR_RETURN(const uint64_t m, PositiveMember(plan, names.m));
  ASSIGN_OR_RETURN(const uint64_t n, PositiveMember(plan, names.n));
  ASSIGN_OR_RETURN(g.k, Member(plan, names.k));
  ASSIGN_OR_RETURN(const uint64_t base_m, PositiveMember(plan, names.base_m));
  ASSIGN_OR_RETURN(const uint64_t base_n, PositiveMember(plan, names.base_n));
  ASSIGN_OR_RETURN(g.m_tail_tile, PositiveMember(plan, names.m_tail_tile));
  ASSIGN_OR_RETURN(g.n_tail_tile, PositiveMember(plan, names.n_tail_tile));
  ASSIGN_OR_RETURN(const uint64_t m_split, Member(plan, names.m_split));
  ASSIGN_OR_RETURN(const uint64_t n_split, Member(plan, names.n_split));
  ASSIGN_OR_RETURN(const uint64_t m_main, Member(plan, names.m_main));
  ASSIGN_OR_RETURN(const uint64_t n_main, Member(plan, names.n_main));
  if (!names.batch_c.empty()) {
    ASSIGN_OR_RETURN(g.batch, PositiveMember(plan, names.batch_c));
  }
  // The scheduler merges the M tail only when A is not transposed and the N
  // tail only when B is; the per-block kernel passes a split count of 1 for
  // N (its nTailMain word carries isBias).
  ASSIGN_OR_RETURN(g.m_axis,
                   MakeAxis(names.base_m, m, base_m, !plan.key.trans_a ? m_split : 1, m_main));
  ASSIGN_OR_RETURN(g.n_axis, MakeAxis(names.base_n, n, base_n,
                                      plan.key.trans_b && !kernel.per_block ? n_split : 1, n_main));
  g.window_rows = WindowRows(plan);
  SetBasicRounding(kernel, plan, walked, g);
  return g;
}

absl::StatusOr<BasicKernel> BasicKernelOf(const TilingPlan& plan, const BasicNames& names) {
  BasicKernel kernel;
  kernel.tensor_api = plan.key.api_level == ApiLevel::kTensor;
  ASSIGN_OR_RETURN(const uint64_t x1_mode, Member(plan, names.x1_mode));
  kernel.mx = x1_mode == kMxPerGroupMode;
  kernel.per_block = plan.key.quant_kernel == kKernelPerBlock;
  if (kernel.per_block) {
    ASSIGN_OR_RETURN(const uint64_t group_m, Member(plan, names.group_size_m));
    kernel.pertile = group_m == 1;
  }
  kernel.a_full_load = IsAFullLoad(plan.key.quant_kernel);
  return kernel;
}

// BlockSchedulerQuantBatchMatmulV3 with the kernels' batch loop: the
// batch x mCnt x nCnt tiles, batch outermost, dealt round-robin to the
// launched cores as one flat list (UpdateNextBatchBlockRoundParams starts a
// batch on the core after the previous batch's last). Inside a batch the
// serpentine walk of SerpentineTile, in windows of WindowRows(plan) rows
// (the kernels' WINDOW_LEN 4 unless an advisor changed it). When the last flat round is partial and
// its tiles times mTailTile x nTailTile fit on the cores, each of those tiles
// (also across batches) is cut into that many pieces, core c taking piece
// c % pieces of the round's tile c / pieces; pieces that start past their
// tile's end are skipped. The A-full-load scheduler keeps each core on one
// M row (m = c mod mCnt) and moves along N.
absl::StatusOr<Schedule> ExpandBasicScheduler(const TilingPlan& plan, const MatmulProblem& walked,
                                              uint64_t batch, const BasicNames& names) {
  ASSIGN_OR_RETURN(const BasicKernel kernel, BasicKernelOf(plan, names));
  ASSIGN_OR_RETURN(const QuantGrid g, MakeBasicGrid(plan, walked, names, kernel));
  RETURN_IF_ERROR(RequireSameC(g, walked, batch));
  if (kernel.a_full_load && g.batch != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("an A-full-load kernel walks one batch, params.batchC=", g.batch));
  }
  const uint64_t block_num = plan.block_dim;
  const uint64_t m_tiles = g.m_axis.tiles, n_tiles = g.n_axis.tiles;
  const uint64_t mn = g.MnTiles(), total = mn * g.batch;
  const uint64_t full_rounds = total / block_num;
  const uint64_t last = total - full_rounds * block_num;  // tiles of the partial round
  const uint64_t pieces = g.Pieces();
  // The kernels re-split only when the pieces fit on the launched cores
  // (the host's block dim makes them fit; a hand-made plan may not).
  const bool resplit = last > 0 && pieces > 1 && pieces <= block_num / last;
  const uint64_t whole = resplit ? full_rounds * block_num : total;
  const uint64_t walked_rows = static_cast<uint64_t>(walked.m);

  Schedule schedule;
  SetCores(plan, block_num, schedule);
  for (uint64_t tile = 0; tile < whole; ++tile) {
    const uint64_t core = tile % block_num, round = tile / block_num;
    uint64_t m_idx = 0, n_idx = 0;
    if (kernel.a_full_load) {
      m_idx = core % m_tiles;
      n_idx = (round * block_num / m_tiles) % n_tiles + core / m_tiles;
    } else {
      std::tie(m_idx, n_idx) = SerpentineTile(tile % mn, m_tiles, n_tiles, g.window_rows);
    }
    AppendTile(g, walked_rows, core, round, tile, {tile / mn, m_idx, n_idx}, schedule);
  }
  if (resplit) {
    for (uint64_t core = 0; core < last * pieces; ++core) {
      const uint64_t tile = whole + core / pieces, piece = core % pieces;
      uint64_t m_idx = 0, n_idx = 0;
      uint64_t m_piece = piece % g.m_tail_tile, n_piece = piece / g.m_tail_tile;
      if (kernel.a_full_load) {
        m_idx = core % m_tiles;
        n_idx = (full_rounds * block_num / m_tiles) % n_tiles + core / m_tiles / g.n_tail_tile;
        n_piece = core / m_tiles % g.n_tail_tile;
      } else {
        std::tie(m_idx, n_idx) = SerpentineTile(tile % mn, m_tiles, n_tiles, g.window_rows);
      }
      AppendTile(g, walked_rows, core, full_rounds, tile,
                 {tile / mn, m_idx, n_idx, true, g.m_tail_tile, g.n_tail_tile, m_piece, n_piece},
                 schedule);
    }
  }
  return schedule;
}

// ---------------------------------------------------------------------------
// QuantBmmAswBlock (the 96-word struct).

// The high-level kernels' walk of one batch, replayed from core 0 for each
// of the struct's batchC batches (their batch loops call the one-batch loop
// again), the rounds concatenated. Every core runs ceil(T / usedCoreNum)
// rounds; in round r core c takes tile c + r * usedCoreNum, in the last one
// c / pieces + r * usedCoreNum and piece c % pieces when the struct asks for
// a split. Tiles past the grid are skipped: MIX_ASW checks; CUBE_ASW
// (MatMulASWKernel) does not, and there such a core recomputes a tile of
// the last window, rewriting the same values; that duplicate is not a unit
// here (the schedule covers C exactly once). The merged tails apply to both
// axes. The A-full-load kernels keep core c on M row c mod mCnt: CUBE_ASW's
// in every round, MIX_ASW's only in a split last round.
absl::StatusOr<Schedule> ExpandHighLevelWalk(const TilingPlan& plan, const MatmulProblem& walked,
                                             uint64_t batch) {
  QuantGrid g;
  ASSIGN_OR_RETURN(const uint64_t used, PositiveMember(plan, "matmulTiling.usedCoreNum"));
  ASSIGN_OR_RETURN(const uint64_t m, PositiveMember(plan, "matmulTiling.M"));
  ASSIGN_OR_RETURN(const uint64_t n, PositiveMember(plan, "matmulTiling.N"));
  ASSIGN_OR_RETURN(g.k, Member(plan, "matmulTiling.Ka"));
  ASSIGN_OR_RETURN(const uint64_t base_m, PositiveMember(plan, "matmulTiling.baseM"));
  ASSIGN_OR_RETURN(const uint64_t base_n, PositiveMember(plan, "matmulTiling.baseN"));
  ASSIGN_OR_RETURN(g.m_tail_tile, PositiveMember(plan, "adaptiveSlidingWin.mTailTile"));
  ASSIGN_OR_RETURN(g.n_tail_tile, PositiveMember(plan, "adaptiveSlidingWin.nTailTile"));
  ASSIGN_OR_RETURN(const uint64_t m_split, Member(plan, "adaptiveSlidingWin.mBaseTailSplitCnt"));
  ASSIGN_OR_RETURN(const uint64_t n_split, Member(plan, "adaptiveSlidingWin.nBaseTailSplitCnt"));
  ASSIGN_OR_RETURN(const uint64_t m_main, Member(plan, "adaptiveSlidingWin.mTailMain"));
  ASSIGN_OR_RETURN(const uint64_t n_main, Member(plan, "adaptiveSlidingWin.nTailMain"));
  ASSIGN_OR_RETURN(g.batch, PositiveMember(plan, "params.batchC"));
  ASSIGN_OR_RETURN(g.m_axis, MakeAxis("matmulTiling.baseM", m, base_m, m_split, m_main));
  ASSIGN_OR_RETURN(g.n_axis, MakeAxis("matmulTiling.baseN", n, base_n, n_split, n_main));
  g.window_rows = WindowRows(plan);
  RETURN_IF_ERROR(RequireSameC(g, walked, batch));
  if (used > plan.block_dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("tiling field matmulTiling.usedCoreNum=", used,
                     " exceeds the plan's block_dim=", plan.block_dim));
  }
  // UpdateBlockParams: the N piece of an NZ weight is aligned to C0 (B not
  // transposed) or to 16. (Its int4 rule, an even N piece, is compiled only
  // for int4 weights the cube reads as such; DAV_3510's has no 4-bit MMAD
  // and the kernels read int8 copies.)
  if (walked.format_b == Format::kFractalNz) {
    const uint64_t c0 = walked.dtype_b == DataType::kFloat4E2M1 ? 2 * kC0Bytes : kC0Bytes;
    g.n_round.align = plan.key.trans_b ? kCubeBlock : c0;
  }
  const bool full_load = IsAFullLoad(plan.key.quant_kernel);
  const bool every_round_full_load = plan.key.quant_kernel == kKernelAFullLoad;
  const uint64_t m_tiles = g.m_axis.tiles, n_tiles = g.n_axis.tiles, mn = g.MnTiles();
  const uint64_t rounds = CeilDiv(mn, used), pieces = g.Pieces();
  const uint64_t walked_rows = static_cast<uint64_t>(walked.m);

  Schedule schedule;
  SetCores(plan, used, schedule);
  for (uint64_t c_batch = 0; c_batch < g.batch; ++c_batch) {
    for (uint64_t r = 0; r < rounds; ++r) {
      const bool last_round = r + 1 == rounds;
      const bool split = last_round && pieces > 1;
      for (uint64_t core = 0; core < used; ++core) {
        const uint64_t tile = (last_round ? core / pieces : core) + r * used;
        if (tile >= mn) continue;
        const bool row_per_core = full_load && (every_round_full_load || split);
        uint64_t m_idx = 0, n_idx = 0;
        uint64_t m_piece = (core % pieces) % g.m_tail_tile,
                 n_piece = (core % pieces) / g.m_tail_tile;
        if (row_per_core) {
          // UpdateBasicIndex4AL1FullLoad / UpdateBlockParams4AL1FullLoad:
          // the M piece is the whole tile.
          m_idx = core % m_tiles;
          n_idx = r * used / m_tiles % n_tiles + core / m_tiles / (last_round ? g.n_tail_tile : 1);
          m_piece = 0;
          n_piece = core / m_tiles % g.n_tail_tile;
        } else {
          std::tie(m_idx, n_idx) = SerpentineTile(tile, m_tiles, n_tiles, g.window_rows);
        }
        const uint64_t m_count = row_per_core ? 1 : g.m_tail_tile;
        AppendTile(g, walked_rows, core, c_batch * rounds + r, c_batch * mn + tile,
                   {c_batch, m_idx, n_idx, split, m_count, g.n_tail_tile, m_piece, n_piece},
                   schedule);
      }
    }
  }
  return schedule;
}

}  // namespace

absl::StatusOr<Schedule> ExpandQuantBasic(const TilingPlan& plan, const MatmulProblem& walked,
                                          const ChipSpec& /*chip*/, uint64_t batch) {
  return ExpandBasicScheduler(plan, walked, batch, kWithBatchNames);
}

absl::StatusOr<Schedule> ExpandQuantWithoutBatch(const TilingPlan& plan,
                                                 const MatmulProblem& walked,
                                                 const ChipSpec& /*chip*/, uint64_t batch) {
  return ExpandBasicScheduler(plan, walked, batch, kWithoutBatchNames);
}

absl::StatusOr<Schedule> ExpandQuantHighLevel(const TilingPlan& plan, const MatmulProblem& walked,
                                              const ChipSpec& /*chip*/, uint64_t batch) {
  return ExpandHighLevelWalk(plan, walked, batch);
}

// MX_STREAMK (BlockSchedulerMatmulStreamK of ops-tensor with its kernel
// kernel_qbmm_streamk.h) indexes its tiles, K slices and reduction bands with
// MatMulV3's Stream-K formulas over GetBlockNum() cores, so ExpandStreamK()
// runs it with the struct's block, Stream-K slice (streamKTiling.singleCoreK)
// and L1 stage (streamKTiling.kL1). Its partial rows are never padded (the
// quant key's l0c2out is on-the-fly). Not modelled: every AIC, idle or not,
// passes an all-AIC barrier before it signals its AIVs, so no reduction
// starts before the last AIC finishes; the schedule has no word for that.
absl::StatusOr<Schedule> ExpandQuantStreamK(const TilingPlan& plan, const MatmulProblem& walked,
                                            const ChipSpec& /*chip*/, uint64_t batch) {
  ASSIGN_OR_RETURN(const uint64_t m, PositiveMember(plan, "matmulTiling.m"));
  ASSIGN_OR_RETURN(const uint64_t n, PositiveMember(plan, "matmulTiling.n"));
  ASSIGN_OR_RETURN(const uint64_t k, Member(plan, "matmulTiling.k"));
  ASSIGN_OR_RETURN(const uint64_t c_batch, PositiveMember(plan, "params.batchC"));
  RETURN_IF_ERROR(RequireSameC(m, n, k, c_batch, walked, batch));
  if (c_batch != 1) {
    // The kernel returns at once for a batch other than 1.
    return absl::InvalidArgumentError(
        absl::StrCat("the Stream-K kernel computes one batch, params.batchC=", c_batch));
  }
  TilingPlan stream_k = plan;
  stream_k.block = QuantBlock(plan, walked);
  MatmulProblem problem = walked;
  problem.m = static_cast<int64_t>(m);
  ASSIGN_OR_RETURN(Schedule schedule, ExpandStreamK(stream_k, problem, 1));
  return schedule;
}

BlockTiling QuantBlock(const TilingPlan& plan, const MatmulProblem& walked) {
  BlockTiling block = plan.block;
  const TilingData& data = plan.data;
  auto member = [&](std::string_view name, uint64_t fallback) {
    return data.Get(name).value_or(fallback);
  };
  block.single_core_k = static_cast<uint64_t>(walked.k);
  switch (data.kernel) {
    case KernelId::kQuantHighLevel:
      // The Matmul API walks base blocks through stepKa-deep L1 stages.
      block.base_m = member("matmulTiling.baseM", block.base_m);
      block.base_n = member("matmulTiling.baseN", block.base_n);
      block.base_k = member("matmulTiling.baseK", block.base_k);
      block.k_l1 = block.base_k * std::max<uint64_t>(1, member("matmulTiling.stepKa", 1));
      break;
    case KernelId::kQuantStreamK:
      block.base_m = member("matmulTiling.baseM", block.base_m);
      block.base_n = member("matmulTiling.baseN", block.base_n);
      block.base_k = member("matmulTiling.baseK", block.base_k);
      block.k_l1 = member("streamKTiling.kL1", block.k_l1);
      block.single_core_k = member("streamKTiling.singleCoreK", block.single_core_k);
      break;
    case KernelId::kQuantBasic:
    case KernelId::kQuantWithoutBatch: {
      const bool packed = data.kernel == KernelId::kQuantWithoutBatch;
      const std::string_view prefix = packed ? "" : "matmulTiling.";
      auto tiling = [&](std::string_view name, uint64_t fallback) {
        return member(std::string(prefix) + std::string(name), fallback);
      };
      block.base_m = tiling("baseM", block.base_m);
      block.base_n = tiling("baseN", block.base_n);
      block.base_k = tiling("baseK", block.base_k);
      const uint64_t k_al1 = tiling("kAL1", block.k_l1), k_bl1 = tiling("kBL1", block.k_l1);
      const uint64_t x1_mode = member(packed ? "x1QuantMode" : "params.x1QuantMode", 0);
      // The MX kernels load A and B kBL1 deep; an A-full-load kernel holds
      // A's whole K and streams B kBL1 deep; the others step the deeper
      // operand outside and the shallower inside, so one MMAD stage is
      // min(kAL1, kBL1) deep.
      block.k_l1 = x1_mode == kMxPerGroupMode || IsAFullLoad(plan.key.quant_kernel)
                       ? k_bl1
                       : std::min(k_al1, k_bl1);
      break;
    }
    default:
      break;
  }
  // A tile is one base block.
  block.m_l1 = block.base_m;
  block.n_l1 = block.base_n;
  return block;
}

}  // namespace npu::tiling::schedule_internal
