#include "client/tilingctl/execute.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;

// "float16", "uint64", "float8_e4m3fn": the names the dtype flags take.
std::string DtypeName(pb::DataType dtype) {
  const std::string name = pb::DataType_Name(dtype);
  if (name.empty()) return absl::StrCat("dtype ", static_cast<int>(dtype));
  absl::string_view label = name;
  absl::ConsumePrefix(&label, "DATA_TYPE_");
  return absl::AsciiStrToLower(label);
}

// "matmul_v3", "quant_batch_matmul_v3": the names --op takes.
std::string OperatorName(pb::Operator op) {
  if (op == pb::OPERATOR_UNSPECIFIED) op = pb::OPERATOR_MATMUL_V3;
  std::string name = pb::Operator_Name(op);
  absl::string_view label = name;
  absl::ConsumePrefix(&label, "OPERATOR_");
  return absl::AsciiStrToLower(label);
}

bool IsFourBit(pb::DataType dtype) {
  return dtype == pb::DATA_TYPE_INT4 || dtype == pb::DATA_TYPE_FLOAT4_E2M1;
}

// The .npy dtype a wire dtype travels as: the codes' bytes for the 8-bit
// floats, the packed bytes for the 4-bit types. None for UNSPECIFIED.
std::optional<NpyDtype> NpyDtypeOf(pb::DataType dtype) {
  switch (dtype) {
    case pb::DATA_TYPE_FLOAT16:
      return NpyDtype::kFloat16;
    case pb::DATA_TYPE_BFLOAT16:
      return NpyDtype::kUint16;
    case pb::DATA_TYPE_FLOAT32:
      return NpyDtype::kFloat32;
    case pb::DATA_TYPE_INT8:
      return NpyDtype::kInt8;
    case pb::DATA_TYPE_INT4:
    case pb::DATA_TYPE_FLOAT8_E4M3FN:
    case pb::DATA_TYPE_FLOAT8_E5M2:
    case pb::DATA_TYPE_HIFLOAT8:
    case pb::DATA_TYPE_FLOAT4_E2M1:
    case pb::DATA_TYPE_FLOAT8_E8M0:
      return NpyDtype::kUint8;
    case pb::DATA_TYPE_INT32:
      return NpyDtype::kInt32;
    case pb::DATA_TYPE_INT64:
      return NpyDtype::kInt64;
    case pb::DATA_TYPE_UINT64:
      return NpyDtype::kUint64;
    default:  // UNSPECIFIED and the generated enum's sentinels
      return std::nullopt;
  }
}

absl::string_view NpyDtypeName(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kFloat16:
      return "float16";
    case NpyDtype::kFloat32:
      return "float32";
    case NpyDtype::kUint16:
      return "uint16";
    case NpyDtype::kInt8:
      return "int8";
    case NpyDtype::kUint8:
      return "uint8";
    case NpyDtype::kInt32:
      return "int32";
    case NpyDtype::kInt64:
      return "int64";
    case NpyDtype::kUint64:
      return "uint64";
  }
  return "?";
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// "uint64 ('<u8') array [8]".
std::string ArrayText(NpyDtype dtype, const std::vector<int64_t>& shape) {
  return absl::StrCat(NpyDtypeName(dtype), " ('", NpyDescr(dtype), "') array ", ShapeText(shape));
}

// "a uint64 ('<u8') array [8]", "an int8 ('|i1') array [4, 2]".
std::string AnArray(NpyDtype dtype, const std::vector<int64_t>& shape) {
  return absl::StrCat(NpyDtypeName(dtype)[0] == 'i' ? "an " : "a ", ArrayText(dtype, shape));
}

// `shape` with its last dim halved: the packed bytes of a 4-bit tensor whose
// last dim is even.
std::vector<int64_t> PackedShape(std::vector<int64_t> shape) {
  if (!shape.empty()) shape.back() /= 2;
  return shape;
}

// The arrays QuantTensorFromNpy() takes for an input of `dtype` and `shape`.
std::string ExpectedArrays(pb::DataType dtype, const std::vector<int64_t>& shape) {
  if (IsFourBit(dtype)) {
    const std::string packed =
        absl::StrCat(AnArray(NpyDtype::kUint8, PackedShape(shape)),
                     " of packed bytes (two codes per byte, element 2i in the low nibble)");
    if (dtype == pb::DATA_TYPE_INT4) {
      return absl::StrCat(packed, " or ", AnArray(NpyDtype::kInt8, shape), " of values in [-8, 7]");
    }
    return absl::StrCat(packed, " or ", AnArray(NpyDtype::kUint8, shape), " of codes 0..15");
  }
  const std::optional<NpyDtype> npy = NpyDtypeOf(dtype);
  if (!npy.has_value()) return "a dtype for it";
  std::string text = AnArray(*npy, shape);
  if (dtype == pb::DATA_TYPE_BFLOAT16) absl::StrAppend(&text, " of the bfloat16 bits");
  if (*npy == NpyDtype::kUint8) {
    absl::StrAppend(&text, " of ", DtypeName(dtype), " codes (ml_dtypes: save arr.view(np.uint8))");
  }
  return text;
}

// The coordinates of element `flat` of a C-order array of `shape`.
std::string IndexText(const std::vector<int64_t>& shape, uint64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<int64_t>(flat % static_cast<uint64_t>(shape[d]));
    flat /= static_cast<uint64_t>(shape[d]);
  }
  return ShapeText(index);
}

