// Tests of npu::client::TilingClient against a scripted fake server: retries,
// deadlines, status mapping, batch order checks, dns:/// targets and health.
#include "client/tiling_client.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/status_matchers.h"

namespace npu::client {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
namespace pb = ::npu::tiling::v1;

enum class BatchMode { kEcho, kWrongId, kShort };

// Answers by script: `fail_code` (UNAVAILABLE unless set) for the first
// `fail_first` GetTiling calls, optionally hangs until cancelled, and echoes
// ids on batch streams.
class FakeService final : public pb::TilingService::Service {
 public:
  std::atomic<int> calls{0};
  std::atomic<int> fail_first{0};
  std::atomic<grpc::StatusCode> fail_code{grpc::StatusCode::UNAVAILABLE};
  std::atomic<bool> hang{false};
  BatchMode batch_mode = BatchMode::kEcho;

  grpc::Status GetTiling(grpc::ServerContext* context, const pb::TilingRequest* request,
                         pb::TilingResponse* response) override {
    const int call = ++calls;
    if (hang) {
      while (!context->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    }
    if (call <= fail_first) return grpc::Status(fail_code.load(), "warming up");
    if (request->problem().m() == 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "problem: m is 0");
    }
    response->set_id(request->id());
    response->set_tiling_key(4162);
    return grpc::Status::OK;
  }

  grpc::Status GetTilingBatch(
      grpc::ServerContext* /*context*/,
      grpc::ServerReaderWriter<pb::TilingResponse, pb::TilingRequest>* stream) override {
    pb::TilingRequest request;
    for (int i = 0; stream->Read(&request); ++i) {
      if (batch_mode == BatchMode::kShort && i == 1) break;
      pb::TilingResponse response;
      response.set_id(batch_mode == BatchMode::kWrongId && i == 1 ? "wrong" : request.id());
      stream->Write(response);
    }
    return grpc::Status::OK;
  }

  grpc::Status ListPlatforms(grpc::ServerContext* /*context*/,
                             const pb::ListPlatformsRequest* /*request*/,
                             pb::ListPlatformsResponse* response) override {
    response->add_platforms()->set_name("fake950");
    response->set_default_platform("fake950");
    return grpc::Status::OK;
  }
};

class TilingClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    server_->GetHealthCheckService()->SetServingStatus("npu.tiling.v1.TilingService", true);
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }

  std::unique_ptr<TilingClient> Connect(ClientOptions options = {}) {
    if (options.target == ClientOptions().target) {
      options.target = "127.0.0.1:" + std::to_string(port_);
    }
    absl::StatusOr<std::unique_ptr<TilingClient>> client = TilingClient::Connect(options);
    EXPECT_THAT(client, IsOk());
    return client.ok() ? *std::move(client) : nullptr;
  }

  static pb::TilingRequest Request(const std::string& id, int64_t m = 64) {
    pb::TilingRequest request;
    request.set_id(id);
    request.mutable_problem()->set_m(m);
    return request;
  }

  FakeService service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(TilingClientTest, GetTilingReturnsTheResponse) {
  auto client = Connect();
  absl::StatusOr<pb::TilingResponse> response = client->GetTiling(Request("a"));
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->id(), "a");
  EXPECT_EQ(response->tiling_key(), 4162u);
}

TEST_F(TilingClientTest, ServerErrorsKeepCodeAndMessage) {
  auto client = Connect();
  EXPECT_THAT(client->GetTiling(Request("bad", 0)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("problem: m")));
}

// Two failures with the given code, then an answer: retried codes cost three
// calls, others are the caller's after one.
class TilingClientRetryTest : public TilingClientTest,
                              public ::testing::WithParamInterface<grpc::StatusCode> {};

