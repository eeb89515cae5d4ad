// Tests of client/tilingctl/calibrate.h: reading npu-measured-matmul/1 rows
// into Execute requests (the kernel object key by key, the chip and its
// overrides, the errors naming the row and the field), the report's figures
// and its formats. A fake Execute stands for the server, so nothing here
// depends on how well the timing model is calibrated.
#include "client/tilingctl/calibrate.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace npu::client {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
namespace pb = ::npu::tiling::v1;
using Json = nlohmann::json;

// The server's profiles, as ListPlatforms answers them.
pb::ListPlatformsResponse Platforms() {
  pb::ListPlatformsResponse response;
  pb::ChipSpec* pr = response.add_platforms();
  pr->set_name("ascend950pr");
  pr->set_npu_arch("DAV_3510");
  pr->set_aic_num(32);
  pr->set_aiv_num(64);
  pr->set_cube_freq_mhz(1650);
  pb::ChipSpec* a2 = response.add_platforms();
  a2->set_name("ascend910b1");
  a2->set_npu_arch("DAV_2201");
  a2->set_aic_num(24);
  a2->set_aiv_num(48);
  a2->set_cube_freq_mhz(1850);
  response.set_default_platform("ascend950pr");
  return response;
}

// A kernel object with every key, as the calibration file writes them.
Json Kernel() {
  return Json::parse(R"json({
    "schedule": "static_grid", "block_dim": 24, "base_m": 128, "base_n": 256, "base_k": 64,
    "l1_m": 128, "l1_n": 256, "l1_k": 256, "depth_a1": 2, "depth_b1": 2,
    "single_core_m": 4096, "single_core_n": 683, "inner_order": "col_major",
    "swizzle_offset": null, "swizzle_direction": null, "aswt_window": null, "sk_k_splits": null,
    "l0_double_buffer": true, "l0c_double_buffer": false, "unit_flag": true, "mdl": true,
    "l2_split_rounds": 2, "b_format": "ND", "epilogue": "none", "batch": null,
    "notes": "free text"})json");
}

Json Row(const std::string& id = "r1") {
  Json row = Json::parse(R"json({
    "source": "somewhere", "chip": "ascend910b1", "aic": 24, "aiv": null, "freq_mhz": 1850,
    "m": 8192, "n": 8192, "k": 8192, "dtype_in": "float16", "dtype_out": "float16",
    "trans_a": false, "trans_b": true, "bias": false, "tiling": {"base_m": 128},
    "measured": {"task_duration_us": 100.0, "aic_time_us": 99.0, "aic_mac_time_us": 50.0,
                 "aic_mte1_time_us": null, "aic_mte2_time_us": 80.0,
                 "aic_fixpipe_time_us": null, "aic_mac_ratio": 0.5, "other": "text"},
    "variant": "v", "reliability": "high", "notes": "n"})json");
  row["id"] = id;
  row["kernel"] = Kernel();
  return row;
}

std::string File(const Json& rows) {
  Json file;
  file["schema"] = kCalibrationSchema;
  file["origin"] = "test";
  file["rows"] = rows;
  return file.dump();
}

TEST(KernelScheduleFromJsonTest, ReadsEveryKey) {
  absl::StatusOr<pb::KernelSchedule> k = KernelScheduleFromJson(Kernel(), "kernel");
  ASSERT_THAT(k, IsOk());
  EXPECT_EQ(k->kind(), pb::KERNEL_SCHEDULE_KIND_STATIC_GRID);
  EXPECT_EQ(k->block_dim(), 24u);
  EXPECT_EQ(k->base_m(), 128u);
  EXPECT_EQ(k->base_n(), 256u);
  EXPECT_EQ(k->base_k(), 64u);
  EXPECT_EQ(k->l1_k(), 256u);
  EXPECT_EQ(k->depth_a1(), 2u);
  EXPECT_EQ(k->single_core_n(), 683u);
  EXPECT_EQ(k->inner_order(), pb::TILE_ORDER_COL_MAJOR);
  EXPECT_TRUE(k->has_l0_double_buffer());
  EXPECT_TRUE(k->l0_double_buffer());
  EXPECT_FALSE(k->l0c_double_buffer());
  EXPECT_TRUE(k->unit_flag());
  EXPECT_TRUE(k->mdl());
  EXPECT_EQ(k->l2_split_rounds(), 2u);
  EXPECT_EQ(k->b_format(), pb::FORMAT_ND);
  EXPECT_EQ(k->epilogue(), pb::EPILOGUE_NONE);
  // Nulls leave their fields unset: the server's defaults.
  EXPECT_EQ(k->swizzle_offset(), 0u);
  EXPECT_EQ(k->aswt_window(), 0u);
  EXPECT_EQ(k->sk_k_splits(), 0u);
}

