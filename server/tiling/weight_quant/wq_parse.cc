#include "server/tiling/weight_quant/wq_parse.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npu::tiling::weight_quant {
namespace {

constexpr int64_t kMaxDim = 2147483647;
constexpr uint64_t kMaxNzKn = 65535;  // CheckShapeDims: K and N of an INT8 NZ weight
constexpr uint64_t kMinGroup = 32;    // group sizes are multiples of 32
constexpr uint64_t kMxGroup = 32;     // MX: one e8m0 scale per 32 elements of K
constexpr uint64_t kPackedElems = 8;  // elements of a packed INT32 / FLOAT32 weight word

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

std::string Name(DataType dtype) { return std::string(DataTypeName(dtype)); }

std::string DimsText(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// GetShapeSize: the product of the dims (1 for a scalar), saturated at
// INT64_MAX (dims are checked to [0, 2^31 - 1], so only an empty tensor is
// 0).
int64_t ShapeSize(const std::vector<int64_t>& dims) {
  int64_t size = 1;
  for (int64_t d : dims) {
    if (d == 0) return 0;
  }
  for (int64_t d : dims) {
    if (d > 0 && size > std::numeric_limits<int64_t>::max() / d) {
      return std::numeric_limits<int64_t>::max();
    }
    size *= d;
  }
  return size;
}

bool Is4Bit(DataType dtype) {
  return dtype == DataType::kInt4 || dtype == DataType::kFloat4E2M1 || dtype == DataType::kInt32 ||
         dtype == DataType::kFloat32;
}
bool IsFp4(DataType dtype) {  // FLOAT32 is a packed float4 weight
  return dtype == DataType::kFloat4E2M1 || dtype == DataType::kFloat32;
}
bool IsFp8(DataType dtype) {
  return dtype == DataType::kFloat8E4M3 || dtype == DataType::kHiFloat8;
}

// The tensors of CANN's tiling context, built once from the problem.
struct Context {
  // Origin shapes of x and the weight (the weight's last dim packed).
  std::vector<int64_t> x, weight;
  std::vector<int64_t> weight_storage;
  std::vector<int64_t> bias;  // when has_bias
  const QuantTensorSpec* scale;
  const QuantTensorSpec* offset;
  const QuantTensorSpec* quant_scale;
  const QuantTensorSpec* quant_offset;
};

Context ContextOf(const MatmulProblem& p) {
  Context c;
  c.x = p.trans_a ? std::vector<int64_t>{p.k, p.m} : std::vector<int64_t>{p.m, p.k};
  c.weight = p.trans_b ? std::vector<int64_t>{p.n, p.k} : std::vector<int64_t>{p.k, p.n};
  if (IsPackedWeight(p.dtype_b)) c.weight[1] /= static_cast<int64_t>(kPackedElems);
  c.weight_storage = WeightStorageShape(p);
  if (p.has_bias) {
    c.bias = p.quant.bias_shape.empty() ? std::vector<int64_t>{p.n} : p.quant.bias_shape;
  }
  c.scale = &p.quant.antiquant_scale;
  c.offset = &p.quant.antiquant_offset;
  c.quant_scale = &p.quant.quant_scale;
  c.quant_offset = &p.quant.quant_offset;
  return c;
}

// CheckOptionalInputByShape: wired and with elements.
bool HasElements(const QuantTensorSpec& t) { return t.present && ShapeSize(t.shape) != 0; }

// The fields WeightQuantBatchMatmulV2 does not read, and the engine's own
// limits on the ones it does.
absl::Status CheckFields(const MatmulProblem& p) {
  const QuantInputs& q = p.quant;
  if (q.scale.present || q.pertoken.present || q.offset.present || q.group_size_m != 0 ||
      q.group_size_n != 0 || q.group_size_k != 0 || !q.tensor_api) {
    return Invalid(
        "fields quant.scale, pertoken_scale, offset, group_size_m/n/k and without_tensor_api are "
        "QuantBatchMatmulV3's; WeightQuantBatchMatmulV2 reads quant.antiquant_scale, "
        "antiquant_offset, quant_scale, quant_offset and group_size");
  }
  if (p.hf32 || p.force_grp_acc_fp32) {
    return Invalid("fields hf32 and force_grp_acc_fp32 are not valid for WeightQuantBatchMatmulV2");
  }
  if (p.deterministic_level != 0) {
    return Invalid(absl::StrCat("field deterministic_level=", p.deterministic_level,
                                " is not valid for WeightQuantBatchMatmulV2 (it reads none)"));
  }
  if (p.format_a != Format::kNd) return Invalid("field format_a must be ND (x is ND)");
  if (p.format_c != Format::kNd) return Invalid("field format_c must be ND (y is ND)");
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"m", p.m}, {"n", p.n}, {"k", p.k}}) {
    if (value < 0 || value > kMaxDim) {
      return Invalid(absl::StrCat("field ", name, "=", value, " must be in [0, ", kMaxDim, "]"));
    }
  }
  if (!q.antiquant_scale.present) {
    return Invalid("field quant.antiquant_scale is required for WeightQuantBatchMatmulV2");
  }
  for (const auto& [name, t] :
       {std::pair<const char*, const QuantTensorSpec*>{"antiquant_scale", &q.antiquant_scale},
        {"antiquant_offset", &q.antiquant_offset},
        {"quant_scale", &q.quant_scale},
        {"quant_offset", &q.quant_offset}}) {
    if (!t->present) continue;
    if (t->shape.size() > 8) {
      return Invalid(
          absl::StrCat("field quant.", name, ".shape has ", t->shape.size(), " dims; at most 8"));
    }
    for (int64_t d : t->shape) {
      if (d < 0 || d > kMaxDim) {
        return Invalid(absl::StrCat("field quant.", name, ".shape=", DimsText(t->shape),
                                    " has a dim outside [0, ", kMaxDim, "]"));
      }
    }
  }
  if (!p.has_bias && !q.bias_shape.empty()) {
    return Invalid("field quant.bias_shape needs has_bias");
  }
  for (int64_t d : q.bias_shape) {
    if (d < 0 || d > kMaxDim) {
      return Invalid(absl::StrCat("field quant.bias_shape=", DimsText(q.bias_shape),
                                  " has a dim outside [0, ", kMaxDim, "]"));
    }
  }
  if (IsPackedWeight(p.dtype_b)) {
    const int64_t last = p.trans_b ? p.k : p.n;
    if (last % static_cast<int64_t>(kPackedElems) != 0) {
      return Invalid(absl::StrCat("field dtype_b=", Name(p.dtype_b), ": a packed weight holds ",
                                  kPackedElems, " elements per word, so its last dim (",
                                  p.trans_b ? "k" : "n", "=", last, ") must be a multiple of ",
                                  kPackedElems));
    }
  }
  if (p.format_b != Format::kFractalNz && !p.storage_shape_b.empty()) {
    return Invalid("field storage_shape_b is only meaningful when format_b is FRACTAL_NZ");
  }
  for (int64_t d : p.storage_shape_b) {
    if (d < 0 || d > kMaxDim) {
      return Invalid(absl::StrCat("field storage_shape_b=", DimsText(p.storage_shape_b),
                                  " has a dim outside [0, ", kMaxDim, "]"));
    }
  }
  return absl::OkStatus();
}

