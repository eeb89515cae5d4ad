#include "client/tilingctl/conform.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace npu::client {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
namespace pb = ::npu::tiling::v1;
using Json = nlohmann::ordered_json;

constexpr char kOneCase[] = R"json({
  "schema": "cann950-tiling-cases/1",
  "cases": [{
    "name": "streamk",
    "input": {"m": 4096, "n": 1280, "k": 8192, "dtype_a": "float16", "dtype_b": "float16",
              "dtype_c": "float16", "trans_a": false, "trans_b": true, "format_a": "ND",
              "format_b": "FRACTAL_NZ", "format_c": "ND", "bias": false, "bias_dtype": null,
              "hf32": false, "force_grp_acc_fp32": false,
              "platform": {"aic_num": 32, "aiv_num": 64, "l1_bytes": 524288}},
    "expected": {"block_dim": 32, "tiling_key": 4162, "api_level": "TENSOR_LEVEL",
                 "model": "STREAM_K", "full_load": "NONE", "l0c2out": "ON_THE_FLY",
                 "tiling_struct": "MatMulV3BasicTilingData",
                 "fields": {"baseM": 256, "baseK": 64, "l1BufferNum": 2}}
  }]})json";

pb::TilingResponse MatchingResponse() {
  pb::TilingResponse response;
  response.set_block_dim(32);
  response.set_tiling_key(4162);
  response.mutable_key()->set_api_level_name("TENSOR_LEVEL");
  response.mutable_key()->set_model_name("STREAM_K");
  response.mutable_key()->set_full_load_name("NONE");
  response.mutable_key()->set_l0c2out_name("ON_THE_FLY");
  response.set_tiling_struct("MatMulV3BasicTilingData");
  for (auto [name, value] : {std::pair<const char*, int>{"baseM", 256},
                             {"baseK", 64},
                             {"l1BufferNum", 2},
                             {"ubDB", 1}}) {
    pb::TilingField* field = response.add_fields();
    field->set_name(name);
    field->set_value(value);
  }
  return response;
}

TEST(ParseConformanceFileTest, BuildsTheRequest) {
  absl::StatusOr<std::vector<ConformanceCase>> cases = ParseConformanceFile(kOneCase);
  ASSERT_THAT(cases, IsOk());
  ASSERT_EQ(cases->size(), 1u);
  const ConformanceCase& c = (*cases)[0];
  EXPECT_EQ(c.name, "streamk");
  ASSERT_THAT(c.request, IsOk());
  const pb::MatmulProblem& p = c.request->problem();
  EXPECT_EQ(c.request->id(), "streamk");
  EXPECT_EQ(p.m(), 4096);
  EXPECT_EQ(p.k(), 8192);
  EXPECT_EQ(p.dtype_a(), pb::DATA_TYPE_FLOAT16);
  EXPECT_TRUE(p.trans_b());
  EXPECT_FALSE(p.trans_a());
  EXPECT_EQ(p.format_b(), pb::FORMAT_FRACTAL_NZ);
  EXPECT_FALSE(p.has_bias());
  EXPECT_EQ(c.request->platform_overrides().aic_num(), 32u);
  EXPECT_EQ(c.request->platform_overrides().l1_bytes(), 524288u);
  EXPECT_FALSE(c.request->platform_overrides().has_ub_bytes());
}

TEST(ParseConformanceFileTest, BiasDtypeNullFollowsC) {
  Json input = Json::parse(R"({"m": 1, "n": 2, "k": 3, "dtype_a": "float32",
      "dtype_b": "float32", "dtype_c": "float32", "bias": true, "bias_dtype": null})");
  absl::StatusOr<pb::TilingRequest> request = RequestFromCaseInput(input);
  ASSERT_THAT(request, IsOk());
  EXPECT_TRUE(request->problem().has_bias());
  EXPECT_EQ(request->problem().dtype_bias(), pb::DATA_TYPE_FLOAT32);
}

