// Tests of client/tilingctl/execute.h: .npy <-> wire tensors, tiling files
// and the execute report.
#include "client/tilingctl/execute.h"

#include <string>

#include "client/tilingctl/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;
using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

NpyArray Array(NpyDtype dtype, std::vector<int64_t> shape) {
  NpyArray array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.data.assign(array.elements() * NpyItemBytes(dtype), '\x11');
  return array;
}

TEST(TensorFromNpyTest, MatchesEachDtype) {
  absl::StatusOr<pb::Tensor> tensor =
      TensorFromNpy(Array(NpyDtype::kFloat16, {3, 4}), pb::DATA_TYPE_FLOAT16, 2, "--a A.npy");
  ASSERT_THAT(tensor, IsOk());
  EXPECT_EQ(tensor->dtype(), pb::DATA_TYPE_FLOAT16);
  EXPECT_THAT(tensor->shape(), ::testing::ElementsAre(3, 4));
  EXPECT_EQ(tensor->data().size(), 24u);
  EXPECT_THAT(TensorFromNpy(Array(NpyDtype::kUint16, {4}), pb::DATA_TYPE_BFLOAT16, 1, "--bias"),
              IsOk());
  EXPECT_THAT(TensorFromNpy(Array(NpyDtype::kFloat32, {2, 2}), pb::DATA_TYPE_FLOAT32, 2, "--b"),
              IsOk());
}

TEST(TensorFromNpyTest, MismatchesSayWhatToChange) {
  EXPECT_THAT(TensorFromNpy(Array(NpyDtype::kFloat32, {3, 4}), pb::DATA_TYPE_FLOAT16, 2, "--a A"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--a A: the file holds float32 ('<f4'), but the operand is "
                                 "float16, which needs float16 ('<f2'); pass --dtype")));
  // bfloat16 travels as uint16 bits; a float16 file is not that.
  EXPECT_THAT(TensorFromNpy(Array(NpyDtype::kFloat16, {3, 4}), pb::DATA_TYPE_BFLOAT16, 2, "--b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("needs uint16 ('<u2') holding the bfloat16 bits")));
  EXPECT_THAT(TensorFromNpy(Array(NpyDtype::kFloat16, {3, 4, 5}), pb::DATA_TYPE_FLOAT16, 2, "--a"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--a: shape (3, 4, 5) has 3 dimensions, expected 2")));
}

TEST(NpyFromTensorTest, RoundTripsC) {
  pb::Tensor c;
  c.set_dtype(pb::DATA_TYPE_BFLOAT16);
  c.add_shape(2);
  c.add_shape(3);
  c.set_data(std::string(12, '\x7f'));
  absl::StatusOr<NpyArray> array = NpyFromTensor(c);
  ASSERT_THAT(array, IsOk());
  EXPECT_EQ(array->dtype, NpyDtype::kUint16);
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 3}));
  absl::StatusOr<pb::Tensor> back = TensorFromNpy(*array, pb::DATA_TYPE_BFLOAT16, 2, "C");
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->SerializeAsString(), c.SerializeAsString());
  c.mutable_data()->pop_back();
  EXPECT_THAT(NpyFromTensor(c), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ParseTilingFileTest, ReadsTileJsonAndExecuteJson) {
  pb::TilingResponse tiling;
  tiling.set_tiling_key(4162);
  tiling.set_block_dim(32);
  tiling.set_tiling_struct("MatMulV3BasicTilingData");
  pb::TilingField* field = tiling.add_fields();
  field->set_name("baseM");
  field->set_value(128);
  field->set_bits(32);
  const std::string tile_json = ToJson(tiling);
  absl::StatusOr<pb::TilingResponse> parsed = ParseTilingFile(tile_json);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->SerializeAsString(), tiling.SerializeAsString());

  pb::ExecuteResponse response;
  *response.mutable_tiling() = tiling;
  response.mutable_timing()->set_predicted_cycles(5);
  parsed = ParseTilingFile(ToJson(response));
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->tiling_key(), 4162u);

  // Hand edits: snake_case names are accepted, typos are not.
  parsed = ParseTilingFile(R"({"tiling_key": "4162", "block_dim": 24})");
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->block_dim(), 24u);
  EXPECT_THAT(ParseTilingFile(R"({"blockDims": 24})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a TilingResponse")));
  EXPECT_THAT(ParseTilingFile("{"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseTilingFile("[1]"), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("the top level must be an object")));
}

