#include "emulator/kernel_schedule.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "emulator/kernel_schedule_internal.h"
#include "emulator/quant_numerics.h"
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
    {KernelScheduleKind::kSwat, "swat"},
    {KernelScheduleKind::kGroupedRoundRobin, "grouped_round_robin"},
};
constexpr NamedValue<TileOrder> kOrderNames[] = {
    {TileOrder::kRowMajor, "row_major"},
    {TileOrder::kColMajor, "col_major"},
};
constexpr NamedValue<TileNumbering> kNumberingNames[] = {
    {TileNumbering::kRowMajor, "row_major"},
    {TileNumbering::kColMajor, "col_major"},
    {TileNumbering::kSwatWindow, "swat_window"},
};
constexpr NamedValue<Epilogue> kEpilogueNames[] = {
    {Epilogue::kNone, "none"},
    {Epilogue::kReluGm, "relu_gm"},
    {Epilogue::kReluUb, "relu_ub"},
    {Epilogue::kDequantAiv, "dequant_aiv"},
    {Epilogue::kDequantGeluAiv, "dequant_gelu_aiv"},
    {Epilogue::kGeluUb, "gelu_ub"},
    {Epilogue::kGeluGm, "gelu_gm"},
};
constexpr NamedValue<L1BankSplit> kBankSplitNames[] = {
    {L1BankSplit::kUnspecified, ""},
    {L1BankSplit::kPingPong, "ping_pong"},
    {L1BankSplit::kAB, "a_b"},
    {L1BankSplit::kNone, "none"},
};
constexpr NamedValue<AivSplit> kAivSplitNames[] = {
    {AivSplit::kHalves, "halves"},
    {AivSplit::kSingle, "single"},
    {AivSplit::kAlternate, "alternate"},
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

// Bytes of `elements` values of `dtype` as stored (4-bit types two per byte).
uint64_t Bytes(tiling::DataType dtype, uint64_t elements) {
  return tiling::DataTypeBytesOf(dtype, elements);
}

// MX scale bytes of `rows` rows over `k` of K: one e8m0 byte per 32 K values,
// stored in pairs (ceil(k / 64) * 2 per row).
uint64_t MxScaleBytes(uint64_t rows, uint64_t k) { return rows * CeilDiv(k, 2 * kMxGroupSize) * 2; }

// The L1 bytes the schedule asks for with B's stages `l1_kb` deep: A's
// stages (or its resident band), B's stages and the MX scale buffers.
struct L1Usage {
  uint64_t a = 0, b = 0, scales = 0;
  uint64_t total() const { return a + b + scales; }
};
L1Usage UsageOf(const KernelSchedule& kernel, const tiling::MatmulProblem& problem,
                uint64_t l1_kb) {
  const uint64_t k = static_cast<uint64_t>(problem.k);
  L1Usage usage;
  usage.a = kernel.full_load_a
                ? Bytes(problem.dtype_a, kernel.l1_m * k)
                : uint64_t{kernel.depth_a1} * Bytes(problem.dtype_a, kernel.l1_m * kernel.l1_k);
  usage.b = uint64_t{kernel.depth_b1} * Bytes(problem.dtype_b, l1_kb * kernel.l1_n);
  if (IsMxProblem(problem)) {
    const uint64_t scale_k = KernelScaleStageK(kernel, problem);
    usage.scales = uint64_t{kernel.scale_l1_buffers} * MxScaleBytes(kernel.l1_n, scale_k) +
                   (kernel.full_load_a
                        ? MxScaleBytes(kernel.l1_m, k)
                        : uint64_t{kernel.scale_l1_buffers} * MxScaleBytes(kernel.l1_m, scale_k));
  }
  return usage;
}

// Tile shapes, buffering depths and the launch.
absl::Status ValidateTiles(const KernelSchedule& kernel, const tiling::MatmulProblem& problem,
                           const tiling::ChipSpec& chip) {
  const bool blocks = kernel.kind == KernelScheduleKind::kRoundRobinTiles;
  const uint32_t max_blocks = blocks ? kMaxKernelBlocks : chip.aic_num;
  if (kernel.block_dim == 0 || kernel.block_dim > max_blocks) {
    return FieldError(
        "block_dim", kernel.block_dim,
        blocks ? absl::StrCat("in 1..", kMaxKernelBlocks,
                              " (blocks beyond the cores wait for a free core)")
               : absl::StrCat("in 1..", chip.aic_num, " (the AIC cores of ", chip.name, ")"));
  }
  if (kernel.kind == KernelScheduleKind::kSingleCore && kernel.block_dim != 1) {
    return FieldError("block_dim", kernel.block_dim, "1 for kind=single_core");
  }
  // The cube fractal is 16 x 16 outputs; an L0 K step is whole 32-byte
  // fractal rows of A (16 fp16 / bf16 elements, 8 fp32, 64 fp4); the MX
  // MMAD takes K in multiples of 64 (cann-samples
  // docs/quant_matmul_mx_performance.md, "K dimension alignment").
  RETURN_IF_ERROR(RequireMultiple("base_m", kernel.base_m, tiling::kBlock16, "16"));
  RETURN_IF_ERROR(RequireMultiple("base_n", kernel.base_n, tiling::kBlock16, "16"));
  const uint64_t k_align =
      IsMxProblem(problem) ? 2 * kMxGroupSize : 256 / tiling::DataTypeBits(problem.dtype_a);
  RETURN_IF_ERROR(
      RequireMultiple("base_k", kernel.base_k, k_align,
                      IsMxProblem(problem)
                          ? std::string("64 (the MX MMAD's K granule)")
                          : absl::StrCat(k_align, " (32 bytes of ",
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
  if (kernel.scale_l1_k != 0) {
    if (!IsMxProblem(problem)) {
      return FieldError("scale_l1_k", kernel.scale_l1_k,
                        "0 for a problem without MX scales (float8_e8m0)");
    }
    RETURN_IF_ERROR(RequireMultiple("scale_l1_k", kernel.scale_l1_k, kernel.base_k,
                                    absl::StrCat("base_k=", kernel.base_k)));
  }
  if (kernel.scale_l1_buffers < 1 || kernel.scale_l1_buffers > 2) {
    return FieldError("scale_l1_buffers", kernel.scale_l1_buffers,
                      "1 or 2 (single L1 buffer or ping-pong)");
  }
  for (const auto& [name, offsets] :
       {std::pair{"l1_offsets.a", &kernel.l1_offsets.a},
        std::pair{"l1_offsets.b", &kernel.l1_offsets.b},
        std::pair{"l1_offsets.scale_a", &kernel.l1_offsets.scale_a},
        std::pair{"l1_offsets.scale_b", &kernel.l1_offsets.scale_b}}) {
    if (offsets->size() > 2) {
      return FieldError(name, offsets->size(), "at most 2 offsets (ping, pong)");
    }
    for (uint64_t offset : *offsets) {
      if (offset >= chip.l1_bytes) {
        return FieldError(name, offset, absl::StrCat("inside L1 (", chip.l1_bytes, " bytes)"));
      }
    }
  }
  return absl::OkStatus();
}

// The mix kernels' fields: AIVs per AIC, the workspace slots, the passes.
absl::Status ValidateMix(const KernelSchedule& kernel, const tiling::MatmulProblem& problem,
                         const tiling::ChipSpec& chip) {
  const bool relay = kernel.epilogue == Epilogue::kDequantAiv ||
                     kernel.epilogue == Epilogue::kDequantGeluAiv ||
                     kernel.epilogue == Epilogue::kGeluGm;
  if (kernel.aiv_per_aic > 2) {
    return FieldError("aiv_per_aic", kernel.aiv_per_aic, "0 (cube only), 1 or 2 (mix 1:1, 1:2)");
  }
  const uint32_t chip_ratio = chip.aic_num == 0 ? 0 : chip.aiv_num / chip.aic_num;
  if (kernel.aiv_per_aic > chip_ratio) {
    return FieldError("aiv_per_aic", kernel.aiv_per_aic,
                      absl::StrCat("at most the chip's ", chip_ratio, " AIV per AIC"));
  }
  if (relay && kernel.aiv_per_aic == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel_schedule.epilogue=", std::string(EpilogueName(kernel.epilogue)),
                     " runs on the AIV: it needs a mix kernel (aiv_per_aic 1 or 2)"));
  }
  if (!relay && kernel.aiv_per_aic != 0 && kernel.epilogue != Epilogue::kReluUb &&
      kernel.epilogue != Epilogue::kGeluUb) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel_schedule.aiv_per_aic=", kernel.aiv_per_aic, " must be 0 with epilogue=",
        std::string(EpilogueName(kernel.epilogue)), ": nothing runs on the AIV"));
  }
  if ((kernel.epilogue == Epilogue::kReluUb || kernel.epilogue == Epilogue::kGeluUb) &&
      kernel.aiv_per_aic == 1) {
    return FieldError("aiv_per_aic", 1,
                      "0 or 2 with a UB epilogue (FIXPIPE splits each tile between two AIVs)");
  }
  if ((kernel.epilogue == Epilogue::kDequantAiv || kernel.epilogue == Epilogue::kDequantGeluAiv) &&
      problem.op != tiling::MatmulOp::kQuantBatchMatmulV3) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel_schedule.epilogue=", std::string(EpilogueName(kernel.epilogue)),
                     " dequantizes on the AIV: the problem must be a QuantBatchMatmulV3 one"));
  }
  if (!relay && kernel.workspace_slots != 0) {
    return FieldError("workspace_slots", kernel.workspace_slots,
                      "0 unless the epilogue relays C through GM (dequant_aiv, dequant_gelu_aiv, "
                      "gelu_gm)");
  }
  if (kernel.aiv_split == AivSplit::kAlternate && kernel.aiv_per_aic != 2) {
    return absl::InvalidArgumentError(
        "kernel_schedule.aiv_split=alternate needs two AIVs per AIC (aiv_per_aic 2)");
  }
  if ((kernel.aiv_tile_rows != 0 || kernel.aiv_tile_cols != 0 ||
       kernel.aiv_split != AivSplit::kHalves) &&
      !relay) {
    return absl::InvalidArgumentError(
        "kernel_schedule.aiv_tile / aiv_split: only for an epilogue that relays C through GM");
  }
  if (kernel.kind == KernelScheduleKind::kStreamKDp && kernel.aiv_per_aic != 0) {
    return absl::InvalidArgumentError(
        "kernel_schedule.aiv_per_aic must be 0 with kind stream_k_dp: its AIV cores reduce the "
        "partial sums");
  }
  return absl::OkStatus();
}

