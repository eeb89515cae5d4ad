// Admission: at most max_inflight calls, a released slot is free again, and
// the refusal says why (overload or drain).
#include "server/service/admission.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace npu::server {
namespace {

using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

TEST(AdmissionTest, AdmitsUpToTheLimit) {
  Admission admission(2);
  EXPECT_TRUE(admission.TryAdmit());
  EXPECT_TRUE(admission.TryAdmit());
  EXPECT_FALSE(admission.TryAdmit());
  EXPECT_EQ(admission.inflight(), 2);
  EXPECT_THAT(admission.RefusalError(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("2 RPCs in flight")));
  admission.Release();
  EXPECT_EQ(admission.inflight(), 1);
  EXPECT_TRUE(admission.TryAdmit());
}

TEST(AdmissionTest, DrainRefusesNewCallsAndKeepsAdmittedOnes) {
  Admission admission(4);
  ASSERT_TRUE(admission.TryAdmit());
  admission.BeginDrain();
  EXPECT_FALSE(admission.TryAdmit());
  EXPECT_EQ(admission.inflight(), 1);
  EXPECT_THAT(admission.RefusalError(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("shutting down")));
  admission.Release();
  EXPECT_EQ(admission.inflight(), 0);
}

}  // namespace
}  // namespace npu::server