// CheckBiasDtype. CANN tests the weight's format for its "FP32 bias with a
// BF16 x and an INT8 NZ weight" rule before CheckShape reads the format, so
// that rule never applies: such a bias may be FP32 or BF16 like any other.
absl::Status CheckBiasDtype(const MatmulProblem& p) {
  if (!p.has_bias) return absl::OkStatus();
  const DataType bias = p.dtype_bias;
  if (p.dtype_a == DataType::kBFloat16) {
    if (IsFp4(p.dtype_b) || IsFp8(p.dtype_b)) {
      if (bias != DataType::kBFloat16) {
        return Invalid(absl::StrCat("field dtype_bias=", Name(bias),
                                    ": must be bfloat16 when x is bfloat16 and the weight is ",
                                    Name(p.dtype_b), " (CheckBiasDtype)"));
      }
    } else if (bias != DataType::kFloat32 && bias != DataType::kBFloat16) {
      return Invalid(absl::StrCat("field dtype_bias=", Name(bias),
                                  ": must be float32 or bfloat16 when x is bfloat16 "
                                  "(CheckBiasDtype)"));
    }
  } else if (bias != p.dtype_a) {
    return Invalid(absl::StrCat("field dtype_bias=", Name(bias),
                                ": must be float16 when x is float16 (CheckBiasDtype)"));
  }
  return absl::OkStatus();
}

