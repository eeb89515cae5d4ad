#include "emulator/quant_numerics.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "absl/base/casts.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "emulator/quant_formats.h"
#include "server/tiling/status_macros.h"

namespace npu::emu {
namespace {

using tiling::DataType;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kU = 0x1p-24;     // fp32 unit roundoff
constexpr double kEta = 0x1p-150;  // fp32 absolute rounding error near zero
constexpr uint64_t kFixpipeScaleMask = 0xFFFFE000u;
constexpr uint64_t kFixpipeSignedOut = uint64_t{1} << 46;
constexpr int kFixpipeOffsetShift = 37;

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

// An fp32 with its low 13 mantissa bits cleared: the fixpipe's fp19.
float TruncateToFp19(float value) {
  return absl::bit_cast<float>(absl::bit_cast<uint32_t>(value) &
                               static_cast<uint32_t>(kFixpipeScaleMask));
}

// The operand families CANN pairs (CheckABDtypesSame): e4m3 and e5m2 mix.
enum class Family { kInt8, kInt4, kFloat8, kHiFloat8, kFloat4, kNone };
Family FamilyOf(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8:
      return Family::kInt8;
    case DataType::kInt4:
      return Family::kInt4;
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
      return Family::kFloat8;
    case DataType::kHiFloat8:
      return Family::kHiFloat8;
    case DataType::kFloat4E2M1:
      return Family::kFloat4;
    default:
      return Family::kNone;
  }
}
bool IsIntFamily(Family family) { return family == Family::kInt8 || family == Family::kInt4; }

std::string Name(DataType dtype) { return std::string(tiling::DataTypeName(dtype)); }

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(message); }

// "<field>: <actual> <unit>, expected <expected_text>" unless the counts match.
absl::Status ExpectCount(const std::string& field, uint64_t actual, uint64_t expected,
                         const std::string& expected_text, const std::string& unit = "values") {
  if (actual == expected) return absl::OkStatus();
  return Invalid(absl::StrCat(field, ": ", actual, " ", unit, ", expected ", expected_text));
}
// Per-tensor (1) or per-channel / per-token (`full`, named `full_name`).
absl::Status ExpectOneOr(const std::string& field, uint64_t actual, uint64_t full,
                         const std::string& full_name, const std::string& full_kind) {
  if (actual == 1 || actual == full) return absl::OkStatus();
  return Invalid(absl::StrCat(field, ": ", actual, " values, expected 1 (per-tensor) or ",
                              full_name, " = ", full, " (", full_kind, ")"));
}
absl::Status ExpectRepresentable(const std::string& field, const std::vector<float>& values,
                                 DataType dtype) {
  for (size_t i = 0; i < values.size(); ++i) {
    const float value = values[i];
    if (!std::isfinite(value)) {
      return Invalid(absl::StrCat(field, "[", i, "]: ", value, " is not finite"));
    }
    if (RoundToFormat(dtype, value) != static_cast<double>(value)) {
      return Invalid(
          absl::StrCat(field, "[", i, "]: ", value, " is not a ", Name(dtype), " value"));
    }
  }
  return absl::OkStatus();
}

bool IsFloatBias(const QuantOperands& op) {
  return op.has_bias && op.bias_dtype != DataType::kInt32;
}

absl::Status CheckBias(const QuantOperands& op, Family family, bool packed_scale) {
  if (!op.has_bias) return absl::OkStatus();
  switch (op.bias_dtype) {
    case DataType::kInt32:
      if (!IsIntFamily(family)) {
        return Invalid(absl::StrCat("bias_dtype: int32 needs int8 / int4 inputs, not ",
                                    Name(op.x1_dtype), " (CANN CheckBiasDtype)"));
      }
      return ExpectCount("bias_int32", op.bias_int32.size(), op.n, absl::StrCat("n = ", op.n));
    case DataType::kFloat32:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      if (IsIntFamily(family) && packed_scale) {
        return Invalid(absl::StrCat("bias_dtype: ", Name(op.bias_dtype),
                                    " with a uint64 / int64 scale; int inputs then take an int32 "
                                    "bias (CANN CheckBiasDtype)"));
      }
      if (!IsIntFamily(family) && op.bias_dtype != DataType::kFloat32) {
        return Invalid(absl::StrCat("bias_dtype: ", Name(op.bias_dtype), " with ",
                                    Name(op.x1_dtype),
                                    " inputs; only float32 (CANN CheckBiasDtype)"));
      }
      if (op.bias_dtype != DataType::kFloat32 && op.bias_dtype != op.y_dtype) {
        return Invalid(absl::StrCat("bias_dtype: ", Name(op.bias_dtype), " needs y_dtype ",
                                    Name(op.bias_dtype), ", not ", Name(op.y_dtype),
                                    " (CANN CheckBiasDtype)"));
      }
      RETURN_IF_ERROR(
          ExpectCount("bias_float", op.bias_float.size(), op.n, absl::StrCat("n = ", op.n)));
      return ExpectRepresentable("bias_float", op.bias_float, op.bias_dtype);
    default:
      return Invalid(absl::StrCat("bias_dtype: ", Name(op.bias_dtype),
                                  " is not int32, float32, float16 or bfloat16"));
  }
}

