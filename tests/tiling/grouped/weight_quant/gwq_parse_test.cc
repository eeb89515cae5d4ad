// CANN's checks and parse of GroupedMatmul's weight-quant path
// (server/tiling/grouped/weight_quant/gwq_parse.h): what the parse reads
// from each form (the shape lists, the group size, the unpacked weight), and
// one malformed problem per rule, each refused as INVALID_ARGUMENT whose
// message names the tensor or attribute and the rule.
#include "server/tiling/grouped/weight_quant/gwq_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

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

TEST(GwqParseTest, SingleA16W4PerGroupReadsTheExpertsAndTheGroupSize) {
  absl::StatusOr<GwqFacts> f = ParseGroupedWeightQuant(SingleA16W4(8, 256, 1024, 512, 64), 32, 64);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->group_num, 8u);
  EXPECT_EQ(f->m, 256u);
  EXPECT_EQ(f->k, 1024u);
  EXPECT_EQ(f->n, 512u);
  EXPECT_EQ(f->n_ori, 512u);
  EXPECT_EQ(f->group_size, 64u);
  EXPECT_TRUE(f->a16w4_nd);
  EXPECT_TRUE(f->A16W4NdPerGroup());
  EXPECT_TRUE(f->single_x && f->single_weight && f->single_y);
  // One x holds every group: its m is a runtime split (-1).
  EXPECT_EQ(f->m_list[0], -1);
  EXPECT_EQ(f->k_list[0], 1024);
  EXPECT_EQ(f->n_list[0], 512);
  EXPECT_EQ(f->m_list[1], 0);
}

TEST(GwqParseTest, PerChannelScaleHasNoGroupSize) {
  absl::StatusOr<GwqFacts> f = ParseGroupedWeightQuant(SingleA16W4(2, 16, 512, 256, 0), 32, 64);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->group_size, 0u);
  EXPECT_FALSE(f->A16W4NdPerGroup());
}

TEST(GwqParseTest, PackedInt32WeightReadsAsInt4WithEightTimesItsStoredN) {
  GroupedInputs in = SingleA16W4(2, 256, 1024, 512, 128);
  in[kWeight].dtype = DataType::kInt32;
  in[kWeight].instances[0].origin = {2, 1024, 512};
  in[kWeight].instances[0].storage = {2, 1024, 64};
  absl::StatusOr<GwqFacts> f = ParseGroupedWeightQuant(in, 32, 64);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->weight_input, DataType::kInt32);
  EXPECT_EQ(f->weight, DataType::kInt4);
  EXPECT_EQ(f->n, 512u);
  EXPECT_EQ(f->n_list[0], 512);
}

TEST(GwqParseTest, NzWeightTakesItsNFromY) {
  GroupedInputs in = SingleA8W4(2, 256, 512, 256);
  in[kY].instances[0].origin = {256, 250};  // y's N is what the kernel writes per row
  absl::StatusOr<GwqFacts> f = ParseGroupedWeightQuant(in, 32, 64);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->n, 256u);  // N1 * N0 of the NZ weight
  EXPECT_EQ(f->n_ori, 250u);
  EXPECT_EQ(f->n_list[0], 250);
  EXPECT_TRUE(f->A8W4());
}

TEST(GwqParseTest, SingleMultiSingleCountsTheWeightsAsGroups) {
  absl::StatusOr<GwqFacts> f = ParseGroupedWeightQuant(MxA8W4(3, 64, 256, 384, true), 32, 64);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->single_multi_single);
  EXPECT_FALSE(f->single_weight);
  EXPECT_EQ(f->group_num, 3u);
  EXPECT_EQ(f->group_size, 32u);  // MX: one scale per 32 of K
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(f->m_list[i], -1);
    EXPECT_EQ(f->k_list[i], 256);
    EXPECT_EQ(f->n_list[i], 384);
  }
  EXPECT_TRUE(f->MxA8W4Kernel());
}

TEST(GwqParseTest, MultiTensorsListEachGroupAndKeepTheLargest) {
  absl::StatusOr<GwqFacts> f =
      ParseGroupedWeightQuant(MultiA16W4({{128, 512, 256}, {64, 1024, 384}}, 128), 32, 64);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->MultiMultiMulti());
  EXPECT_EQ(f->group_num, 2u);
  EXPECT_EQ(f->group_size, 128u);
  EXPECT_EQ(f->m, 128u);
  EXPECT_EQ(f->k, 1024u);
  EXPECT_EQ(f->n, 384u);
  EXPECT_EQ(f->m_list[1], 64);
  EXPECT_EQ(f->k_list[1], 1024);
  EXPECT_EQ(f->n_list[1], 384);
}