// CheckDtype: CheckInputDtype, CheckAntiQuantDtype, CheckQuantDtype.
absl::Status CheckDtypes(const MatmulProblem& p) {
  if (p.dtype_a != DataType::kFloat16 && p.dtype_a != DataType::kBFloat16) {
    return Invalid(absl::StrCat("field dtype_a=", Name(p.dtype_a),
                                ": x must be float16 or bfloat16 (CheckInputDtype)"));
  }
  switch (p.dtype_b) {
    case DataType::kInt32:
    case DataType::kInt8:
    case DataType::kFloat8E4M3:
    case DataType::kHiFloat8:
    case DataType::kInt4:
    case DataType::kFloat4E2M1:
    case DataType::kFloat32:
      break;
    default:
      return Invalid(absl::StrCat(
          "field dtype_b=", Name(p.dtype_b),
          ": the weight must be int8, float8_e4m3fn, hifloat8, int4, float4_e2m1, or int32 / "
          "float32 packing eight int4 / float4_e2m1 (CheckInputDtype)"));
  }
  if (auto s = CheckBiasDtype(p); !s.ok()) return s;
  // CheckAntiQuantDtype.
  const DataType scale = p.quant.antiquant_scale.dtype;
  const QuantTensorSpec& offset = p.quant.antiquant_offset;
  if (scale == DataType::kUint64 || scale == DataType::kInt64) {
    return Invalid(absl::StrCat("field quant.antiquant_scale.dtype=", Name(scale),
                                ": int64 / uint64 antiquant scales are the Ascend 910B's only "
                                "(CheckAntiQuantDtype)"));
  }
  if (scale == DataType::kFloat8E8M0) {
    // CANN tests the offset flag here before CheckAntiQuantOffsetShape sets
    // it, so an offset with an MX scale is not refused by this rule.
  } else if (scale == p.dtype_a) {
    if (offset.present && offset.dtype != p.dtype_a) {
      return Invalid(absl::StrCat("field quant.antiquant_offset.dtype=", Name(offset.dtype),
                                  ": must be x's dtype ", Name(p.dtype_a),
                                  " when the antiquant scale is (CheckAntiQuantDtype)"));
    }
  } else {
    return Invalid(absl::StrCat("field quant.antiquant_scale.dtype=", Name(scale),
                                ": must be x's dtype ", Name(p.dtype_a),
                                " or float8_e8m0 (MX) (CheckAntiQuantDtype)"));
  }
  // CheckQuantDtype.
  if (p.quant.quant_scale.present) {
    if (p.quant.quant_scale.dtype != DataType::kUint64) {
      return Invalid(absl::StrCat("field quant.quant_scale.dtype=", Name(p.quant.quant_scale.dtype),
                                  ": must be uint64 (CheckQuantDtype)"));
    }
  } else if (p.dtype_c != p.dtype_a) {
    return Invalid(absl::StrCat("field dtype_c=", Name(p.dtype_c), ": must be x's dtype ",
                                Name(p.dtype_a), " without a quant scale (CheckQuantDtype)"));
  }
  return absl::OkStatus();
}