absl::Status CheckFloatOutput(const QuantOperands& op, const std::string& what) {
  if (op.y_dtype == DataType::kFloat16 || op.y_dtype == DataType::kBFloat16 ||
      op.y_dtype == DataType::kFloat32) {
    return absl::OkStatus();
  }
  return Invalid(absl::StrCat("y_dtype: ", Name(op.y_dtype), " with ", what,
                              "; expected float16, bfloat16 or float32"));
}

absl::StatusOr<QuantPath> ClassifyOperands(const QuantOperands& op) {
  if (op.m == 0) return Invalid("m: must be at least 1");
  if (op.k == 0) return Invalid("k: must be at least 1");
  if (op.n == 0) return Invalid("n: must be at least 1");
  const Family family = FamilyOf(op.x1_dtype);
  if (family == Family::kNone) {
    return Invalid(absl::StrCat("x1_dtype: ", Name(op.x1_dtype),
                                " is not an input type (int8, int4, float8_e4m3fn, float8_e5m2, "
                                "hifloat8, float4_e2m1)"));
  }
  if (FamilyOf(op.x2_dtype) != family) {
    return Invalid(absl::StrCat("x2_dtype: ", Name(op.x2_dtype), " does not pair with x1_dtype ",
                                Name(op.x1_dtype), " (CANN CheckABDtypesSame)"));
  }
  RETURN_IF_ERROR(ExpectCount("x1", op.x1.size(), QuantBytes(op.x1_dtype, op.m * op.k),
                              absl::StrCat(QuantBytes(op.x1_dtype, op.m * op.k), " for ",
                                           Name(op.x1_dtype), " [m, k] = [", op.m, ", ", op.k, "]"),
                              "bytes"));
  RETURN_IF_ERROR(ExpectCount("x2", op.x2.size(), QuantBytes(op.x2_dtype, op.k * op.n),
                              absl::StrCat(QuantBytes(op.x2_dtype, op.k * op.n), " for ",
                                           Name(op.x2_dtype), " [k, n] = [", op.k, ", ", op.n, "]"),
                              "bytes"));
  switch (op.y_dtype) {
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat32:
    case DataType::kInt8:
    case DataType::kInt32:
      break;
    default:
      return Invalid(
          absl::StrCat("y_dtype: ", Name(op.y_dtype),
                       " is not an output type (float16, bfloat16, float32, int8, int32; "
                       "CANN CheckDtypesInRange)"));
  }

  // MX: e8m0 scales on both sides.
  if (op.scale_dtype == DataType::kFloat8E8M0) {
    if (family != Family::kFloat8 && family != Family::kFloat4) {
      return Invalid(
          absl::StrCat("x1_dtype: MX (scale_dtype float8_e8m0) needs float8 or "
                       "float4_e2m1 inputs, not ",
                       Name(op.x1_dtype)));
    }
    if (op.group_k != 0) return Invalid("group_k: per-block groups do not apply to MX");
    const uint64_t k_groups = CeilDiv(op.k, kMxGroupSize);
    RETURN_IF_ERROR(ExpectCount("scale_e8m0", op.scale_e8m0.size(), k_groups * op.n,
                                absl::StrCat("ceil(k / 32) * n = ", k_groups * op.n)));
    if (!op.has_pertoken) return Invalid("pertoken: MX needs x1's e8m0 scale (pertoken_e8m0)");
    RETURN_IF_ERROR(ExpectCount("pertoken_e8m0", op.pertoken_e8m0.size(), op.m * k_groups,
                                absl::StrCat("m * ceil(k / 32) = ", op.m * k_groups)));
    if (op.has_bias && op.bias_dtype != DataType::kFloat32) {
      return Invalid(absl::StrCat("bias_dtype: ", Name(op.bias_dtype), " with MX; only float32"));
    }
    RETURN_IF_ERROR(CheckBias(op, family, false));
    RETURN_IF_ERROR(CheckFloatOutput(op, "MX"));
    return QuantPath::kMx;
  }
  if (family == Family::kFloat4) {
    return Invalid("scale_dtype: float4_e2m1 inputs need MX scales (float8_e8m0)");
  }

  // Per-block: fp32 scales per (group_m x group_k) block of x1 and
  // (group_k x group_n) block of x2.
  if (op.group_k != 0) {
    if (op.group_m == 0) return Invalid("group_m: must be at least 1 with group_k set");
    if (op.group_n == 0) return Invalid("group_n: must be at least 1 with group_k set");
    if (family != Family::kFloat8 && family != Family::kHiFloat8) {
      return Invalid(absl::StrCat("x1_dtype: per-block needs float8 or hifloat8 inputs, not ",
                                  Name(op.x1_dtype), " (CANN SUPPORT_PERTILE)"));
    }
    if (op.scale_dtype != DataType::kFloat32) {
      return Invalid(
          absl::StrCat("scale_dtype: per-block needs float32, not ", Name(op.scale_dtype)));
    }
    const uint64_t k_groups = CeilDiv(op.k, op.group_k);
    const uint64_t scale_count = k_groups * CeilDiv(op.n, op.group_n);
    RETURN_IF_ERROR(
        ExpectCount("scale", op.scale.size(), scale_count,
                    absl::StrCat("ceil(k / group_k) * ceil(n / group_n) = ", scale_count)));
    if (!op.has_pertoken) return Invalid("pertoken: per-block needs x1's scale");
    const uint64_t pertoken_count = CeilDiv(op.m, op.group_m) * k_groups;
    RETURN_IF_ERROR(
        ExpectCount("pertoken", op.pertoken.size(), pertoken_count,
                    absl::StrCat("ceil(m / group_m) * ceil(k / group_k) = ", pertoken_count)));
    RETURN_IF_ERROR(ExpectRepresentable("scale", op.scale, DataType::kFloat32));
    RETURN_IF_ERROR(ExpectRepresentable("pertoken", op.pertoken, DataType::kFloat32));
    if (op.has_bias) return Invalid("bias: per-block takes no bias (CANN checker)");
    RETURN_IF_ERROR(CheckFloatOutput(op, "per-block"));
    return QuantPath::kPerBlock;
  }

  // Per-tensor / per-channel x2 scale, optional per-token or double scale.
  const bool packed = op.scale_dtype == DataType::kUint64 || op.scale_dtype == DataType::kInt64;
  if (packed) {
    RETURN_IF_ERROR(ExpectOneOr("scale_words", op.scale_words.size(), op.n, "n", "per-channel"));
  } else if (op.scale_dtype == DataType::kFloat32 || op.scale_dtype == DataType::kBFloat16) {
    if (op.scale_dtype == DataType::kBFloat16 && !IsIntFamily(family)) {
      return Invalid(absl::StrCat("scale_dtype: bfloat16 needs int8 / int4 inputs, not ",
                                  Name(op.x1_dtype), " (CANN CheckScaleDtypeWithPertoken)"));
    }
    RETURN_IF_ERROR(ExpectOneOr("scale", op.scale.size(), op.n, "n", "per-channel"));
    RETURN_IF_ERROR(ExpectRepresentable("scale", op.scale, op.scale_dtype));
  } else {
    return Invalid(absl::StrCat("scale_dtype: ", Name(op.scale_dtype),
                                " is not float32, bfloat16, uint64, int64 or float8_e8m0"));
  }
  if (op.has_pertoken) {
    if (packed) {
      return Invalid(absl::StrCat("scale_dtype: ", Name(op.scale_dtype),
                                  " with a pertoken scale; expected float32 or bfloat16 (CANN "
                                  "CheckScaleDtypeWithPertoken)"));
    }
    if (IsIntFamily(family)) {
      RETURN_IF_ERROR(
          ExpectCount("pertoken", op.pertoken.size(), op.m, absl::StrCat("m = ", op.m)));
    } else {
      RETURN_IF_ERROR(ExpectOneOr("pertoken", op.pertoken.size(), op.m, "m", "per-token"));
    }
    RETURN_IF_ERROR(ExpectRepresentable("pertoken", op.pertoken, DataType::kFloat32));
  } else if (!packed && !(family == Family::kInt8)) {
    return Invalid(absl::StrCat("scale_dtype: ", Name(op.x1_dtype),
                                " inputs without a pertoken scale need a uint64 / int64 scale "
                                "(CANN CheckScalesDtype)"));
  } else if (!packed && op.y_dtype == DataType::kFloat16) {
    return Invalid(
        "scale_dtype: int8 with y float16 and no pertoken scale needs a uint64 / int64 "
        "scale (CANN CheckScalesDtype)");
  }
  RETURN_IF_ERROR(CheckBias(op, family, packed));

  if (op.y_dtype == DataType::kInt32) {
    if (family != Family::kInt8) {
      return Invalid(absl::StrCat("y_dtype: int32 needs int8 inputs, not ", Name(op.x1_dtype),
                                  " (CANN CheckDtypesInRange)"));
    }
    if (op.has_pertoken) return Invalid("y_dtype: int32 takes no pertoken scale");
    if (IsFloatBias(op)) return Invalid("bias_dtype: y int32 takes an int32 bias only");
    return QuantPath::kInt32Output;
  }
  if (op.y_dtype == DataType::kInt8 && !(packed && IsIntFamily(family))) {
    return Invalid(
        absl::StrCat("y_dtype: int8 needs int8 / int4 inputs and a uint64 / int64 "
                     "scale (the fixpipe's REQ8), not ",
                     Name(op.x1_dtype), " with ", Name(op.scale_dtype)));
  }
  if (op.y_dtype == DataType::kFloat32 && IsIntFamily(family)) {
    return Invalid(
        "y_dtype: float32 with int inputs is not modelled (CANN's fixpipe has no "
        "int32 -> float32 dequantisation mode)");
  }
  if (packed) return QuantPath::kFixpipe;
  const bool per_tensor = op.scale.size() == 1;
  const bool cube_int = IsIntFamily(family) && !op.has_pertoken;
  const bool cube_double_scale = !IsIntFamily(family) && op.has_pertoken && op.pertoken.size() == 1;
  if (per_tensor && !IsFloatBias(op) && (cube_int || cube_double_scale)) {
    return QuantPath::kFixpipe;
  }
  return QuantPath::kVectorEpilogue;
}

