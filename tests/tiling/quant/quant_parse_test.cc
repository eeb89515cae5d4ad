#include "server/tiling/quant/quant_parse.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::tiling::quant {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
// group_size attributes: k | n << 16 | m << 32.
constexpr int64_t GroupSize(int64_t m, int64_t n, int64_t k) { return k | n << 16 | m << 32; }
constexpr int64_t kPerBlockGroups = GroupSize(128, 128, 128);
constexpr int64_t kPerTileGroups = GroupSize(1, 128, 128);
constexpr int64_t kMxGroups = GroupSize(1, 1, 32);

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

QuantTensor Tensor(GeDtype dtype, std::vector<int64_t> shape) {
  QuantTensor tensor;
  tensor.present = true;
  tensor.dtype = dtype;
  tensor.origin = shape;
  tensor.storage = std::move(shape);
  return tensor;
}

// x2 in FRACTAL_NZ: [..., ceil(cols / 32), ceil(rows / 16), 16, 32].
QuantTensor NzWeight(GeDtype dtype, std::vector<int64_t> shape) {
  QuantTensor tensor = Tensor(dtype, shape);
  const int64_t rows = shape[shape.size() - 2];
  const int64_t cols = shape.back();
  tensor.storage.assign(shape.begin(), shape.end() - 2);
  tensor.storage.insert(tensor.storage.end(), {CeilDiv(cols, 32), CeilDiv(rows, 16), 16, 32});
  tensor.nz = true;
  return tensor;
}

// int8 x int8, one uint64 scale, float16 output: the plainest request.
QuantRequest Int8PerTensor(int64_t m = 256, int64_t k = 512, int64_t n = 128) {
  QuantRequest r;
  r.x1 = Tensor(GeDtype::kInt8, {m, k});
  r.x2 = Tensor(GeDtype::kInt8, {k, n});
  r.scale = Tensor(GeDtype::kUint64, {1});
  r.y = Tensor(GeDtype::kFloat16, {m, n});
  return r;
}

QuantRequest Int8PerChannel(int64_t m = 256, int64_t k = 512, int64_t n = 128) {
  QuantRequest r = Int8PerTensor(m, k, n);
  r.scale = Tensor(GeDtype::kUint64, {n});
  return r;
}

// int8 with a float32 per-token scale [m], per-channel scale, bfloat16 out.
QuantRequest Int8PerToken(int64_t m = 256, int64_t k = 512, int64_t n = 128) {
  QuantRequest r = Int8PerTensor(m, k, n);
  r.scale = Tensor(GeDtype::kFloat, {n});
  r.pertoken = Tensor(GeDtype::kFloat, {m});
  r.y = Tensor(GeDtype::kBFloat16, {m, n});
  return r;
}

// float8 with two per-tensor float32 scales ("double scale").
QuantRequest Fp8DoubleScale(GeDtype dtype = GeDtype::kFloat8E4M3, int64_t m = 256, int64_t k = 512,
                            int64_t n = 128) {
  QuantRequest r;
  r.x1 = Tensor(dtype, {m, k});
  r.x2 = Tensor(dtype, {k, n});
  r.scale = Tensor(GeDtype::kFloat, {1});
  r.pertoken = Tensor(GeDtype::kFloat, {1});
  r.y = Tensor(GeDtype::kBFloat16, {m, n});
  return r;
}

// float8 with no pertoken scale: a uint64 scale folds both.
QuantRequest Fp8StaticScale(int64_t m = 256, int64_t k = 512, int64_t n = 128) {
  QuantRequest r = Fp8DoubleScale(GeDtype::kFloat8E4M3, m, k, n);
  r.scale = Tensor(GeDtype::kUint64, {n});
  r.pertoken = QuantTensor{};
  return r;
}

// float8 per-block: 128 x 128 scales of x2, 128 x 128 (per-tile: 1 x 128)
// scales of x1.
QuantRequest Fp8PerBlock(int64_t m = 300, int64_t k = 512, int64_t n = 384, bool per_tile = false) {
  QuantRequest r;
  r.x1 = Tensor(GeDtype::kFloat8E4M3, {m, k});
  r.x2 = Tensor(GeDtype::kFloat8E4M3, {k, n});
  r.scale = Tensor(GeDtype::kFloat, {CeilDiv(k, 128), CeilDiv(n, 128)});
  r.pertoken = Tensor(GeDtype::kFloat, {per_tile ? m : CeilDiv(m, 128), CeilDiv(k, 128)});
  r.y = Tensor(GeDtype::kBFloat16, {m, n});
  r.group_size = per_tile ? kPerTileGroups : kPerBlockGroups;
  return r;
}

// MX: float8_e8m0 pairs, one per 32 elements of k.
QuantRequest Mx(GeDtype dtype = GeDtype::kFloat8E4M3, int64_t m = 256, int64_t k = 512,
                int64_t n = 128) {
  QuantRequest r;
  r.x1 = Tensor(dtype, {m, k});
  r.x2 = Tensor(dtype, {k, n});
  r.scale = Tensor(GeDtype::kFloat8E8M0, {CeilDiv(k, 64), n, 2});
  r.pertoken = Tensor(GeDtype::kFloat8E8M0, {m, CeilDiv(k, 64), 2});
  r.y = Tensor(GeDtype::kBFloat16, {m, n});
  r.group_size = kMxGroups;
  return r;
}

