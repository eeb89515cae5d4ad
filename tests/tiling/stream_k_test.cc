#include "server/tiling/strategies/stream_k.h"

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

TEST(StreamKStrategyTest, SplitKOfFewBlocks) {
  // 4x4 blocks of 256 = 16 = aic/2: each block gets 2 K slices.
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Problem(1024, 1024, 8192, DataType::kBFloat16));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "BASIC_STREAM_K");
  EXPECT_EQ(d->plan.key.model, KernelModel::kStreamK);
  EXPECT_EQ(d->plan.kernel_type, KernelType::kMixed1To2);
  EXPECT_EQ(d->plan.block.k_cnt, 2u);
  EXPECT_EQ(d->plan.data.Get("skSingleCoreK"), 4096u);
  // Workspace: one 256x256 fp32 partial tile per cube core plus 20 MiB.
  EXPECT_EQ(d->plan.workspace_bytes, 32u * 256 * 256 * 4 + 20u * 1024 * 1024);
}

TEST(StreamKStrategyTest, Fp32LongSlicesSplitInsideTheCore) {
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Problem(64, 64, 131072, DataType::kFloat32));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.model, KernelModel::kStreamKSplitK);
  EXPECT_EQ(d->plan.data.Get("skSingleCoreK"), 4096u);
  EXPECT_EQ(d->plan.key.Encode(), 0x7002u);
}

TEST(StreamKStrategyTest, Hf32KeepsPlainStreamK) {
  MatmulProblem p = Problem(64, 64, 131072, DataType::kFloat32);
  p.hf32 = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.model, KernelModel::kStreamK);
  EXPECT_EQ(d->plan.data.Get("mmadParam"), 1u);
}

TEST(StreamKStrategyTest, AvoidTensorApiGivesBasicLevel) {
  MatmulProblem p = Problem(1024, 1024, 8192);
  p.avoid_tensor_api = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.api_level, ApiLevel::kBasic);
  EXPECT_EQ(d->plan.key.Encode(), 0x1001u);
}

TEST(StreamKStrategyTest, DataParallelPlusSplitKTail) {
  // 16 x 3 = 48 blocks on 32 cores: one DP round and a tail of 16 blocks,
  // each split in 2 K slices.
  MatmulProblem p = Problem(4096, 768, 8192);
  p.trans_b = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.model, KernelModel::kStreamK);
  EXPECT_THAT(d->plan.detail.str(), HasSubstr("DP+SK"));
  EXPECT_EQ(d->plan.data.Get("skSingleCoreK"), 4096u);
  EXPECT_EQ(d->plan.block.k_cnt, 2u);
}

TEST(StreamKStrategyTest, RefusedByDeterminismAndVectorRatio) {
  MatmulProblem p = Problem(1024, 1024, 8192);
  p.deterministic_level = 2;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "BASIC_ASWT");
  EXPECT_THAT(d->trace[3].reason.str(), HasSubstr("deterministic_level=2"));

  d = DecideBuiltin(Problem(1024, 1024, 8192), Chip950(32, 56));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "BASIC_ASWT");
  EXPECT_THAT(d->trace[3].reason.str(), HasSubstr("aiv=56 != 2*aic=64"));
}

TEST(StreamKStrategyTest, SliceViewIsRefused) {
  MatmulProblem p = Problem(1024, 1024, 8192);
  p.a_slice.enabled = true;
  p.a_slice.batch = 2;
  p.a_slice.row_stride = 8192;
  p.a_slice.batch_stride = 512 * 8192;
  StreamKStrategy strategy;
  EXPECT_THAT(strategy.IsCapable(p, DeriveFacts(p), Chip950()).reason.str(), HasSubstr("slice"));
}

TEST(StreamKStrategyTest, NzBRoundsTheSliceToFractals) {
  // K=10000 over 2 slices = 5000, rounded up to a multiple of 16 for NZ B.
  MatmulProblem p = Problem(1024, 1024, 10000);
  p.trans_b = true;
  p.format_b = Format::kFractalNz;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.data.Get("skSingleCoreK"), 5008u);
}

TEST(StreamKStrategyTest, UnalignedNUsesFixpipeOutput) {
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Problem(523, 246, 10866));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.l0c2out, L0cToOut::kNdFixpipe1To2);
}

}  // namespace
}  // namespace npu::tiling