TEST_P(TilingClientRetryTest, RetriesOnlyWhatNoServerAnswered) {
  const grpc::StatusCode code = GetParam();
  service_.fail_first = 2;
  service_.fail_code = code;
  auto client = Connect();
  absl::StatusOr<pb::TilingResponse> response = client->GetTiling(Request("r"));
  // UNAVAILABLE: no healthy server took the call. CANCELLED: a server shut
  // down under it (server/service/README.md, Shutdown); this client never cancels a call.
  if (code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::CANCELLED) {
    EXPECT_THAT(response, IsOk());
    EXPECT_EQ(service_.calls.load(), 3);
  } else {
    EXPECT_THAT(response, StatusIs(static_cast<absl::StatusCode>(code), HasSubstr("warming up")));
    EXPECT_EQ(service_.calls.load(), 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Codes, TilingClientRetryTest,
                         ::testing::Values(grpc::StatusCode::UNAVAILABLE,
                                           grpc::StatusCode::CANCELLED,
                                           grpc::StatusCode::RESOURCE_EXHAUSTED,
                                           grpc::StatusCode::INTERNAL));

TEST_F(TilingClientTest, GivesUpAfterMaxAttempts) {
  service_.fail_first = 100;
  ClientOptions options;
  options.max_attempts = 2;
  auto client = Connect(options);
  EXPECT_THAT(client->GetTiling(Request("r")),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("warming up")));
  EXPECT_EQ(service_.calls.load(), 2);
}

TEST_F(TilingClientTest, EveryCallHasADeadline) {
  service_.hang = true;
  ClientOptions options;
  options.timeout = absl::Milliseconds(200);
  auto client = Connect(options);
  EXPECT_THAT(client->GetTiling(Request("slow")), StatusIs(absl::StatusCode::kDeadlineExceeded));
}

TEST_F(TilingClientTest, DnsTargetWithRoundRobin) {
  ClientOptions options;
  options.target = "dns:///127.0.0.1:" + std::to_string(port_);
  auto client = Connect(options);
  EXPECT_THAT(client->GetTiling(Request("dns")), IsOk());
  EXPECT_THAT(client->ListPlatforms(), IsOk());
}

TEST_F(TilingClientTest, UnreachableServerIsUnavailable) {
  ClientOptions options;
  options.target = "127.0.0.1:1";  // nothing listens on port 1
  options.max_attempts = 2;
  auto client = Connect(options);
  EXPECT_THAT(client->ListPlatforms(), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(TilingClientTest, ListPlatforms) {
  auto client = Connect();
  absl::StatusOr<pb::ListPlatformsResponse> platforms = client->ListPlatforms();
  ASSERT_THAT(platforms, IsOk());
  EXPECT_EQ(platforms->default_platform(), "fake950");
}

TEST_F(TilingClientTest, BatchKeepsOrder) {
  auto client = Connect();
  std::vector<pb::TilingRequest> requests;
  for (int i = 0; i < 500; ++i) requests.push_back(Request("id" + std::to_string(i)));
  absl::StatusOr<std::vector<pb::TilingResponse>> responses = client->GetTilingBatch(requests);
  ASSERT_THAT(responses, IsOk());
  ASSERT_EQ(responses->size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) EXPECT_EQ((*responses)[i].id(), requests[i].id());
}

TEST_F(TilingClientTest, BatchDetectsReorderedAnswers) {
  service_.batch_mode = BatchMode::kWrongId;
  auto client = Connect();
  EXPECT_THAT(client->GetTilingBatch({Request("a"), Request("b"), Request("c")}),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("\"wrong\"")));
}

TEST_F(TilingClientTest, BatchDetectsLostAnswers) {
  service_.batch_mode = BatchMode::kShort;
  auto client = Connect();
  EXPECT_THAT(client->GetTilingBatch({Request("a"), Request("b"), Request("c")}),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("1 responses for 3 requests")));
}

TEST_F(TilingClientTest, HealthCheck) {
  auto client = Connect();
  EXPECT_EQ(client->CheckHealth("").value(), ServingStatus::kServing);
  EXPECT_EQ(client->CheckHealth("npu.tiling.v1.TilingService").value(), ServingStatus::kServing);
  EXPECT_THAT(client->CheckHealth("unknown.Service"), StatusIs(absl::StatusCode::kNotFound));
  server_->GetHealthCheckService()->SetServingStatus("npu.tiling.v1.TilingService", false);
  EXPECT_EQ(client->CheckHealth("npu.tiling.v1.TilingService").value(), ServingStatus::kNotServing);
}

TEST(TilingClientOptionsTest, RejectsBadOptions) {
  ClientOptions options;
  options.target = "";
  EXPECT_THAT(TilingClient::Connect(options), StatusIs(absl::StatusCode::kInvalidArgument));
  options.target = "localhost:50051";
  options.max_attempts = 6;
  EXPECT_THAT(TilingClient::Connect(options), StatusIs(absl::StatusCode::kInvalidArgument));
  options.max_attempts = 3;
  options.timeout = absl::ZeroDuration();
  EXPECT_THAT(TilingClient::Connect(options), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ServiceConfigTest, RetriesUnavailableAndCancelledWithRoundRobin) {
  ClientOptions options;
  options.max_attempts = 3;
  const nlohmann::json config = nlohmann::json::parse(ServiceConfigJson(options));
  EXPECT_EQ(config["loadBalancingConfig"][0].count("round_robin"), 1u);
  const nlohmann::json& retry = config["methodConfig"][0]["retryPolicy"];
  EXPECT_EQ(retry["maxAttempts"], 3);
  EXPECT_EQ(retry["retryableStatusCodes"], nlohmann::json::array({"UNAVAILABLE", "CANCELLED"}));
}

TEST(FromGrpcStatusTest, KeepsCodeAndMessage) {
  EXPECT_THAT(FromGrpcStatus(grpc::Status::OK), IsOk());
  for (int code = 1; code <= 16; ++code) {
    absl::Status status = FromGrpcStatus(grpc::Status(static_cast<grpc::StatusCode>(code), "m"));
    EXPECT_EQ(static_cast<int>(status.code()), code);
    EXPECT_EQ(status.message(), "m");
  }
}

}  // namespace
}  // namespace npu::client
