#include "emulator/quant_numerics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "emulator/quant_formats.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using tiling::DataType;

// `values` encoded in `dtype` (exactly, for the values the tests use).
std::vector<uint8_t> Encode(DataType dtype, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(QuantBytes(dtype, values.size()), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    SetQuantCode(dtype, absl::MakeSpan(bytes), i, EncodeQuant(dtype, values[i]));
  }
  return bytes;
}

// x1 = [[1, -2, 3], [4, 5, -6]], x2 = [[7, -8], [9, 10], [-11, 12]]:
// x1 @ x2 = [[-44, 8], [139, -54]].
QuantOperands Int8Example() {
  QuantOperands op;
  op.m = 2;
  op.k = 3;
  op.n = 2;
  op.x1 = Encode(DataType::kInt8, {1, -2, 3, 4, 5, -6});
  op.x2 = Encode(DataType::kInt8, {7, -8, 9, 10, -11, 12});
  op.scale_dtype = DataType::kUint64;
  op.scale_words = {PackFixpipeScale(0.5f)};
  op.y_dtype = DataType::kFloat16;
  return op;
}

std::vector<double> Device(const QuantOperands& op) {
  absl::StatusOr<std::vector<double>> c = QuantMatmulDevice(op);
  EXPECT_THAT(c, IsOk());
  return c.ok() ? *c : std::vector<double>{};
}

TEST(QuantNumericsTest, Int8HandComputed) {
  QuantOperands op = Int8Example();
  EXPECT_EQ(*ClassifyQuantPath(op), QuantPath::kFixpipe);
  EXPECT_THAT(Device(op), ElementsAre(-22.0, 4.0, 69.5, -27.0));
  EXPECT_THAT(*QuantMatmulReference(op), ElementsAre(-22.0, 4.0, 69.5, -27.0));

  op.y_dtype = DataType::kInt32;  // no dequantisation
  EXPECT_EQ(*ClassifyQuantPath(op), QuantPath::kInt32Output);
  EXPECT_THAT(Device(op), ElementsAre(-44.0, 8.0, 139.0, -54.0));
  op.has_bias = true;
  op.bias_dtype = DataType::kInt32;
  op.bias_int32 = {1, 2};
  EXPECT_THAT(Device(op), ElementsAre(-43.0, 10.0, 140.0, -52.0));
}

TEST(QuantNumericsTest, Int4HandComputed) {
  QuantOperands op = Int8Example();
  op.x1_dtype = op.x2_dtype = DataType::kInt4;
  op.x1 = Encode(DataType::kInt4, {1, -2, 3, 4, 5, -6});
  op.x2 = Encode(DataType::kInt4, {7, -8, 1, 2, -3, 4});
  ASSERT_EQ(op.x1.size(), 3u);  // packed
  // [[1*7 - 2*1 - 3*3, -8 - 4 + 12], [28 + 5 + 18, -32 + 10 - 24]] * 0.5
  EXPECT_THAT(Device(op), ElementsAre(-2.0, 0.0, 25.5, -23.0));
}

// CANN: y = (x1 @ x2 + bias) * scale for an int32 bias, x1 @ x2 * scale + bias
// for a float one (aclnnQuantMatmulV5, T-C / T-T).
TEST(QuantNumericsTest, Int32BiasBeforeDequantFloatBiasAfter) {
  QuantOperands fixpipe = Int8Example();
  fixpipe.scale_words = {PackFixpipeScale(0.25f), PackFixpipeScale(0.25f)};
  fixpipe.has_bias = true;
  fixpipe.bias_dtype = DataType::kInt32;
  fixpipe.bias_int32 = {3, -5};
  EXPECT_THAT(Device(fixpipe), ElementsAre(-10.25, 0.75, 35.5, -14.75));

  QuantOperands vector = Int8Example();
  vector.y_dtype = DataType::kBFloat16;
  vector.scale_dtype = DataType::kFloat32;
  vector.scale = {0.25f, 0.25f};
  vector.has_bias = true;
  vector.bias_dtype = DataType::kFloat32;
  vector.bias_float = {3.0f, -5.0f};
  EXPECT_EQ(*ClassifyQuantPath(vector), QuantPath::kVectorEpilogue);
  EXPECT_THAT(Device(vector), ElementsAre(-8.0, -3.0, 37.75, -18.5));

  // The same bias as int32 on the vector path still goes in before the scale.
  vector.bias_dtype = DataType::kInt32;
  vector.bias_int32 = {3, -5};
  EXPECT_THAT(Device(vector), ElementsAre(-10.25, 0.75, 35.5, -14.75));
}

