#include "server/tiling/strategies/swizzled_data_parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/tiling/builtin_strategies.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::testing::HasSubstr;

using ::npu::testing::DecideBuiltin;

TEST(SwizzledDataParallelTest, BResidentWhenMHasManyBlocks) {
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Problem(65536, 64, 256));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.full_load, FullLoad::kB);
  EXPECT_EQ(d->plan.key.Encode(), 0x20002u);
  EXPECT_EQ(d->plan.kernel_type, KernelType::kAicOnly);
  // B is resident: its L1 tile spans the whole N.
  EXPECT_EQ(d->plan.block.single_core_n, 64u);
  EXPECT_EQ(d->plan.data.Get("nL1"), 64u);
  const uint64_t base_m = *d->plan.data.Get("baseM");
  EXPECT_LE(base_m, 65536u / 32);
  EXPECT_EQ(base_m % 16, 0u);
}

TEST(SwizzledDataParallelTest, AResidentForManyColumnBlocks) {
  MatmulProblem p = Problem(4, 32000, 8192);
  p.trans_b = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.full_load, FullLoad::kA);
  EXPECT_EQ(d->plan.block.single_core_m, 4u);
}

TEST(SwizzledDataParallelTest, Fp32LongKSplitsInsideTheCore) {
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Problem(256, 256, 65536, DataType::kFloat32));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.model, KernelModel::kBasicSplitK);
  EXPECT_THAT(d->plan.detail.str(), HasSubstr("split K"));
}

TEST(SwizzledDataParallelTest, Hf32DisablesFp32SplitKAndSetsMmadParam) {
  // 8x8 blocks fill two whole rounds: neither SK nor DP+SK applies.
  MatmulProblem p = Problem(2048, 2048, 4096, DataType::kFloat32);
  p.hf32 = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.model, KernelModel::kBasic);
  EXPECT_EQ(d->plan.data.Get("mmadParam"), 1u);
}

TEST(SwizzledDataParallelTest, Bf16FixpipeOutputOneToOne) {
  MatmulProblem p = Problem(4096, 4090, 128, DataType::kBFloat16);
  p.trans_b = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.l0c2out, L0cToOut::kNdFixpipe1To1);
  EXPECT_EQ(d->plan.kernel_type, KernelType::kMixed1To2);
}

TEST(SwizzledDataParallelTest, FixpipeNeedsTwoVectorCoresPerCube) {
  MatmulProblem p = Problem(4096, 4090, 128, DataType::kBFloat16);
  p.trans_b = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p, Chip950(32, 40));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.l0c2out, L0cToOut::kOnTheFly);
}

TEST(SwizzledDataParallelTest, AvoidTensorApiGivesBasicLevel) {
  MatmulProblem p = Problem(2048, 2048, 1024);
  p.avoid_tensor_api = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.api_level, ApiLevel::kBasic);
  EXPECT_EQ(d->plan.key.Encode(), 0x1u);
}

TEST(SwizzledDataParallelTest, Rank3SliceUsesSliceModelAndStrides) {
  MatmulProblem p = Problem(1024, 512, 512);
  p.a_slice.enabled = true;
  p.a_slice.rank = 3;
  p.a_slice.batch = 2;
  p.a_slice.row_stride = 600;
  p.a_slice.batch_stride = 512 * 600 + 64;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.model, KernelModel::kSlice);
  EXPECT_EQ(d->plan.key.Encode(), 0x5002u);
  EXPECT_EQ(d->plan.data.Get("sliceM"), 512u);
  EXPECT_EQ(d->plan.data.Get("srcNdStride"), 512u * 600 + 64);
  EXPECT_EQ(d->plan.data.Get("rowStride"), 600u);
}

TEST(SwizzledDataParallelTest, Rank2SliceKeepsBasicModelWithRowStride) {
  MatmulProblem p = Problem(1024, 512, 512);
  p.a_slice.enabled = true;
  p.a_slice.rank = 2;
  p.a_slice.row_stride = 576;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.model, KernelModel::kBasic);
  EXPECT_EQ(d->plan.data.Get("sliceM"), 1u);
  EXPECT_EQ(d->plan.data.Get("rowStride"), 576u);
}

TEST(SwizzledDataParallelTest, ContiguousRowStrideIsK) {
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Problem(1024, 512, 300));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.data.Get("rowStride"), 300u);
  EXPECT_EQ(d->plan.data.Get("srcNdStride"), 1u);
}

TEST(SwizzledDataParallelTest, TailRoundIsResplit) {
  // 5 x 7 = 35 blocks of 256 on 32 cores leaves a tail of 3, re-split 3x3.
  MatmulProblem p = Problem(1280, 1792, 2048);
  p.trans_b = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.data.Get("mTailCnt"), 3u);
  EXPECT_EQ(d->plan.data.Get("nTailCnt"), 3u);
}

TEST(SwizzledDataParallelTest, AlwaysCapable) {
  SwizzledDataParallelStrategy strategy;
  MatmulProblem p = Problem(1, 1, 1);
  EXPECT_TRUE(strategy.IsCapable(p, DeriveFacts(p), Chip950()).ok);
}

}  // namespace
}  // namespace npu::tiling

namespace npu::tiling {
namespace {

// A platform whose L0C cannot hold a double-buffered 16-wide block next to a
// huge L1 used to divide by zero in the A-resident branch.
TEST(SwizzledDataParallelTest, TinyL0cNextToHugeL1IsRefused) {
  ChipSpec chip = ::npu::testing::Chip950();
  chip.l0c_bytes = 4096;
  chip.l1_bytes = 32 * 1024 * 1024;
  absl::StatusOr<TilingDecision> d = ::npu::testing::DecideBuiltin(
      ::npu::testing::Problem(1024, 1024, 1024), chip);
  EXPECT_THAT(d, ::npu::testing::StatusIs(absl::StatusCode::kFailedPrecondition,
                                          ::testing::HasSubstr("l0c_bytes=4096")));
}

}  // namespace
}  // namespace npu::tiling