TEST(KernelScheduleFromJsonTest, NullsAndAbsentKeysAreUnset) {
  Json kernel = Json::parse(R"json({"schedule": "aswt", "l0_double_buffer": null,
                                    "b_format": "FRACTAL_NZ", "inner_order": null})json");
  absl::StatusOr<pb::KernelSchedule> k = KernelScheduleFromJson(kernel, "");
  ASSERT_THAT(k, IsOk());
  EXPECT_EQ(k->kind(), pb::KERNEL_SCHEDULE_KIND_ASWT);
  EXPECT_FALSE(k->has_l0_double_buffer());
  EXPECT_EQ(k->inner_order(), pb::TILE_ORDER_UNSPECIFIED);
  EXPECT_EQ(k->b_format(), pb::FORMAT_FRACTAL_NZ);
  EXPECT_EQ(k->block_dim(), 0u);
}

TEST(KernelScheduleFromJsonTest, EverySchedulName) {
  for (const auto& [name, kind] :
       {std::make_pair("single_core", pb::KERNEL_SCHEDULE_KIND_SINGLE_CORE),
        std::make_pair("static_grid", pb::KERNEL_SCHEDULE_KIND_STATIC_GRID),
        std::make_pair("round_robin_tiles", pb::KERNEL_SCHEDULE_KIND_ROUND_ROBIN_TILES),
        std::make_pair("identity_swizzle", pb::KERNEL_SCHEDULE_KIND_IDENTITY_SWIZZLE),
        std::make_pair("aswt", pb::KERNEL_SCHEDULE_KIND_ASWT),
        std::make_pair("stream_k_dp", pb::KERNEL_SCHEDULE_KIND_STREAM_K_DP)}) {
    Json kernel = Kernel();
    kernel["schedule"] = name;
    absl::StatusOr<pb::KernelSchedule> k = KernelScheduleFromJson(kernel, "kernel");
    ASSERT_THAT(k, IsOk()) << name;
    EXPECT_EQ(k->kind(), kind) << name;
  }
}

struct BadKey {
  std::string name;
  std::string key;
  Json value;  // discarded: the key is removed
  std::string message;
};

class KernelScheduleFromJsonErrorTest : public ::testing::TestWithParam<BadKey> {};