// fp8 with a uint64 scale: the fp32 bias is L0C's initial value, so it is
// scaled too: (2 + 1) * 4, not 2 * 4 + 1.
TEST(QuantNumericsTest, Float8FixpipeBiasGoesBeforeTheScale) {
  QuantOperands op;
  op.m = 1;
  op.k = 2;
  op.n = 1;
  op.x1_dtype = op.x2_dtype = DataType::kFloat8E4M3;
  op.x1 = Encode(DataType::kFloat8E4M3, {1.0f, 2.0f});
  op.x2 = Encode(DataType::kFloat8E4M3, {1.0f, 0.5f});
  op.scale_dtype = DataType::kUint64;
  op.scale_words = {PackFixpipeScale(4.0f)};
  op.has_bias = true;
  op.bias_dtype = DataType::kFloat32;
  op.bias_float = {1.0f};
  op.y_dtype = DataType::kFloat32;
  EXPECT_THAT(Device(op), ElementsAre(12.0));
}

// The example with per-channel and per-token float scales, bfloat16 out:
// the vector epilogue.
QuantOperands PerTokenExample() {
  QuantOperands op = Int8Example();
  op.y_dtype = DataType::kBFloat16;
  op.scale_dtype = DataType::kFloat32;
  op.scale = {0.5f, 2.0f};
  op.has_pertoken = true;
  op.pertoken = {1.0f, 0.25f};
  return op;
}

TEST(QuantNumericsTest, PerTokenScalesEachRow) {
  QuantOperands op = PerTokenExample();
  EXPECT_EQ(*ClassifyQuantPath(op), QuantPath::kVectorEpilogue);
  // [[-44 * 0.5, 8 * 2], [139 * 0.5 * 0.25, -54 * 2 * 0.25]]
  EXPECT_THAT(Device(op), ElementsAre(-22.0, 16.0, 17.375, -27.0));
  op.scale_dtype = DataType::kBFloat16;  // bf16 scales are widened exactly
  EXPECT_THAT(Device(op), ElementsAre(-22.0, 16.0, 17.375, -27.0));
}

// The cube kernels truncate a float per-tensor (or double) scale to the
// fixpipe's fp19; the vector epilogue keeps the fp32 scale.
TEST(QuantNumericsTest, FixpipeTruncatesAFloatScaleToFp19) {
  const float scale = 1.0f + std::ldexp(1.0f, -20);
  QuantOperands op;
  op.m = 1;
  op.k = 1;
  op.n = 2;
  op.x1_dtype = op.x2_dtype = DataType::kFloat8E4M3;
  op.x1 = Encode(DataType::kFloat8E4M3, {1.0f});
  op.x2 = Encode(DataType::kFloat8E4M3, {1.0f, 2.0f});
  op.scale = {scale};
  op.has_pertoken = true;
  op.pertoken = {1.0f};  // double scale
  op.y_dtype = DataType::kFloat32;
  EXPECT_EQ(*ClassifyQuantPath(op), QuantPath::kFixpipe);
  EXPECT_THAT(Device(op), ElementsAre(1.0, 2.0));
  EXPECT_THAT(*QuantMatmulReference(op), ElementsAre(scale, 2.0 * scale));
  const std::vector<double> bound = *QuantMatmulErrorBound(op);
  EXPECT_GE(bound[0], std::ldexp(1.0, -20));  // the truncation is inside the bound

  op.scale = {scale, scale};  // per-channel: the mix kernel, fp32 scale
  EXPECT_EQ(*ClassifyQuantPath(op), QuantPath::kVectorEpilogue);
  EXPECT_THAT(Device(op), ElementsAre(scale, 2.0 * scale));

  EXPECT_EQ(FixpipeScaleValue(PackFixpipeScale(scale)), 1.0f);
  EXPECT_EQ(PackFixpipeScale(1.0f) >> 46 & 1, 1u);
}

