#include "client/tilingctl/format.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace npu::client {
namespace {

using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
namespace pb = ::npu::tiling::v1;

TEST(NamesTest, DtypesAndFormats) {
  EXPECT_EQ(DataTypeFromName("float16").value(), pb::DATA_TYPE_FLOAT16);
  EXPECT_EQ(DataTypeFromName("bf16").value(), pb::DATA_TYPE_BFLOAT16);
  EXPECT_EQ(DataTypeFromName("float32").value(), pb::DATA_TYPE_FLOAT32);
  EXPECT_EQ(DataTypeFromName("DT_INT8").value(), pb::DATA_TYPE_INT8);
  EXPECT_THAT(DataTypeFromName("int2"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(FormatFromName("FRACTAL_NZ").value(), pb::FORMAT_FRACTAL_NZ);
  EXPECT_EQ(FormatFromName("ND").value(), pb::FORMAT_ND);
  EXPECT_THAT(FormatFromName("NCHW"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(FormatTilingTest, ShowsWordPositionsOfPackedBytes) {
  pb::TilingResponse response;
  response.set_tiling_key(4162);
  response.set_tiling_struct("MatMulV3BasicTilingData");
  for (auto [name, bits] : {std::pair<const char*, int>{"usedCoreNum", 32},
                            {"mmadParam", 8},
                            {"l1BufferNum", 8},
                            {"l0cDB", 8},
                            {"ubDB", 8},
                            {"l2CacheDisable", 32}}) {
    pb::TilingField* field = response.add_fields();
    field->set_name(name);
    field->set_bits(bits);
  }
  response.add_trace()->set_strategy("K_EQUAL_ZERO");
  const std::string text = FormatTiling(response);
  EXPECT_THAT(text, HasSubstr("4162 (0x1042)"));
  EXPECT_THAT(text, HasSubstr("1.1    l1BufferNum"));
  EXPECT_THAT(text, HasSubstr("2      l2CacheDisable"));
  EXPECT_THAT(text, HasSubstr("K_EQUAL_ZERO"));
}

TEST(FormatTilingTest, FusedKeysShowTheEpilogueAndInnerPrecision) {
  pb::TilingResponse response;
  response.set_tiling_key(0x11002401);
  response.mutable_key()->set_model_name("K_EQUAL_ZERO");
  response.mutable_key()->set_fused_op(pb::FUSED_OP_ADD);
  response.mutable_key()->set_fused_op_name("ADD");
  response.mutable_key()->set_inner_precise(1);
  const std::string text = FormatTiling(response);
  EXPECT_THAT(text, HasSubstr("  fused_op       ADD\n"));
  EXPECT_THAT(text, HasSubstr("  inner_precise  1\n"));

  // Other operators' keys have neither.
  response.mutable_key()->clear_fused_op_name();
  response.mutable_key()->set_inner_precise(0);
  EXPECT_THAT(FormatTiling(response), Not(HasSubstr("fused_op")));
  EXPECT_THAT(FormatTiling(response), Not(HasSubstr("inner_precise")));
}

// Each position names the raw word (and byte) that holds the field's value,
// packed as the engine's TilingData::ForEachWord() packs it, also when bytes
// leave a word partly filled.
TEST(FormatTilingTest, FieldPositionsIndexTheRawWords) {
  pb::TilingResponse response;
  struct Field {
    const char* name;
    int bits;
    uint32_t value;
  };
  for (const Field& f : {Field{"a", 32, 70000}, Field{"p", 8, 1}, Field{"q", 8, 2},
                         Field{"b", 32, 90000}, Field{"r", 8, 3}, Field{"s", 8, 4},
                         Field{"t", 8, 5}, Field{"u", 8, 6}, Field{"c", 32, 7}}) {
    pb::TilingField* field = response.add_fields();
    field->set_name(f.name);
    field->set_bits(f.bits);
    field->set_value(f.value);
  }
  for (uint32_t word : {70000u, 0x0201u, 90000u, 0x06050403u, 7u}) response.add_raw_words(word);
  const std::vector<std::string> positions = TilingFieldPositions(response);
  EXPECT_EQ(positions,
            (std::vector<std::string>{"0", "1.0", "1.1", "2", "3.0", "3.1", "3.2", "3.3", "4"}));
  for (int i = 0; i < response.fields_size(); ++i) {
    const pb::TilingField& field = response.fields(i);
    const std::string& position = positions[i];
    const int word = position[0] - '0';
    uint32_t value = response.raw_words(word);
    if (field.bits() == 8) value = (value >> (8 * (position[2] - '0'))) & 0xFF;
    EXPECT_EQ(value, field.value()) << field.name();
  }
}

TEST(FormatTilingTest, CompactAnswerShowsTheLauncherNumbers) {
  pb::TilingResponse response;
  response.set_tiling_key(4162);
  response.set_strategy("BASIC_STREAM_K");
  response.set_kernel_type(pb::KERNEL_TYPE_MIX_AIC_1_AIV_2);
  response.set_block_dim(32);
  response.set_workspace_bytes(1024);
  for (uint32_t word : {32u, 4096u, 1280u}) response.add_raw_words(word);
  const std::string text = FormatTiling(response);
  EXPECT_THAT(text, HasSubstr("4162 (0x1042)"));
  EXPECT_THAT(text, HasSubstr("KERNEL_TYPE_MIX_AIC_1_AIV_2"));
  EXPECT_THAT(text, HasSubstr("raw_words        32 4096 1280"));
  EXPECT_THAT(text, HasSubstr("1024 bytes"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("api_level")));
}

TEST(FormatBatchTest, ShowsItemErrors) {
  std::vector<pb::TilingResponse> responses(2);
  responses[0].set_id("ok");
  responses[0].set_strategy("BASIC_ASWT");
  responses[1].set_id("bad");
  responses[1].mutable_status()->set_code(3);
  responses[1].mutable_status()->set_code_name("INVALID_ARGUMENT");
  responses[1].mutable_status()->set_message("problem: m");
  const std::string text = FormatBatch(responses);
  EXPECT_THAT(text, HasSubstr("BASIC_ASWT"));
  EXPECT_THAT(text, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(text, HasSubstr("problem: m"));
}

// An ADVISE answer with a variant ahead of CANN's choice.
pb::TilingResponse AdviceResponse() {
  pb::TilingResponse response;
  response.set_strategy("BASIC_STREAM_K");
  response.set_tiling_key(4098);
  response.set_block_dim(32);
  response.set_tiling_struct("MatMulV3BasicTilingData");
  pb::Advice* advice = response.mutable_advice();
  advice->set_max_candidates(8);
  advice->set_max_advisory_ms(2000);
  advice->set_verify_recommendation(true);
  advice->set_emulations(11);
  pb::AdviceCandidate* best = advice->add_candidates();
  best->set_name("BASIC_ASWT/base_64x64");
  best->set_kind(pb::VARIANT_KIND_BLOCK_SEARCH);
  best->set_predicted_time_us(5.92);
  best->set_speedup_vs_cann(1.711);
  best->set_bound_resource("DDR");
  best->set_numerics(pb::NUMERICS_STATUS_PASSED);
  best->set_explanation("base 64x64 by predicted time");
  pb::AdviceCandidate* cann = advice->add_candidates();
  cann->set_name("BASIC_STREAM_K");
  cann->set_kind(pb::VARIANT_KIND_CANN_STRATEGY);
  cann->set_is_cann_choice(true);
  cann->set_predicted_time_us(10.13);
  cann->set_speedup_vs_cann(1);
  cann->set_bound_resource("DDR");
  cann->set_numerics(pb::NUMERICS_STATUS_NOT_CHECKED);
  cann->set_explanation("CANN's choice: SK");
  pb::NotOffered* no = advice->add_not_offered();
  no->set_kind(pb::VARIANT_KIND_AIV_DOT);
  no->set_name("TO_MUL/aiv_*");
  no->set_reason("M=256 and N=256 are both above 1");
  pb::VerificationReport* v = advice->mutable_verification();
  v->set_shrunk(true);
  v->set_m(128);
  v->set_n(128);
  v->set_k(1024);
  v->set_worst_error_ratio(0.25);
  return response;
}

TEST(FormatAdviceTest, RanksCandidatesAndMarksCannsChoice) {
  const std::string text = FormatAdvice(AdviceResponse());
  EXPECT_THAT(text, HasSubstr("CANN's choice: BASIC_STREAM_K, key 4098, block_dim 32"));
  EXPECT_THAT(text, HasSubstr("2 candidates, best first (max 8, budget 2000 ms, 11 emulations)"));
  // Header, then one row per candidate in rank order, CANN's with a '*'.
  EXPECT_THAT(text, HasSubstr("rank  candidate"));
  EXPECT_THAT(text, HasSubstr("predicted_us"));
  EXPECT_THAT(text, HasSubstr("vs_cann"));
  const size_t first = text.find("1     BASIC_ASWT/base_64x64");
  const size_t second = text.find("2*    BASIC_STREAM_K");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_LT(first, second);
  EXPECT_THAT(text, HasSubstr("5.920    1.711x DDR      PASSED      base 64x64 by predicted time"));
  EXPECT_THAT(text, HasSubstr("10.130    1.000x DDR      NOT_CHECKED CANN's choice: SK"));
  EXPECT_THAT(text, HasSubstr("verified on 128x128x1024, worst error 0.25 of bound"));
  // Then the reasons for what was not offered.
  const size_t not_offered = text.find("not offered");
  ASSERT_NE(not_offered, std::string::npos);
  EXPECT_GT(not_offered, second);
  EXPECT_THAT(text, HasSubstr("AIV_DOT"));
  EXPECT_THAT(text, HasSubstr("M=256 and N=256 are both above 1"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("BUDGET EXHAUSTED")));
}

TEST(FormatAdviceTest, SaysWhenTheBudgetRanOutOrVerificationIsOff) {
  pb::TilingResponse response = AdviceResponse();
  pb::Advice* advice = response.mutable_advice();
  advice->set_budget_exhausted(true);
  advice->set_budget_note("advisory budget of 5 ms spent after 3 emulations; skipped: TO_MUL");
  advice->set_timing_note("timed with ND operands");
  advice->clear_verification();
  advice->set_verify_recommendation(false);
  const std::string text = FormatAdvice(response);
  EXPECT_THAT(text, HasSubstr("BUDGET EXHAUSTED"));
  EXPECT_THAT(text, HasSubstr("skipped: TO_MUL"));
  EXPECT_THAT(text, HasSubstr("note: timed with ND operands"));
  EXPECT_THAT(text, HasSubstr("numerics: not checked"));
}

TEST(FormatAdviceTest, ResponseWithoutAdvice) {
  pb::TilingResponse response;
  response.set_strategy("BASIC_ASWT");
  EXPECT_THAT(FormatAdvice(response), HasSubstr("no advice"));
}

TEST(FormatAdviceTest, Labels) {
  EXPECT_EQ(VariantKindLabel(pb::VARIANT_KIND_L1_PARTIAL_RESIDENCY), "L1_PARTIAL_RESIDENCY");
  EXPECT_EQ(NumericsLabel(pb::NUMERICS_STATUS_FAILED), "FAILED");
  EXPECT_EQ(NumericsLabel(pb::NUMERICS_STATUS_UNSPECIFIED), "-");
}

TEST(ToJsonTest, AdviceUsesEnumNames) {
  const std::string json = ToJson(AdviceResponse());
  EXPECT_THAT(json, HasSubstr("\"kind\":\"VARIANT_KIND_BLOCK_SEARCH\""));
  EXPECT_THAT(json, HasSubstr("\"isCannChoice\":true"));
  EXPECT_THAT(json, HasSubstr("\"speedupVsCann\":1.711"));
}

TEST(ToJsonTest, PrintsDefaultsToo) {
  pb::TilingResponse response;
  response.set_id("x");
  const std::string json = ToJson(response);
  EXPECT_THAT(json, HasSubstr("\"id\":\"x\""));
  EXPECT_THAT(json, HasSubstr("\"blockDim\":0"));
  EXPECT_THAT(json, HasSubstr("\"fromCache\":false"));
}

}  // namespace
}  // namespace npu::client
