// GroupedMatmul's two quant strategies in the engine's registry
// (server/tiling/grouped/quant/gqmm_strategy.h): which one CANN's order
// picks, the words, key and block dim of each struct, a refused parse that
// ends the walk, and the refusals of problems CANN has no plan for.
#include "server/tiling/grouped/quant/gqmm_strategy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/tiling_data.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling::grouped {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

GroupedTensorList List(DataType dtype, std::vector<std::vector<int64_t>> shapes,
                       Format format = Format::kNd) {
  GroupedTensorList list;
  list.dtype = dtype;
  list.format = format;
  for (auto& s : shapes) list.instances.push_back({s, s});
  return list;
}

MatmulProblem Grouped() {
  MatmulProblem p;
  p.op = MatmulOp::kGroupedMatmul;
  p.grouped.split_item = 3;
  p.grouped.group_type = kGroupTypeSplitM;
  return p;
}

// MXFP8 x [256, 1024], 2 experts' weights [2, 1024, 512], E8M0 scales.
MatmulProblem Mxfp8() {
  MatmulProblem p = Grouped();
  GroupedInputs& g = p.grouped;
  g[GroupedTensor::kX] = List(DataType::kFloat8E4M3, {{256, 1024}});
  g[GroupedTensor::kWeight] = List(DataType::kFloat8E4M3, {{2, 1024, 512}});
  g[GroupedTensor::kScale] = List(DataType::kFloat8E8M0, {{2, 16, 512, 2}});
  g[GroupedTensor::kPerTokenScale] = List(DataType::kFloat8E8M0, {{256, 16, 2}});
  g[GroupedTensor::kGroupList] = List(DataType::kInt64, {{2}});
  g[GroupedTensor::kY] = List(DataType::kBFloat16, {{256, 512}});
  return p;
}

// int8 x [256, 1024], weights [2, 1024, 512], per-channel FLOAT scales and
// per-token scales, bf16 y.
MatmulProblem Int8() {
  MatmulProblem p = Mxfp8();
  GroupedInputs& g = p.grouped;
  g[GroupedTensor::kX].dtype = DataType::kInt8;
  g[GroupedTensor::kWeight].dtype = DataType::kInt8;
  g[GroupedTensor::kScale] = List(DataType::kFloat32, {{2, 512}});
  g[GroupedTensor::kPerTokenScale] = List(DataType::kFloat32, {{256}});
  return p;
}

ChipSpec Chip() {
  ChipSpec chip = *FindPlatform(kDefaultPlatform);
  chip.l0c_bytes = 131072;  // CANN's unit tests' platform
  return chip;
}

uint64_t Word(const TilingData& data, size_t index) { return data.fields.at(index).value; }

TEST(GqmmStrategyTest, MxFp8TakesTheBasicApi) {
  const absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(Mxfp8(), Chip());
  ASSERT_THAT(d, IsOk());
  const TilingPlan& plan = d->plan;
  EXPECT_EQ(plan.strategy, "GROUPED_QUANT_BASIC_API");
  EXPECT_EQ(plan.data.kernel, KernelId::kGroupedQuantBasicApi);
  EXPECT_EQ(plan.key.grouped_bits, 0u);
  EXPECT_EQ(plan.kernel_type, KernelType::kAicOnly);
  EXPECT_EQ(plan.block_dim, 32u);
  EXPECT_EQ(plan.workspace_bytes, 16u * 1024 * 1024);
  using F = GmmQuantBasicApiField;
  EXPECT_EQ(Get(plan.data, F::kAQuantMode), 8u);
  EXPECT_EQ(Get(plan.data, F::kBQuantMode), 8u);
  EXPECT_EQ(Get(plan.data, F::kBaseM), 256u);
  EXPECT_EQ(Get(plan.data, F::kBaseN), 256u);
  EXPECT_EQ(Get(plan.data, F::kBaseK), 128u);
  EXPECT_EQ(Get(plan.data, F::kKAL1), 256u);
  EXPECT_EQ(Get(plan.data, F::kKBL1), 256u);
  EXPECT_EQ(Get(plan.data, F::kScaleKAL1), 1024u);
  EXPECT_EQ(Get(plan.data, F::kDbL0C), 1u);
  EXPECT_EQ(plan.data.fields.size(), 25u);  // 18 words, the packed members apart
}

TEST(GqmmStrategyTest, Int8TakesTheGeneralStrategy) {
  const absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(Int8(), Chip());
  ASSERT_THAT(d, IsOk());
  const TilingPlan& plan = d->plan;
  EXPECT_EQ(plan.strategy, "GROUPED_QUANT");
  EXPECT_EQ(plan.data.kernel, KernelId::kGroupedQuant);
  EXPECT_EQ(plan.key.grouped_bits, 16u);  // DEQUANT_VECTOR
  EXPECT_EQ(plan.kernel_type, KernelType::kMixed1To2);
  EXPECT_EQ(Get(plan.data, GmmQuantField::kAQuantMode), 4u);  // per-token
  EXPECT_EQ(Get(plan.data, GmmQuantField::kBQuantMode), 2u);  // per-channel
  EXPECT_EQ(Get(plan.data, GmmQuantArray(0, 0)), 0xFFFFFFFFu);  // m from the group list
  EXPECT_EQ(Get(plan.data, GmmQuantArray(1, 0)), 1024u);
  EXPECT_EQ(Get(plan.data, GmmQuantArray(2, 0)), 512u);
  EXPECT_EQ(Get(plan.data, GmmQuantCube(TCubeField::kUsedCoreNum)), 32u);
  EXPECT_EQ(Get(plan.data, GmmQuantCube(TCubeField::kDepthA1)), 8u);
  EXPECT_EQ(Get(plan.data, GmmQuantCube(TCubeField::kStepKa)), 4u);
  EXPECT_EQ(Get(plan.data, GmmQuantCube(TCubeField::kDbL0a)), 2u);
  EXPECT_EQ(Get(plan.data, GmmQuantCube(TCubeField::kMxTypePara)), 0u);
  EXPECT_EQ(Word(plan.data, 4), 1u);  // singleX
  EXPECT_EQ(plan.data.fields.size(), 11u + 384 + 50);
  ASSERT_EQ(d->trace.size(), 3u);  // no-quant and basic API declined first
  EXPECT_FALSE(d->trace[1].capable);
}

