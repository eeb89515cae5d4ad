// GroupedMatmul's weight-quant strategy (server/tiling/grouped/weight_quant/
// gwq_strategy.h) through the built-in registry: it takes the weight-quant
// path alone, answers with its layout, struct, kernel type and quant mode,
// and its refusals end the walk with INVALID_ARGUMENT naming the strategy.
#include "server/tiling/grouped/weight_quant/gwq_strategy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/tiling_data.h"
#include "tests/testing/status_matchers.h"
#include "tests/tiling/grouped/weight_quant/gwq_problems.h"

namespace npu::tiling::grouped {
namespace {

using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
using weight_quant::testing::MxA8W4;
using weight_quant::testing::SingleA16W4;

MatmulProblem ProblemOf(GroupedInputs grouped) {
  MatmulProblem p;
  p.op = MatmulOp::kGroupedMatmul;
  p.grouped = std::move(grouped);
  return p;
}

absl::StatusOr<TilingDecision> Decide(const MatmulProblem& p, uint32_t aic = 32) {
  ChipSpec chip = *FindPlatform(kDefaultPlatform);
  chip.aic_num = aic;
  chip.aiv_num = 2 * aic;
  return MakeBuiltinRegistry().Decide(p, chip);
}

TEST(GwqStrategyTest, TakesTheWeightQuantPathOnly) {
  const GroupedWeightQuantStrategy strategy;
  const MatmulProblem wq = ProblemOf(SingleA16W4(2, 256, 1024, 512));
  EXPECT_TRUE(strategy.IsCapable(wq, DeriveFacts(wq), *FindPlatform(kDefaultPlatform)).ok);
  MatmulProblem no_quant = wq;
  no_quant.grouped[GroupedTensor::kWeight].dtype = DataType::kFloat16;
  EXPECT_FALSE(
      strategy.IsCapable(no_quant, DeriveFacts(no_quant), *FindPlatform(kDefaultPlatform)).ok);
}

TEST(GwqStrategyTest, AnswersItsLayoutStructAndKernel) {
  absl::StatusOr<TilingDecision> d = Decide(ProblemOf(MxA8W4(4, 64, 256, 512, true)));
  ASSERT_TRUE(d.ok()) << d.status();
  const TilingPlan& plan = d->plan;
  EXPECT_EQ(plan.strategy, "GROUPED_WEIGHT_QUANT");
  EXPECT_EQ(plan.key.layout, KeyLayout::kGroupedWeightQuant);
  EXPECT_EQ(plan.key.Encode(), plan.key.grouped_bits);
  EXPECT_TRUE(plan.key.trans_b);
  EXPECT_EQ(plan.data.kernel, KernelId::kGroupedWeightQuant);
  EXPECT_EQ(plan.data.RawWords().size(), 448u);
  EXPECT_EQ(plan.kernel_type, KernelType::kMixed1To2);
  EXPECT_EQ(plan.quant_mode, "MX");
  EXPECT_EQ(plan.block_dim, 32u);
  EXPECT_EQ(plan.workspace_bytes, 16u * 1024 * 1024);
  EXPECT_EQ(plan.block.base_m, 256u);
  EXPECT_EQ(plan.block.base_k, 64u);
  EXPECT_EQ(Get(plan.data, GmmWeightQuantField::kGroupNum), 4u);
}

TEST(GwqStrategyTest, RefusalsNameTheStrategyAndTheRule) {
  GroupedInputs in = SingleA16W4(2, 256, 1024, 512);
  in.transpose_x = true;
  EXPECT_THAT(Decide(ProblemOf(in)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("GROUPED_WEIGHT_QUANT: field grouped.transpose_x=true")));
  EXPECT_THAT(Decide(ProblemOf(SingleA16W4(1, 64, 512, 300 * 256, 0, true)), 300).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("exceeds 255, the limit of its uint8 word")));
}

}  // namespace
}  // namespace npu::tiling::grouped
