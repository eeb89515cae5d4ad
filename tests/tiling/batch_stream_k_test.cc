// BATCH_STREAM_K and its FusedMatMul variant: the per-batch core share, the
// rounding of block counts up to half the share, the key of each op and
// the refusals. Expected words are CANN's
// (batch_matmul_v3_basic_streamk_tiling.cpp), checked against its compiled
// host tiling.
#include "server/tiling/strategies/batch_stream_k.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "server/tiling/strategies/fused_inherited.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Batched;
using ::npu::testing::Chip950;
using ::npu::testing::DecideBuiltin;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(BatchStreamKTest, BlockCountsRoundUpToHalfTheShare) {
  // Two batches share 32 cores: 16 each. Six 256-row blocks lie between a
  // third and a half of that, so M is cut into 8 blocks of 192 rows; each
  // block then gets 16 / 8 = 2 K slices.
  absl::StatusOr<TilingDecision> d =
      DecideBuiltin(Batched(MatmulOp::kBatchMatMulV3, 1536, 200, 16384, 2));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "BATCH_STREAM_K");
  EXPECT_EQ(d->plan.key.Encode(), 0x201002u);  // TENSOR, STREAM_K, ND_FIXPIPE_1_2
  EXPECT_EQ(d->plan.block_dim, 32u);
  EXPECT_EQ(d->plan.kernel_type, KernelType::kMixed1To2);
  EXPECT_EQ(d->plan.workspace_bytes, 29360128u);
  EXPECT_THAT(d->plan.data.RawWords(),
              ElementsAre(32, 1536, 200, 16384, 192, 208, 256, 192, 208, 64, 8192, 1, 1, 1, 1, 0, 0,
                          16843264, 0, 192, 1, 16384, 0, 2, 1));
}

TEST(BatchStreamKTest, OffsetXSelectsTheBasicApi) {
  MatmulProblem p = Batched(MatmulOp::kBatchMatMulV3, 1536, 200, 16384, 2);
  p.avoid_tensor_api = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.Encode(), 0x201001u);
}

TEST(BatchStreamKTest, FusedKeyCarriesTheEpilogueAndFusedBatch) {
  MatmulProblem p = Batched(MatmulOp::kFusedMatMul, 1536, 200, 16384, 2);
  p.fused.op = FusedOp::kRelu;
  const std::unique_ptr<Strategy> owned_strategy = InheritedBatchStreamK();
  const Strategy& strategy = *owned_strategy;
  EXPECT_EQ(strategy.name(), "BATCH_STREAM_K_INHERITED_FROM_BMMV3");
  const ProblemFacts facts = DeriveFacts(p);
  ASSERT_TRUE(strategy.IsCapable(p, facts, Chip950()).ok);
  absl::StatusOr<TilingPlan> plan = strategy.DoTiling(p, facts, Chip950());
  ASSERT_THAT(plan, IsOk());
  // BASIC, FUSED_BATCH, STREAM_K, ND_FIXPIPE_1_2, RELU.
  EXPECT_EQ(plan->key.Encode(), 0x5201401u);
}

TEST(BatchStreamKTest, Refusals) {
  const BatchStreamKStrategy bmm;
  const std::unique_ptr<Strategy> owned_fused = InheritedBatchStreamK();
  const Strategy& fused = *owned_fused;
  const ChipSpec chip = Chip950();
  auto reason = [&](const Strategy& s, const MatmulProblem& p) {
    Capability c = s.IsCapable(p, DeriveFacts(p), chip);
    EXPECT_FALSE(c.ok);
    return c.reason.str();
  };
  // Too many blocks over all batches for half the cores.
  EXPECT_THAT(reason(bmm, Batched(MatmulOp::kBatchMatMulV3, 1024, 1024, 16384, 2)),
              HasSubstr("> aic/2=16"));
  // fp32 without hf32 counts 32-wide blocks.
  EXPECT_THAT(
      reason(bmm, Batched(MatmulOp::kBatchMatMulV3, 160, 160, 16384, 2, DataType::kFloat32)),
      HasSubstr("ceil(M/32)"));
  EXPECT_THAT(
      reason(bmm, Batched(MatmulOp::kBatchMatMulV3, 64, 64, 2000001, 1, DataType::kFloat32)),
      HasSubstr("fp32 K=2000001"));
  MatmulProblem deterministic = Batched(MatmulOp::kBatchMatMulV3, 64, 64, 16384, 2);
  deterministic.deterministic_level = 2;
  EXPECT_THAT(reason(bmm, deterministic), HasSubstr("deterministic"));
  MatmulProblem broadcast = Batched(MatmulOp::kBatchMatMulV3, 64, 64, 16384, 2);
  broadcast.batch.a = {2, 1};
  broadcast.batch.b = {2, 2};
  EXPECT_THAT(reason(bmm, broadcast), HasSubstr("batches differ"));
  // FusedMatMul: 2-D shapes and other epilogues go elsewhere.
  MatmulProblem flat = Problem(64, 64, 16384);
  flat.op = MatmulOp::kFusedMatMul;
  EXPECT_THAT(reason(fused, flat), HasSubstr("2-D"));
  MatmulProblem cast = Batched(MatmulOp::kFusedMatMul, 64, 64, 16384, 2);
  cast.fused.op = FusedOp::kCast16To32;
  EXPECT_THAT(reason(fused, cast), HasSubstr("epilogue"));
}

}  // namespace
}  // namespace npu::tiling