// CheckAntiQuantShape: the scale's shape sets the antiquant type.
absl::Status CheckAntiQuantShape(const MatmulProblem& p, QuantType* type, bool* has_offset) {
  const std::vector<int64_t>& shape = p.quant.antiquant_scale.shape;
  const int64_t size = ShapeSize(shape);
  const int64_t n = p.n;
  if (shape.size() > 2) {
    return Invalid(absl::StrCat("field quant.antiquant_scale.shape=", DimsText(shape),
                                ": at most 2 dims (CheckAntiQuantScaleShape)"));
  }
  if (size != 1) {
    if (shape.size() == 2) {
      const uint64_t g = static_cast<uint64_t>(p.quant.group_size);
      const int64_t groups =
          g > 0 ? static_cast<int64_t>((static_cast<uint64_t>(p.k) + g - 1) / g) : 1;
      const std::vector<int64_t> expect =
          p.trans_b ? std::vector<int64_t>{n, groups} : std::vector<int64_t>{groups, n};
      if (expect != shape) {
        return Invalid(
            absl::StrCat("field quant.antiquant_scale.shape=", DimsText(shape), ": must be ",
                         DimsText(expect), " (ceil(k / group_size) groups by n",
                         p.trans_b ? ", transposed" : "", ") (CheckAntiQuantScaleShape)"));
      }
      if (p.quant.antiquant_scale.dtype == DataType::kFloat8E8M0) {
        *type = QuantType::kMx;
      } else {
        *type = g > 0 ? QuantType::kPerGroup : QuantType::kPerChannel;
      }
    } else {
      if (size != n) {
        return Invalid(absl::StrCat("field quant.antiquant_scale.shape=", DimsText(shape),
                                    ": a per-channel scale has n=", n,
                                    " elements (CheckAntiQuantScaleShape)"));
      }
      *type = QuantType::kPerChannel;
    }
  } else {
    *type = QuantType::kPerTensor;
  }
  *has_offset = HasElements(p.quant.antiquant_offset);
  if (*has_offset) {
    if (IsFp4(p.dtype_b) || IsFp8(p.dtype_b)) {
      return Invalid(absl::StrCat("field quant.antiquant_offset: not supported with a ",
                                  Name(p.dtype_b), " weight (CheckAntiQuantOffsetShape)"));
    }
    if (p.quant.antiquant_offset.shape != shape) {
      return Invalid(absl::StrCat(
          "field quant.antiquant_offset.shape=", DimsText(p.quant.antiquant_offset.shape),
          ": must equal the antiquant scale's ", DimsText(shape), " (CheckAntiQuantOffsetShape)"));
    }
  }
  return absl::OkStatus();
}

// CheckQuantShape.
absl::Status CheckQuantShape(const MatmulProblem& p) {
  const QuantTensorSpec& scale = p.quant.quant_scale;
  if (!HasElements(scale)) {
    if (HasElements(p.quant.quant_offset)) {
      return Invalid("field quant.quant_offset: needs a quant scale (CheckQuantShape)");
    }
    if (p.dtype_c != p.dtype_a) {
      return Invalid(absl::StrCat("field dtype_c=", Name(p.dtype_c), ": must be x's dtype ",
                                  Name(p.dtype_a), " without a quant scale (CheckQuantShape)"));
    }
    return absl::OkStatus();
  }
  if (p.dtype_c != DataType::kInt8) {
    return Invalid(absl::StrCat("field dtype_c=", Name(p.dtype_c),
                                ": must be int8 with a quant scale (CheckQuantShape)"));
  }
  const int64_t size = ShapeSize(scale.shape);
  if (scale.shape.size() > 2) {
    return Invalid(absl::StrCat("field quant.quant_scale.shape=", DimsText(scale.shape),
                                ": at most 2 dims (CheckQuantShape)"));
  }
  if (scale.shape.size() == 2) {
    if (scale.shape[0] != 1 || scale.shape[1] != p.n) {
      return Invalid(absl::StrCat("field quant.quant_scale.shape=", DimsText(scale.shape),
                                  ": must be [1, n=", p.n, "] (CheckQuantShape)"));
    }
  } else if (size > 1 && size != p.n) {
    return Invalid(absl::StrCat("field quant.quant_scale.shape=", DimsText(scale.shape),
                                ": must have 1 or n=", p.n, " elements (CheckQuantShape)"));
  }
  return absl::OkStatus();
}