// Packs 4-bit codes, the low nibble of each byte of `codes`, two per byte:
// element 2i in the low nibble, 2i + 1 in the high one (an odd count leaves
// the last high nibble 0), as the wire's Tensor.data holds them.
std::string PackNibbles(absl::string_view codes) {
  std::string packed((codes.size() + 1) / 2, '\0');
  for (size_t i = 0; i < codes.size(); ++i) {
    const unsigned nibble = static_cast<unsigned char>(codes[i]) & 0xFu;
    packed[i / 2] =
        static_cast<char>(static_cast<unsigned char>(packed[i / 2]) | (nibble << (4 * (i % 2))));
  }
  return packed;
}

// The unpacked codes of a 4-bit tensor of `elements` elements, as the .npy
// array NpyFromTensor() writes: int4 as int8 values (sign-extended), float4
// as uint8 codes.
std::string UnpackNibbles(absl::string_view packed, uint64_t elements, bool sign_extend) {
  std::string codes(elements, '\0');
  for (uint64_t i = 0; i < elements; ++i) {
    const int nibble = (static_cast<unsigned char>(packed[i / 2]) >> (4 * (i % 2))) & 0xF;
    codes[i] = static_cast<char>(sign_extend && nibble >= 8 ? nibble - 16 : nibble);
  }
  return codes;
}

std::string Bytes(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return absl::StrFormat("%.2f GiB", bytes / 1073741824.0);
  if (bytes >= (uint64_t{1} << 20)) return absl::StrFormat("%.2f MiB", bytes / 1048576.0);
  if (bytes >= 1024) return absl::StrFormat("%.2f KiB", bytes / 1024.0);
  return absl::StrCat(bytes, " B");
}

uint64_t FieldValue(const pb::TilingResponse& tiling, absl::string_view name, bool* found) {
  for (const pb::TilingField& field : tiling.fields()) {
    if (field.name() == name) {
      *found = true;
      return field.value();
    }
  }
  *found = false;
  return 0;
}

// What the last dim of an operand file says of its size: `size`, or, when
// `ambiguous`, `size` (packed bytes) or `size` / 2 (unpacked codes).
struct InnerDim {
  int64_t size = 0;
  bool ambiguous = false;
};

InnerDim InnerDimOf(const NpyArray& array, pb::DataType dtype) {
  const int64_t last = array.shape.back();
  if (array.dtype != NpyDtype::kUint8 || !IsFourBit(dtype)) return {last, false};
  // int4's unpacked form is an int8 array: a uint8 one is always packed.
  return {2 * last, dtype == pb::DATA_TYPE_FLOAT4_E2M1};
}

// The error for an array that is not what the problem says of `input`.
absl::Status QuantMismatch(const NpyArray& array, pb::DataType dtype,
                           const std::vector<int64_t>& shape, absl::string_view what,
                           absl::string_view input, absl::string_view problem_flags) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": ", ArrayText(array.dtype, array.shape), ", the problem's ", input,
                   " is ", DtypeName(dtype), " ", ShapeText(shape), " (", problem_flags,
                   "); expected ", ExpectedArrays(dtype, shape)));
}

// Checks that the unpacked 4-bit codes of `array` fit their type: int4
// values in [-8, 7] (int8 array), float4_e2m1 codes 0..15 (uint8 array).
absl::Status CheckNibbles(const NpyArray& array, pb::DataType dtype, absl::string_view what) {
  const bool int4 = dtype == pb::DATA_TYPE_INT4;
  for (size_t i = 0; i < array.data.size(); ++i) {
    const int value = int4 ? static_cast<int>(static_cast<signed char>(array.data[i]))
                           : static_cast<int>(static_cast<unsigned char>(array.data[i]));
    if (int4 ? (value < -8 || value > 7) : value > 15) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": element ", IndexText(array.shape, i), " is ", value,
                       int4 ? ", outside int4's [-8, 7]"
                            : absl::StrCat(", not a float4_e2m1 code (0..15); packed bytes are ",
                                           AnArray(NpyDtype::kUint8, PackedShape(array.shape)))));
    }
  }
  return absl::OkStatus();
}

// `batch` followed by `rows` x `cols`.
std::vector<int64_t> Prefixed(const google::protobuf::RepeatedField<int64_t>& batch, int64_t rows,
                              int64_t cols) {
  std::vector<int64_t> shape(batch.begin(), batch.end());
  shape.push_back(rows);
  shape.push_back(cols);
  return shape;
}

// One operand or scale of an Execute read from its .npy file: the file (if
// given), the flag that names it, whether the problem has it, and the dtype
// and shape the problem says it has.
struct Input {
  const std::optional<NpyOperand>& file;
  const char* flag;  // named when the file is missing
  const char* name;
  bool present;
  pb::DataType dtype;
  std::vector<int64_t> shape;
  const char* problem_flags;
  pb::Tensor* (pb::ExecuteInputs::*field)();
};

// The wire tensors of `inputs`: each file the problem has, checked against
// its dtype and shape; a file the problem lacks, or a missing one it has,
// is refused naming the flag.
template <size_t kCount>
absl::StatusOr<pb::ExecuteInputs> TensorsFromFiles(const Input (&inputs)[kCount]) {
  pb::ExecuteInputs out;
  for (const Input& input : inputs) {
    if (!input.present) {
      if (input.file.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(input.file->what, ": the problem has no ",
                                                       input.name, " (", input.problem_flags, ")"));
      }
      continue;
    }
    if (!input.file.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(input.flag, ": required with --a and --b: the problem has a ", input.name,
                       ", ", DtypeName(input.dtype), " ", ShapeText(input.shape)));
    }
    absl::StatusOr<pb::Tensor> tensor =
        QuantTensorFromNpy(input.file->array, input.dtype, input.shape, input.file->what,
                           input.name, input.problem_flags);
    if (!tensor.ok()) return tensor.status();
    *(out.*input.field)() = *std::move(tensor);
  }
  return out;
}

