// Bytes that are not a request message, through the real tiling_server
// binary: every method answers INVALID_ARGUMENT naming the message type
// (gRPC's generated handlers would answer UNIMPLEMENTED with no message,
// which reads as "no such method"), and a GetTilingBatch stream answers such
// an item in its status and goes on (generated handlers would end it OK at
// the first one, leaving the rest unanswered). tests/service/bad_bytes_test.cc
// sends truncated and random bytes in process.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/message.h"
#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.grpc.pb.h"
#include "tests/integration/server_process.h"
#include "tests/service/raw_calls.h"

namespace npu::server::testing {
namespace {

namespace pb = ::npu::tiling::v1;
using ::testing::HasSubstr;

// A valid fp16 1024 x 1024 x 1024 problem on the default platform.
pb::TilingRequest ValidRequest() {
  pb::TilingRequest request;
  request.set_id("bad-bytes");
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_m(1024);
  p->set_n(1024);
  p->set_k(1024);
  p->set_dtype_a(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_b(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_c(pb::DATA_TYPE_FLOAT16);
  return request;
}

// The server binary, one per test.
std::unique_ptr<ServerProcess> StartServer() {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start(NPU_SERVER_BINARY, {"--metrics_port=-1", "--drain_seconds=1"});
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

std::shared_ptr<grpc::Channel> ChannelTo(const ServerProcess& server) {
  return grpc::CreateChannel(server.target(), grpc::InsecureChannelCredentials());
}

// Malformed protobuf wire format, and a string field that is not UTF-8.
const std::vector<std::string>& Garbage() {
  static const std::vector<std::string>* garbage = new std::vector<std::string>{
      std::string("\x08", 1),              // a varint tag with no value
      std::string("\x12\x7f\x08\x01", 4),  // problem claims 127 bytes, has 2
      std::string("\x0f\x00", 2),          // wire type 7 does not exist
      std::string("\x0a\x02\xff\xfe", 4),  // id is not UTF-8
      std::string("\x80", 1),              // a tag cut inside its varint
  };
  return *garbage;
}

TEST(BadBytesTest, UnparseableBytesAreInvalidArgumentNamingTheMessageOnEveryMethod) {
  std::unique_ptr<ServerProcess> server = StartServer();
  ASSERT_NE(server, nullptr);
  const std::shared_ptr<grpc::Channel> channel = ChannelTo(*server);
  const struct {
    const char* method;
    const google::protobuf::Message& prototype;
  } methods[] = {{"GetTiling", pb::TilingRequest::default_instance()},
                 {"Execute", pb::ExecuteRequest::default_instance()},
                 {"ListPlatforms", pb::ListPlatformsRequest::default_instance()},
                 {"GetGraphTiling", pb::GraphTilingRequest::default_instance()}};
  for (const auto& m : methods) {
    const std::string message = m.prototype.GetDescriptor()->full_name();
    int sent = 0;
    for (const std::string& bytes : Garbage()) {
      // A message without fields takes any well-formed bytes as unknown
      // fields.
      std::unique_ptr<google::protobuf::Message> parsed(m.prototype.New());
      if (parsed->ParseFromString(bytes)) continue;
      ++sent;
      const grpc::Status status = RawUnaryCall(channel, m.method, bytes);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
          << m.method << ": " << status.error_message();
      EXPECT_THAT(status.error_message(), HasSubstr(absl::StrCat("not a valid ", message)));
    }
    EXPECT_GE(sent, 3) << m.method;
  }
  // The server is unharmed.
  EXPECT_TRUE(RawUnaryCall(channel, "GetTiling", ValidRequest().SerializeAsString()).ok());
  server->Signal(SIGTERM);
  EXPECT_EQ(server->Wait(), 0) << server->Log();
}

// A batch whose items alternate between valid requests and garbage, over a
// generic (bytes) stream: every item is answered, in order, and the stream
// ends OK.
TEST(BadBytesTest, UnparseableBatchItemsAreAnsweredAndTheStreamGoesOn) {
  std::vector<std::string> items;
  for (size_t i = 0; i <= Garbage().size(); ++i) {
    pb::TilingRequest request = ValidRequest();
    request.set_id(absl::StrCat("good", i));
    items.push_back(request.SerializeAsString());
    if (i < Garbage().size()) items.push_back(Garbage()[i]);
  }
  std::unique_ptr<ServerProcess> server = StartServer();
  ASSERT_NE(server, nullptr);
  const RawBatchResult result = RawBatch(ChannelTo(*server), items);
  EXPECT_TRUE(result.status.ok()) << result.status.error_message();
  const std::vector<pb::TilingResponse>& answers = result.answers;
  ASSERT_EQ(answers.size(), items.size());
  for (size_t i = 0; i < answers.size(); ++i) {
    if (i % 2 == 0) {
      EXPECT_EQ(answers[i].id(), absl::StrCat("good", i / 2));
      EXPECT_FALSE(answers[i].has_status()) << answers[i].status().message();
    } else {
      EXPECT_EQ(answers[i].status().code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
      EXPECT_THAT(answers[i].status().message(), HasSubstr("not a valid"));
    }
  }
  server->Signal(SIGTERM);
  EXPECT_EQ(server->Wait(), 0) << server->Log();
}

}  // namespace
}  // namespace npu::server::testing