QuantRequest Int4PerChannel(int64_t m = 256, int64_t k = 512, int64_t n = 128) {
  QuantRequest r = Int8PerChannel(m, k, n);
  r.x1.dtype = GeDtype::kInt4;
  r.x2.dtype = GeDtype::kInt4;
  return r;
}

// ---------------------------------------------------------------------------
// Refusals: one row per rule of CANN's parse and checker. A few of CANN's
// rules cannot fire because an earlier one refuses every request that would
// break them, so they have no row: int4 with an int32 output and float
// inputs with a pertoken scale and an int8 / int32 output (CheckDtypesInRange
// and the int8-output rule refuse these first), float4 without a pertoken
// scale in the scale check (the pair check refuses it), and the 1-D pertoken
// rules other than "[m] needs a scale [1] or [n]" (the quant-mode
// classification refuses those shapes).

struct RefusalCase {
  std::string name;
  std::function<QuantRequest()> request;
  std::string field;  // the message names this field
};

std::string CaseName(const ::testing::TestParamInfo<RefusalCase>& info) { return info.param.name; }

class QuantParseRefusalTest : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(QuantParseRefusalTest, RefusedWithFieldNamed) {
  const absl::StatusOr<QuantFacts> facts = ParseQuantRequest(GetParam().request());
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(facts.status().message()), HasSubstr(GetParam().field + ":"));
}

// Applies `edit` to a copy of `base`.
std::function<QuantRequest()> With(QuantRequest base, std::function<void(QuantRequest&)> edit) {
  return [base = std::move(base), edit = std::move(edit)] {
    QuantRequest r = base;
    edit(r);
    return r;
  };
}

