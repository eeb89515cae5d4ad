#include "server/tiling/validate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/tiling/chip_fields.h"
#include "server/tiling/registry.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
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

MatmulProblem OfOp(MatmulOp op, FusedOp fused_op = FusedOp::kNone) {
  MatmulProblem p = Problem(128, 256, 512);
  p.op = op;
  p.fused.op = fused_op;
  return p;
}

// One refused input of BatchMatMulV3 or FusedMatMul: the problem, and a word
// the message must contain (the field that broke the rule).
struct BadNewOpInput {
  std::string name;
  std::function<MatmulProblem()> make;
  std::string field;
};

class ValidateNewOpBadInputTest : public ::testing::TestWithParam<BadNewOpInput> {};

TEST_P(ValidateNewOpBadInputTest, RejectedNamingTheField) {
  EXPECT_THAT(ValidateProblem(GetParam().make()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().field)));
}

constexpr MatmulOp kBmm = MatmulOp::kBatchMatMulV3;
constexpr MatmulOp kFused = MatmulOp::kFusedMatMul;

template <typename Mutate>
std::function<MatmulProblem()> Make(MatmulOp op, FusedOp fused_op, Mutate mutate) {
  return [=]() {
    MatmulProblem p = OfOp(op, fused_op);
    mutate(p);
    return p;
  };
}

