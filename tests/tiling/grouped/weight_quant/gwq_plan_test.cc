// GroupedMatmul's weight-quant plan (server/tiling/grouped/weight_quant/
// gwq_plan.h): the key of each family against CANN's golden keys, the fixed
// block and its A8W4 / MX-A8W4 / bias forms, the struct's word layout, block
// dim and workspace, and the refusal of the words CANN's plan wraps.
#include "server/tiling/grouped/weight_quant/gwq_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "server/tiling/grouped/weight_quant/gwq_parse.h"
#include "server/tiling/tiling_data.h"
#include "tests/testing/status_matchers.h"
#include "tests/tiling/grouped/weight_quant/gwq_problems.h"

namespace npu::tiling::grouped::weight_quant {
namespace {

using ::npu::testing::StatusIs;
using testing::Add;
using ::testing::HasSubstr;
using testing::kAntiquantOffset;
using testing::kAntiquantScale;
using testing::kBias;
using testing::kGroupList;
using testing::kPerTokenScale;
using testing::kWeight;
using testing::kX;
using testing::kY;
using testing::MultiA16W4;
using testing::MxA8W4;
using testing::SetShape;
using testing::SingleA16W4;
using testing::SingleA8W4;
using F = GmmWeightQuantField;

GwqPlan PlanOf(const GroupedInputs& in, uint32_t aic = 32) {
  absl::StatusOr<GwqFacts> f = ParseGroupedWeightQuant(in, aic, 2 * aic);
  EXPECT_TRUE(f.ok()) << f.status();
  absl::StatusOr<GwqPlan> plan = GwqBuildPlan(*f);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *plan;
}

// The keys of CANN's golden cases (test_grouped_weight_quant_arch35_*).
TEST(GwqPlanTest, KeysOfEachFamily) {
  // A16W4 ND per-group: W_QUANT_TYPE PER_GROUP, MTE2 256 x 2, basic block.
  EXPECT_EQ(PlanOf(SingleA16W4(2, 256, 1024, 512, 64)).key.Pack(), 106967040u);
  // Transposed: no re-split either (A16W4 per-group), B_TRANS set.
  EXPECT_EQ(PlanOf(SingleA16W4(2, 256, 1024, 512, 128, true)).key.Pack(), 107032576u);
  // Per-channel, transposed: the re-split runs.
  EXPECT_EQ(PlanOf(SingleA16W4(2, 256, 1024, 8192, 0, true, DataType::kBFloat16)).key.Pack(),
            70328320u);
  // A8W4 NZ: MTE2 512 default, or 384 x 3 with group size 192.
  EXPECT_EQ(PlanOf(SingleA8W4(2, 256, 512, 256, 128)).key.Pack(), 71311361u);
  EXPECT_EQ(PlanOf(SingleA8W4(2, 256, 384, 256, 192)).key.Pack(), 72359937u);
  // MX-A8W4: one weight, or single-multi-single.
  EXPECT_EQ(PlanOf(MxA8W4(2, 64, 128, 256, false)).key.Pack(), 74530817u);
  EXPECT_EQ(PlanOf(MxA8W4(2, 64, 128, 256, true)).key.Pack(), 91308033u);
}

TEST(GwqPlanTest, KeyFieldsOfAnOffset) {
  GroupedInputs in = SingleA16W4(2, 256, 1024, 512, 128);
  in[kAntiquantOffset].dtype = DataType::kFloat16;
  Add(in[kAntiquantOffset], {2, 8, 512});
  const GwqKey key = PlanOf(in).key;
  EXPECT_EQ(key.offset_or_bias, 2u);
  EXPECT_EQ(key.w_quant_type, static_cast<uint64_t>(GwqQuantType::kPerGroup));
  EXPECT_EQ(key.template_custom, GwqMte2ConfigIndex(GwqMte2Config::kInner256Buf2));
  EXPECT_EQ(key.Pack(), 106967072u);
}

TEST(GwqPlanTest, FixedBlockAndItsForms) {
  const CubeTiling plain = PlanOf(SingleA16W4(2, 256, 1024, 512, 128)).mm;
  EXPECT_EQ(plain.base_m, 256);
  EXPECT_EQ(plain.base_n, 256);
  EXPECT_EQ(plain.base_k, 64);
  EXPECT_EQ(plain.step_ka, 4);
  EXPECT_EQ(plain.depth_a1, 8);
  EXPECT_EQ(plain.share_l0c_size, 256 * 256 * 4);
  EXPECT_EQ(plain.m, 256);
  EXPECT_EQ(plain.ka, 1024);
  EXPECT_EQ(plain.single_core_k, 1024);
  EXPECT_EQ(plain.used_core_num, 32);

  GroupedInputs biased = SingleA16W4(2, 256, 1024, 512, 128);
  biased[kBias].dtype = DataType::kFloat16;
  Add(biased[kBias], {2, 512});
  const CubeTiling with_bias = PlanOf(biased).mm;
  EXPECT_EQ(with_bias.base_m, 240);
  EXPECT_EQ(with_bias.single_core_m, 240);
  EXPECT_EQ(with_bias.is_bias, 1);

  const CubeTiling a8w4 = PlanOf(SingleA8W4(2, 256, 384, 256, 192)).mm;
  EXPECT_EQ(a8w4.base_k, 128);
  EXPECT_EQ(a8w4.step_ka, 3);
  EXPECT_EQ(a8w4.step_kb, 3);

  const CubeTiling mx = PlanOf(MxA8W4(2, 64, 128, 256, true)).mm;
  EXPECT_EQ(mx.mx_type_para, 0x01010101);
  EXPECT_EQ(mx.base_m, 256);
}

TEST(GwqPlanTest, WordLayoutPacksTheByteFieldsAndSplitsTheWideOnes) {
  GroupedInputs in = MxA8W4(2, 64, 128, 384, true);
  const GwqPlan plan = PlanOf(in);
  const std::vector<uint32_t> w = plan.data.RawWords();
  ASSERT_EQ(w.size(), 448u);
  EXPECT_EQ(plan.data.struct_name(), "GMMWeightQuantTilingData");
  EXPECT_EQ(w[0], 2u);    // groupNum
  EXPECT_EQ(w[1], 32u);   // coreNum
  EXPECT_EQ(w[2], 128u);  // kSize, low word
  EXPECT_EQ(w[3], 0u);
  EXPECT_EQ(w[4], 384u);  // nSize
  // singleX 1, singleWeight 0, singleY 1, groupType 0.
  EXPECT_EQ(w[6], 0x00010001u);
  // groupListType 1, hasBias 0, cubeNumBlocksN.
  EXPECT_EQ(w[7], 1u | static_cast<uint32_t>(*Get(plan.data, F::kCubeNumBlocksN)) << 16);
  EXPECT_EQ(w[8], 32u);              // groupSize
  EXPECT_EQ(w[14], 0xFFFFFFFFu);     // mList[0] = -1
  EXPECT_EQ(w[14 + 128], 128u);      // kList[0]
  EXPECT_EQ(w[14 + 256 + 1], 384u);  // nList[1]
  EXPECT_EQ(w[14 + 384 + 1], 64u);   // TCubeTiling.M
  EXPECT_EQ(plan.block_dim, 32u);
  EXPECT_EQ(plan.workspace_bytes, 16u * 1024 * 1024);
}

TEST(GwqPlanTest, MainBlockCountCountsEveryCore) {
  GroupedInputs in = SingleA16W4(1, 64, 512, 2 * 32 * 256, 0, true);
  const GwqPlan plan = PlanOf(in);
  EXPECT_EQ(plan.resplit.main_block_count, 2u);
  EXPECT_EQ(Get(plan.data, F::kMainBlockCount), 64u);
  EXPECT_EQ(plan.key.algorithm_sub_category, kGwqSubTailResplit);
}

TEST(GwqPlanTest, MultiTensorsNeverResplit) {
  const GwqPlan plan = PlanOf(MultiA16W4({{128, 512, 256}, {64, 1024, 384}}, 128));
  EXPECT_EQ(plan.key.algorithm_sub_category, kGwqSubBasicBlock);
  EXPECT_EQ(Get(plan.data, F::kCubeNumBlocksN), 0u);
  EXPECT_EQ(Get(plan.data, GmmWeightQuantArray(0, 1)), 64u);
}

TEST(GwqPlanTest, RefusesTheCubeBlockCountItsByteWraps) {
  // 300 cores each take a block: cubeNumBlocksN = 300 does not fit 8 bits.
  absl::StatusOr<GwqFacts> f =
      ParseGroupedWeightQuant(SingleA16W4(1, 64, 512, 300 * 256, 0, true), 300, 600);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(GwqBuildPlan(*f).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cubeNumBlocksN=300 (N=76800 over aic_num=300) exceeds 255")));
}

TEST(GwqPlanTest, RefusesAnNItsInt32WordsWrap) {
  // A packed int32 weight of 2^28 words per row: N = 2^31 unpacked.
  GroupedInputs in = SingleA16W4(1, 16, 256, 8, 0);
  in[kWeight].dtype = DataType::kInt32;
  SetShape(in[kWeight], 0, {1, 256, int64_t{1} << 28});
  SetShape(in[kAntiquantScale], 0, {1, int64_t{1} << 31});
  SetShape(in[kY], 0, {16, int64_t{1} << 31});
  absl::StatusOr<GwqFacts> f = ParseGroupedWeightQuant(in, 32, 64);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(GwqBuildPlan(*f).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("above 2147483647")));
}

}  // namespace
}  // namespace npu::tiling::grouped::weight_quant