const std::vector<RefusalCase>& RefusalCases() {
  static const auto* cases = new std::vector<RefusalCase>{
      // Mandatory inputs.
      {"NoScale", With(Int8PerTensor(), [](QuantRequest& r) { r.scale = QuantTensor{}; }),
       "quant.scale"},
      {"NoOutput", With(Int8PerTensor(), [](QuantRequest& r) { r.y = QuantTensor{}; }),
       "problem.dtype_c"},
      // Dtypes: CheckDtypesInRange.
      {"X1NotQuantized",
       With(Int8PerTensor(), [](QuantRequest& r) { r.x1.dtype = GeDtype::kBFloat16; }),
       "problem.dtype_a"},
      {"X2NotQuantized",
       With(Int8PerTensor(), [](QuantRequest& r) { r.x2.dtype = GeDtype::kFloat16; }),
       "problem.dtype_b"},
      {"OutputNotAllowed",
       With(Int8PerTensor(), [](QuantRequest& r) { r.y.dtype = GeDtype::kFloat8E4M3; }),
       "problem.dtype_c"},
      {"Int32OutputNeedsInt8",
       With(Fp8StaticScale(), [](QuantRequest& r) { r.y.dtype = GeDtype::kInt32; }),
       "problem.dtype_c"},
      {"OffsetNotFloat",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.y.dtype = GeDtype::kInt8;
              r.offset = Tensor(GeDtype::kInt8, {1});
            }),
       "quant.offset"},
      // CheckABDtypes.
      {"FamiliesDiffer",
       With(Int8PerTensor(), [](QuantRequest& r) { r.x2.dtype = GeDtype::kInt4; }),
       "problem.dtype_b"},
      {"Float4NeedsPertoken",
       With(Mx(GeDtype::kFloat4E2M1), [](QuantRequest& r) { r.pertoken = QuantTensor{}; }),
       "problem.dtype_a"},
      // CheckDtype4WeightNz.
      {"NzPairNotSupported",
       With(Fp8StaticScale(),
            [](QuantRequest& r) {
              r.x1.dtype = GeDtype::kFloat8E5M2;
              r.x2 = NzWeight(GeDtype::kFloat8E5M2, {512, 128});
            }),
       "problem.dtype_b"},
      {"NzFloatScalesTransposedX1",
       With(Fp8DoubleScale(GeDtype::kHiFloat8),
            [](QuantRequest& r) {
              r.x1 = Tensor(GeDtype::kHiFloat8, {512, 256});
              r.transpose_x1 = true;
              r.x2 = NzWeight(GeDtype::kHiFloat8, {512, 128});
            }),
       "problem.trans_a"},
      {"NzHif8FloatScaleWithoutPertoken",
       With(Fp8DoubleScale(GeDtype::kHiFloat8),
            [](QuantRequest& r) {
              r.pertoken = QuantTensor{};
              r.x2 = NzWeight(GeDtype::kHiFloat8, {512, 128});
            }),
       "quant.scale"},
      {"NzFp4NeedsMxScales",
       With(Mx(GeDtype::kFloat4E2M1),
            [](QuantRequest& r) {
              r.scale.dtype = GeDtype::kFloat;
              r.pertoken.dtype = GeDtype::kFloat;
              r.x2 = NzWeight(GeDtype::kFloat4E2M1, {512, 128});
            }),
       "quant.scale"},
      {"NzFp8FloatScaleWithoutPertoken",
       With(Fp8StaticScale(),
            [](QuantRequest& r) {
              r.scale.dtype = GeDtype::kFloat;
              r.x2 = NzWeight(GeDtype::kFloat8E4M3, {512, 128});
            }),
       "quant.scale"},
      // CheckScaleDtypeWithPertoken.
      {"PertokenDtypeDiffersFromScale",
       With(Fp8DoubleScale(), [](QuantRequest& r) { r.scale.dtype = GeDtype::kFloat8E8M0; }),
       "quant.pertoken_scale"},
      {"Fp4ScaleNotE8M0",
       With(Mx(GeDtype::kFloat4E2M1),
            [](QuantRequest& r) {
              r.scale.dtype = GeDtype::kFloat;
              r.pertoken.dtype = GeDtype::kFloat;
            }),
       "quant.scale"},
      {"Fp8ScaleNotFloatOrE8M0",
       With(Fp8DoubleScale(),
            [](QuantRequest& r) {
              r.scale.dtype = GeDtype::kBFloat16;
              r.pertoken.dtype = GeDtype::kBFloat16;
            }),
       "quant.scale"},
      {"Int8PertokenNotFloat",
       With(Int8PerToken(), [](QuantRequest& r) { r.pertoken.dtype = GeDtype::kBFloat16; }),
       "quant.pertoken_scale"},
      {"Int8PertokenFloat16OutNeedsFloatScale",
       With(Int8PerToken(),
            [](QuantRequest& r) {
              r.y.dtype = GeDtype::kFloat16;
              r.scale.dtype = GeDtype::kBFloat16;
            }),
       "quant.scale"},
      {"Int8PertokenBf16OutScale",
       With(Int8PerToken(), [](QuantRequest& r) { r.scale.dtype = GeDtype::kFloat16; }),
       "quant.scale"},
      // CheckScalesDtype without a pertoken scale.
      {"Fp8StaticScaleNot64Bit",
       With(Fp8StaticScale(), [](QuantRequest& r) { r.scale.dtype = GeDtype::kFloat; }),
       "quant.scale"},
      {"Int8Float16OutScaleNot64Bit",
       With(Int8PerChannel(), [](QuantRequest& r) { r.scale.dtype = GeDtype::kFloat; }),
       "quant.scale"},
      {"Int8Bf16OutScaleNotAllowed",
       With(Int8PerChannel(),
            [](QuantRequest& r) {
              r.y.dtype = GeDtype::kBFloat16;
              r.scale.dtype = GeDtype::kFloat16;
            }),
       "quant.scale"},
      // CheckBiasDtype.
      {"FloatInputsBiasNotFloat",
       With(Fp8StaticScale(), [](QuantRequest& r) { r.bias = Tensor(GeDtype::kInt32, {128}); }),
       "problem.dtype_bias"},
      {"Int8IntegerScaleBiasNotInt32",
       With(Int8PerChannel(), [](QuantRequest& r) { r.bias = Tensor(GeDtype::kFloat, {128}); }),
       "problem.dtype_bias"},
      {"Int8Float16OutFloatScaleBias",
       With(Int8PerToken(),
            [](QuantRequest& r) {
              r.y.dtype = GeDtype::kFloat16;
              r.bias = Tensor(GeDtype::kBFloat16, {128});
            }),
       "problem.dtype_bias"},
      {"Int8Bf16OutFloatScaleBias",
       With(Int8PerToken(), [](QuantRequest& r) { r.bias = Tensor(GeDtype::kFloat16, {128}); }),
       "problem.dtype_bias"},
      // CheckOutputDtype.
      {"Hif8Int8Output",
       With(Fp8StaticScale(),
            [](QuantRequest& r) {
              r.x1.dtype = GeDtype::kHiFloat8;
              r.x2.dtype = GeDtype::kHiFloat8;
              r.y.dtype = GeDtype::kInt8;
            }),
       "problem.dtype_c"},
      {"Int8PertokenFloatOutput",
       With(Int8PerToken(), [](QuantRequest& r) { r.y.dtype = GeDtype::kFloat; }),
       "problem.dtype_c"},
      // Ranks.
      {"X1Rank1",
       With(Int8PerTensor(), [](QuantRequest& r) { r.x1 = Tensor(GeDtype::kInt8, {512}); }),
       "problem.batch_a"},
      {"X2Rank7",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.x2 = Tensor(GeDtype::kInt8, {1, 1, 1, 1, 1, 512, 128});
            }),
       "problem.batch_b"},
      {"Int4WithoutPertokenX2Batched",
       With(Int4PerChannel(),
            [](QuantRequest& r) {
              r.x2 = Tensor(GeDtype::kInt4, {2, 512, 128});
            }),
       "problem.batch_b"},
      // Group-size inference.
      {"GroupSizeNotInferable",
       With(Fp8PerBlock(300),
            [](QuantRequest& r) {
              r.group_size = 0;
              r.pertoken.origin[0] = r.pertoken.storage[0] = 7;
            }),
       "quant.group_size"},
      {"GroupSizeScaleDimZero",
       With(Fp8PerBlock(),
            [](QuantRequest& r) {
              r.group_size = 0;
              r.pertoken.origin[0] = r.pertoken.storage[0] = 0;
            }),
       "quant.group_size"},
      // Batch broadcast.
      {"BatchesDoNotBroadcast",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.x1 = Tensor(GeDtype::kInt8, {2, 256, 512});
              r.x2 = Tensor(GeDtype::kInt8, {3, 512, 128});
            }),
       "problem.batch_b"},
      // Quant-mode classification.
      {"PertokenMatchesNoMode",
       With(Int8PerToken(), [](QuantRequest& r) { r.pertoken = Tensor(GeDtype::kFloat, {257}); }),
       "quant.pertoken_scale"},
      {"ScaleMatchesNoMode",
       With(Int8PerChannel(), [](QuantRequest& r) { r.scale = Tensor(GeDtype::kUint64, {129}); }),
       "quant.scale"},
      {"MxScaleWithoutMxPertoken",
       With(Int8PerChannel(),
            [](QuantRequest& r) {
              r.y.dtype = GeDtype::kFloat;
              r.scale.dtype = GeDtype::kFloat8E8M0;
            }),
       "quant.scale"},
      // CheckShape4WeightNz.
      {"NzNIsOne",
       With(Int8PerTensor(256, 512, 1),
            [](QuantRequest& r) {
              r.x2 = NzWeight(GeDtype::kInt8, {512, 1});
            }),
       "problem.n"},
      {"NzStorageRank3",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.x2 = NzWeight(GeDtype::kInt8, {512, 128});
              r.x2.storage = {4, 32, 512};
            }),
       "problem.storage_shape_b"},
      {"NzStorageLastDim",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.x2 = NzWeight(GeDtype::kInt8, {512, 128});
              r.x2.storage.back() = 16;
            }),
       "problem.storage_shape_b"},
      {"NzStorageSecondLastDim",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.x2 = NzWeight(GeDtype::kInt8, {512, 128});
              r.x2.storage[2] = 8;
            }),
       "problem.storage_shape_b"},
      {"NzStorageRowBlocks",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.x2 = NzWeight(GeDtype::kInt8, {512, 128});
              r.x2.storage[1] = 33;
            }),
       "problem.storage_shape_b"},
      {"NzStorageColumnBlocks",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.x2 = NzWeight(GeDtype::kInt8, {512, 128});
              r.x2.storage[0] = 3;
            }),
       "problem.storage_shape_b"},
      // CheckShapeInRangeForOptionalInputs.
      {"BiasRank2",
       With(Int8PerChannel(),
            [](QuantRequest& r) {
              r.bias = Tensor(GeDtype::kInt32, {1, 128});
            }),
       "quant.bias_shape"},
      {"Bias3DWith2DOutput",
       With(Int8PerChannel(),
            [](QuantRequest& r) {
              r.bias = Tensor(GeDtype::kInt32, {1, 1, 128});
            }),
       "quant.bias_shape"},
      {"Int8OffsetWithoutInt8Output",
       With(Int8PerChannel(), [](QuantRequest& r) { r.offset = Tensor(GeDtype::kFloat, {1}); }),
       "quant.offset"},
      {"OffsetRank2",
       With(Int8PerChannel(),
            [](QuantRequest& r) {
              r.y.dtype = GeDtype::kInt8;
              r.offset = Tensor(GeDtype::kFloat, {128, 1});
            }),
       "quant.offset"},
      {"OffsetWithFloatScale",
       With(Fp8DoubleScale(), [](QuantRequest& r) { r.offset = Tensor(GeDtype::kFloat, {1}); }),
       "quant.offset"},
      {"ScalesNot1DOutsidePerBlock",
       With(Int8PerToken(),
            [](QuantRequest& r) {
              r.scale = Tensor(GeDtype::kFloat, {1, 128});
            }),
       "quant.scale"},
      // CheckShapeInBoundary.
      {"X1DimZero",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.x1 = Tensor(GeDtype::kInt8, {0, 512});
            }),
       "problem.m"},
      {"X2DimAboveInt32",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.x2 = Tensor(GeDtype::kInt8, {512, kInt32Max + 1});
            }),
       "problem.n"},
      {"X1TooManyElements",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.x1 = Tensor(GeDtype::kInt8, {kInt32Max, kInt32Max, 512});
            }),
       "problem.k"},
      // CheckDimValue.
      {"KDiffers",
       With(Int8PerTensor(),
            [](QuantRequest& r) {
              r.x2 = Tensor(GeDtype::kInt8, {511, 128});
            }),
       "problem.k"},
      {"BiasNotN",
       With(Int8PerChannel(), [](QuantRequest& r) { r.bias = Tensor(GeDtype::kInt32, {127}); }),
       "quant.bias_shape"},
      {"Bias3DNotBatchC",
       With(Int8PerChannel(),
            [](QuantRequest& r) {
              r.x1 = Tensor(GeDtype::kInt8, {2, 256, 512});
              r.bias = Tensor(GeDtype::kInt32, {3, 1, 128});
            }),
       "quant.bias_shape"},
      {"OffsetNot1OrN",
       With(Int8PerChannel(),
            [](QuantRequest& r) {
              r.y.dtype = GeDtype::kInt8;
              r.offset = Tensor(GeDtype::kFloat, {3});
            }),
       "quant.offset"},
      {"Scale2DWith64BitDtype",
       With(Int8PerChannel(),
            [](QuantRequest& r) {
              r.scale = Tensor(GeDtype::kUint64, {1, 128});
            }),
       "quant.scale"},
      {"NzDynamicPerTensor",
       With(Fp8DoubleScale(GeDtype::kHiFloat8),
            [](QuantRequest& r) {
              r.x2 = NzWeight(GeDtype::kHiFloat8, {512, 128});
            }),
       "quant.pertoken_scale"},
      // With MX scales a 1-D pertoken scale [m] reaches the per-token shape
      // rule before the MX shape rules.
      {"PerTokenScaleNot1OrN",
       With(Mx(),
            [](QuantRequest& r) {
              r.pertoken = Tensor(GeDtype::kFloat8E8M0, {256});
              r.scale = Tensor(GeDtype::kFloat8E8M0, {5});
            }),
       "quant.scale"},
      {"Int4OddInnerDim", With(Int4PerChannel(256, 512, 127), [](QuantRequest&) {}), "problem.n"},
      {"Int4TransposedX1",
       With(Int4PerChannel(),
            [](QuantRequest& r) {
              r.x1 = Tensor(GeDtype::kInt4, {512, 256});
              r.transpose_x1 = true;
            }),
       "problem.trans_a"},
      // Per-block.
      {"PerBlockBias",
       With(Fp8PerBlock(), [](QuantRequest& r) { r.bias = Tensor(GeDtype::kFloat, {384}); }),
       "quant.bias"},
      {"PerBlockScaleRank",
       With(Fp8PerBlock(),
            [](QuantRequest& r) {
              r.scale = Tensor(GeDtype::kFloat, {1, 4, 3});
            }),
       "quant.scale"},
      {"PerBlockPertokenRank",
       With(Fp8PerBlock(),
            [](QuantRequest& r) {
              r.x1 = Tensor(GeDtype::kFloat8E4M3, {1, 300, 512});
            }),
       "quant.pertoken_scale"},
      {"PerBlockScaleBatch",
       With(Fp8PerBlock(),
            [](QuantRequest& r) {
              r.x2 = Tensor(GeDtype::kFloat8E4M3, {2, 512, 384});
              r.scale = Tensor(GeDtype::kFloat, {3, 4, 3});
            }),
       "quant.scale"},
      {"PerBlockPertokenBatch",
       With(Fp8PerBlock(),
            [](QuantRequest& r) {
              r.x1 = Tensor(GeDtype::kFloat8E4M3, {2, 300, 512});
              r.pertoken = Tensor(GeDtype::kFloat, {3, 3, 4});
            }),
       "quant.pertoken_scale"},
      {"PerBlockGroupM",
       With(Fp8PerBlock(), [](QuantRequest& r) { r.group_size = GroupSize(64, 128, 128); }),
       "quant.group_size"},
      {"PerBlockGroupK",
       With(Fp8PerBlock(), [](QuantRequest& r) { r.group_size = GroupSize(128, 128, 64); }),
       "quant.group_size"},
      {"PerBlockGroupN",
       With(Fp8PerBlock(), [](QuantRequest& r) { r.group_size = GroupSize(128, 64, 128); }),
       "quant.group_size"},
      {"PerBlockScaleSize",
       With(Fp8PerBlock(),
            [](QuantRequest& r) {
              r.scale = Tensor(GeDtype::kFloat, {4, 4});
            }),
       "quant.scale"},
      {"PerBlockPertokenM",
       With(Fp8PerBlock(),
            [](QuantRequest& r) {
              r.pertoken = Tensor(GeDtype::kFloat, {2, 4});
            }),
       "quant.pertoken_scale"},
      {"PerBlockPertokenK",
       With(Fp8PerBlock(),
            [](QuantRequest& r) {
              r.pertoken = Tensor(GeDtype::kFloat, {3, 5});
            }),
       "quant.pertoken_scale"},
      // MX.
      {"MxGroupSizes", With(Mx(), [](QuantRequest& r) { r.group_size = GroupSize(1, 1, 64); }),
       "quant.group_size"},
      {"MxPertokenRank",
       With(Mx(),
            [](QuantRequest& r) {
              r.pertoken = Tensor(GeDtype::kFloat8E8M0, {256, 8});
            }),
       "quant.pertoken_scale"},
      {"MxPertokenK",
       With(Mx(),
            [](QuantRequest& r) {
              r.pertoken = Tensor(GeDtype::kFloat8E8M0, {256, 16, 2});
            }),
       "quant.pertoken_scale"},
      {"MxPertokenM",
       With(Mx(),
            [](QuantRequest& r) {
              r.pertoken = Tensor(GeDtype::kFloat8E8M0, {255, 8, 2});
            }),
       "quant.pertoken_scale"},
      {"MxPertokenPairs",
       With(Mx(),
            [](QuantRequest& r) {
              r.pertoken = Tensor(GeDtype::kFloat8E8M0, {256, 8, 3});
            }),
       "quant.pertoken_scale"},
      {"MxScaleRank",
       With(Mx(),
            [](QuantRequest& r) {
              r.scale = Tensor(GeDtype::kFloat8E8M0, {8, 128});
            }),
       "quant.scale"},
      {"MxScaleK",
       With(Mx(),
            [](QuantRequest& r) {
              r.scale = Tensor(GeDtype::kFloat8E8M0, {9, 128, 2});
            }),
       "quant.scale"},
      {"MxScaleN",
       With(Mx(),
            [](QuantRequest& r) {
              r.scale = Tensor(GeDtype::kFloat8E8M0, {8, 64, 2});
            }),
       "quant.scale"},
      {"MxScalePairs",
       With(Mx(),
            [](QuantRequest& r) {
              r.scale = Tensor(GeDtype::kFloat8E8M0, {8, 128, 4});
            }),
       "quant.scale"},
      {"MxScaleBatchCount",
       With(Mx(),
            [](QuantRequest& r) {
              r.scale = Tensor(GeDtype::kFloat8E8M0, {1, 8, 128, 2});
            }),
       "quant.scale"},
      {"MxPertokenBatchCount",
       With(Mx(),
            [](QuantRequest& r) {
              r.pertoken = Tensor(GeDtype::kFloat8E8M0, {1, 256, 8, 2});
            }),
       "quant.pertoken_scale"},
      {"MxScaleBatchDims",
       With(Mx(),
            [](QuantRequest& r) {
              r.x2 = Tensor(GeDtype::kFloat8E4M3, {2, 512, 128});
              r.scale = Tensor(GeDtype::kFloat8E8M0, {3, 8, 128, 2});
            }),
       "quant.scale"},
      {"MxPertokenBatchDims",
       With(Mx(),
            [](QuantRequest& r) {
              r.x1 = Tensor(GeDtype::kFloat8E4M3, {2, 256, 512});
              r.pertoken = Tensor(GeDtype::kFloat8E8M0, {3, 256, 8, 2});
            }),
       "quant.pertoken_scale"},
      {"MxFp4KTooSmall",
       With(Mx(GeDtype::kFloat4E2M1, 64, 2, 64), [](QuantRequest& r) { r.group_size = kMxGroups; }),
       "problem.k"},
      {"MxFp4OddInnerDim",
       With(Mx(GeDtype::kFloat4E2M1, 256, 512, 127),
            [](QuantRequest& r) { r.group_size = kMxGroups; }),
       "problem.n"},
      // ExtraInputCheck.
      {"Fp8Offset",
       With(Fp8StaticScale(), [](QuantRequest& r) { r.offset = Tensor(GeDtype::kFloat, {1}); }),
       "quant.offset"},
      // Batch fusion.
      {"Int4FusedMBeyondInt32",
       With(Int4PerChannel(),
            [](QuantRequest& r) {
              r.x1 = Tensor(GeDtype::kInt4, {3, 1000000000, 512});
            }),
       "problem.m"},
  };
  return *cases;
}

