// Tests of client/tilingctl/execute.h: .npy <-> wire tensors (the inline
// inputs of an Execute request, QuantBatchMatmulV3's included, and the sizes
// read from the operands), tiling files and the execute report.
#include "client/tilingctl/execute.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include "client/tilingctl/format.h"
#include "client/tilingctl/requests.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;
using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

NpyArray Array(NpyDtype dtype, std::vector<int64_t> shape) {
  NpyArray array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.data.assign(array.elements() * NpyItemBytes(dtype), '\x11');
  return array;
}

TEST(TensorFromNpyTest, MatchesEachDtype) {
  absl::StatusOr<pb::Tensor> tensor =
      TensorFromNpy(Array(NpyDtype::kFloat16, {3, 4}), pb::DATA_TYPE_FLOAT16, 2, "--a A.npy");
  ASSERT_THAT(tensor, IsOk());
  EXPECT_EQ(tensor->dtype(), pb::DATA_TYPE_FLOAT16);
  EXPECT_THAT(tensor->shape(), ::testing::ElementsAre(3, 4));
  EXPECT_EQ(tensor->data().size(), 24u);
  EXPECT_THAT(TensorFromNpy(Array(NpyDtype::kUint16, {4}), pb::DATA_TYPE_BFLOAT16, 1, "--bias"),
              IsOk());
  EXPECT_THAT(TensorFromNpy(Array(NpyDtype::kFloat32, {2, 2}), pb::DATA_TYPE_FLOAT32, 2, "--b"),
              IsOk());
}

TEST(TensorFromNpyTest, MismatchesSayWhatToChange) {
  EXPECT_THAT(TensorFromNpy(Array(NpyDtype::kFloat32, {3, 4}), pb::DATA_TYPE_FLOAT16, 2, "--a A"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--a A: the file holds float32 ('<f4'), but the operand is "
                                 "float16, which needs float16 ('<f2'); pass --dtype")));
  // bfloat16 travels as uint16 bits; a float16 file is not that.
  EXPECT_THAT(TensorFromNpy(Array(NpyDtype::kFloat16, {3, 4}), pb::DATA_TYPE_BFLOAT16, 2, "--b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("needs uint16 ('<u2') holding the bfloat16 bits")));
  EXPECT_THAT(TensorFromNpy(Array(NpyDtype::kFloat16, {3, 4, 5}), pb::DATA_TYPE_FLOAT16, 2, "--a"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--a: shape (3, 4, 5) has 3 dimensions, expected 2")));
}

TEST(NpyFromTensorTest, RoundTripsC) {
  pb::Tensor c;
  c.set_dtype(pb::DATA_TYPE_BFLOAT16);
  c.add_shape(2);
  c.add_shape(3);
  c.set_data(std::string(12, '\x7f'));
  absl::StatusOr<NpyArray> array = NpyFromTensor(c);
  ASSERT_THAT(array, IsOk());
  EXPECT_EQ(array->dtype, NpyDtype::kUint16);
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 3}));
  absl::StatusOr<pb::Tensor> back = TensorFromNpy(*array, pb::DATA_TYPE_BFLOAT16, 2, "C");
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->SerializeAsString(), c.SerializeAsString());
  c.mutable_data()->pop_back();
  EXPECT_THAT(NpyFromTensor(c), StatusIs(absl::StatusCode::kInvalidArgument));
}

