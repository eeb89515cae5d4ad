// GetTilingBatch through a real server on 127.0.0.1:0 (batch_reactor.cc):
// order and completeness of long streams, the same answers as unary calls,
// per-item views, empty streams and the per-stream limit.
#include "server/service/batch_reactor.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/service/test_server.h"

namespace npu::server {
namespace {

using ::npu::server::testing::BatchResult;
using ::npu::server::testing::LoopbackOptions;
using ::npu::server::testing::RunBatch;
using ::npu::server::testing::ShapeRequest;
using ::npu::server::testing::StreamKRequest;
using ::npu::server::testing::TestServer;
using ::npu::server::testing::VariedRequests;
using ::npu::server::testing::WaitForNoAdmittedCalls;
using ::testing::HasSubstr;
namespace pb = ::npu::tiling::v1;

grpc::Status Call(TestServer& server, const pb::TilingRequest& request,
                  pb::TilingResponse* response) {
  return ::npu::server::testing::CallGetTiling(server, request, response);
}

TEST(GetTilingBatchTest, TenThousandRequestsInOrderWithoutLoss) {
  TestServer server;
  constexpr int kRequests = 10000;
  std::vector<pb::TilingRequest> requests;
  requests.reserve(kRequests);
  for (int i = 0; i < kRequests; ++i) {
    // A few hundred distinct shapes, so both cache hits and misses occur;
    // every 1000th request is invalid.
    pb::TilingRequest request = ShapeRequest(i % 1000 == 999 ? 0 : 16 + (i % 397) * 16, 1024, 512);
    request.set_id("item-" + std::to_string(i));
    requests.push_back(std::move(request));
  }
  BatchResult result = RunBatch(server.stub(), requests);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(result.responses.size(), requests.size());
  int failed = 0;
  for (int i = 0; i < kRequests; ++i) {
    const pb::TilingResponse& response = result.responses[i];
    ASSERT_EQ(response.id(), requests[i].id());
    if (i % 1000 == 999) {
      ++failed;
      ASSERT_TRUE(response.has_status());
      EXPECT_EQ(response.status().code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
      EXPECT_EQ(response.status().code_name(), "INVALID_ARGUMENT");
      EXPECT_THAT(response.status().message(), HasSubstr("problem"));
      EXPECT_EQ(response.tiling_key(), 0u);
    } else {
      ASSERT_FALSE(response.has_status()) << response.status().message();
      EXPECT_GT(response.block_dim(), 0u);
    }
  }
  EXPECT_EQ(failed, 10);
  WaitForNoAdmittedCalls(server);
  EXPECT_EQ(server.Metric("grpc_server_msg_received_total", {{"grpc_method", "GetTilingBatch"}}),
            kRequests);
  EXPECT_EQ(server.Metric("grpc_server_msg_sent_total", {{"grpc_method", "GetTilingBatch"}}),
            kRequests);
  EXPECT_EQ(server.Metric("npu_tiling_request_errors_total", {{"grpc_code", "InvalidArgument"}}),
            10);
}

TEST(GetTilingBatchTest, AnswersMatchUnaryAnswers) {
  TestServer server;
  const std::vector<pb::TilingRequest> requests = VariedRequests();
  BatchResult result = RunBatch(server.stub(), requests);
  ASSERT_TRUE(result.status.ok());
  ASSERT_EQ(result.responses.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    pb::TilingResponse unary;
    grpc::Status status = Call(server, requests[i], &unary);
    pb::TilingResponse batched = result.responses[i];
    if (!status.ok()) {
      EXPECT_EQ(batched.status().code(), static_cast<int>(status.error_code()));
      EXPECT_EQ(batched.status().message(), status.error_message());
      continue;
    }
    unary.set_from_cache(false);
    batched.set_from_cache(false);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(unary, batched))
        << requests[i].id();
  }
}

TEST(GetTilingBatchTest, ItemsAnswerInTheirOwnView) {
  TestServer server;
  std::vector<pb::TilingRequest> requests = VariedRequests();
  for (size_t i = 0; i < requests.size(); i += 2) {
    requests[i].set_view(pb::RESPONSE_VIEW_COMPACT);
  }
  BatchResult result = RunBatch(server.stub(), requests);
  ASSERT_TRUE(result.status.ok());
  ASSERT_EQ(result.responses.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const pb::TilingResponse& batched = result.responses[i];
    if (batched.has_status()) continue;
    EXPECT_EQ(batched.has_key(), i % 2 == 1) << requests[i].id();
    EXPECT_EQ(batched.has_platform(), i % 2 == 1) << requests[i].id();
    EXPECT_GT(batched.raw_words_size(), 0) << requests[i].id();
  }
}

TEST(GetTilingBatchTest, EmptyStreamFinishesOk) {
  TestServer server;
  BatchResult result = RunBatch(server.stub(), {});
  EXPECT_TRUE(result.status.ok());
  EXPECT_TRUE(result.responses.empty());
}

TEST(GetTilingBatchTest, StreamLongerThanMaxBatchEndsResourceExhausted) {
  ServerOptions options = LoopbackOptions();
  options.service.max_batch = 5;
  TestServer server(options);
  std::vector<pb::TilingRequest> requests(8, StreamKRequest());
  BatchResult result = RunBatch(server.stub(), requests);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(result.status.error_message(), HasSubstr("max_batch"));
  EXPECT_EQ(result.responses.size(), 5u);
}

}  // namespace
}  // namespace npu::server
