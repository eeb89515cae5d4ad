#include "server/service/kernel_convert.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/service/convert.h"
#include "server/tiling/int_math.h"
#include "server/tiling/validate.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
namespace emu = ::npu::emu;

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("kernel_schedule.", field, ": ", what));
}

absl::StatusOr<emu::KernelScheduleKind> KindFromProto(pb::KernelScheduleKind kind) {
  switch (kind) {
    case pb::KERNEL_SCHEDULE_KIND_SINGLE_CORE:
      return emu::KernelScheduleKind::kSingleCore;
    case pb::KERNEL_SCHEDULE_KIND_STATIC_GRID:
      return emu::KernelScheduleKind::kStaticGrid;
    case pb::KERNEL_SCHEDULE_KIND_ROUND_ROBIN_TILES:
      return emu::KernelScheduleKind::kRoundRobinTiles;
    case pb::KERNEL_SCHEDULE_KIND_IDENTITY_SWIZZLE:
      return emu::KernelScheduleKind::kIdentitySwizzle;
    case pb::KERNEL_SCHEDULE_KIND_ASWT:
      return emu::KernelScheduleKind::kAswt;
    case pb::KERNEL_SCHEDULE_KIND_STREAM_K_DP:
      return emu::KernelScheduleKind::kStreamKDp;
    case pb::KERNEL_SCHEDULE_KIND_SWAT:
      return emu::KernelScheduleKind::kSwat;
    case pb::KERNEL_SCHEDULE_KIND_GROUPED_ROUND_ROBIN:
      return emu::KernelScheduleKind::kGroupedRoundRobin;
    case pb::KERNEL_SCHEDULE_KIND_UNSPECIFIED:
      return FieldError("kind",
                        "required (UNSPECIFIED is not a value): KERNEL_SCHEDULE_KIND_SINGLE_CORE, "
                        "_STATIC_GRID, _ROUND_ROBIN_TILES, _IDENTITY_SWIZZLE, _ASWT, "
                        "_STREAM_K_DP, _SWAT or _GROUPED_ROUND_ROBIN");
    default:
      break;
  }
  return FieldError("kind", absl::StrCat("unknown value ", static_cast<int>(kind)));
}

pb::KernelScheduleKind KindToProto(emu::KernelScheduleKind kind) {
  switch (kind) {
    case emu::KernelScheduleKind::kSingleCore:
      return pb::KERNEL_SCHEDULE_KIND_SINGLE_CORE;
    case emu::KernelScheduleKind::kStaticGrid:
      return pb::KERNEL_SCHEDULE_KIND_STATIC_GRID;
    case emu::KernelScheduleKind::kRoundRobinTiles:
      return pb::KERNEL_SCHEDULE_KIND_ROUND_ROBIN_TILES;
    case emu::KernelScheduleKind::kIdentitySwizzle:
      return pb::KERNEL_SCHEDULE_KIND_IDENTITY_SWIZZLE;
    case emu::KernelScheduleKind::kAswt:
      return pb::KERNEL_SCHEDULE_KIND_ASWT;
    case emu::KernelScheduleKind::kStreamKDp:
      return pb::KERNEL_SCHEDULE_KIND_STREAM_K_DP;
    case emu::KernelScheduleKind::kSwat:
      return pb::KERNEL_SCHEDULE_KIND_SWAT;
    case emu::KernelScheduleKind::kGroupedRoundRobin:
      return pb::KERNEL_SCHEDULE_KIND_GROUPED_ROUND_ROBIN;
  }
  return pb::KERNEL_SCHEDULE_KIND_UNSPECIFIED;
}

absl::StatusOr<emu::TileOrder> TileOrderFromProto(pb::TileOrder order) {
  switch (order) {
    case pb::TILE_ORDER_UNSPECIFIED:  // documented default
    case pb::TILE_ORDER_ROW_MAJOR:
      return emu::TileOrder::kRowMajor;
    case pb::TILE_ORDER_COL_MAJOR:
      return emu::TileOrder::kColMajor;
    default:
      break;
  }
  return FieldError("inner_order", absl::StrCat("unknown value ", static_cast<int>(order)));
}

