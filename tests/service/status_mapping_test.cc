#include "server/service/status_mapping.h"

#include "gtest/gtest.h"

namespace npu::server {
namespace {

TEST(ToGrpcStatusTest, KeepsCodeAndMessage) {
  for (int code = 0; code <= 16; ++code) {
    const absl::Status status(static_cast<absl::StatusCode>(code), code == 0 ? "" : "why");
    const grpc::Status mapped = ToGrpcStatus(status);
    EXPECT_EQ(static_cast<int>(mapped.error_code()), code);
    EXPECT_EQ(mapped.error_message(), code == 0 ? "" : "why");
  }
}

TEST(CodeNameTest, UsesCanonicalNames) {
  EXPECT_EQ(CodeName(absl::StatusCode::kOk), "OK");
  EXPECT_EQ(CodeName(absl::StatusCode::kInvalidArgument), "INVALID_ARGUMENT");
  EXPECT_EQ(CodeName(absl::StatusCode::kResourceExhausted), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(CodeName(absl::StatusCode::kFailedPrecondition), "FAILED_PRECONDITION");
  EXPECT_EQ(CodeName(absl::StatusCode::kUnauthenticated), "UNAUTHENTICATED");
}

}  // namespace
}  // namespace npu::server