INSTANTIATE_TEST_SUITE_P(Rules, QuantParseRefusalTest, ::testing::ValuesIn(RefusalCases()),
                         CaseName);

// The bases the refusal rows edit are themselves valid.
TEST(QuantParseTest, RefusalBasesAreAccepted) {
  for (const QuantRequest& r : {Int8PerTensor(), Int8PerChannel(), Int8PerToken(), Fp8DoubleScale(),
                                Fp8DoubleScale(GeDtype::kHiFloat8), Fp8StaticScale(), Fp8PerBlock(),
                                Fp8PerBlock(300, 512, 384, /*per_tile=*/true), Mx(),
                                Mx(GeDtype::kFloat4E2M1), Int4PerChannel()}) {
    EXPECT_TRUE(ParseQuantRequest(r).ok()) << ParseQuantRequest(r).status();
  }
}

// ---------------------------------------------------------------------------
// Classification.

QuantFacts ParseOk(const QuantRequest& request) {
  absl::StatusOr<QuantFacts> facts = ParseQuantRequest(request);
  EXPECT_TRUE(facts.ok()) << facts.status();
  return facts.ok() ? *facts : QuantFacts{};
}

TEST(QuantParseTest, PerTensor) {
  const QuantFacts f = ParseOk(Int8PerTensor(256, 512, 128));
  EXPECT_EQ(f.m, 256u);
  EXPECT_EQ(f.k, 512u);
  EXPECT_EQ(f.n, 128u);
  EXPECT_EQ(f.x1_quant_mode, kDefaultMode);
  EXPECT_EQ(f.x2_quant_mode, kPerTensor);
  EXPECT_TRUE(f.is_per_tensor);
  EXPECT_FALSE(f.is_per_channel || f.is_pertoken || f.is_double_scale || f.is_mx || f.is_per_block);
  EXPECT_FALSE(f.has_pertoken);
  EXPECT_EQ(f.pertoken, GeDtype::kFloat);  // CANN's value for an absent pertoken scale
  EXPECT_EQ(f.bias, GeDtype::kInt32);      // and for an absent bias
}