std::string_view PathName(QuantPath path) {
  switch (path) {
    case QuantPath::kFixpipe:
      return "the fixpipe";
    case QuantPath::kVectorEpilogue:
      return "the vector epilogue";
    case QuantPath::kPerBlock:
      return "the per-block epilogue";
    case QuantPath::kMx:
      return "the cube (MX)";
    case QuantPath::kInt32Output:
      return "nowhere (int32 output)";
  }
  return "?";
}

absl::StatusOr<QuantPath> Classify(const QuantOperands& op) {
  ASSIGN_OR_RETURN(const QuantPath path, ClassifyOperands(op));
  if (op.activation != QuantActivation::kNone && path != QuantPath::kVectorEpilogue) {
    return Invalid(absl::StrCat("activation: only the vector epilogue applies one; these "
                                "operands dequantize in ",
                                std::string(PathName(path))));
  }
  return path;
}

// The operands decoded once, with the per-column / per-row factors each
// path applies, on the device (fp32) and in the reference (fp64).
struct Prepared {
  QuantPath path = QuantPath::kFixpipe;
  bool int_inputs = false;
  std::vector<float> a;  // [m, k], exact
  std::vector<float> b;  // [k, n], exact
  // kFixpipe / kVectorEpilogue: the x2 scale per column as the device
  // applies it and as the reference does; the x1 factor per row (vector
  // path only; 1 when absent).
  std::vector<float> col_scale;
  std::vector<double> col_scale_ref;
  std::vector<float> row_scale;
  // Bias added to L0C before the products (int32, or fp32 on the fixpipe
  // and in MX) and bias added in the vector epilogue; zero when absent.
  std::vector<int32_t> bias_acc_int;
  std::vector<float> bias_acc_float;
  std::vector<float> bias_epilogue;
  bool has_epilogue_bias = false;
};