TEST_P(KernelScheduleFromJsonErrorTest, NamesTheKey) {
  Json kernel = Kernel();
  if (GetParam().value.is_discarded()) {
    kernel.erase(GetParam().key);
  } else {
    kernel[GetParam().key] = GetParam().value;
  }
  EXPECT_THAT(KernelScheduleFromJson(kernel, "kernel"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Keys, KernelScheduleFromJsonErrorTest,
    ::testing::Values(
        BadKey{"UnknownKey", "base_z", 64, "kernel.base_z: unknown key; expected schedule, "},
        BadKey{"StringInteger", "base_k", "64", "kernel.base_k: not an integer: \"64\""},
        BadKey{"FloatInteger", "l1_k", 1.5, "kernel.l1_k: not an integer: 1.5"},
        BadKey{"Negative", "block_dim", -1, "kernel.block_dim: negative: -1"},
        BadKey{"TooBigForTheWire", "depth_a1", 5000000000, "kernel.depth_a1: at most 4294967295"},
        BadKey{"NotABool", "unit_flag", 1, "kernel.unit_flag: not a boolean: 1"},
        BadKey{"NoSchedule", "schedule", Json::value_t::discarded, "kernel.schedule: required"},
        BadKey{"UnknownSchedule", "schedule", "zigzag",
               "kernel.schedule: unknown value \"zigzag\"; expected single_core, static_grid"},
        BadKey{"UnknownOrder", "inner_order", "diagonal", "kernel.inner_order: unknown value"},
        BadKey{"UnknownEpilogue", "epilogue", "gelu", "kernel.epilogue: unknown value \"gelu\""},
        BadKey{"UnknownFormat", "b_format", "NCHW", "kernel.b_format: "},
        BadKey{"Batched", "batch", 4, "kernel.batch: 4: batched kernels are not modelled"},
        BadKey{"NotesNotText", "notes", 3, "kernel.notes: not a string"}),
    [](const ::testing::TestParamInfo<BadKey>& info) { return info.param.name; });

TEST(KernelScheduleFromJsonTest, NotAnObject) {
  EXPECT_THAT(KernelScheduleFromJson(Json::array(), "kernel"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("kernel: not an object")));
  Json kernel = Kernel();
  kernel["base_x"] = 1;
  EXPECT_THAT(KernelScheduleFromJson(kernel, ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("base_x: unknown key")));
}

TEST(ParseCalibrationFileTest, RowBecomesATimingOnlyKernelRequest) {
  absl::StatusOr<std::vector<CalibrationRow>> rows =
      ParseCalibrationFile(File(Json::array({Row()})), Platforms());
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->size(), 1u);
  const CalibrationRow& row = rows->front();
  EXPECT_EQ(row.id, "r1");
  ASSERT_THAT(row.request, IsOk());
  const pb::ExecuteRequest& request = *row.request;
  EXPECT_EQ(request.id(), "r1");
  EXPECT_TRUE(request.timing_only());
  EXPECT_EQ(request.platform(), "ascend910b1");
  // aic and freq_mhz equal the profile's: no overrides.
  EXPECT_FALSE(request.has_platform_overrides());
  EXPECT_EQ(request.problem().m(), 8192);
  EXPECT_EQ(request.problem().dtype_a(), pb::DATA_TYPE_FLOAT16);
  EXPECT_EQ(request.problem().dtype_b(), pb::DATA_TYPE_FLOAT16);
  EXPECT_EQ(request.problem().dtype_c(), pb::DATA_TYPE_FLOAT16);
  EXPECT_TRUE(request.problem().trans_b());
  EXPECT_FALSE(request.problem().has_bias());
  EXPECT_EQ(request.problem().format_b(), pb::FORMAT_UNSPECIFIED);
  EXPECT_EQ(request.kernel_schedule().kind(), pb::KERNEL_SCHEDULE_KIND_STATIC_GRID);
  EXPECT_EQ(row.measured_us, 100.0);
  // Only the published pipes, in report order.
  ASSERT_EQ(row.measured_pipes.size(), 2u);
  EXPECT_EQ(row.measured_pipes[0].first, "aic_mac_time_us");
  EXPECT_EQ(row.measured_pipes[1].first, "aic_mte2_time_us");
  EXPECT_EQ(row.measured_pipes[1].second, 80.0);
}

TEST(ParseCalibrationFileTest, ChipNamesAndOverrides) {
  Json ascend950 = Row("a");
  ascend950["chip"] = "ascend950";
  ascend950["aic"] = 28;  // the 28-AIC SKU
  ascend950["freq_mhz"] = nullptr;
  ascend950["dtype_out"] = "float32";
  ascend950["bias"] = true;
  Json pr = Row("b");
  pr["chip"] = "ascend950pr";
  pr["aic"] = 32;
  pr["aiv"] = 64;
  pr["freq_mhz"] = 1500;
  absl::StatusOr<std::vector<CalibrationRow>> rows =
      ParseCalibrationFile(File(Json::array({ascend950, pr})), Platforms());
  ASSERT_THAT(rows, IsOk());
  ASSERT_THAT((*rows)[0].request, IsOk());
  const pb::ExecuteRequest& a = *(*rows)[0].request;
  EXPECT_EQ(a.platform(), "ascend950pr");
  EXPECT_TRUE(a.platform_overrides().has_aic_num());
  EXPECT_EQ(a.platform_overrides().aic_num(), 28u);
  EXPECT_FALSE(a.platform_overrides().has_cube_freq_mhz());
  EXPECT_EQ(a.problem().dtype_c(), pb::DATA_TYPE_FLOAT32);
  EXPECT_TRUE(a.problem().has_bias());
  EXPECT_EQ(a.problem().dtype_bias(), pb::DATA_TYPE_FLOAT32);
  ASSERT_THAT((*rows)[1].request, IsOk());
  const pb::ExecuteRequest& b = *(*rows)[1].request;
  EXPECT_FALSE(b.platform_overrides().has_aic_num());
  EXPECT_FALSE(b.platform_overrides().has_aiv_num());
  EXPECT_EQ(b.platform_overrides().cube_freq_mhz(), 1500u);
}

// A bad row names itself and the field; the other rows still read.
TEST(ParseCalibrationFileTest, BadRowsNameTheRowAndTheField) {
  Json unknown_chip = Row("x1");
  unknown_chip["chip"] = "ascend310p";
  Json bad_kernel = Row("s3-streamk");
  bad_kernel["kernel"]["base_k"] = "sixty-four";
  Json no_duration = Row("x3");
  no_duration["measured"].erase("task_duration_us");
  Json zero_pipe = Row("x4");
  zero_pipe["measured"]["aic_mte1_time_us"] = 0;
  Json no_m = Row("x5");
  no_m.erase("m");
  Json bad_dtype = Row("x6");
  bad_dtype["dtype_in"] = "int2";
  Json no_id = Row();
  no_id.erase("id");
  absl::StatusOr<std::vector<CalibrationRow>> rows =
      ParseCalibrationFile(File(Json::array({unknown_chip, bad_kernel, no_duration, zero_pipe, no_m,
                                             bad_dtype, no_id, Row("ok")})),
                           Platforms());
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->size(), 8u);
  const std::string expected[] = {
      "row x1: chip: unknown chip \"ascend310p\"; expected ascend950pr, ascend950 or ascend910b1",
      "row s3-streamk: kernel.base_k: not an integer",
      "row x3: measured.task_duration_us: required",
      "row x4: measured.aic_mte1_time_us: not a positive number: 0",
      "row x5: m: required",
      "row x6: dtype_in: ",
      "row #6: id: required",
  };
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_THAT((*rows)[i].request,
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(expected[i])))
        << i;
  }
  EXPECT_THAT((*rows)[7].request, IsOk());
}

