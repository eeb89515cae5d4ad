#include "server/tiling/strategies/fused_zero_k.h"

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

MatmulProblem FusedK0(FusedOp op, int64_t m, int64_t n, DataType dtype = DataType::kFloat16) {
  MatmulProblem p = Problem(m, n, 0, dtype);
  p.op = MatmulOp::kFusedMatMul;
  p.fused.op = op;
  return p;
}

TilingPlan Decide(const MatmulProblem& p) {
  absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(p, Chip950());
  EXPECT_THAT(d, IsOk());
  if (!d.ok()) return {};
  EXPECT_EQ(d->plan.strategy, "INPUT_K_EQUAL_ZERO_INHERITED_FROM_BMMV3");
  return d->plan;
}

TEST(FusedZeroKStrategyTest, EpilogueWithoutX3KeepsTheHighLevelKeyAndItsPrecision) {
  // gelu_tanh with inner_precise 1: HIGH level, K_EQUAL_ZERO, the attribute's precision.
  MatmulProblem p = FusedK0(FusedOp::kGeluTanh, 100, 70);
  p.fused.inner_precise = 1;
  p.trans_b = true;
  const TilingPlan plan = Decide(p);
  EXPECT_EQ(plan.key.Encode(), 0x14002000u);
  EXPECT_EQ(plan.block_dim, 64u);
  EXPECT_EQ(plan.kernel_type, KernelType::kAivOnly);
  EXPECT_EQ(plan.data.RawWords(), (std::vector<uint32_t>{7000, 64}));
}

TEST(FusedZeroKStrategyTest, TwoDimensionalAddOrMulIsBasicWithHighPerformance) {
  MatmulProblem p = FusedK0(FusedOp::kMul, 100, 70, DataType::kFloat32);
  p.hf32 = true;
  const TilingPlan plan = Decide(p);
  EXPECT_EQ(plan.key.Encode(), 0x12002001u);  // inner_precise forced to 1
  EXPECT_EQ(plan.data.RawWords(), (std::vector<uint32_t>{7000, 64}));
}

TEST(FusedZeroKStrategyTest, BatchedAddCarriesTheBatchStructOfRunDefaults) {
  MatmulProblem p = FusedK0(FusedOp::kAdd, 100, 70);
  p.batch.a = p.batch.b = {3};
  p.trans_a = true;
  p.fused.x3_shape = {1, 100, 70};
  const TilingPlan plan = Decide(p);
  EXPECT_EQ(plan.key.Encode(), 0x11002401u);  // FUSED_BATCH, trans forced off
  EXPECT_EQ(plan.data.struct_name(), "BatchMatMulV3BasicTilingData");
  // CANN's answer: unit blocks, l1BufferNum 2, l0cDB 0, ubDB 1, rowStride 1
  // (A transposed), 3 batches of C, one batch of x3.
  EXPECT_EQ(plan.data.RawWords(),
            (std::vector<uint32_t>{64, 100, 70, 0, 1,          1, 1, 1, 1, 1, 1, 1, 1,
                                   1,  1,   0,  0, 0x01000200, 0, 1, 1, 1, 0, 3, 1}));
}

TEST(FusedZeroKStrategyTest, Cast16To32HasNoKZeroKernel) {
  MatmulProblem p = FusedK0(FusedOp::kCast16To32, 64, 64);
  p.dtype_c = DataType::kFloat32;
  Capability c = FusedZeroKStrategy().IsCapable(p, DeriveFacts(p), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("16cast32"));
  // Nothing else tiles K = 0 either: the walk ends without a plan.
  EXPECT_THAT(MakeBuiltinRegistry().Decide(p, Chip950()).status().code(),
              absl::StatusCode::kFailedPrecondition);
}

TEST(FusedZeroKStrategyTest, BatchedGeluIsNotCapable) {
  // Validation refuses batched gelu; the strategy's own rule still holds.
  MatmulProblem p = FusedK0(FusedOp::kGeluErf, 64, 64);
  p.batch.a = p.batch.b = {2};
  Capability c = FusedZeroKStrategy().IsCapable(p, DeriveFacts(p), Chip950());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason.str(), HasSubstr("batch_c=2"));
}

}  // namespace
}  // namespace npu::tiling
