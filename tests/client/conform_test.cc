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
                {"name": "bad_dtype", "input": {"m": 1, "n": 1, "k": 1, "dtype_a": "int2",
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

// --- cann950-ut-decoded/1 ----------------------------------------------------

// A BatchMatMulV3 case as the decoded goldens write it: batch dims, a bias
// per batch, the basic API and hf32.
constexpr char kBatchCase[] = R"json({
  "name": "bmm", "source": "test.cpp:1", "op_type": "BatchMatMulV3",
  "dtype_a": "float32", "dtype_b": "float32", "dtype_c": "float32",
  "bias": true, "bias_dtype": "float32", "format_a": "ND", "format_b": "ND", "format_c": "ND",
  "trans_a": true, "trans_b": false, "offset_x": 128, "op_impl_mode": null,
  "enable_hf32_attr": true, "m": 16, "n": 32, "k": 64, "k_b": null,
  "batch": {"batch_a": 6, "batch_b": 6, "batch_c": 6, "a_batch_dims": [2, 3],
            "b_batch_dims": [2, 3], "c_batch_dims": [2, 3]},
  "storage_shapes": {"x1": [2, 3, 64, 16], "x2": [2, 3, 64, 32], "y": [2, 3, 16, 32],
                     "bias": [2, 3, 1, 32]},
  "ori_shapes": {"x1": [2, 3, 64, 16], "x2": [2, 3, 64, 32], "y": [2, 3, 16, 32],
                 "bias": [2, 3, 1, 32]},
  "platform": {"soc_version": "Ascend950", "core_num": 24, "vector_core_num": 48,
               "l1": 524288, "l0a": 65536, "l0b": 65536, "l0c": 262144, "ub": 253952,
               "l2": 134217728, "bt": 4096, "intrinsic_fix_pipe_l0c2out": true,
               "intrinsic_mmad_s8s4": false, "npu_arch_effective": "DAV_3510",
               "compile_info_attrs_json": {"transpose_a": true}},
  "test_harness": {"cube_freq": "1650"},
  "expected": {"status": "GRAPH_SUCCESS", "block_dim": 24, "tiling_key": 273,
               "tiling_data_words": [16, 32, 64, 6, -1], "compared_word_indices": [0, 1, 4]}})json";

// A FusedMatMul add case: the bias gets A's dtype (the test's quirk), x3
// comes from ori_shapes.
constexpr char kFusedCase[] = R"json({
  "name": "fused", "op_type": "FusedMatMul", "fused_op_type": "add",
  "dtype_a": "bfloat16", "dtype_b": "bfloat16", "dtype_c": "bfloat16",
  "bias": true, "bias_dtype": "float32", "format_a": "ND", "format_b": "ND", "format_c": "ND",
  "trans_a": false, "trans_b": true, "offset_x": 128, "enable_hf32_attr": false,
  "inner_precise": 1, "m": 8, "n": 4, "k": 2, "k_b": null,
  "batch": {"a_batch_dims": [5], "b_batch_dims": [5], "c_batch_dims": [5]},
  "storage_shapes": {"x1": [5, 8, 2], "x2": [5, 4, 2], "y": [5, 8, 4], "x3": [1, 8, 4]},
  "ori_shapes": {"x1": [5, 8, 2], "x2": [5, 4, 2], "y": [5, 8, 4], "x3": [1, 8, 4]},
  "platform": {"core_num": 32, "vector_core_num": 64},
  "expected": {"status": "GRAPH_SUCCESS", "block_dim": 32, "tiling_key": 16777233,
               "compared_word_indices": []}})json";

Json Case(const char* text) { return Json::parse(text); }

std::string File(const std::vector<Json>& cases) {
  Json root = {{"schema", "cann950-ut-decoded/1"}, {"cases", cases}};
  return root.dump();
}