TEST(QuantNumericsTest, Int8OutputRoundsSaturatesAndOffsets) {
  QuantOperands op;
  op.m = 1;
  op.k = 1;
  op.n = 3;
  op.x1 = Encode(DataType::kInt8, {100});
  op.x2 = Encode(DataType::kInt8, {3, 3, 1});
  op.scale_dtype = DataType::kUint64;
  // 300 -> int9 255, then -200; 150 + 3 -> int8 127; 12.5 -> 12 (even).
  op.scale_words = {PackFixpipeScale(1.0f, -200.0f), PackFixpipeScale(0.5f, 3.0f),
                    PackFixpipeScale(0.125f)};
  op.y_dtype = DataType::kInt8;
  EXPECT_THAT(Device(op), ElementsAre(55.0, 127.0, 12.0));
  const std::vector<double> ref = *QuantMatmulReference(op);
  EXPECT_THAT(ref, ElementsAre(300.0, 150.0, 12.5));
  EXPECT_EQ(ToOutputRange(op, 0, ref[0]), 55.0);
  EXPECT_EQ(ToOutputRange(op, 1, ref[1]), 127.0);

  EXPECT_EQ(FixpipeOffset(PackFixpipeScale(1.0f, -3.5f)), -4);  // nearest even
  EXPECT_EQ(FixpipeOffset(PackFixpipeScale(1.0f, 300.0f)), 255);
  EXPECT_EQ(FixpipeOffset(PackFixpipeScale(1.0f, -1000.0f)), -256);
}

// Per-32 K blocks with k = 40: a full block and a ragged one of 8.
TEST(QuantNumericsTest, MxScalesEach32BlockOfK) {
  QuantOperands op;
  op.m = 2;
  op.k = 40;
  op.n = 1;
  op.x1_dtype = DataType::kFloat8E4M3;
  op.x2_dtype = DataType::kFloat8E5M2;  // CANN mixes e4m3 and e5m2
  op.x1 = Encode(op.x1_dtype, std::vector<float>(op.m * op.k, 1.0f));
  op.x2 = Encode(op.x2_dtype, std::vector<float>(op.k * op.n, 1.0f));
  op.scale_dtype = DataType::kFloat8E8M0;
  op.scale_e8m0 = {127, 130};  // x2: 1, 8
  op.has_pertoken = true;
  op.pertoken_e8m0 = {128, 126,   // row 0: 2, 0.5
                      127, 129};  // row 1: 1, 4
  op.has_bias = true;
  op.bias_dtype = DataType::kFloat32;
  op.bias_float = {0.5f};
  op.y_dtype = DataType::kFloat32;
  EXPECT_EQ(*ClassifyQuantPath(op), QuantPath::kMx);
  // row 0: 32 * 2 * 1 + 8 * 0.5 * 8 + 0.5; row 1: 32 * 1 * 1 + 8 * 4 * 8 + 0.5
  EXPECT_THAT(Device(op), ElementsAre(96.5, 288.5));

  QuantOperands fp4;
  fp4.m = 1;
  fp4.k = 3;
  fp4.n = 1;
  fp4.x1_dtype = fp4.x2_dtype = DataType::kFloat4E2M1;
  fp4.x1 = Encode(DataType::kFloat4E2M1, {6.0f, 6.0f, -1.5f});
  fp4.x2 = Encode(DataType::kFloat4E2M1, {0.5f, 0.5f, 2.0f});
  fp4.scale_dtype = DataType::kFloat8E8M0;
  fp4.scale_e8m0 = {128};
  fp4.has_pertoken = true;
  fp4.pertoken_e8m0 = {127};
  fp4.y_dtype = DataType::kBFloat16;
  EXPECT_THAT(Device(fp4), ElementsAre(6.0));  // (3 + 3 - 3) * 2
}

// m = 3, k = 5, n = 3 with 2 x 2 x 2 groups: every axis has a ragged group.
TEST(QuantNumericsTest, PerBlockWithRaggedGroups) {
  QuantOperands op;
  op.m = 3;
  op.k = 5;
  op.n = 3;
  op.x1_dtype = op.x2_dtype = DataType::kFloat8E4M3;
  op.x1 = Encode(op.x1_dtype, std::vector<float>(op.m * op.k, 1.0f));
  op.x2 = Encode(op.x2_dtype, std::vector<float>(op.k * op.n, 1.0f));
  op.group_m = op.group_n = op.group_k = 2;
  op.scale_dtype = DataType::kFloat32;
  op.scale = {1, 0.5f, 0.25f, 2, 4, 8};  // [ceil(k/2), ceil(n/2)] = [3, 2]
  op.has_pertoken = true;
  op.pertoken = {1, 2, 4, 8, 16, 32};  // [ceil(m/2), ceil(k/2)] = [2, 3]
  op.y_dtype = DataType::kFloat32;
  EXPECT_EQ(*ClassifyQuantPath(op), QuantPath::kPerBlock);
  // C[i][j] = 2 s1[i/2][0] s2[0][j/2] + 2 s1[i/2][1] s2[1][j/2] + 1 s1[i/2][2] s2[2][j/2]
  EXPECT_THAT(Device(op), ElementsAre(19, 19, 41, 19, 19, 41, 152, 152, 328));
}

