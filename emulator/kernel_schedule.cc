#include "emulator/kernel_schedule.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "emulator/kernel_schedule_internal.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/status_macros.h"

namespace npu::emu {
namespace {

using internal::ExpandStreamKDp;
using internal::MakeGrid;
using internal::MakeStreamKSplit;
using internal::StreamKSplit;

using tiling::CeilDiv;
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
      return Overflow(
          "base_m", kernel.base_m, "UB",
          absl::StrCat("epilogue=relu_ub: ceil(base_m / 2) x base_n=", kernel.base_n, " x 4"), ub,
          chip.ub_bytes);
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

}  // namespace npu::emu