// An array of `values` as they lie in memory (the tests run little-endian,
// as .npy data is).
template <typename T>
NpyArray Values(NpyDtype dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  NpyArray array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.data.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

// Writes `array` with SerializeNpy() to a file in the test's temp dir and
// reads it back as `execute` does: the operand of `flag` ("--a A.npy"). The
// file name carries the process id, since ctest runs the cases as parallel
// processes that share the temp dir.
NpyOperand WrittenAndRead(const std::string& flag, const std::string& name, const NpyArray& array) {
  const std::string path = ::testing::TempDir() + "/execute_test_" + std::to_string(getpid()) +
                           "_" + name + ".npy";
  absl::StatusOr<std::string> bytes = SerializeNpy(array);
  EXPECT_THAT(bytes, IsOk());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.value_or("");
  absl::StatusOr<NpyArray> read = ReadNpyFile(path);
  EXPECT_THAT(read, IsOk());
  return NpyOperand{flag + " " + path, read.value_or(NpyArray{})};
}

// QuantBatchMatmulV3 with m = 2, k = 4, n = 3: x1 int8 [2, 4], x2
// float4_e2m1 transposed [3, 4], an int32 bias [3], a uint64 scale [3] and
// a float32 pertoken scale [2], bfloat16 out.
pb::MatmulProblem QuantProblem() {
  pb::MatmulProblem p;
  p.set_op(pb::OPERATOR_QUANT_BATCH_MATMUL_V3);
  p.set_m(2);
  p.set_n(3);
  p.set_k(4);
  p.set_trans_b(true);
  p.set_dtype_a(pb::DATA_TYPE_INT8);
  p.set_dtype_b(pb::DATA_TYPE_FLOAT4_E2M1);
  p.set_dtype_c(pb::DATA_TYPE_BFLOAT16);
  p.set_has_bias(true);
  p.set_dtype_bias(pb::DATA_TYPE_INT32);
  pb::QuantInputs* q = p.mutable_quant();
  q->mutable_scale()->set_dtype(pb::DATA_TYPE_UINT64);
  q->mutable_scale()->add_shape(3);
  q->mutable_pertoken_scale()->set_dtype(pb::DATA_TYPE_FLOAT32);
  q->mutable_pertoken_scale()->add_shape(2);
  return p;
}

const std::vector<int8_t> kX1 = {1, -2, 3, -4, 5, -6, 7, -128};
// x2's float4_e2m1 codes, row by row, and the same packed two per byte with
// element 2i in the low nibble.
const std::vector<uint8_t> kX2Codes = {0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xA, 0xB, 0xF};
const std::string kX2Packed("\x21\x43\x65\x87\xA9\xFB", 6);
const std::vector<uint64_t> kScale = {1, 0x0123456789ABCDEF, std::numeric_limits<uint64_t>::max()};
const std::vector<float> kPertoken = {0.5f, -2.0f};
const std::vector<int32_t> kBias = {1, -1, 100000};

// The files of QuantProblem(), x2 unpacked.
NpyOperands QuantFiles() {
  NpyOperands files;
  files.a = WrittenAndRead("--a", "x1", Values(NpyDtype::kInt8, {2, 4}, kX1));
  files.b = WrittenAndRead("--b", "x2", Values(NpyDtype::kUint8, {3, 4}, kX2Codes));
  files.bias = WrittenAndRead("--bias", "bias", Values(NpyDtype::kInt32, {3}, kBias));
  files.scale = WrittenAndRead("--scale_npy", "scale", Values(NpyDtype::kUint64, {3}, kScale));
  files.pertoken_scale =
      WrittenAndRead("--pertoken_npy", "pertoken", Values(NpyDtype::kFloat32, {2}, kPertoken));
  return files;
}

TEST(InputsFromNpyTest, QuantFilesBecomeTheWireTensors) {
  absl::StatusOr<pb::ExecuteInputs> inputs = InputsFromNpy(QuantProblem(), QuantFiles());
  ASSERT_THAT(inputs, IsOk());
  EXPECT_EQ(inputs->a().dtype(), pb::DATA_TYPE_INT8);
  EXPECT_THAT(inputs->a().shape(), ::testing::ElementsAre(2, 4));
  EXPECT_EQ(inputs->a().data(), std::string("\x01\xFE\x03\xFC\x05\xFA\x07\x80", 8));
  // The unpacked codes go out packed, in the logical shape.
  EXPECT_EQ(inputs->b().dtype(), pb::DATA_TYPE_FLOAT4_E2M1);
  EXPECT_THAT(inputs->b().shape(), ::testing::ElementsAre(3, 4));
  EXPECT_EQ(inputs->b().data(), kX2Packed);
  EXPECT_EQ(inputs->bias().dtype(), pb::DATA_TYPE_INT32);
  EXPECT_THAT(inputs->bias().shape(), ::testing::ElementsAre(3));
  EXPECT_EQ(inputs->bias().data(),
            std::string("\x01\0\0\0\xFF\xFF\xFF\xFF\xA0\x86\x01\0", 12));  // 1, -1, 100000
  EXPECT_EQ(inputs->scale().dtype(), pb::DATA_TYPE_UINT64);
  EXPECT_THAT(inputs->scale().shape(), ::testing::ElementsAre(3));
  EXPECT_EQ(inputs->scale().data(), std::string("\x01\0\0\0\0\0\0\0"
                                                "\xEF\xCD\xAB\x89\x67\x45\x23\x01"
                                                "\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF",
                                                24));
  EXPECT_EQ(inputs->pertoken_scale().dtype(), pb::DATA_TYPE_FLOAT32);
  EXPECT_THAT(inputs->pertoken_scale().shape(), ::testing::ElementsAre(2));
  EXPECT_EQ(inputs->pertoken_scale().data(), std::string("\0\0\0\x3F\0\0\0\xC0", 8));
  EXPECT_FALSE(inputs->has_offset());
  EXPECT_FALSE(inputs->has_x3());
}

TEST(InputsFromNpyTest, PackedAndUnpackedFloat4GiveTheSameTensor) {
  const absl::StatusOr<pb::ExecuteInputs> unpacked = InputsFromNpy(QuantProblem(), QuantFiles());
  NpyOperands files = QuantFiles();
  files.b = WrittenAndRead(
      "--b", "x2_packed",
      Values(NpyDtype::kUint8, {3, 2}, std::vector<char>(kX2Packed.begin(), kX2Packed.end())));
  const absl::StatusOr<pb::ExecuteInputs> packed = InputsFromNpy(QuantProblem(), files);
  ASSERT_THAT(unpacked, IsOk());
  ASSERT_THAT(packed, IsOk());
  EXPECT_EQ(packed->b().SerializeAsString(), unpacked->b().SerializeAsString());
}

TEST(InputsFromNpyTest, QuantBiasTakesTheBiasShape) {
  pb::MatmulProblem p = QuantProblem();
  for (int64_t dim : {2, 1, 3}) p.mutable_quant()->add_bias_shape(dim);
  NpyOperands files = QuantFiles();
  EXPECT_THAT(InputsFromNpy(p, files),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("int32 ('<i4') array [3], the problem's bias is int32 [2, 1, 3] "
                                 "(--bias-dtype (default: C's), --bias-shape ([n] by default)); "
                                 "expected an int32 ('<i4') array [2, 1, 3]")));
  files.bias = WrittenAndRead("--bias", "bias3",
                              Values(NpyDtype::kInt32, {2, 1, 3}, std::vector<int32_t>(6, 7)));
  absl::StatusOr<pb::ExecuteInputs> inputs = InputsFromNpy(p, files);
  ASSERT_THAT(inputs, IsOk());
  EXPECT_THAT(inputs->bias().shape(), ::testing::ElementsAre(2, 1, 3));
}