// The int32 accumulator wraps like the hardware's: 131072 * 16384 = 2^31.
TEST(QuantNumericsTest, Int32AccumulatorWraps) {
  QuantOperands op;
  op.m = 1;
  op.k = 131072;
  op.n = 1;
  op.x1 = Encode(DataType::kInt8, std::vector<float>(op.k, -128.0f));
  op.x2 = Encode(DataType::kInt8, std::vector<float>(op.k, -128.0f));
  op.scale_dtype = DataType::kUint64;
  op.scale_words = {PackFixpipeScale(1.0f)};
  op.y_dtype = DataType::kInt32;
  EXPECT_THAT(Device(op), ElementsAre(-2147483648.0));
  EXPECT_THAT(*QuantMatmulReference(op), ElementsAre(2147483648.0));
}

// ---- device against reference on random inputs ------------------------------

class ScaleRng {
 public:
  explicit ScaleRng(uint64_t seed) : gen_(seed) {}
  double Uniform() { return static_cast<double>(gen_() >> 11) * 0x1p-53; }
  // A positive fp32 in [2^lo_exp, 2^hi_exp).
  float Scale(int lo_exp, int hi_exp) {
    return static_cast<float>(std::exp2(lo_exp + (hi_exp - lo_exp) * Uniform()));
  }
  std::vector<float> Scales(uint64_t count, int lo_exp, int hi_exp) {
    std::vector<float> values(count);
    for (float& v : values) v = Scale(lo_exp, hi_exp);
    return values;
  }
  // Values in (-limit, limit) rounded to `dtype`.
  std::vector<float> Bias(uint64_t count, double limit, DataType dtype) {
    std::vector<float> values(count);
    for (float& v : values) {
      v = static_cast<float>(RoundToFormat(dtype, static_cast<float>((2 * Uniform() - 1) * limit)));
    }
    return values;
  }
  std::vector<uint8_t> Codes(uint64_t count, int lo, int hi) {
    std::vector<uint8_t> codes(count);
    for (uint8_t& c : codes)
      c = static_cast<uint8_t>(lo + static_cast<int>((hi - lo + 1) * Uniform()));
    return codes;
  }

 private:
  std::mt19937_64 gen_;  // fully specified by the standard: same draws everywhere
};

struct Scenario {
  std::string name;
  QuantOperands op;
  QuantPath path;
};

QuantOperands RandomInputs(DataType x1, DataType x2, uint64_t m, uint64_t k, uint64_t n,
                           uint64_t seed) {
  QuantOperands op;
  op.m = m;
  op.k = k;
  op.n = n;
  op.x1_dtype = x1;
  op.x2_dtype = x2;
  op.x1 = *DrawQuantValues(x1, m * k, seed);
  op.x2 = *DrawQuantValues(x2, k * n, seed + 1);
  return op;
}