// QuantBatchMatmulV3's inputs against the problem.
absl::StatusOr<pb::ExecuteInputs> QuantInputsFromNpy(const pb::MatmulProblem& p,
                                                     const NpyOperands& files) {
  const pb::QuantInputs& q = p.quant();
  // One input: its file, what the problem says of it and where it goes.
  const Input inputs[] = {
      {files.a, "--a", "x1", true, p.dtype_a(),
       p.trans_a() ? Prefixed(p.batch_a(), p.k(), p.m()) : Prefixed(p.batch_a(), p.m(), p.k()),
       "--dtype-a; --m, --k, --trans-a, --batch-a", &pb::ExecuteInputs::mutable_a},
      {files.b, "--b", "x2", true, p.dtype_b(),
       p.trans_b() ? Prefixed(p.batch_b(), p.n(), p.k()) : Prefixed(p.batch_b(), p.k(), p.n()),
       "--dtype-b; --k, --n, --trans-b, --batch-b", &pb::ExecuteInputs::mutable_b},
      {files.bias, "--bias", "bias", p.has_bias(), p.dtype_bias(),
       q.bias_shape().empty() ? std::vector<int64_t>{p.n()}
                              : std::vector<int64_t>(q.bias_shape().begin(), q.bias_shape().end()),
       "--bias-dtype (default: C's), --bias-shape ([n] by default)",
       &pb::ExecuteInputs::mutable_bias},
      {files.scale, "--scale_npy", "scale", q.scale().dtype() != pb::DATA_TYPE_UNSPECIFIED,
       q.scale().dtype(), std::vector<int64_t>(q.scale().shape().begin(), q.scale().shape().end()),
       "--scale-dtype, --scale-shape", &pb::ExecuteInputs::mutable_scale},
      {files.pertoken_scale, "--pertoken_npy", "pertoken scale",
       q.pertoken_scale().dtype() != pb::DATA_TYPE_UNSPECIFIED, q.pertoken_scale().dtype(),
       std::vector<int64_t>(q.pertoken_scale().shape().begin(), q.pertoken_scale().shape().end()),
       "--pertoken-dtype, --pertoken-shape", &pb::ExecuteInputs::mutable_pertoken_scale},
      {files.offset, "--offset_npy", "offset", q.offset().dtype() != pb::DATA_TYPE_UNSPECIFIED,
       q.offset().dtype(),
       std::vector<int64_t>(q.offset().shape().begin(), q.offset().shape().end()),
       "--offset-dtype, --offset-shape", &pb::ExecuteInputs::mutable_offset},
  };
  return TensorsFromFiles(inputs);
}

}  // namespace

absl::Status SizesFromOperands(const NpyOperand& a, pb::DataType dtype_a, bool trans_a,
                               const NpyOperand& b, pb::DataType dtype_b, bool trans_b,
                               MatmulSizes& sizes) {
  for (const NpyOperand* operand : {&a, &b}) {
    if (operand->array.shape.size() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(operand->what, ": shape ", ShapeText(operand->array.shape), " has ",
                       operand->array.shape.size(), " dimensions; expected 2 (after batch dims)"));
    }
  }
  // A dim of A or B that gives a size.
  struct Source {
    const NpyOperand* operand;
    InnerDim dim;
  };
  const std::vector<int64_t>& shape_a = a.array.shape;
  const std::vector<int64_t>& shape_b = b.array.shape;
  const Source a_outer{&a, {shape_a[shape_a.size() - 2], false}};
  const Source a_inner{&a, InnerDimOf(a.array, dtype_a)};
  const Source b_outer{&b, {shape_b[shape_b.size() - 2], false}};
  const Source b_inner{&b, InnerDimOf(b.array, dtype_b)};
  struct Size {
    const char* name;
    std::optional<int64_t>& value;
    std::vector<Source> sources;
  };
  Size all[] = {
      {"m", sizes.m, {trans_a ? a_inner : a_outer}},
      {"k", sizes.k, {trans_a ? a_outer : a_inner, trans_b ? b_inner : b_outer}},
      {"n", sizes.n, {trans_b ? b_outer : b_inner}},
  };
  for (Size& size : all) {
    if (size.value.has_value()) continue;
    // The values every ambiguous source allows: k from A and B may agree on
    // one (one packed, one unpacked).
    std::vector<int64_t> candidates;
    const Source* ambiguous = nullptr;
    for (const Source& source : size.sources) {
      if (!source.dim.ambiguous) {
        size.value = source.dim.size;
        break;
      }
      std::vector<int64_t> allowed = {source.dim.size};
      if (source.dim.size != 0) allowed.push_back(source.dim.size / 2);
      if (ambiguous == nullptr) {
        ambiguous = &source;
        candidates = allowed;
      } else {
        candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                        [&](int64_t v) {
                                          return std::find(allowed.begin(), allowed.end(), v) ==
                                                 allowed.end();
                                        }),
                         candidates.end());
      }
    }
    if (!size.value.has_value() && candidates.size() == 1) size.value = candidates[0];
    if (!size.value.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pass --", size.name, ": ", ambiguous->operand->what, " is a ",
                       ArrayText(NpyDtype::kUint8, ambiguous->operand->array.shape),
                       " for a float4_e2m1 operand, whose last dim may hold packed bytes (",
                       size.name, " = ", ambiguous->dim.size, ") or unpacked codes (", size.name,
                       " = ", ambiguous->dim.size / 2, ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<pb::Tensor> TensorFromNpy(const NpyArray& array, pb::DataType dtype, int rank,
                                         absl::string_view what) {
  const NpyDtype want = NpyDtypeOf(dtype).value_or(NpyDtype::kFloat16);
  if (array.dtype != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the file holds ", NpyDtypeName(array.dtype), " ('", NpyDescr(array.dtype),
        "'), but the operand is ", DtypeName(dtype), ", which needs ", NpyDtypeName(want), " ('",
        NpyDescr(want), "')",
        dtype == pb::DATA_TYPE_BFLOAT16 ? " holding the bfloat16 bits"
                                        : "; pass --dtype (or --dtype-a / -b) to match"));
  }
  if (static_cast<int>(array.shape.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": shape (", absl::StrJoin(array.shape, ", "), ") has ",
                     array.shape.size(), " dimensions, expected ", rank));
  }
  pb::Tensor tensor;
  tensor.set_dtype(dtype);
  for (int64_t dim : array.shape) tensor.add_shape(dim);
  tensor.set_data(array.data);
  return tensor;
}