pb::TileOrder TileOrderToProto(emu::TileOrder order) {
  switch (order) {
    case emu::TileOrder::kRowMajor:
      return pb::TILE_ORDER_ROW_MAJOR;
    case emu::TileOrder::kColMajor:
      return pb::TILE_ORDER_COL_MAJOR;
  }
  return pb::TILE_ORDER_UNSPECIFIED;
}

absl::StatusOr<emu::Epilogue> EpilogueFromProto(pb::Epilogue epilogue) {
  switch (epilogue) {
    case pb::EPILOGUE_UNSPECIFIED:  // documented default
    case pb::EPILOGUE_NONE:
      return emu::Epilogue::kNone;
    case pb::EPILOGUE_RELU_GM:
      return emu::Epilogue::kReluGm;
    case pb::EPILOGUE_RELU_UB:
      return emu::Epilogue::kReluUb;
    case pb::EPILOGUE_DEQUANT_AIV:
      return emu::Epilogue::kDequantAiv;
    case pb::EPILOGUE_DEQUANT_GELU_AIV:
      return emu::Epilogue::kDequantGeluAiv;
    case pb::EPILOGUE_GELU_UB:
      return emu::Epilogue::kGeluUb;
    case pb::EPILOGUE_GELU_GM:
      return emu::Epilogue::kGeluGm;
    default:
      break;
  }
  return FieldError("epilogue", absl::StrCat("unknown value ", static_cast<int>(epilogue)));
}

pb::Epilogue EpilogueToProto(emu::Epilogue epilogue) {
  switch (epilogue) {
    case emu::Epilogue::kNone:
      return pb::EPILOGUE_NONE;
    case emu::Epilogue::kReluGm:
      return pb::EPILOGUE_RELU_GM;
    case emu::Epilogue::kReluUb:
      return pb::EPILOGUE_RELU_UB;
    case emu::Epilogue::kDequantAiv:
      return pb::EPILOGUE_DEQUANT_AIV;
    case emu::Epilogue::kDequantGeluAiv:
      return pb::EPILOGUE_DEQUANT_GELU_AIV;
    case emu::Epilogue::kGeluUb:
      return pb::EPILOGUE_GELU_UB;
    case emu::Epilogue::kGeluGm:
      return pb::EPILOGUE_GELU_GM;
  }
  return pb::EPILOGUE_UNSPECIFIED;
}

absl::StatusOr<emu::TileNumbering> NumberingFromProto(pb::TileNumbering numbering) {
  switch (numbering) {
    case pb::TILE_NUMBERING_UNSPECIFIED:  // documented default
    case pb::TILE_NUMBERING_ROW_MAJOR:
      return emu::TileNumbering::kRowMajor;
    case pb::TILE_NUMBERING_COL_MAJOR:
      return emu::TileNumbering::kColMajor;
    case pb::TILE_NUMBERING_SWAT_WINDOW:
      return emu::TileNumbering::kSwatWindow;
    default:
      break;
  }
  return FieldError("tile_numbering", absl::StrCat("unknown value ", static_cast<int>(numbering)));
}

pb::TileNumbering NumberingToProto(emu::TileNumbering numbering) {
  switch (numbering) {
    case emu::TileNumbering::kRowMajor:
      return pb::TILE_NUMBERING_ROW_MAJOR;
    case emu::TileNumbering::kColMajor:
      return pb::TILE_NUMBERING_COL_MAJOR;
    case emu::TileNumbering::kSwatWindow:
      return pb::TILE_NUMBERING_SWAT_WINDOW;
  }
  return pb::TILE_NUMBERING_UNSPECIFIED;
}

absl::StatusOr<emu::L1BankSplit> BankSplitFromProto(pb::L1BankSplit split) {
  switch (split) {
    case pb::L1_BANK_SPLIT_UNSPECIFIED:
      return emu::L1BankSplit::kUnspecified;
    case pb::L1_BANK_SPLIT_PING_PONG:
      return emu::L1BankSplit::kPingPong;
    case pb::L1_BANK_SPLIT_A_B:
      return emu::L1BankSplit::kAB;
    case pb::L1_BANK_SPLIT_NONE:
      return emu::L1BankSplit::kNone;
    default:
      break;
  }
  return FieldError("l1_bank_split", absl::StrCat("unknown value ", static_cast<int>(split)));
}

