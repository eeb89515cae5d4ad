// The decoder of the common request shape against protobuf's parser: what
// it accepts it reads exactly as protobuf does; everything else it declines,
// and the service's parser then reads the bytes with protobuf.
#include "server/service/request_wire.h"

#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/service/tiling_service.h"
#include "tests/service/test_server.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
using google::protobuf::util::MessageDifferencer;

// A request with every field of the common shape set, at unusual values.
pb::TilingRequest EveryCommonField() {
  pb::TilingRequest request = testing::StreamKRequest();
  request.set_id("id-7");
  request.set_platform("ascend950pr");
  request.set_forced_strategy("BASIC_ASWT");
  request.set_include_trace(true);
  request.set_client_id("compiler/1.0");
  request.set_mode(pb::TILING_MODE_CANN_COMPATIBLE);
  request.set_view(pb::RESPONSE_VIEW_COMPACT);
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_m(-5);  // negative: a ten-byte varint
  p->set_n(INT64_MAX);
  p->set_k(INT64_MIN);
  p->set_dtype_a(static_cast<pb::DataType>(99));  // proto3 keeps unknown enum values
  p->set_dtype_b(pb::DATA_TYPE_BFLOAT16);
  p->set_dtype_c(static_cast<pb::DataType>(-1));
  p->set_has_bias(true);
  p->set_dtype_bias(pb::DATA_TYPE_FLOAT32);
  p->set_trans_a(true);
  p->set_trans_b(true);
  p->set_format_a(pb::FORMAT_ND);
  p->set_format_b(pb::FORMAT_FRACTAL_NZ);
  p->set_format_c(static_cast<pb::Format>(1000));
  p->set_hf32(true);
  p->set_force_grp_acc_fp32(true);
  p->set_deterministic_level(INT32_MIN);
  p->set_avoid_tensor_api(true);
  return request;
}

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// Whether the decoder accepts `bytes`; when it does, it must have read what
// protobuf reads.
bool AcceptsAsProtobufReads(const std::string& bytes) {
  pb::TilingRequest decoded;
  if (!DecodeCommonRequest(bytes, &decoded)) return false;
  pb::TilingRequest parsed;
  EXPECT_TRUE(parsed.ParseFromString(bytes)) << "accepted bytes protobuf rejects";
  EXPECT_TRUE(MessageDifferencer::Equals(decoded, parsed))
      << "decoded: " << decoded.ShortDebugString() << "\nparsed:  " << parsed.ShortDebugString();
  return true;
}

TEST(RequestWireTest, ReadsTheCommonShapeAsProtobufDoes) {
  std::vector<pb::TilingRequest> requests = {pb::TilingRequest(), testing::StreamKRequest(),
                                             testing::ShapeRequest(17, 255, 1), EveryCommonField()};
  pb::TilingRequest empty_problem;
  empty_problem.mutable_problem();  // present, every field default
  requests.push_back(empty_problem);
  for (const pb::TilingRequest& request : requests) {
    SCOPED_TRACE(request.ShortDebugString());
    EXPECT_TRUE(AcceptsAsProtobufReads(request.SerializeAsString()));
  }
  // Two copies of a scalar or string field: the last one counts.
  const std::string twice = Bytes({0x0A, 1, 'a', 0x30, 1, 0x0A, 1, 'b', 0x30, 0});
  EXPECT_TRUE(AcceptsAsProtobufReads(twice));
  // A varint longer than it needs to be (view = 2 in three bytes).
  EXPECT_TRUE(AcceptsAsProtobufReads(Bytes({0x50, 0x82, 0x80, 0x00})));
}

TEST(RequestWireTest, DeclinesEverythingElse) {
  pb::TilingRequest overrides = testing::StreamKRequest();
  overrides.mutable_platform_overrides()->set_aic_num(24);
  pb::TilingRequest advise = testing::StreamKRequest();
  advise.set_mode(pb::TILING_MODE_ADVISE);
  advise.mutable_advise()->set_max_candidates(3);
  pb::TilingRequest storage = testing::StreamKRequest();
  storage.mutable_problem()->add_storage_shape_b(80);
  pb::TilingRequest slice = testing::StreamKRequest();
  slice.mutable_problem()->mutable_a_slice()->set_enabled(true);
  pb::TilingRequest utf8 = testing::StreamKRequest();
  utf8.set_id("\xe7\x9f\xa9\xe9\x98\xb5");  // valid UTF-8, left to protobuf's check
  const std::string problem = testing::StreamKRequest().problem().SerializeAsString();
  std::string two_problems;
  for (int i = 0; i < 2; ++i) {
    two_problems += Bytes({0x12, static_cast<int>(problem.size())}) + problem;
  }

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"platform_overrides", overrides.SerializeAsString()},
      {"advise", advise.SerializeAsString()},
      {"storage_shape_b", storage.SerializeAsString()},
      {"a_slice", slice.SerializeAsString()},
      {"non-ASCII id", utf8.SerializeAsString()},
      {"invalid UTF-8 id", Bytes({0x0A, 2, 0xC3, 0x28})},
      {"two problems (merged by protobuf)", two_problems},
      {"unknown field 99", Bytes({0x98, 0x06, 1})},
      {"field number 0", Bytes({0x00, 1})},
      {"id as a varint", Bytes({0x08, 1})},
      {"view as a string", Bytes({0x52, 1, 'x'})},
      {"m as fixed64", Bytes({0x12, 9, 0x09, 1, 2, 3, 4, 5, 6, 7, 8})},
      {"truncated varint", Bytes({0x50, 0x80})},
      {"eleven-byte varint",
       Bytes({0x50, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00})},
      {"length past the end", Bytes({0x0A, 5, 'a'})},
      {"problem past the end", Bytes({0x12, 4, 0x08, 1})},
  };
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    pb::TilingRequest decoded;
    EXPECT_FALSE(DecodeCommonRequest(bytes, &decoded));
    // The service's parser still reads it as protobuf does.
    grpc::Slice slice_bytes(bytes.data(), bytes.size());
    const grpc::ByteBuffer buffer(&slice_bytes, 1);
    pb::TilingRequest via_service, via_protobuf;
    const bool parsed = via_protobuf.ParseFromString(bytes);
    EXPECT_EQ(TilingService::ParseRequest(buffer, &via_service).ok(), parsed);
    if (parsed) {
      EXPECT_TRUE(MessageDifferencer::Equals(via_service, via_protobuf));
    }
  }
}

// Random damage to common requests: whatever the decoder still accepts, it
// reads as protobuf does (the tiling_request fuzzer runs the same check on
// coverage-guided inputs).
TEST(RequestWireTest, DamagedRequestsAreReadAsProtobufReadsThem) {
  std::mt19937 random(20261129);
  const std::vector<std::string> seeds = {testing::StreamKRequest().SerializeAsString(),
                                          EveryCommonField().SerializeAsString()};
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = seeds[i % seeds.size()];
    const int edits = 1 + static_cast<int>(random() % 3);
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      const size_t at = random() % bytes.size();
      switch (random() % 3) {
        case 0:
          bytes[at] = static_cast<char>(random());
          break;
        case 1:
          bytes.erase(at, 1);
          break;
        default:
          bytes.insert(at, 1, static_cast<char>(random()));
      }
    }
    if (AcceptsAsProtobufReads(bytes)) ++accepted;
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "after damage " << i;
      break;
    }
  }
  // Enough of the damaged requests keep the common shape to mean something.
  EXPECT_GT(accepted, 1000);
}

}  // namespace
}  // namespace npu::server