TEST(GwqParseTest, MultiTensorXFoldsItsBatchDimsIntoM) {
  GroupedInputs in = MultiA16W4({{16, 256, 128}}, 0);
  SetShape(in[kX], 0, {3, 2, 16, 256});
  absl::StatusOr<GwqFacts> f = ParseGroupedWeightQuant(in, 32, 64);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->m_list[0], 96);
}

TEST(GwqParseTest, ABiasOfNoElementsIsAbsent) {
  GroupedInputs in = SingleA16W4(2, 16, 512, 256);
  Add(in[kBias], {2, 0});
  absl::StatusOr<GwqFacts> f = ParseGroupedWeightQuant(in, 32, 64);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->has_bias);
}

struct Rule {
  const char* name;
  std::function<GroupedInputs()> problem;
  uint32_t aic = 32, aiv = 64;
  const char* message_part;
};

GroupedInputs With(GroupedInputs in, const std::function<void(GroupedInputs&)>& edit) {
  edit(in);
  return in;
}

const std::vector<Rule>& Rules() {
  static const std::vector<Rule>* const rules = new std::vector<Rule>{
      {"NoAntiquantScale",
       [] {
         return With(SingleA16W4(2, 16, 512, 256),
                     [](GroupedInputs& in) { in[kAntiquantScale] = {}; });
       },
       32, 64, "field grouped.antiquant_scale has no instance"},
      {"CoreRatio", [] { return SingleA16W4(2, 16, 512, 256); }, 24, 24,
       "platform aiv_num=24, aic_num=24: the weight-quant path needs aiv_num == 2 * aic_num "
       "(CheckCoreNum)"},
      {"A16W4Nz",
       [] {
         return With(SingleA16W4(2, 16, 512, 256),
                     [](GroupedInputs& in) { in[kWeight].format = Format::kFractalNz; });
       },
       32, 64, "takes ND weights only (CheckUnsupportDataFlow)"},
      {"A16Fp8NotTransposed",
       [] {
         return With(SingleA16W4(2, 16, 512, 256, 0),
                     [](GroupedInputs& in) { in[kWeight].dtype = DataType::kFloat8E4M3; });
       },
       32, 64, "takes transposed ND weights only (CheckUnsupportDataFlow)"},
      {"A8W4Nd",
       [] {
         return With(SingleA8W4(2, 16, 512, 256),
                     [](GroupedInputs& in) { in[kWeight].format = Format::kNd; });
       },
       32, 64, "int8-int4 takes non-transposed FRACTAL_NZ weights only"},
      {"MxA8W4NotTransposed",
       [] {
         return With(MxA8W4(2, 64, 128, 256, true),
                     [](GroupedInputs& in) { in.transpose_weight = false; });
       },
       32, 64, "takes transposed FRACTAL_NZ weights only"},
      {"TransposeX",
       [] {
         return With(SingleA16W4(2, 16, 512, 256),
                     [](GroupedInputs& in) { in.transpose_x = true; });
       },
       32, 64, "field grouped.transpose_x=true: x cannot be transposed (CheckTransposeStatus)"},
      {"A16W4SplitK",
       [] {
         return With(SingleA16W4(2, 16, 512, 256), [](GroupedInputs& in) { in.group_type = 2; });
       },
       32, 64,
       "field grouped.group_type=2: an A16W4 ND problem takes -1 (no split) or 0 (split M)"},
      {"A16W4SplitItem",
       [] {
         return With(SingleA16W4(2, 16, 512, 256), [](GroupedInputs& in) { in.split_item = 0; });
       },
       32, 64, "field grouped.split_item=0: must be 2 or 3 with group_type 0"},
      {"TooManyX",
       [] {
         std::vector<std::vector<int64_t>> mkn(128, {16, 128, 128});
         return MultiA16W4(mkn, 0);
       },
       32, 64, "field grouped.x has 128 tensors; at most 127 (CheckTensorListSize)"},
      {"ScalePerWeight",
       [] {
         return With(MultiA16W4({{16, 128, 128}, {16, 128, 128}}, 0),
                     [](GroupedInputs& in) { in[kAntiquantScale].instances.pop_back(); });
       },
       32, 64, "field grouped.antiquant_scale has 1 tensors: must be one per weight tensor (2)"},
      {"SingleMultiSingleOffset",
       [] {
         return With(MxA8W4(2, 64, 128, 256, true), [](GroupedInputs& in) {
           in[kAntiquantOffset].dtype = DataType::kFloat8E8M0;
           Add(in[kAntiquantOffset], {256, 2, 2});
           Add(in[kAntiquantOffset], {256, 2, 2});
         });
       },
       32, 64, "field grouped.antiquant_offset: single-multi-single"},
      {"KZeroWithMAndN", [] { return SingleA16W4(2, 16, 0, 256, 0); }, 32, 64,
       "K may be 0 only when M or N is (CheckEmptyTensor)"},
      {"OffsetDtype",
       [] {
         return With(SingleA16W4(2, 16, 512, 256), [](GroupedInputs& in) {
           in[kAntiquantOffset].dtype = DataType::kFloat32;
           Add(in[kAntiquantOffset], {2, 4, 256});
         });
       },
       32, 64,
       "field grouped.antiquant_offset dtype float32: must be x's dtype float16 "
       "(CheckAntiQuantDtype)"},
      {"BiasDtype",
       [] {
         return With(SingleA16W4(2, 16, 512, 256), [](GroupedInputs& in) {
           in[kBias].dtype = DataType::kFloat32;
           Add(in[kBias], {2, 256});
         });
       },
       32, 64, "field grouped.bias dtype float32: x of float16 takes float16 (CheckBiasDtype)"},
      {"GroupListType",
       [] {
         return With(SingleA16W4(2, 16, 512, 256),
                     [](GroupedInputs& in) { in.group_list_type = 2; });
       },
       32, 64, "field grouped.group_list_type=2: split M takes 0 (cumulative) or 1 (counts)"},
      {"GroupListLength",
       [] {
         return With(SingleA16W4(2, 16, 512, 256),
                     [](GroupedInputs& in) { in[kGroupList].instances[0].origin = {3}; });
       },
       32, 64, "field grouped.group_list of length 3: must be the group count 2 (CheckGroupList)"},
      {"GroupListAbsent",
       [] {
         return With(SingleA16W4(2, 16, 512, 256), [](GroupedInputs& in) { in[kGroupList] = {}; });
       },
       32, 64, "field grouped.group_list has no instance: split M needs it"},
      {"WeightDims",
       [] {
         return With(SingleA16W4(2, 16, 512, 256), [](GroupedInputs& in) {
           SetShape(in[kWeight], 0, {2, 512, 256, 1});
         });
       },
       32, 64, "field grouped.weight[0] [2, 512, 256, 1]: must have 3 dims with group_type 0"},
      {"ScaleDims",
       [] {
         return With(SingleA16W4(2, 16, 512, 256),
                     [](GroupedInputs& in) { SetShape(in[kAntiquantScale], 0, {256}); });
       },
       32, 64, "must have 2 (per-channel) or 3 (per-group) dims"},
      {"WeightK",
       [] {
         return With(SingleA16W4(2, 16, 512, 256), [](GroupedInputs& in) {
           SetShape(in[kWeight], 0, {2, 256, 256});
         });
       },
       32, 64, "K of x (512) must be the weight's (256, its storage dim) (CheckDimValue)"},
      {"XNz",
       [] {
         return With(SingleA16W4(2, 16, 512, 256),
                     [](GroupedInputs& in) { in[kX].format = Format::kFractalNz; });
       },
       32, 64, "field grouped.x format FRACTAL_NZ: x must be ND"},
      {"ScaleGroupCount",
       [] {
         return With(SingleA16W4(2, 16, 512, 256), [](GroupedInputs& in) {
           SetShape(in[kAntiquantScale], 0, {3, 4, 256});
         });
       },
       32, 64, "its first dim must be the group count 2 (CheckTensorShape)"},
      {"ScaleN",
       [] {
         return With(SingleA16W4(2, 16, 512, 256), [](GroupedInputs& in) {
           SetShape(in[kAntiquantScale], 0, {2, 4, 128});
         });
       },
       32, 64, "N of antiquant_scale (128) must be the weight's (256)"},
      {"Int4OddN",
       [] {
         return With(SingleA16W4(2, 16, 512, 255, 0), [](GroupedInputs& in) {
           SetShape(in[kAntiquantScale], 0, {2, 255});
         });
       },
       32, 64, "an int4 weight's last dim must be even (CheckWeightInnerAxisEven)"},
      {"SingleMultiSingleScaleN",
       [] {
         return With(MxA8W4(2, 64, 128, 256, true), [](GroupedInputs& in) {
           SetShape(in[kAntiquantScale], 1, {272, 2, 2});
         });
       },
       32, 64, "N of antiquant_scale (272) must be the weight's (256)"},
      {"SingleMultiSingleMxGroups",
       [] {
         return With(MxA8W4(2, 64, 128, 256, true), [](GroupedInputs& in) {
           SetShape(in[kAntiquantScale], 0, {256, 1, 2});
         });
       },
       32, 64, "MX scales cover K=128 in groups of 32"},
      {"SingleMultiSingleYN",
       [] {
         return With(MxA8W4(2, 64, 128, 256, true), [](GroupedInputs& in) {
           in[kY].instances[0].origin = {64, 128};
         });
       },
       32, 64, "its N (256) must be y's last dim (128)"},
      {"FormMix",
       [] {
         return With(SingleA16W4(2, 16, 512, 256), [](GroupedInputs& in) { in.split_item = 1; });
       },
       32, 64, "field grouped.split_item=1"},
      {"A16W4GroupSize", [] { return SingleA16W4(2, 16, 1536, 256, 512); }, 32, 64,
       "group size 512 (K / groups): an A16W4 ND per-group scale takes 32, 64, 128 or 256"},
      {"A8W4GroupSize", [] { return SingleA8W4(2, 16, 512, 256, 64); }, 32, 64,
       "group size 64 (K / groups): an int8-int4 scale takes 128, 192, 256 or 512"},
      {"ScaleDividesK",
       [] {
         return With(SingleA16W4(2, 16, 1000, 256), [](GroupedInputs& in) {
           SetShape(in[kAntiquantScale], 0, {2, 7, 256});
         });
       },
       32, 64, "its group count 7 must be above 0 and divide K=1000 (DeriveGroupSizeSingle)"},
      {"OffsetShape",
       [] {
         return With(SingleA16W4(2, 16, 512, 256), [](GroupedInputs& in) {
           in[kAntiquantOffset].dtype = DataType::kFloat16;
           Add(in[kAntiquantOffset], {2, 5, 256});
         });
       },
       32, 64, "the offset has the scale's shape (CheckAntiquantOffsetMatchScale)"},
      {"MultiMixedScaleForms",
       [] {
         return With(MultiA16W4({{16, 128, 128}, {16, 128, 128}}, 0), [](GroupedInputs& in) {
           SetShape(in[kAntiquantScale], 1, {1, 128});
         });
       },
       32, 64, "antiquant_scale[0] is per-channel, so every scale is [N]"},
      {"MultiGroupSizes",
       [] {
         return With(MultiA16W4({{16, 256, 128}, {16, 512, 128}}, 128), [](GroupedInputs& in) {
           SetShape(in[kAntiquantScale], 1, {8, 128});
         });
       },
       32, 64, "group size 64 differs from antiquant_scale[0]'s 128"},
      {"PerTokenScaleShape",
       [] {
         return With(MxA8W4(2, 64, 128, 256, true), [](GroupedInputs& in) {
           SetShape(in[kPerTokenScale], 0, {65, 2, 2});
         });
       },
       32, 64, "field grouped.per_token_scale [65, 2, 2]: must be [64, 2, 2] (CheckPerTokenScale)"},
      {"PerTokenScaleAbsent",
       [] {
         return With(MxA8W4(2, 64, 128, 256, false),
                     [](GroupedInputs& in) { in[kPerTokenScale] = {}; });
       },
       32, 64, "field grouped.per_token_scale has no instance"},
  };
  return *rules;
}

class GwqRuleTest : public ::testing::TestWithParam<Rule> {};

TEST_P(GwqRuleTest, RefusedNamingTheFieldAndTheRule) {
  const Rule& rule = GetParam();
  absl::StatusOr<GwqFacts> f = ParseGroupedWeightQuant(rule.problem(), rule.aic, rule.aiv);
  EXPECT_THAT(f.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(rule.message_part)));
}

INSTANTIATE_TEST_SUITE_P(Rules, GwqRuleTest, ::testing::ValuesIn(Rules()),
                         [](const ::testing::TestParamInfo<Rule>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace npu::tiling::grouped::weight_quant