pb::L1BankSplit BankSplitToProto(emu::L1BankSplit split) {
  switch (split) {
    case emu::L1BankSplit::kUnspecified:
      return pb::L1_BANK_SPLIT_UNSPECIFIED;
    case emu::L1BankSplit::kPingPong:
      return pb::L1_BANK_SPLIT_PING_PONG;
    case emu::L1BankSplit::kAB:
      return pb::L1_BANK_SPLIT_A_B;
    case emu::L1BankSplit::kNone:
      return pb::L1_BANK_SPLIT_NONE;
  }
  return pb::L1_BANK_SPLIT_UNSPECIFIED;
}

absl::StatusOr<emu::AivSplit> AivSplitFromProto(pb::AivSplit split) {
  switch (split) {
    case pb::AIV_SPLIT_UNSPECIFIED:  // documented default
    case pb::AIV_SPLIT_HALVES:
      return emu::AivSplit::kHalves;
    case pb::AIV_SPLIT_SINGLE:
      return emu::AivSplit::kSingle;
    case pb::AIV_SPLIT_ALTERNATE:
      return emu::AivSplit::kAlternate;
    default:
      break;
  }
  return FieldError("aiv_split", absl::StrCat("unknown value ", static_cast<int>(split)));
}

pb::AivSplit AivSplitToProto(emu::AivSplit split) {
  switch (split) {
    case emu::AivSplit::kHalves:
      return pb::AIV_SPLIT_HALVES;
    case emu::AivSplit::kSingle:
      return pb::AIV_SPLIT_SINGLE;
    case emu::AivSplit::kAlternate:
      return pb::AIV_SPLIT_ALTERNATE;
  }
  return pb::AIV_SPLIT_UNSPECIFIED;
}

absl::StatusOr<tl::Format> BFormatFromProto(pb::Format format) {
  switch (format) {
    case pb::FORMAT_UNSPECIFIED:  // documented default
    case pb::FORMAT_ND:
      return tl::Format::kNd;
    case pb::FORMAT_FRACTAL_NZ:
      return tl::Format::kFractalNz;
    default:
      break;
  }
  return FieldError("b_format", absl::StrCat("unknown value ", static_cast<int>(format)));
}

// The sizes of the message: tiles and blocks are parts of a matrix, so none
// is larger than the largest dimension a problem may have (which also keeps
// every product the checks form inside 64 bits).
struct SizeField {
  const char* name;
  uint64_t (pb::KernelSchedule::*get)() const;
  void (pb::KernelSchedule::*set)(uint64_t);
  uint64_t emu::KernelSchedule::*member;
};
const SizeField kSizeFields[] = {
    {"base_m", &pb::KernelSchedule::base_m, &pb::KernelSchedule::set_base_m,
     &emu::KernelSchedule::base_m},
    {"base_n", &pb::KernelSchedule::base_n, &pb::KernelSchedule::set_base_n,
     &emu::KernelSchedule::base_n},
    {"base_k", &pb::KernelSchedule::base_k, &pb::KernelSchedule::set_base_k,
     &emu::KernelSchedule::base_k},
    {"l1_m", &pb::KernelSchedule::l1_m, &pb::KernelSchedule::set_l1_m, &emu::KernelSchedule::l1_m},
    {"l1_n", &pb::KernelSchedule::l1_n, &pb::KernelSchedule::set_l1_n, &emu::KernelSchedule::l1_n},
    {"l1_k", &pb::KernelSchedule::l1_k, &pb::KernelSchedule::set_l1_k, &emu::KernelSchedule::l1_k},
    {"l1_kb", &pb::KernelSchedule::l1_kb, &pb::KernelSchedule::set_l1_kb,
     &emu::KernelSchedule::l1_kb},
    {"single_core_m", &pb::KernelSchedule::single_core_m, &pb::KernelSchedule::set_single_core_m,
     &emu::KernelSchedule::single_core_m},
    {"single_core_n", &pb::KernelSchedule::single_core_n, &pb::KernelSchedule::set_single_core_n,
     &emu::KernelSchedule::single_core_n},
    {"scale_l1_k", &pb::KernelSchedule::scale_l1_k, &pb::KernelSchedule::set_scale_l1_k,
     &emu::KernelSchedule::scale_l1_k},
    {"aiv_tile_rows", &pb::KernelSchedule::aiv_tile_rows, &pb::KernelSchedule::set_aiv_tile_rows,
     &emu::KernelSchedule::aiv_tile_rows},
    {"aiv_tile_cols", &pb::KernelSchedule::aiv_tile_cols, &pb::KernelSchedule::set_aiv_tile_cols,
     &emu::KernelSchedule::aiv_tile_cols},
};

