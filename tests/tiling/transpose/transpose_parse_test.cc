// Tests of server/tiling/transpose/transpose_parse.h: every rule of the two
// checkers is a refusal that names the field and the rule; the facts and the
// layouts of accepted problems.
#include "server/tiling/transpose/transpose_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "server/tiling/validate.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling::transpose {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

MatmulProblem Tbmm(int64_t m = 32, int64_t n = 512, int64_t k = 128, int64_t batch = 8) {
  MatmulProblem p;
  p.op = MatmulOp::kTransposeBatchMatMul;
  p.m = m;
  p.n = n;
  p.k = k;
  p.transpose.perm_x1 = {1, 0, 2};
  p.transpose.perm_x2 = {0, 1, 2};
  p.transpose.perm_y = {1, 0, 2};
  p.transpose.batch = batch;
  return p;
}

QuantTensorSpec Spec(DataType dtype, std::vector<int64_t> shape) {
  return QuantTensorSpec{true, dtype, std::move(shape)};
}

// FP8 mode: K = 512 and N = 128, float32 scales [m] and [n].
MatmulProblem Fp8(int64_t m = 40, int64_t batch = 4) {
  MatmulProblem p = Tbmm(m, kFp8ModeN, kFp8ModeK, batch);
  p.op = MatmulOp::kTransposeQuantBatchMatMul;
  p.dtype_a = p.dtype_b = DataType::kFloat8E4M3;
  p.dtype_c = DataType::kBFloat16;
  p.quant.pertoken = Spec(DataType::kFloat32, {m});
  p.quant.scale = Spec(DataType::kFloat32, {kFp8ModeN});
  return p;
}

MatmulProblem MxFp8(int64_t m = 40, int64_t n = 96, int64_t k = 192, int64_t batch = 4) {
  MatmulProblem p = Fp8(m, batch);
  p.n = n;
  p.k = k;
  p.dtype_c = DataType::kFloat16;
  const int64_t g = MxScalePairs(k);
  p.quant.pertoken = Spec(DataType::kFloat8E8M0, {m, batch, g, 2});
  p.quant.scale = Spec(DataType::kFloat8E8M0, {batch, g, n, 2});
  p.quant.group_size_k = kMxGroupK;
  return p;
}

MatmulProblem HiFp8(int64_t m = 40, int64_t n = 96, int64_t k = 100, int64_t batch = 4) {
  MatmulProblem p = Fp8(m, batch);
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_b = DataType::kHiFloat8;
  p.quant.pertoken = {};
  p.quant.scale = Spec(DataType::kUint64, {n});
  return p;
}

TEST(TransposeParseTest, AcceptsEveryPermAndDtypeSetCannAccepts) {
  for (const std::vector<int64_t>& x1 : {std::vector<int64_t>{1, 0, 2}, {0, 1, 2}}) {
    for (const std::vector<int64_t>& x2 : {std::vector<int64_t>{0, 1, 2}, {0, 2, 1}}) {
      for (const DataType dtype : {DataType::kFloat16, DataType::kFloat32, DataType::kBFloat16}) {
        MatmulProblem p = Tbmm();
        p.transpose.perm_x1 = x1;
        p.transpose.perm_x2 = x2;
        p.dtype_a = p.dtype_b = p.dtype_c = dtype;
        EXPECT_THAT(CheckTransposeProblem(p), IsOk());
        EXPECT_THAT(ValidateProblem(p), IsOk());
      }
    }
  }
  MatmulProblem int8_y = Tbmm();
  int8_y.dtype_c = DataType::kInt8;
  int8_y.transpose.scale = Spec(DataType::kUint64, {8 * 512});
  EXPECT_THAT(CheckTransposeProblem(int8_y), IsOk());
  MatmulProblem split = Tbmm();
  split.transpose.batch_split_factor = 4;
  EXPECT_THAT(CheckTransposeProblem(split), IsOk());
  MatmulProblem nz = Tbmm();
  nz.format_b = Format::kFractalNz;
  EXPECT_THAT(CheckTransposeProblem(nz), IsOk());
  // CANN checks no lower bound of the batch.
  EXPECT_THAT(CheckTransposeProblem(Tbmm(32, 512, 128, 0)), IsOk());

  EXPECT_THAT(CheckTransposeProblem(Fp8()), IsOk());
  MatmulProblem e5m2 = Fp8();
  e5m2.dtype_b = DataType::kFloat8E5M2;
  EXPECT_THAT(CheckTransposeProblem(e5m2), IsOk());
  MatmulProblem mx = MxFp8();
  EXPECT_THAT(CheckTransposeProblem(mx), IsOk());
  mx.transpose.perm_x2 = {0, 2, 1};
  mx.quant.scale.shape = {4, 96, MxScalePairs(192), 2};
  mx.format_b = Format::kFractalNz;
  EXPECT_THAT(CheckTransposeProblem(mx), IsOk());
  MatmulProblem hif8 = HiFp8();
  EXPECT_THAT(CheckTransposeProblem(hif8), IsOk());
  hif8.dtype_c = DataType::kHiFloat8;
  hif8.transpose.perm_x2 = {0, 2, 1};
  EXPECT_THAT(CheckTransposeProblem(hif8), IsOk());
}

