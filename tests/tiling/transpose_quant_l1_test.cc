// Tests of server/tiling/strategies/transpose_quant_l1.h: TransposeQuantBatchMatMul's
// L1 depths, K steps and MX scale factors, the never-ending depth search on
// an L1 smaller than one stage, and mxTypePara's packing. Expected values
// are CANN's (transpose_quant_batch_mat_mul_asw_tiling.cpp), checked against
// its compiled host tiling.
#include "server/tiling/strategies/transpose_quant_l1.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/tiling/cann_fault.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

QuantL1Input Input(bool mx, uint64_t l1, uint64_t k) {
  QuantL1Input in;
  in.mx = mx;
  in.l1_bytes = l1;
  in.base_m = in.base_n = 256;
  in.base_k = 128;
  in.k = k;
  return in;
}

TEST(TransposeQuantL1Test, MxFp8DepthsStepsAndScaleFactors) {
  const absl::StatusOr<QuantL1Stage> stage = StageQuantL1(Input(true, 524288, 4096));
  ASSERT_THAT(stage, IsOk());
  EXPECT_EQ(stage->depth_a1, 4u);
  EXPECT_EQ(stage->depth_b1, 4u);
  EXPECT_EQ(stage->step_ka, 2u);
  EXPECT_EQ(stage->step_kb, 2u);
  EXPECT_EQ(stage->scale_factor_a, 16u);
  EXPECT_EQ(stage->scale_factor_b, 16u);
  // ceil(128 / 32) = 4 groups per row (two pairs), one byte each.
  EXPECT_EQ(stage->scale_a_bytes, 4u * 256);
  EXPECT_EQ(stage->scale_b_bytes, 4u * 256);
}

TEST(TransposeQuantL1Test, HiFp8StagesWithoutScales) {
  const absl::StatusOr<QuantL1Stage> stage = StageQuantL1(Input(false, 524288, 4096));
  ASSERT_THAT(stage, IsOk());
  EXPECT_EQ(stage->depth_a1, 4u);
  EXPECT_EQ(stage->step_ka, 2u);
  EXPECT_EQ(stage->scale_factor_a, 1u);
  EXPECT_EQ(stage->scale_a_bytes, 0u);
  // A K of one base step: one step per load.
  const absl::StatusOr<QuantL1Stage> short_k = StageQuantL1(Input(false, 524288, 100));
  ASSERT_THAT(short_k, IsOk());
  EXPECT_EQ(short_k->step_ka, 1u);
  EXPECT_EQ(short_k->step_kb, 1u);
  EXPECT_EQ(short_k->depth_a1, 2u);
}

// One stage is 2 x 256 x 128 bytes of blocks (65536), plus 2 x 1024 bytes
// of MX scales: an L1 below that wraps CANN's unsigned remainder and its
// depth doubling never ends.
TEST(TransposeQuantL1Test, AnL1BelowOneStageNeverEnds) {
  for (const auto& [mx, l1] : {std::pair{true, uint64_t{65536}}, std::pair{false, uint64_t{32768}},
                               std::pair{true, uint64_t{67583}}}) {
    const absl::StatusOr<QuantL1Stage> stage = StageQuantL1(Input(mx, l1, 4096));
    EXPECT_THAT(stage.status(),
                StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("never ends")))
        << mx << " " << l1;
    EXPECT_TRUE(IsCannFault(stage.status()));
  }
  EXPECT_THAT(StageQuantL1(Input(true, 67584, 4096)), IsOk());
  EXPECT_THAT(StageQuantL1(Input(false, 65536, 4096)), IsOk());
}

TEST(TransposeQuantL1Test, MxTypeParaPacksTheFactors) {
  EXPECT_EQ(MxTypePara(16, 16), 0x01011010u);
  EXPECT_EQ(MxTypePara(3, 5), 0x01010503u);
  EXPECT_EQ(MxTypePara(1, 1), 0x01010101u);
  // Either factor outside [1, 127]: both 1.
  EXPECT_EQ(MxTypePara(0, 3), 0x01010101u);
  EXPECT_EQ(MxTypePara(5, 128), 0x01010101u);
  EXPECT_EQ(MxTypePara(127, 2), 0x0101027Fu);
}

}  // namespace
}  // namespace npu::tiling
