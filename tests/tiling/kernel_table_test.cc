// Tests of server/tiling/kernel_table.h: one complete row per kernel family,
// the kernel type of a key, and the rows' hooks on plans of each family.
#include "server/tiling/kernel_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

#include "server/tiling/builtin_strategies.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;

TEST(KernelTableTest, OneCompleteRowPerKernelInIdOrder) {
  ASSERT_EQ(KernelRows().size(), kKernelCount);
  std::set<std::string_view> names, structs;
  for (size_t i = 0; i < KernelRows().size(); ++i) {
    const KernelRow& row = KernelRows()[i];
    EXPECT_EQ(static_cast<size_t>(row.id), i);
    EXPECT_EQ(&KernelRowOf(row.id), &row);
    EXPECT_TRUE(names.insert(row.name).second) << "duplicate name " << row.name;
    EXPECT_NE(row.kernel_type, nullptr) << row.name;
    EXPECT_NE(row.expand, nullptr) << row.name;
    EXPECT_NE(row.buffer_demand, nullptr) << row.name;
    EXPECT_NE(row.block, nullptr) << row.name;
    // Every family but the struct-less one reads its own struct, or shares
    // its owner's (StructOwner()).
    const TilingStructSpec& spec = TilingStructOf(row.id);
    EXPECT_EQ(spec.kernel, row.id);
    if (row.id == KernelId::kUnstructured) {
      EXPECT_TRUE(spec.name.empty());
    } else if (StructOwner(row.id) != row.id) {
      const TilingStructSpec& owner = TilingStructOf(StructOwner(row.id));
      EXPECT_EQ(spec.name, owner.name);
      EXPECT_EQ(spec.fields.data(), owner.fields.data()) << spec.name;
      EXPECT_EQ(KernelOfStruct(spec.name), StructOwner(row.id));
    } else {
      EXPECT_TRUE(structs.insert(spec.name).second) << spec.name;
      EXPECT_EQ(KernelOfStruct(spec.name), row.id);
      EXPECT_FALSE(spec.fields.empty()) << spec.name;
    }
  }
}

TEST(KernelTableTest, VectorKernelsRunOnAivWhateverTheKey) {
  TilingKey key;
  key.model = KernelModel::kStreamK;
  for (KernelId id : {KernelId::kMatMulZeroK, KernelId::kMatMulToMul, KernelId::kMatMulToVector,
                      KernelId::kBatchToMul}) {
    EXPECT_EQ(KernelTypeOf(id, key), KernelType::kAivOnly) << KernelRowOf(id).name;
  }
}

TEST(KernelTableTest, CubeKernelsMixOnlyForTheVectorCoresWork) {
  for (KernelId id : {KernelId::kMatMulCube, KernelId::kBatchCube, KernelId::kBatchIterate,
                      KernelId::kBatchMerge, KernelId::kBatchHighLevel}) {
    SCOPED_TRACE(KernelRowOf(id).name);
    TilingKey key;
    EXPECT_EQ(KernelTypeOf(id, key), KernelType::kAicOnly);
    key.model = KernelModel::kStreamKSplitK;  // the AIVs reduce the partial sums
    EXPECT_EQ(KernelTypeOf(id, key), KernelType::kMixed1To2);
    key.model = KernelModel::kBasic;
    key.l0c2out = L0cToOut::kNdFixpipe1To2;  // the output leaves through UB
    EXPECT_EQ(KernelTypeOf(id, key), KernelType::kMixed1To2);
    key.l0c2out = L0cToOut::kOnTheFly;
    key.layout = KeyLayout::kFused;
    key.fused_op = FusedOp::kRelu;  // on the fixpipe
    EXPECT_EQ(KernelTypeOf(id, key), KernelType::kAicOnly);
    key.fused_op = FusedOp::kGeluTanh;  // on the AIVs
    EXPECT_EQ(KernelTypeOf(id, key), KernelType::kMixed1To2);
    key.model = KernelModel::kKEqualZero;  // FusedMatMul's K=0 clear
    EXPECT_EQ(KernelTypeOf(id, key), KernelType::kAivOnly);
  }
}

// The struct-carried blocks: ITER_BATCH and MERGE_BATCH size their blocks
// from their structs, the others keep the plan's.
TEST(KernelTableTest, BlockComesFromTheStructOnlyWhereTheRowSaysSo) {
  const StrategyRegistry registry = MakeBuiltinRegistry();
  std::set<KernelId> seen;
  for (int64_t batch : {1, 2, 64, 3000}) {
    for (int64_t size : {8, 40, 256, 1500}) {
      MatmulProblem p = Problem(size, size, size);
      p.op = MatmulOp::kBatchMatMulV3;
      p.batch.a = p.batch.b = {batch};
      absl::StatusOr<TilingDecision> d = registry.Decide(p, Chip950());
      ASSERT_THAT(d, IsOk());
      const TilingPlan& plan = d->plan;
      const KernelRow& row = KernelRowOf(plan.data.kernel);
      seen.insert(row.id);
      const BlockTiling block = KernelBlock(plan, p);
      if (row.block_in_struct) {
        // The struct's base K is the strategy's.
        EXPECT_EQ(block.base_k, plan.block.base_k) << row.name;
      } else if (row.id != KernelId::kBatchHighLevel) {
        EXPECT_EQ(block.base_m, plan.block.base_m) << row.name;
        EXPECT_EQ(block.base_n, plan.block.base_n) << row.name;
        EXPECT_EQ(block.base_k, plan.block.base_k) << row.name;
        EXPECT_EQ(block.m_l1, plan.block.m_l1) << row.name;
        EXPECT_EQ(block.n_l1, plan.block.n_l1) << row.name;
        EXPECT_EQ(block.k_l1, plan.block.k_l1) << row.name;
      }
    }
  }
  EXPECT_GE(seen.size(), 2u);
}

}  // namespace
}  // namespace npu::tiling