struct Refusal {
  const char* name;
  std::function<MatmulProblem()> problem;
  std::vector<std::string> message;  // substrings: the field, then the rule
};

class TransposeRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(TransposeRefusalTest, NamesTheFieldAndTheRule) {
  const MatmulProblem p = GetParam().problem();
  const absl::Status status = CheckTransposeProblem(p);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument));
  for (const std::string& part : GetParam().message) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(part));
  }
  EXPECT_EQ(ValidateProblem(p).code(), absl::StatusCode::kInvalidArgument);
}

template <typename F>
std::function<MatmulProblem()> With(MatmulProblem (*base)(), F edit) {
  return [base, edit] {
    MatmulProblem p = base();
    edit(p);
    return p;
  };
}
MatmulProblem TbmmBase() { return Tbmm(); }
MatmulProblem Fp8Base() { return Fp8(); }
MatmulProblem MxBase() { return MxFp8(); }
MatmulProblem HiBase() { return HiFp8(); }

const Refusal kRefusals[] = {
    // Fields neither op reads.
    {"TransA",
     With(TbmmBase, [](MatmulProblem& p) { p.trans_a = true; }),
     {"field trans_a", "transpose.perm_x1"}},
    {"TransB", With(Fp8Base, [](MatmulProblem& p) { p.trans_b = true; }), {"field trans_b"}},
    {"StorageShapeB",
     With(TbmmBase,
          [](MatmulProblem& p) {
            p.storage_shape_b = {8, 128, 512};
          }),
     {"field storage_shape_b", "origin shape only"}},
    {"Deterministic",
     With(TbmmBase, [](MatmulProblem& p) { p.deterministic_level = 1; }),
     {"field deterministic_level=1"}},
    {"SplitBeyondInt32",
     With(TbmmBase, [](MatmulProblem& p) { p.transpose.batch_split_factor = int64_t{1} << 32; }),
     {"field transpose.batch_split_factor=4294967296", "32 bits"}},
    // TransposeBatchMatMul.
    {"PermX1Size",
     With(TbmmBase,
          [](MatmulProblem& p) {
            p.transpose.perm_x1 = {1, 0};
          }),
     {"field transpose.perm_x1=[1, 0]", "3 entries"}},
    {"PermYSize",
     With(TbmmBase, [](MatmulProblem& p) { p.transpose.perm_y = {}; }),
     {"field transpose.perm_y=[]", "3 entries"}},
    {"Bias",
     With(TbmmBase, [](MatmulProblem& p) { p.has_bias = true; }),
     {"field has_bias", "no bias"}},
    {"PermX1Value",
     With(TbmmBase,
          [](MatmulProblem& p) {
            p.transpose.perm_x1 = {2, 1, 0};
          }),
     {"field transpose.perm_x1=[2, 1, 0]", "[1, 0, 2] or [0, 1, 2]"}},
    {"PermX2Value",
     With(TbmmBase,
          [](MatmulProblem& p) {
            p.transpose.perm_x2 = {1, 0, 2};
          }),
     {"field transpose.perm_x2=[1, 0, 2]", "[0, 1, 2] or [0, 2, 1]"}},
    {"PermYValue",
     With(TbmmBase,
          [](MatmulProblem& p) {
            p.transpose.perm_y = {0, 1, 2};
          }),
     {"field transpose.perm_y=[0, 1, 2]", "[1, 0, 2]"}},
    {"ScaleWithSplit",
     With(TbmmBase,
          [](MatmulProblem& p) {
            p.dtype_c = DataType::kInt8;
            p.transpose.scale = Spec(DataType::kInt64, {8 * 512});
            p.transpose.batch_split_factor = 2;
          }),
     {"field transpose.batch_split_factor=2", "must be 1 when transpose.scale"}},
    {"ScaleShape",
     With(TbmmBase,
          [](MatmulProblem& p) {
            p.dtype_c = DataType::kInt8;
            p.transpose.scale = Spec(DataType::kInt64, {512});
          }),
     {"field transpose.scale.shape=[512]", "batch * n = 4096"}},
    {"ScaleWithBf16",
     With(TbmmBase,
          [](MatmulProblem& p) {
            p.dtype_a = p.dtype_b = DataType::kBFloat16;
            p.transpose.scale = Spec(DataType::kInt64, {8 * 512});
          }),
     {"fields dtype_a/dtype_b = bfloat16/bfloat16", "float16 when transpose.scale"}},
    {"ScaleDtype",
     With(TbmmBase,
          [](MatmulProblem& p) {
            p.dtype_c = DataType::kInt8;
            p.transpose.scale = Spec(DataType::kFloat32, {8 * 512});
          }),
     {"field transpose.scale.dtype=float32", "int64 or uint64"}},
    {"ZeroM", With(TbmmBase, [](MatmulProblem& p) { p.m = 0; }), {"field m=0", "positive"}},
    {"HugeK",
     With(TbmmBase,
          [](MatmulProblem& p) { p.k = int64_t{std::numeric_limits<int32_t>::max()} + 1; }),
     {"field k=2147483648"}},
    {"NegativeBatch",
     With(TbmmBase, [](MatmulProblem& p) { p.transpose.batch = -1; }),
     {"field transpose.batch=-1"}},
    {"SplitDividesBatch",
     With(TbmmBase, [](MatmulProblem& p) { p.transpose.batch_split_factor = 3; }),
     {"field transpose.batch=8", "divisible by transpose.batch_split_factor=3"}},
    {"NzX1",
     With(TbmmBase, [](MatmulProblem& p) { p.format_a = Format::kFractalNz; }),
     {"field format_a", "ND"}},
    {"MixedDtypes",
     With(TbmmBase, [](MatmulProblem& p) { p.dtype_b = DataType::kBFloat16; }),
     {"fields dtype_a/dtype_b/dtype_c = float16/bfloat16/float16", "unsupported"}},
    {"Fp32Y",
     With(TbmmBase, [](MatmulProblem& p) { p.dtype_c = DataType::kFloat32; }),
     {"fields dtype_a/dtype_b/dtype_c = float16/float16/float32"}},
    {"TensorBytes",
     With(TbmmBase,
          [](MatmulProblem& p) {
            p.m = p.k = std::numeric_limits<int32_t>::max();
            p.transpose.batch = 1 << 20;
          }),
     {"tensor x1 of", "exceeds the limit"}},
    // TransposeQuantBatchMatMul.
    {"Hf32", With(Fp8Base, [](MatmulProblem& p) { p.hf32 = true; }), {"field hf32"}},
    {"QuantTakesNoTransposeScale",
     With(Fp8Base, [](MatmulProblem& p) { p.transpose.scale = Spec(DataType::kInt64, {512}); }),
     {"field transpose.scale", "quant.pertoken_scale (x1) and quant.scale (x2)"}},
    {"Offset",
     With(Fp8Base, [](MatmulProblem& p) { p.quant.offset = Spec(DataType::kFloat32, {128}); }),
     {"field quant.offset"}},
    {"GroupSizeRange",
     With(MxBase, [](MatmulProblem& p) { p.quant.group_size_k = 1 << 16; }),
     {"field quant.group_size_k=65536", "[0, 65535]"}},
    {"NoX2Scale",
     With(Fp8Base, [](MatmulProblem& p) { p.quant.scale = {}; }),
     {"field quant.scale (x2's scale) is required"}},
    {"QuantPermX1",
     With(Fp8Base,
          [](MatmulProblem& p) {
            p.transpose.perm_x1 = {0, 1, 2};
          }),
     {"field transpose.perm_x1=[0, 1, 2]", "must be [1, 0, 2]"}},
    {"Fp8PermX2",
     With(Fp8Base,
          [](MatmulProblem& p) {
            p.transpose.perm_x2 = {0, 2, 1};
          }),
     {"field transpose.perm_x2=[0, 2, 1]", "FP8 mode"}},
    {"NoX1Scale",
     With(Fp8Base, [](MatmulProblem& p) { p.quant.pertoken = {}; }),
     {"field quant.pertoken_scale (x1's scale) is required", "hifloat8"}},
    {"MxX1ScaleShape",
     With(MxBase,
          [](MatmulProblem& p) {
            p.quant.pertoken.shape = {40, 4, 3};
          }),
     {"field quant.pertoken_scale.shape=[40, 4, 3]", "[m, batch, ceil(ceil(k / 32) / 2), 2]"}},
    {"MxX2ScaleShape",
     With(MxBase,
          [](MatmulProblem& p) {
            p.transpose.perm_x2 = {0, 2, 1};
          }),
     {"field quant.scale.shape=[4, 3, 96, 2]", "[batch, n, g, 2] = [4, 96, 3, 2]"}},
    {"Fp8X1ScaleShape",
     With(Fp8Base, [](MatmulProblem& p) { p.quant.pertoken.shape = {1}; }),
     {"field quant.pertoken_scale.shape=[1]", "[m] = [40]"}},
    {"HiFp8X2ScaleShape",
     With(HiBase, [](MatmulProblem& p) { p.quant.scale.shape = {1}; }),
     {"field quant.scale.shape=[1]", "[n] = [96]"}},
    {"MxGroupSize",
     With(MxBase, [](MatmulProblem& p) { p.quant.group_size_k = 0; }),
     {"fields quant.group_size_m/n/k = 0/0/0", "32 in MXFP8 mode"}},
    {"NzOutsideMx",
     With(HiBase, [](MatmulProblem& p) { p.format_b = Format::kFractalNz; }),
     {"field format_b", "MXFP8 mode only"}},
    {"QuantBias",
     With(Fp8Base, [](MatmulProblem& p) { p.has_bias = true; }),
     {"field has_bias", "no bias"}},
    {"MxKAlign",
     With(MxBase,
          [](MatmulProblem& p) {
            p.k = 160;  // g = 3 as for 192
          }),
     {"field k=160", "multiple of 64 in MXFP8 mode"}},
    {"Fp8Shape",
     With(Fp8Base, [](MatmulProblem& p) { p.k = 256; }),
     {"fields k=256 and n=128", "512 and 128 in FP8 mode"}},
    {"QuantSplit",
     With(Fp8Base, [](MatmulProblem& p) { p.transpose.batch_split_factor = 2; }),
     {"field transpose.batch_split_factor=2", "must be 1 for TransposeQuantBatchMatMul"}},
    {"QuantNzY",
     With(Fp8Base, [](MatmulProblem& p) { p.format_c = Format::kFractalNz; }),
     {"field format_c", "ND"}},
    {"Fp8ScaleDtype",
     With(Fp8Base, [](MatmulProblem& p) { p.quant.scale.dtype = DataType::kBFloat16; }),
     {"fields dtype_a/dtype_b/quant.pertoken_scale.dtype/quant.scale.dtype/dtype_c",
      "float32/bfloat16/bfloat16", "unsupported"}},
    {"MxE5M2",
     With(MxBase, [](MatmulProblem& p) { p.dtype_b = DataType::kFloat8E5M2; }),
     {"float8_e4m3fn/float8_e5m2/float8_e8m0/float8_e8m0/float16"}},
    {"HiFp8Fp32Y",
     With(HiBase, [](MatmulProblem& p) { p.dtype_c = DataType::kFloat32; }),
     {"hifloat8/hifloat8/absent/uint64/float32"}},
};

