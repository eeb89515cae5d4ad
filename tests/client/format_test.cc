#include "client/tilingctl/format.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace npu::client {
namespace {

using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
namespace pb = ::npu::tiling::v1;

TEST(NamesTest, DtypesAndFormats) {
  EXPECT_EQ(DataTypeFromName("float16").value(), pb::DATA_TYPE_FLOAT16);
  EXPECT_EQ(DataTypeFromName("bf16").value(), pb::DATA_TYPE_BFLOAT16);
  EXPECT_EQ(DataTypeFromName("float32").value(), pb::DATA_TYPE_FLOAT32);
  EXPECT_THAT(DataTypeFromName("int8"), StatusIs(absl::StatusCode::kInvalidArgument));
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