TEST(QuantParseTest, PerChannel) {
  const QuantFacts f = ParseOk(Int8PerChannel());
  EXPECT_EQ(f.x2_quant_mode, kPerChannel);
  EXPECT_TRUE(f.is_per_channel);
  EXPECT_FALSE(f.is_per_tensor);
}

// A per-channel scale of one column is a per-tensor scale.
TEST(QuantParseTest, PerChannelWithOneColumnIsPerTensor) {
  const QuantFacts f = ParseOk(Int8PerChannel(256, 512, 1));
  EXPECT_EQ(f.x2_quant_mode, kPerTensor);
  EXPECT_TRUE(f.is_per_tensor);
}

TEST(QuantParseTest, PerToken) {
  const QuantFacts f = ParseOk(Int8PerToken());
  EXPECT_EQ(f.x1_quant_mode, kPerToken);
  EXPECT_EQ(f.x2_quant_mode, kPerChannel);
  EXPECT_TRUE(f.is_pertoken);
  EXPECT_TRUE(f.has_pertoken);
  EXPECT_TRUE(f.is_per_channel);
}

TEST(QuantParseTest, DoubleScale) {
  const QuantFacts f = ParseOk(Fp8DoubleScale(GeDtype::kHiFloat8));
  EXPECT_EQ(f.x1_quant_mode, kPerTensor);
  EXPECT_EQ(f.x2_quant_mode, kPerTensor);
  EXPECT_TRUE(f.is_double_scale);
  EXPECT_TRUE(f.is_per_tensor);
  EXPECT_FALSE(f.is_pertoken);  // a pertoken scale is present, but per tensor
  EXPECT_TRUE(f.has_pertoken);
}