INSTANTIATE_TEST_SUITE_P(Rules, TransposeRefusalTest, ::testing::ValuesIn(kRefusals),
                         [](const ::testing::TestParamInfo<Refusal>& info) {
                           return std::string(info.param.name);
                         });

// A MatMulV3 problem with perms is refused before any transposed-op rule.
TEST(TransposeParseTest, OtherOperatorsTakeNoPerms) {
  MatmulProblem p = Tbmm();
  p.op = MatmulOp::kMatMulV3;
  EXPECT_THAT(ValidateProblem(p),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("transpose")));
}

TEST(TransposeParseTest, FactsAsCannReadsThem) {
  MatmulProblem p = Tbmm();
  p.transpose.perm_x2 = {0, 2, 1};
  p.transpose.batch_split_factor = -5;  // below 1 means 1
  TransposeFacts f = TransposeFactsOf(p);
  EXPECT_EQ(f.perm_x1, 1);
  EXPECT_EQ(f.perm_x2, 1);
  EXPECT_TRUE(f.trans_b);
  EXPECT_EQ(f.batch_split_factor, 1u);
  EXPECT_FALSE(f.has_scale);
  p.transpose.batch_split_factor = 4;
  p.transpose.perm_x1 = {0, 1, 2};
  f = TransposeFactsOf(p);
  EXPECT_EQ(f.perm_x1, 0);
  EXPECT_EQ(f.batch_split_factor, 4u);
  EXPECT_EQ(TransposeFactsOf(Fp8()).mode, PrecisionMode::kFp8);
  EXPECT_EQ(TransposeFactsOf(MxFp8()).mode, PrecisionMode::kMxFp8);
  EXPECT_EQ(TransposeFactsOf(HiFp8()).mode, PrecisionMode::kHiFp8);
  EXPECT_EQ(PrecisionModeName(PrecisionMode::kMxFp8), "MXFP8");
  EXPECT_EQ(MxScalePairs(64), 1);
  EXPECT_EQ(MxScalePairs(96), 2);
  EXPECT_EQ(MxScalePairs(192), 3);
  EXPECT_TRUE(IsTransposeOp(MatmulOp::kTransposeQuantBatchMatMul));
  EXPECT_FALSE(IsTransposeOp(MatmulOp::kBatchMatMulV3));
}

