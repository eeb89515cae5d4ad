#include "server/tiling/strategies/zero_k.h"

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
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

TEST(ZeroKStrategyTest, ClearsOutputOnEveryVectorCore) {
  absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(Problem(100, 200, 0), Chip950());
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "K_EQUAL_ZERO");
  EXPECT_EQ(d->plan.key.Encode(), 0x2001u);  // BASIC_LEVEL, K_EQUAL_ZERO
  EXPECT_EQ(d->plan.block_dim, 64u);
  EXPECT_EQ(d->plan.kernel_type, KernelType::kAivOnly);
  EXPECT_EQ(d->plan.data.struct_name(), "MatMulV3KEqZeroBasicTilingData");
  EXPECT_EQ(d->plan.data.Get("totalDataAmount"), 20000u);
  EXPECT_EQ(d->plan.data.Get("aivNum"), 64u);
}

TEST(ZeroKStrategyTest, TransposesDoNotReachTheKey) {
  MatmulProblem p = Problem(8, 8, 0);
  p.trans_a = p.trans_b = true;
  absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(p, Chip950(8));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.Encode(), 0x2001u);
  EXPECT_EQ(d->plan.block_dim, 16u);
}

TEST(ZeroKStrategyTest, NotCapableWithNonZeroK) {
  ZeroKStrategy strategy;
  MatmulProblem p = Problem(8, 8, 4);
  Capability c = strategy.IsCapable(p, DeriveFacts(p), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("K=4"));
}

TEST(ZeroKStrategyTest, OutputTooLargeForTheCounterIsRejected) {
  EXPECT_THAT(MakeBuiltinRegistry().Decide(Problem(100000, 100000, 0), Chip950()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("totalDataAmount")));
}

}  // namespace
}  // namespace npu::tiling

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::testing::HasSubstr;

MatmulProblem BatchedProblem(int64_t m, int64_t n) {
  MatmulProblem p = Problem(m, n, 0);
  p.op = MatmulOp::kBatchMatMulV3;
  return p;
}

TEST(BatchZeroKStrategyTest, ClearsEveryBatchOfC) {
  MatmulProblem p = BatchedProblem(100, 70);
  p.batch.a = {3, 2};
  p.batch.b = {1, 2};
  p.trans_b = true;
  absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(p, Chip950());
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "BATCH_MATMUL_INPUT_K_EQUAL_ZERO");
  EXPECT_EQ(d->plan.key.Encode(), 0x2001u);  // trans forced off
  EXPECT_EQ(d->plan.block_dim, 64u);
  EXPECT_EQ(d->plan.data.RawWords(), (std::vector<uint32_t>{42000, 64}));  // 6 batches
}

TEST(BatchZeroKStrategyTest, MergedBatchCountsOnceThroughM) {
  // B unbatched: A's batch of 6 becomes M = 600 and C has one batch.
  MatmulProblem p = BatchedProblem(100, 70);
  p.batch.a = {3, 2};
  absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(p, Chip950());
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.data.Get("totalDataAmount"), 42000u);
}

TEST(BatchZeroKStrategyTest, NotCapableWithNzB) {
  MatmulProblem p = BatchedProblem(64, 64);
  p.format_b = Format::kFractalNz;
  Capability c = BatchZeroKStrategy().IsCapable(p, DeriveFacts(p), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("FRACTAL_NZ"));
}

}  // namespace
}  // namespace npu::tiling
