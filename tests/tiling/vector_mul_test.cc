#include "server/tiling/strategies/vector_mul.h"

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

MatmulProblem ForcedFp32(int64_t m, int64_t n, int64_t k) {
  MatmulProblem p = Problem(m, n, k, DataType::kFloat32);
  p.force_grp_acc_fp32 = true;
  return p;
}

TEST(VectorMulStrategyTest, RowVectorUsesKOuterCopyMode) {
  absl::StatusOr<TilingDecision> d =
      MakeBuiltinRegistry().Decide(ForcedFp32(1, 4096, 4096), Chip950());
  ASSERT_THAT(d, IsOk());
  const TilingData& data = d->plan.data;
  EXPECT_EQ(d->plan.strategy, "TO_MUL");
  // 4096 outputs over 64 AIV: 64 each; UB holds 63488 floats, so
  // baseK = (63488 - 64) / 5 / 64 = 198.
  EXPECT_EQ(data.Get("baseMN"), 64u);
  EXPECT_EQ(data.Get("baseK"), 198u);
  EXPECT_EQ(data.Get("tailK"), 4096u % 198);
  EXPECT_EQ(data.Get("loopK"), 21u);
  EXPECT_EQ(data.Get("tileNum"), 64u);
  EXPECT_EQ(data.Get("dataCopyMode"), 1u);
  EXPECT_EQ(d->plan.block_dim, 64u);
}

TEST(VectorMulStrategyTest, TransposedBUsesRowMode) {
  MatmulProblem p = ForcedFp32(1, 1000, 300);
  p.trans_b = true;
  absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(p, Chip950());
  ASSERT_THAT(d, IsOk());
  // ceil(1000/64) = 16 outputs per core; K fits UB so baseK is the 8-aligned
  // fit floor((63488 - 16) / 5 / 16) = 793 -> 792.
  EXPECT_EQ(d->plan.data.Get("dataCopyMode"), 0u);
  EXPECT_EQ(d->plan.data.Get("baseK"), 792u);
  EXPECT_EQ(d->plan.data.Get("baseMN"), 16u);
  EXPECT_EQ(d->plan.data.Get("tileNum"), 63u);
  EXPECT_EQ(d->plan.block_dim, 63u);
  EXPECT_EQ(d->plan.key.Encode(), 0x3041u);
}

TEST(VectorMulStrategyTest, NeedsForcedFp32AndAVector) {
  VectorMulStrategy strategy;
  MatmulProblem p = Problem(1, 64, 64, DataType::kFloat32);
  EXPECT_THAT(strategy.IsCapable(p, DeriveFacts(p), Chip950()).reason.str(), HasSubstr("0x4"));
  p = ForcedFp32(2, 64, 64);
  EXPECT_THAT(strategy.IsCapable(p, DeriveFacts(p), Chip950()).reason.str(),
              HasSubstr("M=2 and N=64"));
  p = Problem(1, 64, 64, DataType::kBFloat16);
  p.force_grp_acc_fp32 = true;
  EXPECT_FALSE(strategy.IsCapable(p, DeriveFacts(p), Chip950()).ok);
}

}  // namespace
}  // namespace npu::tiling
