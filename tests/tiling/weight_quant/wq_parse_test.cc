// CANN's checks of WeightQuantBatchMatmulV2 (server/tiling/weight_quant/
// wq_parse.h): one malformed problem per rule, each refused as
// INVALID_ARGUMENT whose message names the field and the rule; the two
// rules CANN never fires stay unfired; the parse infers the antiquant mode.
#include "server/tiling/weight_quant/wq_parse.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/key_layout.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/validate.h"

namespace npu::tiling::weight_quant {
namespace {

// fp16 x [16, 1024], an int4 weight [1024, 4096] with a per-channel scale.
MatmulProblem Base() {
  MatmulProblem p;
  p.op = MatmulOp::kWeightQuantBatchMatmulV2;
  p.m = 16;
  p.k = 1024;
  p.n = 4096;
  p.dtype_a = DataType::kFloat16;
  p.dtype_b = DataType::kInt4;
  p.dtype_c = DataType::kFloat16;
  p.quant.antiquant_scale = {true, DataType::kFloat16, {4096}};
  return p;
}

ChipSpec Chip() { return *FindPlatform(kDefaultPlatform); }

struct Rule {
  const char* name;
  std::function<void(MatmulProblem&, ChipSpec&)> breaks;
  const char* message_part;  // the field and the rule, as the message says them
};

const std::vector<Rule>& Rules() {
  static const std::vector<Rule>* const rules = new std::vector<Rule>{
      {"XDtype", [](MatmulProblem& p, ChipSpec&) { p.dtype_a = DataType::kFloat32; },
       "field dtype_a=float32: x must be float16 or bfloat16 (CheckInputDtype)"},
      {"WeightDtype", [](MatmulProblem& p, ChipSpec&) { p.dtype_b = DataType::kFloat8E5M2; },
       "field dtype_b=float8_e5m2: the weight must be"},
      {"BiasDtypeFp16",
       [](MatmulProblem& p, ChipSpec&) {
         p.has_bias = true;
         p.dtype_bias = DataType::kFloat32;
       },
       "field dtype_bias=float32: must be float16 when x is float16 (CheckBiasDtype)"},
      {"BiasDtypeBf16Fp8",
       [](MatmulProblem& p, ChipSpec&) {
         p.dtype_a = p.dtype_c = p.quant.antiquant_scale.dtype = DataType::kBFloat16;
         p.dtype_b = DataType::kFloat8E4M3;
         p.has_bias = true;
         p.dtype_bias = DataType::kFloat32;
       },
       "must be bfloat16 when x is bfloat16 and the weight is float8_e4m3fn"},
      {"BiasDtypeBf16",
       [](MatmulProblem& p, ChipSpec&) {
         p.dtype_a = p.dtype_c = p.quant.antiquant_scale.dtype = DataType::kBFloat16;
         p.has_bias = true;
         p.dtype_bias = DataType::kFloat16;
       },
       "must be float32 or bfloat16 when x is bfloat16"},
      {"ScaleUint64",
       [](MatmulProblem& p, ChipSpec&) { p.quant.antiquant_scale.dtype = DataType::kUint64; },
       "field quant.antiquant_scale.dtype=uint64: int64 / uint64 antiquant scales are the "
       "Ascend 910B's only"},
      {"ScaleDtype",
       [](MatmulProblem& p, ChipSpec&) { p.quant.antiquant_scale.dtype = DataType::kFloat32; },
       "field quant.antiquant_scale.dtype=float32: must be x's dtype"},
      {"OffsetDtype",
       [](MatmulProblem& p, ChipSpec&) {
         p.quant.antiquant_offset = {true, DataType::kInt32, {4096}};
       },
       "field quant.antiquant_offset.dtype=int32: must be x's dtype"},
      {"QuantScaleDtype",
       [](MatmulProblem& p, ChipSpec&) {
         p.quant.quant_scale = {true, DataType::kFloat32, {1}};
       },
       "field quant.quant_scale.dtype=float32: must be uint64 (CheckQuantDtype)"},
      {"OutputDtype", [](MatmulProblem& p, ChipSpec&) { p.dtype_c = DataType::kBFloat16; },
       "field dtype_c=bfloat16: must be x's dtype float16 without a quant scale"},
      {"GroupNegative", [](MatmulProblem& p, ChipSpec&) { p.quant.group_size = -32; },
       "field quant.group_size=-32: must not be negative (CheckAttr)"},
      {"EmptyX", [](MatmulProblem& p, ChipSpec&) { p.m = 0; }, "must not be empty (CheckShape)"},
      {"NzRank",
       [](MatmulProblem& p, ChipSpec&) {
         p.format_b = Format::kFractalNz;
         p.storage_shape_b = {4096, 1024};
       },
       "field storage_shape_b=[4096, 1024]: an NZ weight's storage shape has 4 dims"},
      {"Int4InnerOdd", [](MatmulProblem& p, ChipSpec&) {
         p.n = 4095;
         p.quant.antiquant_scale.shape = {4095};
       },
       "field n=4095: the inner dim of an int4 / float4 weight must be even"},
      {"ScaleRank",
       [](MatmulProblem& p, ChipSpec&) { p.quant.antiquant_scale.shape = {1, 1, 4096}; },
       "at most 2 dims (CheckAntiQuantScaleShape)"},
      {"ScaleGroupShape",
       [](MatmulProblem& p, ChipSpec&) {
         p.quant.group_size = 128;
         p.quant.antiquant_scale.shape = {4, 4096};
       },
       "field quant.antiquant_scale.shape=[4, 4096]: must be [8, 4096]"},
      {"ScaleChannelSize",
       [](MatmulProblem& p, ChipSpec&) { p.quant.antiquant_scale.shape = {4097}; },
       "a per-channel scale has n=4096 elements"},
      {"OffsetFp8",
       [](MatmulProblem& p, ChipSpec&) {
         p.dtype_b = DataType::kHiFloat8;
         p.quant.antiquant_offset = {true, DataType::kFloat16, {4096}};
       },
       "field quant.antiquant_offset: not supported with a hifloat8 weight"},
      {"OffsetShape",
       [](MatmulProblem& p, ChipSpec&) {
         p.quant.antiquant_offset = {true, DataType::kFloat16, {1, 4096}};
       },
       "must equal the antiquant scale's [4096]"},
      {"QuantOffsetAlone",
       [](MatmulProblem& p, ChipSpec&) {
         p.quant.quant_offset = {true, DataType::kFloat32, {1}};
       },
       "field quant.quant_offset: needs a quant scale (CheckQuantShape)"},
      {"QuantScaleNeedsInt8",
       [](MatmulProblem& p, ChipSpec&) {
         p.quant.quant_scale = {true, DataType::kUint64, {1}};
       },
       "field dtype_c=float16: must be int8 with a quant scale (CheckQuantShape)"},
      {"QuantScaleShape",
       [](MatmulProblem& p, ChipSpec&) {
         p.dtype_c = DataType::kInt8;
         p.quant.quant_scale = {true, DataType::kUint64, {2, 4096}};
       },
       "must be [1, n=4096] (CheckQuantShape)"},
      {"BiasShape",
       [](MatmulProblem& p, ChipSpec&) {
         p.has_bias = true;
         p.quant.bias_shape = {4095};
       },
       "field quant.bias_shape=[4095]: must be [n=4096] or [0] (CheckBiasShape)"},
      {"Int8NzKn",
       [](MatmulProblem& p, ChipSpec&) {
         p.dtype_b = DataType::kInt8;
         p.n = 70000;
         p.quant.antiquant_scale.shape = {70000};
         p.format_b = Format::kFractalNz;
       },
       "an int8 NZ weight needs k and n <= 65535 (CheckShapeDims)"},
      {"GroupAlign",
       [](MatmulProblem& p, ChipSpec&) {
         p.quant.group_size = 48;
         p.quant.antiquant_scale.shape = {22, 4096};
       },
       "field quant.group_size=48: must be below k=1024 and a multiple of 32"},
      {"MxGroup",
       [](MatmulProblem& p, ChipSpec&) {
         p.dtype_b = DataType::kFloat4E2M1;
         p.quant.antiquant_scale = {true, DataType::kFloat8E8M0, {16, 4096}};
         p.quant.group_size = 64;
       },
       "must be 32 with a float8_e8m0 (MX) antiquant scale (CheckShapeDims)"},
      {"NzScenario",
       [](MatmulProblem& p, ChipSpec&) {
         p.format_b = Format::kFractalNz;
         p.trans_b = true;
         p.k = 1024;
       },
       "field format_b=FRACTAL_NZ: an NZ weight takes"},
      {"Fp8TransA",
       [](MatmulProblem& p, ChipSpec&) {
         p.dtype_b = DataType::kFloat8E4M3;
         p.trans_a = true;
       },
       "takes no transpose_x, int8 output or NZ format (CheckPara)"},
      {"CoreRatio", [](MatmulProblem&, ChipSpec& chip) { chip.aiv_num = chip.aic_num; },
       "needs aiv_num == 2 * aic_num (CheckCoreNum)"},
      {"TransA", [](MatmulProblem& p, ChipSpec&) { p.trans_a = true; },
       "field trans_a: transpose_x must be false (CheckTempLimit)"},
      {"Int8Output",
       [](MatmulProblem& p, ChipSpec&) {
         p.dtype_c = DataType::kInt8;
         p.quant.quant_scale = {true, DataType::kUint64, {1}};
       },
       "field dtype_c=int8: y cannot be int8 on DAV_3510 (CheckTempLimit)"},
      {"Fp8PerGroup",
       [](MatmulProblem& p, ChipSpec&) {
         p.dtype_b = DataType::kFloat8E4M3;
         p.quant.group_size = 128;
         p.quant.antiquant_scale.shape = {8, 4096};
       },
       "a float8_e4m3fn weight takes a per-channel scale only, here PER_GROUP"},
      {"Fp4PerChannel", [](MatmulProblem& p, ChipSpec&) { p.dtype_b = DataType::kFloat4E2M1; },
       "a float4 weight takes MX or per-group scales only, here PER_CHANNEL"},
      {"Fp4Group",
       [](MatmulProblem& p, ChipSpec&) {
         p.dtype_b = DataType::kFloat4E2M1;
         p.quant.group_size = 96;
         p.quant.antiquant_scale.shape = {11, 4096};
       },
       "a float4 per-group weight takes 32, 64, 128 or 256 (CheckTempLimit)"},
      {"PackedWeightWord",
       [](MatmulProblem& p, ChipSpec&) {
         p.dtype_b = DataType::kInt32;
         p.n = 4092;
         p.quant.antiquant_scale.shape = {4092};
       },
       "a packed weight holds 8 elements per word"},
      {"ScaleMissing", [](MatmulProblem& p, ChipSpec&) { p.quant.antiquant_scale = {}; },
       "field quant.antiquant_scale is required"},
      {"QuantV3Fields",
       [](MatmulProblem& p, ChipSpec&) { p.quant.scale = {true, DataType::kFloat32, {1}}; },
       "are QuantBatchMatmulV3's"},
  };
  return *rules;
}

class WqRefusalTest : public ::testing::TestWithParam<Rule> {};

TEST_P(WqRefusalTest, IsInvalidArgumentNamingTheRule) {
  const Rule& rule = GetParam();
  MatmulProblem p = Base();
  ChipSpec chip = Chip();
  ASSERT_TRUE(MakeBuiltinRegistry().Decide(p, chip).ok()) << "the base problem tiles";
  rule.breaks(p, chip);
  absl::StatusOr<TilingDecision> decision = MakeBuiltinRegistry().Decide(p, chip);
  ASSERT_FALSE(decision.ok());
  EXPECT_EQ(decision.status().code(), absl::StatusCode::kInvalidArgument) << decision.status();
  EXPECT_NE(decision.status().message().find(rule.message_part), std::string::npos)
      << decision.status().message();
}

INSTANTIATE_TEST_SUITE_P(CheckPara, WqRefusalTest, ::testing::ValuesIn(Rules()),
                         [](const ::testing::TestParamInfo<Rule>& info) {
                           return std::string(info.param.name);
                         });

// CANN tests the weight's format before reading it: a bfloat16 bias with
// an int8 NZ weight is accepted.
TEST(WqParseTest, Bf16BiasWithInt8NzWeightIsAccepted) {
  MatmulProblem p = Base();
  p.dtype_a = p.dtype_c = p.quant.antiquant_scale.dtype = DataType::kBFloat16;
  p.dtype_b = DataType::kInt8;
  p.format_b = Format::kFractalNz;
  p.has_bias = true;
  p.dtype_bias = DataType::kBFloat16;
  EXPECT_TRUE(CheckWeightQuantProblem(p).ok());
}

// CANN tests the offset flag before setting it: an offset with an MX scale
// is accepted for an int4 weight.
TEST(WqParseTest, OffsetWithMxScaleIsAcceptedForInt4) {
  MatmulProblem p = Base();
  p.quant.group_size = 32;
  p.quant.antiquant_scale = {true, DataType::kFloat8E8M0, {32, 4096}};
  p.quant.antiquant_offset = {true, DataType::kFloat8E8M0, {32, 4096}};
  EXPECT_TRUE(CheckWeightQuantProblem(p).ok());
  const WqFacts f = ParseWeightQuant(p);
  EXPECT_EQ(f.antiquant, QuantType::kMx);
  EXPECT_TRUE(f.has_antiquant_offset);
}

TEST(WqParseTest, InfersTheAntiquantMode) {
  MatmulProblem p = Base();
  EXPECT_EQ(ParseWeightQuant(p).antiquant, QuantType::kPerChannel);
  p.quant.antiquant_scale.shape = {1};
  EXPECT_EQ(ParseWeightQuant(p).antiquant, QuantType::kPerTensor);
  p.quant.group_size = 64;
  p.quant.antiquant_scale.shape = {16, 4096};
  EXPECT_EQ(ParseWeightQuant(p).antiquant, QuantType::kPerGroup);
  // An FP8 per-tensor scale reads as per-channel (ConfigureReuseScenarios).
  MatmulProblem fp8 = Base();
  fp8.dtype_b = DataType::kHiFloat8;
  fp8.quant.antiquant_scale.shape = {1};
  EXPECT_EQ(ParseWeightQuant(fp8).antiquant, QuantType::kPerChannel);
  // A packed INT32 weight reads as int4, its C0 in elements.
  MatmulProblem packed = Base();
  packed.dtype_b = DataType::kInt32;
  packed.format_b = Format::kFractalNz;
  packed.storage_shape_b = {257, 65, 16, 2};
  const WqFacts f = ParseWeightQuant(packed);
  EXPECT_EQ(f.weight, DataType::kInt4);
  EXPECT_EQ(f.c0, 16u);
}

TEST(WqStructTest, WordCountsAreCanns) {
  EXPECT_EQ(StructWords(TilingStructOf(KernelId::kWeightQuantAdaptiveSplit)), 70u);
  EXPECT_EQ(StructWords(TilingStructOf(KernelId::kWeightQuantRegBase)), 64u);
  EXPECT_EQ(StructWords(TilingStructOf(KernelId::kWeightQuantCustom)), 120u);
}

TEST(WqStructTest, SixtyFourBitMembersRoundTripThroughWords) {
  TilingData data = NewTilingData<WqAsField>();
  Set(data, WqAsField::kMSize, uint64_t{0x123456789});
  Set(data, WqAsField::kCubeNumBlocksN, 7);
  const std::vector<uint32_t> words = data.RawWords();
  ASSERT_EQ(words.size(), 70u);
  EXPECT_EQ(words[1], 7u);
  EXPECT_EQ(words[14], 0x23456789u);  // mSize: words 14 (low) and 15
  EXPECT_EQ(words[15], 0x1u);
  absl::StatusOr<TilingData> back = TilingDataFromWords(KernelId::kWeightQuantAdaptiveSplit, words);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->Get("mSize"), uint64_t{0x123456789});
}

// The answer encoders size the raw words by MaxWords(): never fewer than
// the struct has (each 64-bit member takes two).
TEST(WqStructTest, MaxWordsBoundsTheWords) {
  for (KernelId kernel : {KernelId::kWeightQuantAdaptiveSplit, KernelId::kWeightQuantRegBase,
                          KernelId::kWeightQuantCustom}) {
    TilingData data;
    data.kernel = kernel;
    for (const TilingFieldSpec& spec : TilingStructOf(kernel).fields) {
      data.fields.push_back({spec.name, 0, spec.bits});
    }
    EXPECT_GE(data.MaxWords(), data.RawWords().size()) << data.struct_name();
    EXPECT_EQ(data.RawWords().size(), StructWords(TilingStructOf(kernel))) << data.struct_name();
  }
}

TEST(WqKeyTest, DecodesEveryFieldByName) {
  // ADAPTIVE_SPLIT's golden 0x11033002: SUPPORT_L1_TO_BT_BF16, N_FIRST_BASIC_BLOCK,
  // MTE2_INNER_SIZE_256_BUF_NUM_4, PER_TENSOR antiquant, quant type index 1.
  absl::StatusOr<TilingKey> key = TilingKey::Decode(0x11033002, KeyLayout::kWeightQuant);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->Encode(), 0x11033002u);
  const KeyLayoutSpec& spec = KeyLayoutSpecOf(KeyLayout::kWeightQuant);
  std::vector<std::string> named;
  for (const KeyFieldSpec& field : spec.fields) {
    named.push_back(absl::StrCat(std::string(field.name), "=",
                                 std::string(KeyValueName(field, field.get(*key)))));
  }
  EXPECT_EQ(named[0], "soc_version_type=SUPPORT_L1_TO_BT_BF16");
  EXPECT_EQ(named[4], "sub_algorithm=N_FIRST_BASIC_BLOCK");
  EXPECT_EQ(named[5], "template_custom=MTE2_INNER_SIZE_256_BUF_NUM_4");
  EXPECT_EQ(named[9], "antiquant_type=PER_TENSOR");
  EXPECT_EQ(named[10], "quant_type=NOT_USE/PER_TENSOR");
  EXPECT_FALSE(TilingKey::Decode(uint64_t{1} << 36, KeyLayout::kWeightQuant).ok());
}

}  // namespace
}  // namespace npu::tiling::weight_quant