TEST(InputsFromNpyTest, WrongDtypeOrShapeNamesTheFlag) {
  NpyOperands files = QuantFiles();
  files.scale = WrittenAndRead("--scale_npy", "scale_i8",
                               Values(NpyDtype::kInt64, {3}, std::vector<int64_t>{1, 2, 3}));
  EXPECT_THAT(
      InputsFromNpy(QuantProblem(), files),
      StatusIs(absl::StatusCode::kInvalidArgument,
               ::testing::AllOf(
                   ::testing::StartsWith("--scale_npy "),
                   HasSubstr("scale_i8.npy: int64 ('<i8') array [3], the problem's scale is uint64 "
                             "[3] (--scale-dtype, --scale-shape); expected a uint64 ('<u8') "
                             "array [3]"))));

  files = QuantFiles();
  files.pertoken_scale =
      WrittenAndRead("--pertoken_npy", "pertoken3", Values(NpyDtype::kFloat32, {3}, kBias));
  EXPECT_THAT(InputsFromNpy(QuantProblem(), files),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pertoken3.npy: float32 ('<f4') array [3], the problem's pertoken "
                                 "scale is float32 [2] (--pertoken-dtype, --pertoken-shape)")));

  files = QuantFiles();
  files.a = WrittenAndRead("--a", "x1_f2",
                           Values(NpyDtype::kFloat16, {2, 4}, std::vector<uint16_t>(8, 0x3C00)));
  EXPECT_THAT(InputsFromNpy(QuantProblem(), files),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(::testing::StartsWith("--a "),
                                        HasSubstr("float16 ('<f2') array [2, 4], the problem's x1 "
                                                  "is int8 [2, 4] (--dtype-a; --m, --k, "
                                                  "--trans-a, --batch-a); expected an int8 "
                                                  "('|i1') array [2, 4]"))));

  files = QuantFiles();
  files.bias = WrittenAndRead("--bias", "bias_f4", Values(NpyDtype::kFloat32, {3}, kBias));
  EXPECT_THAT(
      InputsFromNpy(QuantProblem(), files),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the problem's bias is int32 [3]")));

  // x2 untransposed: neither the packed nor the unpacked shape.
  files = QuantFiles();
  files.b = WrittenAndRead("--b", "x2_t", Values(NpyDtype::kUint8, {4, 3}, kX2Codes));
  EXPECT_THAT(InputsFromNpy(QuantProblem(), files),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("uint8 ('|u1') array [4, 3], the problem's x2 is float4_e2m1 "
                                 "[3, 4] (--dtype-b; --k, --n, --trans-b, --batch-b); expected a "
                                 "uint8 ('|u1') array [3, 2] of packed bytes (two codes per byte, "
                                 "element 2i in the low nibble) or a uint8 ('|u1') array [3, 4] "
                                 "of codes 0..15")));
}