// Scale of column `j` from a 1- or n-element vector.
template <typename T>
T PerColumn(const std::vector<T>& values, uint64_t j) {
  return values.size() == 1 ? values[0] : values[j];
}

absl::StatusOr<Prepared> Prepare(const QuantOperands& op) {
  Prepared p;
  ASSIGN_OR_RETURN(p.path, Classify(op));
  p.int_inputs = IsIntFamily(FamilyOf(op.x1_dtype));
  p.a.resize(op.m * op.k);
  for (uint64_t i = 0; i < p.a.size(); ++i) {
    p.a[i] = static_cast<float>(DecodeQuant(op.x1_dtype, GetQuantCode(op.x1_dtype, op.x1, i)));
  }
  p.b.resize(op.k * op.n);
  for (uint64_t i = 0; i < p.b.size(); ++i) {
    p.b[i] = static_cast<float>(DecodeQuant(op.x2_dtype, GetQuantCode(op.x2_dtype, op.x2, i)));
  }
  p.bias_acc_int.assign(op.n, 0);
  p.bias_acc_float.assign(op.n, 0.0f);
  p.bias_epilogue.assign(op.n, 0.0f);
  if (op.has_bias) {
    if (op.bias_dtype == DataType::kInt32) {
      p.bias_acc_int = op.bias_int32;
    } else if (p.path == QuantPath::kFixpipe || p.path == QuantPath::kMx) {
      p.bias_acc_float = op.bias_float;
    } else {
      p.bias_epilogue = op.bias_float;
      p.has_epilogue_bias = true;
    }
  }
  if (p.path == QuantPath::kFixpipe || p.path == QuantPath::kVectorEpilogue) {
    p.col_scale.resize(op.n);
    p.col_scale_ref.resize(op.n);
    p.row_scale.assign(op.m, 1.0f);
    const bool packed = op.scale_dtype == DataType::kUint64 || op.scale_dtype == DataType::kInt64;
    for (uint64_t j = 0; j < op.n; ++j) {
      if (packed) {
        p.col_scale[j] = FixpipeScaleValue(PerColumn(op.scale_words, j));
        p.col_scale_ref[j] = p.col_scale[j];  // the word means its fp19 value
      } else if (p.path == QuantPath::kFixpipe) {
        // Cube kernels: per-tensor float scale (times the double scale's x1
        // value, as an fp32 product) truncated to fp19.
        const float x2_scale = op.scale[0];
        const float product = op.has_pertoken ? op.pertoken[0] * x2_scale : x2_scale;
        p.col_scale[j] = TruncateToFp19(product);
        p.col_scale_ref[j] = op.has_pertoken ? static_cast<double>(op.pertoken[0]) * x2_scale
                                             : static_cast<double>(x2_scale);
      } else {
        p.col_scale[j] = PerColumn(op.scale, j);
        p.col_scale_ref[j] = p.col_scale[j];
      }
    }
    if (p.path == QuantPath::kVectorEpilogue && op.has_pertoken) {
      for (uint64_t i = 0; i < op.m; ++i) p.row_scale[i] = PerColumn(op.pertoken, i);
    }
  }
  return p;
}