TEST(GqmmStrategyTest, Int8MxTakesTheGeneralStrategyWithScaleFactors) {
  // E8M0 scales on int8 x: MX, but not the basic API's.
  MatmulProblem p = Mxfp8();
  p.grouped[GroupedTensor::kX].dtype = DataType::kInt8;
  p.grouped[GroupedTensor::kWeight].dtype = DataType::kInt8;
  const absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(p, Chip());
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->plan.strategy, "GROUPED_QUANT");
  const uint64_t para = Get(d->plan.data, GmmQuantCube(TCubeField::kMxTypePara)).value_or(0);
  EXPECT_EQ(para >> 16, 0x0101u);
  EXPECT_GE(para & 0xFF, 1u);
}

TEST(GqmmStrategyTest, SplitKStatesMFromTheProblem) {
  MatmulProblem p = Int8();
  GroupedInputs& g = p.grouped;
  g.group_type = kGroupTypeSplitK;
  g.transpose_x = true;
  g[GroupedTensor::kX] = List(DataType::kInt8, {{1024, 256}});
  g[GroupedTensor::kScale] = List(DataType::kUint64, {{2}});
  g[GroupedTensor::kPerTokenScale] = List(DataType::kFloat32, {{2}});
  const absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(p, Chip());
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(Get(d->plan.data, GmmQuantArray(0, 0)), 256u);
  EXPECT_EQ(Get(d->plan.data, GmmQuantArray(1, 0)), 0xFFFFFFFFu);
  EXPECT_EQ(Get(d->plan.data, GmmQuantField::kGroupType), 2u);
  EXPECT_EQ(d->plan.key.grouped_bits, 4u);  // A transposed, fixpipe dequant
}

TEST(GqmmStrategyTest, RefusedParseEndsTheWalk) {
  MatmulProblem p = Mxfp8();
  p.grouped[GroupedTensor::kScale] = List(DataType::kFloat8E8M0, {{2, 15, 512, 2}});
  EXPECT_THAT(MakeBuiltinRegistry().Decide(p, Chip()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field grouped.scale: scale=[2, 15, 512, 2] must be")));
}

TEST(GqmmStrategyTest, CoreRatioIsTheChips) {
  ChipSpec chip = Chip();
  chip.aiv_num = chip.aic_num;
  EXPECT_THAT(MakeBuiltinRegistry().Decide(Int8(), chip),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("platform aiv_num=32, aic_num=32")));
  // The MX basic API runs on the cube alone.
  EXPECT_THAT(MakeBuiltinRegistry().Decide(Mxfp8(), chip), IsOk());
}

TEST(GqmmStrategyTest, SplitKWithoutRowsIsCannsDivisionByZero) {
  MatmulProblem p = Int8();
  GroupedInputs& g = p.grouped;
  g.group_type = kGroupTypeSplitK;
  g.transpose_x = true;
  g[GroupedTensor::kX] = List(DataType::kInt8, {{1024, 0}});
  g[GroupedTensor::kPerTokenScale] = List(DataType::kFloat32, {{0}});
  const absl::StatusOr<TilingDecision> d = MakeBuiltinRegistry().Decide(p, Chip());
  EXPECT_THAT(d, StatusIs(absl::StatusCode::kFailedPrecondition,
                          HasSubstr("CANN's host tiling divides by zero")));
  EXPECT_TRUE(IsCannFault(d.status()));
}

TEST(GqmmStrategyTest, SplitKWithoutKIsAnEmptyBlock) {
  // CANN answers k = 0 with baseK = 0; the engine refuses the empty block.
  MatmulProblem p = Int8();
  GroupedInputs& g = p.grouped;
  g.group_type = kGroupTypeSplitK;
  g.transpose_x = true;
  g[GroupedTensor::kX] = List(DataType::kInt8, {{0, 256}});
  g[GroupedTensor::kWeight] = List(DataType::kInt8, {{0, 512}});
  EXPECT_THAT(MakeBuiltinRegistry().Decide(p, Chip()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("empty block")));
}

TEST(GqmmStrategyTest, RequestKeepsGeTypes) {
  EXPECT_EQ(quant::GeTypeOf(DataType::kFloat32), quant::GeType::kFloat);
  EXPECT_EQ(quant::GeTypeOf(DataType::kFloat4E1M2), quant::GeType::kFloat4E1M2);
  const MatmulProblem p = Mxfp8();
  const quant::GqmmRequest r = quant::GqmmRequestOf(p.grouped);  // a view of p
  EXPECT_EQ(r.scale.dtype, quant::GeType::kFloat8E8M0);
  EXPECT_EQ(r.per_token_scale.instances.at(0).origin, (std::vector<int64_t>{256, 16, 2}));
  EXPECT_FALSE(r.bias.present());
}

}  // namespace
}  // namespace npu::tiling::grouped