absl::StatusOr<pb::Tensor> QuantTensorFromNpy(const NpyArray& array, pb::DataType dtype,
                                              const std::vector<int64_t>& shape,
                                              absl::string_view what, absl::string_view input,
                                              absl::string_view problem_flags) {
  const std::optional<NpyDtype> npy = NpyDtypeOf(dtype);
  if (!npy.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the problem's ", input, " has no dtype (", problem_flags, ")"));
  }
  if (array.data.size() != array.elements() * NpyItemBytes(array.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", array.data.size(), " bytes of data for ", ArrayText(array.dtype, array.shape)));
  }
  pb::Tensor tensor;
  tensor.set_dtype(dtype);
  for (int64_t dim : shape) tensor.add_shape(dim);
  if (!IsFourBit(dtype)) {
    if (array.dtype != *npy || array.shape != shape) {
      return QuantMismatch(array, dtype, shape, what, input, problem_flags);
    }
    tensor.set_data(array.data);
    return tensor;
  }
  // The file packs each row, the wire the flat tensor: the same bytes when
  // the rows hold whole bytes. CANN refuses odd last dims anyway.
  if (shape.empty() || shape.back() % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the problem's ", input, " is ", DtypeName(dtype), " ",
                     ShapeText(shape), " (", problem_flags, "), but a 4-bit ", input,
                     " needs an even last dim (two codes per byte along it)"));
  }
  const NpyDtype unpacked = dtype == pb::DATA_TYPE_INT4 ? NpyDtype::kInt8 : NpyDtype::kUint8;
  if (array.dtype == NpyDtype::kUint8 && array.shape == PackedShape(shape)) {
    tensor.set_data(array.data);
  } else if (array.dtype == unpacked && array.shape == shape) {
    if (absl::Status codes = CheckNibbles(array, dtype, what); !codes.ok()) return codes;
    tensor.set_data(PackNibbles(array.data));
  } else {
    return QuantMismatch(array, dtype, shape, what, input, problem_flags);
  }
  return tensor;
}

namespace {

// The transposed batch matmuls' tensors as stored: x1 and x2 through their
// perms, TransposeBatchMatMul's int8 y scale (--scale_npy),
// TransposeQuantBatchMatMul's x2 and x1 scales (--scale_npy,
// --pertoken_npy).
absl::StatusOr<pb::ExecuteInputs> TransposedInputsFromNpy(const pb::MatmulProblem& p,
                                                          const NpyOperands& files) {
  const pb::TransposeAttrs& t = p.transpose();
  const auto is = [](const google::protobuf::RepeatedField<int64_t>& perm, int64_t a, int64_t b,
                     int64_t c) {
    return perm.size() == 3 && perm[0] == a && perm[1] == b && perm[2] == c;
  };
  const std::vector<int64_t> x1 = is(t.perm_x1(), 1, 0, 2)
                                      ? std::vector<int64_t>{p.m(), t.batch(), p.k()}
                                      : std::vector<int64_t>{t.batch(), p.m(), p.k()};
  const std::vector<int64_t> x2 = is(t.perm_x2(), 0, 2, 1)
                                      ? std::vector<int64_t>{t.batch(), p.n(), p.k()}
                                      : std::vector<int64_t>{t.batch(), p.k(), p.n()};
  const bool tbmm = p.op() == pb::OPERATOR_TRANSPOSE_BATCH_MATMUL;
  const pb::QuantTensor& scale = tbmm ? t.scale() : p.quant().scale();
  const pb::QuantTensor& pertoken = p.quant().pertoken_scale();
  const Input inputs[] = {
      {files.a, "--a", "x1", true, p.dtype_a(), x1, "--dtype-a; --m, --k, --batch, --perm-x1",
       &pb::ExecuteInputs::mutable_a},
      {files.b, "--b", "x2", true, p.dtype_b(), x2, "--dtype-b; --k, --n, --batch, --perm-x2",
       &pb::ExecuteInputs::mutable_b},
      {files.scale, "--scale_npy", "scale", scale.dtype() != pb::DATA_TYPE_UNSPECIFIED,
       scale.dtype(), std::vector<int64_t>(scale.shape().begin(), scale.shape().end()),
       "--scale-dtype, --scale-shape", &pb::ExecuteInputs::mutable_scale},
      {files.pertoken_scale, "--pertoken_npy", "x1 scale",
       !tbmm && pertoken.dtype() != pb::DATA_TYPE_UNSPECIFIED, pertoken.dtype(),
       std::vector<int64_t>(pertoken.shape().begin(), pertoken.shape().end()),
       "--pertoken-dtype, --pertoken-shape", &pb::ExecuteInputs::mutable_pertoken_scale},
  };
  if (files.bias.has_value() || files.offset.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(files.bias.has_value() ? files.bias->what : files.offset->what,
                     ": the transposed batch matmuls take no bias and no offset"));
  }
  return TensorsFromFiles(inputs);
}

}  // namespace

