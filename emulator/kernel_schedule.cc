#include "emulator/kernel_schedule.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/status_macros.h"

namespace npu::emu {
namespace {

using tiling::CeilAlign;
using tiling::CeilDiv;
using tiling::CoreKind;
using tiling::Range;
using tiling::Schedule;
using tiling::UnitOp;
using tiling::WorkUnit;

// ---------------------------------------------------------------------------
// Wire names.

template <typename Enum>
struct NamedValue {
  Enum value;
  std::string_view name;
};

constexpr NamedValue<KernelScheduleKind> kKindNames[] = {
    {KernelScheduleKind::kSingleCore, "single_core"},
    {KernelScheduleKind::kStaticGrid, "static_grid"},
    {KernelScheduleKind::kRoundRobinTiles, "round_robin_tiles"},
    {KernelScheduleKind::kIdentitySwizzle, "identity_swizzle"},
    {KernelScheduleKind::kAswt, "aswt"},
    {KernelScheduleKind::kStreamKDp, "stream_k_dp"},
};
constexpr NamedValue<TileOrder> kOrderNames[] = {
    {TileOrder::kRowMajor, "row_major"},
    {TileOrder::kColMajor, "col_major"},
};
constexpr NamedValue<Epilogue> kEpilogueNames[] = {
    {Epilogue::kNone, "none"},
    {Epilogue::kReluGm, "relu_gm"},
    {Epilogue::kReluUb, "relu_ub"},
};

template <typename Enum, size_t N>
std::string_view NameOf(const NamedValue<Enum> (&table)[N], Enum value) {
  for (const NamedValue<Enum>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

template <typename Enum, size_t N>
absl::StatusOr<Enum> ParseName(const NamedValue<Enum> (&table)[N], std::string_view what,
                               std::string_view name) {
  std::vector<std::string> accepted;
  for (const NamedValue<Enum>& entry : table) {
    if (entry.name == name) return entry.value;
    accepted.emplace_back(entry.name);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ", std::string(what), " \"",
                                                 std::string(name),
                                                 "\"; accepted: ", absl::StrJoin(accepted, ", ")));
}

// ---------------------------------------------------------------------------
// Validation.

// "kernel_schedule.<field>=<value> must be <limit>".
template <typename Value>
absl::Status FieldError(const std::string& field, const Value& value, const std::string& limit) {
  return absl::InvalidArgumentError(
      absl::StrCat("kernel_schedule.", field, "=", value, " must be ", limit));
}

// A buffer the schedule's tiles overflow: the field that sizes it, the bytes
// needed (with the formula) and the bytes the core has.
template <typename Value>
absl::Status Overflow(const std::string& field, const Value& value, const std::string& buffer,
                      const std::string& formula, uint64_t need, uint64_t have) {
  return absl::InvalidArgumentError(absl::StrCat("kernel_schedule.", field, "=", value,
                                                 " must fit ", buffer, ": needs ", need, " bytes (",
                                                 formula, "), ", buffer, " has ", have));
}

absl::Status Unsupported(const std::string& feature, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat(feature, " is not supported by the kernel schedule replay (", why, ")"));
}

// The problem features the replay models: a non-empty C, K > 0, ND A and C,
// contiguous A, and B stored as the kernel loads it.
absl::Status ValidateProblem(const KernelSchedule& kernel, const tiling::MatmulProblem& problem) {
  if (problem.m <= 0 || problem.n <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("problem has an empty output: m=", problem.m, " n=", problem.n));
  }
  if (problem.k <= 0) {
    return Unsupported(absl::StrCat("problem.k=", problem.k),
                       "C is the bias or zero without a cube pass: CANN's K_EQUAL_ZERO path");
  }
  if (problem.a_slice.enabled) {
    return Unsupported("problem.a_slice", "the kernels read A as a contiguous [m, k] matrix");
  }
  if (problem.format_a != tiling::Format::kNd) {
    return Unsupported(
        absl::StrCat("problem.format_a=", std::string(tiling::FormatName(problem.format_a))),
        "A is ND");
  }
  if (problem.format_c != tiling::Format::kNd) {
    return Unsupported(
        absl::StrCat("problem.format_c=", std::string(tiling::FormatName(problem.format_c))),
        "C is ND");
  }
  if (kernel.b_format != tiling::Format::kNd && kernel.b_format != tiling::Format::kFractalNz) {
    return FieldError("b_format", static_cast<int>(kernel.b_format), "ND or FRACTAL_NZ");
  }
  // The problem may leave B's layout to the kernel (ND); a FRACTAL_NZ
  // problem must be run by a kernel that reads NZ.
  if (problem.format_b != tiling::Format::kNd && problem.format_b != kernel.b_format) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel_schedule.b_format=", std::string(tiling::FormatName(kernel.b_format)),
        " must match problem.format_b=", std::string(tiling::FormatName(problem.format_b)),
        " (how B is stored in GM)"));
  }
  return absl::OkStatus();
}

