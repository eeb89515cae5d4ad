#include "server/tiling/validate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

struct BadInput {
  std::string name;
  std::function<void(MatmulProblem&)> mutate;
  std::string field;  // expected in the message
};

class ValidateBadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(ValidateBadInputTest, RejectedNamingTheField) {
  MatmulProblem p = Problem(128, 256, 512);
  GetParam().mutate(p);
  EXPECT_THAT(ValidateProblem(p),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().field)));
}

INSTANTIATE_TEST_SUITE_P(
    Table, ValidateBadInputTest,
    ::testing::Values(
        BadInput{"MZero", [](MatmulProblem& p) { p.m = 0; }, "m=0"},
        BadInput{"NNegative", [](MatmulProblem& p) { p.n = -5; }, "n=-5"},
        BadInput{"KNegative", [](MatmulProblem& p) { p.k = -1; }, "k=-1"},
        BadInput{"MPastInt32", [](MatmulProblem& p) { p.m = 2147483648; }, "m=2147483648"},
        BadInput{"KZeroWithBias",
                 [](MatmulProblem& p) {
                   p.k = 0;
                   p.has_bias = true;
                 },
                 "k=0"},
        BadInput{"MixedInputs", [](MatmulProblem& p) { p.dtype_b = DataType::kBFloat16; },
                 "dtype_a/dtype_b/dtype_c"},
        BadInput{"Fp32ToFp16",
                 [](MatmulProblem& p) {
                   p.dtype_a = p.dtype_b = DataType::kFloat32;
                   p.dtype_c = DataType::kFloat16;
                 },
                 "dtype_a/dtype_b/dtype_c"},
        BadInput{"Fp32WithFp16Bias",
                 [](MatmulProblem& p) {
                   p.dtype_a = p.dtype_b = p.dtype_c = DataType::kFloat32;
                   p.has_bias = true;
                   p.dtype_bias = DataType::kFloat16;
                 },
                 "dtype_bias"},
        BadInput{"NzA", [](MatmulProblem& p) { p.format_a = Format::kFractalNz; }, "format_a"},
        BadInput{"NzC", [](MatmulProblem& p) { p.format_c = Format::kFractalNz; }, "format_c"},
        BadInput{"NzStorageTooFewDims",
                 [](MatmulProblem& p) {
                   p.format_b = Format::kFractalNz;
                   p.storage_shape_b = {16, 32, 16};
                 },
                 "storage_shape_b"},
        BadInput{"NzStorageWrongRows",
                 [](MatmulProblem& p) {
                   // B is [512, 256] fp16: needs d1*d2 = 512 and d0*d3 = 256.
                   p.format_b = Format::kFractalNz;
                   p.storage_shape_b = {16, 16, 16, 16};
                 },
                 "storage_shape_b"},
        BadInput{"StorageWithoutNz",
                 [](MatmulProblem& p) {
                   p.storage_shape_b = {1, 2, 3, 4};
                 },
                 "storage_shape_b"},
        BadInput{"DeterministicLevel", [](MatmulProblem& p) { p.deterministic_level = 4; },
                 "deterministic_level=4"},
        BadInput{"Hf32AndForceFp32",
                 [](MatmulProblem& p) {
                   p.hf32 = true;
                   p.force_grp_acc_fp32 = true;
                 },
                 "hf32"},
        BadInput{"SliceTransposed",
                 [](MatmulProblem& p) {
                   p.a_slice.enabled = true;
                   p.a_slice.row_stride = 512;
                   p.trans_a = true;
                 },
                 "a_slice"},
        BadInput{"SliceRowStrideShort",
                 [](MatmulProblem& p) {
                   p.a_slice.enabled = true;
                   p.a_slice.rank = 2;
                   p.a_slice.row_stride = 100;
                 },
                 "a_slice.row_stride=100"},
        BadInput{"SliceBatchNotDividing",
                 [](MatmulProblem& p) {
                   p.a_slice.enabled = true;
                   p.a_slice.batch = 3;
                   p.a_slice.row_stride = 512;
                   p.a_slice.batch_stride = 1 << 20;
                 },
                 "a_slice.batch=3"},
        BadInput{"SliceBatchesOverlap",
                 [](MatmulProblem& p) {
                   p.a_slice.enabled = true;
                   p.a_slice.batch = 2;
                   p.a_slice.row_stride = 512;
                   p.a_slice.batch_stride = 1000;
                 },
                 "a_slice.batch_stride=1000"},
        BadInput{"TensorTooLarge",
                 [](MatmulProblem& p) {
                   p.m = 2147483647;
                   p.k = 2147483647;
                 },
                 "tensor A"}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

TEST(ValidateTest, AcceptsCannDtypeTable) {
  const DataType f16 = DataType::kFloat16, bf16 = DataType::kBFloat16, f32 = DataType::kFloat32;
  struct Row {
    DataType a, c, bias;
  };
  for (Row row : {Row{f16, f16, f16}, Row{f16, f16, f32}, Row{f16, f32, f16}, Row{f16, f32, f32},
                  Row{f32, f32, f32}, Row{bf16, bf16, f32}, Row{bf16, bf16, bf16},
                  Row{bf16, f32, bf16}, Row{bf16, f32, f32}}) {
    MatmulProblem p = Problem(64, 64, 64, row.a);
    p.dtype_c = row.c;
    p.has_bias = true;
    p.dtype_bias = row.bias;
    EXPECT_THAT(ValidateProblem(p), IsOk())
        << DataTypeName(row.a) << " " << DataTypeName(row.c) << " " << DataTypeName(row.bias);
  }
}

TEST(ValidateTest, AcceptsKZeroWithoutBiasAndCanonicalNz) {
  EXPECT_THAT(ValidateProblem(Problem(16, 16, 0)), IsOk());
  MatmulProblem p = Problem(4096, 1280, 8192);
  p.trans_b = true;
  p.format_b = Format::kFractalNz;
  // B stored [1280, 8192] fp16: d0*d3 = 8192 (cols, 16-aligned), d1*d2 = 1280.
  p.storage_shape_b = {512, 80, 16, 16};
  EXPECT_THAT(ValidateProblem(p), IsOk());
}

TEST(ValidateTilingArchTest, OnlyDav3510) {
  for (const ChipSpec& chip : BuiltinPlatforms()) {
    SCOPED_TRACE(chip.name);
    if (chip.npu_arch == NpuArch::kDav3510) {
      EXPECT_THAT(ValidateTilingArch(chip), IsOk());
    } else {
      EXPECT_THAT(ValidateTilingArch(chip),
                  StatusIs(absl::StatusCode::kFailedPrecondition,
                           HasSubstr(absl::StrCat("platform \"", chip.name, "\" is ",
                                                  std::string(NpuArchName(chip.npu_arch))))));
    }
  }
  EXPECT_THAT(ValidateTilingArch(*FindPlatform("ascend910b1")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("CANN's arch35 mat_mul_v3 tiling applies to DAV_3510 only")));
}

}  // namespace
}  // namespace npu::tiling