absl::StatusOr<pb::ExecuteInputs> InputsFromNpy(const pb::MatmulProblem& problem,
                                                const NpyOperands& files) {
  if (!files.a.has_value() || !files.b.has_value()) {
    return absl::InvalidArgumentError("--a and --b go together");
  }
  if (problem.op() == pb::OPERATOR_QUANT_BATCH_MATMUL_V3) return QuantInputsFromNpy(problem, files);
  if (problem.op() == pb::OPERATOR_WEIGHT_QUANT_BATCH_MATMUL_V2) {
    // x, the weight, the bias and the antiquant scale and offset (--scale_npy,
    // --offset_npy) read as QuantBatchMatmulV3's x1, x2, scale and offset.
    if (problem.dtype_b() == pb::DATA_TYPE_INT32 || problem.dtype_b() == pb::DATA_TYPE_FLOAT32) {
      return absl::InvalidArgumentError(
          "--b: a packed INT32 / FLOAT32 weight is not read from .npy; give it as int4 / "
          "float4_e2m1 (--dtype-b) or use --seed");
    }
    pb::MatmulProblem as_quant = problem;
    pb::QuantInputs* q = as_quant.mutable_quant();
    *q->mutable_scale() = problem.quant().antiquant_scale();
    *q->mutable_offset() = problem.quant().antiquant_offset();
    return QuantInputsFromNpy(as_quant, files);
  }
  if (problem.op() == pb::OPERATOR_TRANSPOSE_BATCH_MATMUL ||
      problem.op() == pb::OPERATOR_TRANSPOSE_QUANT_BATCH_MATMUL) {
    return TransposedInputsFromNpy(problem, files);
  }
  for (const auto& [file, input] :
       {std::pair{&files.scale, "scale"}, std::pair{&files.pertoken_scale, "pertoken scale"},
        std::pair{&files.offset, "offset"}}) {
    if (file->has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          (*file)->what, ": only QuantBatchMatmulV3 (--op quant_batch_matmul_v3) reads a ", input,
          "; the problem's operator is ", OperatorName(problem.op())));
    }
  }
  pb::ExecuteInputs inputs;
  absl::StatusOr<pb::Tensor> tensor =
      TensorFromNpy(files.a->array, problem.dtype_a(), 2, files.a->what);
  if (!tensor.ok()) return tensor.status();
  *inputs.mutable_a() = *std::move(tensor);
  tensor = TensorFromNpy(files.b->array, problem.dtype_b(), 2, files.b->what);
  if (!tensor.ok()) return tensor.status();
  *inputs.mutable_b() = *std::move(tensor);
  if (files.bias.has_value()) {
    tensor = TensorFromNpy(files.bias->array, problem.dtype_bias(), 1, files.bias->what);
    if (!tensor.ok()) return tensor.status();
    *inputs.mutable_bias() = *std::move(tensor);
  }
  return inputs;
}

absl::StatusOr<NpyArray> NpyFromTensor(const pb::Tensor& tensor) {
  const std::optional<NpyDtype> npy = NpyDtypeOf(tensor.dtype());
  if (!npy.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("C has no .npy form: its dtype is ", DtypeName(tensor.dtype())));
  }
  NpyArray array;
  array.shape.assign(tensor.shape().begin(), tensor.shape().end());
  bool empty = false;
  for (int64_t dim : array.shape) {
    if (dim < 0) return absl::InvalidArgumentError("C has a negative dimension");
    if (dim == 0) empty = true;
  }
  // Bounded so that the byte counts below cannot wrap: a 4-bit tensor holds
  // two elements per byte of the largest .npy data.
  constexpr uint64_t kMaxElements = 2 * kMaxNpyDataBytes;
  uint64_t elements = empty ? 0 : 1;
  for (int64_t dim : array.shape) {
    if (empty) break;
    if (static_cast<uint64_t>(dim) > kMaxElements / elements) {
      return absl::InvalidArgumentError(
          absl::StrCat("C's shape ", ShapeText(array.shape), " has too many elements"));
    }
    elements *= static_cast<uint64_t>(dim);
  }
  const bool four_bit = IsFourBit(tensor.dtype());
  const uint64_t bytes = four_bit ? (elements + 1) / 2 : elements * NpyItemBytes(*npy);
  if (tensor.data().size() != bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("C has ", tensor.data().size(), " bytes, its shape needs ", bytes));
  }
  if (!four_bit) {
    array.dtype = *npy;
    array.data = tensor.data();
    return array;
  }
  const bool int4 = tensor.dtype() == pb::DATA_TYPE_INT4;
  array.dtype = int4 ? NpyDtype::kInt8 : NpyDtype::kUint8;
  array.data = UnpackNibbles(tensor.data(), elements, /*sign_extend=*/int4);
  return array;
}

