// CANN's parse and checks of GroupedMatmul's quant path
// (server/tiling/grouped/quant/gqmm_parse.h): one malformed request per
// rule, each refused as INVALID_ARGUMENT whose message names the field and
// the rule, in CANN's order; the quant modes, the kernel type and the
// narrowed attributes it infers.
#include "server/tiling/grouped/quant/gqmm_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "tests/testing/status_matchers.h"

namespace npu::tiling::grouped::quant {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

// A tensor list whose instances have `shapes` as origin and storage (or
// `storage` for an NZ weight); the shapes live as long as the test binary.
GqmmTensor Tensor(GeType dtype, std::vector<std::vector<int64_t>> shapes, bool nz = false,
                  std::vector<std::vector<int64_t>> storage = {}) {
  static auto* const kShapes = new std::deque<std::vector<GroupedShape>>();
  std::vector<GroupedShape>& list = kShapes->emplace_back();
  for (size_t i = 0; i < shapes.size(); ++i) {
    list.push_back({shapes[i], i < storage.size() ? storage[i] : shapes[i]});
  }
  return {list, dtype, nz};
}

// int8 x [512, 1024] and weight [4, 1024, 256] (split M, 4 groups), a
// per-channel FLOAT scale [4, 256], a per-token scale [512], bf16 y.
GqmmRequest Int8() {
  GqmmRequest r;
  r.x = Tensor(GeType::kInt8, {{512, 1024}});
  r.weight = Tensor(GeType::kInt8, {{4, 1024, 256}});
  r.scale = Tensor(GeType::kFloat, {{4, 256}});
  r.per_token_scale = Tensor(GeType::kFloat, {{512}});
  r.group_list = Tensor(GeType::kInt64, {{4}});
  r.y = Tensor(GeType::kBFloat16, {{512, 256}});
  r.split_item = 3;
  return r;
}

// MXFP8 x [256, 1024], weight [2, 1024, 512] with E8M0 scales
// [2, 16, 512, 2] and per-token [256, 16, 2].
GqmmRequest Mxfp8() {
  GqmmRequest r;
  r.x = Tensor(GeType::kFloat8E4M3, {{256, 1024}});
  r.weight = Tensor(GeType::kFloat8E4M3, {{2, 1024, 512}});
  r.scale = Tensor(GeType::kFloat8E8M0, {{2, 16, 512, 2}});
  r.per_token_scale = Tensor(GeType::kFloat8E8M0, {{256, 16, 2}});
  r.group_list = Tensor(GeType::kInt64, {{2}});
  r.y = Tensor(GeType::kBFloat16, {{256, 512}});
  r.split_item = 3;
  return r;
}

// The same, split K: x [1024, 128] transposed, scales [1024 / 64 + 2, .., 2].
GqmmRequest Mxfp8SplitK() {
  GqmmRequest r = Mxfp8();
  r.group_type = 2;
  r.transpose_x = true;
  r.x = Tensor(GeType::kFloat8E4M3, {{1024, 128}});
  r.weight = Tensor(GeType::kFloat8E4M3, {{1024, 768}});
  r.scale = Tensor(GeType::kFloat8E8M0, {{18, 768, 2}});
  r.per_token_scale = Tensor(GeType::kFloat8E8M0, {{18, 128, 2}});
  r.y = Tensor(GeType::kBFloat16, {{2, 128, 768}});
  return r;
}

absl::StatusOr<GqmmFacts> Parse(const GqmmRequest& r, uint32_t aic = 32, uint32_t aiv = 64) {
  return ParseGroupedQuant(r, aic, aiv);
}

struct Rule {
  const char* name;
  std::function<GqmmRequest()> request;
  const char* message_part;
};

const std::vector<Rule>& Rules() {
  static const std::vector<Rule>* const rules = new std::vector<Rule>{
      {"XDtype",
       [] {
         GqmmRequest r = Int8();
         r.x.dtype = GeType::kInt4;
         return r;
       },
       "field grouped.x: x must be INT8, HIFLOAT8"},
      {"WeightDtype",
       [] {
         GqmmRequest r = Int8();
         r.weight.dtype = GeType::kUint8;
         return r;
       },
       "field grouped.weight: weight must be INT8"},
      {"E1m2NeedsNz",
       [] {
         GqmmRequest r = Mxfp8();
         r.x.dtype = r.weight.dtype = GeType::kFloat4E1M2;
         return r;
       },
       "needs an NZ weight (AnalyzeDtype)"},
      {"NzDtypes",
       [] {
         GqmmRequest r = Mxfp8();
         r.x.dtype = r.weight.dtype = GeType::kFloat8E5M2;
         r.weight.nz = true;
         return r;
       },
       "(CheckDtypeForWeightNz)"},
      {"NzInt8Output",
       [] {
         GqmmRequest r = Int8();
         r.weight.nz = true;
         r.y.dtype = GeType::kInt8;
         return r;
       },
       "field grouped.y: y cannot be INT8 with an NZ weight"},
      {"NzInt8PerTokenDtypes",
       [] {
         GqmmRequest r = Int8();
         r.weight.nz = true;
         r.scale.dtype = GeType::kUint64;
         return r;
       },
       "(CheckPertokenScaleDtypeForWeightNz)"},
      {"Fp8Bias",
       [] {
         GqmmRequest r = Mxfp8();
         r.bias = Tensor(GeType::kFloat, {{2, 512}});
         return r;
       },
       "field grouped.bias: x of FLOAT8_E4M3FN takes no bias"},
      {"Int8BiasForInt8Output",
       [] {
         GqmmRequest r = Int8();
         r.y.dtype = GeType::kInt8;
         r.bias = Tensor(GeType::kFloat, {{4, 256}});
         return r;
       },
       "bias must be INT32 when y is INT8 or INT32"},
      {"Int8FloatOutput",
       [] {
         GqmmRequest r = Int8();
         r.y.dtype = GeType::kFloat;
         r.bias = Tensor(GeType::kInt32, {{4, 256}});
         return r;
       },
       "field grouped.y: with INT8 x, y must be"},
      {"GroupListType",
       [] {
         GqmmRequest r = Int8();
         r.group_list_type = 3;
         return r;
       },
       "field grouped.group_list_type: group_list_type=3"},
      {"NoSplit",
       [] {
         GqmmRequest r = Int8();
         r.group_type = -1;
         return r;
       },
       "field grouped.group_type: group_type=-1 must be 0 (split M) or 2 (split K)"},
      {"Fp4SplitK",
       [] {
         GqmmRequest r = Mxfp8SplitK();
         r.x.dtype = r.weight.dtype = GeType::kFloat4E2M1;
         return r;
       },
       "must be 0 (split M) when x is FLOAT4"},
      {"SplitMTransposedX",
       [] {
         GqmmRequest r = Int8();
         r.transpose_x = true;
         return r;
       },
       "field grouped.transpose_x: transpose_x must be false with group_type 0"},
      {"SplitKNotTransposedX",
       [] {
         GqmmRequest r = Mxfp8SplitK();
         r.transpose_x = false;
         return r;
       },
       "transpose_x must be true with group_type 2"},
      {"SplitKTransposedWeight",
       [] {
         GqmmRequest r = Mxfp8SplitK();
         r.transpose_weight = true;
         return r;
       },
       "field grouped.transpose_weight: transpose_weight must be false with group_type 2"},
      {"NoGroupList",
       [] {
         GqmmRequest r = Int8();
         r.group_list = {};
         return r;
       },
       "field grouped.group_list: the quant path needs a group_list"},
      {"SparseGroupListShape",
       [] {
         GqmmRequest r = Int8();
         r.group_list_type = 2;
         return r;
       },
       "group_list=[4] must have 2 dims with group_list_type 2"},
      {"TooManyGroups",
       [] {
         GqmmRequest r = Int8();
         r.group_list = Tensor(GeType::kInt64, {{1025}});
         return r;
       },
       "the group count 1025 exceeds 1024"},
      {"EmptyWeightSplitM",
       [] {
         GqmmRequest r = Mxfp8();
         r.weight = Tensor(GeType::kFloat8E4M3, {{0, 1024, 512}});
         return r;
       },
       "an empty x or weight is refused with group_type 0 (SetMKN)"},
      {"NoScale",
       [] {
         GqmmRequest r = Int8();
         r.scale = {};
         return r;
       },
       "field grouped.scale: a scale is needed unless y is INT32"},
      {"Int8OutputScaleShape",
       [] {
         GqmmRequest r = Int8();
         r.y.dtype = GeType::kInt8;
         r.scale = Tensor(GeType::kUint64, {{4, 255}});
         return r;
       },
       "scale=[4, 255] must be [4, 256] when y is INT8"},
      {"ScaleRank",
       [] {
         GqmmRequest r = Int8();
         r.scale = Tensor(GeType::kFloat, {{4, 256, 1}});
         return r;
       },
       "must have 1 or 2 dims outside the k-grouped modes"},
      {"MxNeedsPerToken",
       [] {
         GqmmRequest r = Mxfp8();
         r.per_token_scale = {};
         return r;
       },
       "field grouped.per_token_scale: MX needs a per_token_scale"},
      {"MxScaleShape",
       [] {
         GqmmRequest r = Mxfp8();
         r.scale = Tensor(GeType::kFloat8E8M0, {{2, 15, 512, 2}});
         return r;
       },
       "scale=[2, 15, 512, 2] must be [2, 16, 512, 2]"},
      {"MxPerTokenShape",
       [] {
         GqmmRequest r = Mxfp8();
         r.per_token_scale = Tensor(GeType::kFloat8E8M0, {{256, 16, 1}});
         return r;
       },
       "per_token_scale=[256, 16, 1] must be [256, 16, 2]"},
      {"MxSplitKScaleShape",
       [] {
         GqmmRequest r = Mxfp8SplitK();
         r.scale = Tensor(GeType::kFloat8E8M0, {{17, 768, 2}});
         return r;
       },
       "scale=[17, 768, 2] must be [18, 768, 2]"},
      {"NzStorageLastDim",
       [] {
         GqmmRequest r = Int8();
         r.weight = Tensor(GeType::kInt8, {{4, 1024, 256}}, true, {{4, 8, 64, 16, 16}});
         return r;
       },
       "its last dim must be 32 for INT8 (CheckWeightNzLastDim)"},
      {"NzStorageThirdDim",
       [] {
         GqmmRequest r = Int8();
         r.weight = Tensor(GeType::kInt8, {{4, 1024, 256}}, true, {{4, 8, 63, 16, 32}});
         return r;
       },
       "its third dim must be ceil(k / 16) = 64"},
      {"ActivationGeluErf",
       [] {
         GqmmRequest r = Int8();
         r.act_type = 3;
         return r;
       },
       "act_type 3 (gelu_erf) is not supported"},
      {"ActivationDtypes",
       [] {
         GqmmRequest r = Mxfp8();
         r.act_type = 1;
         return r;
       },
       "an activation needs INT8 x and weight"},
      {"ActivationPerTokenRank",
       [] {
         GqmmRequest r = Int8();
         r.act_type = 2;
         r.per_token_scale = Tensor(GeType::kFloat, {{4, 1}});
         return r;
       },
       "per_token_scale=[4, 1] must have 1 dim with an activation"},
      {"Fp4OddK",
       [] {
         GqmmRequest r = Mxfp8();
         r.x = Tensor(GeType::kFloat4E2M1, {{256, 1023}});
         r.weight = Tensor(GeType::kFloat4E2M1, {{2, 1023, 512}});
         return r;
       },
       "k=1023 must be even when x is FLOAT4"},
      {"Fp4BiasShape",
       [] {
         GqmmRequest r = Mxfp8();
         r.x.dtype = r.weight.dtype = GeType::kFloat4E2M1;
         r.bias = Tensor(GeType::kFloat, {{512}});
         return r;
       },
       "bias=[512] must have 2 dims when x is FLOAT4"},
      {"MixKernelCoreRatio",
       [] {
         GqmmRequest r = Int8();
         return r;
       },
       "platform aiv_num=50, aic_num=24: the vector-dequant kernel"},
  };
  return *rules;
}

class GqmmRuleTest : public ::testing::TestWithParam<Rule> {};

TEST_P(GqmmRuleTest, RefusedNamingFieldAndRule) {
  const Rule& rule = GetParam();
  const bool ratio = std::string(rule.name) == "MixKernelCoreRatio";
  EXPECT_THAT(Parse(rule.request(), ratio ? 24 : 32, ratio ? 50 : 64),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(rule.message_part)));
}

