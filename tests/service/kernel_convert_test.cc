// Tests of server/service/kernel_convert.h: a kernel schedule from the wire
// (defaults, every enum, one case per field the edge refuses), its echo, the
// plan that stands for it in the work estimate, and the msprof summary.
#include "server/service/kernel_convert.h"

#include <functional>
#include <string>
#include <vector>

#include "emulator/work_estimate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/tiling/validate.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

// The asc-devkit 950 multi-core kernel of the calibration file (case 5).
pb::KernelSchedule StaticGrid() {
  pb::KernelSchedule k;
  k.set_kind(pb::KERNEL_SCHEDULE_KIND_STATIC_GRID);
  k.set_block_dim(32);
  k.set_base_m(256);
  k.set_base_n(256);
  k.set_base_k(64);
  k.set_l1_m(256);
  k.set_l1_n(256);
  k.set_l1_k(256);
  k.set_single_core_m(2048);
  k.set_single_core_n(1024);
  k.set_inner_order(pb::TILE_ORDER_COL_MAJOR);
  return k;
}

TEST(KernelScheduleFromProtoTest, CopiesTheFieldsAndFillsTheDefaults) {
  absl::StatusOr<emu::KernelSchedule> k = KernelScheduleFromProto(StaticGrid());
  ASSERT_THAT(k, IsOk());
  EXPECT_EQ(k->kind, emu::KernelScheduleKind::kStaticGrid);
  EXPECT_EQ(k->block_dim, 32u);
  EXPECT_EQ(k->base_m, 256u);
  EXPECT_EQ(k->base_k, 64u);
  EXPECT_EQ(k->l1_k, 256u);
  EXPECT_EQ(k->single_core_m, 2048u);
  EXPECT_EQ(k->single_core_n, 1024u);
  EXPECT_EQ(k->inner_order, emu::TileOrder::kColMajor);
  // The defaults of the fields left at zero or absent.
  EXPECT_EQ(k->depth_a1, 2u);
  EXPECT_EQ(k->depth_b1, 2u);
  EXPECT_TRUE(k->l0_double_buffer);
  EXPECT_FALSE(k->l0c_double_buffer);
  EXPECT_FALSE(k->unit_flag);
  EXPECT_EQ(k->b_format, tl::Format::kNd);
  EXPECT_EQ(k->epilogue, emu::Epilogue::kNone);
  EXPECT_EQ(k->swizzle_offset, 1u);
  EXPECT_EQ(k->swizzle_direction, 0u);
  EXPECT_EQ(k->aswt_window, tl::kCannSwatWindowRows);
  EXPECT_EQ(k->sk_k_splits, 2u);
  EXPECT_EQ(k->l2_split_rounds, 0u);
}