TEST(InputsFromNpyTest, EachQuantInputNeedsItsFileAndNoOther) {
  NpyOperands files = QuantFiles();
  files.scale.reset();
  EXPECT_THAT(InputsFromNpy(QuantProblem(), files),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--scale_npy: required with --a and --b: the problem has a "
                                 "scale, uint64 [3]")));
  files = QuantFiles();
  files.offset = WrittenAndRead("--offset_npy", "offset", Values(NpyDtype::kFloat32, {3}, kBias));
  EXPECT_THAT(InputsFromNpy(QuantProblem(), files),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("offset.npy: the problem has no offset (--offset-dtype, "
                                 "--offset-shape)")));
  pb::MatmulProblem with_offset = QuantProblem();
  with_offset.mutable_quant()->mutable_offset()->set_dtype(pb::DATA_TYPE_FLOAT32);
  with_offset.mutable_quant()->mutable_offset()->add_shape(3);
  absl::StatusOr<pb::ExecuteInputs> inputs = InputsFromNpy(with_offset, files);
  ASSERT_THAT(inputs, IsOk());
  EXPECT_EQ(inputs->offset().dtype(), pb::DATA_TYPE_FLOAT32);
  files.bias.reset();
  EXPECT_THAT(InputsFromNpy(with_offset, files),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--bias: required with --a and --b: the problem has a bias")));
}

TEST(InputsFromNpyTest, FloatOperatorsRefuseScaleFiles) {
  pb::MatmulProblem p;
  p.set_m(3);
  p.set_n(4);
  p.set_k(4);
  p.set_dtype_a(pb::DATA_TYPE_FLOAT16);
  p.set_dtype_b(pb::DATA_TYPE_FLOAT16);
  NpyOperands files;
  files.a = NpyOperand{"--a A.npy", Array(NpyDtype::kFloat16, {3, 4})};
  files.b = NpyOperand{"--b B.npy", Array(NpyDtype::kFloat16, {4, 4})};
  absl::StatusOr<pb::ExecuteInputs> inputs = InputsFromNpy(p, files);
  ASSERT_THAT(inputs, IsOk());
  EXPECT_EQ(inputs->a().data().size(), 24u);
  EXPECT_FALSE(inputs->has_bias());
  files.scale = NpyOperand{"--scale_npy s.npy", Array(NpyDtype::kUint64, {4})};
  EXPECT_THAT(InputsFromNpy(p, files),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--scale_npy s.npy: only QuantBatchMatmulV3 (--op "
                                 "quant_batch_matmul_v3) reads a scale; the problem's operator "
                                 "is matmul_v3")));
}

TEST(QuantTensorFromNpyTest, PacksInt4ValuesAndPassesPackedBytes) {
  const std::vector<int64_t> shape = {2, 4};
  absl::StatusOr<pb::Tensor> tensor = QuantTensorFromNpy(
      Values(NpyDtype::kInt8, shape, std::vector<int8_t>{-8, -1, 0, 7, 1, 2, 3, 4}),
      pb::DATA_TYPE_INT4, shape, "--a A.npy", "x1", "--dtype-a");
  ASSERT_THAT(tensor, IsOk());
  EXPECT_EQ(tensor->dtype(), pb::DATA_TYPE_INT4);
  EXPECT_THAT(tensor->shape(), ::testing::ElementsAre(2, 4));
  EXPECT_EQ(tensor->data(), std::string("\xF8\x70\x21\x43", 4));
  absl::StatusOr<pb::Tensor> packed = QuantTensorFromNpy(
      Values(NpyDtype::kUint8, {2, 2}, std::vector<uint8_t>{0xF8, 0x70, 0x21, 0x43}),
      pb::DATA_TYPE_INT4, shape, "--a A.npy", "x1", "--dtype-a");
  ASSERT_THAT(packed, IsOk());
  EXPECT_EQ(packed->SerializeAsString(), tensor->SerializeAsString());
  // int4's unpacked form is int8: a uint8 array of the full shape is not it.
  EXPECT_THAT(QuantTensorFromNpy(Values(NpyDtype::kUint8, shape, std::vector<uint8_t>(8, 1)),
                                 pb::DATA_TYPE_INT4, shape, "--a A.npy", "x1", "--dtype-a"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("or an int8 ('|i1') array [2, 4] of values in [-8, 7]")));
}