INSTANTIATE_TEST_SUITE_P(
    Table, ValidateNewOpBadInputTest,
    ::testing::Values(
        // Fields of one operator refused on the others.
        BadNewOpInput{
            "MatMulV3BatchA",
            Make(MatmulOp::kMatMulV3, FusedOp::kNone, [](MatmulProblem& p) { p.batch.a = {2}; }),
            "batch_a"},
        BadNewOpInput{
            "MatMulV3BatchC",
            Make(MatmulOp::kMatMulV3, FusedOp::kNone, [](MatmulProblem& p) { p.batch.c = {2}; }),
            "batch_c"},
        BadNewOpInput{
            "MatMulV3BatchBias",
            Make(MatmulOp::kMatMulV3, FusedOp::kNone, [](MatmulProblem& p) { p.batch.bias = {2}; }),
            "batch_bias"},
        BadNewOpInput{"MatMulV3FusedOp", Make(MatmulOp::kMatMulV3, FusedOp::kRelu, [](auto&) {}),
                      "fused_op"},
        BadNewOpInput{"MatMulV3X3",
                      Make(MatmulOp::kMatMulV3, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.fused.x3_shape = {128, 256};
                           }),
                      "x3_shape"},
        BadNewOpInput{"MatMulV3InnerPrecise",
                      Make(MatmulOp::kMatMulV3, FusedOp::kNone,
                           [](MatmulProblem& p) { p.fused.inner_precise = 1; }),
                      "inner_precise"},
        BadNewOpInput{"MatMulV3InterleavedA",
                      Make(MatmulOp::kMatMulV3, FusedOp::kNone,
                           [](MatmulProblem& p) { p.batch.a_interleaved = true; }),
                      "a_batch_interleaved"},
        BadNewOpInput{"MatMulV3InterleavedB",
                      Make(MatmulOp::kMatMulV3, FusedOp::kNone,
                           [](MatmulProblem& p) { p.batch.b_interleaved = true; }),
                      "b_batch_interleaved"},
        BadNewOpInput{"BmmSlice",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.a_slice.enabled = true;
                             p.a_slice.row_stride = 512;
                           }),
                      "a_slice"},
        BadNewOpInput{
            "FusedForceFp32",
            Make(kFused, FusedOp::kNone, [](MatmulProblem& p) { p.force_grp_acc_fp32 = true; }),
            "force_grp_acc_fp32"},
        BadNewOpInput{
            "FusedAvoidTensorApi",
            Make(kFused, FusedOp::kNone, [](MatmulProblem& p) { p.avoid_tensor_api = true; }),
            "avoid_tensor_api"},
        BadNewOpInput{"BmmFusedOp", Make(kBmm, FusedOp::kAdd, [](auto&) {}), "fused_op"},
        BadNewOpInput{"BmmX3",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.fused.x3_shape = {128, 256};
                           }),
                      "x3_shape"},
        BadNewOpInput{
            "BmmInnerPrecise",
            Make(kBmm, FusedOp::kNone, [](MatmulProblem& p) { p.fused.inner_precise = 1; }),
            "inner_precise"},
        BadNewOpInput{"FusedBatchBias",
                      Make(kFused, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.has_bias = true;
                             p.batch.a = p.batch.b = p.batch.bias = {2};
                           }),
                      "batch_bias"},
        // Batch dims (BatchMatMulV3's rules, inherited by FusedMatMul).
        BadNewOpInput{"RankAboveSix",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.batch.a = {1, 2, 3, 4, 5};
                           }),
                      "batch_a"},
        BadNewOpInput{"BatchDimZero",
                      Make(kBmm, FusedOp::kNone, [](MatmulProblem& p) { p.batch.b = {0}; }),
                      "batch_b"},
        BadNewOpInput{"BatchProductPastInt32",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.batch.a = {65536, 65536, 65536};
                             p.batch.b = {65536, 65536, 65536};
                           }),
                      "product of the batch dims"},
        BadNewOpInput{"BroadcastRule",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.batch.a = {3, 4};
                             p.batch.b = {2, 4};
                           }),
                      "broadcast rule"},
        BadNewOpInput{"MergedMPastInt32",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.m = 1 << 20;
                             p.batch.a = {4096};
                           }),
                      "batch_a"},
        BadNewOpInput{"BatchCNotBroadcast",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.batch.a = {3, 1};
                             p.batch.b = {1, 4};
                             p.batch.c = {3, 1};
                           }),
                      "batch_c"},
        BadNewOpInput{"InterleavedNeeds3D",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.batch.b = {2, 3};
                             p.batch.a = {2, 3};
                             p.batch.b_interleaved = true;
                           }),
                      "b_batch_interleaved"},
        BadNewOpInput{"BatchBiasWithoutBias",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) { p.batch.a = p.batch.b = p.batch.bias = {2}; }),
                      "batch_bias"},
        BadNewOpInput{"BatchBiasNeedsEqualBatches",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.has_bias = true;
                             p.batch.a = {2, 3};
                             p.batch.b = {1, 3};
                             p.batch.bias = {2, 3};
                           }),
                      "batch_bias"},
        BadNewOpInput{"BatchBiasNotOutputBatch",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             p.has_bias = true;
                             p.batch.a = p.batch.b = {2, 3};
                             p.batch.bias = {3};
                           }),
                      "batch_bias"},
        BadNewOpInput{"BatchBiasOfMergedOutput",
                      Make(kBmm, FusedOp::kNone,
                           [](MatmulProblem& p) {
                             // B unbatched: A's batch moves into M and C has none.
                             p.has_bias = true;
                             p.batch.a = {2};
                             p.batch.bias = {2};
                           }),
                      "batch_bias"},
        BadNewOpInput{
            "BmmDtypes",
            Make(kBmm, FusedOp::kNone, [](MatmulProblem& p) { p.dtype_b = DataType::kBFloat16; }),
            "dtype_a/dtype_b/dtype_c"},
        // FusedMatMul's own rules.
        BadNewOpInput{
            "InnerPreciseTwo",
            Make(kFused, FusedOp::kNone, [](MatmulProblem& p) { p.fused.inner_precise = 2; }),
            "inner_precise=2"},
        BadNewOpInput{
            "GeluBatched",
            Make(kFused, FusedOp::kGeluErf, [](MatmulProblem& p) { p.batch.a = p.batch.b = {2}; }),
            "batch_a/batch_b/batch_c"},
        BadNewOpInput{"GeluBias",
                      Make(kFused, FusedOp::kGeluTanh, [](MatmulProblem& p) { p.has_bias = true; }),
                      "has_bias"},
        BadNewOpInput{
            "GeluFloat32",
            Make(kFused, FusedOp::kGeluErf,
                 [](MatmulProblem& p) { p.dtype_a = p.dtype_b = p.dtype_c = DataType::kFloat32; }),
            "dtype_a/dtype_b/dtype_c"},
        BadNewOpInput{
            "ReluFloat32Output",
            Make(kFused, FusedOp::kRelu, [](MatmulProblem& p) { p.dtype_c = DataType::kFloat32; }),
            "dtype_a/dtype_b/dtype_c"},
        BadNewOpInput{"Cast16To32Float16Output", Make(kFused, FusedOp::kCast16To32, [](auto&) {}),
                      "dtype_a/dtype_b/dtype_c"},
        BadNewOpInput{
            "Cast16To32Float32Input",
            Make(kFused, FusedOp::kCast16To32,
                 [](MatmulProblem& p) { p.dtype_a = p.dtype_b = p.dtype_c = DataType::kFloat32; }),
            "dtype_a/dtype_b/dtype_c"},
        BadNewOpInput{"Float32WithBFloat16Bias",
                      Make(kFused, FusedOp::kMul,
                           [](MatmulProblem& p) {
                             p.dtype_a = p.dtype_b = p.dtype_c = DataType::kFloat32;
                             p.has_bias = true;
                             p.dtype_bias = DataType::kBFloat16;
                           }),
                      "dtype_bias"},
        BadNewOpInput{
            "AddNzB",
            Make(kFused, FusedOp::kAdd, [](MatmulProblem& p) { p.format_b = Format::kFractalNz; }),
            "format_b"},
        BadNewOpInput{"X3Rank4",
                      Make(kFused, FusedOp::kAdd,
                           [](MatmulProblem& p) {
                             p.fused.x3_shape = {1, 1, 128, 256};
                           }),
                      "x3_shape"},
        BadNewOpInput{"X3WrongN",
                      Make(kFused, FusedOp::kMul,
                           [](MatmulProblem& p) {
                             p.fused.x3_shape = {128, 255};
                           }),
                      "x3_shape"},
        BadNewOpInput{"X3BatchNotOutput",
                      Make(kFused, FusedOp::kMul,
                           [](MatmulProblem& p) {
                             p.batch.a = p.batch.b = {4};
                             p.fused.x3_shape = {2, 128, 256};
                           }),
                      "x3_shape"},
        BadNewOpInput{"X3WithoutAddOrMul",
                      Make(kFused, FusedOp::kRelu,
                           [](MatmulProblem& p) {
                             p.fused.x3_shape = {128, 256};
                           }),
                      "x3_shape"},
        BadNewOpInput{"FusedBatchBroadcast",
                      Make(kFused, FusedOp::kMul,
                           [](MatmulProblem& p) {
                             // golden FusedMatMul_950_bmm_mul_x1_x2_batch_broadcast_failed
                             p.batch.a = {1};
                             p.batch.b = {230};
                           }),
                      "no batch broadcast"},
        BadNewOpInput{"FusedRankDiffers",
                      Make(kFused, FusedOp::kNone, [](MatmulProblem& p) { p.batch.a = {3}; }),
                      "no batch broadcast"}),
    [](const ::testing::TestParamInfo<BadNewOpInput>& info) { return info.param.name; });