TEST(DecodedCaseTest, BuildsTheBatchRequest) {
  std::string inexpressible;
  std::vector<std::string> ignored;
  absl::StatusOr<pb::TilingRequest> request =
      RequestFromDecodedCase(Case(kBatchCase), &inexpressible, &ignored);
  ASSERT_THAT(request, IsOk());
  EXPECT_EQ(inexpressible, "");
  EXPECT_THAT(ignored, ::testing::IsEmpty());
  const pb::MatmulProblem& p = request->problem();
  EXPECT_EQ(p.op(), pb::OPERATOR_BATCH_MATMUL_V3);
  EXPECT_EQ(p.m(), 16);
  EXPECT_EQ(p.n(), 32);
  EXPECT_EQ(p.k(), 64);
  EXPECT_TRUE(p.trans_a());
  EXPECT_TRUE(p.hf32());
  EXPECT_TRUE(p.avoid_tensor_api());
  EXPECT_FALSE(p.force_grp_acc_fp32());
  EXPECT_EQ(p.dtype_bias(), pb::DATA_TYPE_FLOAT32);
  EXPECT_THAT(p.batch_a(), ::testing::ElementsAre(2, 3));
  EXPECT_THAT(p.batch_b(), ::testing::ElementsAre(2, 3));
  EXPECT_THAT(p.batch_c(), ::testing::ElementsAre(2, 3));
  EXPECT_THAT(p.batch_bias(), ::testing::ElementsAre(2, 3));
  EXPECT_THAT(p.x3_shape(), ::testing::IsEmpty());
  EXPECT_FALSE(p.b_batch_interleaved());
  EXPECT_EQ(request->platform_overrides().aic_num(), 24u);
  EXPECT_EQ(request->platform_overrides().aiv_num(), 48u);
  EXPECT_EQ(request->platform_overrides().l0c_bytes(), 262144u);
}

TEST(DecodedCaseTest, FusedBiasTakesADtypeAndX3ComesFromTheShapes) {
  std::string inexpressible;
  absl::StatusOr<pb::TilingRequest> request =
      RequestFromDecodedCase(Case(kFusedCase), &inexpressible);
  ASSERT_THAT(request, IsOk());
  const pb::MatmulProblem& p = request->problem();
  EXPECT_EQ(p.op(), pb::OPERATOR_FUSED_MATMUL);
  EXPECT_EQ(p.fused_op(), pb::FUSED_OP_ADD);
  EXPECT_EQ(p.dtype_bias(), pb::DATA_TYPE_BFLOAT16);
  EXPECT_THAT(p.x3_shape(), ::testing::ElementsAre(1, 8, 4));
  EXPECT_EQ(p.inner_precise(), 1);
  // FusedMatMul has no offset_x attribute.
  EXPECT_FALSE(p.avoid_tensor_api());
  EXPECT_THAT(p.batch_bias(), ::testing::IsEmpty());

  // x3 belongs to add and mul only.
  Json relu = Case(kFusedCase);
  relu["fused_op_type"] = "relu";
  request = RequestFromDecodedCase(relu, &inexpressible);
  ASSERT_THAT(request, IsOk());
  EXPECT_EQ(request->problem().fused_op(), pb::FUSED_OP_RELU);
  EXPECT_THAT(request->problem().x3_shape(), ::testing::IsEmpty());
}