// ---- device -----------------------------------------------------------------
//
// Each fp32 step of the device is its own statement, so it is rounded on its
// own: the tree builds as ISO C++ (-std=c++17, CMAKE_CXX_EXTENSIONS OFF),
// where GCC does not contract a multiply and an add into an FMA, and clang
// only contracts within one expression. (In the accumulations a contraction
// would not matter: the products are exact.)

// The int32 L0C accumulator of element (i, j): bias plus the products,
// modulo 2^32 like the hardware.
int32_t IntAccumulator(const QuantOperands& op, const Prepared& p, uint64_t i, uint64_t j) {
  uint32_t acc = static_cast<uint32_t>(p.bias_acc_int[j]);
  for (uint64_t kk = 0; kk < op.k; ++kk) {
    const int32_t product =
        static_cast<int32_t>(p.a[i * op.k + kk]) * static_cast<int32_t>(p.b[kk * op.n + j]);
    acc += static_cast<uint32_t>(product);
  }
  return static_cast<int32_t>(acc);
}

// The fp32 L0C sum of the products of K range [k_begin, k_end) from `init`,
// in K order. Each product is exact in fp32.
float FloatAccumulator(const QuantOperands& op, const Prepared& p, uint64_t i, uint64_t j,
                       uint64_t k_begin, uint64_t k_end, float init) {
  float acc = init;
  for (uint64_t kk = k_begin; kk < k_end; ++kk) {
    const float product = p.a[i * op.k + kk] * p.b[kk * op.n + j];
    acc = acc + product;
  }
  return acc;
}

double CastOutput(const QuantOperands& op, uint64_t j, float value) {
  switch (op.y_dtype) {
    case DataType::kFloat32:
      return value;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return RoundToFormat(op.y_dtype, value, Overflow::kNonSaturate);
    case DataType::kInt8:
      return FixpipeToInt8(value, FixpipeOffset(PerColumn(op.scale_words, j)));
    default:
      assert(false && "CastOutput: int32 output has no cast");
      return value;
  }
}

// The activations' constants (gqmm_mix_online_dynamic.h): FastGelu's
// exponent factor, and GELU tanh's x / 0.044715 term and exponent factor
// -sqrt(8 / pi) * 0.044715.
constexpr double kFastGeluFactor = 1.702;
constexpr double kGeluCubic = 0.044715;
constexpr double kGeluSqrt8OverPi = 1.5957691;

// x / (exp(t) + 1) in fp32, each step rounded.
float SigmoidGate(float x, float t) {
  const float e = std::exp(t);
  const float d = e + 1.0f;
  return x / d;
}

float ActivateFp32(QuantActivation activation, float x) {
  switch (activation) {
    case QuantActivation::kNone:
      return x;
    case QuantActivation::kRelu:
      return x < 0.0f ? 0.0f : x;  // NaN passes
    case QuantActivation::kSilu: {
      const float t = -x;
      return SigmoidGate(x, t);
    }
    case QuantActivation::kFastGelu: {
      const float t = x * static_cast<float>(-kFastGeluFactor);
      return SigmoidGate(x, t);
    }
    case QuantActivation::kGeluTanh: {
      const float square = x * x;
      const float cube = square * x;
      const float linear = x * static_cast<float>(1.0 / kGeluCubic);
      const float inner = cube + linear;
      const float t = inner * static_cast<float>(-kGeluSqrt8OverPi * kGeluCubic);
      return SigmoidGate(x, t);
    }
  }
  return x;
}

