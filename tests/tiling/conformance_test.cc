// Every golden case of CANN's own arch35 tiling tests: MatMulV3 field by
// field (tests/data/cann950), BatchMatMulV3 and FusedMatMul by status, block
// dim, key and the words CANN's test compares (tests/data/cann950_ops), as
// are TransposeBatchMatMul and TransposeQuantBatchMatMul (tests/data/cann950_tbmm).
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "tests/testing/golden_cases.h"

namespace npu::tiling {
namespace {

using ::npu::testing::DecodedGoldenCase;
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
  EXPECT_EQ(plan.data.struct_name(), golden.tiling_struct);
  for (const auto& [field, expected] : golden.fields) {
    std::optional<uint64_t> got = plan.data.Get(field);
    ASSERT_TRUE(got.has_value()) << "field " << field << " missing from "
                                 << plan.data.struct_name();
    EXPECT_EQ(*got, expected) << "field " << field;
  }
}

INSTANTIATE_TEST_SUITE_P(Cann950, ConformanceTest,
                         ::testing::ValuesIn(npu::testing::LoadGoldenCases(NPU_CONFORMANCE_CASES)),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           return info.param.name;
                         });

class ConformanceOpsTest : public ::testing::TestWithParam<DecodedGoldenCase> {};

TEST_P(ConformanceOpsTest, MatchesCann) {
  const DecodedGoldenCase& golden = GetParam();
  if (!golden.inexpressible.empty()) {
    // No problem states the input; CANN must have refused it, as no request
    // can ask the engine for it.
    EXPECT_TRUE(golden.expect_refusal) << "not expressible: " << golden.inexpressible;
    return;
  }
  const StrategyRegistry registry = MakeBuiltinRegistry();
  absl::StatusOr<TilingDecision> decision = registry.Decide(golden.problem, golden.chip);
  if (golden.expect_refusal) {
    ASSERT_FALSE(decision.ok()) << "CANN refuses; the engine chose " << decision->plan.strategy;
    EXPECT_TRUE(decision.status().code() == absl::StatusCode::kInvalidArgument ||
                decision.status().code() == absl::StatusCode::kFailedPrecondition)
        << decision.status();
    return;
  }
  ASSERT_TRUE(decision.ok()) << decision.status();
  const TilingPlan& plan = decision->plan;
  if (golden.tiling_key.has_value()) {
    EXPECT_EQ(plan.key.Encode(), *golden.tiling_key) << "key";
  }
  if (golden.block_dim.has_value()) {
    EXPECT_EQ(plan.block_dim, *golden.block_dim) << "block_dim";
  }
  const std::vector<uint32_t> words = plan.data.RawWords();
  if (golden.word_count.has_value()) {
    EXPECT_EQ(words.size(), *golden.word_count) << "word count of " << plan.data.struct_name();
  }
  for (const auto& [index, expected] : golden.words) {
    ASSERT_LT(index, words.size()) << plan.data.struct_name() << " has no word " << index;
    EXPECT_EQ(words[index], expected) << "word " << index << " of " << plan.data.struct_name();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cann950Ops, ConformanceOpsTest,
    ::testing::ValuesIn(npu::testing::LoadDecodedCases(NPU_CONFORMANCE_OPS_CASES)),
    [](const ::testing::TestParamInfo<DecodedGoldenCase>& info) {
      // gtest names allow only letters, digits and '_'; CANN's use '.' too.
      std::string name = info.param.name;
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

// TransposeBatchMatMul and TransposeQuantBatchMatMul
// (tests/data/cann950_tbmm), in the same schema.
INSTANTIATE_TEST_SUITE_P(
    Cann950Tbmm, ConformanceOpsTest,
    ::testing::ValuesIn(npu::testing::LoadDecodedCases(NPU_CONFORMANCE_TBMM_CASES)),
    [](const ::testing::TestParamInfo<DecodedGoldenCase>& info) {
      std::string name = info.param.name;
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

}  // namespace
}  // namespace npu::tiling