TEST(QuantParseTest, PerBlock) {
  const QuantFacts f = ParseOk(Fp8PerBlock(300, 512, 384));
  EXPECT_EQ(f.x1_quant_mode, kPerBlock);
  EXPECT_EQ(f.x2_quant_mode, kPerBlock);
  EXPECT_TRUE(f.is_per_block);
  EXPECT_EQ(f.group_size_m, 128u);
  EXPECT_EQ(f.group_size_n, 128u);
  EXPECT_EQ(f.group_size_k, 128u);
}

TEST(QuantParseTest, PerTileHasGroupSizeMOne) {
  const QuantFacts f = ParseOk(Fp8PerBlock(300, 512, 384, /*per_tile=*/true));
  EXPECT_TRUE(f.is_per_block);
  EXPECT_EQ(f.group_size_m, 1u);
  EXPECT_EQ(f.group_size_n, 128u);
  EXPECT_EQ(f.group_size_k, 128u);
}

// With group_size 0 the sizes come from the scale shapes.
TEST(QuantParseTest, PerBlockGroupSizesInferred) {
  QuantRequest r = Fp8PerBlock(256, 512, 384);
  r.group_size = 0;
  const QuantFacts f = ParseOk(r);
  EXPECT_TRUE(f.is_per_block);
  EXPECT_EQ(f.group_size_m, 128u);
  EXPECT_EQ(f.group_size_n, 128u);
  EXPECT_EQ(f.group_size_k, 128u);
}