absl::Status RequireMultiple(const std::string& field, uint64_t value, uint64_t unit,
                             const std::string& unit_text) {
  if (value == 0 || value % unit != 0) {
    return FieldError(field, value, absl::StrCat("a positive multiple of ", unit_text));
  }
  return absl::OkStatus();
}

// Tile shapes, buffering depths and the launch.
absl::Status ValidateTiles(const KernelSchedule& kernel, const tiling::MatmulProblem& problem,
                           const tiling::ChipSpec& chip) {
  if (kernel.block_dim == 0 || kernel.block_dim > chip.aic_num) {
    return FieldError("block_dim", kernel.block_dim,
                      absl::StrCat("in 1..", chip.aic_num, " (the AIC cores of ", chip.name, ")"));
  }
  if (kernel.kind == KernelScheduleKind::kSingleCore && kernel.block_dim != 1) {
    return FieldError("block_dim", kernel.block_dim, "1 for kind=single_core");
  }
  // The cube fractal is 16 x 16 outputs; an L0 K step is whole 32-byte
  // fractal rows of A (16 fp16 / bf16 elements, 8 fp32).
  RETURN_IF_ERROR(RequireMultiple("base_m", kernel.base_m, tiling::kBlock16, "16"));
  RETURN_IF_ERROR(RequireMultiple("base_n", kernel.base_n, tiling::kBlock16, "16"));
  const uint64_t k_align = 32 / tiling::DataTypeBytes(problem.dtype_a);
  RETURN_IF_ERROR(
      RequireMultiple("base_k", kernel.base_k, k_align,
                      absl::StrCat(k_align, " (32 bytes of ",
                                   std::string(tiling::DataTypeName(problem.dtype_a)), ")")));
  RETURN_IF_ERROR(
      RequireMultiple("l1_m", kernel.l1_m, kernel.base_m, absl::StrCat("base_m=", kernel.base_m)));
  RETURN_IF_ERROR(
      RequireMultiple("l1_n", kernel.l1_n, kernel.base_n, absl::StrCat("base_n=", kernel.base_n)));
  RETURN_IF_ERROR(
      RequireMultiple("l1_k", kernel.l1_k, kernel.base_k, absl::StrCat("base_k=", kernel.base_k)));
  if (kernel.l1_kb != 0) {
    RETURN_IF_ERROR(RequireMultiple("l1_kb", kernel.l1_kb, kernel.base_k,
                                    absl::StrCat("base_k=", kernel.base_k)));
  }
  if (kernel.depth_a1 < 1 || kernel.depth_a1 > 2) {
    return FieldError("depth_a1", kernel.depth_a1, "1 or 2 (single L1 buffer or ping-pong)");
  }
  if (kernel.depth_b1 < 1 || kernel.depth_b1 > 2) {
    return FieldError("depth_b1", kernel.depth_b1, "1 or 2 (single L1 buffer or ping-pong)");
  }
  // A split of the M range into more parts than this keeps nothing useful
  // in L2; the measured kernels use 2.
  constexpr uint32_t kMaxL2SplitRounds = 64;
  if (kernel.l2_split_rounds > kMaxL2SplitRounds) {
    return FieldError("l2_split_rounds", kernel.l2_split_rounds,
                      absl::StrCat("at most ", kMaxL2SplitRounds));
  }
  if (kernel.l2_split_rounds > 1 && kernel.kind != KernelScheduleKind::kStaticGrid) {
    return FieldError(
        "l2_split_rounds", kernel.l2_split_rounds,
        absl::StrCat("0 or 1 for kind=", std::string(KernelScheduleKindName(kernel.kind)),
                     " (only static_grid splits its M range)"));
  }
  return absl::OkStatus();
}

// The K slices of one Stream-K tile: whole base_k steps, as even as
// possible (the first steps % splits slices take one step more), the last
// slice ending at K.
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

// The L1 tile grid of C.
struct TileGrid {
  uint64_t m = 0, n = 0, k = 0;
  uint64_t l1_m = 0, l1_n = 0;
  uint64_t m_tiles = 0, n_tiles = 0;