TEST(KernelScheduleFromProtoTest, EveryKindAndEnumValue) {
  const std::pair<pb::KernelScheduleKind, emu::KernelScheduleKind> kinds[] = {
      {pb::KERNEL_SCHEDULE_KIND_SINGLE_CORE, emu::KernelScheduleKind::kSingleCore},
      {pb::KERNEL_SCHEDULE_KIND_STATIC_GRID, emu::KernelScheduleKind::kStaticGrid},
      {pb::KERNEL_SCHEDULE_KIND_ROUND_ROBIN_TILES, emu::KernelScheduleKind::kRoundRobinTiles},
      {pb::KERNEL_SCHEDULE_KIND_IDENTITY_SWIZZLE, emu::KernelScheduleKind::kIdentitySwizzle},
      {pb::KERNEL_SCHEDULE_KIND_ASWT, emu::KernelScheduleKind::kAswt},
      {pb::KERNEL_SCHEDULE_KIND_STREAM_K_DP, emu::KernelScheduleKind::kStreamKDp},
      {pb::KERNEL_SCHEDULE_KIND_SWAT, emu::KernelScheduleKind::kSwat},
      {pb::KERNEL_SCHEDULE_KIND_GROUPED_ROUND_ROBIN, emu::KernelScheduleKind::kGroupedRoundRobin},
  };
  for (const auto& [wire, kind] : kinds) {
    pb::KernelSchedule k = StaticGrid();
    k.set_kind(wire);
    absl::StatusOr<emu::KernelSchedule> converted = KernelScheduleFromProto(k);
    ASSERT_THAT(converted, IsOk()) << pb::KernelScheduleKind_Name(wire);
    EXPECT_EQ(converted->kind, kind);
    EXPECT_EQ(KernelScheduleToProto(*converted).kind(), wire);
  }
  pb::KernelSchedule k = StaticGrid();
  k.set_b_format(pb::FORMAT_FRACTAL_NZ);
  k.set_epilogue(pb::EPILOGUE_RELU_UB);
  k.set_inner_order(pb::TILE_ORDER_ROW_MAJOR);
  k.set_l0_double_buffer(false);
  k.set_unit_flag(true);
  k.set_l0c_double_buffer(true);
  k.set_mdl(true);
  absl::StatusOr<emu::KernelSchedule> converted = KernelScheduleFromProto(k);
  ASSERT_THAT(converted, IsOk());
  EXPECT_EQ(converted->b_format, tl::Format::kFractalNz);
  EXPECT_EQ(converted->epilogue, emu::Epilogue::kReluUb);
  EXPECT_EQ(converted->inner_order, emu::TileOrder::kRowMajor);
  EXPECT_FALSE(converted->l0_double_buffer);
  EXPECT_TRUE(converted->unit_flag);
  EXPECT_TRUE(converted->l0c_double_buffer);
  EXPECT_TRUE(converted->mdl);
  k.set_epilogue(pb::EPILOGUE_RELU_GM);
  EXPECT_EQ(KernelScheduleFromProto(k)->epilogue, emu::Epilogue::kReluGm);
  k.set_epilogue(pb::EPILOGUE_UNSPECIFIED);
  EXPECT_EQ(KernelScheduleFromProto(k)->epilogue, emu::Epilogue::kNone);
}

TEST(KernelScheduleFromProtoTest, SingleCoreDefaultsToOneCore) {
  pb::KernelSchedule k = StaticGrid();
  k.set_kind(pb::KERNEL_SCHEDULE_KIND_SINGLE_CORE);
  k.clear_block_dim();
  absl::StatusOr<emu::KernelSchedule> converted = KernelScheduleFromProto(k);
  ASSERT_THAT(converted, IsOk());
  EXPECT_EQ(converted->block_dim, 1u);
}

struct BadKernel {
  std::string name;
  std::function<void(pb::KernelSchedule&)> mutate;
  std::string message;  // names the field
};

class KernelScheduleEdgeTest : public ::testing::TestWithParam<BadKernel> {};