TEST(QuantParseTest, Mx) {
  const QuantFacts f = ParseOk(Mx());
  EXPECT_EQ(f.x1_quant_mode, kMxPerGroup);
  EXPECT_EQ(f.x2_quant_mode, kMxPerGroup);
  EXPECT_TRUE(f.is_mx);
  EXPECT_EQ(f.group_size_k, 32u);
}

TEST(QuantParseTest, MxGroupSizesInferred) {
  QuantRequest r = Mx(GeDtype::kFloat4E2M1);
  r.group_size = 0;
  const QuantFacts f = ParseOk(r);
  EXPECT_TRUE(f.is_mx);
  EXPECT_EQ(f.group_size_m, 1u);
  EXPECT_EQ(f.group_size_n, 1u);
  EXPECT_EQ(f.group_size_k, 32u);
}

TEST(QuantParseTest, NzWeightAccepted) {
  QuantRequest r = Int8PerChannel(256, 512, 100);
  r.x2 = NzWeight(GeDtype::kInt8, {512, 100});
  const QuantFacts f = ParseOk(r);
  EXPECT_TRUE(f.x2_nz);
  EXPECT_EQ(f.n, 100u);
}

// ---------------------------------------------------------------------------
// Batches.

// x2 2-D under a batched, non-transposed x1: one matmul of m * batch rows.
TEST(QuantParseTest, BatchOfAFoldedIntoM) {
  QuantRequest r = Int8PerChannel();
  r.x1 = Tensor(GeDtype::kInt8, {2, 3, 256, 512});
  r.y = Tensor(GeDtype::kFloat16, {2, 3, 256, 128});
  const QuantFacts f = ParseOk(r);
  EXPECT_EQ(f.m, 6u * 256u);
  EXPECT_EQ(f.batch_a, 1u);
  EXPECT_EQ(f.batch_c, 1u);
  EXPECT_EQ(f.batch_b, 1u);
  EXPECT_EQ(f.batch_a_dims, (std::array<uint64_t, 4>{1, 1, 1, 1}));
  EXPECT_EQ(f.batch_c_dims, (std::array<uint64_t, 4>{1, 1, 1, 1}));
}