TEST(TransposeParseTest, LayoutsPlaceElementsThroughThePerms) {
  MatmulProblem p = Tbmm(3, 5, 7, 4);
  TransposeLayout l = TransposeLayoutOf(p);
  EXPECT_EQ(l.X1Shape(), (std::vector<int64_t>{3, 4, 7}));  // [m, batch, k]
  EXPECT_EQ(l.X2Shape(), (std::vector<int64_t>{4, 7, 5}));  // [batch, k, n]
  EXPECT_EQ(l.YShape(), (std::vector<int64_t>{3, 4, 5}));   // [m, batch, n]
  EXPECT_EQ(l.X1Offset(2, 1, 6), (1 * 4 + 2) * 7 + 6u);
  EXPECT_EQ(l.X2Offset(2, 6, 4), (2 * 7 + 6) * 5 + 4u);
  EXPECT_EQ(l.YOffset(2, 1, 4), (1 * 4 + 2) * 5 + 4u);
  EXPECT_EQ(l.X1RowPitch(), 28u);
  EXPECT_EQ(l.YRowPitch(), 20u);

  p.transpose.perm_x1 = {0, 1, 2};
  p.transpose.perm_x2 = {0, 2, 1};
  p.transpose.batch_split_factor = 2;
  l = TransposeLayoutOf(p);
  EXPECT_EQ(l.X1Shape(), (std::vector<int64_t>{4, 3, 7}));
  EXPECT_EQ(l.X2Shape(), (std::vector<int64_t>{4, 5, 7}));
  EXPECT_EQ(l.YShape(), (std::vector<int64_t>{2, 3, 10}));  // [f, m, batch / f * n]
  EXPECT_EQ(l.X1Offset(2, 1, 6), (2 * 3 + 1) * 7 + 6u);
  EXPECT_EQ(l.X2Offset(2, 6, 4), (2 * 5 + 4) * 7 + 6u);
  // Batch 3 is the second of part 1.
  EXPECT_EQ(l.YOffset(3, 1, 4), (1 * 3 + 1) * 10 + 1 * 5 + 4u);
  EXPECT_EQ(l.X1RowPitch(), 7u);
  EXPECT_EQ(l.YRowPitch(), 10u);
}

}  // namespace
}  // namespace npu::tiling::transpose