TEST(DecodedCaseTest, BatchInterleavedViewFromTheStridePattern) {
  Json c = Case(kBatchCase);
  c["bias"] = false;
  c["trans_a"] = false;
  c["batch"] = {{"a_batch_dims", {512}}, {"b_batch_dims", {512}}, {"c_batch_dims", {512}}};
  c["m"] = 150;
  c["k"] = 150;
  c["ori_shapes"] = {{"x1", {512, 150, 150}}, {"x2", {512, 150, 32}}, {"y", {512, 150, 32}}};
  c["storage_shapes"] = {{"x1", {512, 150, 150}}, {"x2", {2457600}}, {"y", {512, 150, 32}}};
  c["strides"] = {{"x1", nullptr}, {"x2", {32, 16384, 1}}};
  std::string inexpressible;
  absl::StatusOr<pb::TilingRequest> request = RequestFromDecodedCase(c, &inexpressible);
  ASSERT_THAT(request, IsOk());
  EXPECT_TRUE(request->problem().b_batch_interleaved());
  EXPECT_FALSE(request->problem().a_batch_interleaved());

  // Another stride pattern is a view the API cannot state.
  c["strides"]["x2"] = {32, 16384, 2};
  EXPECT_THAT(RequestFromDecodedCase(c, &inexpressible),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(inexpressible, HasSubstr("x2 is a view with strides [32, 16384, 2]"));
}

TEST(DecodedCaseTest, DifferentKOfAAndBIsNotExpressible) {
  Json c = Case(kBatchCase);
  c["k_b"] = 28;
  std::string inexpressible;
  EXPECT_THAT(RequestFromDecodedCase(c, &inexpressible),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("not expressible")));
  EXPECT_EQ(inexpressible, "A's K (64) differs from B's K (28): a problem has one k");

  // An input shape that does not follow from m, n, k and the batch dims.
  c = Case(kBatchCase);
  c["ori_shapes"]["x2"] = {2, 3, 64, 33};
  inexpressible.clear();
  EXPECT_THAT(RequestFromDecodedCase(c, &inexpressible),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(inexpressible, HasSubstr("x2's shape [2, 3, 64, 33] is not [2, 3, 64, 32]"));
  // So is a y of other batch dims.
  c = Case(kBatchCase);
  c["ori_shapes"]["y"] = {2, 4, 16, 32};
  inexpressible.clear();
  EXPECT_THAT(RequestFromDecodedCase(c, &inexpressible),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(inexpressible, HasSubstr("y's shape [2, 4, 16, 32] is not [2, 3, 16, 32]"));
}

// CANN tiles from x1 and x2 and reads only y's batch dims: a y whose [m, n]
// disagrees (as in some of CANN's own goldens) is the problem of x1 and x2,
// with the disagreement noted on the case's line.
TEST(DecodedCaseTest, YShapeThatDisagreesWithTheInputsIsNotedNotRefused) {
  Json c = Case(kBatchCase);
  c["ori_shapes"]["y"] = {2, 3, 12, 30};
  std::string inexpressible;
  std::string note;
  absl::StatusOr<pb::TilingRequest> request =
      RequestFromDecodedCase(c, &inexpressible, nullptr, &note);
  ASSERT_THAT(request, IsOk());
  EXPECT_EQ(inexpressible, "");
  EXPECT_EQ(request->problem().m(), 16);
  EXPECT_EQ(request->problem().n(), 32);
  EXPECT_EQ(note,
            "y's shape [2, 3, 12, 30] disagrees with x1 and x2 ([2, 3, 16, 32]); CANN tiles "
            "from x1 and x2");

  absl::StatusOr<std::vector<ConformanceCase>> cases = ParseConformanceFile(File({c}));
  ASSERT_THAT(cases, IsOk());
  ASSERT_EQ(cases->size(), 1u);
  EXPECT_EQ((*cases)[0].note, note);
  std::ostringstream out;
  RunConformance(
      *cases,
      [](const pb::TilingRequest&) -> absl::StatusOr<pb::TilingResponse> {
        return absl::FailedPreconditionError("refused");
      },
      out);
  EXPECT_THAT(out.str(), HasSubstr("(y's shape [2, 3, 12, 30] disagrees with x1 and x2"));
}

TEST(DecodedCaseTest, MalformedKeysAreNamed) {
  Json c = Case(kBatchCase);
  c["op_type"] = "GemmV3";
  std::string inexpressible;
  EXPECT_THAT(RequestFromDecodedCase(c, &inexpressible),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("op_type")));
  c = Case(kBatchCase);
  c["batch"]["a_batch_dims"] = "2,3";
  EXPECT_THAT(RequestFromDecodedCase(c, &inexpressible),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("batch.a_batch_dims")));
  c = Case(kBatchCase);
  c["note"] = "x";
  std::vector<std::string> ignored;
  EXPECT_THAT(RequestFromDecodedCase(c, &inexpressible, &ignored), IsOk());
  EXPECT_THAT(ignored, ::testing::ElementsAre("note"));
}