std::vector<Scenario> RandomScenarios() {
  std::vector<Scenario> s;
  ScaleRng rng(7);
  {  // int8, per-channel uint64 scale, int32 bias, fp16 out
    QuantOperands op = RandomInputs(DataType::kInt8, DataType::kInt8, 5, 67, 7, 100);
    op.scale_dtype = DataType::kUint64;
    for (float v : rng.Scales(op.n, -12, -6)) op.scale_words.push_back(PackFixpipeScale(v));
    op.has_bias = true;
    op.bias_dtype = DataType::kInt32;
    op.bias_int32 = {1000, -7, 0, 12345, -99999, 3, 42};
    op.y_dtype = DataType::kFloat16;
    s.push_back({"int8 per-channel fixpipe fp16", op, QuantPath::kFixpipe});
  }
  {  // int8 -> int8 with offsets (REQ8), some saturating
    QuantOperands op = RandomInputs(DataType::kInt8, DataType::kInt8, 6, 40, 5, 200);
    op.scale_dtype = DataType::kInt64;
    const float offsets[] = {0, -20, 7, 100, -256};
    for (uint64_t j = 0; j < op.n; ++j) {
      op.scale_words.push_back(PackFixpipeScale(rng.Scale(-13, -10), offsets[j]));
    }
    op.y_dtype = DataType::kInt8;
    s.push_back({"int8 to int8 with offsets", op, QuantPath::kFixpipe});
  }
  {  // int4, per-tensor uint64 scale, int32 bias, bf16 out
    QuantOperands op = RandomInputs(DataType::kInt4, DataType::kInt4, 3, 64, 6, 300);
    op.scale_dtype = DataType::kUint64;
    op.scale_words = {PackFixpipeScale(rng.Scale(-8, 2))};
    op.has_bias = true;
    op.bias_dtype = DataType::kInt32;
    op.bias_int32 = {-5, 6, 7, 8, 9, 10};
    op.y_dtype = DataType::kBFloat16;
    s.push_back({"int4 per-tensor fixpipe bf16", op, QuantPath::kFixpipe});
  }
  {  // int8, per-token + bf16 per-channel scale + bf16 bias (mix kernel)
    QuantOperands op = RandomInputs(DataType::kInt8, DataType::kInt8, 4, 50, 9, 400);
    op.scale_dtype = DataType::kBFloat16;
    for (float v : rng.Scales(op.n, -10, -4)) {
      op.scale.push_back(static_cast<float>(RoundToFormat(DataType::kBFloat16, v)));
    }
    op.has_pertoken = true;
    op.pertoken = rng.Scales(op.m, -3, 3);
    op.has_bias = true;
    op.bias_dtype = DataType::kBFloat16;
    op.bias_float = rng.Bias(op.n, 50, DataType::kBFloat16);
    op.y_dtype = DataType::kBFloat16;
    s.push_back({"int8 per-token bf16", op, QuantPath::kVectorEpilogue});
  }
  // GroupedMatmul's activations after the vector epilogue's dequant and
  // bias: values of both signs around the gates' bend, fp16 and bf16 out.
  for (const auto& [activation, name] :
       {std::pair{QuantActivation::kRelu, "relu"}, std::pair{QuantActivation::kGeluTanh, "gelu_tanh"},
        std::pair{QuantActivation::kFastGelu, "fast_gelu"},
        std::pair{QuantActivation::kSilu, "silu"}}) {
    for (DataType y : {DataType::kFloat16, DataType::kBFloat16}) {
      QuantOperands op = RandomInputs(DataType::kInt8, DataType::kInt8, 6, 96, 11,
                                      700 + static_cast<uint64_t>(activation));
      op.scale = rng.Scales(op.n, -16, -13);
      op.has_pertoken = true;
      op.pertoken = rng.Scales(op.m, -2, 2);
      op.has_bias = true;
      op.bias_dtype = DataType::kFloat32;
      op.bias_float = rng.Bias(op.n, 4, DataType::kFloat32);
      op.y_dtype = y;
      op.activation = activation;
      s.push_back({std::string("int8 per-token ") + name + " " + std::string(tiling::DataTypeName(y)),
                   op, QuantPath::kVectorEpilogue});
    }
  }
  {  // int8, per-token + float per-tensor scale + fp16 bias, fp16 out
    QuantOperands op = RandomInputs(DataType::kInt8, DataType::kInt8, 3, 33, 4, 500);
    op.scale = {rng.Scale(-12, -8)};
    op.has_pertoken = true;
    op.pertoken = rng.Scales(op.m, -2, 2);
    op.has_bias = true;
    op.bias_dtype = DataType::kFloat16;
    op.bias_float = rng.Bias(op.n, 10, DataType::kFloat16);
    op.y_dtype = DataType::kFloat16;
    s.push_back({"int8 per-token fp16 bias", op, QuantPath::kVectorEpilogue});
  }
  {  // e4m3 x e5m2, per-channel uint64 scale, fp32 bias into L0C, fp16 out
    QuantOperands op = RandomInputs(DataType::kFloat8E4M3, DataType::kFloat8E5M2, 4, 40, 5, 600);
    op.scale_dtype = DataType::kUint64;
    for (float v : rng.Scales(op.n, -26, -22)) op.scale_words.push_back(PackFixpipeScale(v));
    op.has_bias = true;
    op.bias_dtype = DataType::kFloat32;
    op.bias_float = rng.Bias(op.n, 1e6, DataType::kFloat32);
    op.y_dtype = DataType::kFloat16;
    s.push_back({"fp8 mixed fixpipe fp16", op, QuantPath::kFixpipe});
  }
  {  // hifloat8, per-token + per-channel fp32 scale + fp32 bias (mix), fp32 out
    QuantOperands op = RandomInputs(DataType::kHiFloat8, DataType::kHiFloat8, 5, 48, 6, 700);
    op.scale = rng.Scales(op.n, -10, 0);
    op.has_pertoken = true;
    op.pertoken = rng.Scales(op.m, -4, 4);
    op.has_bias = true;
    op.bias_dtype = DataType::kFloat32;
    op.bias_float = rng.Bias(op.n, 1e3, DataType::kFloat32);
    op.y_dtype = DataType::kFloat32;
    s.push_back({"hif8 per-token fp32", op, QuantPath::kVectorEpilogue});
  }
  {  // e4m3 double scale on the cube (fp19), bf16 out
    QuantOperands op = RandomInputs(DataType::kFloat8E4M3, DataType::kFloat8E4M3, 4, 70, 5, 800);
    op.scale = {rng.Scale(-6, 0)};
    op.has_pertoken = true;
    op.pertoken = {rng.Scale(-3, 3)};
    op.y_dtype = DataType::kBFloat16;
    s.push_back({"fp8 double scale fixpipe", op, QuantPath::kFixpipe});
  }
  {  // hifloat8 double scale with an fp32 bias: the mix kernel, fp16 out
    QuantOperands op = RandomInputs(DataType::kHiFloat8, DataType::kHiFloat8, 3, 20, 4, 900);
    op.scale = {rng.Scale(-32, -30)};
    op.has_pertoken = true;
    op.pertoken = {rng.Scale(-1, 1)};
    op.has_bias = true;
    op.bias_dtype = DataType::kFloat32;
    op.bias_float = rng.Bias(op.n, 100, DataType::kFloat32);
    op.y_dtype = DataType::kFloat16;
    s.push_back({"hif8 double scale fp32 bias", op, QuantPath::kVectorEpilogue});
  }
  {  // per-tile e4m3 (group_m 1), ragged groups, bf16 out
    QuantOperands op = RandomInputs(DataType::kFloat8E4M3, DataType::kFloat8E4M3, 4, 50, 20, 1000);
    op.group_m = 1;
    op.group_k = 16;
    op.group_n = 8;
    op.scale = rng.Scales(4 * 3, -8, 0);  // [ceil(50/16), ceil(20/8)]
    op.has_pertoken = true;
    op.pertoken = rng.Scales(4 * 4, -4, 2);  // [4, ceil(50/16)]
    op.y_dtype = DataType::kBFloat16;
    s.push_back({"fp8 per-tile", op, QuantPath::kPerBlock});
  }
  {  // per-block e5m2, CANN's 128 x 128 x 128 groups, fp32 out
    QuantOperands op =
        RandomInputs(DataType::kFloat8E5M2, DataType::kFloat8E5M2, 5, 300, 130, 1100);
    op.group_m = op.group_n = op.group_k = 128;
    op.scale = rng.Scales(3 * 2, -8, 0);
    op.has_pertoken = true;
    op.pertoken = rng.Scales(1 * 3, -4, 2);
    op.y_dtype = DataType::kFloat32;
    s.push_back({"fp8 per-block 128", op, QuantPath::kPerBlock});
  }
  {  // per-block hifloat8, fp16 out
    QuantOperands op = RandomInputs(DataType::kHiFloat8, DataType::kHiFloat8, 3, 37, 9, 1200);
    op.group_m = 2;
    op.group_k = 10;
    op.group_n = 4;
    op.scale = rng.Scales(4 * 3, -30, -28);
    op.has_pertoken = true;
    op.pertoken = rng.Scales(2 * 4, -2, 0);
    op.y_dtype = DataType::kFloat16;
    s.push_back({"hif8 per-block fp16", op, QuantPath::kPerBlock});
  }
  {  // MX e4m3 x e5m2 with bias, k not a multiple of 32, bf16 out
    QuantOperands op = RandomInputs(DataType::kFloat8E4M3, DataType::kFloat8E5M2, 4, 100, 6, 1300);
    op.scale_dtype = DataType::kFloat8E8M0;
    op.scale_e8m0 = rng.Codes(4 * op.n, 100, 127);
    op.has_pertoken = true;
    op.pertoken_e8m0 = rng.Codes(op.m * 4, 110, 130);
    op.has_bias = true;
    op.bias_dtype = DataType::kFloat32;
    op.bias_float = rng.Bias(op.n, 100, DataType::kFloat32);
    op.y_dtype = DataType::kBFloat16;
    s.push_back({"mxfp8", op, QuantPath::kMx});
  }
  {  // MX fp4, fp16 out
    QuantOperands op = RandomInputs(DataType::kFloat4E2M1, DataType::kFloat4E2M1, 3, 70, 4, 1400);
    op.scale_dtype = DataType::kFloat8E8M0;
    op.scale_e8m0 = rng.Codes(3 * op.n, 120, 130);
    op.has_pertoken = true;
    op.pertoken_e8m0 = rng.Codes(op.m * 3, 120, 130);
    op.y_dtype = DataType::kFloat16;
    s.push_back({"mxfp4", op, QuantPath::kMx});
  }
  {  // int8 -> int32 with bias
    QuantOperands op = RandomInputs(DataType::kInt8, DataType::kInt8, 3, 90, 3, 1500);
    op.scale_dtype = DataType::kUint64;
    op.scale_words = {PackFixpipeScale(1.0f)};
    op.has_bias = true;
    op.bias_dtype = DataType::kInt32;
    op.bias_int32 = {-1, 1 << 20, 77};
    op.y_dtype = DataType::kInt32;
    s.push_back({"int8 to int32", op, QuantPath::kInt32Output});
  }
  return s;
}