// The most groups a grouped kernel may list.
constexpr int kMaxGroups = 4096;

// L1 buffers per operand: 0 (the default, 2), 1 or 2.
absl::StatusOr<uint32_t> DepthFromProto(const char* field, uint32_t depth) {
  if (depth > 2) {
    return FieldError(field, absl::StrCat("1 or 2 (0 means 2), got ", depth));
  }
  return depth == 0 ? 2u : depth;
}

}  // namespace

absl::StatusOr<emu::KernelSchedule> KernelScheduleFromProto(const pb::KernelSchedule& in) {
  emu::KernelSchedule out;
  absl::StatusOr<emu::KernelScheduleKind> kind = KindFromProto(in.kind());
  if (!kind.ok()) return kind.status();
  out.kind = *kind;

  if (in.block_dim() == 0 && out.kind != emu::KernelScheduleKind::kSingleCore) {
    return FieldError("block_dim",
                      absl::StrCat("required with ", pb::KernelScheduleKind_Name(in.kind()),
                                   ": the cube cores launched, 1..aic_num"));
  }
  out.block_dim = in.block_dim() == 0 ? 1 : in.block_dim();

  for (const SizeField& field : kSizeFields) {
    const uint64_t value = (in.*field.get)();
    if (value > static_cast<uint64_t>(tl::kMaxDim)) {
      return FieldError(field.name, absl::StrCat("at most ", tl::kMaxDim, ", got ", value));
    }
    out.*field.member = value;
  }

  absl::StatusOr<uint32_t> depth = DepthFromProto("depth_a1", in.depth_a1());
  if (!depth.ok()) return depth.status();
  out.depth_a1 = *depth;
  depth = DepthFromProto("depth_b1", in.depth_b1());
  if (!depth.ok()) return depth.status();
  out.depth_b1 = *depth;

  out.l0_double_buffer = in.has_l0_double_buffer() ? in.l0_double_buffer() : true;
  out.l0c_double_buffer = in.l0c_double_buffer();
  out.unit_flag = in.unit_flag();
  out.mdl = in.mdl();
  out.l2_split_rounds = in.l2_split_rounds();

  absl::StatusOr<tl::Format> b_format = BFormatFromProto(in.b_format());
  if (!b_format.ok()) return b_format.status();
  out.b_format = *b_format;
  absl::StatusOr<emu::Epilogue> epilogue = EpilogueFromProto(in.epilogue());
  if (!epilogue.ok()) return epilogue.status();
  out.epilogue = *epilogue;
  absl::StatusOr<emu::TileOrder> order = TileOrderFromProto(in.inner_order());
  if (!order.ok()) return order.status();
  out.inner_order = *order;

  out.swizzle_offset = in.swizzle_offset() == 0 ? 1 : in.swizzle_offset();
  if (in.swizzle_direction() > 1) {
    return FieldError("swizzle_direction",
                      absl::StrCat("0 (along M) or 1 (along N), got ", in.swizzle_direction()));
  }
  out.swizzle_direction = in.swizzle_direction();
  out.aswt_window = in.aswt_window() == 0 ? tl::kCannSwatWindowRows : in.aswt_window();
  if (in.sk_k_splits() == 1) {
    return FieldError("sk_k_splits", "at least 2 (0 means 2), got 1");
  }
  out.sk_k_splits = in.sk_k_splits() == 0 ? 2 : in.sk_k_splits();

  absl::StatusOr<emu::TileNumbering> numbering = NumberingFromProto(in.tile_numbering());
  if (!numbering.ok()) return numbering.status();
  out.tile_numbering = *numbering;
  out.tail_split_m = in.tail_split_m() == 0 ? 1 : in.tail_split_m();
  out.tail_split_n = in.tail_split_n() == 0 ? 1 : in.tail_split_n();
  out.full_load_a = in.full_load_a();
  if (in.scale_l1_buffers() > 2) {
    return FieldError("scale_l1_buffers",
                      absl::StrCat("1 or 2 (0 means 2), got ", in.scale_l1_buffers()));
  }
  out.scale_l1_buffers = in.scale_l1_buffers() == 0 ? 2 : in.scale_l1_buffers();
  absl::StatusOr<emu::L1BankSplit> split = BankSplitFromProto(in.l1_bank_split());
  if (!split.ok()) return split.status();
  out.l1_bank_split = *split;
  out.l1_offsets.a.assign(in.l1_offsets().a().begin(), in.l1_offsets().a().end());
  out.l1_offsets.b.assign(in.l1_offsets().b().begin(), in.l1_offsets().b().end());
  out.l1_offsets.scale_a.assign(in.l1_offsets().scale_a().begin(), in.l1_offsets().scale_a().end());
  out.l1_offsets.scale_b.assign(in.l1_offsets().scale_b().begin(), in.l1_offsets().scale_b().end());
  if (in.aiv_per_aic() > 2) {
    return FieldError("aiv_per_aic",
                      absl::StrCat("0 (cube only), 1 or 2 (mix 1:1, 1:2), got ", in.aiv_per_aic()));
  }
  out.aiv_per_aic = in.aiv_per_aic();
  out.workspace_slots = in.workspace_slots();
  absl::StatusOr<emu::AivSplit> aiv_split = AivSplitFromProto(in.aiv_split());
  if (!aiv_split.ok()) return aiv_split.status();
  out.aiv_split = *aiv_split;
  if (in.group_m_size() > kMaxGroups) {
    return FieldError("group_m",
                      absl::StrCat("at most ", kMaxGroups, " groups, got ", in.group_m_size()));
  }
  for (uint64_t rows : in.group_m()) {
    if (rows == 0 || rows > static_cast<uint64_t>(tl::kMaxDim)) {
      return FieldError("group_m", absl::StrCat("every group in 1..", tl::kMaxDim, ", got ", rows));
    }
    out.group_m.push_back(rows);
  }
  out.b_per_group = in.b_per_group();
  return out;
}