pb::TilingResponse DecodedResponse() {
  pb::TilingResponse response;
  response.set_block_dim(24);
  response.set_tiling_key(273);
  for (uint32_t word : {16u, 32u, 64u, 7u, 0xFFFFFFFFu}) response.add_raw_words(word);
  return response;
}

TEST(FirstDecodedMismatchTest, ComparesStatusKeyBlockDimAndTheComparedWords) {
  const Json expected = Case(kBatchCase)["expected"];
  // Word 3 differs but is not compared; word 4 is -1 as an int32.
  EXPECT_EQ(FirstDecodedMismatch(expected, DecodedResponse()), std::nullopt);

  pb::TilingResponse response = DecodedResponse();
  response.set_raw_words(1, 31);
  EXPECT_EQ(FirstDecodedMismatch(expected, response), "field word 1 expected 32 got 31");
  response = DecodedResponse();
  response.set_tiling_key(2);
  EXPECT_EQ(FirstDecodedMismatch(expected, response), "field tiling_key expected 273 got 2");
  response = DecodedResponse();
  response.mutable_raw_words()->RemoveLast();
  EXPECT_EQ(FirstDecodedMismatch(expected, response), "field word 4 expected -1 got <absent>");
  EXPECT_EQ(FirstDecodedMismatch(expected, absl::FailedPreconditionError("no strategy")),
            "status expected GRAPH_SUCCESS got error FAILED_PRECONDITION: no strategy");

  // A null block dim or key is not compared.
  Json loose = expected;
  loose["block_dim"] = nullptr;
  loose["tiling_key"] = nullptr;
  response = DecodedResponse();
  response.set_block_dim(1);
  response.set_tiling_key(1);
  EXPECT_EQ(FirstDecodedMismatch(loose, response), std::nullopt);
}

TEST(FirstDecodedMismatchTest, GraphFailedNeedsARefusal) {
  const Json expected = Json::parse(R"({"status": "GRAPH_FAILED", "block_dim": null,
                                        "tiling_key": null})");
  std::string refusal;
  EXPECT_EQ(
      FirstDecodedMismatch(expected, absl::InvalidArgumentError("problem: batch_a"), &refusal),
      std::nullopt);
  EXPECT_EQ(refusal, "problem: batch_a");
  EXPECT_EQ(FirstDecodedMismatch(expected, absl::FailedPreconditionError("none capable")),
            std::nullopt);
  pb::TilingResponse plan = DecodedResponse();
  plan.set_strategy("ASW_BASIC");
  EXPECT_EQ(FirstDecodedMismatch(expected, plan),
            "status expected GRAPH_FAILED (a refusal) got a plan: strategy ASW_BASIC, "
            "tiling_key 273");
  EXPECT_EQ(FirstDecodedMismatch(expected, absl::InternalError("bug")),
            "status expected GRAPH_FAILED (a refusal) got error INTERNAL: bug");
}