TEST(FormatExecuteTest, ShowsTheTilingTheErrorAndThePerCoreTable) {
  pb::ExecuteResponse r;
  pb::TilingResponse* t = r.mutable_tiling();
  t->set_strategy("BASIC_STREAM_K");
  t->set_tiling_key(4162);
  t->mutable_key()->set_model_name("STREAM_K");
  t->set_block_dim(32);
  t->set_kernel_type_name("MIX_AIC_1_AIV_2");
  pb::TilingField* field = t->add_fields();
  field->set_name("baseM");
  field->set_value(256);
  t->mutable_platform()->set_name("ascend950pr");
  t->mutable_platform()->set_cube_freq_mhz(1650);
  r.set_input_source(pb::INPUT_SOURCE_SEED);
  r.set_seed(9);
  r.mutable_accuracy()->set_passed(true);
  r.mutable_accuracy()->set_max_abs_error(0.001);
  r.mutable_accuracy()->set_worst_row(3);
  r.mutable_accuracy()->set_worst_col(4);
  pb::TimingReport* timing = r.mutable_timing();
  timing->set_predicted_cycles(16500);
  timing->set_predicted_time_us(10);
  timing->set_cube_utilization(0.875);
  timing->set_bound_resource("CUBE");
  pb::CoreTiming* core = timing->add_cores();
  core->set_kind(pb::CORE_KIND_AIV);
  core->set_core(7);
  core->set_units(2);
  core->mutable_busy_cycles()->set_vec(1234);
  r.set_threads_used(2);
  const std::string out = FormatExecute(r);
  EXPECT_THAT(out, HasSubstr("BASIC_STREAM_K, key 4162 (STREAM_K"));
  EXPECT_THAT(out, HasSubstr("baseM=256"));
  EXPECT_THAT(out, HasSubstr("generated from seed 9"));
  EXPECT_THAT(out, HasSubstr("accuracy vs fp64 reference: PASS"));
  EXPECT_THAT(out, HasSubstr("C[3, 4]"));
  EXPECT_THAT(out, HasSubstr("16500 cycles = 10.000 us"));
  EXPECT_THAT(out, HasSubstr("87.5 %"));
  EXPECT_THAT(out, HasSubstr("bound by             CUBE"));
  EXPECT_THAT(out, ::testing::ContainsRegex("AIV 7 +2 +0 +0 +0 +0 +0 +1234 +0"));

  r.clear_accuracy();
  r.set_input_source(pb::INPUT_SOURCE_NONE);
  EXPECT_THAT(FormatExecute(r), ::testing::Not(HasSubstr("accuracy")));
  EXPECT_THAT(FormatExecute(r), HasSubstr("none (timing only)"));
}

// A kernel schedule's run: the schedule instead of the tiling, the chip
// with its architecture, and the msprof columns (AIV only when they ran).
TEST(FormatExecuteTest, ShowsTheKernelScheduleAndTheMsprofColumns) {
  pb::ExecuteResponse r;
  pb::KernelSchedule* k = r.mutable_kernel_schedule();
  k->set_kind(pb::KERNEL_SCHEDULE_KIND_STATIC_GRID);
  k->set_block_dim(24);
  k->set_base_m(128);
  k->set_base_n(256);
  k->set_base_k(64);
  k->set_l1_m(128);
  k->set_l1_n(256);
  k->set_l1_k(256);
  k->set_depth_a1(2);
  k->set_depth_b1(1);
  k->set_single_core_m(4096);
  k->set_single_core_n(683);
  k->set_inner_order(pb::TILE_ORDER_COL_MAJOR);
  k->set_l2_split_rounds(2);
  k->set_unit_flag(true);
  pb::ChipSpec* chip = r.mutable_platform();
  chip->set_name("ascend910b1");
  chip->set_npu_arch("DAV_2201");
  chip->set_aic_num(24);
  chip->set_aiv_num(48);
  chip->set_cube_freq_mhz(1850);
  r.set_input_source(pb::INPUT_SOURCE_NONE);
  pb::MsprofSummary* m = r.mutable_timing()->mutable_msprof();
  m->set_task_duration_us(4100.5);
  m->set_aic_time_us(4000);
  m->set_aic_mac_time_us(3000);
  m->set_aic_mac_ratio(0.75);
  m->set_aic_mte2_time_us(2000);
  m->set_aic_mte2_ratio(0.5);
  m->set_aic_cores(24);
  std::string out = FormatExecute(r);
  EXPECT_THAT(out, HasSubstr("kernel         static_grid, block_dim 24, base 128x256x64, "
                             "L1 128x256x256"));
  EXPECT_THAT(out, HasSubstr("depth 2/1, L0 single, L0C single, unit_flag on, B ND, "
                             "block 4096x683, col_major, 2 L2 rounds"));
  EXPECT_THAT(out, HasSubstr("platform       ascend910b1 (DAV_2201): 24 AIC, 48 AIV, 1850 MHz"));
  EXPECT_THAT(out, HasSubstr("msprof task duration 4100.500 us"));
  EXPECT_THAT(out, HasSubstr("aic (24 cores)       time 4000.000 us, mac 3000.000 us (0.750), "
                             "mte1 0.000 us (0.000), mte2 2000.000 us (0.500), "
                             "fixpipe 0.000 us (0.000)"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("aiv (")));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("tiling ")));
  m->set_aiv_cores(48);
  m->set_aiv_vec_time_us(12.5);
  m->set_aiv_vec_ratio(0.25);
  out = FormatExecute(r);
  EXPECT_THAT(out, HasSubstr("aiv (48 cores)       time 0.000 us, vec 12.500 us (0.250)"));
}

}  // namespace
}  // namespace npu::client