pb::KernelSchedule KernelScheduleToProto(const emu::KernelSchedule& in) {
  pb::KernelSchedule out;
  out.set_kind(KindToProto(in.kind));
  out.set_block_dim(in.block_dim);
  for (const SizeField& field : kSizeFields) (out.*field.set)(in.*field.member);
  out.set_depth_a1(in.depth_a1);
  out.set_depth_b1(in.depth_b1);
  out.set_l0_double_buffer(in.l0_double_buffer);
  out.set_l0c_double_buffer(in.l0c_double_buffer);
  out.set_unit_flag(in.unit_flag);
  out.set_mdl(in.mdl);
  out.set_l2_split_rounds(in.l2_split_rounds);
  out.set_b_format(FormatToProto(in.b_format));
  out.set_epilogue(EpilogueToProto(in.epilogue));
  out.set_inner_order(TileOrderToProto(in.inner_order));
  out.set_swizzle_offset(in.swizzle_offset);
  out.set_swizzle_direction(in.swizzle_direction);
  out.set_aswt_window(in.aswt_window);
  out.set_sk_k_splits(in.sk_k_splits);
  out.set_tile_numbering(NumberingToProto(in.tile_numbering));
  out.set_tail_split_m(in.tail_split_m);
  out.set_tail_split_n(in.tail_split_n);
  out.set_full_load_a(in.full_load_a);
  out.set_scale_l1_buffers(in.scale_l1_buffers);
  out.set_l1_bank_split(BankSplitToProto(in.l1_bank_split));
  pb::L1Offsets* offsets = out.mutable_l1_offsets();
  for (uint64_t offset : in.l1_offsets.a) offsets->add_a(offset);
  for (uint64_t offset : in.l1_offsets.b) offsets->add_b(offset);
  for (uint64_t offset : in.l1_offsets.scale_a) offsets->add_scale_a(offset);
  for (uint64_t offset : in.l1_offsets.scale_b) offsets->add_scale_b(offset);
  if (in.l1_offsets.empty()) out.clear_l1_offsets();
  out.set_aiv_per_aic(in.aiv_per_aic);
  out.set_workspace_slots(in.workspace_slots);
  out.set_aiv_split(AivSplitToProto(in.aiv_split));
  for (uint64_t rows : in.group_m) out.add_group_m(rows);
  out.set_b_per_group(in.b_per_group);
  return out;
}