absl::StatusOr<pb::TilingResponse> ParseTilingFile(absl::string_view json_text) {
  nlohmann::json root = nlohmann::json::parse(json_text.begin(), json_text.end(), nullptr,
                                              /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!root.is_object()) return absl::InvalidArgumentError("the top level must be an object");
  // `tilingctl execute --json` output: its tiling is the one to rerun.
  if (root.contains("tiling") && root["tiling"].is_object()) root = root["tiling"];
  pb::TilingResponse tiling;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(root.dump(), &tiling, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a TilingResponse in the proto JSON mapping: ", std::string(status.message())));
  }
  return tiling;
}

namespace {

// "static_grid" for KERNEL_SCHEDULE_KIND_STATIC_GRID: the calibration
// files' names.
std::string KindLabel(pb::KernelScheduleKind kind) {
  std::string name = pb::KernelScheduleKind_Name(kind);
  absl::string_view label = name;
  absl::ConsumePrefix(&label, "KERNEL_SCHEDULE_KIND_");
  return absl::AsciiStrToLower(label);
}

// The kernel schedule line of a report: the schedule that ran instead of a
// CANN tiling.
void AppendKernelSchedule(const pb::KernelSchedule& k, std::string& out) {
  absl::StrAppendFormat(&out, "%-14s %s, block_dim %u, base %ux%ux%u, L1 %ux%ux%u\n", "kernel",
                        KindLabel(k.kind()), k.block_dim(), k.base_m(), k.base_n(), k.base_k(),
                        k.l1_m(), k.l1_n(), k.l1_k());
  std::string options = absl::StrFormat(
      "depth %u/%u, L0 %s, L0C %s, unit_flag %s, B %s", k.depth_a1(), k.depth_b1(),
      k.l0_double_buffer() ? "double" : "single", k.l0c_double_buffer() ? "double" : "single",
      k.unit_flag() ? "on" : "off", k.b_format() == pb::FORMAT_FRACTAL_NZ ? "FRACTAL_NZ" : "ND");
  if (k.kind() == pb::KERNEL_SCHEDULE_KIND_STATIC_GRID) {
    absl::StrAppendFormat(&options, ", block %ux%u, %s", k.single_core_m(), k.single_core_n(),
                          k.inner_order() == pb::TILE_ORDER_COL_MAJOR ? "col_major" : "row_major");
    if (k.l2_split_rounds() > 1)
      absl::StrAppendFormat(&options, ", %u L2 rounds", k.l2_split_rounds());
  }
  if (k.kind() == pb::KERNEL_SCHEDULE_KIND_ASWT) {
    absl::StrAppendFormat(&options, ", window %u", k.aswt_window());
  }
  if (k.kind() == pb::KERNEL_SCHEDULE_KIND_STREAM_K_DP) {
    absl::StrAppendFormat(&options, ", %u K splits", k.sk_k_splits());
  }
  if (k.kind() == pb::KERNEL_SCHEDULE_KIND_IDENTITY_SWIZZLE) {
    absl::StrAppendFormat(&options, ", swizzle <%u, %u>", k.swizzle_offset(),
                          k.swizzle_direction());
  }
  if (k.epilogue() == pb::EPILOGUE_RELU_GM) absl::StrAppend(&options, ", ReLU in FIXPIPE");
  if (k.epilogue() == pb::EPILOGUE_RELU_UB) absl::StrAppend(&options, ", ReLU on the AIV");
  absl::StrAppendFormat(&out, "%-14s %s\n", "", options);
}

// The tiling lines of a report: the CANN tiling that ran.
void AppendTilingLines(const pb::ExecuteResponse& r, std::string& out) {
  const pb::TilingResponse& t = r.tiling();
  // The key's fields: a listed layout's own (QuantBatchMatmulV3's kernel,
  // API level...), else the float kernels' model, full load and L0C path.
  std::string key_fields;
  for (const pb::KeyField& field : t.key().fields()) {
    if (field.value_name().empty()) continue;
    absl::StrAppend(&key_fields, key_fields.empty() ? "" : ", ", field.value_name());
  }
  if (t.key().fields().empty()) {
    key_fields = absl::StrCat(t.key().model_name(), ", ", t.key().full_load_name(), ", ",
                              t.key().l0c2out_name());
  }
  absl::StrAppendFormat(&out, "%-14s %s%s, key %u (%s), block_dim %u, %s\n", "tiling", t.strategy(),
                        r.explicit_tiling() ? " (explicit, from --tiling)" : "", t.tiling_key(),
                        key_fields, t.block_dim(), t.kernel_type_name());
  if (!t.quant_mode().empty())
    absl::StrAppendFormat(&out, "%-14s %s\n", "quant mode", t.quant_mode());
  std::string blocks;
  for (const char* name :
       {"baseM", "baseN", "baseK", "mL1", "nL1", "kL1", "skSingleCoreK", "usedCoreNum", "baseMN",
        "aivNum", "matmulTiling.baseM", "matmulTiling.baseN", "matmulTiling.baseK",
        "matmulTiling.usedCoreNum", "mmTilingData.baseM", "mmTilingData.baseN",
        "mmTilingData.baseK", "mmTilingData.usedCoreNum"}) {
    bool found = false;
    const uint64_t value = FieldValue(t, name, &found);
    if (found) absl::StrAppend(&blocks, blocks.empty() ? "" : " ", name, "=", value);
  }
  absl::StrAppendFormat(&out, "%-14s %s (%s)\n", "", blocks, t.tiling_struct());
}

// The inputs line of a report.
void AppendInputs(const pb::ExecuteResponse& r, std::string& out) {
  switch (r.input_source()) {
    case pb::INPUT_SOURCE_INLINE:
      absl::StrAppendFormat(&out, "%-14s inline (.npy files)\n", "inputs");
      break;
    case pb::INPUT_SOURCE_SEED:
      absl::StrAppendFormat(&out, "%-14s generated from seed %u, %s\n", "inputs", r.seed(),
                            r.tiling().quant_mode().empty()
                                ? "uniform in [-1, 1)"
                                : "codes drawn from each type's values, scales sized for y");
      break;
    default:
      absl::StrAppendFormat(&out, "%-14s none (timing only)\n", "inputs");
      break;
  }
}

// The tiling (or kernel schedule), platform and inputs lines of an Execute
// report. The platform is the response's (the tiling's, from a server that
// does not send it).
void AppendRunSummary(const pb::ExecuteResponse& r, std::string& out) {
  if (r.has_kernel_schedule()) {
    AppendKernelSchedule(r.kernel_schedule(), out);
  } else {
    AppendTilingLines(r, out);
  }
  const pb::ChipSpec& chip = r.has_platform() ? r.platform() : r.tiling().platform();
  absl::StrAppendFormat(&out, "%-14s %s%s: %u AIC, %u AIV, %u MHz\n", "platform", chip.name(),
                        chip.npu_arch().empty() ? "" : absl::StrCat(" (", chip.npu_arch(), ")"),
                        chip.aic_num(), chip.aiv_num(), chip.cube_freq_mhz());
  AppendInputs(r, out);
  // What the run assumed (GroupedMatmul: how its groups were split).
  for (const std::string& note : r.notes()) absl::StrAppendFormat(&out, "%-14s %s\n", "groups", note);
}

// The accuracy section: the emulated C against the fp64 reference.
void AppendAccuracy(const pb::AccuracyReport& a, bool grouped, std::string& out) {
  absl::StrAppendFormat(&out, "\naccuracy vs fp64 reference: %s\n", a.passed() ? "PASS" : "FAIL");
  absl::StrAppendFormat(&out, "  %-20s %.6g\n", "max abs error", a.max_abs_error());
  absl::StrAppendFormat(&out, "  %-20s %.6g\n", "max rel error", a.max_rel_error());
  // GroupedMatmul: the element of the worst expert's y.
  absl::StrAppendFormat(&out, "  %-20s %s[%d, %d]: bound %.6g, error / bound %.4g\n",
                        "worst element",
                        grouped ? absl::StrCat("y of group ", a.worst_batch(), " ") : "C",
                        a.worst_row(), a.worst_col(), a.error_bound(), a.worst_bound_ratio());
  absl::StrAppendFormat(&out, "  %-20s %u\n", "elements over bound", a.elements_over_bound());
  if (!a.bound_rule().empty()) {
    // QuantBatchMatmulV3: the path's own rule.
    absl::StrAppendFormat(&out, "  %-20s %s\n", "bound per element", a.bound_rule());
    return;
  }
  absl::StrAppendFormat(&out, "  %-20s %.3g * |ref| + 2 (k + 2) %.3g * sum|a b| + subnormal of C\n",
                        "bound per element", a.output_unit_roundoff(),
                        a.accumulation_unit_roundoff());
}

// The msprof columns: task duration, and per AIC (AIV, when any ran) pipe
// its average busy time over the cores that ran and its ratio to their
// average time, as msprof's op_summary shows them.
void AppendMsprof(const pb::MsprofSummary& m, std::string& out) {
  absl::StrAppendFormat(&out, "  %-20s %.3f us\n", "msprof task duration", m.task_duration_us());
  absl::StrAppendFormat(&out,
                        "  %-20s time %.3f us, mac %.3f us (%.3f), mte1 %.3f us (%.3f), "
                        "mte2 %.3f us (%.3f), fixpipe %.3f us (%.3f)\n",
                        absl::StrCat("aic (", m.aic_cores(), " cores)"), m.aic_time_us(),
                        m.aic_mac_time_us(), m.aic_mac_ratio(), m.aic_mte1_time_us(),
                        m.aic_mte1_ratio(), m.aic_mte2_time_us(), m.aic_mte2_ratio(),
                        m.aic_fixpipe_time_us(), m.aic_fixpipe_ratio());
  if (m.aiv_cores() == 0) return;
  absl::StrAppendFormat(&out,
                        "  %-20s time %.3f us, vec %.3f us (%.3f), mte2 %.3f us (%.3f), "
                        "mte3 %.3f us (%.3f)\n",
                        absl::StrCat("aiv (", m.aiv_cores(), " cores)"), m.aiv_time_us(),
                        m.aiv_vec_time_us(), m.aiv_vec_ratio(), m.aiv_mte2_time_us(),
                        m.aiv_mte2_ratio(), m.aiv_mte3_time_us(), m.aiv_mte3_ratio());
}

// The timing section: totals, traffic, the msprof columns and one row per
// core.
void AppendTiming(const pb::TimingReport& tm, std::string& out) {
  absl::StrAppendFormat(&out, "\ntiming (simulated)\n");
  absl::StrAppendFormat(&out, "  %-20s %u cycles = %.3f us\n", "predicted", tm.predicted_cycles(),
                        tm.predicted_time_us());
  absl::StrAppendFormat(&out, "  %-20s %.1f %%\n", "cube utilization",
                        100.0 * tm.cube_utilization());
  absl::StrAppendFormat(&out, "  %-20s %s\n", "bound by", tm.bound_resource());
  absl::StrAppendFormat(&out, "  %-20s %u AIC, %u AIV, %u rounds, %u simulated ops\n", "cores",
                        tm.aic_cores(), tm.aiv_cores(), tm.rounds(), tm.simulated_ops());
  const pb::TrafficBytes& b = tm.traffic();
  absl::StrAppendFormat(&out,
                        "  %-20s DDR read %s, L2 read %s, GM write %s, L1->L0 %s, L0C out %s, "
                        "UB in %s, UB out %s, workspace %s\n",
                        "bytes", Bytes(b.ddr_read_bytes()), Bytes(b.l2_read_bytes()),
                        Bytes(b.gm_write_bytes()), Bytes(b.l1_to_l0_bytes()),
                        Bytes(b.l0c_out_bytes()), Bytes(b.ub_in_bytes()), Bytes(b.ub_out_bytes()),
                        Bytes(b.workspace_bytes()));
  absl::StrAppendFormat(&out, "  %-20s DDR %u, L2 %u cycles\n", "channels busy",
                        tm.ddr_busy_cycles(), tm.l2_busy_cycles());
  AppendMsprof(tm.msprof(), out);
  absl::StrAppendFormat(&out, "\n  %-8s %6s %12s %12s %12s %12s %12s %12s %12s\n", "core", "units",
                        "finish", "MTE2", "MTE1", "CUBE", "FIXPIPE", "VEC", "MTE3");
  for (const pb::CoreTiming& core : tm.cores()) {
    const pb::PipeCycles& p = core.busy_cycles();
    const std::string name =
        absl::StrCat(core.kind() == pb::CORE_KIND_AIV ? "AIV " : "AIC ", core.core());
    absl::StrAppendFormat(&out, "  %-8s %6u %12u %12u %12u %12u %12u %12u %12u\n", name,
                          core.units(), core.finish_cycle(), p.mte2(), p.mte1(), p.cube(),
                          p.fixpipe(), p.vec(), p.mte3());
  }
  const pb::PipeCycles& total = tm.busy_cycles();
  absl::StrAppendFormat(&out, "  %-8s %6s %12s %12u %12u %12u %12u %12u %12u\n", "all", "", "",
                        total.mte2(), total.mte1(), total.cube(), total.fixpipe(), total.vec(),
                        total.mte3());
}

}  // namespace

