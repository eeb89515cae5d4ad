// Tests of server/tiling/operator_table.h: one row per operator, and the
// names, layouts and rules the rest of the engine reads from it.
#include "server/tiling/operator_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

#include "server/tiling/builtin_strategies.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::IsOk;

TEST(OperatorTableTest, OneRowPerOperatorInEnumOrder) {
  ASSERT_EQ(Operators().size(), static_cast<size_t>(kMatmulOpCount));
  std::set<std::string_view> names;
  std::set<int> wire_values;
  int defaults = 0;
  for (size_t i = 0; i < Operators().size(); ++i) {
    const OperatorSpec& spec = Operators()[i];
    EXPECT_EQ(spec.op, kAllMatmulOps[i]);
    EXPECT_EQ(&OperatorSpecOf(spec.op), &spec);
    // A folder may be spelled as the CLI spells the operator.
    const std::set<std::string_view> own = {spec.name, spec.cli_name, spec.folder};
    for (std::string_view name : own) {
      EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
      absl::StatusOr<MatmulOp> parsed = ParseMatmulOp(name);
      ASSERT_THAT(parsed, IsOk());
      EXPECT_EQ(*parsed, spec.op);
    }
    EXPECT_EQ(MatmulOpName(spec.op), spec.name);
    EXPECT_EQ(KeyLayoutOf(spec.op), spec.key_layout);
    EXPECT_TRUE(wire_values.insert(spec.wire_value).second);
    EXPECT_GT(spec.wire_value, 0);
    defaults += spec.wire_default ? 1 : 0;
  }
  EXPECT_EQ(defaults, 1);
}

TEST(OperatorTableTest, UnknownNamesListEveryCliName) {
  absl::StatusOr<MatmulOp> parsed = ParseMatmulOp("gemm");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "unknown op \"gemm\"; expected matmul_v3, batch_matmul_v3, fused_matmul, "
            "quant_batch_matmul_v3, weight_quant_batch_matmul_v2, transpose_batch_matmul, "
            "transpose_quant_batch_matmul or grouped_matmul");
}

// Every operator has strategies, and the walk policy is the registry's.
TEST(OperatorTableTest, EveryOperatorHasItsStrategies) {
  const StrategyRegistry registry = MakeBuiltinRegistry();
  for (const OperatorSpec& spec : Operators()) {
    EXPECT_FALSE(registry.Names(spec.op).empty()) << spec.name;
    // A batched operator merges A's batch into M, so it also walks on.
    if (spec.batched) {
      EXPECT_EQ(spec.walk, WalkPolicy::kFallThrough) << spec.name;
    }
  }
}

}  // namespace
}  // namespace npu::tiling