TEST(ParseCalibrationFileTest, ChipTheServerDoesNotHave) {
  pb::ListPlatformsResponse only_950 = Platforms();
  only_950.mutable_platforms()->RemoveLast();
  absl::StatusOr<std::vector<CalibrationRow>> rows =
      ParseCalibrationFile(File(Json::array({Row()})), only_950);
  ASSERT_THAT(rows, IsOk());
  EXPECT_THAT(rows->front().request,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("row r1: chip: the server has no platform \"ascend910b1\"")));
}

TEST(ParseCalibrationFileTest, FileErrors) {
  EXPECT_THAT(ParseCalibrationFile("{", Platforms()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not valid JSON")));
  EXPECT_THAT(
      ParseCalibrationFile(R"({"schema": "cann950-tiling-cases/1", "rows": []})", Platforms()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("schema: expected \"npu-measured-matmul/1\" or "
                         "\"npu-measured-matmul/2\", got \"cann950-tiling-cases/1\"")));
  EXPECT_THAT(ParseCalibrationFile(R"({"rows": []})", Platforms()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("got none")));
  EXPECT_THAT(
      ParseCalibrationFile(R"({"schema": "npu-measured-matmul/1", "rows": []})", Platforms()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rows: ")));
  EXPECT_THAT(ParseCalibrationFile("[]", Platforms()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("top level")));
}

// A fake Execute that predicts `factor` times the measured duration and
// half of each measured pipe figure.
absl::StatusOr<pb::ExecuteResponse> Predict(const pb::ExecuteRequest& request,
                                            const std::vector<CalibrationRow>& rows,
                                            double factor) {
  for (const CalibrationRow& row : rows) {
    if (row.id != request.id()) continue;
    pb::ExecuteResponse response;
    response.mutable_platform()->set_name(request.platform());
    pb::MsprofSummary* m = response.mutable_timing()->mutable_msprof();
    m->set_task_duration_us(row.measured_us * factor);
    m->set_aic_mac_time_us(25.0);   // 50 measured: -50%
    m->set_aic_mte2_time_us(88.0);  // 80 measured: +10%
    return response;
  }
  return absl::NotFoundError("no such row");
}

TEST(RunCalibrationTest, ErrorsMedianMaximumAndPipes) {
  absl::StatusOr<std::vector<CalibrationRow>> rows =
      ParseCalibrationFile(File(Json::array({Row("a"), Row("b"), Row("c")})), Platforms());
  ASSERT_THAT(rows, IsOk());
  // a: +10%, b: -20%, c: +5%.
  const std::map<std::string, double> factors = {{"a", 1.10}, {"b", 0.80}, {"c", 1.05}};
  CalibrationReport report = RunCalibration(*rows, [&](const pb::ExecuteRequest& request) {
    return Predict(request, *rows, factors.at(request.id()));
  });
  EXPECT_EQ(report.ran, 3);
  EXPECT_EQ(report.failed, 0);
  ASSERT_EQ(report.rows.size(), 3u);
  EXPECT_EQ(report.rows[0].platform, "ascend910b1");
  EXPECT_NEAR(report.rows[0].error_pct, 10.0, 1e-9);
  EXPECT_NEAR(report.rows[1].error_pct, -20.0, 1e-9);
  EXPECT_NEAR(report.median_abs_error_pct, 10.0, 1e-9);
  EXPECT_NEAR(report.max_abs_error_pct, 20.0, 1e-9);
  ASSERT_EQ(report.rows[0].pipes.size(), 2u);
  EXPECT_NEAR(report.rows[0].pipes[0].error_pct, -50.0, 1e-9);
  EXPECT_NEAR(report.rows[0].pipes[1].error_pct, 10.0, 1e-9);
  ASSERT_EQ(report.pipes.size(), 7u);
  EXPECT_EQ(report.pipes[0].name, "aic_mac_time_us");
  EXPECT_EQ(report.pipes[0].rows, 3);
  EXPECT_NEAR(report.pipes[0].max_abs_error_pct, 50.0, 1e-9);
  EXPECT_NEAR(report.pipes[0].median_abs_error_pct, 50.0, 1e-9);
  EXPECT_EQ(report.pipes[4].name, "aiv_vec_time_us");
  EXPECT_EQ(report.pipes[1].rows, 0);  // mte1: published by no row

  // The text: one line per row, the per-pipe line, and the summary last.
  const std::string text = FormatCalibration(report);
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u + 3u + 2u);
  EXPECT_THAT(lines[1], HasSubstr("+10.0%"));
  EXPECT_THAT(lines[1], HasSubstr("mac 50.000 / 25.000 (-50.0%)"));
  EXPECT_THAT(lines[1], HasSubstr("mte2 80.000 / 88.000 (+10.0%)"));
  EXPECT_THAT(lines[2], HasSubstr("-20.0%"));
  // The AIV's pipes only where a row publishes them.
  EXPECT_EQ(lines[4],
            "per pipe, median / max |error|: mac 50.0% / 50.0% (3 rows), mte1 - (0 rows), "
            "mte2 10.0% / 10.0% (3 rows), fixpipe - (0 rows)");
  EXPECT_EQ(lines.back(), "3 rows: median |error| 10.0%, max |error| 20.0%");
  EXPECT_EQ(CalibrationSummaryLine(report), lines.back());
}

TEST(RunCalibrationTest, MedianOfAnEvenCountAndFailures) {
  Json bad = Row("bad");
  bad["chip"] = "ascend310p";
  absl::StatusOr<std::vector<CalibrationRow>> rows = ParseCalibrationFile(
      File(Json::array({Row("a"), Row("b"), bad, Row("refused")})), Platforms());
  ASSERT_THAT(rows, IsOk());
  const std::map<std::string, double> factors = {{"a", 1.10}, {"b", 0.75}};
  CalibrationReport report = RunCalibration(
      *rows, [&](const pb::ExecuteRequest& request) -> absl::StatusOr<pb::ExecuteResponse> {
        if (request.id() == "refused") {
          return absl::InvalidArgumentError("kernel_schedule.block_dim: 24 outside [1, 20]");
        }
        return Predict(request, *rows, factors.at(request.id()));
      });
  EXPECT_EQ(report.ran, 2);
  EXPECT_EQ(report.failed, 2);
  EXPECT_NEAR(report.median_abs_error_pct, 17.5, 1e-9);
  EXPECT_NEAR(report.max_abs_error_pct, 25.0, 1e-9);
  EXPECT_THAT(report.rows[2].error, HasSubstr("row bad: chip: unknown chip"));
  EXPECT_EQ(report.rows[3].error,
            "row refused: Execute: INVALID_ARGUMENT: kernel_schedule.block_dim: 24 outside "
            "[1, 20]");
  const std::string text = FormatCalibration(report);
  EXPECT_THAT(text, HasSubstr("refused FAILED: row refused: Execute: INVALID_ARGUMENT"));
  EXPECT_TRUE(absl::EndsWith(text, "2 rows: median |error| 17.5%, max |error| 25.0%\n")) << text;

  // The JSON document: every row's figures or its error, and the summary.
  const Json json = Json::parse(CalibrationJson(report));
  EXPECT_EQ(json["schema"], kCalibrationReportSchema);
  ASSERT_EQ(json["rows"].size(), 4u);
  EXPECT_EQ(json["rows"][0]["id"], "a");
  EXPECT_NEAR(json["rows"][0]["error_pct"].get<double>(), 10.0, 1e-9);
  EXPECT_NEAR(json["rows"][0]["pipes"]["aic_mte2_time_us"]["predicted_us"].get<double>(), 88.0,
              1e-9);
  EXPECT_NEAR(json["rows"][0]["msprof"]["taskDurationUs"].get<double>(), 110.0, 1e-9);
  EXPECT_FALSE(json["rows"][0].contains("error"));
  EXPECT_THAT(json["rows"][3]["error"].get<std::string>(), HasSubstr("row refused"));
  EXPECT_EQ(json["summary"]["ran"], 2);
  EXPECT_EQ(json["summary"]["failed"], 2);
  EXPECT_NEAR(json["summary"]["median_abs_error_pct"].get<double>(), 17.5, 1e-9);
  EXPECT_EQ(json["summary"]["pipes"]["aic_mac_time_us"]["rows"], 2);
  EXPECT_EQ(json["summary"]["line"], "2 rows: median |error| 17.5%, max |error| 25.0%");
}

TEST(RunCalibrationTest, NoRowRan) {
  CalibrationReport report = RunCalibration({}, nullptr);
  EXPECT_EQ(CalibrationSummaryLine(report), "0 rows: median |error| 0.0%, max |error| 0.0%");
}

// The project's copy of the published measurements reads completely: every
// row becomes a request on a built-in profile.
TEST(ParseCalibrationFileTest, ShippedFileReadsEveryRow) {
  std::ifstream in(NPU_CALIBRATION_FILE);
  ASSERT_TRUE(in) << NPU_CALIBRATION_FILE;
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<CalibrationRow>> rows = ParseCalibrationFile(text.str(), Platforms());
  ASSERT_THAT(rows, IsOk());
  EXPECT_EQ(rows->size(), 37u);
  int on_a2 = 0;
  for (const CalibrationRow& row : *rows) {
    ASSERT_THAT(row.request, IsOk()) << row.id;
    EXPECT_TRUE(row.request->has_kernel_schedule()) << row.id;
    EXPECT_GT(row.measured_us, 0.0) << row.id;
    on_a2 += row.request->platform() == "ascend910b1";
  }
  EXPECT_EQ(on_a2, 10);
}

// Schema /2: a quantized, grouped mix kernel and an MX one.
Json QuantFile(const Json& rows) {
  Json file;
  file["schema"] = kCalibrationSchemaQuant;
  file["rows"] = rows;
  return file;
}

Json MxRow() {
  Json row = Row("mx");
  row["chip"] = "ascend950pr";
  row["aic"] = 32;
  row["freq_mhz"] = 1650;
  row["m"] = 128;
  row["n"] = 1024;
  row["k"] = 4096;
  row["dtype_in"] = row["dtype_a"] = row["dtype_b"] = "float4_e1m2";
  row["dtype_out"] = "bfloat16";
  row["quant"] = Json::parse(R"json({"mode": "mx", "scale_dtype": "float8_e8m0",
      "scale_block_k": 32, "pertoken": false, "dequant": "cube", "epilogue": "none"})json");
  row["groups"] = nullptr;
  row["kernel"] = Json::parse(R"json({
    "schedule": "swat", "block_dim": 32, "base_m": 128, "base_n": 512, "base_k": 128,
    "l1_m": 128, "l1_n": 512, "l1_k": 256, "depth_a1": 1, "depth_b1": 2, "aswt_window": 4,
    "unit_flag": true, "b_format": "ND", "epilogue": "none", "kernel_type": "aic_only",
    "mix_ratio": null, "tile_numbering": "swat_window", "tail_split": [1, 2],
    "full_load_a": true, "l1_k_b": null, "scale_l1_k": 256, "scale_factor_k": 1,
    "scale_l1_buffers": 2, "l1_bank_split": "ping_pong",
    "l1_offsets": {"b": [0, 348160], "scale_b": [65536, 413696], "a": [69632],
                   "scale_a": [331776]},
    "fixpipe_dst": "gm", "fixpipe_dtype": "bfloat16", "workspace_slots": null,
    "aiv_tile": null, "aiv_split": null})json");
  return row;
}

Json GroupedRow() {
  Json row = Row("grouped");
  row["chip"] = "ascend950pr";
  row["aic"] = 32;
  row["aiv"] = 64;
  row["freq_mhz"] = 1650;
  row["m"] = 2048;
  row["n"] = 1024;
  row["k"] = 1024;
  row["trans_b"] = false;
  row["dtype_in"] = "int8";
  row["dtype_out"] = "float16";
  row["quant"] = Json::parse(R"json({"mode": "perchannel_pertoken", "scale_dtype": "float32",
      "pertoken": true, "pertoken_dtype": "float32", "dequant": "aiv",
      "epilogue": "gelu_aiv"})json");
  row["groups"] = Json::parse(R"json({"count": 2, "axis": "m",
      "shapes": [[1024, 1024, 1024], [1024, 1024, 1024]], "group_list": [1024, 1024],
      "b_per_group": true})json");
  row["measured"]["aiv_vec_time_us"] = 40.0;
  row["measured"]["aiv_mte3_time_us"] = 10.0;
  row["kernel"] = Json::parse(R"json({
    "schedule": "grouped_round_robin", "block_dim": 32, "base_m": 256, "base_n": 256,
    "base_k": 128, "l1_m": 256, "l1_n": 256, "l1_k": 512, "single_core_m": 256,
    "single_core_n": 1024, "inner_order": "col_major", "unit_flag": true, "mdl": true,
    "b_format": "NZ", "epilogue": "dequant_gelu_aiv", "kernel_type": "mix", "mix_ratio": "1:2",
    "tile_numbering": "row_major", "fixpipe_dst": "gm_workspace", "fixpipe_dtype": "int32",
    "workspace_slots": 4, "aiv_tile": [24, 256], "aiv_split": "alternate"})json");
  return row;
}