float MxScaled(float partial, uint8_t ea, uint8_t eb) {
  if (ea == 0xFF || eb == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(partial, static_cast<int>(ea) + static_cast<int>(eb) - 254);
}

double DeviceElement(const QuantOperands& op, const Prepared& p, uint64_t i, uint64_t j) {
  switch (p.path) {
    case QuantPath::kInt32Output:
      return IntAccumulator(op, p, i, j);
    case QuantPath::kFixpipe:
    case QuantPath::kVectorEpilogue: {
      float value = p.int_inputs ? static_cast<float>(IntAccumulator(op, p, i, j))
                                 : FloatAccumulator(op, p, i, j, 0, op.k, p.bias_acc_float[j]);
      value = value * p.col_scale[j];
      if (p.path == QuantPath::kVectorEpilogue) {
        value = value * p.row_scale[i];
        if (p.has_epilogue_bias) value = value + p.bias_epilogue[j];
        value = ActivateFp32(op.activation, value);
      }
      return CastOutput(op, j, value);
    }
    case QuantPath::kPerBlock: {
      const uint64_t k_groups = CeilDiv(op.k, op.group_k);
      const uint64_t n_groups = CeilDiv(op.n, op.group_n);
      float acc = 0.0f;
      for (uint64_t g = 0; g < k_groups; ++g) {
        const uint64_t k_begin = g * op.group_k;
        const uint64_t k_end = std::min(op.k, k_begin + op.group_k);
        const float partial = FloatAccumulator(op, p, i, j, k_begin, k_end, 0.0f);
        const float scale =
            op.pertoken[(i / op.group_m) * k_groups + g] * op.scale[g * n_groups + j / op.group_n];
        const float term = partial * scale;
        acc = g == 0 ? term : acc + term;
      }
      return CastOutput(op, j, acc);
    }
    case QuantPath::kMx: {
      const uint64_t k_groups = CeilDiv(op.k, kMxGroupSize);
      float acc = p.bias_acc_float[j];
      for (uint64_t g = 0; g < k_groups; ++g) {
        const uint64_t k_begin = g * kMxGroupSize;
        const uint64_t k_end = std::min(op.k, k_begin + kMxGroupSize);
        const float partial = FloatAccumulator(op, p, i, j, k_begin, k_end, 0.0f);
        const float scaled =
            MxScaled(partial, op.pertoken_e8m0[i * k_groups + g], op.scale_e8m0[g * op.n + j]);
        acc = acc + scaled;
      }
      return CastOutput(op, j, acc);
    }
  }
  return 0;
}

// ---- reference and bound ----------------------------------------------------

// Exact sum and sum of magnitudes of the products over [k_begin, k_end).
struct ExactSum {
  double sum = 0;
  double abs_sum = 0;
};
ExactSum SumProducts(const QuantOperands& op, const Prepared& p, uint64_t i, uint64_t j,
                     uint64_t k_begin, uint64_t k_end) {
  ExactSum s;
  if (p.int_inputs) {  // exact in int64
    int64_t sum = 0, abs_sum = 0;
    for (uint64_t kk = k_begin; kk < k_end; ++kk) {
      const int64_t product =
          static_cast<int64_t>(p.a[i * op.k + kk]) * static_cast<int64_t>(p.b[kk * op.n + j]);
      sum += product;
      abs_sum += product < 0 ? -product : product;
    }
    s.sum = static_cast<double>(sum);
    s.abs_sum = static_cast<double>(abs_sum);
    return s;
  }
  for (uint64_t kk = k_begin; kk < k_end; ++kk) {
    const double product =
        static_cast<double>(p.a[i * op.k + kk]) * static_cast<double>(p.b[kk * op.n + j]);
    s.sum += product;
    s.abs_sum += std::fabs(product);
  }
  return s;
}

// A device value tracked against the exact one: `value` exact (the
// reference), `error` a bound on |device - value|, `magnitude` the size of
// the whole computation (for the fp64 allowance).
struct Tracked {
  double value = 0;
  double error = 0;
  double magnitude = 0;
};

double Gamma(uint64_t n) {
  const double nu = static_cast<double>(n) * kU;
  return nu < 1 ? nu / (1 - nu) : kInf;
}
// fp32 overflows from (2 - 2^-24) * 2^127 on.
constexpr double kFp32Overflow = 0x1.ffffffp127;
Tracked CheckFp32Range(Tracked t) {
  if (std::fabs(t.value) + t.error >= kFp32Overflow) t.error = kInf;
  return t;
}
// Rounding of an fp32 conversion or addition of an exact `addend`.
Tracked AddExact(Tracked t, double addend) {
  t.value += addend;
  t.magnitude += std::fabs(addend);
  t.error = t.error + kU * (std::fabs(t.value) + t.error) + kEta;
  return CheckFp32Range(t);
}
// Multiplication by a factor the device holds as `device` and the reference
// as `exact`.
Tracked Multiply(Tracked t, double device, double exact) {
  const double d = std::fabs(device);
  const double error = d * t.error + std::fabs(device - exact) * std::fabs(t.value) +
                       kU * d * (std::fabs(t.value) + t.error) + kEta;
  t.value *= exact;
  t.magnitude *= std::fabs(exact);
  t.error = error;
  return CheckFp32Range(t);
}
// An fp32 sum of `adds` exact terms started from `init`, in any order.
// Every product of the 4- / 8-bit inputs is a multiple of 2^-44 (HiFloat8's
// smallest, squared), so these sums never reach fp32's subnormals: no eta.
Tracked FloatSum(double init, const ExactSum& s, uint64_t adds) {
  Tracked t;
  t.value = init + s.sum;
  t.magnitude = std::fabs(init) + s.abs_sum;
  t.error = Gamma(adds) * t.magnitude;
  return CheckFp32Range(t);
}

// The activation of a tracked value: the exact function in fp64, and the
// error carried through its slope plus the fp32 evaluation's own (the
// header's bound).
Tracked Activate(Tracked t, QuantActivation activation) {
  if (activation == QuantActivation::kNone || activation == QuantActivation::kRelu) {
    if (activation == QuantActivation::kRelu) t.value = std::max(t.value, 0.0);
    return t;
  }
  const double x = t.value;
  const double big_x = std::fabs(x) + t.error;
  // The exponent is -factor * arg(x); SiLU's is exact (a negation).
  double factor = 1, slope = 1.1, roundings = 1;
  double arg = x, big_arg = big_x;
  if (activation == QuantActivation::kFastGelu) {
    factor = kFastGeluFactor;
    roundings = 2;  // the product and the fp32 constant
  }
  if (activation == QuantActivation::kGeluTanh) {
    factor = kGeluSqrt8OverPi;
    arg = x + kGeluCubic * x * x * x;
    big_arg = big_x + kGeluCubic * big_x * big_x * big_x;
    slope = 1.13;
    roundings = 6;
  }
  const double value = x / (std::exp(-factor * arg) + 1.0);
  const double reach = slope * t.error;
  t.error = reach + (roundings * factor * big_arg + 8) * kU * (std::fabs(value) + reach) +
            0x1p-120 * big_x + kEta;
  t.value = value;
  return CheckFp32Range(t);
}

// Error of the output cast, and the bound's fp64 allowance.
double FinishBound(const QuantOperands& op, const Tracked& t) {
  const double v = std::fabs(t.value);
  double error = t.error;
  switch (op.y_dtype) {
    case DataType::kFloat32:
      break;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      error = HalfCastErrorBound(op.y_dtype, v, error);
      if (error == kInf) return kInf;
      break;
    case DataType::kInt8:
      error += 0.5;
      break;
    case DataType::kInt32:
      return 0;
    default:
      break;
  }
  return error + 0x1p-50 * static_cast<double>(op.k + 8) * t.magnitude;
}

// Reference value (before the cast) and bound of element (i, j).
Tracked TrackElement(const QuantOperands& op, const Prepared& p, uint64_t i, uint64_t j) {
  switch (p.path) {
    case QuantPath::kInt32Output: {
      const ExactSum s = SumProducts(op, p, i, j, 0, op.k);
      Tracked t;
      t.value = s.sum + p.bias_acc_int[j];
      return t;
    }
    case QuantPath::kFixpipe:
    case QuantPath::kVectorEpilogue: {
      const ExactSum s = SumProducts(op, p, i, j, 0, op.k);
      Tracked t;
      if (p.int_inputs) {
        t.value = s.sum + p.bias_acc_int[j];  // exact int32 (no wrap assumed)
        t.magnitude = s.abs_sum + std::fabs(static_cast<double>(p.bias_acc_int[j]));
        t = AddExact(t, 0.0);  // int32 -> fp32
      } else {
        t = FloatSum(p.bias_acc_float[j], s, op.k);
      }
      t = Multiply(t, p.col_scale[j], p.col_scale_ref[j]);
      if (p.path == QuantPath::kVectorEpilogue) {
        if (p.row_scale[i] != 1.0f) t = Multiply(t, p.row_scale[i], p.row_scale[i]);
        if (p.has_epilogue_bias) t = AddExact(t, p.bias_epilogue[j]);
        t = Activate(t, op.activation);
      }
      return t;
    }
    case QuantPath::kPerBlock: {
      const uint64_t k_groups = CeilDiv(op.k, op.group_k);
      const uint64_t n_groups = CeilDiv(op.n, op.group_n);
      Tracked total;
      double term_sizes = 0;
      for (uint64_t g = 0; g < k_groups; ++g) {
        const uint64_t k_begin = g * op.group_k;
        const uint64_t k_end = std::min(op.k, k_begin + op.group_k);
        const float s1 = op.pertoken[(i / op.group_m) * k_groups + g];
        const float s2 = op.scale[g * n_groups + j / op.group_n];
        const float device_scale = s1 * s2;
        const double exact_scale = static_cast<double>(s1) * s2;  // exact: 48 bits
        Tracked term = FloatSum(0.0, SumProducts(op, p, i, j, k_begin, k_end), k_end - k_begin);
        term = Multiply(term, device_scale, exact_scale);
        total.value += term.value;
        total.error += term.error;
        total.magnitude += term.magnitude;
        term_sizes += std::fabs(term.value) + term.error;
      }
      total.error += Gamma(k_groups - 1) * term_sizes + static_cast<double>(k_groups) * kEta;
      return CheckFp32Range(total);
    }
    case QuantPath::kMx: {
      const uint64_t k_groups = CeilDiv(op.k, kMxGroupSize);
      Tracked t;
      t.value = p.bias_acc_float[j];
      t.magnitude = std::fabs(t.value);
      for (uint64_t g = 0; g < k_groups; ++g) {
        const uint64_t k_begin = g * kMxGroupSize;
        const uint64_t k_end = std::min(op.k, k_begin + kMxGroupSize);
        const ExactSum s = SumProducts(op, p, i, j, k_begin, k_end);
        const uint8_t ea = op.pertoken_e8m0[i * k_groups + g];
        const uint8_t eb = op.scale_e8m0[g * op.n + j];
        if (ea == 0xFF || eb == 0xFF) {
          t.value = std::numeric_limits<double>::quiet_NaN();
          continue;
        }
        const int exponent = static_cast<int>(ea) + static_cast<int>(eb) - 254;
        t.value += std::ldexp(s.sum, exponent);
        t.magnitude += std::ldexp(s.abs_sum, exponent);
      }
      t.error =
          Gamma(kMxGroupSize + k_groups) * t.magnitude + 2 * static_cast<double>(k_groups) * kEta;
      return CheckFp32Range(t);
    }
  }
  return {};
}

}  // namespace