TEST(QuantParseTest, TransposedAIsNotFolded) {
  QuantRequest r = Int8PerChannel();
  r.x1 = Tensor(GeDtype::kInt8, {3, 512, 256});
  r.transpose_x1 = true;
  r.y = Tensor(GeDtype::kFloat16, {3, 256, 128});
  const QuantFacts f = ParseOk(r);
  EXPECT_EQ(f.m, 256u);
  EXPECT_EQ(f.batch_a, 3u);
  EXPECT_EQ(f.batch_c, 3u);
  EXPECT_EQ(f.batch_a_dims, (std::array<uint64_t, 4>{1, 1, 1, 3}));
  EXPECT_EQ(f.batch_c_dims, (std::array<uint64_t, 4>{1, 1, 1, 3}));
}

// A per-token scale holds one value per original row, so no fold.
TEST(QuantParseTest, PerTokenIsNotFolded) {
  QuantRequest r = Int8PerToken();
  r.x1 = Tensor(GeDtype::kInt8, {3, 256, 512});
  r.y = Tensor(GeDtype::kBFloat16, {3, 256, 128});
  const QuantFacts f = ParseOk(r);
  EXPECT_EQ(f.m, 256u);
  EXPECT_EQ(f.batch_a, 3u);
}

TEST(QuantParseTest, BatchesBroadcast) {
  QuantRequest r = Int8PerChannel();
  r.x1 = Tensor(GeDtype::kInt8, {4, 1, 256, 512});
  r.x2 = Tensor(GeDtype::kInt8, {5, 512, 128});
  r.y = Tensor(GeDtype::kFloat16, {4, 5, 256, 128});
  r.bias = Tensor(GeDtype::kInt32, {128});
  const QuantFacts f = ParseOk(r);
  EXPECT_EQ(f.batch_a, 4u);
  EXPECT_EQ(f.batch_b, 5u);
  EXPECT_EQ(f.batch_c, 20u);
  EXPECT_EQ(f.batch_b_dims, (std::array<uint64_t, 4>{1, 1, 1, 5}));
  EXPECT_EQ(f.batch_c_dims, (std::array<uint64_t, 4>{1, 1, 4, 5}));
  EXPECT_TRUE(f.has_bias);
  EXPECT_EQ(f.batch_bias, 1u);
}

// ---------------------------------------------------------------------------
// Robustness: whatever the shapes hold, the parse answers (OK or
// INVALID_ARGUMENT) and never faults.
TEST(QuantParseTest, ArbitraryShapesNeverFault) {
  std::mt19937_64 rng(7);
  const std::vector<int64_t> values = {0,
                                       1,
                                       2,
                                       3,
                                       16,
                                       64,
                                       127,
                                       128,
                                       255,
                                       -1,
                                       -7,
                                       32,
                                       512,
                                       2,
                                       1,
                                       kInt32Max,
                                       kInt32Max + 1,
                                       std::numeric_limits<int64_t>::min(),
                                       std::numeric_limits<int64_t>::max()};
  const std::vector<GeDtype> dtypes = {
      GeDtype::kFloat,     GeDtype::kFloat16,    GeDtype::kInt8,       GeDtype::kInt32,
      GeDtype::kInt64,     GeDtype::kUint64,     GeDtype::kBFloat16,   GeDtype::kInt4,
      GeDtype::kHiFloat8,  GeDtype::kFloat8E5M2, GeDtype::kFloat8E4M3, GeDtype::kFloat8E8M0,
      GeDtype::kFloat4E2M1};
  const auto pick = [&rng](const auto& v) { return v[rng() % v.size()]; };
  const auto shape = [&] {
    std::vector<int64_t> s(rng() % 8);
    for (int64_t& d : s) d = pick(values);
    return s;
  };
  const auto tensor = [&](bool optional) {
    QuantTensor t;
    t.present = !optional || rng() % 2 == 0;
    t.dtype = pick(dtypes);
    t.origin = shape();
    t.storage = rng() % 4 == 0 ? shape() : t.origin;
    t.nz = rng() % 4 == 0;
    return t;
  };
  for (int i = 0; i < 20000; ++i) {
    QuantRequest r;
    r.x1 = tensor(false);
    r.x2 = tensor(false);
    r.scale = tensor(false);
    r.offset = tensor(true);
    r.bias = tensor(true);
    r.pertoken = tensor(true);
    r.y = tensor(false);
    r.transpose_x1 = rng() % 2 == 0;
    r.transpose_x2 = rng() % 2 == 0;
    r.group_size = rng() % 2 == 0 ? 0 : static_cast<int64_t>(rng());
    const absl::StatusOr<QuantFacts> facts = ParseQuantRequest(r);
    if (!facts.ok()) {
      EXPECT_EQ(facts.status().code(), absl::StatusCode::kInvalidArgument) << facts.status();
    }
  }
}

TEST(QuantParseTest, DtypeNames) {
  EXPECT_EQ(GeDtypeName(GeDtype::kFloat8E4M3), "float8_e4m3fn");
  EXPECT_EQ(GeDtypeName(GeDtype::kFloat), "float32");
  EXPECT_EQ(GeDtypeName(static_cast<GeDtype>(12)), "dtype 12");
}

}  // namespace
}  // namespace npu::tiling::quant