// The fields each kind reads.
absl::Status ValidateKindFields(const KernelSchedule& kernel,
                                const tiling::MatmulProblem& problem) {
  const bool numbered = kernel.kind == KernelScheduleKind::kRoundRobinTiles ||
                        kernel.kind == KernelScheduleKind::kGroupedRoundRobin;
  if (kernel.tile_numbering == TileNumbering::kSwatWindow &&
      kernel.kind != KernelScheduleKind::kSwat) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel_schedule.tile_numbering=swat_window is for kind=swat, not ",
                     std::string(KernelScheduleKindName(kernel.kind))));
  }
  if (!numbered && kernel.tile_numbering == TileNumbering::kColMajor) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel_schedule.tile_numbering=col_major is for round_robin_tiles and "
                     "grouped_round_robin, not ",
                     std::string(KernelScheduleKindName(kernel.kind))));
  }
  if ((kernel.tail_split_m != 1 || kernel.tail_split_n != 1) &&
      kernel.kind != KernelScheduleKind::kSwat) {
    return absl::InvalidArgumentError("kernel_schedule.tail_split is for kind=swat only");
  }
  if (!kernel.group_m.empty() && kernel.kind != KernelScheduleKind::kGroupedRoundRobin) {
    return absl::InvalidArgumentError(
        "kernel_schedule.group_m is for kind=grouped_round_robin only");
  }
  if (kernel.b_per_group && kernel.kind != KernelScheduleKind::kGroupedRoundRobin) {
    return absl::InvalidArgumentError(
        "kernel_schedule.b_per_group is for kind=grouped_round_robin only");
  }
  if (kernel.full_load_a && (kernel.kind == KernelScheduleKind::kStreamKDp ||
                             kernel.kind == KernelScheduleKind::kSingleCore)) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel_schedule.full_load_a is not modelled with kind=",
                     std::string(KernelScheduleKindName(kernel.kind))));
  }
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
    case KernelScheduleKind::kGroupedRoundRobin: {
      if (kernel.single_core_m == 0) {
        return FieldError("single_core_m", 0, "positive for kind=grouped_round_robin");
      }
      if (kernel.single_core_n == 0) {
        return FieldError("single_core_n", 0, "positive for kind=grouped_round_robin");
      }
      if (kernel.group_m.empty()) {
        return absl::InvalidArgumentError(
            "kernel_schedule.group_m: required for kind=grouped_round_robin (the M of each "
            "group)");
      }
      uint64_t rows = 0;
      for (uint64_t group : kernel.group_m) rows += group;
      if (rows != static_cast<uint64_t>(problem.m)) {
        return absl::InvalidArgumentError(
            absl::StrCat("kernel_schedule.group_m: the groups' rows sum to ", rows,
                         ", the problem has m=", problem.m));
      }
      return absl::OkStatus();
    }
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
    case KernelScheduleKind::kSwat:
      if (kernel.aswt_window == 0) {
        return FieldError("aswt_window", 0, "at least 1 (tile rows per window)");
      }
      if (kernel.tail_split_m == 0 || kernel.tail_split_n == 0) {
        return FieldError("tail_split", 0, "at least 1 x 1 (1 x 1: no split)");
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

// The cube buffers, the AIV's UB for the epilogues and for the Stream-K
// reduction.
absl::Status ValidateBuffers(const KernelSchedule& kernel, const tiling::MatmulProblem& problem,
                             const tiling::ChipSpec& chip) {
  const uint64_t l0_stages = kernel.l0_double_buffer ? 2 : 1;
  const uint64_t l0a = l0_stages * Bytes(problem.dtype_a, kernel.base_m * kernel.base_k);
  const std::string a_width = tiling::DataTypeBits(problem.dtype_a) == 4
                                  ? std::string("4 bits")
                                  : absl::StrCat(tiling::DataTypeBytes(problem.dtype_a));
  const std::string b_width = tiling::DataTypeBits(problem.dtype_b) == 4
                                  ? std::string("4 bits")
                                  : absl::StrCat(tiling::DataTypeBytes(problem.dtype_b));
  if (l0a > chip.l0a_bytes) {
    return Overflow("base_k", kernel.base_k, "L0A",
                    absl::StrCat(l0_stages, " x base_m=", kernel.base_m, " x base_k x ", a_width),
                    l0a, chip.l0a_bytes);
  }
  const uint64_t l0b = l0_stages * Bytes(problem.dtype_b, kernel.base_n * kernel.base_k);
  if (l0b > chip.l0b_bytes) {
    return Overflow("base_k", kernel.base_k, "L0B",
                    absl::StrCat(l0_stages, " x base_n=", kernel.base_n, " x base_k x ", b_width),
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
  const L1Usage l1 = UsageOf(kernel, problem, l1_kb);
  if (l1.total() > chip.l1_bytes) {
    const std::string a_part =
        kernel.full_load_a
            ? absl::StrCat("full_load_a: l1_m=", kernel.l1_m, " x k=", problem.k, " x ", a_width)
            : absl::StrCat("depth_a1=", kernel.depth_a1, " x l1_m=", kernel.l1_m, " x l1_k x ",
                           a_width);
    return Overflow(
        kernel.l1_kb != 0 ? "l1_kb" : "l1_k", kernel.l1_kb != 0 ? kernel.l1_kb : kernel.l1_k, "L1",
        absl::StrCat(a_part, " + depth_b1=", kernel.depth_b1, " x ", l1_kb, " x l1_n=", kernel.l1_n,
                     " x ", b_width,
                     l1.scales > 0 ? absl::StrCat(" + MX scales ", l1.scales) : std::string()),
        l1.total(), chip.l1_bytes);
  }
  RETURN_IF_ERROR(ValidateMix(kernel, problem, chip));
  if (EpilogueOnAiv(kernel.epilogue) && kernel.kind == KernelScheduleKind::kStreamKDp) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel_schedule.epilogue=", std::string(EpilogueName(kernel.epilogue)),
        " must not be used with kind stream_k_dp: its AIV cores already reduce the partial sums "
        "(use relu_gm or none)"));
  }
  if (kernel.epilogue == Epilogue::kReluUb || kernel.epilogue == Epilogue::kGeluUb) {
    // FIXPIPE splits each fp32 output tile by rows between the AIC's two
    // AIVs; each holds its half in UB (two stages when they fit).
    const uint64_t ub = CeilDiv(kernel.base_m, 2) * kernel.base_n * tiling::kFp32Bytes;
    if (ub > chip.ub_bytes) {
      return Overflow("base_m", kernel.base_m, "UB",
                      absl::StrCat("epilogue=", std::string(EpilogueName(kernel.epilogue)),
                                   ": ceil(base_m / 2) x base_n=", kernel.base_n, " x 4"),
                      ub, chip.ub_bytes);
    }
  }
  if (kernel.epilogue == Epilogue::kDequantAiv || kernel.epilogue == Epilogue::kDequantGeluAiv ||
      kernel.epilogue == Epilogue::kGeluGm) {
    // One pass's input (4-byte accumulator or fp32) and output, each double
    // buffered in UB.
    const uint64_t rows = kernel.aiv_tile_rows != 0 ? kernel.aiv_tile_rows : kernel.base_m;
    const uint64_t cols = kernel.aiv_tile_cols != 0 ? kernel.aiv_tile_cols : kernel.base_n;
    const uint64_t ub = 2 * rows * cols * (tiling::kFp32Bytes + tiling::kFp32Bytes);
    if (ub > chip.ub_bytes) {
      return Overflow(kernel.aiv_tile_rows != 0 ? "aiv_tile_rows" : "base_m", rows, "UB",
                      absl::StrCat("2 x pass rows x cols=", cols, " x (4 in + 4 out)"), ub,
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

bool EpilogueOnAiv(Epilogue epilogue) {
  return epilogue != Epilogue::kNone && epilogue != Epilogue::kReluGm;
}

std::string_view TileNumberingName(TileNumbering numbering) {
  return NameOf(kNumberingNames, numbering);
}

absl::StatusOr<TileNumbering> ParseTileNumbering(std::string_view name) {
  return ParseName(kNumberingNames, "tile numbering", name);
}

std::string_view L1BankSplitName(L1BankSplit split) { return NameOf(kBankSplitNames, split); }

absl::StatusOr<L1BankSplit> ParseL1BankSplit(std::string_view name) {
  return ParseName(kBankSplitNames, "L1 bank split", name);
}

std::string_view AivSplitName(AivSplit split) { return NameOf(kAivSplitNames, split); }

absl::StatusOr<AivSplit> ParseAivSplit(std::string_view name) {
  return ParseName(kAivSplitNames, "AIV split", name);
}

bool IsMxProblem(const tiling::MatmulProblem& problem) {
  return problem.op == tiling::MatmulOp::kQuantBatchMatmulV3 &&
         problem.quant.scale.dtype == tiling::DataType::kFloat8E8M0;
}

uint64_t KernelScaleStageK(const KernelSchedule& kernel, const tiling::MatmulProblem& problem) {
  const uint64_t stage = kernel.scale_l1_k != 0 ? kernel.scale_l1_k : kernel.l1_k;
  return std::min<uint64_t>(stage, static_cast<uint64_t>(std::max<int64_t>(problem.k, 1)));
}

uint64_t KernelBStageK(const KernelSchedule& kernel, const tiling::MatmulProblem& problem,
                       const tiling::ChipSpec& chip) {
  if (kernel.l1_kb != 0) return kernel.l1_kb;
  for (uint64_t kb = kernel.l1_k; kb >= kernel.base_k && kb % kernel.base_k == 0 && kb > 0;
       kb /= 2) {
    if (UsageOf(kernel, problem, kb).total() <= chip.l1_bytes) return kb;
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
