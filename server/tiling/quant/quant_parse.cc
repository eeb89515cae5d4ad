#include "server/tiling/quant/quant_parse.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/tiling/batch_shape.h"
#include "server/tiling/quant/quant_dtype.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::quant {
namespace {

using Dims = std::vector<int64_t>;

// CANN reads a dim past a shape's rank (gert::Shape::GetDim) as INT64_MIN; a
// few checks index shapes before their rank is known, and this keeps their
// outcome CANN's.
constexpr int64_t kMissingDim = std::numeric_limits<int64_t>::min();
// Every x1 / x2 dim lies in [1, INT32_MAX] (CheckShapeInBoundary).
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();
// x1 and x2 have 2 to 6 dims: up to four batch dims in front of the matrix.
constexpr size_t kMinRank = 2;
constexpr size_t kMaxRank = 6;
// Per-block scales cover 128 x 128 tiles of x2 and groupSizeM x 128 of x1.
constexpr uint64_t kPerBlockSize = 128;
// MX scales: one float8_e8m0 per 32 elements of k, stored as pairs, so the
// scale's k dim is ceil(k / 64) and its last dim 2; groups are (1, 1, 32).
constexpr uint64_t kMxScaleKSpan = 64;
constexpr uint64_t kMxPairDim = 2;
constexpr uint64_t kMxGroupK = 32;
// A FRACTAL_NZ x2 whose matrix is [rows, cols] is stored [..., ceil(cols /
// 32 or 64), ceil(rows / 16), 16, 32 or 64] (4 to 8 dims): fractals of 16
// rows of 32 one-byte or 64 4-bit elements (CheckShape4WeightNz).
constexpr size_t kNzMinRank = 4;
constexpr size_t kNzMaxRank = 8;
constexpr uint64_t kNzRows = 16;
constexpr uint64_t kNzCols8Bit = 32;
constexpr uint64_t kNzCols4Bit = 64;
// group_size packs k | n << 16 | m << 32, 16 bits each.
constexpr uint64_t kGroupFieldMask = 0xFFFF;

absl::Status Refuse(absl::string_view field, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", rule));
}

std::string ShapeText(const Dims& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// The dim `from_end` places from the end (1: the last), CANN's way.
int64_t DimFromEnd(const Dims& dims, size_t from_end) {
  return from_end >= 1 && from_end <= dims.size() ? dims[dims.size() - from_end] : kMissingDim;
}

int64_t DimAt(const Dims& dims, size_t index) {
  return index < dims.size() ? dims[index] : kMissingDim;
}

// CANN compares signed dims with its unsigned sizes after a cast; so do we.
bool DimIs(int64_t dim, uint64_t size) { return static_cast<uint64_t>(dim) == size; }

// Division rounded up that cannot overflow; `value` when `divisor` is 0
// (opbase's ops::CeilDiv, which CANN's checks use on unchecked sizes).
uint64_t CeilDivExact(uint64_t value, uint64_t divisor) {
  if (divisor == 0) return value;
  return value / divisor + (value % divisor != 0 ? 1 : 0);
}

// Product of the dims in front of the last two (1 when there are none), in
// CANN's wrapping uint64 arithmetic (GetBatchSize).
uint64_t BatchProduct(const Dims& dims) {
  uint64_t product = 1;
  for (size_t i = 0; i + 2 < dims.size(); ++i) product *= static_cast<uint64_t>(dims[i]);
  return product;
}

// The up-to-four dims in front of the last two, right-aligned (slot 3 is
// the one next to the matrix), missing ones 1 (AnalyzeBatchInfo).
std::array<uint64_t, kMaxBatchDims> BatchSlots(const Dims& dims) {
  const size_t batch_dims = dims.size() > 2 ? dims.size() - 2 : 0;
  return UnsignedSlots(RightAligned(absl::MakeConstSpan(dims).first(batch_dims)));
}

bool IsOneOf(GeDtype dtype, std::initializer_list<GeDtype> dtypes) {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}
bool IsInt4OrInt8(GeDtype d) { return IsOneOf(d, {GeDtype::kInt4, GeDtype::kInt8}); }
// The low-precision float inputs, which take no offset (ExtraInputCheck).
bool IsLowFloat(GeDtype d) { return IsFp8OrHif8(d) || d == GeDtype::kFloat4E2M1; }

// x1 and x2 must come from the same family; the two float8 formats mix.
int DtypeFamily(GeDtype d) {
  return IsFp8(d) ? static_cast<int>(GeDtype::kFloat8E4M3) : static_cast<int>(d);
}

// The request as CANN's checks see it, and the facts as they are built.
// CANN reads x1, x2 and the scale by their origin shapes, and the optional
// inputs, y and the NZ weight by their storage shapes.
struct ParseState {
  const QuantRequest& request;
  const Dims& x1;
  const Dims& x2;
  const Dims& scale;
  const Dims& x2_storage;
  const Dims& y;
  const Dims* pertoken;  // null when absent
  const Dims* bias;
  const Dims* offset;
  QuantFacts facts;
};

const Dims& StorageOf(const QuantTensor& tensor) {
  return tensor.storage.empty() ? tensor.origin : tensor.storage;
}

// Names the request field behind x1's dim `index`, for messages.
absl::string_view X1DimField(const ParseState& s, size_t index) {
  const size_t rank = s.x1.size();
  if (index + 1 == rank) return s.facts.trans_a ? "problem.m" : "problem.k";
  if (index + 2 == rank) return s.facts.trans_a ? "problem.k" : "problem.m";
  return "problem.batch_a";
}

absl::string_view X2DimField(const ParseState& s, size_t index) {
  const size_t rank = s.x2.size();
  if (index + 1 == rank) return s.facts.trans_b ? "problem.k" : "problem.n";
  if (index + 2 == rank) return s.facts.trans_b ? "problem.n" : "problem.k";
  return "problem.batch_b";
}

// ---------------------------------------------------------------------------
// Dtype checks (checker's CheckDtype, in its order).

// CheckDtypesInRange: the quantized input types, the output types, int32
// output for int8 only, and a float offset.
absl::Status CheckDtypesInRange(const ParseState& s) {
  const QuantFacts& f = s.facts;
  constexpr absl::string_view kInputs =
      "int4, int8, float8_e4m3fn, float8_e5m2, hifloat8 or float4_e2m1";
  const auto is_input = [](GeDtype d) {
    return IsOneOf(d, {GeDtype::kInt4, GeDtype::kInt8, GeDtype::kFloat8E4M3, GeDtype::kFloat8E5M2,
                       GeDtype::kHiFloat8, GeDtype::kFloat4E2M1});
  };
  if (!is_input(f.x1)) {
    return Refuse("problem.dtype_a",
                  absl::StrCat("x1 dtype ", GeDtypeName(f.x1), " is not one of ", kInputs));
  }
  if (!is_input(f.x2)) {
    return Refuse("problem.dtype_b",
                  absl::StrCat("x2 dtype ", GeDtypeName(f.x2), " is not one of ", kInputs));
  }
  if (!IsOneOf(f.y, {GeDtype::kInt8, GeDtype::kFloat16, GeDtype::kBFloat16, GeDtype::kFloat,
                     GeDtype::kInt32})) {
    return Refuse("problem.dtype_c",
                  absl::StrCat("output dtype ", GeDtypeName(f.y),
                               " is not one of int8, float16, bfloat16, float32 or int32"));
  }
  if (f.y == GeDtype::kInt32 && (f.x1 != GeDtype::kInt8 || f.x2 != GeDtype::kInt8)) {
    return Refuse("problem.dtype_c", "an int32 output needs int8 x1 and x2");
  }
  if (s.offset != nullptr && s.request.offset.dtype != GeDtype::kFloat) {
    return Refuse("quant.offset",
                  absl::StrCat("dtype ", GeDtypeName(s.request.offset.dtype), " must be float32"));
  }
  return absl::OkStatus();
}

// CheckABDtypes: one family on both sides, and float4 only with a pertoken
// scale (MX).
absl::Status CheckInputPair(const ParseState& s) {
  const QuantFacts& f = s.facts;
  if (DtypeFamily(f.x1) != DtypeFamily(f.x2)) {
    return Refuse("problem.dtype_b",
                  absl::StrCat("x2 dtype ", GeDtypeName(f.x2), " does not go with x1 dtype ",
                               GeDtypeName(f.x1),
                               ": both must be int4, int8, hifloat8, float4_e2m1 or float8"));
  }
  if (s.pertoken == nullptr && f.x1 == GeDtype::kFloat4E2M1) {
    return Refuse("problem.dtype_a",
                  "float4_e2m1 inputs need quant.pertoken_scale (MX quantization)");
  }
  return absl::OkStatus();
}

// CheckDtype4WeightNz: the dtype pairs and scale dtypes a FRACTAL_NZ x2 has
// kernels for.
absl::Status CheckWeightNzDtypes(const ParseState& s) {
  const QuantFacts& f = s.facts;
  const bool same = f.x1 == f.x2;
  if (!same || !IsOneOf(f.x1, {GeDtype::kInt8, GeDtype::kHiFloat8, GeDtype::kFloat8E4M3,
                               GeDtype::kFloat4E2M1})) {
    return Refuse("problem.dtype_b",
                  absl::StrCat("a FRACTAL_NZ x2 needs x1 and x2 both int8, hifloat8, "
                               "float8_e4m3fn or float4_e2m1, got ",
                               GeDtypeName(f.x1), " and ", GeDtypeName(f.x2)));
  }
  if (f.x1 == GeDtype::kInt8) return absl::OkStatus();
  const bool has_pertoken = s.pertoken != nullptr;
  const bool static_scale = !has_pertoken && IsIntegerScale(f.scale);
  const bool float_scales =
      has_pertoken && f.scale == GeDtype::kFloat && f.pertoken == GeDtype::kFloat;
  const bool mx_scales =
      has_pertoken && f.scale == GeDtype::kFloat8E8M0 && f.pertoken == GeDtype::kFloat8E8M0;
  if (f.x1 == GeDtype::kFloat4E2M1) {
    if (!mx_scales) {
      return Refuse("quant.scale",
                    "a FRACTAL_NZ float4_e2m1 x2 needs quant.scale and quant.pertoken_scale both "
                    "float8_e8m0");
    }
    return absl::OkStatus();
  }
  if (float_scales && f.trans_a) {
    return Refuse("problem.trans_a",
                  absl::StrCat("a FRACTAL_NZ ", GeDtypeName(f.x1),
                               " x2 with float32 scales needs x1 not transposed"));
  }
  if (f.x1 == GeDtype::kHiFloat8 && !(static_scale || float_scales)) {
    return Refuse("quant.scale",
                  "a FRACTAL_NZ hifloat8 x2 needs a uint64/int64 quant.scale without a pertoken "
                  "scale, or quant.scale and quant.pertoken_scale both float32");
  }
  if (f.x1 == GeDtype::kFloat8E4M3 && !(mx_scales || static_scale || float_scales)) {
    return Refuse("quant.scale",
                  "a FRACTAL_NZ float8_e4m3fn x2 needs a uint64/int64 quant.scale without a "
                  "pertoken scale, or quant.scale and quant.pertoken_scale both float32 or both "
                  "float8_e8m0");
  }
  return absl::OkStatus();
}

// CheckScaleDtypeWithPertoken / CheckScalesDtype.
absl::Status CheckScaleDtypes(const ParseState& s) {
  const QuantFacts& f = s.facts;
  const std::string scale_name(GeDtypeName(f.scale));
  if (s.pertoken != nullptr) {
    const bool fp4 = f.x1 == GeDtype::kFloat4E2M1;
    const bool fp8 = IsFp8(f.x1);
    if (!IsInt4OrInt8(f.x1) && f.pertoken != f.scale) {
      return Refuse("quant.pertoken_scale",
                    absl::StrCat("dtype ", GeDtypeName(f.pertoken), " must equal quant.scale's ",
                                 scale_name, " for ", GeDtypeName(f.x1), " inputs"));
    }
    if (fp4 && f.scale != GeDtype::kFloat8E8M0) {
      return Refuse("quant.scale", absl::StrCat("dtype ", scale_name,
                                                " must be float8_e8m0 for float4_e2m1 inputs"));
    }
    if (fp8 && !IsOneOf(f.scale, {GeDtype::kFloat, GeDtype::kFloat8E8M0})) {
      return Refuse("quant.scale",
                    absl::StrCat("dtype ", scale_name,
                                 " must be float32 or float8_e8m0 for float8 inputs with a "
                                 "pertoken scale"));
    }
    if (!fp4 && !fp8 && f.pertoken != GeDtype::kFloat) {
      return Refuse("quant.pertoken_scale",
                    absl::StrCat("dtype ", GeDtypeName(f.pertoken), " must be float32 for ",
                                 GeDtypeName(f.x1), " inputs"));
    }
    if (IsInt4OrInt8(f.x1) && f.y == GeDtype::kFloat16 && f.scale != GeDtype::kFloat) {
      return Refuse("quant.scale",
                    absl::StrCat("dtype ", scale_name,
                                 " must be float32 for int4/int8 inputs with a pertoken scale and "
                                 "a float16 output"));
    }
    if (IsInt4OrInt8(f.x1) && f.y == GeDtype::kBFloat16 &&
        !IsOneOf(f.scale, {GeDtype::kFloat, GeDtype::kBFloat16})) {
      return Refuse(
          "quant.scale",
          absl::StrCat("dtype ", scale_name,
                       " must be float32 or bfloat16 for int4/int8 inputs with a pertoken "
                       "scale and a bfloat16 output"));
    }
    return absl::OkStatus();
  }
  if (f.x1 == GeDtype::kFloat4E2M1) {  // already refused by CheckInputPair
    return Refuse("quant.pertoken_scale", "float4_e2m1 inputs need a pertoken scale");
  }
  if (f.x1 != GeDtype::kInt8 && !IsIntegerScale(f.scale)) {
    return Refuse("quant.scale",
                  absl::StrCat("dtype ", scale_name, " must be uint64 or int64 for ",
                               GeDtypeName(f.x1), " inputs without a pertoken scale"));
  }
  if (f.x1 == GeDtype::kInt8 && IsOneOf(f.y, {GeDtype::kInt8, GeDtype::kFloat16}) &&
      !IsIntegerScale(f.scale)) {
    return Refuse("quant.scale",
                  absl::StrCat("dtype ", scale_name,
                               " must be uint64 or int64 for int8 inputs with an int8 or float16 "
                               "output and no pertoken scale"));
  }
  if (f.x1 == GeDtype::kInt8 && f.y == GeDtype::kBFloat16 &&
      !IsOneOf(f.scale, {GeDtype::kUint64, GeDtype::kInt64, GeDtype::kFloat, GeDtype::kBFloat16})) {
    return Refuse("quant.scale",
                  absl::StrCat("dtype ", scale_name,
                               " must be uint64, int64, float32 or bfloat16 for int8 inputs with a "
                               "bfloat16 output and no pertoken scale"));
  }
  return absl::OkStatus();
}

// CheckBiasDtype: float32 for float inputs; for int4 / int8 it follows the
// output and scale dtypes.
absl::Status CheckBiasDtype(const ParseState& s) {
  if (s.bias == nullptr) return absl::OkStatus();
  const QuantFacts& f = s.facts;
  const std::string bias_name(GeDtypeName(f.bias));
  if (!IsInt4OrInt8(f.x1)) {
    if (f.bias != GeDtype::kFloat) {
      return Refuse("problem.dtype_bias",
                    absl::StrCat("bias dtype ", bias_name, " must be float32 for ",
                                 GeDtypeName(f.x1), " inputs"));
    }
    return absl::OkStatus();
  }
  if (IsOneOf(f.y, {GeDtype::kInt8, GeDtype::kFloat16, GeDtype::kBFloat16}) &&
      IsIntegerScale(f.scale) && f.bias != GeDtype::kInt32) {
    return Refuse("problem.dtype_bias",
                  absl::StrCat("bias dtype ", bias_name,
                               " must be int32 with a uint64/int64 scale and an int8, float16 or "
                               "bfloat16 output"));
  }
  if (f.y == GeDtype::kFloat16 && f.scale == GeDtype::kFloat &&
      !IsOneOf(f.bias, {GeDtype::kInt32, GeDtype::kFloat, GeDtype::kFloat16})) {
    return Refuse("problem.dtype_bias",
                  absl::StrCat("bias dtype ", bias_name,
                               " must be int32, float32 or float16 with a float32 scale and a "
                               "float16 output"));
  }
  if (f.y == GeDtype::kBFloat16 && IsOneOf(f.scale, {GeDtype::kFloat, GeDtype::kBFloat16}) &&
      !IsOneOf(f.bias, {GeDtype::kInt32, GeDtype::kFloat, GeDtype::kBFloat16})) {
    return Refuse("problem.dtype_bias",
                  absl::StrCat("bias dtype ", bias_name,
                               " must be int32, float32 or bfloat16 with a float32/bfloat16 scale "
                               "and a bfloat16 output"));
  }
  return absl::OkStatus();
}

// CheckOutputDtype. The int4 / int32 rule and the float-input pertoken rule
// repeat refusals made earlier (CheckDtypesInRange, the int8-output rule);
// they are kept in CANN's order.
absl::Status CheckOutputDtype(const ParseState& s) {
  const QuantFacts& f = s.facts;
  const std::string y_name(GeDtypeName(f.y));
  if (IsLowFloat(f.x1) && f.y == GeDtype::kInt8) {
    return Refuse("problem.dtype_c", absl::StrCat("an int8 output is not available for ",
                                                  GeDtypeName(f.x1), " inputs"));
  }
  if (f.x1 == GeDtype::kInt4 && f.y == GeDtype::kInt32) {
    return Refuse("problem.dtype_c", "an int32 output is not available for int4 inputs");
  }
  if (s.pertoken != nullptr) {
    if (IsLowFloat(f.x1) &&
        !IsOneOf(f.y, {GeDtype::kFloat, GeDtype::kFloat16, GeDtype::kBFloat16})) {
      return Refuse("problem.dtype_c",
                    absl::StrCat("output dtype ", y_name,
                                 " must be float32, float16 or bfloat16 for float inputs with a "
                                 "pertoken scale"));
    }
    if (!IsLowFloat(f.x1) && !IsOneOf(f.y, {GeDtype::kFloat16, GeDtype::kBFloat16})) {
      return Refuse("problem.dtype_c",
                    absl::StrCat("output dtype ", y_name,
                                 " must be float16 or bfloat16 for int4/int8 inputs with a "
                                 "pertoken scale"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDtypes(const ParseState& s) {
  RETURN_IF_ERROR(CheckDtypesInRange(s));
  RETURN_IF_ERROR(CheckInputPair(s));
  if (s.facts.x2_nz) RETURN_IF_ERROR(CheckWeightNzDtypes(s));
  RETURN_IF_ERROR(CheckScaleDtypes(s));
  RETURN_IF_ERROR(CheckBiasDtype(s));
  return CheckOutputDtype(s);
}

// ---------------------------------------------------------------------------
// Shape parse (base's AnalyzeInputs, in its order).

// CheckShapeInRangeForMandtoryInputs. The int4 rule reads the pertoken
// scale's presence: the quant mode is not known yet.
absl::Status CheckRanks(const ParseState& s) {
  const auto rank_rule = [](absl::string_view tensor, size_t rank) {
    return absl::StrCat(tensor, " must have ", kMinRank, " to ", kMaxRank, " dims, has ", rank);
  };
  if (s.x1.size() < kMinRank) return Refuse("problem.batch_a", rank_rule("x1", s.x1.size()));
  if (s.x2.size() < kMinRank) return Refuse("problem.batch_b", rank_rule("x2", s.x2.size()));
  if (s.x1.size() > kMaxRank) return Refuse("problem.batch_a", rank_rule("x1", s.x1.size()));
  if (s.x2.size() > kMaxRank) return Refuse("problem.batch_b", rank_rule("x2", s.x2.size()));
  if (s.facts.x1 == GeDtype::kInt4 && s.pertoken == nullptr && s.x2.size() != 2) {
    return Refuse(
        "problem.batch_b",
        absl::StrCat("int4 x2 without a pertoken scale must be 2-D, has ", s.x2.size(), " dims"));
  }
  return absl::OkStatus();
}

// ReCalcGroupSize: a zero group size is the axis size over the scale's.
absl::Status InferGroupSize(uint64_t& group_size, uint64_t axis_size, uint64_t scale_size,
                            absl::string_view axis, absl::string_view scale_field) {
  if (group_size != 0) return absl::OkStatus();
  if (scale_size == 0) {
    return Refuse("quant.group_size",
                  absl::StrCat("the ", axis, " group size is 0 and cannot be inferred: the ", axis,
                               " dim of ", scale_field, " is 0"));
  }
  if (axis_size % scale_size != 0) {
    return Refuse("quant.group_size",
                  absl::StrCat("the ", axis, " group size is 0 and cannot be inferred: ", axis, "=",
                               axis_size, " is not a multiple of the ", axis, " dim ", scale_size,
                               " of ", scale_field));
  }
  group_size = axis_size / scale_size;
  return absl::OkStatus();
}

// AnalyzeGroupInfo / AnalyzeMxGroupInfo: group sizes left 0 by the
// attribute are inferred only with a pertoken scale and both scales of rank
// 2 or more. Non-MX reads dims 0 and 1 of both scales whatever their rank;
// MX reads the three last dims ([m, k/64, 2] and [k/64, n, 2], transposed
// as the inputs).
absl::Status InferGroupSizes(ParseState& s) {
  if (s.pertoken == nullptr) return absl::OkStatus();
  const Dims& pertoken = *s.pertoken;
  QuantFacts& f = s.facts;
  if (pertoken.size() < 2 || s.scale.size() < 2) return absl::OkStatus();
  if (f.scale == GeDtype::kFloat8E8M0) {
    constexpr size_t kMxScaleRank = 3;
    if (pertoken.size() < kMxScaleRank || s.scale.size() < kMxScaleRank) {
      return absl::OkStatus();
    }
    const size_t pertoken_batch = pertoken.size() - kMxScaleRank;
    const size_t scale_batch = s.scale.size() - kMxScaleRank;
    const auto m_dim = static_cast<uint64_t>(pertoken[pertoken_batch + (f.trans_a ? 1 : 0)]);
    RETURN_IF_ERROR(InferGroupSize(f.group_size_m, f.m, m_dim, "m", "quant.pertoken_scale"));
    const uint64_t k_dim =
        static_cast<uint64_t>(pertoken[pertoken_batch + (f.trans_a ? 0 : 1)]) * kMxPairDim;
    RETURN_IF_ERROR(InferGroupSize(f.group_size_k, f.k, k_dim, "k", "quant.pertoken_scale"));
    const auto n_dim = static_cast<uint64_t>(s.scale[scale_batch + (f.trans_b ? 0 : 1)]);
    return InferGroupSize(f.group_size_n, f.n, n_dim, "n", "quant.scale");
  }
  const int64_t pertoken_inner = pertoken[1];
  const int64_t pertoken_outer = pertoken[0];
  const auto m_dim = static_cast<uint64_t>(f.trans_a ? pertoken_inner : pertoken_outer);
  RETURN_IF_ERROR(InferGroupSize(f.group_size_m, f.m, m_dim, "m", "quant.pertoken_scale"));
  const auto k_dim = static_cast<uint64_t>(f.trans_a ? pertoken_outer : pertoken_inner);
  RETURN_IF_ERROR(InferGroupSize(f.group_size_k, f.k, k_dim, "k", "quant.pertoken_scale"));
  const int64_t scale_inner = s.scale[1];
  const int64_t scale_outer = s.scale[0];
  auto n_dim = static_cast<uint64_t>(f.trans_b ? scale_outer : scale_inner);
  // A [1, n] or [n, 1] scale (or any with a 1 when n is 1) is per channel:
  // one group per column.
  if ((scale_inner == 1 && DimIs(scale_outer, f.n)) ||
      (DimIs(scale_inner, f.n) && scale_outer == 1) ||
      (f.n == 1 && (scale_inner == 1 || scale_outer == 1))) {
    n_dim = f.n;
  }
  return InferGroupSize(f.group_size_n, f.n, n_dim, "n", "quant.scale");
}

// InferOutBatchDim: right-aligned batch dims broadcast when equal or one of
// them is 1; batch_c is the product of the broadcast dims.
absl::Status InferOutputBatch(ParseState& s) {
  const Dims& longer = s.x1.size() > s.x2.size() ? s.x1 : s.x2;
  const Dims& shorter = s.x1.size() > s.x2.size() ? s.x2 : s.x1;
  const size_t offset = longer.size() - shorter.size();
  uint64_t batch_c = 1;
  for (size_t i = 0; i + 2 < longer.size(); ++i) {
    const int64_t short_dim = i < offset ? 1 : shorter[i - offset];
    const int64_t long_dim = longer[i];
    if (short_dim > 1 && long_dim > 1 && short_dim != long_dim) {
      return Refuse("problem.batch_b",
                    absl::StrCat("the batch dims of x1 ", ShapeText(s.x1), " and x2 ",
                                 ShapeText(s.x2), " do not broadcast"));
    }
    batch_c *= static_cast<uint64_t>(std::max(short_dim, long_dim));
  }
  s.facts.batch_c = batch_c;
  return absl::OkStatus();
}

// SetX1QuantMode: the pertoken scale's mode, first match wins.
absl::Status ClassifyX1(ParseState& s) {
  QuantFacts& f = s.facts;
  if (s.pertoken == nullptr) return absl::OkStatus();
  const Dims& pertoken = *s.pertoken;
  const bool fp8_or_hif8 = IsFp8OrHif8(f.x1);
  if (f.scale == GeDtype::kFloat8E8M0) {
    f.x1_quant_mode = kMxPerGroup;
  } else if (fp8_or_hif8 && f.pertoken == GeDtype::kFloat && pertoken.size() > 1) {
    f.x1_quant_mode = kPerBlock;
  } else if (fp8_or_hif8 && pertoken.size() == 1 && pertoken[0] == 1) {
    f.x1_quant_mode = kPerTensor;  // a second per-tensor scale: "double scale"
  } else if (pertoken.size() == 1 && DimIs(pertoken[0], f.m)) {
    f.x1_quant_mode = kPerToken;
  } else {
    return Refuse("quant.pertoken_scale",
                  absl::StrCat("shape ", ShapeText(pertoken), " with ", GeDtypeName(f.x1),
                               " inputs matches no quant mode: per-token needs [m] = [", f.m, "]",
                               fp8_or_hif8 ? ", per-tensor [1], per-block a float32 scale of "
                                             "x1's rank"
                                           : ""));
  }
  return absl::OkStatus();
}

// SetX2QuantMode: the scale's mode, first match wins. A float32 scale of
// rank 2 or more on float8 / hifloat8 inputs is per-block unless it is
// [1, x] with groupSizeN at most 1.
absl::Status ClassifyX2(ParseState& s) {
  QuantFacts& f = s.facts;
  const Dims& scale = s.scale;
  const int64_t last = DimFromEnd(scale, 1);
  if (f.scale == GeDtype::kFloat8E8M0) {
    f.x2_quant_mode = kMxPerGroup;
  } else if (IsFp8OrHif8(f.x1) && f.scale == GeDtype::kFloat && scale.size() > 1 &&
             (scale.size() > 2 || scale[0] != 1 || f.group_size_n > 1)) {
    f.x2_quant_mode = kPerBlock;
  } else if (last == 1) {
    f.x2_quant_mode = kPerTensor;
  } else if (DimIs(last, f.n)) {
    f.x2_quant_mode = kPerChannel;
  } else {
    return Refuse("quant.scale",
                  absl::StrCat("shape ", ShapeText(scale), " with ", GeDtypeName(f.x2),
                               " x2 matches no quant mode: its last dim must be 1 (per-tensor) or "
                               "n = ",
                               f.n, " (per-channel)"));
  }
  return absl::OkStatus();
}

// SetQuantMode: both sides' modes, then the flags the strategies test.
// is_pertoken is the x1 per-token mode, not the pertoken scale's presence;
// per-block is decided by x1's scale alone.
absl::Status ClassifyQuantMode(ParseState& s) {
  RETURN_IF_ERROR(ClassifyX1(s));
  RETURN_IF_ERROR(ClassifyX2(s));
  QuantFacts& f = s.facts;
  f.is_per_channel = f.x2_quant_mode == kPerChannel;
  f.is_per_tensor = f.x2_quant_mode == kPerTensor;
  f.is_double_scale = f.x1_quant_mode == kPerTensor;
  f.is_pertoken = f.x1_quant_mode == kPerToken;
  f.is_mx = f.x1_quant_mode == kMxPerGroup && f.x2_quant_mode == kMxPerGroup;
  f.is_per_block = f.x1_quant_mode == kPerBlock;
  if (!(f.is_per_channel || f.is_per_tensor || f.is_double_scale || f.is_pertoken || f.is_mx ||
        f.is_per_block)) {
    return Refuse(f.x2_quant_mode == kMxPerGroup ? "quant.scale" : "quant.pertoken_scale",
                  f.x2_quant_mode == kMxPerGroup
                      ? "a float8_e8m0 scale (MX) needs an MX quant.pertoken_scale"
                      : "a per-block scale needs a per-block quant.pertoken_scale");
  }
  return absl::OkStatus();
}

// CheckShape4WeightNz: k and n above 1, and the storage shape the NZ
// layout gives x2 ([k, n], or [n, k] transposed: inner is the last dim).
absl::Status CheckWeightNzShape(const ParseState& s) {
  const QuantFacts& f = s.facts;
  if (f.k == 1 || f.n == 1) {
    return Refuse(f.k == 1 ? "problem.k" : "problem.n", "a FRACTAL_NZ x2 needs k and n above 1");
  }
  const Dims& st = s.x2_storage;
  const std::string shape = ShapeText(st);
  if (st.size() < kNzMinRank || st.size() > kNzMaxRank) {
    return Refuse("problem.storage_shape_b",
                  absl::StrCat("FRACTAL_NZ storage ", shape, " must have ", kNzMinRank, " to ",
                               kNzMaxRank, " dims"));
  }
  const auto last = static_cast<uint64_t>(DimFromEnd(st, 1));
  if (last != kNzCols8Bit && last != kNzCols4Bit) {
    return Refuse("problem.storage_shape_b",
                  absl::StrCat("FRACTAL_NZ storage ", shape, " must end in 32 or 64"));
  }
  if (!DimIs(DimFromEnd(st, 2), kNzRows)) {
    return Refuse("problem.storage_shape_b", absl::StrCat("FRACTAL_NZ storage ", shape,
                                                          " must have 16 as its second-last dim"));
  }
  // x2 as stored is [rows, cols]: [k, n], or [n, k] when transposed. Its NZ
  // storage holds ceil(rows / 16) fractal rows and ceil(cols / 32 or 64)
  // fractal columns.
  const uint64_t rows = f.trans_b ? f.n : f.k;
  const uint64_t cols = f.trans_b ? f.k : f.n;
  const uint64_t row_blocks = CeilDivExact(rows, kNzRows);
  if (!DimIs(DimFromEnd(st, 3), row_blocks)) {
    return Refuse("problem.storage_shape_b",
                  absl::StrCat("FRACTAL_NZ storage ", shape, " must have ceil(", rows,
                               " / 16) = ", row_blocks, " as its third-last dim"));
  }
  const auto col_blocks = static_cast<uint64_t>(DimFromEnd(st, 4));
  if (col_blocks != CeilDivExact(cols, kNzCols8Bit) &&
      col_blocks != CeilDivExact(cols, kNzCols4Bit)) {
    return Refuse("problem.storage_shape_b",
                  absl::StrCat("FRACTAL_NZ storage ", shape, " must have ceil(", cols,
                               " / 32) or ceil(", cols, " / 64) as its fourth-last dim"));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Shape checks (checker's CheckShape, in its order).

// CheckShapeInRangeForOptionalInputs: ranks of the bias, the offset and the
// scales.
absl::Status CheckOptionalInputRanks(const ParseState& s) {
  const QuantFacts& f = s.facts;
  if (s.bias != nullptr) {
    const size_t rank = s.bias->size();
    if (rank != 1 && rank != 3) {
      return Refuse("quant.bias_shape",
                    absl::StrCat("bias ", ShapeText(*s.bias), " must have 1 or 3 dims"));
    }
    const size_t out_rank = std::max(s.x1.size(), s.x2.size());
    if (rank == 3 && out_rank != 3) {
      return Refuse(
          "quant.bias_shape",
          absl::StrCat("a 3-D bias needs a 3-D output, the output has ", out_rank, " dims"));
    }
  }
  if (s.offset != nullptr) {
    if (f.x1 == GeDtype::kInt8 && f.y != GeDtype::kInt8) {
      return Refuse("quant.offset", "must be absent unless the output is int8");
    }
    if (f.y == GeDtype::kInt8 && s.offset->size() != 1) {
      return Refuse("quant.offset",
                    absl::StrCat("shape ", ShapeText(*s.offset), " must have 1 dim"));
    }
    if (!IsIntegerScale(f.scale)) {
      return Refuse("quant.offset", "must be absent unless quant.scale is uint64 or int64");
    }
  }
  if (s.pertoken != nullptr && !f.is_per_block && !f.is_mx &&
      (s.pertoken->size() != 1 || s.scale.size() != 1)) {
    return Refuse(
        s.pertoken->size() != 1 ? "quant.pertoken_scale" : "quant.scale",
        absl::StrCat("quant.pertoken_scale ", ShapeText(*s.pertoken), " and quant.scale ",
                     ShapeText(s.scale), " must be 1-D outside per-block and MX quantization"));
  }
  return absl::OkStatus();
}

// CheckShapeInBoundary: every dim in [1, INT32_MAX], the element count at
// most INT64_MAX.
absl::Status CheckBoundary(const ParseState& s, const Dims& dims, absl::string_view tensor,
                           bool is_x1) {
  int64_t elements = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t dim = dims[i];
    const absl::string_view field = is_x1 ? X1DimField(s, i) : X2DimField(s, i);
    if (dim < 1 || dim > kMaxDim) {
      return Refuse(field, absl::StrCat(tensor, " dim ", i, " = ", dim, " of ", ShapeText(dims),
                                        " must be in [1, ", kMaxDim, "]"));
    }
    if (elements > std::numeric_limits<int64_t>::max() / dim) {
      return Refuse(
          field, absl::StrCat(tensor, " ", ShapeText(dims), " has more than INT64_MAX elements"));
    }
    elements *= dim;
  }
  return absl::OkStatus();
}

// PerTokenDimValueCheck: which 1-D pertoken and scale shapes go together.
// After the quant-mode classification only the first rule and the "[m]
// needs a scale [1] or [n]" rule (reachable with MX scales) can fire; the
// others are kept in CANN's order.
absl::Status CheckPertokenDims(const ParseState& s) {
  const QuantFacts& f = s.facts;
  const Dims& pertoken = *s.pertoken;
  const bool fp8_or_hif8 = IsFp8OrHif8(f.x1);
  const uint64_t pertoken_dim0 = static_cast<uint64_t>(DimAt(pertoken, 0));
  const bool pertoken_1d = pertoken.size() == 1;
  const bool scale_1d = s.scale.size() == 1;
  const int64_t scale_dim0 = DimAt(s.scale, 0);
  const bool scale_is_1_or_n = scale_dim0 == 1 || DimIs(scale_dim0, f.n);
  if (f.x2_nz && fp8_or_hif8 && f.scale == GeDtype::kFloat && f.pertoken == GeDtype::kFloat &&
      pertoken_1d && pertoken_dim0 == 1 && f.m != 1 && scale_1d && scale_is_1_or_n) {
    return Refuse("quant.pertoken_scale",
                  "a FRACTAL_NZ x2 has no kernel for a per-tensor float32 pertoken scale [1] with "
                  "m above 1 (dynamic per-tensor / per-channel)");
  }
  if (fp8_or_hif8 && !f.is_mx && pertoken_dim0 != 1 && pertoken_dim0 != f.m && pertoken_1d &&
      scale_1d && scale_dim0 == 1) {
    return Refuse("quant.pertoken_scale",
                  absl::StrCat("shape ", ShapeText(pertoken), " must be [1] or [m] = [", f.m,
                               "] with a per-tensor scale"));
  }
  if (fp8_or_hif8 && !f.is_mx && f.m != 1 && pertoken_dim0 == 1 && pertoken_1d && scale_1d &&
      !scale_is_1_or_n) {
    return Refuse("quant.scale",
                  absl::StrCat("shape ", ShapeText(s.scale), " must be [1] or [n] = [", f.n,
                               "] with a pertoken scale [1]"));
  }
  if (pertoken_1d && pertoken_dim0 == f.m && scale_1d && !scale_is_1_or_n) {
    return Refuse("quant.scale",
                  absl::StrCat("shape ", ShapeText(s.scale), " must be [1] or [n] = [", f.n,
                               "] with a per-token scale"));
  }
  if (f.x1 == GeDtype::kInt8 && pertoken_dim0 != f.m) {
    return Refuse(
        "quant.pertoken_scale",
        absl::StrCat("shape ", ShapeText(pertoken), " must be [m] = [", f.m, "] for int8 inputs"));
  }
  return absl::OkStatus();
}

// CheckDimValue: k agreement, bias and offset sizes, scale rank, the
// pertoken shape, and int4's even inner axes.
absl::Status CheckDimValues(const ParseState& s) {
  const QuantFacts& f = s.facts;
  const int64_t x1_inner = DimFromEnd(s.x1, 1);
  const int64_t x2_inner = DimFromEnd(s.x2, 1);
  const int64_t x2_outer = DimFromEnd(s.x2, 2);
  const auto x2_k = static_cast<uint64_t>(f.trans_b ? x2_inner : x2_outer);
  if (f.k != x2_k) {
    return Refuse("problem.k", absl::StrCat("x1's k = ", f.k, " differs from x2's k = ", x2_k));
  }
  if (s.bias != nullptr) {
    const Dims& bias = *s.bias;
    if (bias.size() == 3) {
      if (!DimIs(bias[0], f.batch_c) || bias[1] != 1 || !DimIs(bias[2], f.n)) {
        return Refuse("quant.bias_shape",
                      absl::StrCat("a 3-D bias ", ShapeText(bias), " must be [batch_c, 1, n] = [",
                                   f.batch_c, ", 1, ", f.n, "]"));
      }
    } else if (bias.size() == 1 && !DimIs(bias[0], f.n)) {
      return Refuse("quant.bias_shape",
                    absl::StrCat("bias ", ShapeText(bias), " must be [n] = [", f.n, "]"));
    }
  }
  if (s.offset != nullptr && f.y == GeDtype::kInt8) {
    const int64_t offset_dim0 = DimAt(*s.offset, 0);
    if (offset_dim0 != 1 && !DimIs(offset_dim0, f.n)) {
      return Refuse("quant.offset", absl::StrCat("shape ", ShapeText(*s.offset),
                                                 " must be [1] or [n] = [", f.n, "]"));
    }
  }
  if (s.scale.size() != 1 && (IsIntegerScale(f.scale) || s.pertoken == nullptr)) {
    return Refuse("quant.scale",
                  absl::StrCat("shape ", ShapeText(s.scale),
                               " must be 1-D when the scale is uint64/int64 or there is no "
                               "pertoken scale"));
  }
  if (s.pertoken != nullptr) RETURN_IF_ERROR(CheckPertokenDims(s));
  if (f.x1 == GeDtype::kInt4 && f.x2 == GeDtype::kInt4) {
    if (x1_inner % 2 != 0 || x2_inner % 2 != 0) {
      return Refuse(
          x1_inner % 2 != 0 ? X1DimField(s, s.x1.size() - 1) : X2DimField(s, s.x2.size() - 1),
          absl::StrCat("int4 x1 and x2 need even innermost dims, got ", x1_inner, " and ",
                       x2_inner));
    }
    if (f.trans_a) return Refuse("problem.trans_a", "int4 x1 cannot be transposed");
  }
  return absl::OkStatus();
}

// CheckInputValidInPerblockMode: no bias; scales of the inputs' ranks and
// batch dims; group sizes (1 or 128, 128, 128); scale sizes of
// ceil(dim / group).
absl::Status CheckPerBlock(const ParseState& s) {
  const QuantFacts& f = s.facts;
  if (!f.is_per_block) return absl::OkStatus();
  const Dims& pertoken = *s.pertoken;
  if (s.bias != nullptr) return Refuse("quant.bias", "per-block quantization takes no bias");
  if (s.scale.size() != s.x2.size()) {
    return Refuse("quant.scale", absl::StrCat("per-block scale ", ShapeText(s.scale),
                                              " must have x2's rank ", s.x2.size()));
  }
  if (pertoken.size() != s.x1.size()) {
    return Refuse("quant.pertoken_scale",
                  absl::StrCat("per-block pertoken scale ", ShapeText(pertoken),
                               " must have x1's rank ", s.x1.size()));
  }
  for (size_t i = 0; i + 2 < s.x2.size(); ++i) {
    if (s.scale[i] != s.x2[i]) {
      return Refuse("quant.scale", absl::StrCat("per-block scale ", ShapeText(s.scale),
                                                " must repeat x2's batch dims ", ShapeText(s.x2)));
    }
  }
  for (size_t i = 0; i + 2 < s.x1.size(); ++i) {
    if (pertoken[i] != s.x1[i]) {
      return Refuse("quant.pertoken_scale",
                    absl::StrCat("per-block pertoken scale ", ShapeText(pertoken),
                                 " must repeat x1's batch dims ", ShapeText(s.x1)));
    }
  }
  if (f.group_size_m != kPerBlockSize && f.group_size_m != 1) {
    return Refuse("quant.group_size", absl::StrCat("per-block group_size_m is ", f.group_size_m,
                                                   ", it must be 1 or 128"));
  }
  if (f.group_size_k != kPerBlockSize) {
    return Refuse("quant.group_size",
                  absl::StrCat("per-block group_size_k is ", f.group_size_k, ", it must be 128"));
  }
  if (f.group_size_n != kPerBlockSize) {
    return Refuse("quant.group_size",
                  absl::StrCat("per-block group_size_n is ", f.group_size_n, ", it must be 128"));
  }
  // The scale's last two dims are x2's last two over 128, in either order.
  const uint64_t blocks_rows =
      CeilDivExact(static_cast<uint64_t>(DimFromEnd(s.x2, 2)), kPerBlockSize);
  const uint64_t blocks_cols =
      CeilDivExact(static_cast<uint64_t>(DimFromEnd(s.x2, 1)), kPerBlockSize);
  const auto scale_outer = static_cast<uint64_t>(DimFromEnd(s.scale, 2));
  const auto scale_inner = static_cast<uint64_t>(DimFromEnd(s.scale, 1));
  if (!(blocks_rows == scale_outer && blocks_cols == scale_inner) &&
      !(blocks_rows == scale_inner && blocks_cols == scale_outer)) {
    return Refuse("quant.scale", absl::StrCat("per-block scale ", ShapeText(s.scale),
                                              " must end in [", blocks_rows, ", ", blocks_cols,
                                              "] (x2's last dims over 128, in "
                                              "either order)"));
  }
  const size_t rank = s.x1.size();
  const size_t m_index = f.trans_a ? rank - 1 : rank - 2;
  const size_t k_index = f.trans_a ? rank - 2 : rank - 1;
  const uint64_t m_blocks = CeilDivExact(static_cast<uint64_t>(s.x1[m_index]), f.group_size_m);
  if (!DimIs(pertoken[m_index], m_blocks)) {
    return Refuse("quant.pertoken_scale",
                  absl::StrCat("per-block pertoken scale ", ShapeText(pertoken), " needs ceil(m / ",
                               f.group_size_m, ") = ", m_blocks, " in its m dim"));
  }
  const uint64_t k_blocks = CeilDivExact(static_cast<uint64_t>(s.x1[k_index]), f.group_size_k);
  if (!DimIs(pertoken[k_index], k_blocks)) {
    return Refuse("quant.pertoken_scale",
                  absl::StrCat("per-block pertoken scale ", ShapeText(pertoken), " needs ceil(k / ",
                               f.group_size_k, ") = ", k_blocks, " in its k dim"));
  }
  return absl::OkStatus();
}

// MxPertokenScaleShapeCheck: [batch..., m, ceil(k / 64), 2], m and k
// swapped when x1 is transposed.
absl::Status CheckMxPertokenShape(const ParseState& s) {
  const QuantFacts& f = s.facts;
  const Dims& pertoken = *s.pertoken;
  if (pertoken.size() < 3) {
    return Refuse("quant.pertoken_scale", absl::StrCat("MX pertoken scale ", ShapeText(pertoken),
                                                       " must have at least 3 dims"));
  }
  const size_t batch_dims = pertoken.size() - 3;
  const size_t m_index = batch_dims + (f.trans_a ? 1 : 0);
  const size_t k_index = batch_dims + (f.trans_a ? 0 : 1);
  const uint64_t k_pairs = CeilDivExact(f.k, kMxScaleKSpan);
  if (!DimIs(pertoken[k_index], k_pairs)) {
    return Refuse("quant.pertoken_scale",
                  absl::StrCat("MX pertoken scale ", ShapeText(pertoken),
                               " needs ceil(k / 64) = ", k_pairs, " in its k dim"));
  }
  if (!DimIs(pertoken[m_index], f.m)) {
    return Refuse("quant.pertoken_scale", absl::StrCat("MX pertoken scale ", ShapeText(pertoken),
                                                       " needs m = ", f.m, " in its m dim"));
  }
  if (!DimIs(pertoken.back(), kMxPairDim)) {
    return Refuse("quant.pertoken_scale",
                  absl::StrCat("MX pertoken scale ", ShapeText(pertoken), " must end in 2"));
  }
  return absl::OkStatus();
}

// MxScaleShapeCheck: [batch..., ceil(k / 64), n, 2], k and n swapped when
// x2 is transposed; a shape holding 1 in one of the two places and the other
// size in the other place (either way round) is accepted as well.
absl::Status CheckMxScaleShape(const ParseState& s) {
  const QuantFacts& f = s.facts;
  const Dims& scale = s.scale;
  if (scale.size() < 3) {
    return Refuse("quant.scale",
                  absl::StrCat("MX scale ", ShapeText(scale), " must have at least 3 dims"));
  }
  const size_t batch_dims = scale.size() - 3;
  const int64_t k_dim = scale[batch_dims + (f.trans_b ? 1 : 0)];
  const int64_t n_dim = scale[batch_dims + (f.trans_b ? 0 : 1)];
  const uint64_t k_pairs = CeilDivExact(f.k, kMxScaleKSpan);
  const auto one_and = [&](uint64_t size) {
    return (k_dim == 1 && DimIs(n_dim, size)) || (n_dim == 1 && DimIs(k_dim, size));
  };
  if (!one_and(k_pairs) && !one_and(f.n)) {
    if (!DimIs(k_dim, k_pairs)) {
      return Refuse("quant.scale",
                    absl::StrCat("MX scale ", ShapeText(scale), " needs ceil(k / 64) = ", k_pairs,
                                 " in its k dim"));
    }
    if (!DimIs(n_dim, f.n)) {
      return Refuse("quant.scale", absl::StrCat("MX scale ", ShapeText(scale), " needs n = ", f.n,
                                                " in its n dim"));
    }
  }
  if (!DimIs(scale.back(), kMxPairDim)) {
    return Refuse("quant.scale", absl::StrCat("MX scale ", ShapeText(scale), " must end in 2"));
  }
  return absl::OkStatus();
}

// CheckInputValidInMxPerGroupMode: group sizes (1, 1, 32); the scale
// shapes; batch dims as the inputs'; float4 needs k > 2 and even inner axes.
absl::Status CheckMx(const ParseState& s) {
  const QuantFacts& f = s.facts;
  if (!f.is_mx) return absl::OkStatus();
  if (f.group_size_m != 1 || f.group_size_n != 1 || f.group_size_k != kMxGroupK) {
    return Refuse("quant.group_size",
                  absl::StrCat("MX group sizes (m, n, k) are (", f.group_size_m, ", ",
                               f.group_size_n, ", ", f.group_size_k, "), they must be (1, 1, 32)"));
  }
  RETURN_IF_ERROR(CheckMxPertokenShape(s));
  RETURN_IF_ERROR(CheckMxScaleShape(s));
  const Dims& pertoken = *s.pertoken;
  const size_t x1_batch = s.x1.size() - 2;
  const size_t x2_batch = s.x2.size() - 2;
  if (s.scale.size() - 3 != x2_batch) {
    return Refuse("quant.scale", absl::StrCat("MX scale ", ShapeText(s.scale), " must have ",
                                              x2_batch, " batch dims, as x2 ", ShapeText(s.x2)));
  }
  if (pertoken.size() - 3 != x1_batch) {
    return Refuse("quant.pertoken_scale",
                  absl::StrCat("MX pertoken scale ", ShapeText(pertoken), " must have ", x1_batch,
                               " batch dims, as x1 ", ShapeText(s.x1)));
  }
  for (size_t i = 0; i < x2_batch; ++i) {
    if (s.scale[i] != s.x2[i]) {
      return Refuse("quant.scale", absl::StrCat("MX scale ", ShapeText(s.scale),
                                                " must repeat x2's batch dims ", ShapeText(s.x2)));
    }
  }
  for (size_t i = 0; i < x1_batch; ++i) {
    if (pertoken[i] != s.x1[i]) {
      return Refuse("quant.pertoken_scale",
                    absl::StrCat("MX pertoken scale ", ShapeText(pertoken),
                                 " must repeat x1's batch dims ", ShapeText(s.x1)));
    }
  }
  if (f.x1 == GeDtype::kFloat4E2M1) {
    if (f.k <= 2) return Refuse("problem.k", "float4_e2m1 inputs need k above 2");
    const int64_t x1_inner = s.x1.back();
    const int64_t x2_inner = s.x2.back();
    if (x1_inner % 2 != 0 || x2_inner % 2 != 0) {
      return Refuse(
          x1_inner % 2 != 0 ? X1DimField(s, s.x1.size() - 1) : X2DimField(s, s.x2.size() - 1),
          absl::StrCat("float4_e2m1 x1 and x2 need even innermost dims, got ", x1_inner, " and ",
                       x2_inner));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckShapes(const ParseState& s) {
  RETURN_IF_ERROR(CheckOptionalInputRanks(s));
  RETURN_IF_ERROR(CheckBoundary(s, s.x1, "x1", /*is_x1=*/true));
  RETURN_IF_ERROR(CheckBoundary(s, s.x2, "x2", /*is_x1=*/false));
  RETURN_IF_ERROR(CheckDimValues(s));
  RETURN_IF_ERROR(CheckPerBlock(s));
  RETURN_IF_ERROR(CheckMx(s));
  if (IsLowFloat(s.facts.x1) && s.offset != nullptr) {
    return Refuse("quant.offset",
                  absl::StrCat("must be absent for ", GeDtypeName(s.facts.x1), " inputs"));
  }
  return absl::OkStatus();
}

// CheckFusionBatchA / DoBatchFusion: a 2-D x2 under a non-transposed
// batched x1 is one matmul of m * batch_a rows, unless the x1 scale is per
// token (one value per original row), the bias is per batch, the fused m
// leaves int32, or per-block row groups would straddle batches. int4 with
// a fused m beyond int32 is refused, even where no fold would apply.
absl::Status FuseBatchIntoM(ParseState& s) {
  QuantFacts& f = s.facts;
  const uint64_t fused_m = f.m * f.batch_a;
  if (f.is_pertoken) return absl::OkStatus();
  if (s.bias != nullptr && s.bias->size() > 1) return absl::OkStatus();
  if (static_cast<int64_t>(fused_m) > std::numeric_limits<int32_t>::max()) {
    if (f.x1 == GeDtype::kInt4) {
      return Refuse("problem.m", absl::StrCat("int4: m * batch_a = ", f.m, " * ", f.batch_a,
                                              " exceeds ", std::numeric_limits<int32_t>::max()));
    }
    return absl::OkStatus();
  }
  if (s.x2.size() != 2 || f.trans_a || s.x1.size() < 3) return absl::OkStatus();
  if (f.group_size_m > 1 && static_cast<uint64_t>(DimFromEnd(s.x1, 2)) % f.group_size_m != 0) {
    return absl::OkStatus();
  }
  f.m = fused_m;
  f.batch_a = 1;
  f.batch_a_dims = {1, 1, 1, 1};
  f.batch_c = 1;
  f.batch_c_dims = {1, 1, 1, 1};
  return absl::OkStatus();
}

// GetShapeAttrsInfo's context check: x1, x2, the scale and y are mandatory.
absl::Status CheckMandatoryInputs(const QuantRequest& request) {
  if (!request.x1.present) return Refuse("problem.dtype_a", "x1 is required");
  if (!request.x2.present) return Refuse("problem.dtype_b", "x2 is required");
  if (!request.scale.present) return Refuse("quant.scale", "the scale is required");
  if (!request.y.present) return Refuse("problem.dtype_c", "the output y is required");
  return absl::OkStatus();
}

}  // namespace

std::string GeDtypeName(GeDtype dtype) {
  switch (dtype) {
    case GeDtype::kFloat:
      return "float32";
    case GeDtype::kFloat16:
      return "float16";
    case GeDtype::kInt8:
      return "int8";
    case GeDtype::kInt32:
      return "int32";
    case GeDtype::kInt64:
      return "int64";
    case GeDtype::kUint64:
      return "uint64";
    case GeDtype::kBFloat16:
      return "bfloat16";
    case GeDtype::kInt4:
      return "int4";
    case GeDtype::kHiFloat8:
      return "hifloat8";
    case GeDtype::kFloat8E5M2:
      return "float8_e5m2";
    case GeDtype::kFloat8E4M3:
      return "float8_e4m3fn";
    case GeDtype::kFloat8E8M0:
      return "float8_e8m0";
    case GeDtype::kFloat4E2M1:
      return "float4_e2m1";
    case GeDtype::kFloat4E1M2:
      return "float4_e1m2";
  }
  return absl::StrCat("dtype ", static_cast<uint32_t>(dtype));
}

absl::StatusOr<QuantFacts> ParseQuantRequest(const QuantRequest& request) {
  RETURN_IF_ERROR(CheckMandatoryInputs(request));
  ParseState s{request,
               request.x1.origin,
               request.x2.origin,
               request.scale.origin,
               StorageOf(request.x2),
               StorageOf(request.y),
               request.pertoken.present ? &StorageOf(request.pertoken) : nullptr,
               request.bias.present ? &StorageOf(request.bias) : nullptr,
               request.offset.present ? &StorageOf(request.offset) : nullptr,
               QuantFacts{}};
  QuantFacts& f = s.facts;

  // Attributes (AnalyzeAttrs): a non-zero group_size sets all three sizes.
  f.trans_a = request.transpose_x1;
  f.trans_b = request.transpose_x2;
  const auto group_size = static_cast<uint64_t>(request.group_size);
  if (group_size != 0) {
    f.group_size_k = group_size & kGroupFieldMask;
    f.group_size_n = (group_size >> 16) & kGroupFieldMask;
    f.group_size_m = (group_size >> 32) & kGroupFieldMask;
  }
  f.deterministic_level = request.deterministic_level;
  f.tensor_api = request.tensor_api;

  // Dtypes and formats (AnalyzeDtype). Absent optional inputs keep CANN's
  // defaults: a float32 pertoken scale, an int32 bias.
  f.x1 = request.x1.dtype;
  f.x2 = request.x2.dtype;
  f.scale = request.scale.dtype;
  f.y = request.y.dtype;
  f.has_pertoken = s.pertoken != nullptr;
  f.pertoken = f.has_pertoken ? request.pertoken.dtype : GeDtype::kFloat;
  f.has_bias = s.bias != nullptr;
  f.bias = f.has_bias ? request.bias.dtype : GeDtype::kInt32;
  f.has_offset = s.offset != nullptr;
  f.x1_nz = request.x1.nz;
  f.x2_nz = request.x2.nz;
  RETURN_IF_ERROR(CheckDtypes(s));

  // Shapes (AnalyzeInputs).
  f.batch_bias = f.has_bias ? BatchProduct(*s.bias) : 1;
  RETURN_IF_ERROR(CheckRanks(s));
  const int64_t x1_inner = DimFromEnd(s.x1, 1);
  const int64_t x1_outer = DimFromEnd(s.x1, 2);
  const int64_t x2_inner = DimFromEnd(s.x2, 1);
  const int64_t x2_outer = DimFromEnd(s.x2, 2);
  f.m = static_cast<uint64_t>(f.trans_a ? x1_inner : x1_outer);
  f.k = static_cast<uint64_t>(f.trans_a ? x1_outer : x1_inner);
  f.n = static_cast<uint64_t>(f.trans_b ? x2_outer : x2_inner);
  RETURN_IF_ERROR(InferGroupSizes(s));
  f.batch_a = BatchProduct(s.x1);
  f.batch_b = BatchProduct(s.x2);
  f.batch_a_dims = BatchSlots(s.x1);
  f.batch_b_dims = BatchSlots(s.x2);
  f.batch_c_dims = BatchSlots(s.y);
  RETURN_IF_ERROR(InferOutputBatch(s));
  RETURN_IF_ERROR(ClassifyQuantMode(s));
  if (f.x2_nz) RETURN_IF_ERROR(CheckWeightNzShape(s));
  RETURN_IF_ERROR(CheckShapes(s));
  // CANN's CheckOutputShapeAvailable follows: it multiplies m * n * batch_c
  // in int64 and divides back to detect overflow. Signed overflow being
  // undefined, the compiler folds that round trip to "no overflow", so
  // CANN's built tiling never refuses here (m and n are below 2^31, and
  // batch_c is unbounded), and neither do we.
  RETURN_IF_ERROR(FuseBatchIntoM(s));
  return std::move(s.facts);
}

}  // namespace npu::tiling::quant