TEST(QuantNumericsTest, DeviceIsWithinTheBoundOfTheReference) {
  for (const Scenario& scenario : RandomScenarios()) {
    SCOPED_TRACE(scenario.name);
    const QuantOperands& op = scenario.op;
    ASSERT_THAT(ClassifyQuantPath(op), IsOk());
    EXPECT_EQ(*ClassifyQuantPath(op), scenario.path);
    const std::vector<double> device = *QuantMatmulDevice(op);
    const std::vector<double> reference = *QuantMatmulReference(op);
    const std::vector<double> bound = *QuantMatmulErrorBound(op);
    ASSERT_EQ(device.size(), op.m * op.n);
    double max_bound = 0, max_reference = 0;
    for (uint64_t i = 0; i < device.size(); ++i) {
      const double expected = ToOutputRange(op, i % op.n, reference[i]);
      ASSERT_TRUE(std::isfinite(bound[i])) << "element " << i;
      EXPECT_LE(std::fabs(device[i] - expected), bound[i])
          << "element " << i << ": device " << device[i] << ", reference " << reference[i];
      EXPECT_EQ(RoundToFormat(op.y_dtype == DataType::kInt8 || op.y_dtype == DataType::kInt32
                                  ? DataType::kFloat32
                                  : op.y_dtype,
                              static_cast<float>(device[i])),
                device[i])
          << "element " << i << " is not a y value";
      max_bound = std::max(max_bound, bound[i]);
      max_reference = std::max(max_reference, std::fabs(expected));
    }
    // The bound is a few output ulps, not a blanket tolerance.
    if (op.y_dtype == DataType::kInt32) {
      EXPECT_EQ(max_bound, 0.0);
    } else if (op.y_dtype == DataType::kInt8) {
      EXPECT_LT(max_bound, 0.6);
    } else {
      EXPECT_LT(max_bound, 0.02 * max_reference);
    }
  }
}