// CheckBiasShape.
absl::Status CheckBiasShape(const MatmulProblem& p, const std::vector<int64_t>& bias) {
  if (!p.has_bias) return absl::OkStatus();
  if (bias.size() == 1) {
    if (bias[0] != 0 && bias[0] != p.n) {
      return Invalid(absl::StrCat("field quant.bias_shape=", DimsText(bias), ": must be [n=", p.n,
                                  "] or [0] (CheckBiasShape)"));
    }
  } else if (bias.size() == 2) {
    if (bias[0] != 1 || bias[1] != p.n) {
      return Invalid(absl::StrCat("field quant.bias_shape=", DimsText(bias),
                                  ": must be [1, n=", p.n, "] (CheckBiasShape)"));
    }
  } else {
    return Invalid(absl::StrCat("field quant.bias_shape=", DimsText(bias),
                                ": must have 1 or 2 dims (CheckBiasShape)"));
  }
  return absl::OkStatus();
}

// CheckDav3510NzSupported.
bool NzSupported(const MatmulProblem& p, QuantType type) {
  if (p.trans_a || p.dtype_c == DataType::kInt8 || type == QuantType::kPerTensor) return false;
  if (p.dtype_b == DataType::kInt8) {
    if (type == QuantType::kPerGroup) return !p.trans_b;
    if (type == QuantType::kPerChannel) return true;
  }
  if (p.dtype_b == DataType::kInt4 || p.dtype_b == DataType::kInt32) {
    if (type == QuantType::kPerGroup || type == QuantType::kPerChannel) return !p.trans_b;
  }
  if (IsFp4(p.dtype_b)) {
    if (type == QuantType::kMx || type == QuantType::kPerGroup) return !p.trans_b;
  }
  return false;
}

// The antiquant type CheckPara infers (CheckAntiQuantScaleShape), on a
// problem whose shapes passed.
QuantType CheckedAntiquantType(const MatmulProblem& p) {
  QuantType type = QuantType::kNone;
  bool has_offset = false;
  (void)CheckAntiQuantShape(p, &type, &has_offset);
  return type;
}

}  // namespace

std::string_view QuantTypeName(QuantType type) {
  switch (type) {
    case QuantType::kNone:
      return "NONE";
    case QuantType::kPerTensor:
      return "PER_TENSOR";
    case QuantType::kPerChannel:
      return "PER_CHANNEL";
    case QuantType::kPerGroup:
      return "PER_GROUP";
    case QuantType::kMx:
      return "MX";
  }
  return "NONE";
}

bool IsPackedWeight(DataType dtype_b) {
  return dtype_b == DataType::kInt32 || dtype_b == DataType::kFloat32;
}

std::vector<int64_t> WeightStorageShape(const MatmulProblem& p) {
  if (p.format_b != Format::kFractalNz) return {};
  if (!p.storage_shape_b.empty()) return p.storage_shape_b;
  const bool packed = IsPackedWeight(p.dtype_b);
  const int64_t rows = p.trans_b ? p.n : p.k;
  int64_t cols = p.trans_b ? p.k : p.n;
  int64_t c0 = p.dtype_b == DataType::kInt8 ? 32 : 16;
  if (packed) {
    cols /= static_cast<int64_t>(kPackedElems);
    c0 /= static_cast<int64_t>(kPackedElems);
  }
  return {(cols + c0) / c0, (rows + 16) / 16, 16, c0};
}