TEST(ParseCalibrationFileTest, SchemaTwoMxRowBecomesAQuantProblem) {
  absl::StatusOr<std::vector<CalibrationRow>> rows =
      ParseCalibrationFile(QuantFile(Json::array({MxRow()})).dump(), Platforms());
  ASSERT_THAT(rows, IsOk());
  ASSERT_THAT(rows->front().request, IsOk());
  EXPECT_EQ(rows->front().schema, kCalibrationSchemaQuant);
  const pb::MatmulProblem& p = rows->front().request->problem();
  EXPECT_EQ(p.op(), pb::OPERATOR_QUANT_BATCH_MATMUL_V3);
  // float4_e1m2 is timed as float4_e2m1: four bits, the same cube rate.
  EXPECT_EQ(p.dtype_a(), pb::DATA_TYPE_FLOAT4_E2M1);
  EXPECT_EQ(p.dtype_b(), pb::DATA_TYPE_FLOAT4_E2M1);
  EXPECT_EQ(p.quant().scale().dtype(), pb::DATA_TYPE_FLOAT8_E8M0);
  // B transposed: scaleB [n, ceil(k / 64), 2]; scaleA [m, ceil(k / 64), 2].
  EXPECT_THAT(p.quant().scale().shape(), ::testing::ElementsAre(1024, 64, 2));
  EXPECT_THAT(p.quant().pertoken_scale().shape(), ::testing::ElementsAre(128, 64, 2));
  EXPECT_EQ(p.quant().group_size_k(), 32);
  const pb::KernelSchedule& k = rows->front().request->kernel_schedule();
  EXPECT_EQ(k.kind(), pb::KERNEL_SCHEDULE_KIND_SWAT);
  EXPECT_EQ(k.tile_numbering(), pb::TILE_NUMBERING_SWAT_WINDOW);
  EXPECT_EQ(k.tail_split_m(), 1u);
  EXPECT_EQ(k.tail_split_n(), 2u);
  EXPECT_TRUE(k.full_load_a());
  EXPECT_EQ(k.scale_l1_k(), 256u);
  EXPECT_EQ(k.scale_l1_buffers(), 2u);
  EXPECT_EQ(k.l1_bank_split(), pb::L1_BANK_SPLIT_PING_PONG);
  EXPECT_THAT(k.l1_offsets().b(), ::testing::ElementsAre(0, 348160));
  EXPECT_THAT(k.l1_offsets().scale_a(), ::testing::ElementsAre(331776));
  EXPECT_EQ(k.aiv_per_aic(), 0u);
}

