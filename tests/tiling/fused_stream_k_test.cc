#include "server/tiling/strategies/fused_stream_k.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::testing::HasSubstr;

MatmulProblem Fused(FusedOp op, int64_t m, int64_t n, int64_t k,
                    DataType dtype = DataType::kFloat16) {
  MatmulProblem p = Problem(m, n, k, dtype);
  p.op = MatmulOp::kFusedMatMul;
  p.fused.op = op;
  return p;
}

TEST(FusedStreamKStrategyTest, MatMulV3PlanUnderABasicStreamKKey) {
  // MatMulV3 splits this fp32 K again in the core (SK_SPLIT_K, tensor API);
  // FusedMatMul keeps STREAM_K with the basic API and the same data.
  const MatmulProblem fused = Fused(FusedOp::kNone, 64, 64, 65536, DataType::kFloat32);
  absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(fused, Chip950());
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "BASIC_STREAM_K_INHERITED_FROM_MMV3");
  EXPECT_EQ(d->plan.key.Encode(), 0x1001u);
  EXPECT_EQ(d->plan.workspace_bytes, 29360128u);
  const std::vector<uint32_t> cann = {32, 64,         64,   65536, 64, 64,    256, 64,
                                      64, 128,        2048, 1,     1,  1,     1,   0,
                                      0,  0x01010200, 0,    64,    1,  65536, 0};
  EXPECT_EQ(d->plan.data.RawWords(), cann);
  absl::StatusOr<TilingDecision> mm =
      MakeBuiltinRegistry().Decide(Problem(64, 64, 65536, DataType::kFloat32), Chip950());
  ASSERT_THAT(mm, IsOk());
  EXPECT_EQ(mm->plan.key.Encode(), 0x7002u);
  EXPECT_EQ(mm->plan.data.RawWords(), cann);
}

TEST(FusedStreamKStrategyTest, EpilogueAndPrecisionInTheKey) {
  MatmulProblem p = Fused(FusedOp::kCast16To32, 64, 64, 65536);
  p.dtype_c = DataType::kFloat32;
  absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(p, Chip950());
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.Encode(), 0x6001001u);
}

TEST(FusedStreamKStrategyTest, AddAndMulNeedPureSplitK) {
  // 80 blocks of 256x256 > aic/2: MatMulV3 would run DP+SK, add cannot.
  const MatmulProblem mul = Fused(FusedOp::kMul, 4096, 1280, 8192);
  Capability c = FusedStreamKStrategy().IsCapable(mul, DeriveFacts(mul), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("pure SK"));
  const MatmulProblem relu = Fused(FusedOp::kRelu, 4096, 1280, 8192);
  EXPECT_TRUE(FusedStreamKStrategy().IsCapable(relu, DeriveFacts(relu), Chip950()).ok);
}

TEST(FusedStreamKStrategyTest, GeluAndSeveralBatchesAreNotCapable) {
  const MatmulProblem gelu = Fused(FusedOp::kGeluErf, 64, 64, 65536);
  EXPECT_FALSE(FusedStreamKStrategy().IsCapable(gelu, DeriveFacts(gelu), Chip950()).ok);
  MatmulProblem batched = Fused(FusedOp::kNone, 64, 64, 65536);
  batched.batch.a = batched.batch.b = {2};
  Capability c = FusedStreamKStrategy().IsCapable(batched, DeriveFacts(batched), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("batch_c=2"));
}

}  // namespace
}  // namespace npu::tiling
