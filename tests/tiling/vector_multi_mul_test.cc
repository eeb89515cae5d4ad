#include "server/tiling/strategies/vector_multi_mul.h"

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

MatmulProblem ForcedFp32Nt(int64_t m, int64_t n, int64_t k) {
  MatmulProblem p = Problem(m, n, k, DataType::kFloat32);
  p.force_grp_acc_fp32 = true;
  p.trans_b = true;
  return p;
}

TEST(VectorMultiMulStrategyTest, LargeOutputKeeps64Blocks) {
  absl::StatusOr<TilingDecision> d =
      MakeBuiltinRegistry().Decide(ForcedFp32Nt(1024, 1024, 128), Chip950());
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "TO_MULTI_MUL");
  EXPECT_EQ(d->plan.data.Get("baseM"), 64u);
  EXPECT_EQ(d->plan.data.Get("baseN"), 64u);
  EXPECT_EQ(d->plan.data.Get("baseK"), 64u);
  EXPECT_EQ(d->plan.block_dim, 64u);
}

TEST(VectorMultiMulStrategyTest, SmallOutputIsReshapedToFillCores) {
  absl::StatusOr<TilingDecision> d =
      MakeBuiltinRegistry().Decide(ForcedFp32Nt(64, 64, 512), Chip950());
  ASSERT_THAT(d, IsOk());
  const uint64_t base_m = *d->plan.data.Get("baseM");
  const uint64_t base_n = *d->plan.data.Get("baseN");
  const uint64_t blocks = ((64 + base_m - 1) / base_m) * ((64 + base_n - 1) / base_n);
  EXPECT_EQ(d->plan.block_dim, std::min<uint64_t>(blocks, 64));
  EXPECT_GT(d->plan.block_dim, 1u);
}

TEST(VectorMultiMulStrategyTest, RejectsBiasAndOtherLayouts) {
  VectorMultiMulStrategy strategy;
  MatmulProblem p = ForcedFp32Nt(64, 64, 64);
  p.has_bias = true;
  p.dtype_bias = DataType::kFloat32;
  EXPECT_FALSE(strategy.IsCapable(p, DeriveFacts(p), Chip950()).ok);
  p = ForcedFp32Nt(64, 64, 64);
  p.trans_b = false;
  EXPECT_FALSE(strategy.IsCapable(p, DeriveFacts(p), Chip950()).ok);
}

}  // namespace
}  // namespace npu::tiling
