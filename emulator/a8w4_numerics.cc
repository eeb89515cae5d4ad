#include "emulator/a8w4_numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "emulator/accuracy.h"
#include "emulator/numerics.h"
#include "emulator/quant_formats.h"
#include "emulator/quant_numerics.h"
#include "server/tiling/int_math.h"
#include "server/tiling/status_macros.h"

namespace npu::emu {
namespace {

using tiling::CeilDiv;
using tiling::DataType;

constexpr double kInf = std::numeric_limits<double>::infinity();
// MX-A8W4's weight and bias are 2^-6 of their values in the cube; the
// fixpipe's deqScalar (0x42800000) multiplies by 64 again.
constexpr float kMxA8W4Factor = 64.0f;
// A K of 2^17 or more may wrap A8W4's int32 sum (|x w| <= 2^14).
constexpr uint64_t kA8W4WrapK = uint64_t{1} << 17;

std::string Name(DataType dtype) { return std::string(tiling::DataTypeName(dtype)); }

absl::Status ExpectCount(const std::string& field, uint64_t actual, uint64_t expected,
                         const std::string& expected_text) {
  if (actual == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", actual, " values, expected ", expected_text));
}

absl::Status CheckDims(uint64_t m, uint64_t k, uint64_t n) {
  if (m == 0) return absl::InvalidArgumentError("m: must be at least 1");
  if (k == 0) return absl::InvalidArgumentError("k: must be at least 1");
  if (n == 0) return absl::InvalidArgumentError("n: must be at least 1");
  return absl::OkStatus();
}

absl::Status CheckY(DataType y) {
  if (y == DataType::kFloat16 || y == DataType::kBFloat16) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("y_dtype: ", Name(y), "; the kernel writes float16 or bfloat16"));
}

double Int4At(const std::vector<uint8_t>& codes, uint64_t index) {
  return DecodeQuant(DataType::kInt4, GetQuantCode(DataType::kInt4, codes, index));
}

// The vector epilogue's operands on `weight8`, the int8 weight in L1.
QuantOperands A8W4Epilogue(const A8W4Operands& a, std::vector<uint8_t> weight8) {
  QuantOperands op;
  op.m = a.m;
  op.k = a.k;
  op.n = a.n;
  op.x1_dtype = op.x2_dtype = DataType::kInt8;
  op.x1 = a.x;
  op.x2 = std::move(weight8);
  op.scale_dtype = DataType::kFloat32;
  op.scale = a.scale;
  op.has_pertoken = true;
  op.pertoken = a.per_token_scale;
  op.has_bias = a.has_bias;
  op.bias_dtype = DataType::kFloat32;
  op.bias_float = a.bias;
  op.y_dtype = a.y_dtype;
  return op;
}

// The widening's error of w * s (the file comment's d_k).
double WideningError(double q) {
  if (!std::isfinite(q)) return kInf;
  if (q == std::floor(q) && q >= -128 && q <= 127) return 0;  // exact in float16 and int8
  if (std::fabs(q) > 127) return kInf;
  return 0x1p-11 * std::fabs(q) + 0x1p-25 + 0.5;
}

// The scaled operands of MX-A8W4's steps 1-3 (fp32 out); `device_bias`
// rounds bias * 2^-6 to the bias dtype as the AIV does, else keeps it exact.
QuantOperands MxA8W4Scaled(const MxA8W4Operands& a, bool device_bias) {
  QuantOperands op;
  op.m = a.m;
  op.k = a.k;
  op.n = a.n;
  op.x1_dtype = op.x2_dtype = DataType::kFloat8E4M3;
  op.x1 = a.x;
  op.x2.assign(a.k * a.n, 0);
  for (uint64_t i = 0; i < a.k * a.n; ++i) {
    op.x2[i] =
        MxA8W4WeightCode(static_cast<uint8_t>(GetQuantCode(DataType::kFloat4E2M1, a.weight, i)));
  }
  op.scale_dtype = DataType::kFloat8E8M0;
  op.scale_e8m0 = a.weight_scale;
  op.has_pertoken = true;
  op.pertoken_e8m0 = a.x_scale;
  op.has_bias = a.has_bias;
  op.bias_dtype = DataType::kFloat32;
  for (float b : a.bias) {
    const float scaled = b / kMxA8W4Factor;
    op.bias_float.push_back(device_bias ? RoundTo(a.bias_dtype, scaled) : scaled);
  }
  op.y_dtype = DataType::kFloat32;
  return op;
}

}  // namespace

absl::Status CheckA8W4Operands(const A8W4Operands& a) {
  RETURN_IF_ERROR(CheckDims(a.m, a.k, a.n));
  RETURN_IF_ERROR(CheckY(a.y_dtype));
  if (a.x.size() != a.m * a.k) {
    return absl::InvalidArgumentError(
        absl::StrCat("x: ", a.x.size(), " bytes, expected m * k = ", a.m * a.k));
  }
  if (a.weight.size() != QuantBytes(DataType::kInt4, a.k * a.n)) {
    return absl::InvalidArgumentError(absl::StrCat("weight: ", a.weight.size(), " bytes, expected ",
                                                   QuantBytes(DataType::kInt4, a.k * a.n),
                                                   " for int4 [k, n]"));
  }
  if (a.group_size == 0) return absl::InvalidArgumentError("group_size: must be at least 1");
  const uint64_t groups = CeilDiv(a.k, a.group_size);
  RETURN_IF_ERROR(ExpectCount("antiquant_scale", a.antiquant_scale.size(), groups * a.n,
                              absl::StrCat("ceil(k / group_size) * n = ", groups * a.n)));
  for (size_t i = 0; i < a.antiquant_scale.size(); ++i) {
    const float s = a.antiquant_scale[i];
    if (!(RoundTo(DataType::kFloat16, s) == s)) {
      return absl::InvalidArgumentError(
          absl::StrCat("antiquant_scale[", i, "]: ", s, " is not a float16 value"));
    }
  }
  RETURN_IF_ERROR(ExpectCount("scale", a.scale.size(), a.n, absl::StrCat("n = ", a.n)));
  RETURN_IF_ERROR(
      ExpectCount("per_token_scale", a.per_token_scale.size(), a.m, absl::StrCat("m = ", a.m)));
  if (a.has_bias) {
    RETURN_IF_ERROR(ExpectCount("bias", a.bias.size(), a.n, absl::StrCat("n = ", a.n)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint8_t>> A8W4WeightInL1(const A8W4Operands& a) {
  RETURN_IF_ERROR(CheckA8W4Operands(a));
  std::vector<uint8_t> out(a.k * a.n, 0);
  for (uint64_t kk = 0; kk < a.k; ++kk) {
    const float* s = &a.antiquant_scale[(kk / a.group_size) * a.n];
    for (uint64_t j = 0; j < a.n; ++j) {
      // int4 -> float16 is exact; the float16 product rounds once (the fp32
      // product of a 4-bit integer and a float16 is exact).
      const float h =
          RoundTo(DataType::kFloat16, static_cast<float>(Int4At(a.weight, kk * a.n + j)) * s[j]);
      double r = std::isnan(h) ? 0.0 : RoundHalfEven(h);
      r = std::clamp(r, -128.0, 127.0);
      out[kk * a.n + j] = static_cast<uint8_t>(static_cast<int8_t>(r));
    }
  }
  return out;
}

absl::StatusOr<std::vector<double>> A8W4Device(const A8W4Operands& a) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> weight8, A8W4WeightInL1(a));
  const QuantOperands op = A8W4Epilogue(a, std::move(weight8));
  ASSIGN_OR_RETURN(const QuantPath path, ClassifyQuantPath(op));
  if (path != QuantPath::kVectorEpilogue) {
    return absl::InternalError("A8W4's dequantization is not the vector epilogue's");
  }
  return QuantMatmulDevice(op);
}

absl::StatusOr<std::vector<double>> A8W4Reference(const A8W4Operands& a) {
  RETURN_IF_ERROR(CheckA8W4Operands(a));
  std::vector<double> out(a.m * a.n, 0.0);
  for (uint64_t i = 0; i < a.m; ++i) {
    for (uint64_t j = 0; j < a.n; ++j) {
      double sum = 0;
      for (uint64_t kk = 0; kk < a.k; ++kk) {
        const double w = Int4At(a.weight, kk * a.n + j) *
                         static_cast<double>(a.antiquant_scale[(kk / a.group_size) * a.n + j]);
        sum += static_cast<double>(static_cast<int8_t>(a.x[i * a.k + kk])) * w;
      }
      out[i * a.n + j] =
          static_cast<double>(a.per_token_scale[i]) * static_cast<double>(a.scale[j]) * sum +
          (a.has_bias ? static_cast<double>(a.bias[j]) : 0.0);
    }
  }
  return out;
}

absl::StatusOr<std::vector<double>> A8W4ErrorBound(const A8W4Operands& a) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> weight8, A8W4WeightInL1(a));
  const QuantOperands op = A8W4Epilogue(a, std::move(weight8));
  ASSIGN_OR_RETURN(std::vector<double> bound, QuantMatmulErrorBound(op));
  if (a.k >= kA8W4WrapK) {
    std::fill(bound.begin(), bound.end(), kInf);
    return bound;
  }
  // d_k per weight element.
  std::vector<double> widening(a.k * a.n), magnitude(a.k * a.n);
  for (uint64_t kk = 0; kk < a.k; ++kk) {
    for (uint64_t j = 0; j < a.n; ++j) {
      const double q = Int4At(a.weight, kk * a.n + j) *
                       static_cast<double>(a.antiquant_scale[(kk / a.group_size) * a.n + j]);
      widening[kk * a.n + j] = WideningError(q);
      magnitude[kk * a.n + j] = std::fabs(q);
    }
  }
  const double u_y = UnitRoundoff(a.y_dtype);
  for (uint64_t i = 0; i < a.m; ++i) {
    for (uint64_t j = 0; j < a.n; ++j) {
      double d = 0, s = 0;
      for (uint64_t kk = 0; kk < a.k; ++kk) {
        const double x = std::fabs(static_cast<double>(static_cast<int8_t>(a.x[i * a.k + kk])));
        if (widening[kk * a.n + j] > 0) d += x * widening[kk * a.n + j];
        s += x * magnitude[kk * a.n + j];
      }
      const double ct =
          std::fabs(static_cast<double>(a.scale[j]) * static_cast<double>(a.per_token_scale[i]));
      const double b = a.has_bias ? std::fabs(static_cast<double>(a.bias[j])) : 0.0;
      double& e = bound[i * a.n + j];
      e += ct * d * (1 + u_y + 0x1p-20) + 0x1p-50 * static_cast<double>(a.k + 8) * (ct * s + b);
      if (std::isnan(e)) e = kInf;
    }
  }
  return bound;
}

uint8_t MxA8W4WeightCode(uint8_t nibble) {
  // s e1 e0 m -> s 0 0 e1 e0 m 0 0: the sign stays bit 7, the exponent and
  // mantissa bits move two places up from the nibble's low three.
  const uint8_t sign = static_cast<uint8_t>((nibble & 0x8) << 4);
  return static_cast<uint8_t>(sign | ((nibble & 0x7) << 2));
}

absl::Status CheckMxA8W4Operands(const MxA8W4Operands& a) {
  RETURN_IF_ERROR(CheckDims(a.m, a.k, a.n));
  RETURN_IF_ERROR(CheckY(a.y_dtype));
  if (a.x.size() != a.m * a.k) {
    return absl::InvalidArgumentError(
        absl::StrCat("x: ", a.x.size(), " bytes, expected m * k = ", a.m * a.k));
  }
  if (a.weight.size() != QuantBytes(DataType::kFloat4E2M1, a.k * a.n)) {
    return absl::InvalidArgumentError(absl::StrCat("weight: ", a.weight.size(), " bytes, expected ",
                                                   QuantBytes(DataType::kFloat4E2M1, a.k * a.n),
                                                   " for float4_e2m1 [k, n]"));
  }
  const uint64_t groups = CeilDiv(a.k, kMxGroupSize);
  RETURN_IF_ERROR(ExpectCount("x_scale", a.x_scale.size(), a.m * groups,
                              absl::StrCat("m * ceil(k / 32) = ", a.m * groups)));
  RETURN_IF_ERROR(ExpectCount("weight_scale", a.weight_scale.size(), groups * a.n,
                              absl::StrCat("ceil(k / 32) * n = ", groups * a.n)));
  if (a.has_bias) {
    if (a.bias_dtype != a.y_dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("bias_dtype: ", Name(a.bias_dtype), ", expected y's ", Name(a.y_dtype)));
    }
    RETURN_IF_ERROR(ExpectCount("bias", a.bias.size(), a.n, absl::StrCat("n = ", a.n)));
    for (size_t j = 0; j < a.bias.size(); ++j) {
      if (!(RoundTo(a.bias_dtype, a.bias[j]) == a.bias[j])) {
        return absl::InvalidArgumentError(
            absl::StrCat("bias[", j, "]: ", a.bias[j], " is not a ", Name(a.bias_dtype), " value"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> MxA8W4Device(const MxA8W4Operands& a) {
  RETURN_IF_ERROR(CheckMxA8W4Operands(a));
  const QuantOperands op = MxA8W4Scaled(a, /*device_bias=*/true);
  ASSIGN_OR_RETURN(std::vector<double> out, QuantMatmulDevice(op));
  for (double& v : out) {
    v = RoundToFormat(a.y_dtype, static_cast<float>(v) * kMxA8W4Factor, Overflow::kNonSaturate);
  }
  return out;
}

absl::StatusOr<std::vector<double>> MxA8W4Reference(const MxA8W4Operands& a) {
  RETURN_IF_ERROR(CheckMxA8W4Operands(a));
  ASSIGN_OR_RETURN(std::vector<double> out,
                   QuantMatmulReference(MxA8W4Scaled(a, /*device_bias=*/false)));
  for (double& v : out) v *= kMxA8W4Factor;
  return out;
}

absl::StatusOr<std::vector<double>> MxA8W4ErrorBound(const MxA8W4Operands& a) {
  RETURN_IF_ERROR(CheckMxA8W4Operands(a));
  const QuantOperands device = MxA8W4Scaled(a, /*device_bias=*/true);
  const QuantOperands exact = MxA8W4Scaled(a, /*device_bias=*/false);
  ASSIGN_OR_RETURN(std::vector<double> bound, QuantMatmulErrorBound(device));
  ASSIGN_OR_RETURN(const std::vector<double> reference, QuantMatmulReference(exact));
  for (uint64_t i = 0; i < a.m; ++i) {
    for (uint64_t j = 0; j < a.n; ++j) {
      const double d = a.has_bias ? std::fabs(static_cast<double>(device.bias_float[j]) -
                                              static_cast<double>(exact.bias_float[j]))
                                  : 0.0;
      const uint64_t at = i * a.n + j;
      const double e = kMxA8W4Factor * (bound[at] + 2 * d);
      bound[at] = std::isnan(e) ? kInf : HalfCastErrorBound(a.y_dtype, kMxA8W4Factor * reference[at], e);
    }
  }
  return bound;
}

}  // namespace npu::emu