TEST(ParseCalibrationFileTest, SchemaTwoGroupedMixRow) {
  absl::StatusOr<std::vector<CalibrationRow>> rows =
      ParseCalibrationFile(QuantFile(Json::array({GroupedRow()})).dump(), Platforms());
  ASSERT_THAT(rows, IsOk());
  const CalibrationRow& row = rows->front();
  ASSERT_THAT(row.request, IsOk());
  const pb::MatmulProblem& p = row.request->problem();
  EXPECT_EQ(p.op(), pb::OPERATOR_QUANT_BATCH_MATMUL_V3);
  EXPECT_EQ(p.dtype_a(), pb::DATA_TYPE_INT8);
  EXPECT_EQ(p.quant().scale().dtype(), pb::DATA_TYPE_FLOAT32);
  EXPECT_THAT(p.quant().scale().shape(), ::testing::ElementsAre(1024));
  EXPECT_THAT(p.quant().pertoken_scale().shape(), ::testing::ElementsAre(2048));
  const pb::KernelSchedule& k = row.request->kernel_schedule();
  EXPECT_EQ(k.kind(), pb::KERNEL_SCHEDULE_KIND_GROUPED_ROUND_ROBIN);
  EXPECT_EQ(k.b_format(), pb::FORMAT_FRACTAL_NZ);
  EXPECT_EQ(k.epilogue(), pb::EPILOGUE_DEQUANT_GELU_AIV);
  EXPECT_EQ(k.aiv_per_aic(), 2u);
  EXPECT_EQ(k.workspace_slots(), 4u);
  EXPECT_EQ(k.aiv_tile_rows(), 24u);
  EXPECT_EQ(k.aiv_tile_cols(), 256u);
  EXPECT_EQ(k.aiv_split(), pb::AIV_SPLIT_ALTERNATE);
  EXPECT_THAT(k.group_m(), ::testing::ElementsAre(1024, 1024));
  EXPECT_TRUE(k.b_per_group());
  // The AIV's published pipes follow the AIC's.
  ASSERT_EQ(row.measured_pipes.size(), 4u);
  EXPECT_EQ(row.measured_pipes[2].first, "aiv_vec_time_us");
  EXPECT_EQ(row.measured_pipes[3].first, "aiv_mte3_time_us");
}