  uint64_t tiles() const { return m_tiles * n_tiles; }
  Range MRange(uint64_t m_idx) const { return {m_idx * l1_m, std::min(m, (m_idx + 1) * l1_m)}; }
  Range NRange(uint64_t n_idx) const { return {n_idx * l1_n, std::min(n, (n_idx + 1) * l1_n)}; }
};

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

// The split of kStreamKDp: MN tiles of the data-parallel rounds, and the
// tail tiles split into `splits` K slices each.
struct StreamKSplit {
  uint64_t tail_tiles = 0;  // MN tiles % block_dim (all of them when fewer)
  uint64_t dp_tiles = 0;    // MN tiles run whole; a multiple of block_dim
  uint64_t splits = 1;      // K slices per tail tile (1 when there is no tail)
};

StreamKSplit MakeStreamKSplit(const KernelSchedule& kernel, const TileGrid& g) {
  StreamKSplit s;
  s.tail_tiles = g.tiles() % kernel.block_dim;
  s.dp_tiles = g.tiles() - s.tail_tiles;
  s.splits = s.tail_tiles == 0 ? 1 : kernel.sk_k_splits;
  return s;
}

absl::StatusOr<Schedule> ExpandStreamKDp(const KernelSchedule& kernel,
                                         const tiling::MatmulProblem& problem);

// The fields each kind reads.
absl::Status ValidateKindFields(const KernelSchedule& kernel,
                                const tiling::MatmulProblem& problem) {
  switch (kernel.kind) {
    case KernelScheduleKind::kSingleCore:
    case KernelScheduleKind::kRoundRobinTiles:
      return absl::OkStatus();
    case KernelScheduleKind::kStaticGrid:
      if (kernel.single_core_m == 0) {
        return FieldError("single_core_m", 0, "positive for kind=static_grid");
      }
      if (kernel.single_core_n == 0) {
        return FieldError("single_core_n", 0, "positive for kind=static_grid");
      }
      return absl::OkStatus();
    case KernelScheduleKind::kIdentitySwizzle:
      if (kernel.swizzle_offset == 0) {
        return FieldError("swizzle_offset", 0, "at least 1 (tile rows or columns per band)");
      }
      if (kernel.swizzle_direction > 1) {
        return FieldError("swizzle_direction", kernel.swizzle_direction,
                          "0 (bands along M) or 1 (bands along N)");
      }
      return absl::OkStatus();
    case KernelScheduleKind::kAswt:
      if (kernel.aswt_window == 0) {
        return FieldError("aswt_window", 0, "at least 1 (tile rows per window)");
      }
      return absl::OkStatus();
    case KernelScheduleKind::kStreamKDp: {
      if (kernel.sk_k_splits < 2 || kernel.sk_k_splits > kernel.block_dim) {
        return FieldError("sk_k_splits", kernel.sk_k_splits,
                          absl::StrCat("in 2..block_dim=", kernel.block_dim));
      }
      const uint64_t steps = CeilDiv(static_cast<uint64_t>(problem.k), kernel.base_k);
      if (steps < kernel.sk_k_splits) {
        return FieldError(
            "sk_k_splits", kernel.sk_k_splits,
            absl::StrCat("at most the ", steps, " base_k=", kernel.base_k,
                         " steps of k=", problem.k, " (every K slice takes at least one)"));
      }
      // A partial sum fills one 256 x 256 fp32 workspace slot at most.
      if (kernel.l1_m * kernel.l1_n > tiling::kWorkspaceSlotElements) {
        return FieldError("l1_n", kernel.l1_n,
                          absl::StrCat("such that l1_m x l1_n (l1_m=", kernel.l1_m,
                                       ") fits a 256 x 256 workspace slot for kind=stream_k_dp"));
      }
      // The scheduler finds a slice's tile and slot from its index within
      // one round, so all the slices of the tail run in a single round.
      const StreamKSplit split = MakeStreamKSplit(kernel, MakeGrid(kernel, problem));
      if (split.tail_tiles * split.splits > kernel.block_dim) {
        return FieldError(
            "sk_k_splits", kernel.sk_k_splits,
            absl::StrCat("at most block_dim / tail tiles = ", kernel.block_dim, " / ",
                         split.tail_tiles, " (every K slice of the tail in one round)"));
      }
      return absl::OkStatus();
    }
  }
  return FieldError("kind", static_cast<int>(kernel.kind), "a known schedule kind");
}