TEST(QuantTensorFromNpyTest, RefusesCodesOutOfRangeAndOddRows) {
  const std::vector<int64_t> shape = {2, 4};
  EXPECT_THAT(QuantTensorFromNpy(
                  Values(NpyDtype::kInt8, shape, std::vector<int8_t>{0, 0, 0, 0, 0, 8, 0, 0}),
                  pb::DATA_TYPE_INT4, shape, "--a A.npy", "x1", "--dtype-a"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--a A.npy: element [1, 1] is 8, outside int4's [-8, 7]")));
  EXPECT_THAT(QuantTensorFromNpy(
                  Values(NpyDtype::kUint8, shape, std::vector<uint8_t>{0, 0, 16, 0, 0, 0, 0, 0}),
                  pb::DATA_TYPE_FLOAT4_E2M1, shape, "--b B.npy", "x2", "--dtype-b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--b B.npy: element [0, 2] is 16, not a float4_e2m1 code (0..15); "
                                 "packed bytes are a uint8 ('|u1') array [2, 2]")));
  const std::vector<int64_t> odd = {2, 3};
  EXPECT_THAT(QuantTensorFromNpy(Values(NpyDtype::kUint8, odd, std::vector<uint8_t>(6, 1)),
                                 pb::DATA_TYPE_FLOAT4_E2M1, odd, "--b B.npy", "x2", "--k"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--b B.npy: the problem's x2 is float4_e2m1 [2, 3] (--k), but a "
                                 "4-bit x2 needs an even last dim")));
}

TEST(QuantTensorFromNpyTest, EightBitFloatsAreTheirCodes) {
  const std::vector<int64_t> shape = {2, 3};
  const std::vector<uint8_t> codes = {0x00, 0x38, 0x7E, 0x80, 0xB8, 0xFE};
  for (pb::DataType dtype : {pb::DATA_TYPE_FLOAT8_E4M3FN, pb::DATA_TYPE_FLOAT8_E5M2,
                             pb::DATA_TYPE_HIFLOAT8, pb::DATA_TYPE_FLOAT8_E8M0}) {
    absl::StatusOr<pb::Tensor> tensor = QuantTensorFromNpy(
        Values(NpyDtype::kUint8, shape, codes), dtype, shape, "--a A.npy", "x1", "--dtype-a");
    ASSERT_THAT(tensor, IsOk()) << pb::DataType_Name(dtype);
    EXPECT_EQ(tensor->data(), std::string(codes.begin(), codes.end()));
  }
  EXPECT_THAT(QuantTensorFromNpy(Values(NpyDtype::kInt8, shape, codes), pb::DATA_TYPE_FLOAT8_E4M3FN,
                                 shape, "--a A.npy", "x1", "--dtype-a"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("expected a uint8 ('|u1') array [2, 3] of float8_e4m3fn codes "
                                 "(ml_dtypes: save arr.view(np.uint8))")));
  // bfloat16 scales are their bits.
  EXPECT_THAT(QuantTensorFromNpy(Values(NpyDtype::kFloat16, {2}, std::vector<uint16_t>{1, 2}),
                                 pb::DATA_TYPE_BFLOAT16, {2}, "--scale_npy s.npy", "scale",
                                 "--scale-dtype, --scale-shape"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("expected a uint16 ('<u2') array [2] of the bfloat16 bits")));
}

TEST(SizesFromOperandsTest, ReadsTheLastTwoDims) {
  const NpyOperand a{"--a A.npy", Array(NpyDtype::kFloat16, {5, 7, 3})};
  const NpyOperand b{"--b B.npy", Array(NpyDtype::kFloat16, {3, 11})};
  MatmulSizes sizes;
  ASSERT_THAT(
      SizesFromOperands(a, pb::DATA_TYPE_FLOAT16, false, b, pb::DATA_TYPE_FLOAT16, false, sizes),
      IsOk());
  EXPECT_EQ(sizes.m, 7);
  EXPECT_EQ(sizes.k, 3);
  EXPECT_EQ(sizes.n, 11);
  // Transposed; a size already given stays.
  sizes = MatmulSizes{};
  sizes.n = 100;
  ASSERT_THAT(
      SizesFromOperands(a, pb::DATA_TYPE_FLOAT16, true, b, pb::DATA_TYPE_FLOAT16, true, sizes),
      IsOk());
  EXPECT_EQ(sizes.m, 3);
  EXPECT_EQ(sizes.k, 7);
  EXPECT_EQ(sizes.n, 100);
  const NpyOperand vector{"--a v.npy", Array(NpyDtype::kFloat16, {4})};
  EXPECT_THAT(
      SizesFromOperands(vector, pb::DATA_TYPE_FLOAT16, false, b, pb::DATA_TYPE_FLOAT16, false,
                        sizes),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("--a v.npy: shape [4] has 1 dimensions; expected 2 (after batch dims)")));
}