INSTANTIATE_TEST_SUITE_P(Rules, GqmmRuleTest, ::testing::ValuesIn(Rules()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(GqmmParseTest, DtypesBeforeAttributes) {
  // An int4 x is refused before the transpose it also breaks.
  GqmmRequest r = Int8();
  r.x.dtype = GeType::kInt4;
  r.transpose_x = true;
  EXPECT_THAT(Parse(r), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grouped.x")));
}

TEST(GqmmParseTest, Int8PerChannelPerTokenIsVectorDequant) {
  absl::StatusOr<GqmmFacts> f = Parse(Int8());
  ASSERT_THAT(f, IsOk());
  EXPECT_EQ(f->m, 512u);
  EXPECT_EQ(f->k, 1024u);
  EXPECT_EQ(f->n, 256u);
  EXPECT_EQ(f->group_num, 4u);
  EXPECT_EQ(f->a_mode, kModePerToken);
  EXPECT_EQ(f->b_mode, kModePerChannel);
  EXPECT_EQ(f->kernel_type, GqmmKernelType::kVectorDequant);  // a FLOAT scale
  EXPECT_TRUE(f->single_x && f->single_w && f->single_y);
}

TEST(GqmmParseTest, PackedScaleDequantizesInTheFixpipe) {
  GqmmRequest r = Int8();
  r.scale.dtype = GeType::kUint64;
  r.per_token_scale = {};
  absl::StatusOr<GqmmFacts> f = Parse(r, 24, 50);  // a cube-only kernel: no ratio needed
  ASSERT_THAT(f, IsOk());
  EXPECT_EQ(f->kernel_type, GqmmKernelType::kFixpipeDequant);
}

TEST(GqmmParseTest, PerTensorBothSidesIsCube) {
  // FP8 with [E, 1] scales on both sides: per-tensor, cube only.
  GqmmRequest r = Int8();
  r.x.dtype = r.weight.dtype = GeType::kFloat8E4M3;
  r.scale = Tensor(GeType::kFloat, {{4, 1}});
  r.per_token_scale = Tensor(GeType::kFloat, {{4, 1}});
  absl::StatusOr<GqmmFacts> f = Parse(r);
  ASSERT_THAT(f, IsOk());
  EXPECT_EQ(f->a_mode, kModePerTensor);
  EXPECT_EQ(f->b_mode, kModePerTensor);
  EXPECT_EQ(f->kernel_type, GqmmKernelType::kFixpipeDequant);
}

TEST(GqmmParseTest, OneDimPerTokenScaleOfGroupCountIsPerTensorUnlessItIsM) {
  GqmmRequest r = Int8();
  r.x.dtype = r.weight.dtype = GeType::kHiFloat8;
  r.per_token_scale = Tensor(GeType::kFloat, {{4}});
  absl::StatusOr<GqmmFacts> f = Parse(r);
  ASSERT_THAT(f, IsOk());
  EXPECT_EQ(f->a_mode, kModePerTensor);
  // With as many groups as rows, a [E] scale is read per token.
  r.x = Tensor(GeType::kHiFloat8, {{4, 1024}});
  f = Parse(r);
  ASSERT_THAT(f, IsOk());
  EXPECT_EQ(f->a_mode, kModePerToken);
}

TEST(GqmmParseTest, PerGroupXWithPerBlockWeight) {
  // fp4 [512, 256] x with [512, 2] scales, weight [2, 256, 128] with
  // [2, 2, 1]: 128-element groups and blocks.
  GqmmRequest r;
  r.x = Tensor(GeType::kFloat4E2M1, {{512, 256}});
  r.weight = Tensor(GeType::kFloat4E2M1, {{2, 256, 128}});
  r.scale = Tensor(GeType::kFloat, {{2, 2, 1}});
  r.per_token_scale = Tensor(GeType::kFloat, {{512, 2}});
  r.group_list = Tensor(GeType::kInt64, {{2}});
  r.y = Tensor(GeType::kBFloat16, {{512, 128}});
  absl::StatusOr<GqmmFacts> f = Parse(r);
  ASSERT_THAT(f, IsOk());
  EXPECT_EQ(f->a_mode, kModePerGroup);
  EXPECT_EQ(f->b_mode, kModePerBlock);
  EXPECT_EQ(f->kernel_type, GqmmKernelType::kPerGroupBlock);
  EXPECT_EQ(GqmmKey({f->trans_b, f->trans_a, f->kernel_type}).Encode(), 32u);
}

TEST(GqmmParseTest, Int32OutputReadsNoScale) {
  // y INT32: no scale is needed, the modes stay default and no activation
  // is checked.
  GqmmRequest r = Int8();
  r.y.dtype = GeType::kInt32;
  r.scale = {};
  r.act_type = 9;
  absl::StatusOr<GqmmFacts> f = Parse(r, 24, 50);
  ASSERT_THAT(f, IsOk());
  EXPECT_EQ(f->a_mode, kModeDefault);
  EXPECT_EQ(f->b_mode, kModeDefault);
  EXPECT_EQ(f->scale, GeType::kUint64);
  EXPECT_EQ(f->act_type, 9);
}

TEST(GqmmParseTest, AttributesAreNarrowedToInt8) {
  // CANN keeps group_type in an int8: 256 reads as 0, split M.
  GqmmRequest r = Int8();
  r.group_type = 256;
  r.split_item = 258;  // 2: a single y
  absl::StatusOr<GqmmFacts> f = Parse(r);
  ASSERT_THAT(f, IsOk());
  EXPECT_EQ(f->group_type, kGroupSplitM);
  EXPECT_TRUE(f->single_y);
}

TEST(GqmmParseTest, ActivationWithOneColumnIsPerChannel) {
  GqmmRequest r = Int8();
  r.act_type = 2;
  r.weight = Tensor(GeType::kInt8, {{4, 1024, 1}});
  r.scale = Tensor(GeType::kFloat, {{4, 1}});
  r.y = Tensor(GeType::kFloat16, {{512, 1}});
  absl::StatusOr<GqmmFacts> f = Parse(r);
  ASSERT_THAT(f, IsOk());
  EXPECT_EQ(f->b_mode, kModePerChannel);
  EXPECT_EQ(f->kernel_type, GqmmKernelType::kVectorDequant);
}

TEST(GqmmParseTest, MxIsFixpipeOnBothSides) {
  absl::StatusOr<GqmmFacts> f = Parse(Mxfp8(), 24, 50);  // cube only: no ratio
  ASSERT_THAT(f, IsOk());
  EXPECT_TRUE(f->mx());
  EXPECT_EQ(f->a_mode, kModeMx);
  EXPECT_EQ(f->kernel_type, GqmmKernelType::kFixpipeDequant);
}

TEST(GqmmParseTest, SplitKNeedsTheCoreRatio) {
  EXPECT_THAT(Parse(Mxfp8SplitK(), 24, 50),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("group_type 2 runs a mix kernel and needs aiv_num == 2 * "
                                 "aic_num (CheckCoreNum)")));
  EXPECT_THAT(Parse(Mxfp8SplitK(), 24, 48), IsOk());
}

TEST(GqmmParseTest, NzWeightListChecksEachTensor) {
  // One x and y, four [k, n] NZ weights with their scales.
  const std::vector<int64_t> nz = {8, 64, 16, 32};
  GqmmRequest r = Int8();
  r.weight = Tensor(GeType::kInt8, {{1024, 256}, {1024, 256}, {1024, 256}, {1024, 256}}, true,
                    {nz, nz, nz, nz});
  r.scale = Tensor(GeType::kFloat, {{256}, {256}, {256}, {256}});
  absl::StatusOr<GqmmFacts> f = Parse(r);
  ASSERT_THAT(f, IsOk());
  EXPECT_TRUE(f->nz_weight_list);
  EXPECT_EQ(f->weight_n, (std::vector<uint64_t>{256, 256, 256, 256}));
  EXPECT_FALSE(f->single_w);

  r.weight = Tensor(GeType::kInt8, {{1024, 256}, {1024, 256}, {1024, 128}, {1024, 256}}, true,
                    {nz, nz, nz, nz});
  EXPECT_THAT(Parse(r), StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("weight[2] has n=128, weight[0] n=256")));
  r = Int8();
  r.weight = Tensor(GeType::kInt8, {{1024, 256}, {1024, 256}}, true, {nz, nz});
  EXPECT_THAT(Parse(r), StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("one weight tensor per group: 2 tensors, 4 groups")));
}

}  // namespace
}  // namespace npu::tiling::grouped::quant