// The bound is tight enough to notice a dropped bias or a bias added in the
// wrong place.
TEST(QuantNumericsTest, BoundCatchesAMisplacedBias) {
  for (const Scenario& scenario : RandomScenarios()) {
    const QuantOperands& op = scenario.op;
    if (!op.has_bias || op.y_dtype == DataType::kInt32) continue;
    SCOPED_TRACE(scenario.name);
    const std::vector<double> device = *QuantMatmulDevice(op);
    const std::vector<double> bound = *QuantMatmulErrorBound(op);
    QuantOperands without_bias = op;
    without_bias.has_bias = false;
    const std::vector<double> reference = *QuantMatmulReference(without_bias);
    int violations = 0;
    for (uint64_t i = 0; i < device.size(); ++i) {
      violations += std::fabs(device[i] - ToOutputRange(op, i % op.n, reference[i])) > bound[i];
    }
    EXPECT_GT(violations, 0);
  }
}

// The bound notices an activation left out, and only the vector epilogue
// takes one.
TEST(QuantNumericsTest, BoundCatchesAMissingActivationAndOnlyTheVectorPathTakesOne) {
  int scenarios = 0;
  for (const Scenario& scenario : RandomScenarios()) {
    const QuantOperands& op = scenario.op;
    if (op.activation == QuantActivation::kNone) continue;
    SCOPED_TRACE(scenario.name);
    ++scenarios;
    const std::vector<double> device = *QuantMatmulDevice(op);
    const std::vector<double> bound = *QuantMatmulErrorBound(op);
    QuantOperands linear = op;
    linear.activation = QuantActivation::kNone;
    const std::vector<double> reference = *QuantMatmulReference(linear);
    int violations = 0;
    for (uint64_t i = 0; i < device.size(); ++i) {
      violations += std::fabs(device[i] - reference[i]) > bound[i];
    }
    EXPECT_GT(violations, 0);
  }
  EXPECT_EQ(scenarios, 8);
  QuantOperands fixpipe = Int8Example();
  fixpipe.activation = QuantActivation::kRelu;
  EXPECT_THAT(ClassifyQuantPath(fixpipe),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("activation: only the vector epilogue applies one")));
}

