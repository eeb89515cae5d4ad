// BATCH_MATMUL_TO_MUL: the capability rules and the round arithmetic,
// including the unsigned wrap of lastCoreNum. Expected words are CANN's
// (batch_matmul_v3_matmul2mul_tiling.cpp), checked against its compiled
// host tiling.
#include "server/tiling/strategies/batch_to_vector_mul.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

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

TEST(BatchToVectorMulTest, EvenSplitWrapsLastCoreNum) {
  // 128 batches on 64 AIV cores, two per round: no core has a short last
  // round, so CANN's lastCoreNum = 0 - 1 wraps to 0xFFFFFFFF.
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Batched(16, 8, 1, 128));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "BATCH_MATMUL_TO_MUL");
  EXPECT_EQ(d->plan.key.Encode(), 0x201u);
  EXPECT_EQ(d->plan.block_dim, 64u);
  EXPECT_EQ(d->plan.kernel_type, KernelType::kAivOnly);
  EXPECT_THAT(d->plan.data.RawWords(), ElementsAre(16, 8, 128, 64, 2, 2, 2, 2, 0xFFFFFFFFu, 16));
}

TEST(BatchToVectorMulTest, ShortLastRound) {
  absl::StatusOr<TilingDecision> d = DecideBuiltin(Batched(20, 300, 1, 1000));
  ASSERT_THAT(d, IsOk());
  EXPECT_THAT(d->plan.data.RawWords(), ElementsAre(20, 300, 1000, 64, 16, 16, 16, 8, 62, 16));
}

TEST(BatchToVectorMulTest, TransposesDoNotReachTheKey) {
  MatmulProblem p = Batched(16, 8, 1, 128);
  p.trans_a = p.trans_b = true;
  absl::StatusOr<TilingDecision> d = DecideBuiltin(p);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.key.Encode(), 0x201u);
}

TEST(BatchToVectorMulTest, Refusals) {
  const BatchToVectorMulStrategy strategy;
  const ChipSpec chip = Chip950();
  struct Case {
    MatmulProblem problem;
    const char* reason;
  };
  MatmulProblem few = Batched(16, 8, 1, 127);
  MatmulProblem k2 = Batched(16, 8, 2, 128);
  MatmulProblem one_register = Batched(16, 100, 1, 128);  // 16 < N <= 128 halves
  MatmulProblem n1 = Batched(16, 1, 1, 128);
  MatmulProblem register_multiple = Batched(16, 384, 1, 128);
  MatmulProblem ub = Batched(1024, 300, 1, 128);
  MatmulProblem mixed = Batched(16, 8, 1, 128);
  mixed.dtype_c = DataType::kFloat32;
  for (const Case& c : std::vector<Case>{{few, "batch=127"},
                                         {k2, "K=2"},
                                         {one_register, "partial vector register"},
                                         {n1, "N=1"},
                                         {register_multiple, "multiple of 128"},
                                         {ub, "ub_bytes"},
                                         {mixed, "dtypes differ"}}) {
    Capability capability = strategy.IsCapable(c.problem, DeriveFacts(c.problem), chip);
    EXPECT_FALSE(capability.ok) << c.reason;
    EXPECT_THAT(capability.reason.str(), HasSubstr(c.reason));
  }
}

}  // namespace
}  // namespace npu::tiling