TEST_P(KernelScheduleEdgeTest, RefusedNamingTheField) {
  pb::KernelSchedule k = StaticGrid();
  GetParam().mutate(k);
  EXPECT_THAT(KernelScheduleFromProto(k),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Fields, KernelScheduleEdgeTest,
    ::testing::Values(
        BadKernel{"UnspecifiedKind",
                  [](pb::KernelSchedule& k) { k.set_kind(pb::KERNEL_SCHEDULE_KIND_UNSPECIFIED); },
                  "kernel_schedule.kind: required"},
        BadKernel{"UnknownKind",
                  [](pb::KernelSchedule& k) { k.set_kind(static_cast<pb::KernelScheduleKind>(9)); },
                  "kernel_schedule.kind: unknown value 9"},
        BadKernel{"NoBlockDim", [](pb::KernelSchedule& k) { k.clear_block_dim(); },
                  "kernel_schedule.block_dim: required with KERNEL_SCHEDULE_KIND_STATIC_GRID"},
        BadKernel{"HugeBase", [](pb::KernelSchedule& k) { k.set_base_m(uint64_t{1} << 40); },
                  "kernel_schedule.base_m: at most 2147483647"},
        BadKernel{"HugeBlock",
                  [](pb::KernelSchedule& k) { k.set_single_core_n(uint64_t{1} << 31); },
                  "kernel_schedule.single_core_n: at most 2147483647"},
        BadKernel{"DepthThree", [](pb::KernelSchedule& k) { k.set_depth_b1(3); },
                  "kernel_schedule.depth_b1: 1 or 2"},
        BadKernel{"SwizzleDirection", [](pb::KernelSchedule& k) { k.set_swizzle_direction(2); },
                  "kernel_schedule.swizzle_direction: 0 (along M) or 1 (along N)"},
        BadKernel{"OneSplit", [](pb::KernelSchedule& k) { k.set_sk_k_splits(1); },
                  "kernel_schedule.sk_k_splits: at least 2"},
        BadKernel{"UnknownOrder",
                  [](pb::KernelSchedule& k) { k.set_inner_order(static_cast<pb::TileOrder>(5)); },
                  "kernel_schedule.inner_order: unknown value 5"},
        BadKernel{"UnknownEpilogue",
                  [](pb::KernelSchedule& k) { k.set_epilogue(static_cast<pb::Epilogue>(8)); },
                  "kernel_schedule.epilogue: unknown value 8"},
        BadKernel{"UnknownFormat",
                  [](pb::KernelSchedule& k) { k.set_b_format(static_cast<pb::Format>(6)); },
                  "kernel_schedule.b_format: unknown value 6"}),
    [](const ::testing::TestParamInfo<BadKernel>& info) { return info.param.name; });

// The echo sets every field, defaults included, and reads back the same.
TEST(KernelScheduleToProtoTest, EchoRoundTrips) {
  absl::StatusOr<emu::KernelSchedule> k = KernelScheduleFromProto(StaticGrid());
  ASSERT_THAT(k, IsOk());
  const pb::KernelSchedule echo = KernelScheduleToProto(*k);
  EXPECT_EQ(echo.depth_a1(), 2u);
  EXPECT_TRUE(echo.has_l0_double_buffer());
  EXPECT_TRUE(echo.l0_double_buffer());
  EXPECT_EQ(echo.epilogue(), pb::EPILOGUE_NONE);
  EXPECT_EQ(echo.b_format(), pb::FORMAT_ND);
  EXPECT_EQ(echo.aswt_window(), tl::kCannSwatWindowRows);
  EXPECT_EQ(echo.single_core_m(), 2048u);
  absl::StatusOr<emu::KernelSchedule> again = KernelScheduleFromProto(echo);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(KernelScheduleToProto(*again).SerializeAsString(), echo.SerializeAsString());
}

// The work estimate sees the kernel's tiles: one MMAD per base block and K
// step, and Stream-K's K slices as units.
TEST(WorkEstimatePlanTest, CountsTheKernelsBlocksAndSlices) {
  absl::StatusOr<emu::KernelSchedule> k = KernelScheduleFromProto(StaticGrid());
  ASSERT_THAT(k, IsOk());
  const tl::MatmulProblem problem = Problem(8192, 8192, 8192);
  emu::EmulationWork work = emu::EstimateEmulationWork(WorkEstimatePlan(*k, problem), problem);
  EXPECT_EQ(work.base_blocks, 32u * 32u);
  EXPECT_EQ(work.k_steps, 128u);
  EXPECT_EQ(work.min_ops, 32u * 32u * 128u);

  // A 16x16x16 tile on the same problem: far beyond the server's default
  // limit of 3M operations.
  emu::KernelSchedule tiny = *k;
  tiny.base_m = tiny.base_n = tiny.base_k = tiny.l1_m = tiny.l1_n = tiny.l1_k = 16;
  work = emu::EstimateEmulationWork(WorkEstimatePlan(tiny, problem), problem);
  EXPECT_GT(work.min_ops, uint64_t{3'000'000});

  // Stream-K: the 8 tiles past the data-parallel rounds each split in 4.
  emu::KernelSchedule stream_k = *k;
  stream_k.kind = emu::KernelScheduleKind::kStreamKDp;
  stream_k.sk_k_splits = 4;
  stream_k.l1_m = stream_k.base_m = 128;
  stream_k.l1_n = stream_k.base_n = 256;
  const tl::MatmulProblem small = Problem(1024, 1280, 4096);  // 8 x 5 = 40 tiles
  work = emu::EstimateEmulationWork(WorkEstimatePlan(stream_k, small), small);
  EXPECT_EQ(work.units, 32u + 8u * 4u);

  // Zero tiles (refused later by the emulator) never divide by zero.
  emu::KernelSchedule zero = *k;
  zero.base_m = zero.l1_m = 0;
  work = emu::EstimateEmulationWork(WorkEstimatePlan(zero, problem), problem);
  EXPECT_GT(work.min_ops, 0u);
}

TEST(MsprofToProtoTest, CopiesEveryFigure) {
  emu::MsprofSummary m;
  m.task_duration_us = 1;
  m.aic_time_us = 2;
  m.aic_mac_time_us = 3;
  m.aic_mte1_time_us = 4;
  m.aic_mte2_time_us = 5;
  m.aic_fixpipe_time_us = 6;
  m.aic_mac_ratio = 7;
  m.aic_mte1_ratio = 8;
  m.aic_mte2_ratio = 9;
  m.aic_fixpipe_ratio = 10;
  m.aic_cores = 11;
  m.aiv_time_us = 12;
  m.aiv_vec_time_us = 13;
  m.aiv_mte2_time_us = 14;
  m.aiv_mte3_time_us = 15;
  m.aiv_vec_ratio = 16;
  m.aiv_mte2_ratio = 17;
  m.aiv_mte3_ratio = 18;
  m.aiv_cores = 19;
  pb::MsprofSummary out;
  MsprofToProto(m, &out);
  // Field i of the message holds the value i (the struct's order is the
  // proto's).
  const google::protobuf::Descriptor* descriptor = pb::MsprofSummary::descriptor();
  ASSERT_EQ(descriptor->field_count(), 19);
  const google::protobuf::Reflection* reflection = out.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    const double value = field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE
                             ? reflection->GetDouble(out, field)
                             : reflection->GetUInt32(out, field);
    EXPECT_EQ(value, field->number()) << field->name();
  }
}

