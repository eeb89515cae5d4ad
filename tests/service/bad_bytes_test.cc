// Bytes that are not the request message, sent to every method of a real
// server through a generic (bytes) stub: each is INVALID_ARGUMENT with a
// message naming the request type, never UNIMPLEMENTED (which a client reads
// as "no such method"); a batch answers such an item in its status and goes
// on. The inputs are fixed malformed encodings, every truncation of a valid
// request and seeded random bytes; only those protobuf itself rejects are
// sent (random bytes often parse as unknown fields).

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/message.h"
#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "tests/service/raw_calls.h"
#include "tests/service/test_server.h"
#include "tests/testing/onnx_builder.h"

namespace npu::server::testing {
namespace {

using ::testing::HasSubstr;

pb::ExecuteRequest ValidExecuteRequest() {
  pb::ExecuteRequest request;
  request.set_id("execute");
  *request.mutable_problem() = ShapeRequest(16, 16, 16).problem();
  request.set_timing_only(true);
  return request;
}

// Candidate inputs for `prototype`'s type: fixed malformed encodings, every
// truncation of `valid`, and random bytes; those protobuf rejects as that
// type.
std::vector<std::string> Unparseable(const google::protobuf::Message& prototype,
                                     const std::string& valid) {
  std::vector<std::string> candidates = {
      std::string("\x08", 1),              // a varint tag with no value
      std::string("\x12\x7f\x08\x01", 4),  // a field claims 127 bytes, has 2
      std::string("\x0f\x00", 2),          // wire type 7 does not exist
      std::string("\x0a\x02\xff\xfe", 4),  // field 1 of two bytes, not UTF-8 if a string
      std::string("\x80", 1),              // a tag cut inside its varint
  };
  for (size_t size = 1; size < valid.size(); ++size) candidates.push_back(valid.substr(0, size));
  std::mt19937 random(20261201);
  for (int i = 0; i < 200; ++i) {
    std::string bytes(1 + random() % 48, '\0');
    for (char& byte : bytes) byte = static_cast<char>(random() & 0xff);
    candidates.push_back(bytes);
  }
  std::vector<std::string> rejected;
  std::unique_ptr<google::protobuf::Message> parsed(prototype.New());
  for (const std::string& bytes : candidates) {
    if (!parsed->ParseFromString(bytes)) rejected.push_back(bytes);
  }
  return rejected;
}

// A GetGraphTiling request of a one-MatMul model.
pb::GraphTilingRequest ValidGraphRequest() {
  ::npu::testing::OnnxBuilder model;
  model.Input("a", ::npu::testing::kFloat16, {64, 32})
      .Input("b", ::npu::testing::kFloat16, {32, 16});
  model.Node("MatMul", {"a", "b"}, {"c"}).Output("c", ::npu::testing::kFloat16);
  pb::GraphTilingRequest request;
  request.set_model(model.Bytes());
  return request;
}

struct UnaryMethod {
  const char* name;
  const google::protobuf::Message* prototype;
  std::string valid;
};

TEST(BadBytesTest, EveryUnaryMethodAnswersUnparseableBytesWithInvalidArgument) {
  TestServer server;
  const UnaryMethod methods[] = {
      {"GetTiling", &pb::TilingRequest::default_instance(), StreamKRequest().SerializeAsString()},
      {"ListPlatforms", &pb::ListPlatformsRequest::default_instance(), ""},
      {"Execute", &pb::ExecuteRequest::default_instance(),
       ValidExecuteRequest().SerializeAsString()},
      {"GetGraphTiling", &pb::GraphTilingRequest::default_instance(),
       ValidGraphRequest().SerializeAsString()},
  };
  for (const UnaryMethod& method : methods) {
    const std::string type = method.prototype->GetDescriptor()->full_name();
    const std::vector<std::string> inputs = Unparseable(*method.prototype, method.valid);
    // Enough of each kind to mean something.
    ASSERT_GE(inputs.size(), 20u) << method.name;
    for (const std::string& bytes : inputs) {
      const grpc::Status status = RawUnaryCall(server.channel(), method.name, bytes);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
          << method.name << ": " << status.error_message();
      EXPECT_THAT(status.error_message(), HasSubstr(absl::StrCat("not a valid ", type)))
          << method.name;
    }
    // The valid request still works.
    const grpc::Status status = RawUnaryCall(server.channel(), method.name, method.valid);
    EXPECT_TRUE(status.ok()) << method.name << ": " << status.error_message();
  }
  EXPECT_GE(server.Metric("npu_tiling_request_errors_total", {{"grpc_code", "InvalidArgument"}}),
            1);
}

// A batch whose items alternate between valid requests and unparseable bytes:
// every item is answered in order, the bad ones in their status, and the
// stream ends OK.
TEST(BadBytesTest, BatchAnswersEveryUnparseableItemInItsStatus) {
  TestServer server;
  const std::string valid = StreamKRequest().SerializeAsString();
  const std::vector<std::string> garbage =
      Unparseable(pb::TilingRequest::default_instance(), valid);
  ASSERT_GE(garbage.size(), 20u);
  std::vector<std::string> items;
  for (const std::string& bytes : garbage) {
    items.push_back(valid);
    items.push_back(bytes);
  }

  const RawBatchResult result = RawBatch(server.channel(), items);
  EXPECT_TRUE(result.status.ok()) << result.status.error_message();
  const std::vector<pb::TilingResponse>& answers = result.answers;
  ASSERT_EQ(answers.size(), items.size());
  for (size_t i = 0; i < answers.size(); ++i) {
    if (i % 2 == 0) {
      EXPECT_EQ(answers[i].id(), "streamk");
      EXPECT_FALSE(answers[i].has_status()) << answers[i].status().message();
    } else {
      EXPECT_EQ(answers[i].id(), "");
      EXPECT_EQ(answers[i].status().code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
      EXPECT_THAT(answers[i].status().message(),
                  HasSubstr("not a valid npu.tiling.v1.TilingRequest"));
    }
  }
}

}  // namespace
}  // namespace npu::server::testing