TEST(ParseConformanceFileTest, RejectsOtherSchemas) {
  EXPECT_THAT(ParseConformanceFile(R"({"schema": "other/2", "cases": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("schema")));
  EXPECT_THAT(ParseConformanceFile("not json"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ParseConformanceFileTest, MalformedCaseDoesNotStopTheOthers) {
  absl::StatusOr<std::vector<ConformanceCase>> cases = ParseConformanceFile(R"({
      "schema": "cann950-tiling-cases/1",
      "cases": [{"name": "no_m", "input": {"n": 1, "k": 1, "dtype_a": "float16",
                 "dtype_b": "float16", "dtype_c": "float16"}, "expected": {}},
                {"name": "bad_dtype", "input": {"m": 1, "n": 1, "k": 1, "dtype_a": "int8",
                 "dtype_b": "float16", "dtype_c": "float16"}, "expected": {}}]})");
  ASSERT_THAT(cases, IsOk());
  ASSERT_EQ(cases->size(), 2u);
  EXPECT_THAT((*cases)[0].request,
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("input.m")));
  EXPECT_THAT((*cases)[1].request,
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("input.dtype_a")));
}

TEST(ParseConformanceFileTest, ReportsKeysOutsideTheSchema) {
  Json input = Json::parse(R"({"m": 1, "n": 2, "k": 3, "dtype_a": "float16",
      "dtype_b": "float16", "dtype_c": "float16", "note": "x", "platform": {"tdp_watts": 350}})");
  std::vector<std::string> ignored;
  EXPECT_THAT(RequestFromCaseInput(input, &ignored), IsOk());
  EXPECT_THAT(ignored, ::testing::UnorderedElementsAre("input.note", "input.platform.tdp_watts"));
}

TEST(FirstMismatchTest, NoneWhenEverythingMatches) {
  absl::StatusOr<std::vector<ConformanceCase>> cases = ParseConformanceFile(kOneCase);
  ASSERT_THAT(cases, IsOk());
  EXPECT_EQ(FirstMismatch((*cases)[0].expected, MatchingResponse()), std::nullopt);
}

TEST(FirstMismatchTest, NamesTheFirstDifferingField) {
  const Json expected = (*ParseConformanceFile(kOneCase))[0].expected;
  pb::TilingResponse response = MatchingResponse();
  response.mutable_fields(1)->set_value(32);  // baseK
  response.mutable_fields(2)->set_value(1);   // l1BufferNum, later in the file
  EXPECT_EQ(FirstMismatch(expected, response), "field baseK expected 64 got 32");

  response = MatchingResponse();
  response.set_block_dim(31);
  response.set_tiling_key(18);
  EXPECT_EQ(FirstMismatch(expected, response), "field block_dim expected 32 got 31");

  response = MatchingResponse();
  response.mutable_key()->set_model_name("BASIC");
  EXPECT_EQ(FirstMismatch(expected, response), "field model expected \"STREAM_K\" got \"BASIC\"");

  response = MatchingResponse();
  response.mutable_fields()->RemoveLast();
  response.mutable_fields()->RemoveLast();  // drops l1BufferNum
  EXPECT_EQ(FirstMismatch(expected, response), "field l1BufferNum expected 2 got <absent>");
}

TEST(RunConformanceTest, PrintsOneLinePerCaseAndTheSummary) {
  std::string text = kOneCase;
  // A second case with the same input whose expectations are wrong.
  absl::StatusOr<std::vector<ConformanceCase>> parsed = ParseConformanceFile(text);
  ASSERT_THAT(parsed, IsOk());
  std::vector<ConformanceCase> cases = *parsed;
  cases.push_back(cases[0]);
  cases[1].name = "wrong";
  cases[1].expected["tiling_key"] = 1;
  cases.push_back(cases[0]);
  cases[2].name = "error";
  cases[2].request->mutable_problem()->set_m(0);

  std::ostringstream out;
  ConformanceSummary summary = RunConformance(
      cases,
      [](const pb::TilingRequest& request) -> absl::StatusOr<pb::TilingResponse> {
        if (request.problem().m() == 0) return absl::InvalidArgumentError("problem: m is 0");
        return MatchingResponse();
      },
      out);
  EXPECT_EQ(summary.passed, 1);
  EXPECT_EQ(summary.failed, 2);
  EXPECT_EQ(out.str(),
            "PASS streamk\n"
            "FAIL wrong: field tiling_key expected 1 got 4162\n"
            "FAIL error: error INVALID_ARGUMENT: problem: m is 0\n"
            "1 passed, 2 failed\n");
}

TEST(ParseConformanceFileTest, ReadsTheGoldenFile) {
  std::ifstream in(NPU_CONFORMANCE_CASES);
  ASSERT_TRUE(in) << NPU_CONFORMANCE_CASES;
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> ignored;
  absl::StatusOr<std::vector<ConformanceCase>> cases = ParseConformanceFile(text.str(), &ignored);
  ASSERT_THAT(cases, IsOk());
  EXPECT_EQ(cases->size(), 24u);
  for (const ConformanceCase& c : *cases) EXPECT_THAT(c.request, IsOk()) << c.name;
  EXPECT_TRUE(ignored.empty()) << ignored.front();
}

}  // namespace
}  // namespace npu::client