// The schema /2 fields: the MX scales, L1 banks, the mix kernel and the
// groups, their defaults, their echo and what the edge refuses.
TEST(KernelScheduleFromProtoTest, QuantizedAndMixFieldsRoundTrip) {
  pb::KernelSchedule wire = StaticGrid();
  wire.set_kind(pb::KERNEL_SCHEDULE_KIND_GROUPED_ROUND_ROBIN);
  wire.set_tile_numbering(pb::TILE_NUMBERING_COL_MAJOR);
  wire.set_full_load_a(true);
  wire.set_scale_l1_k(2048);
  wire.set_scale_l1_buffers(1);
  wire.set_l1_bank_split(pb::L1_BANK_SPLIT_A_B);
  wire.mutable_l1_offsets()->add_a(0);
  wire.mutable_l1_offsets()->add_a(65536);
  wire.mutable_l1_offsets()->add_scale_b(393216);
  wire.set_epilogue(pb::EPILOGUE_DEQUANT_GELU_AIV);
  wire.set_aiv_per_aic(2);
  wire.set_workspace_slots(4);
  wire.set_aiv_tile_rows(24);
  wire.set_aiv_tile_cols(256);
  wire.set_aiv_split(pb::AIV_SPLIT_ALTERNATE);
  wire.add_group_m(1024);
  wire.add_group_m(512);
  wire.set_b_per_group(true);
  absl::StatusOr<emu::KernelSchedule> k = KernelScheduleFromProto(wire);
  ASSERT_THAT(k, IsOk());
  EXPECT_EQ(k->kind, emu::KernelScheduleKind::kGroupedRoundRobin);
  EXPECT_EQ(k->tile_numbering, emu::TileNumbering::kColMajor);
  EXPECT_TRUE(k->full_load_a);
  EXPECT_EQ(k->scale_l1_k, 2048u);
  EXPECT_EQ(k->scale_l1_buffers, 1u);
  EXPECT_EQ(k->l1_bank_split, emu::L1BankSplit::kAB);
  EXPECT_EQ(k->l1_offsets.a, (std::vector<uint64_t>{0, 65536}));
  EXPECT_EQ(k->l1_offsets.scale_b, (std::vector<uint64_t>{393216}));
  EXPECT_EQ(k->epilogue, emu::Epilogue::kDequantGeluAiv);
  EXPECT_EQ(k->aiv_per_aic, 2u);
  EXPECT_EQ(k->workspace_slots, 4u);
  EXPECT_EQ(k->aiv_tile_rows, 24u);
  EXPECT_EQ(k->aiv_split, emu::AivSplit::kAlternate);
  EXPECT_EQ(k->group_m, (std::vector<uint64_t>{1024, 512}));
  EXPECT_TRUE(k->b_per_group);
  // The echo carries every field, and reads back to the same schedule.
  absl::StatusOr<emu::KernelSchedule> again = KernelScheduleFromProto(KernelScheduleToProto(*k));
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->group_m, k->group_m);
  EXPECT_EQ(again->l1_offsets.a, k->l1_offsets.a);
  EXPECT_EQ(again->aiv_split, k->aiv_split);
  EXPECT_EQ(again->scale_l1_buffers, 1u);
  // Defaults: tail split 1 x 1, two scale buffers, halves, no slots.
  absl::StatusOr<emu::KernelSchedule> plain = KernelScheduleFromProto(StaticGrid());
  ASSERT_THAT(plain, IsOk());
  EXPECT_EQ(plain->tail_split_m, 1u);
  EXPECT_EQ(plain->tail_split_n, 1u);
  EXPECT_EQ(plain->scale_l1_buffers, 2u);
  EXPECT_EQ(plain->aiv_split, emu::AivSplit::kHalves);
  EXPECT_EQ(plain->workspace_slots, 0u);
  EXPECT_TRUE(plain->l1_offsets.empty());

  const std::pair<std::function<void(pb::KernelSchedule&)>, std::string> bad[] = {
      {[](pb::KernelSchedule& w) { w.set_aiv_per_aic(3); }, "kernel_schedule.aiv_per_aic: "},
      {[](pb::KernelSchedule& w) { w.set_scale_l1_buffers(3); },
       "kernel_schedule.scale_l1_buffers: 1 or 2"},
      {[](pb::KernelSchedule& w) { w.add_group_m(0); }, "kernel_schedule.group_m: every group"},
      {[](pb::KernelSchedule& w) { w.set_aiv_split(static_cast<pb::AivSplit>(9)); },
       "kernel_schedule.aiv_split: unknown value 9"},
      {[](pb::KernelSchedule& w) { w.set_l1_bank_split(static_cast<pb::L1BankSplit>(9)); },
       "kernel_schedule.l1_bank_split: unknown value 9"},
      {[](pb::KernelSchedule& w) { w.set_tile_numbering(static_cast<pb::TileNumbering>(9)); },
       "kernel_schedule.tile_numbering: unknown value 9"},
  };
  for (const auto& [edit, message] : bad) {
    pb::KernelSchedule w = StaticGrid();
    edit(w);
    EXPECT_THAT(KernelScheduleFromProto(w),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)));
  }
}

}  // namespace
}  // namespace npu::server