TEST(SizesFromOperandsTest, CountsPackedFourBitCodes) {
  // int4 x2 [k, n] packed: n is twice the bytes; its int8 form is unpacked.
  const NpyOperand a{"--a A.npy", Array(NpyDtype::kInt8, {2, 8})};
  MatmulSizes sizes;
  ASSERT_THAT(SizesFromOperands(a, pb::DATA_TYPE_INT4, false,
                                NpyOperand{"--b B.npy", Array(NpyDtype::kUint8, {8, 3})},
                                pb::DATA_TYPE_INT4, false, sizes),
              IsOk());
  EXPECT_EQ(sizes.m, 2);
  EXPECT_EQ(sizes.k, 8);
  EXPECT_EQ(sizes.n, 6);

  // float4_e2m1 in uint8: packed or not is for the sizes to say. k comes
  // from A's first dim (trans_a), so B [n, k] is decided; n is not.
  const NpyOperand fp4_a{"--a A.npy", Array(NpyDtype::kUint8, {8, 2})};
  const NpyOperand fp4_b{"--b B.npy", Array(NpyDtype::kUint8, {3, 4})};
  sizes = MatmulSizes{};
  ASSERT_THAT(SizesFromOperands(fp4_a, pb::DATA_TYPE_FLOAT4_E2M1, true, fp4_b,
                                pb::DATA_TYPE_FLOAT4_E2M1, true, sizes),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pass --m: --a A.npy is a uint8 ('|u1') array [8, 2] for a "
                                 "float4_e2m1 operand, whose last dim may hold packed bytes "
                                 "(m = 4) or unpacked codes (m = 2)")));
  sizes = MatmulSizes{};
  sizes.m = 2;
  ASSERT_THAT(SizesFromOperands(fp4_a, pb::DATA_TYPE_FLOAT4_E2M1, true, fp4_b,
                                pb::DATA_TYPE_FLOAT4_E2M1, true, sizes),
              IsOk());
  EXPECT_EQ(sizes.k, 8);
  EXPECT_EQ(sizes.n, 3);
  // MX's usual layout, A [m, k] and B [n, k]: k only from last dims, which
  // decide it when they allow one value only: A [2, 8] says 16 or 8, B [3,
  // 4] 8 or 4.
  sizes = MatmulSizes{};
  ASSERT_THAT(SizesFromOperands(NpyOperand{"--a A.npy", Array(NpyDtype::kUint8, {2, 8})},
                                pb::DATA_TYPE_FLOAT4_E2M1, false, fp4_b, pb::DATA_TYPE_FLOAT4_E2M1,
                                true, sizes),
              IsOk());
  EXPECT_EQ(sizes.k, 8);
  sizes = MatmulSizes{};
  EXPECT_THAT(SizesFromOperands(NpyOperand{"--a A.npy", Array(NpyDtype::kUint8, {2, 4})},
                                pb::DATA_TYPE_FLOAT4_E2M1, false, fp4_b, pb::DATA_TYPE_FLOAT4_E2M1,
                                true, sizes),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pass --k: --a A.npy is a uint8 ('|u1') array [2, 4] for a "
                                 "float4_e2m1 operand")));
}

TEST(NpyFromTensorTest, WritesQuantizedOutputs) {
  pb::Tensor c;
  c.set_dtype(pb::DATA_TYPE_INT8);
  c.add_shape(2);
  c.add_shape(2);
  c.set_data(std::string("\x01\xFF\x7F\x80", 4));
  absl::StatusOr<NpyArray> array = NpyFromTensor(c);
  ASSERT_THAT(array, IsOk());
  EXPECT_EQ(array->dtype, NpyDtype::kInt8);
  EXPECT_EQ(array->data, c.data());
  absl::StatusOr<std::string> file = SerializeNpy(*array);
  ASSERT_THAT(file, IsOk());
  EXPECT_THAT(*file, HasSubstr("'descr': '|i1'"));

  c.set_dtype(pb::DATA_TYPE_INT32);
  c.set_data(std::string(16, '\x05'));
  array = NpyFromTensor(c);
  ASSERT_THAT(array, IsOk());
  EXPECT_EQ(array->dtype, NpyDtype::kInt32);
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 2}));
  file = SerializeNpy(*array);
  ASSERT_THAT(file, IsOk());
  EXPECT_THAT(*file, HasSubstr("'descr': '<i4'"));
  c.mutable_data()->pop_back();
  EXPECT_THAT(NpyFromTensor(c), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("C has 15 bytes, its shape needs 16")));

  // A 4-bit tensor comes back unpacked, in the form QuantTensorFromNpy() reads.
  c.set_dtype(pb::DATA_TYPE_INT4);
  c.clear_shape();
  c.add_shape(3);
  c.set_data(std::string("\xF8\x07", 2));
  array = NpyFromTensor(c);
  ASSERT_THAT(array, IsOk());
  EXPECT_EQ(array->dtype, NpyDtype::kInt8);
  EXPECT_EQ(array->data, std::string("\xF8\xFF\x07", 3));  // -8, -1, 7

  c.set_dtype(pb::DATA_TYPE_UNSPECIFIED);
  EXPECT_THAT(NpyFromTensor(c),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("its dtype is unspecified")));
}

