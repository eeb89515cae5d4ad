// WeightQuantBatchMatmulV2 through the gRPC service: a golden case answered
// with CANN's key decoded by name, the antiquant mode, the 64-bit members of
// its struct, the strategy's /metrics series, and CANN's refusals as
// INVALID_ARGUMENT naming the field.
#include <grpcpp/client_context.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/test_server.h"

namespace npu::server {
namespace {

using ::npu::server::testing::TestServer;
using ::testing::HasSubstr;
namespace pb = ::npu::tiling::v1;

// CANN's adaptive_split golden davidCase_2_1024_4096 (key 0x11033002, block
// dim 16) on its harness platform.
pb::TilingRequest GoldenRequest() {
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_op(pb::OPERATOR_WEIGHT_QUANT_BATCH_MATMUL_V2);
  p->set_m(2);
  p->set_k(1024);
  p->set_n(4096);
  p->set_dtype_a(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_b(pb::DATA_TYPE_INT4);
  p->set_dtype_c(pb::DATA_TYPE_FLOAT16);
  pb::QuantTensor* scale = p->mutable_quant()->mutable_antiquant_scale();
  scale->set_dtype(pb::DATA_TYPE_FLOAT16);
  scale->add_shape(1);
  pb::PlatformOverrides* o = request.mutable_platform_overrides();
  o->set_l1_bytes(524032);
  o->set_l0c_bytes(131072);
  o->set_ub_bytes(196352);
  return request;
}

grpc::Status Call(TestServer& server, const pb::TilingRequest& request,
                  pb::TilingResponse* response) {
  return ::npu::server::testing::CallGetTiling(server, request, response);
}

TEST(WeightQuantServiceTest, AnswersTheGoldenCaseWithTheKeyDecodedByName) {
  TestServer server;
  pb::TilingResponse response;
  const grpc::Status status = Call(server, GoldenRequest(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.tiling_key(), 0x11033002u);
  EXPECT_EQ(response.block_dim(), 16u);
  EXPECT_EQ(response.strategy(), "ADAPTIVE_SPLIT");
  EXPECT_EQ(response.quant_mode(), "PER_TENSOR");
  EXPECT_EQ(response.kernel_type(), pb::KERNEL_TYPE_MIX_AIC_1_AIV_2);
  EXPECT_EQ(response.tiling_struct(), "WeightQuantBatchMatmulV2ASTilingDataParams");
  EXPECT_EQ(response.raw_words_size(), 70);
  EXPECT_EQ(response.workspace_bytes(), 16u * 1024 * 1024);
  EXPECT_EQ(response.key().layout(), "WEIGHT_QUANT");
  std::string sub_algorithm, template_custom;
  for (const pb::KeyField& field : response.key().fields()) {
    if (field.name() == "sub_algorithm") sub_algorithm = field.value_name();
    if (field.name() == "template_custom") template_custom = field.value_name();
  }
  EXPECT_EQ(sub_algorithm, "N_FIRST_BASIC_BLOCK");
  EXPECT_EQ(template_custom, "MTE2_INNER_SIZE_256_BUF_NUM_4");
  // kSize is a 64-bit member: one field, two words.
  bool k_size = false;
  for (const pb::TilingField& field : response.fields()) {
    if (field.name() == "kSize") {
      k_size = true;
      EXPECT_EQ(field.value(), 1024u);
      EXPECT_EQ(field.bits(), 64u);
    }
  }
  EXPECT_TRUE(k_size);
  EXPECT_EQ(server.Metric("npu_tiling_decisions_total", {{"strategy", "ADAPTIVE_SPLIT"}}), 1);
}

TEST(WeightQuantServiceTest, CannRefusalsAreInvalidArgumentNamingTheField) {
  TestServer server;
  pb::TilingRequest request = GoldenRequest();
  request.mutable_problem()->set_trans_a(true);
  pb::TilingResponse response;
  grpc::Status status = Call(server, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("field trans_a: transpose_x must be false"));

  request = GoldenRequest();
  request.mutable_problem()->mutable_quant()->clear_antiquant_scale();
  status = Call(server, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("quant.antiquant_scale is required"));
}

}  // namespace
}  // namespace npu::server