// The cube buffers, the AIV's UB for a relu_ub epilogue and for the Stream-K
// reduction.
absl::Status ValidateBuffers(const KernelSchedule& kernel, const tiling::MatmulProblem& problem,
                             const tiling::ChipSpec& chip) {
  const uint64_t a_bytes = tiling::DataTypeBytes(problem.dtype_a);
  const uint64_t b_bytes = tiling::DataTypeBytes(problem.dtype_b);
  const uint64_t l0_stages = kernel.l0_double_buffer ? 2 : 1;
  const uint64_t l0a = l0_stages * kernel.base_m * kernel.base_k * a_bytes;
  if (l0a > chip.l0a_bytes) {
    return Overflow("base_k", kernel.base_k, "L0A",
                    absl::StrCat(l0_stages, " x base_m=", kernel.base_m, " x base_k x ", a_bytes),
                    l0a, chip.l0a_bytes);
  }
  const uint64_t l0b = l0_stages * kernel.base_n * kernel.base_k * b_bytes;
  if (l0b > chip.l0b_bytes) {
    return Overflow("base_k", kernel.base_k, "L0B",
                    absl::StrCat(l0_stages, " x base_n=", kernel.base_n, " x base_k x ", b_bytes),
                    l0b, chip.l0b_bytes);
  }
  const uint64_t l0c_stages = kernel.l0c_double_buffer ? 2 : 1;
  const uint64_t l0c = l0c_stages * kernel.base_m * kernel.base_n * tiling::kFp32Bytes;
  if (l0c > chip.l0c_bytes) {
    return Overflow("base_n", kernel.base_n, "L0C",
                    absl::StrCat(l0c_stages, " x base_m=", kernel.base_m, " x base_n x 4"), l0c,
                    chip.l0c_bytes);
  }
  const uint64_t bias_table = kernel.base_n * tiling::kFp32Bytes;
  if (problem.has_bias && bias_table > chip.bt_bytes) {
    return Overflow("base_n", kernel.base_n, "the bias table", "base_n x 4", bias_table,
                    chip.bt_bytes);
  }
  const uint64_t l1_kb = KernelBStageK(kernel, problem, chip);
  const uint64_t l1 = kernel.depth_a1 * kernel.l1_m * kernel.l1_k * a_bytes +
                      kernel.depth_b1 * l1_kb * kernel.l1_n * b_bytes;
  if (l1 > chip.l1_bytes) {
    return Overflow(kernel.l1_kb != 0 ? "l1_kb" : "l1_k",
                    kernel.l1_kb != 0 ? kernel.l1_kb : kernel.l1_k, "L1",
                    absl::StrCat("depth_a1=", kernel.depth_a1, " x l1_m=", kernel.l1_m,
                                 " x l1_k x ", a_bytes, " + depth_b1=", kernel.depth_b1, " x ",
                                 l1_kb, " x l1_n=", kernel.l1_n, " x ", b_bytes),
                    l1, chip.l1_bytes);
  }
  if (kernel.epilogue == Epilogue::kReluUb && kernel.kind == KernelScheduleKind::kStreamKDp) {
    return absl::InvalidArgumentError(
        "kernel_schedule.epilogue=relu_ub must not be used with kind stream_k_dp: its AIV cores "
        "already reduce the partial sums (use relu_gm)");
  }
  if (kernel.epilogue == Epilogue::kReluUb) {
    // FIXPIPE splits each fp32 output tile by rows between the AIC's two
    // AIVs; each holds its half in UB (two stages when they fit).
    const uint64_t ub = CeilDiv(kernel.base_m, 2) * kernel.base_n * tiling::kFp32Bytes;
    if (ub > chip.ub_bytes) {
      return Overflow("base_m", kernel.base_m, "UB",
                      absl::StrCat("epilogue=relu_ub: ceil(base_m / 2) x base_n=", kernel.base_n,
                                   " x 4"),
                      ub, chip.ub_bytes);
    }
  }
  if (kernel.kind == KernelScheduleKind::kStreamKDp) {
    // Each AIV holds every K slice of its band of rows in UB at once (the
    // rule emulator/buffers.cc applies to CANN's Stream-K plans).
    ASSIGN_OR_RETURN(const Schedule schedule, ExpandStreamKDp(kernel, problem));
    for (const WorkUnit& unit : schedule.units) {
      if (unit.op != UnitOp::kReduce) continue;
      const tiling::ReductionGroup& group = schedule.reductions[unit.reduction];
      const uint64_t ub =
          group.slots.size() * unit.m.size() * group.workspace_row_stride * tiling::kFp32Bytes;
      if (ub > chip.ub_bytes) {
        return Overflow(
            "sk_k_splits", kernel.sk_k_splits, "UB",
            absl::StrCat("the ", group.slots.size(), " K slices of a band of ", unit.m.size(),
                         " rows x ", group.workspace_row_stride, " fp32"),
            ub, chip.ub_bytes);
      }
    }
  }
  return absl::OkStatus();
}

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
  schedule.swat_window_rows =
      kernel.kind == KernelScheduleKind::kAswt ? kernel.aswt_window : tiling::kCannSwatWindowRows;
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