TEST(ParseTilingFileTest, ReadsTileJsonAndExecuteJson) {
  pb::TilingResponse tiling;
  tiling.set_tiling_key(4162);
  tiling.set_block_dim(32);
  tiling.set_tiling_struct("MatMulV3BasicTilingData");
  pb::TilingField* field = tiling.add_fields();
  field->set_name("baseM");
  field->set_value(128);
  field->set_bits(32);
  const std::string tile_json = ToJson(tiling);
  absl::StatusOr<pb::TilingResponse> parsed = ParseTilingFile(tile_json);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->SerializeAsString(), tiling.SerializeAsString());

  pb::ExecuteResponse response;
  *response.mutable_tiling() = tiling;
  response.mutable_timing()->set_predicted_cycles(5);
  parsed = ParseTilingFile(ToJson(response));
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->tiling_key(), 4162u);

  // Hand edits: snake_case names are accepted, typos are not.
  parsed = ParseTilingFile(R"({"tiling_key": "4162", "block_dim": 24})");
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->block_dim(), 24u);
  EXPECT_THAT(ParseTilingFile(R"({"blockDims": 24})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a TilingResponse")));
  EXPECT_THAT(ParseTilingFile("{"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseTilingFile("[1]"), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("the top level must be an object")));
}

TEST(FormatExecuteTest, ShowsTheTilingTheErrorAndThePerCoreTable) {
  pb::ExecuteResponse r;
  pb::TilingResponse* t = r.mutable_tiling();
  t->set_strategy("BASIC_STREAM_K");
  t->set_tiling_key(4162);
  t->mutable_key()->set_model_name("STREAM_K");
  t->set_block_dim(32);
  t->set_kernel_type_name("MIX_AIC_1_AIV_2");
  pb::TilingField* field = t->add_fields();
  field->set_name("baseM");
  field->set_value(256);
  t->mutable_platform()->set_name("ascend950pr");
  t->mutable_platform()->set_cube_freq_mhz(1650);
  r.set_input_source(pb::INPUT_SOURCE_SEED);
  r.set_seed(9);
  r.mutable_accuracy()->set_passed(true);
  r.mutable_accuracy()->set_max_abs_error(0.001);
  r.mutable_accuracy()->set_worst_row(3);
  r.mutable_accuracy()->set_worst_col(4);
  pb::TimingReport* timing = r.mutable_timing();
  timing->set_predicted_cycles(16500);
  timing->set_predicted_time_us(10);
  timing->set_cube_utilization(0.875);
  timing->set_bound_resource("CUBE");
  pb::CoreTiming* core = timing->add_cores();
  core->set_kind(pb::CORE_KIND_AIV);
  core->set_core(7);
  core->set_units(2);
  core->mutable_busy_cycles()->set_vec(1234);
  r.set_threads_used(2);
  const std::string out = FormatExecute(r);
  EXPECT_THAT(out, HasSubstr("BASIC_STREAM_K, key 4162 (STREAM_K"));
  EXPECT_THAT(out, HasSubstr("baseM=256"));
  EXPECT_THAT(out, HasSubstr("generated from seed 9"));
  EXPECT_THAT(out, HasSubstr("accuracy vs fp64 reference: PASS"));
  EXPECT_THAT(out, HasSubstr("C[3, 4]"));
  EXPECT_THAT(out, HasSubstr("16500 cycles = 10.000 us"));
  EXPECT_THAT(out, HasSubstr("87.5 %"));
  EXPECT_THAT(out, HasSubstr("bound by             CUBE"));
  EXPECT_THAT(out, ::testing::ContainsRegex("AIV 7 +2 +0 +0 +0 +0 +0 +1234 +0"));

  r.clear_accuracy();
  r.set_input_source(pb::INPUT_SOURCE_NONE);
  EXPECT_THAT(FormatExecute(r), ::testing::Not(HasSubstr("accuracy")));
  EXPECT_THAT(FormatExecute(r), HasSubstr("none (timing only)"));
}