// ReLU and SiLU by hand on the per-token example: [[-22, 16], [17.375, -27]]
// before the activation.
TEST(QuantNumericsTest, ActivationsAfterTheDequantHandComputed) {
  QuantOperands op = PerTokenExample();
  op.activation = QuantActivation::kRelu;
  EXPECT_THAT(Device(op), ElementsAre(0.0, 16.0, 17.375, 0.0));
  op.activation = QuantActivation::kSilu;
  const std::vector<double> silu = Device(op);
  ASSERT_EQ(silu.size(), 4u);
  // 16 sigmoid(16) rounds to 16 in bfloat16; -22 sigmoid(-22) is -6.1e-9.
  EXPECT_EQ(silu[1], 16.0);
  const double tiny = -22.0 / (1.0 + std::exp(22.0));
  EXPECT_NEAR(silu[0], tiny, 0.01 * std::fabs(tiny));
}

TEST(QuantNumericsTest, SizeMismatchNamesTheField) {
  QuantOperands op = Int8Example();
  op.n = 8;
  op.x2 = Encode(DataType::kInt8, std::vector<float>(op.k * op.n, 1.0f));
  op.y_dtype = DataType::kBFloat16;
  op.scale_dtype = DataType::kFloat32;
  op.scale = std::vector<float>(7, 1.0f);
  EXPECT_THAT(QuantMatmulDevice(op),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("scale: 7 values"), HasSubstr("n = 8"))));

  QuantOperands x1 = Int8Example();
  x1.x1.pop_back();
  EXPECT_THAT(QuantMatmulReference(x1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x1: 5 bytes, expected 6")));

  QuantOperands bias = Int8Example();
  bias.has_bias = true;
  bias.bias_dtype = DataType::kInt32;
  bias.bias_int32 = {1};
  EXPECT_THAT(QuantMatmulErrorBound(bias),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bias_int32: 1 values, expected n = 2")));

  QuantOperands mx;
  mx.m = 2;
  mx.k = 40;
  mx.n = 1;
  mx.x1_dtype = mx.x2_dtype = DataType::kFloat8E4M3;
  mx.x1 = Encode(mx.x1_dtype, std::vector<float>(80, 1.0f));
  mx.x2 = Encode(mx.x2_dtype, std::vector<float>(40, 1.0f));
  mx.scale_dtype = DataType::kFloat8E8M0;
  mx.scale_e8m0 = {127};
  EXPECT_THAT(ClassifyQuantPath(mx), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("scale_e8m0: 1 values, expected "
                                                        "ceil(k / 32) * n = 2")));
}

TEST(QuantNumericsTest, RefusesCombinationsCannRefuses) {
  QuantOperands pair = Int8Example();
  pair.x2_dtype = DataType::kInt4;
  EXPECT_THAT(ClassifyQuantPath(pair),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x2_dtype")));

  QuantOperands fp8_int8_out = Int8Example();
  fp8_int8_out.x1_dtype = fp8_int8_out.x2_dtype = DataType::kFloat8E4M3;
  fp8_int8_out.y_dtype = DataType::kInt8;
  EXPECT_THAT(ClassifyQuantPath(fp8_int8_out),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("y_dtype")));

  QuantOperands bf16_bias = Int8Example();
  bf16_bias.y_dtype = DataType::kBFloat16;
  bf16_bias.scale_dtype = DataType::kFloat32;
  bf16_bias.scale = {0.5f, 0.5f};
  bf16_bias.has_bias = true;
  bf16_bias.bias_dtype = DataType::kBFloat16;
  bf16_bias.bias_float = {1.0f, 0.1f};  // 0.1 is not a bf16 value
  EXPECT_THAT(ClassifyQuantPath(bf16_bias),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bias_float[1]: 0.1 is not a bfloat16 value")));

  QuantOperands fp4 = Int8Example();
  fp4.x1_dtype = fp4.x2_dtype = DataType::kFloat4E2M1;
  fp4.x1 = Encode(DataType::kFloat4E2M1, {1, 1, 1, 1, 1, 1});
  fp4.x2 = Encode(DataType::kFloat4E2M1, {1, 1, 1, 1, 1, 1});
  EXPECT_THAT(ClassifyQuantPath(fp4),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("MX")));
}

}  // namespace
}  // namespace npu::emu