absl::Status CheckWeightQuantProblem(const MatmulProblem& p) {
  if (auto s = CheckFields(p); !s.ok()) return s;
  if (auto s = CheckDtypes(p); !s.ok()) return s;
  // CheckAttr.
  if (p.quant.group_size < 0) {
    return Invalid(absl::StrCat("field quant.group_size=", p.quant.group_size,
                                ": must not be negative (CheckAttr)"));
  }
  // CheckShape.
  const Context c = ContextOf(p);
  const bool nz = p.format_b == Format::kFractalNz;
  // The weight's storage shape is what CANN sizes (an NZ weight's 4 dims).
  const int64_t weight_size = nz ? ShapeSize(c.weight_storage) : ShapeSize(c.weight);
  if (ShapeSize(c.x) == 0 || weight_size == 0 || ShapeSize(c.scale->shape) == 0) {
    return Invalid(absl::StrCat(
        "fields m=", p.m, ", n=", p.n, ", k=", p.k,
        nz ? absl::StrCat(", storage_shape_b=", DimsText(c.weight_storage)) : std::string(),
        ", quant.antiquant_scale.shape=", DimsText(c.scale->shape),
        ": x, the weight and the antiquant scale must not be empty "
        "(CheckShape)"));
  }
  if (nz && c.weight_storage.size() != 4) {
    return Invalid(absl::StrCat("field storage_shape_b=", DimsText(c.weight_storage),
                                ": an NZ weight's storage shape has 4 dims (CheckInputShape)"));
  }
  if (Is4Bit(p.dtype_b)) {
    const int64_t inner = p.trans_b ? p.k : p.n;
    if (inner % 2 != 0) {
      return Invalid(absl::StrCat("field ", p.trans_b ? "k" : "n", "=", inner,
                                  ": the inner dim of an int4 / float4 weight must be even "
                                  "(CheckInputShape)"));
    }
  }
  QuantType type = QuantType::kNone;
  bool has_offset = false;
  if (auto s = CheckAntiQuantShape(p, &type, &has_offset); !s.ok()) return s;
  if (auto s = CheckQuantShape(p); !s.ok()) return s;
  if (auto s = CheckBiasShape(p, c.bias); !s.ok()) return s;
  // CheckShapeDims on DAV_3510.
  const uint64_t k = static_cast<uint64_t>(p.k), n = static_cast<uint64_t>(p.n);
  if (p.dtype_b == DataType::kInt8 && nz && (k > kMaxNzKn || n > kMaxNzKn)) {
    return Invalid(absl::StrCat("fields k=", k, ", n=", n, ": an int8 NZ weight needs k and n <= ",
                                kMaxNzKn, " (CheckShapeDims)"));
  }
  const uint64_t g = static_cast<uint64_t>(p.quant.group_size);
  if (g >= k || g % kMinGroup != 0) {
    return Invalid(absl::StrCat("field quant.group_size=", g, ": must be below k=", k,
                                " and a multiple of ", kMinGroup, " (CheckShapeDims)"));
  }
  if (p.quant.antiquant_scale.dtype == DataType::kFloat8E8M0 && g != kMxGroup) {
    return Invalid(absl::StrCat("field quant.group_size=", g, ": must be ", kMxGroup,
                                " with a float8_e8m0 (MX) antiquant scale (CheckShapeDims)"));
  }
  if (nz && !NzSupported(p, type)) {
    return Invalid(absl::StrCat(
        "field format_b=FRACTAL_NZ: an NZ weight takes int4 / float4 weights without transposes, "
        "int8 per-channel without transpose_x and int8 per-group without transposes, never an "
        "int8 output or a per-tensor scale; here ",
        Name(p.dtype_b), " ", std::string(QuantTypeName(type)), p.trans_a ? ", transpose_x" : "",
        p.trans_b ? ", transpose_weight" : "", " (CheckNzSupportedScenarios)"));
  }
  if (IsFp8(p.dtype_b) && (p.trans_a || p.dtype_c == DataType::kInt8 || nz)) {
    return Invalid(absl::StrCat("field dtype_b=", Name(p.dtype_b),
                                ": an float8_e4m3fn / hifloat8 weight takes no transpose_x, int8 "
                                "output or NZ format (CheckPara)"));
  }
  return absl::OkStatus();
}