TEST(RunConformanceTest, DecodedCasesRefusalsAndInexpressibleOnes) {
  Json refused = Case(kBatchCase);
  refused["name"] = "refused";
  refused["expected"] = {
      {"status", "GRAPH_FAILED"}, {"block_dim", nullptr}, {"tiling_key", nullptr}};
  Json other_k = refused;
  other_k["name"] = "other_k";
  other_k["k_b"] = 28;
  Json other_k_success = Case(kBatchCase);
  other_k_success["name"] = "other_k_success";
  other_k_success["k_b"] = 28;
  Json ok = Case(kBatchCase);
  absl::StatusOr<std::vector<ConformanceCase>> cases =
      ParseConformanceFile(File({ok, refused, other_k, other_k_success}));
  ASSERT_THAT(cases, IsOk());
  ASSERT_EQ(cases->size(), 4u);
  EXPECT_EQ((*cases)[0].schema, CaseSchema::kUtDecoded);
  EXPECT_EQ((*cases)[0].request->id(), "bmm");
  EXPECT_EQ((*cases)[2].inexpressible, "A's K (64) differs from B's K (28): a problem has one k");

  int calls = 0;
  std::ostringstream out;
  ConformanceSummary summary = RunConformance(
      *cases,
      [&](const pb::TilingRequest& request) -> absl::StatusOr<pb::TilingResponse> {
        ++calls;
        if (request.id() == "refused") return absl::InvalidArgumentError("problem: no");
        return DecodedResponse();
      },
      out);
  EXPECT_EQ(calls, 2);  // the inexpressible cases are judged without a request
  EXPECT_EQ(summary.passed, 3);
  EXPECT_EQ(summary.failed, 1);
  EXPECT_EQ(out.str(),
            "PASS bmm\n"
            "PASS refused (refused: problem: no)\n"
            "PASS other_k (not expressible, CANN refuses it too: A's K (64) differs from B's K "
            "(28): a problem has one k)\n"
            "FAIL other_k_success: not expressible: A's K (64) differs from B's K (28): a problem "
            "has one k\n"
            "3 passed, 1 failed\n");
}