double HalfCastErrorBound(DataType y_dtype, double value, double error) {
  const double v = std::fabs(value);
  if (y_dtype == DataType::kFloat16) {
    if (v + error >= 65520.0) return kInf;  // 65504 + half an ulp
    return error + 0x1p-11 * (v + error) + 0x1p-25;
  }
  if (v + error >= 0x1.ffp127) return kInf;  // bfloat16's largest + half an ulp
  return error + 0x1p-8 * (v + error) + 0x1p-134;
}

double FixpipeToInt8(float value, int offset) {
  if (std::isnan(value)) return 0;
  const double int9 = std::clamp(RoundHalfEven(value), -256.0, 255.0);
  return std::clamp(int9 + offset, -128.0, 127.0);
}

absl::StatusOr<QuantPath> ClassifyQuantPath(const QuantOperands& operands) {
  return Classify(operands);
}

uint64_t PackFixpipeScale(float scale, float offset) {
  const int64_t int9 = static_cast<int64_t>(
      std::clamp(RoundHalfEven(std::isnan(offset) ? 0.0 : offset), -256.0, 255.0));
  return (absl::bit_cast<uint32_t>(scale) & kFixpipeScaleMask) | kFixpipeSignedOut |
         ((static_cast<uint64_t>(int9) & 0x1FF) << kFixpipeOffsetShift);
}