tl::TilingPlan WorkEstimatePlan(const emu::KernelSchedule& schedule,
                                const tl::MatmulProblem& problem) {
  // The estimate counts one MMAD per base block and K step and at least one
  // operation per work unit (an L1 tile, or a K slice of a Stream-K tile);
  // zero sizes, which ValidateKernelSchedule() refuses, count as 1 here so
  // that the estimate never divides by zero.
  auto at_least_1 = [](uint64_t value) { return std::max<uint64_t>(1, value); };
  tl::TilingPlan plan;
  plan.strategy = "kernel_schedule";
  plan.block_dim = schedule.block_dim;
  plan.kernel_type = tl::KernelType::kAicOnly;
  plan.block.base_m = at_least_1(schedule.base_m);
  plan.block.base_n = at_least_1(schedule.base_n);
  plan.block.base_k = at_least_1(schedule.base_k);
  plan.block.m_l1 = at_least_1(schedule.l1_m);
  plan.block.n_l1 = at_least_1(schedule.l1_n);
  plan.block.k_l1 = at_least_1(schedule.l1_k);
  if (schedule.kind == emu::KernelScheduleKind::kStreamKDp) {
    plan.key.model = tl::KernelModel::kStreamK;
    plan.kernel_type = tl::KernelType::kMixed1To2;
    plan.block.single_core_k =
        at_least_1(tl::CeilDiv(static_cast<uint64_t>(problem.k), at_least_1(schedule.sk_k_splits)));
  }
  return plan;
}

void MsprofToProto(const emu::MsprofSummary& in, pb::MsprofSummary* out) {
  out->set_task_duration_us(in.task_duration_us);
  out->set_aic_time_us(in.aic_time_us);
  out->set_aic_mac_time_us(in.aic_mac_time_us);
  out->set_aic_mte1_time_us(in.aic_mte1_time_us);
  out->set_aic_mte2_time_us(in.aic_mte2_time_us);
  out->set_aic_fixpipe_time_us(in.aic_fixpipe_time_us);
  out->set_aic_mac_ratio(in.aic_mac_ratio);
  out->set_aic_mte1_ratio(in.aic_mte1_ratio);
  out->set_aic_mte2_ratio(in.aic_mte2_ratio);
  out->set_aic_fixpipe_ratio(in.aic_fixpipe_ratio);
  out->set_aic_cores(in.aic_cores);
  out->set_aiv_time_us(in.aiv_time_us);
  out->set_aiv_vec_time_us(in.aiv_vec_time_us);
  out->set_aiv_mte2_time_us(in.aiv_mte2_time_us);
  out->set_aiv_mte3_time_us(in.aiv_mte3_time_us);
  out->set_aiv_vec_ratio(in.aiv_vec_ratio);
  out->set_aiv_mte2_ratio(in.aiv_mte2_ratio);
  out->set_aiv_mte3_ratio(in.aiv_mte3_ratio);
  out->set_aiv_cores(in.aiv_cores);
}

}  // namespace npu::server