absl::Status CheckWeightQuantOnChip(const MatmulProblem& p, const ChipSpec& chip) {
  if (chip.aiv_num != 2 * chip.aic_num) {
    return Invalid(absl::StrCat("platform aiv_num=", chip.aiv_num, ", aic_num=", chip.aic_num,
                                ": WeightQuantBatchMatmulV2 needs aiv_num == 2 * aic_num "
                                "(CheckCoreNum)"));
  }
  if (p.trans_a) return Invalid("field trans_a: transpose_x must be false (CheckTempLimit)");
  if (p.dtype_c == DataType::kInt8) {
    return Invalid("field dtype_c=int8: y cannot be int8 on DAV_3510 (CheckTempLimit)");
  }
  const QuantType type = CheckedAntiquantType(p);
  if (IsFp8(p.dtype_b) &&
      !(type == QuantType::kPerChannel || (type == QuantType::kPerTensor && p.n == 1))) {
    return Invalid(absl::StrCat("field quant.antiquant_scale: a ", Name(p.dtype_b),
                                " weight takes a per-channel scale only, here ",
                                std::string(QuantTypeName(type)), " (CheckTempLimit)"));
  }
  if (IsFp4(p.dtype_b) && (type == QuantType::kPerTensor || type == QuantType::kPerChannel)) {
    return Invalid(
        absl::StrCat("field quant.antiquant_scale: a float4 weight takes MX or "
                     "per-group scales only, here ",
                     std::string(QuantTypeName(type)), " (CheckTempLimit)"));
  }
  const int64_t g = p.quant.group_size;
  if (type == QuantType::kPerGroup && IsFp4(p.dtype_b) && g != 32 && g != 64 && g != 128 &&
      g != 256) {
    return Invalid(absl::StrCat("field quant.group_size=", g,
                                ": a float4 per-group weight takes 32, 64, 128 or 256 "
                                "(CheckTempLimit)"));
  }
  return absl::OkStatus();
}

WqFacts ParseWeightQuant(const MatmulProblem& p) {
  WqFacts f;
  f.m = static_cast<uint64_t>(p.m);
  f.n = static_cast<uint64_t>(p.n);
  f.k = static_cast<uint64_t>(p.k);
  f.trans_a = p.trans_a;
  f.trans_b = p.trans_b;
  f.x = p.dtype_a;
  f.weight = p.dtype_b;
  f.y = p.dtype_c;
  f.antiquant_scale = p.quant.antiquant_scale.dtype;
  f.group_size = static_cast<uint64_t>(p.quant.group_size);
  if (p.has_bias) {
    f.bias = p.dtype_bias;
    const std::vector<int64_t> bias =
        p.quant.bias_shape.empty() ? std::vector<int64_t>{p.n} : p.quant.bias_shape;
    f.has_bias = ShapeSize(bias) != 0;
  }
  f.weight_nz = p.format_b == Format::kFractalNz;
  if (f.weight_nz) {
    const std::vector<int64_t> storage = WeightStorageShape(p);
    f.c0 = storage.empty() ? 0 : static_cast<uint64_t>(storage.back());
  }
  if (IsPackedWeight(p.dtype_b)) f.c0 *= kPackedElems;
  f.has_antiquant_offset = HasElements(p.quant.antiquant_offset);
  if (f.antiquant_scale == DataType::kFloat8E8M0) {
    f.antiquant = QuantType::kMx;
  } else if (ShapeSize(p.quant.antiquant_scale.shape) == 1) {
    f.antiquant = QuantType::kPerTensor;
  } else if (f.group_size > 0) {
    f.antiquant = QuantType::kPerGroup;
  } else {
    f.antiquant = QuantType::kPerChannel;
  }
  if (HasElements(p.quant.quant_scale)) {
    f.quant =
        ShapeSize(p.quant.quant_scale.shape) == 1 ? QuantType::kPerTensor : QuantType::kPerChannel;
  }
  // ConfigureReuseScenarios.
  if (IsFp8(f.weight) && f.antiquant == QuantType::kPerTensor) f.antiquant = QuantType::kPerChannel;
  if (f.weight == DataType::kInt32) f.weight = DataType::kInt4;
  if (f.weight == DataType::kFloat32) f.weight = DataType::kFloat4E2M1;
  return f;
}

}  // namespace npu::tiling::weight_quant