TEST(ParseCalibrationFileTest, SchemaTwoKeysAreChecked) {
  struct Case {
    const char* key;
    Json value;
    const char* message;
  };
  const Case cases[] = {
      {"mix_ratio", nullptr, "kernel.mix_ratio: required with kernel_type mix"},
      {"mix_ratio", "2:1", "kernel.mix_ratio: unknown value \"2:1\""},
      {"kernel_type", "vector", "kernel.kernel_type: unknown value \"vector\""},
      {"fixpipe_dst", "gm", "kernel.fixpipe_dst: \"gm\" does not go with the epilogue"},
      {"tail_split", Json::array({1}), "kernel.tail_split: not a list of two positive integers"},
      {"aiv_split", "halves", "kernel.aiv_split: unknown value \"halves\""},
      {"tile_numbering", "hilbert", "kernel.tile_numbering: unknown value"},
      {"l1_offsets", Json::parse(R"({"c": [0]})"), "kernel.l1_offsets.c: unknown operand"},
      {"fixpipe_dtype", "int3", "kernel.fixpipe_dtype: "},
  };
  for (const Case& c : cases) {
    Json row = GroupedRow();
    row["kernel"][c.key] = c.value;
    absl::StatusOr<std::vector<CalibrationRow>> rows =
        ParseCalibrationFile(QuantFile(Json::array({row})).dump(), Platforms());
    ASSERT_THAT(rows, IsOk());
    EXPECT_THAT(rows->front().request,
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.key;
  }
  Json row = MxRow();
  row["kernel"]["scale_factor_k"] = 4;
  absl::StatusOr<std::vector<CalibrationRow>> rows =
      ParseCalibrationFile(QuantFile(Json::array({row})).dump(), Platforms());
  ASSERT_THAT(rows, IsOk());
  EXPECT_THAT(rows->front().request,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kernel.scale_factor_k: 4 x l1_k=256 must equal scale_l1_k=256")));
  row = MxRow();
  row["quant"]["mode"] = "perblock";
  rows = ParseCalibrationFile(QuantFile(Json::array({row})).dump(), Platforms());
  ASSERT_THAT(rows, IsOk());
  EXPECT_THAT(rows->front().request,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("row mx: quant.mode: unknown value \"perblock\"")));
  row = GroupedRow();
  row["groups"]["axis"] = "n";
  rows = ParseCalibrationFile(QuantFile(Json::array({row})).dump(), Platforms());
  ASSERT_THAT(rows, IsOk());
  EXPECT_THAT(rows->front().request,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("row grouped: groups.axis: \"n\": only m is modelled")));
}

// The project's copy of the quantized measurements reads completely too.
TEST(ParseCalibrationFileTest, ShippedQuantFileReadsEveryRow) {
  std::ifstream in(NPU_CALIBRATION_QUANT_FILE);
  ASSERT_TRUE(in) << NPU_CALIBRATION_QUANT_FILE;
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<CalibrationRow>> rows = ParseCalibrationFile(text.str(), Platforms());
  ASSERT_THAT(rows, IsOk());
  EXPECT_EQ(rows->size(), 27u);
  int quantized = 0;
  for (const CalibrationRow& row : *rows) {
    ASSERT_THAT(row.request, IsOk()) << row.id;
    quantized += row.request->problem().op() == pb::OPERATOR_QUANT_BATCH_MATMUL_V3;
  }
  EXPECT_EQ(quantized, 22);
}

}  // namespace
}  // namespace npu::client