float FixpipeScaleValue(uint64_t word) {
  return absl::bit_cast<float>(static_cast<uint32_t>(word & kFixpipeScaleMask));
}

int FixpipeOffset(uint64_t word) {
  const int field = static_cast<int>((word >> kFixpipeOffsetShift) & 0x1FF);
  return field >= 256 ? field - 512 : field;
}

absl::StatusOr<std::vector<double>> QuantMatmulDevice(const QuantOperands& operands) {
  ASSIGN_OR_RETURN(const Prepared p, Prepare(operands));
  std::vector<double> c(operands.m * operands.n);
  for (uint64_t i = 0; i < operands.m; ++i) {
    for (uint64_t j = 0; j < operands.n; ++j) {
      c[i * operands.n + j] = DeviceElement(operands, p, i, j);
    }
  }
  return c;
}

absl::StatusOr<std::vector<double>> QuantMatmulReference(const QuantOperands& operands) {
  ASSIGN_OR_RETURN(const Prepared p, Prepare(operands));
  std::vector<double> c(operands.m * operands.n);
  for (uint64_t i = 0; i < operands.m; ++i) {
    for (uint64_t j = 0; j < operands.n; ++j) {
      c[i * operands.n + j] = TrackElement(operands, p, i, j).value;
    }
  }
  return c;
}

absl::StatusOr<std::vector<double>> QuantMatmulErrorBound(const QuantOperands& operands) {
  ASSIGN_OR_RETURN(const Prepared p, Prepare(operands));
  std::vector<double> bound(operands.m * operands.n);
  for (uint64_t i = 0; i < operands.m; ++i) {
    for (uint64_t j = 0; j < operands.n; ++j) {
      bound[i * operands.n + j] = FinishBound(operands, TrackElement(operands, p, i, j));
    }
  }
  return bound;
}

double ToOutputRange(const QuantOperands& operands, uint64_t column, double value) {
  if (operands.y_dtype != DataType::kInt8) return value;
  const int offset = FixpipeOffset(PerColumn(operands.scale_words, column));
  return std::clamp(std::clamp(value, -256.0, 255.0) + offset, -128.0, 127.0);
}

}  // namespace npu::emu
