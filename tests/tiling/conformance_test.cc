// Every golden case of CANN's own arch35 tiling tests, field by field.
#include <gtest/gtest.h>

#include "server/tiling/builtin_strategies.h"
#include "tests/testing/golden_cases.h"

namespace npu::tiling {
namespace {

using ::npu::testing::GoldenCase;

class ConformanceTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(ConformanceTest, MatchesCann) {
  const GoldenCase& golden = GetParam();
  const StrategyRegistry registry = MakeBuiltinRegistry();
  absl::StatusOr<TilingDecision> decision = registry.Decide(golden.problem, golden.chip);
  ASSERT_TRUE(decision.ok()) << decision.status();
  const TilingPlan& plan = decision->plan;
  EXPECT_EQ(plan.key.Encode(), golden.tiling_key) << "tiling_key";
  EXPECT_EQ(plan.block_dim, golden.block_dim) << "block_dim";
  EXPECT_EQ(ApiLevelName(plan.key.api_level), golden.api_level);
  EXPECT_EQ(KernelModelName(plan.key.model), golden.model);
  EXPECT_EQ(FullLoadName(plan.key.full_load), golden.full_load);
  EXPECT_EQ(L0cToOutName(plan.key.l0c2out), golden.l0c2out);
  EXPECT_EQ(plan.data.struct_name, golden.tiling_struct);
  for (const auto& [field, expected] : golden.fields) {
    std::optional<uint64_t> got = plan.data.Get(field);
    ASSERT_TRUE(got.has_value()) << "field " << field << " missing from " << plan.data.struct_name;
    EXPECT_EQ(*got, expected) << "field " << field;
  }
}

INSTANTIATE_TEST_SUITE_P(Cann950, ConformanceTest,
                         ::testing::ValuesIn(npu::testing::LoadGoldenCases(NPU_CONFORMANCE_CASES)),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace npu::tiling