// Deals the tiles 0, 1, ... of a loop `for (i = core; i < tiles; i += block_dim)`
// to the cores; `coord(i)` gives tile i's (m index, n index).
template <typename Coord>
Schedule ExpandStrided(const KernelSchedule& kernel, const TileGrid& g, Coord coord) {
  CoreUnits per_core(kernel.block_dim);
  for (uint64_t i = 0; i < g.tiles(); ++i) {
    const auto [m_idx, n_idx] = coord(i);
    per_core[i % kernel.block_dim].push_back(
        MmadUnit(static_cast<int64_t>(i), g.MRange(m_idx), g.NRange(n_idx), {0, g.k}));
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
  std::tie(plan.block.m_tail_cnt, plan.block.n_tail_cnt) = AswtTailSplit(g, kernel.block_dim);
  plan.swat_window_rows = kernel.aswt_window;
  ASSIGN_OR_RETURN(Schedule expanded, tiling::ExpandTileLoops(plan, problem, chip));
  Schedule schedule = EmptySchedule(kernel, tiling::KernelModel::kBasic);
  schedule.units = std::move(expanded.units);
  schedule.rounds = expanded.rounds;
  return schedule;
}

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
absl::StatusOr<Schedule> ExpandStreamKDp(const KernelSchedule& kernel,
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

}  // namespace

std::string_view KernelScheduleKindName(KernelScheduleKind kind) {
  return NameOf(kKindNames, kind);
}

absl::StatusOr<KernelScheduleKind> ParseKernelScheduleKind(std::string_view name) {
  return ParseName(kKindNames, "kernel schedule kind", name);
}

std::string_view TileOrderName(TileOrder order) { return NameOf(kOrderNames, order); }

absl::StatusOr<TileOrder> ParseTileOrder(std::string_view name) {
  return ParseName(kOrderNames, "tile order", name);
}

std::string_view EpilogueName(Epilogue epilogue) { return NameOf(kEpilogueNames, epilogue); }

absl::StatusOr<Epilogue> ParseEpilogue(std::string_view name) {
  return ParseName(kEpilogueNames, "epilogue", name);
}

uint64_t KernelBStageK(const KernelSchedule& kernel, const tiling::MatmulProblem& problem,
                       const tiling::ChipSpec& chip) {
  if (kernel.l1_kb != 0) return kernel.l1_kb;
  const uint64_t a_bytes = tiling::DataTypeBytes(problem.dtype_a);
  const uint64_t b_bytes = tiling::DataTypeBytes(problem.dtype_b);
  const uint64_t a_l1 = uint64_t{kernel.depth_a1} * kernel.l1_m * kernel.l1_k * a_bytes;
  for (uint64_t kb = kernel.l1_k; kb >= kernel.base_k && kb % kernel.base_k == 0 && kb > 0;
       kb /= 2) {
    if (a_l1 + uint64_t{kernel.depth_b1} * kb * kernel.l1_n * b_bytes <= chip.l1_bytes) return kb;
    if (kb % 2 != 0) break;
  }
  return kernel.l1_k;
}

absl::Status ValidateKernelSchedule(const KernelSchedule& kernel,
                                    const tiling::MatmulProblem& problem,
                                    const tiling::ChipSpec& chip) {
  RETURN_IF_ERROR(ValidateProblem(kernel, problem));
  RETURN_IF_ERROR(ValidateTiles(kernel, problem, chip));
  RETURN_IF_ERROR(ValidateKindFields(kernel, problem));
  return ValidateBuffers(kernel, problem, chip);
}

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
      // Tiles numbered row-major.
      return ExpandStrided(
          kernel, g, [&](uint64_t i) { return std::make_pair(i / g.n_tiles, i % g.n_tiles); });
    case KernelScheduleKind::kIdentitySwizzle:
      return ExpandStrided(kernel, g, [&](uint64_t i) {
        return IdentitySwizzleCoord(i, g.m_tiles, g.n_tiles, kernel.swizzle_offset,
                                    kernel.swizzle_direction);
      });
    case KernelScheduleKind::kAswt:
      return ExpandAswt(kernel, problem, chip, g);
    case KernelScheduleKind::kStreamKDp:
      return ExpandStreamKDp(kernel, problem);
  }
  return absl::InternalError("ExpandKernelSchedule: unknown kind");
}

}  // namespace npu::emu