TEST(ValidateTest, AcceptsNewOpProblems) {
  MatmulProblem bmm = OfOp(kBmm);
  bmm.batch.a = {3, 1};
  bmm.batch.b = {1, 4};
  bmm.batch.c = {3, 4};
  EXPECT_THAT(ValidateProblem(bmm), IsOk());
  bmm.batch.a = bmm.batch.b = bmm.batch.bias = {2, 5};
  bmm.batch.c.clear();
  bmm.has_bias = true;
  EXPECT_THAT(ValidateProblem(bmm), IsOk());
  bmm = OfOp(kBmm);
  bmm.batch.b = {7};
  bmm.batch.b_interleaved = true;
  bmm.avoid_tensor_api = true;
  EXPECT_THAT(ValidateProblem(bmm), IsOk());

  MatmulProblem add = OfOp(kFused, FusedOp::kAdd);
  add.batch.a = add.batch.b = {4};
  add.fused.x3_shape = {4, 128, 256};
  add.fused.inner_precise = 1;
  EXPECT_THAT(ValidateProblem(add), IsOk());
  add.fused.x3_shape = {1, 128, 256};
  EXPECT_THAT(ValidateProblem(add), IsOk());
  MatmulProblem cast = OfOp(kFused, FusedOp::kCast16To32);
  cast.dtype_a = cast.dtype_b = DataType::kBFloat16;
  cast.dtype_c = DataType::kFloat32;
  cast.has_bias = true;
  cast.dtype_bias = DataType::kBFloat16;
  EXPECT_THAT(ValidateProblem(cast), IsOk());
  MatmulProblem gelu = OfOp(kFused, FusedOp::kGeluTanh);
  gelu.dtype_a = gelu.dtype_b = gelu.dtype_c = DataType::kBFloat16;
  EXPECT_THAT(ValidateProblem(gelu), IsOk());
}

