// The request pipeline: parsing names the message type and leaves nothing of
// a failed parse behind, a request in several slices parses like one in one,
// and the steps run in their fixed order (the first failing step's error is
// the answer).
#include "server/service/request_pipeline.h"

#include <grpcpp/support/byte_buffer.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "tests/service/test_server.h"
#include "tests/testing/status_matchers.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

grpc::ByteBuffer Buffer(const std::vector<std::string>& parts) {
  std::vector<grpc::Slice> slices;
  for (const std::string& part : parts) slices.emplace_back(part);
  return grpc::ByteBuffer(slices.data(), slices.size());
}

TEST(RequestPipelineTest, ParseFailureNamesTheMessageTypeAndClearsTheMessage) {
  // Field 1 (id) of two bytes that are not UTF-8, after a valid client_id.
  pb::TilingRequest valid;
  valid.set_client_id("client");
  const std::string bytes = valid.SerializeAsString() + std::string("\x0a\x02\xff\xfe", 4);
  pb::TilingRequest request;
  EXPECT_THAT(ParseRequestBytes(Buffer({bytes}), &request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("request: not a valid npu.tiling.v1.TilingRequest")));
  EXPECT_EQ(request.client_id(), "");

  pb::ExecuteRequest execute;
  EXPECT_THAT(ParseRequestBytes(Buffer({std::string("\x08", 1)}), &execute),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not a valid npu.tiling.v1.ExecuteRequest")));
  pb::ListPlatformsRequest list;
  EXPECT_THAT(ParseRequestBytes(Buffer({std::string("\x0f\x00", 2)}), &list),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not a valid npu.tiling.v1.ListPlatformsRequest")));
  EXPECT_TRUE(ParseRequestBytes(Buffer({""}), &list).ok());
}

TEST(RequestPipelineTest, ManySlicesParseLikeOne) {
  const pb::TilingRequest original = testing::StreamKRequest();
  const std::string bytes = original.SerializeAsString();
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    pb::TilingRequest request;
    ASSERT_TRUE(
        ParseRequestBytes(Buffer({bytes.substr(0, cut), bytes.substr(cut)}), &request).ok());
    EXPECT_EQ(request.SerializeAsString(), bytes) << "cut at " << cut;
  }
  // A truncated request fails the same way in pieces.
  pb::TilingRequest request;
  const std::string truncated = bytes.substr(0, bytes.size() - 1);
  EXPECT_THAT(ParseRequestBytes(Buffer({truncated.substr(0, 3), truncated.substr(3)}), &request),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(RequestPipelineTest, ReusedMessageOnlyForSmallRequests) {
  std::unique_ptr<pb::TilingRequest> owned;
  pb::TilingRequest* small = TilingRequestFor(Buffer({"abc"}), owned);
  EXPECT_EQ(owned, nullptr);
  EXPECT_EQ(TilingRequestFor(Buffer({"abc"}), owned), small);  // the same thread's message
  pb::TilingRequest* large =
      TilingRequestFor(Buffer({std::string(kReusedRequestBytes + 1, 'x')}), owned);
  EXPECT_NE(owned, nullptr);
  EXPECT_EQ(large, owned.get());
}

TEST(RequestPipelineTest, ResolvesProblemAndChip) {
  ResolvedRequest resolved;
  const absl::Status status = ResolveRequest(testing::StreamKRequest(), &resolved);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(resolved.inputs.problem().m, 4096);
  EXPECT_EQ(resolved.inputs.chip().name, tl::kDefaultPlatform);
}

// Each step's error wins over every later step's, and a later step does not
// run after a failure.
TEST(RequestPipelineTest, StepsRunInOrderAndStopAtTheFirstError) {
  ResolvedRequest resolved;
  std::vector<std::string> ran;
  RequestSteps steps;
  steps.check_fields = [&] {
    ran.push_back("fields");
    return absl::FailedPreconditionError("fields");
  };
  steps.check_problem = [&](const tl::MatmulProblem&) {
    ran.push_back("problem");
    return absl::UnimplementedError("problem");
  };
  steps.resolve_chip = [&]() -> absl::StatusOr<tl::ChipSpec> {
    ran.push_back("chip");
    return absl::NotFoundError("chip");
  };

  pb::TilingRequest wire_error = testing::StreamKRequest();
  wire_error.mutable_problem()->set_dtype_a(pb::DATA_TYPE_UNSPECIFIED);
  EXPECT_THAT(ResolveRequest(PartsOf(wire_error), steps, &resolved),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("problem.dtype_a")));
  EXPECT_TRUE(ran.empty());

  EXPECT_THAT(ResolveRequest(PartsOf(testing::StreamKRequest()), steps, &resolved),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(ran, std::vector<std::string>({"fields"}));

  ran.clear();
  steps.check_fields = nullptr;
  pb::TilingRequest bad_problem = testing::StreamKRequest();
  bad_problem.mutable_problem()->set_m(0);
  EXPECT_THAT(ResolveRequest(PartsOf(bad_problem), steps, &resolved),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("problem")));
  EXPECT_TRUE(ran.empty());

  EXPECT_THAT(ResolveRequest(PartsOf(testing::StreamKRequest()), steps, &resolved),
              StatusIs(absl::StatusCode::kUnimplemented));
  EXPECT_EQ(ran, std::vector<std::string>({"problem"}));

  ran.clear();
  steps.check_problem = nullptr;
  EXPECT_THAT(ResolveRequest(PartsOf(testing::StreamKRequest()), steps, &resolved),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(ran, std::vector<std::string>({"chip"}));
}

// A chip CANN's tiling does not cover is refused once resolved, naming the
// platform; an RPC that serves any architecture (Execute with a kernel
// schedule) says so in its steps.
TEST(RequestPipelineTest, ChipOfAnotherArchitectureNeedsAnyArch) {
  pb::TilingRequest request = testing::ShapeRequest(256, 256, 256);
  request.set_platform("ascend910b1");
  ResolvedRequest resolved;
  EXPECT_THAT(ResolveRequest(request, &resolved),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("platform: CANN's arch35 mat_mul_v3 tiling applies to DAV_3510 "
                                 "only; platform \"ascend910b1\" is DAV_2201")));
  RequestSteps steps;
  steps.any_arch = true;
  const absl::Status status = ResolveRequest(PartsOf(request), steps, &resolved);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(resolved.inputs.chip().name, "ascend910b1");
  EXPECT_EQ(resolved.inputs.chip().npu_arch, tl::NpuArch::kDav2201);
}

TEST(RequestPipelineTest, SerializeMessageWritesProtobufsBytes) {
  const pb::TilingRequest request = testing::StreamKRequest();
  grpc::ByteBuffer bytes;
  ASSERT_TRUE(SerializeMessage(request, &bytes).ok());
  pb::TilingRequest parsed;
  ASSERT_TRUE(ParseRequestBytes(bytes, &parsed).ok());
  EXPECT_EQ(parsed.SerializeAsString(), request.SerializeAsString());
}

}  // namespace
}  // namespace npu::server