namespace {

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<int64_t> ZipfHistogram(int64_t total, int64_t groups, double exponent, uint64_t seed) {
  std::vector<int64_t> histogram(static_cast<size_t>(std::max<int64_t>(groups, 0)), 0);
  if (groups <= 0 || total <= 0) return histogram;
  uint64_t state = seed ^ 0x5A49504Full;  // "ZIPF"
  // The experts' popularity ranks: a seeded Fisher-Yates permutation.
  std::vector<int64_t> rank(histogram.size());
  for (size_t i = 0; i < rank.size(); ++i) rank[i] = static_cast<int64_t>(i);
  for (size_t i = rank.size(); i > 1; --i) std::swap(rank[i - 1], rank[SplitMix(state) % i]);
  std::vector<double> cdf(histogram.size());
  double sum = 0;
  for (size_t i = 0; i < rank.size(); ++i) {
    sum += std::pow(static_cast<double>(rank[i] + 1), -exponent);
    cdf[i] = sum;
  }
  // Each token drawn on its own up to 2^22 tokens; beyond, the expected
  // shares with the largest remainders rounded up (the draw's noise is then
  // below a fraction of a percent anyway).
  constexpr int64_t kDrawnTokens = int64_t{1} << 22;
  if (total <= kDrawnTokens) {
    for (int64_t t = 0; t < total; ++t) {
      const double u = static_cast<double>(SplitMix(state) >> 11) * std::ldexp(1.0, -53) * sum;
      const size_t e = static_cast<size_t>(std::upper_bound(cdf.begin(), cdf.end(), u) -
                                           cdf.begin());
      ++histogram[std::min(e, histogram.size() - 1)];
    }
    return histogram;
  }
  std::vector<std::pair<double, size_t>> remainders;
  int64_t given = 0;
  double previous = 0;
  for (size_t i = 0; i < histogram.size(); ++i) {
    const double share = static_cast<double>(total) * (cdf[i] - previous) / sum;
    previous = cdf[i];
    histogram[i] = static_cast<int64_t>(std::floor(share));
    given += histogram[i];
    remainders.emplace_back(share - std::floor(share), i);
  }
  std::sort(remainders.rbegin(), remainders.rend());
  for (size_t i = 0; given < total && i < remainders.size(); ++i, ++given) {
    ++histogram[remainders[i].second];
  }
  return histogram;
}

std::string FormatExecute(const pb::ExecuteResponse& r) {
  std::string out;
  AppendRunSummary(r, out);
  if (r.has_accuracy()) {
    AppendAccuracy(r.accuracy(), absl::StartsWith(r.tiling().tiling_struct(), "GMM"), out);
  }
  AppendTiming(r.timing(), out);
  absl::StrAppendFormat(&out, "\n%-14s %.3f s on %u thread%s (server)\n", "host time",
                        r.host_seconds(), r.threads_used(), r.threads_used() == 1 ? "" : "s");
  return out;
}

}  // namespace npu::client