TEST(ValidateTest, AddAndMulNeedTwoAivPerAic) {
  const MatmulProblem mul = OfOp(kFused, FusedOp::kMul);
  EXPECT_THAT(ValidateProblemForChip(mul, Chip950(32, 64)), IsOk());
  EXPECT_THAT(ValidateProblemForChip(mul, Chip950(28, 50)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("aiv_num")));
  EXPECT_THAT(ValidateProblemForChip(OfOp(kFused, FusedOp::kRelu), Chip950(28, 50)), IsOk());
  // The registry applies the rule whatever the caller checked before.
  CheckedInputs checked;
  ASSERT_THAT(checked.CheckProblem(mul), IsOk());
  ASSERT_THAT(checked.CheckChip(Chip950(28, 50)), IsOk());
  EXPECT_THAT(MakeBuiltinRegistry().Decide(checked),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fused_op mul")));
}

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

// CheckedInputs keeps a problem or a chip only once its check passed, and
// Decide() refuses inputs that are not both checked.
TEST(CheckedInputsTest, KeepsOnlyWhatPassedItsCheck) {
  CheckedInputs inputs;
  EXPECT_FALSE(inputs.complete());
  EXPECT_THAT(MakeBuiltinRegistry().Decide(inputs),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("checked first")));
  MatmulProblem bad = Problem(64, 64, 64);
  bad.m = -1;
  EXPECT_THAT(inputs.CheckProblem(bad), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_THAT(inputs.CheckChip(Chip950()), IsOk());
  EXPECT_FALSE(inputs.complete());
  ASSERT_THAT(inputs.CheckProblem(Problem(64, 64, 64)), IsOk());
  EXPECT_TRUE(inputs.complete());
  EXPECT_THAT(MakeBuiltinRegistry().Decide(inputs), IsOk());
  ChipSpec no_cores = Chip950();
  no_cores.aic_num = 0;
  EXPECT_THAT(inputs.CheckChip(no_cores), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(inputs.complete());
  ASSERT_THAT(inputs.CheckChip(Chip950()), IsOk());
  EXPECT_EQ(inputs.TakeProblem().m, 64);
  EXPECT_FALSE(inputs.complete());
}

// CheckPlatform() keeps a built-in profile without checking it: each one
// must pass the checks, and be kept field for field.
TEST(CheckedInputsTest, KeepsEveryBuiltinProfileAsShipped) {
  for (const ChipSpec& builtin : BuiltinPlatforms()) {
    SCOPED_TRACE(builtin.name);
    EXPECT_THAT(ValidateChip(builtin), IsOk());
    CheckedInputs inputs;
    ASSERT_THAT(inputs.CheckProblem(Problem(64, 64, 64)), IsOk());
    ASSERT_THAT(inputs.CheckPlatform(builtin.name), IsOk());
    EXPECT_TRUE(inputs.complete());
    EXPECT_EQ(inputs.chip().name, builtin.name);
    for (const ChipField& field : kChipFields) {
      EXPECT_EQ(field.Get(inputs.chip()), field.Get(builtin)) << field.name;
    }
    EXPECT_EQ(inputs.chip().npu_arch, builtin.npu_arch);
  }
  CheckedInputs inputs;
  ASSERT_THAT(inputs.CheckPlatform(kDefaultPlatform), IsOk());
  EXPECT_THAT(inputs.CheckPlatform("Ascend9000"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("unknown platform \"Ascend9000\"")));
  ASSERT_THAT(inputs.CheckProblem(Problem(64, 64, 64)), IsOk());
  EXPECT_FALSE(inputs.complete());
}

}  // namespace
}  // namespace npu::tiling