// A kernel schedule's run: the schedule instead of the tiling, the chip
// with its architecture, and the msprof columns (AIV only when they ran).
TEST(FormatExecuteTest, ShowsTheKernelScheduleAndTheMsprofColumns) {
  pb::ExecuteResponse r;
  pb::KernelSchedule* k = r.mutable_kernel_schedule();
  k->set_kind(pb::KERNEL_SCHEDULE_KIND_STATIC_GRID);
  k->set_block_dim(24);
  k->set_base_m(128);
  k->set_base_n(256);
  k->set_base_k(64);
  k->set_l1_m(128);
  k->set_l1_n(256);
  k->set_l1_k(256);
  k->set_depth_a1(2);
  k->set_depth_b1(1);
  k->set_single_core_m(4096);
  k->set_single_core_n(683);
  k->set_inner_order(pb::TILE_ORDER_COL_MAJOR);
  k->set_l2_split_rounds(2);
  k->set_unit_flag(true);
  pb::ChipSpec* chip = r.mutable_platform();
  chip->set_name("ascend910b1");
  chip->set_npu_arch("DAV_2201");
  chip->set_aic_num(24);
  chip->set_aiv_num(48);
  chip->set_cube_freq_mhz(1850);
  r.set_input_source(pb::INPUT_SOURCE_NONE);
  pb::MsprofSummary* m = r.mutable_timing()->mutable_msprof();
  m->set_task_duration_us(4100.5);
  m->set_aic_time_us(4000);
  m->set_aic_mac_time_us(3000);
  m->set_aic_mac_ratio(0.75);
  m->set_aic_mte2_time_us(2000);
  m->set_aic_mte2_ratio(0.5);
  m->set_aic_cores(24);
  std::string out = FormatExecute(r);
  EXPECT_THAT(out, HasSubstr("kernel         static_grid, block_dim 24, base 128x256x64, "
                             "L1 128x256x256"));
  EXPECT_THAT(out, HasSubstr("depth 2/1, L0 single, L0C single, unit_flag on, B ND, "
                             "block 4096x683, col_major, 2 L2 rounds"));
  EXPECT_THAT(out, HasSubstr("platform       ascend910b1 (DAV_2201): 24 AIC, 48 AIV, 1850 MHz"));
  EXPECT_THAT(out, HasSubstr("msprof task duration 4100.500 us"));
  EXPECT_THAT(out, HasSubstr("aic (24 cores)       time 4000.000 us, mac 3000.000 us (0.750), "
                             "mte1 0.000 us (0.000), mte2 2000.000 us (0.500), "
                             "fixpipe 0.000 us (0.000)"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("aiv (")));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("tiling ")));
  m->set_aiv_cores(48);
  m->set_aiv_vec_time_us(12.5);
  m->set_aiv_vec_ratio(0.25);
  out = FormatExecute(r);
  EXPECT_THAT(out, HasSubstr("aiv (48 cores)       time 0.000 us, vec 12.500 us (0.250)"));
}

}  // namespace
}  // namespace npu::client

namespace npu::client {
namespace {

// --skew zipf:S: a reproducible, uneven histogram that sums to the split.
TEST(ZipfHistogramTest, SumsToTheTotalIsSeededAndIsUneven) {
  // 1024 tokens over 256 experts (DeepSeek-V3's routed experts).
  const std::vector<int64_t> a = ZipfHistogram(1024, 256, 1.2, 7);
  ASSERT_EQ(a.size(), 256u);
  int64_t sum = 0, largest = 0, empty = 0;
  for (int64_t rows : a) {
    sum += rows;
    largest = std::max(largest, rows);
    empty += rows == 0 ? 1 : 0;
  }
  EXPECT_EQ(sum, 1024);
  EXPECT_GT(largest, 16 * 1024 / 256);  // the hottest expert far above the mean
  EXPECT_GT(empty, 0);                  // and some experts get nothing
  EXPECT_EQ(ZipfHistogram(1024, 256, 1.2, 7), a);
  EXPECT_NE(ZipfHistogram(1024, 256, 1.2, 8), a);
  // Past 2^22 tokens the expected shares, still summing to the total.
  const std::vector<int64_t> big = ZipfHistogram(int64_t{1} << 30, 8, 1.0, 1);
  int64_t big_sum = 0;
  for (int64_t rows : big) big_sum += rows;
  EXPECT_EQ(big_sum, int64_t{1} << 30);
}

TEST(FormatExecuteTest, ShowsHowTheGroupsWereSplitAndTheWorstExpert) {
  pb::ExecuteResponse r;
  r.mutable_tiling()->set_tiling_struct("GMMNoQuantTilingData");
  r.add_notes("split M over 4 groups, rows per group 50,50,50,50 (spread evenly: ...)");
  r.mutable_accuracy()->set_passed(true);
  r.mutable_accuracy()->set_worst_batch(2);
  r.mutable_accuracy()->set_worst_row(7);
  r.mutable_accuracy()->set_worst_col(1);
  const std::string out = FormatExecute(r);
  EXPECT_THAT(out, HasSubstr("groups         split M over 4 groups"));
  EXPECT_THAT(out, HasSubstr("y of group 2 [7, 1]"));
}

}  // namespace
}  // namespace npu::client
