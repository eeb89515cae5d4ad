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

TEST(DecisionErrorTest, NamesTheRequestField) {
  EXPECT_EQ(DecisionError(absl::NotFoundError("unknown strategy \"X\""), true),
            absl::NotFoundError("forced_strategy: unknown strategy \"X\""));
  EXPECT_EQ(DecisionError(absl::FailedPreconditionError("BASIC_STREAM_K cannot apply"), true),
            absl::FailedPreconditionError("forced_strategy: BASIC_STREAM_K cannot apply"));
  EXPECT_EQ(DecisionError(absl::FailedPreconditionError("L1 too small"), false),
            absl::FailedPreconditionError("problem: L1 too small"));
  EXPECT_EQ(DecisionError(absl::InvalidArgumentError("K_EQUAL_ZERO: m*n too large"), false),
            absl::InvalidArgumentError("problem: K_EQUAL_ZERO: m*n too large"));
  // An engine bug stays what it is.
  EXPECT_EQ(DecisionError(absl::InternalError("BASIC: overflow"), false),
            absl::InternalError("BASIC: overflow"));
}

}  // namespace
}  // namespace npu::server