TEST(ParseConformanceFileTest, ReadsTheOpsGoldenFile) {
  std::ifstream in(NPU_CONFORMANCE_OPS_CASES);
  ASSERT_TRUE(in) << NPU_CONFORMANCE_OPS_CASES;
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> ignored;
  absl::StatusOr<std::vector<ConformanceCase>> cases = ParseConformanceFile(text.str(), &ignored);
  ASSERT_THAT(cases, IsOk());
  ASSERT_EQ(cases->size(), 73u);
  EXPECT_TRUE(ignored.empty()) << ignored.front();
  int batch = 0, fused = 0;
  for (const ConformanceCase& c : *cases) {
    EXPECT_EQ(c.schema, CaseSchema::kUtDecoded);
    if (c.name == "BatchMatMulV3TilingRuntime.bias_cases_l1_iterbatchbias_success") {
      // x1 [992, 28, 2] and x2 [992, 28, 2]: A's K is 2, B's 28. CANN refuses it.
      EXPECT_THAT(c.inexpressible, HasSubstr("A's K (2) differs from B's K (28)"));
      continue;
    }
    ASSERT_THAT(c.request, IsOk()) << c.name;
    EXPECT_EQ(c.inexpressible, "") << c.name;
    const pb::MatmulProblem& p = c.request->problem();
    batch += p.op() == pb::OPERATOR_BATCH_MATMUL_V3;
    fused += p.op() == pb::OPERATOR_FUSED_MATMUL;
    if (c.name == "BatchMatMulV3TilingRuntime.950_transpose_non_contiguous_cases1") {
      EXPECT_TRUE(p.b_batch_interleaved());
      EXPECT_TRUE(p.trans_b());
      EXPECT_THAT(p.batch_b(), ::testing::ElementsAre(512));
    }
    if (c.name == "BatchMatMulV3TilingRuntime.bias_cases_batchbias_failed_1") {
      EXPECT_THAT(p.batch_bias(), ::testing::ElementsAre(2048));
    }
    if (p.op() == pb::OPERATOR_FUSED_MATMUL && p.has_bias()) {
      EXPECT_EQ(p.dtype_bias(), p.dtype_a()) << c.name;
    }
    if (p.fused_op() == pb::FUSED_OP_ADD || p.fused_op() == pb::FUSED_OP_MUL) {
      EXPECT_GE(p.x3_shape_size(), 2) << c.name;
    } else {
      EXPECT_EQ(p.x3_shape_size(), 0) << c.name;
    }
  }
  EXPECT_EQ(batch, 12);
  EXPECT_EQ(fused, 60);
}

}  // namespace
TEST(ParseConformanceFileTest, ReadsTheQuantGoldenFile) {
  std::ifstream in(NPU_CONFORMANCE_QUANT_CASES);
  ASSERT_TRUE(in) << NPU_CONFORMANCE_QUANT_CASES;
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<ConformanceCase>> cases = ParseConformanceFile(text.str());
  ASSERT_THAT(cases, IsOk());
  ASSERT_EQ(cases->size(), 158u);
  int nz = 0, pertoken = 0, batched = 0;
  for (const ConformanceCase& c : *cases) {
    EXPECT_EQ(c.schema, CaseSchema::kQuantUtDecoded);
    ASSERT_THAT(c.request, IsOk()) << c.name;
    const pb::MatmulProblem& p = c.request->problem();
    EXPECT_EQ(p.op(), pb::OPERATOR_QUANT_BATCH_MATMUL_V3);
    EXPECT_NE(p.quant().scale().dtype(), pb::DATA_TYPE_UNSPECIFIED) << c.name;
    EXPECT_EQ(c.request->platform_overrides().ub_bytes(), 245760u) << c.name;
    nz += p.format_b() == pb::FORMAT_FRACTAL_NZ;
    pertoken += p.quant().pertoken_scale().dtype() != pb::DATA_TYPE_UNSPECIFIED;
    batched += p.batch_a_size() > 0;
    if (c.name == "qbmmv3_950_L206_llama2-001") {
      // x1 [1, 4096, 8192] int8, x2 [1, 8192, 128] int8, a per-tensor uint64 scale [1].
      EXPECT_EQ(p.m(), 4096);
      EXPECT_EQ(p.k(), 8192);
      EXPECT_EQ(p.n(), 128);
      EXPECT_EQ(p.dtype_a(), pb::DATA_TYPE_INT8);
      EXPECT_EQ(p.dtype_c(), pb::DATA_TYPE_FLOAT16);
      EXPECT_THAT(p.batch_a(), ::testing::ElementsAre(1));
      EXPECT_EQ(p.quant().scale().dtype(), pb::DATA_TYPE_UINT64);
      EXPECT_THAT(p.quant().scale().shape(), ::testing::ElementsAre(1));
      EXPECT_FALSE(p.has_bias());
    }
  }
  EXPECT_GT(nz, 0);
  EXPECT_GT(pertoken, 0);
  EXPECT_GT(batched, 0);
}

// A word CANN's harness compares in part: only the bits outside the reset
// range are judged.
TEST(FirstQuantMismatchTest, PartlyComparedWordsIgnoreTheResetBits) {
  Json expected = Json::parse(R"({"status": "GRAPH_SUCCESS",
      "checks": "status_key_numblocks_words", "num_blocks": 8, "tiling_key": 131092,
      "tiling_data_words": [7, 50331905], "compared_word_indices": [0],
      "partially_compared_words": {"1": "bits 31:24 (biasDtype byte) reset"}})");
  pb::TilingResponse response;
  response.set_block_dim(8);
  response.set_tiling_key(131092);
  response.add_raw_words(7);
  response.add_raw_words(0x00000101);  // the top byte differs: ignored
  EXPECT_EQ(FirstQuantMismatch(expected, response), std::nullopt);
  response.set_raw_words(1, 0x03000102);  // a compared bit differs
  EXPECT_THAT(FirstQuantMismatch(expected, response).value_or(""), HasSubstr("word 1"));
  response.set_tiling_key(131072);
  EXPECT_THAT(FirstQuantMismatch(expected, response).value_or(""), HasSubstr("tiling_key"));
}

}  // namespace npu::client
