#include "server/tiling/grouped/quant/gqmm_parse.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "server/tiling/int_math.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::grouped::quant {
namespace {

using Dims = std::vector<int64_t>;

// gert::Shape::GetDim past the rank reads as this; CANN indexes a few shapes
// before it knows their rank, and this keeps those comparisons CANN's.
constexpr int64_t kMissingDim = std::numeric_limits<int64_t>::min();
// The request's fields, as the messages name them.
constexpr absl::string_view kField = "grouped.";
// group_list holds at most 1024 groups (GMM_MAX_GROUP_LIST_SIZE).
constexpr uint64_t kMaxGroups = 1024;
// A sparse group list (group_list_type 2) is [E, 2]: each group's start and
// row count.
constexpr int64_t kSparsePairDim = 2;
// MX scales: one float8_e8m0 per 32 elements of k, stored in pairs, so a
// scale's k dim is ceil(k / 64) (split M) or k / 64 + E (split K: each
// group's k padded to whole pairs), and its last dim is 2.
constexpr uint64_t kMxScaleKSpan = 64;
constexpr int64_t kMxPairDim = 2;
// Per-block weight scales and per-group x scales cover 128 elements a dim.
constexpr uint64_t kPerBlockSize = 128;
// An NZ weight [.., r, c] is stored [.., ceil(c / c0), ceil(r / 16), 16, c0]
// with c0 = 64 for 4-bit weights and 32 otherwise.
constexpr size_t kNzRank = 5;
constexpr uint64_t kNzRows = 16;
constexpr uint64_t kNzC0Byte = 32;
constexpr uint64_t kNzC04Bit = 64;
// CANN's activations: 0 none, 1 relu, 2 gelu_tanh, 3 gelu_erf (refused),
// 4 fast_gelu, 5 silu.
constexpr int8_t kActGeluErf = 3;
constexpr int8_t kActMax = 5;

struct State {
  const GqmmRequest& r;
  GqmmFacts f;
  uint32_t aic_num = 0;
  uint32_t aiv_num = 0;
};

absl::Status Refuse(absl::string_view field, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat("field ", kField, field, ": ", rule));
}

std::string Text(const Dims& dims) { return absl::StrCat("[", absl::StrJoin(dims, ", "), "]"); }

std::string Name(GeType type) { return std::string(GeTypeName(type)); }

// The dim `from_end` places from the end (1: the last), CANN's way.
int64_t DimFromEnd(const Dims& dims, size_t from_end) {
  return from_end >= 1 && from_end <= dims.size() ? dims[dims.size() - from_end] : kMissingDim;
}
int64_t Dim(const Dims& dims, size_t index) {
  return index < dims.size() ? dims[index] : kMissingDim;
}
// CANN compares its signed dims with unsigned sizes after a cast.
bool DimIs(int64_t dim, uint64_t size) { return static_cast<uint64_t>(dim) == size; }

// gert::Shape::GetShapeSize: the product of the dims in int64 (1 for a
// scalar), wrapping as CANN's multiplication does.
uint64_t ShapeSize(const Dims& dims) {
  uint64_t size = 1;
  for (int64_t d : dims) size *= static_cast<uint64_t>(d);
  return size;
}

bool IsOneOf(GeType type, std::initializer_list<GeType> types) {
  return std::find(types.begin(), types.end(), type) != types.end();
}

// The logical n of a weight tensor [.., k, n] ([.., n, k] transposed).
uint64_t LogicalN(const Dims& weight, bool trans_b) {
  return static_cast<uint64_t>(DimFromEnd(weight, trans_b ? 2 : 1));
}

// The tensors of a list CANN counts (GetTensorListSize): at most 128.
uint64_t ListSize(const GqmmTensor& t) {
  return std::min<uint64_t>(t.instances.size(), kGqmmMaxTensors);
}

// ---------------------------------------------------------------- dtypes

// CheckPertokenScaleDtypeForWeightNz.
absl::Status CheckNzScaleDtypes(const GqmmFacts& f, bool int8, bool fp) {
  if (int8 && (f.per_token != GeType::kFloat ||
               (f.scale != GeType::kBFloat16 && f.scale != GeType::kFloat))) {
    return Refuse("per_token_scale",
                  absl::StrCat("with an NZ weight and INT8 x and weight, per_token_scale must be "
                               "FLOAT and scale BFLOAT16 or FLOAT, not ",
                               Name(f.per_token), " / ", Name(f.scale),
                               " (CheckPertokenScaleDtypeForWeightNz)"));
  }
  if (fp && (f.per_token != GeType::kFloat8E8M0 || f.scale != GeType::kFloat8E8M0)) {
    return Refuse("per_token_scale",
                  absl::StrCat("with an NZ weight and FLOAT8_E4M3FN or FLOAT4 x and weight, "
                               "per_token_scale and scale must be FLOAT8_E8M0, not ",
                               Name(f.per_token), " / ", Name(f.scale),
                               " (CheckPertokenScaleDtypeForWeightNz)"));
  }
  return absl::OkStatus();
}

// CheckDtypeForWeightNz.
absl::Status CheckNzDtypes(const GqmmFacts& f, bool per_token_absent) {
  const bool int8 = f.a == GeType::kInt8 && f.b == GeType::kInt8;
  const bool fp8 = f.a == GeType::kFloat8E4M3 && f.b == GeType::kFloat8E4M3;
  const bool fp4 = IsFp4(f.a) && IsFp4(f.b);
  if (!int8 && !fp8 && !fp4) {
    return Refuse("weight",
                  absl::StrCat("an NZ weight needs x and weight both INT8, both FLOAT8_E4M3FN or "
                               "both FLOAT4 (E2M1 / E1M2), not ",
                               Name(f.a), " / ", Name(f.b), " (CheckDtypeForWeightNz)"));
  }
  if (f.c == GeType::kInt8) {
    return Refuse("y", "y cannot be INT8 with an NZ weight (CheckDtypeForWeightNz)");
  }
  if (!per_token_absent) return CheckNzScaleDtypes(f, int8, fp8 || fp4);
  if (!IsOneOf(f.scale, {GeType::kUint64, GeType::kInt64, GeType::kFloat, GeType::kBFloat16})) {
    return Refuse("scale", absl::StrCat("with an NZ weight and no per_token_scale, scale must be "
                                        "UINT64, INT64, FLOAT or BFLOAT16, not ",
                                        Name(f.scale), " (CheckDtypeForWeightNz)"));
  }
  return absl::OkStatus();
}

// CheckBiasDtype.
absl::Status CheckBiasDtype(const GqmmFacts& f) {
  if (IsFp4(f.a)) {
    if (f.bias != GeType::kFloat) {
      return Refuse("bias", absl::StrCat("bias must be FLOAT when x is FLOAT4, not ", Name(f.bias),
                                         " (CheckBiasDtype)"));
    }
    return absl::OkStatus();
  }
  if (f.a != GeType::kInt8) {
    return Refuse("bias",
                  absl::StrCat("x of ", Name(f.a),
                               " takes no bias; only INT8 and FLOAT4 x do (CheckBiasDtype)"));
  }
  bool allowed = false;
  const char* allowed_text = "";
  switch (f.c) {
    case GeType::kBFloat16:
      allowed = IsOneOf(f.bias, {GeType::kInt32, GeType::kBFloat16, GeType::kFloat});
      allowed_text = "INT32, BFLOAT16 or FLOAT when y is BFLOAT16";
      break;
    case GeType::kFloat16:
      allowed = IsOneOf(f.bias, {GeType::kInt32, GeType::kFloat16, GeType::kFloat});
      allowed_text = "INT32, FLOAT16 or FLOAT when y is FLOAT16";
      break;
    case GeType::kInt8:
    case GeType::kInt32:
      allowed = f.bias == GeType::kInt32;
      allowed_text = "INT32 when y is INT8 or INT32";
      break;
    default:
      return Refuse("y", absl::StrCat("with INT8 x, y must be BFLOAT16, FLOAT16, INT8 or INT32, "
                                      "not ",
                                      Name(f.c), " (CheckBiasDtype)"));
  }
  if (!allowed) {
    return Refuse("bias", absl::StrCat("with INT8 x, bias must be ", allowed_text, ", not ",
                                       Name(f.bias), " (CheckBiasDtype)"));
  }
  return absl::OkStatus();
}

// AnalyzeDtype: reads every dtype this path uses, with CANN's defaults for
// the absent inputs, and checks them.
absl::Status AnalyzeDtype(State& s) {
  const GqmmRequest& r = s.r;
  GqmmFacts& f = s.f;
  auto legal = [](GeType t) {
    return IsOneOf(t, {GeType::kInt8, GeType::kHiFloat8, GeType::kFloat8E4M3, GeType::kFloat8E5M2,
                       GeType::kFloat4E2M1, GeType::kFloat4E1M2});
  };
  constexpr char kLegalText[] =
      "INT8, HIFLOAT8, FLOAT8_E4M3FN, FLOAT8_E5M2, FLOAT4_E2M1 or FLOAT4_E1M2";
  if (!r.x.present()) return Refuse("x", "the quant path needs an x tensor");
  f.a = r.x.dtype;
  if (!legal(f.a)) {
    return Refuse(
        "x", absl::StrCat("x must be ", kLegalText, ", not ", Name(f.a), " (ValidateAAndWDtype)"));
  }
  if (!r.weight.present()) return Refuse("weight", "the quant path needs a weight tensor");
  f.b = r.weight.dtype;
  if (!legal(f.b)) {
    return Refuse("weight", absl::StrCat("weight must be ", kLegalText, ", not ", Name(f.b),
                                         " (ValidateAAndWDtype)"));
  }
  f.weight_nz = r.weight.nz;
  if ((f.a == GeType::kFloat4E1M2 || f.b == GeType::kFloat4E1M2) && !f.weight_nz) {
    return Refuse("weight", "a FLOAT4_E1M2 x or weight needs an NZ weight (AnalyzeDtype)");
  }
  f.has_bias = r.bias.present() && ShapeSize(r.bias.instances[0].storage) != 0;
  if (f.has_bias) f.bias = r.bias.dtype;
  if (!r.y.present()) return Refuse("y", "the quant path needs a y tensor");
  f.c = r.y.dtype;
  if (r.scale.present() && f.c != GeType::kInt32) f.scale = r.scale.dtype;
  if (r.per_token_scale.present()) f.per_token = r.per_token_scale.dtype;
  if (f.weight_nz) RETURN_IF_ERROR(CheckNzDtypes(f, !r.per_token_scale.present()));
  if (f.has_bias) RETURN_IF_ERROR(CheckBiasDtype(f));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- attrs

// AnalyzeAttrs. CANN keeps group_type, group_list_type, split_item and
// act_type in int8 members, so it reads each attribute modulo 256.
absl::Status AnalyzeAttrs(State& s) {
  const GqmmRequest& r = s.r;
  GqmmFacts& f = s.f;
  f.trans_b = r.transpose_weight;
  f.trans_a = r.transpose_x;
  f.group_type = static_cast<int8_t>(r.group_type);
  f.split_item = static_cast<int8_t>(r.split_item);
  f.act_type = static_cast<int8_t>(r.act_type);
  f.group_list_type = static_cast<int8_t>(r.group_list_type);
  if (f.group_list_type < 0 || f.group_list_type > 2) {
    return Refuse("group_list_type", absl::StrCat("group_list_type=", r.group_list_type,
                                                  " must be 0 (cumsum), 1 (count) or 2 (sparse) "
                                                  "(CheckGroupListType)"));
  }
  if (f.group_type != kGroupSplitM && f.group_type != kGroupSplitK) {
    return Refuse("group_type", absl::StrCat("group_type=", r.group_type,
                                             " must be 0 (split M) or 2 (split K) on the quant "
                                             "path (AnalyzeAttrs)"));
  }
  if (IsFp4(f.a) && f.group_type != kGroupSplitM) {
    return Refuse("group_type", absl::StrCat("group_type=", r.group_type,
                                             " must be 0 (split M) when x is FLOAT4 "
                                             "(AnalyzeAttrs)"));
  }
  if (f.group_type == kGroupSplitM) {
    if (f.trans_a) {
      return Refuse("transpose_x", "transpose_x must be false with group_type 0 (AnalyzeAttrs)");
    }
  } else {
    if (!f.trans_a) {
      return Refuse("transpose_x",
                    "transpose_x must be true with group_type 2 "
                    "(CheckTransposeAndFormatByGroupType)");
    }
    if (f.trans_b) {
      return Refuse("transpose_weight",
                    "transpose_weight must be false with group_type 2 "
                    "(CheckTransposeAndFormatByGroupType)");
    }
    if (f.weight_nz) {
      return Refuse("weight",
                    "the weight must be ND with group_type 2 "
                    "(CheckTransposeAndFormatByGroupType)");
    }
  }
  f.single_x = r.x.instances.size() < 2;
  f.single_w = r.weight.instances.size() < 2;
  f.single_y = f.split_item == 2 || f.split_item == 3;
  return absl::OkStatus();
}

// ---------------------------------------------------------------- shapes

// SetGroupNum: the group count is group_list's first dim.
absl::Status SetGroupNum(State& s) {
  if (!s.r.group_list.present()) {
    return Refuse("group_list", "the quant path needs a group_list (SetGroupNum)");
  }
  const Dims& list = s.r.group_list.instances[0].storage;
  if (s.f.group_list_type == 2) {
    if (list.size() != 2) {
      return Refuse("group_list", absl::StrCat("group_list=", Text(list),
                                               " must have 2 dims with group_list_type 2 "
                                               "(SetGroupNum)"));
    }
    if (Dim(list, 1) != kSparsePairDim) {
      return Refuse("group_list", absl::StrCat("group_list=", Text(list),
                                               ": its 2nd dim must be 2 with group_list_type 2 "
                                               "(SetGroupNum)"));
    }
  } else if (list.size() != 1) {
    return Refuse("group_list",
                  absl::StrCat("group_list=", Text(list), " must have 1 dim with group_list_type ",
                               s.f.group_list_type, " (SetGroupNum)"));
  }
  s.f.group_num = static_cast<uint64_t>(Dim(list, 0));
  if (s.f.group_num > kMaxGroups) {
    return Refuse("group_list",
                  absl::StrCat("the group count ", Dim(list, 0), " exceeds 1024 (SetGroupNum)"));
  }
  return absl::OkStatus();
}

// IsWeightNzMultiTensorLayout: split M, one x and one y, an NZ weight given
// as a list of 2-dim [k, n] tensors.
bool NzWeightList(const State& s) {
  return s.f.group_type == kGroupSplitM && s.f.single_x && s.f.single_y && s.f.weight_nz &&
         s.r.weight.instances[0].origin.size() == 2;
}

// CheckWeightTensorListForWeightNz.
absl::Status CheckNzWeightList(const State& s) {
  const bool list = NzWeightList(s);
  if (list && s.f.has_bias) {
    return Refuse("bias",
                  "a weight-NZ list (one x, one y, a 2-dim NZ weight per group) takes no "
                  "bias (CheckWeightTensorListForWeightNz)");
  }
  if (!list) return absl::OkStatus();
  const uint64_t weights = ListSize(s.r.weight);
  const uint64_t scales = ListSize(s.r.scale);
  if (weights != s.f.group_num) {
    return Refuse("weight", absl::StrCat("a weight-NZ list needs one weight tensor per group: ",
                                         weights, " tensors, ", s.f.group_num,
                                         " groups (CheckWeightTensorListForWeightNz)"));
  }
  if (scales != weights) {
    return Refuse("scale", absl::StrCat("a weight-NZ list needs one scale tensor per weight "
                                        "tensor: ",
                                        scales, " scales, ", weights,
                                        " weights (CheckWeightTensorListForWeightNz)"));
  }
  return absl::OkStatus();
}

// SetMKN: m and k from x[0], n from weight[0] (their origin shapes).
absl::Status SetMkn(State& s, const Dims& x, const Dims& w) {
  GqmmFacts& f = s.f;
  if (w.size() < 2) {
    return Refuse("weight", absl::StrCat("weight=", Text(w), " needs at least 2 dims (SetMKN)"));
  }
  if (x.size() < 2) {
    return Refuse("x", absl::StrCat("x=", Text(x), " needs at least 2 dims (SetMKN)"));
  }
  const int64_t m = DimFromEnd(x, f.trans_a ? 1 : 2);
  const int64_t k = DimFromEnd(x, f.trans_a ? 2 : 1);
  const int64_t n = DimFromEnd(w, f.trans_b ? 2 : 1);
  if ((ShapeSize(x) == 0 || ShapeSize(w) == 0) && f.group_type == kGroupSplitM) {
    return Refuse("x",
                  absl::StrCat("x=", Text(x), " and weight=", Text(w),
                               ": an empty x or weight is refused with group_type 0 (SetMKN)"));
  }
  f.m = static_cast<uint64_t>(m);
  f.k = static_cast<uint64_t>(k);
  f.n = static_cast<uint64_t>(n);
  return absl::OkStatus();
}

// SetPerGroupQuantMode: per-group x ([m, ceil(k / 128)]) with per-block
// weight scales ([E, ceil(k / 128), ceil(n / 128)]); split K counts k per
// group (k / 128 + E). Only both sides together change the modes.
void SetPerGroupQuantMode(State& s, const Dims& x_scale, const Dims& w_scale, const Dims& w) {
  GqmmFacts& f = s.f;
  if (f.a == GeType::kInt8) return;
  const size_t x_dims = x_scale.size();
  if (x_dims < 2) return;
  const size_t w_dims = w_scale.size();
  if (w.size() != w_dims || (f.group_type == kGroupSplitM && w_dims < 3) ||
      (f.group_type == kGroupSplitK && w_dims < 2)) {
    return;
  }
  uint32_t a_mode = kModeDefault;
  uint32_t b_mode = kModeDefault;
  if (f.group_type == kGroupSplitM) {
    for (size_t i = 1; i < w_dims; ++i) {
      // CeilDiv of a signed dim by an unsigned size: the dim's bits, unsigned.
      if (!DimIs(w_scale[i], CeilDiv(static_cast<uint64_t>(w[i]), kPerBlockSize))) return;
    }
    b_mode = kModePerBlock;
    const uint64_t scale_k = CeilDiv(f.k, kPerBlockSize);
    if (DimIs(DimFromEnd(x_scale, 1), scale_k) && DimIs(DimFromEnd(x_scale, 2), f.m)) {
      a_mode = kModePerGroup;
    }
  }
  if (f.group_type == kGroupSplitK) {
    const uint64_t scale_k = f.k / kPerBlockSize + f.group_num;
    const uint64_t scale_n = CeilDiv(f.n, kPerBlockSize);
    if (DimIs(DimFromEnd(x_scale, 2), scale_k) && DimIs(DimFromEnd(x_scale, 1), f.m)) {
      a_mode = kModePerGroup;
    }
    if (DimIs(DimFromEnd(w_scale, 2), scale_k) && DimIs(DimFromEnd(w_scale, 1), scale_n)) {
      b_mode = kModePerBlock;
    }
  }
  if (a_mode == kModePerGroup && b_mode == kModePerBlock) {
    f.a_mode = kModePerGroup;
    f.b_mode = kModePerBlock;
  }
}

// SetQuantMode: the modes from the scale dtype and the scales' shapes. An
// E8M0 scale is MX on both sides; otherwise the weight's scale is
// per-channel ([E, n], n > 1) or per-tensor ([E, 1] or [E]), and x's
// per-tensor ([E, 1], or [E] where E is not m or the split is K, for
// non-INT8 x) or per-token.
void SetQuantMode(State& s, const Dims& w_scale, const Dims* x_scale, const Dims& w) {
  GqmmFacts& f = s.f;
  if (f.scale == GeType::kFloat8E8M0) {
    f.a_mode = kModeMx;
    f.b_mode = kModeMx;
    return;
  }
  const size_t w_dims = w_scale.size();
  if (w_dims == 2 && DimIs(DimFromEnd(w_scale, 1), f.n) && f.n != 1) {
    f.b_mode = kModePerChannel;
  } else if ((w_dims == 2 && DimFromEnd(w_scale, 1) == 1) ||
             (w_dims == 1 && DimIs(w_scale[0], f.group_num))) {
    f.b_mode = kModePerTensor;
  }
  if (x_scale == nullptr) return;
  const size_t x_dims = x_scale->size();
  const bool per_tensor = (x_dims == 2 && DimFromEnd(*x_scale, 1) == 1) ||
                          (x_dims == 1 && DimIs((*x_scale)[0], f.group_num) &&
                           (f.group_type == kGroupSplitK || f.group_num != f.m));
  f.a_mode = f.a != GeType::kInt8 && per_tensor ? kModePerTensor : kModePerToken;
  SetPerGroupQuantMode(s, *x_scale, w_scale, w);
}

// CheckQuantParamsForMXTypeM: split M's MX scales, per weight tensor. The
// weight's scale is [E, ceil(k / 64), n, 2] ([E, n, ceil(k / 64), 2]
// transposed; a weight-NZ list's per tensor [n, ceil(k / 64), 2] or
// [ceil(k / 64), n, 2], either leading dim 1 a broadcast), x's [m,
// ceil(k / 64), 2].
absl::Status CheckMxSplitM(const State& s, const Dims& x_scale, const Dims& w_scale,
                           uint64_t expected_n) {
  const GqmmFacts& f = s.f;
  const bool list = NzWeightList(s);
  const size_t w_dims = list ? 3 : 4;
  if (w_scale.size() != w_dims) {
    return Refuse("scale",
                  absl::StrCat("scale=", Text(w_scale), " must have ", w_dims,
                               " dims for MX with group_type 0 (CheckQuantParamsForMXTypeM)"));
  }
  if (x_scale.size() != 3) {
    return Refuse("per_token_scale", absl::StrCat("per_token_scale=", Text(x_scale),
                                                  " must have 3 dims for MX with group_type 0 "
                                                  "(CheckQuantParamsForMXTypeM)"));
  }
  const uint64_t scale_k = CeilDiv(f.k, kMxScaleKSpan);
  const uint64_t n = expected_n == 0 ? f.n : expected_n;
  const int64_t w_last = DimFromEnd(w_scale, 1);
  const int64_t x_m = Dim(x_scale, f.trans_a ? 1 : 0);
  const int64_t x_k = Dim(x_scale, f.trans_a ? 0 : 1);
  const int64_t x_last = DimFromEnd(x_scale, 1);
  // The per-token scale's expected shape, spelled only in a refusal.
  const auto x_expected = [&] {
    return f.trans_a ? absl::StrCat("[", scale_k, ", ", f.m, ", 2]")
                     : absl::StrCat("[", f.m, ", ", scale_k, ", 2]");
  };
  if (list) {
    const int64_t first = w_scale[0];
    const int64_t second = w_scale[1];
    const bool nk = DimIs(first, n) && DimIs(second, scale_k);
    const bool kn = DimIs(first, scale_k) && DimIs(second, n);
    const bool broadcast = first == 1 || second == 1;
    if ((!nk && !kn && !broadcast) || w_last != kMxPairDim) {
      return Refuse("scale", absl::StrCat("scale=", Text(w_scale), " must be [", n, ", ", scale_k,
                                          ", 2] or [", scale_k, ", ", n,
                                          ", 2] for MX with a weight-NZ list "
                                          "(CheckQuantParamsForMXTypeM)"));
    }
    if (!DimIs(x_m, f.m) || !DimIs(x_k, scale_k) || x_last != kMxPairDim) {
      return Refuse("per_token_scale",
                    absl::StrCat("per_token_scale=", Text(x_scale), " must be ", x_expected(),
                                 " for MX (CheckQuantParamsForMXTypeM)"));
    }
    return absl::OkStatus();
  }
  const int64_t w_e = w_scale[0];
  const int64_t w_n = w_scale[f.trans_b ? 1 : 2];
  const int64_t w_k = w_scale[f.trans_b ? 2 : 1];
  // A k or n dim of 1 is a broadcast, and the weight's scale is not checked.
  if (w_k != 1 && w_n != 1 &&
      (!DimIs(w_e, f.group_num) || !DimIs(w_k, scale_k) || !DimIs(w_n, n) ||
       w_last != kMxPairDim)) {
    return Refuse("scale",
                  absl::StrCat("scale=", Text(w_scale), " must be ",
                               f.trans_b ? absl::StrCat("[", f.group_num, ", ", n, ", ", scale_k)
                                         : absl::StrCat("[", f.group_num, ", ", scale_k, ", ", n),
                               ", 2] for MX with group_type 0 (CheckQuantParamsForMXTypeM)"));
  }
  if (!DimIs(x_m, f.m) || !DimIs(x_k, scale_k) || x_last != kMxPairDim) {
    return Refuse("per_token_scale",
                  absl::StrCat("per_token_scale=", Text(x_scale), " must be ", x_expected(),
                               " for MX (CheckQuantParamsForMXTypeM)"));
  }
  return absl::OkStatus();
}

// CheckQuantParamsForMXTypeK: split K's MX scales, with each group's k
// padded to whole pairs: the weight's [k / 64 + E, n, 2], x's [k / 64 + E,
// m, 2] (x transposed).
absl::Status CheckMxSplitK(const State& s, const Dims& x_scale, const Dims& w_scale) {
  const GqmmFacts& f = s.f;
  if (w_scale.size() != 3) {
    return Refuse("scale", absl::StrCat("scale=", Text(w_scale),
                                        " must have 3 dims for MX with group_type 2 "
                                        "(CheckQuantParamsForMXTypeK)"));
  }
  if (x_scale.size() != 3) {
    return Refuse("per_token_scale", absl::StrCat("per_token_scale=", Text(x_scale),
                                                  " must have 3 dims for MX with group_type 2 "
                                                  "(CheckQuantParamsForMXTypeK)"));
  }
  const int64_t x_last = DimFromEnd(x_scale, 1);
  const int64_t x_k = f.trans_a ? x_scale[0] : DimFromEnd(x_scale, 2);
  const int64_t x_m = f.trans_a ? DimFromEnd(x_scale, 2) : x_scale[0];
  const int64_t w_last = DimFromEnd(w_scale, 1);
  const int64_t w_n = f.trans_b ? w_scale[0] : DimFromEnd(w_scale, 2);
  const int64_t w_k = f.trans_b ? DimFromEnd(w_scale, 2) : w_scale[0];
  const uint64_t scale_k = f.k / kMxScaleKSpan + f.group_num;
  if (x_k != 1 && x_m != 1) {
    if (!f.trans_a || f.trans_b) {
      return Refuse("transpose_x",
                    "MX with group_type 2 needs transpose_x true and "
                    "transpose_weight false (CheckQuantParamsForMXTypeK)");
    }
    if (x_last != kMxPairDim || !DimIs(x_k, scale_k) || !DimIs(x_m, f.m)) {
      return Refuse(
          "per_token_scale",
          absl::StrCat("per_token_scale=", Text(x_scale), " must be [", scale_k, ", ", f.m,
                       ", 2] for MX with group_type 2 (k / 64 + E, m, 2) "
                       "(CheckQuantParamsForMXTypeK)"));
    }
  }
  if (w_last != kMxPairDim || !DimIs(w_k, scale_k) || !DimIs(w_n, f.n)) {
    return Refuse("scale", absl::StrCat("scale=", Text(w_scale), " must be ",
                                        f.trans_b ? absl::StrCat("[", f.n, ", ", scale_k)
                                                  : absl::StrCat("[", scale_k, ", ", f.n),
                                        ", 2] for MX with group_type 2 (k / 64 + E) "
                                        "(CheckQuantParamsForMXTypeK)"));
  }
  return absl::OkStatus();
}

// CheckQuantParamsForNonKGroupQuantMode: the weight's scale is [E], [E, 1]
// or [E, n]; with an INT8 y exactly [E, n].
absl::Status CheckNonKGroupScale(const State& s, const Dims& w_scale, uint64_t expected_n) {
  const GqmmFacts& f = s.f;
  const uint64_t n = expected_n == 0 ? f.n : expected_n;
  if (w_scale.size() != 1 && w_scale.size() != 2) {
    return Refuse("scale", absl::StrCat("scale=", Text(w_scale),
                                        " must have 1 or 2 dims outside the k-grouped modes "
                                        "(CheckQuantParamsForNonKGroupQuantMode)"));
  }
  if (f.c != GeType::kInt8) return absl::OkStatus();
  if (w_scale.size() == 1) {
    return Refuse("scale", absl::StrCat("scale=", Text(w_scale),
                                        " must have 2 dims when y is INT8 "
                                        "(CheckQuantParamsForNonKGroupQuantMode)"));
  }
  if (!DimIs(w_scale[0], f.group_num) || !DimIs(w_scale[1], n)) {
    return Refuse("scale", absl::StrCat("scale=", Text(w_scale), " must be [", f.group_num, ", ", n,
                                        "] when y is INT8 "
                                        "(CheckQuantParamsForNonKGroupQuantMode)"));
  }
  return absl::OkStatus();
}

// CheckQuantParams: one weight tensor's scale (`expected_n` its logical n, 0
// for weight[0]'s).
absl::Status CheckQuantParams(const State& s, const Dims* x_scale, const Dims& w_scale,
                              uint64_t expected_n) {
  const uint32_t b = s.f.b_mode;
  if (b != kModeMx && b != kModePerGroup && b != kModePerBlock) {
    RETURN_IF_ERROR(CheckNonKGroupScale(s, w_scale, expected_n));
  }
  if (b == kModeMx) {
    if (x_scale == nullptr) {
      return Refuse("per_token_scale",
                    "MX needs a per_token_scale "
                    "(CheckQuantParamsForMxQuantMode)");
    }
    return s.f.group_type == kGroupSplitM ? CheckMxSplitM(s, *x_scale, w_scale, expected_n)
                                          : CheckMxSplitK(s, *x_scale, w_scale);
  }
  return absl::OkStatus();
}

// CheckShapeForWeightNz: one NZ weight tensor's storage
// [.., ceil(c / c0), ceil(r / 16), 16, c0] of its matrix [r, c] ([k, n],
// [n, k] transposed), 5 dims (4 for a weight-NZ list's tensors too).
absl::Status CheckNzWeight(const State& s, const Dims& storage, uint64_t expected_n) {
  const GqmmFacts& f = s.f;
  const bool list = NzWeightList(s);
  const size_t dims = storage.size();
  if (dims != kNzRank && !(list && dims == kNzRank - 1)) {
    return Refuse("weight", absl::StrCat("the NZ weight's storage ", Text(storage), " must have ",
                                         list ? "4 or 5" : "5", " dims (CheckWeightNzDimNum)"));
  }
  const uint64_t n = expected_n == 0 ? f.n : expected_n;
  const uint64_t c0 = IsFourBit(f.b) ? kNzC04Bit : kNzC0Byte;
  const size_t at = dims - (kNzRank - 1);
  if (!DimIs(storage[at + 3], c0)) {
    return Refuse("weight",
                  absl::StrCat("the NZ weight's storage ", Text(storage), ": its last dim must be ",
                               c0, " for ", Name(f.b), " (CheckWeightNzLastDim)"));
  }
  if (storage[at + 2] != static_cast<int64_t>(kNzRows)) {
    return Refuse("weight", absl::StrCat("the NZ weight's storage ", Text(storage),
                                         ": its second-last dim must be 16 "
                                         "(CheckWeightNzSecondLastDim)"));
  }
  const int64_t third = storage[at + 1];
  const int64_t second = storage[at];
  const uint64_t rows = f.trans_b ? n : f.k;
  const uint64_t cols = f.trans_b ? f.k : n;
  if (!DimIs(third, CeilDiv(rows, kNzRows))) {
    return Refuse("weight", absl::StrCat("the NZ weight's storage ", Text(storage),
                                         ": its third dim must be ceil(", f.trans_b ? "n" : "k",
                                         " / 16) = ", CeilDiv(rows, kNzRows),
                                         " (CheckWeightNzTransposedDims)"));
  }
  if (!DimIs(second, CeilDiv(cols, c0))) {
    return Refuse("weight",
                  absl::StrCat("the NZ weight's storage ", Text(storage),
                               ": its second dim must be ceil(", f.trans_b ? "k" : "n", " / ", c0,
                               ") = ", CeilDiv(cols, c0), " (CheckWeightNzTransposedDims)"));
  }
  if (f.k == 1 || n == 1) {
    return Refuse("weight", absl::StrCat("an NZ weight needs n and k above 1, not n=", n,
                                         " k=", f.k, " (CheckShapeForWeightNz)"));
  }
  return absl::OkStatus();
}

// CheckMultiWeightNzInputs: weight tensors 1.. of a weight-NZ list, each
// with weight[0]'s n, its own scale and storage.
absl::Status CheckNzWeightListShapes(State& s, const Dims* x_scale) {
  if (!NzWeightList(s)) return absl::OkStatus();
  const GqmmRequest& r = s.r;
  const uint64_t first_n = LogicalN(r.weight.instances[0].origin, s.f.trans_b);
  const uint64_t weights = ListSize(r.weight);
  for (uint64_t i = 1; i < weights; ++i) {
    const GroupedShape& w = r.weight.instances[i];
    const uint64_t n = LogicalN(w.origin, s.f.trans_b);
    if (n != first_n) {
      return Refuse("weight", absl::StrCat("weight[", i, "] has n=", static_cast<int64_t>(n),
                                           ", weight[0] n=", first_n,
                                           "; a weight-NZ list shares one n "
                                           "(CheckMultiWeightNzInputs)"));
    }
    RETURN_IF_ERROR(CheckQuantParams(s, x_scale, r.scale.instances[i].origin, n));
    RETURN_IF_ERROR(CheckNzWeight(s, w.storage, n));
  }
  return absl::OkStatus();
}

// CheckActiveModeDtype.
absl::Status CheckActivationDtypes(const GqmmFacts& f, bool has_x_scale) {
  if (f.a != GeType::kInt8 || f.b != GeType::kInt8) {
    return Refuse("act_type", absl::StrCat("an activation needs INT8 x and weight, not ", Name(f.a),
                                           " / ", Name(f.b), " (CheckActiveModeDtype)"));
  }
  if (f.c == GeType::kBFloat16) {
    if (f.scale != GeType::kBFloat16 && f.scale != GeType::kFloat) {
      return Refuse("scale", absl::StrCat("with an activation and a BFLOAT16 y, scale must be "
                                          "BFLOAT16 or FLOAT, not ",
                                          Name(f.scale), " (CheckActiveModeDtype)"));
    }
  } else if (f.c == GeType::kFloat16) {
    if (f.scale != GeType::kFloat) {
      return Refuse("scale", absl::StrCat("with an activation and a FLOAT16 y, scale must be "
                                          "FLOAT, not ",
                                          Name(f.scale), " (CheckActiveModeDtype)"));
    }
  } else {
    return Refuse("y", absl::StrCat("with an activation, y must be BFLOAT16 or FLOAT16, not ",
                                    Name(f.c), " (CheckActiveModeDtype)"));
  }
  if (f.per_token != GeType::kFloat && has_x_scale) {
    return Refuse("per_token_scale", absl::StrCat("with an activation, per_token_scale must be "
                                                  "FLOAT, not ",
                                                  Name(f.per_token), " (CheckActiveModeDtype)"));
  }
  return absl::OkStatus();
}

// CheckActiveMode: the activation, its dtypes and its scales ([E, n], x's
// [m]); with n = 1 the weight's scale counts as per-channel.
absl::Status CheckActivation(State& s, const Dims& w_scale, const Dims* x_scale) {
  GqmmFacts& f = s.f;
  if (f.act_type == kActGeluErf) {
    return Refuse("act_type", "act_type 3 (gelu_erf) is not supported (CheckActiveMode)");
  }
  if (f.act_type > kActMax || f.act_type < 0) {
    return Refuse("act_type", absl::StrCat("act_type=", s.r.act_type,
                                           " must be 1 (relu), 2 (gelu_tanh), 4 (fast_gelu) or "
                                           "5 (silu) (CheckActiveMode)"));
  }
  RETURN_IF_ERROR(CheckActivationDtypes(f, x_scale != nullptr));
  if (x_scale != nullptr) {
    if (x_scale->size() != 1) {
      return Refuse("per_token_scale", absl::StrCat("per_token_scale=", Text(*x_scale),
                                                    " must have 1 dim with an activation "
                                                    "(CheckActiveMode)"));
    }
    if (!DimIs((*x_scale)[0], f.m)) {
      return Refuse("per_token_scale",
                    absl::StrCat("per_token_scale=", Text(*x_scale), " must be [", f.m,
                                 "] with an activation (CheckActiveMode)"));
    }
  }
  if (w_scale.size() != 2) {
    return Refuse("scale", absl::StrCat("scale=", Text(w_scale),
                                        " must have 2 dims with an activation (CheckActiveMode)"));
  }
  if (!DimIs(w_scale[0], f.group_num) || !DimIs(w_scale[1], f.n)) {
    return Refuse("scale", absl::StrCat("scale=", Text(w_scale), " must be [", f.group_num, ", ",
                                        f.n, "] with an activation (CheckActiveMode)"));
  }
  if (f.n == 1) f.b_mode = kModePerChannel;
  return absl::OkStatus();
}

// CheckFp4Shape and CheckBiasShape, for FLOAT4 x.
absl::Status CheckFp4Shapes(const State& s) {
  const GqmmFacts& f = s.f;
  if (f.k % 2 != 0) {
    return Refuse("x", absl::StrCat("k=", f.k, " must be even when x is FLOAT4 (CheckFp4Shape)"));
  }
  if (f.k == 2) return Refuse("x", "k=2 is not supported when x is FLOAT4 (CheckFp4Shape)");
  if (!f.trans_b && f.n % 2 != 0) {
    return Refuse("weight", absl::StrCat("n=", f.n,
                                         " must be even when x is FLOAT4 and the weight is not "
                                         "transposed (CheckFp4Shape)"));
  }
  if (!f.has_bias) return absl::OkStatus();
  const Dims& bias = s.r.bias.instances[0].storage;
  if (bias.size() != 2) {
    return Refuse("bias", absl::StrCat("bias=", Text(bias),
                                       " must have 2 dims when x is FLOAT4 (CheckBiasShape)"));
  }
  if (!DimIs(bias[0], f.group_num) || !DimIs(bias[1], f.n)) {
    return Refuse("bias", absl::StrCat("bias=", Text(bias), " must be [", f.group_num, ", ", f.n,
                                       "] when x is FLOAT4 (CheckBiasShape)"));
  }
  return absl::OkStatus();
}

// SetKernelType: MX dequantizes in the cube, per-block weights run their
// own kernel, per-tensor x and weight without a bias epilogue dequantize in
// the fixpipe, and a float bias on INT8 x or a scale other than a 64-bit
// packed one needs the vector cores.
void SetKernelType(GqmmFacts& f) {
  f.kernel_type = GqmmKernelType::kFixpipeDequant;
  if (f.b_mode == kModeMx) return;
  if (f.b_mode == kModePerBlock) {
    f.kernel_type = GqmmKernelType::kPerGroupBlock;
    return;
  }
  const bool per_tensor_cube = f.a_mode <= kModePerTensor && f.b_mode == kModePerTensor;
  const bool bias_epilogue = f.a == GeType::kInt8 && f.has_bias && f.bias != GeType::kInt32;
  if (per_tensor_cube && !bias_epilogue) return;
  const bool scale_epilogue = f.scale != GeType::kUint64 && f.scale != GeType::kInt64;
  if (bias_epilogue || scale_epilogue) f.kernel_type = GqmmKernelType::kVectorDequant;
}

// CheckCoreNum: split K and the mix kernels run one cube core with two
// vector cores, which the compile info's counts must match.
absl::Status CheckCoreNum(const State& s) {
  if (s.aiv_num == 2u * s.aic_num) return absl::OkStatus();
  const char* why = nullptr;
  if (s.f.group_type == kGroupSplitK) {
    why = "group_type 2 runs a mix kernel";
  } else if (s.f.kernel_type != GqmmKernelType::kFixpipeDequant) {
    why = s.f.kernel_type == GqmmKernelType::kVectorDequant
              ? "the vector-dequant kernel (kernel type 1) is a mix kernel"
              : "the per-group / per-block kernel (kernel type 2) is a mix kernel";
  }
  if (why == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("platform aiv_num=", s.aiv_num, ", aic_num=", s.aic_num, ": ", why,
                   " and needs aiv_num == 2 * aic_num (CheckCoreNum)"));
}

// AnalyzeInputs.
absl::Status AnalyzeInputs(State& s) {
  const GqmmRequest& r = s.r;
  const Dims& x = r.x.instances[0].origin;
  const Dims& w = r.weight.instances[0].origin;
  RETURN_IF_ERROR(SetGroupNum(s));
  RETURN_IF_ERROR(CheckNzWeightList(s));
  RETURN_IF_ERROR(SetMkn(s, x, w));
  GqmmFacts& f = s.f;
  f.nz_weight_list = NzWeightList(s);
  if (f.nz_weight_list) {
    for (uint64_t i = 0; i < ListSize(r.weight); ++i) {
      f.weight_n.push_back(LogicalN(r.weight.instances[i].origin, f.trans_b));
    }
  }
  // An INT32 y is the matmul's accumulator itself: no scales are read.
  if (f.c == GeType::kInt32) return absl::OkStatus();
  if (!r.scale.present()) {
    return Refuse("scale", absl::StrCat("a scale is needed unless y is INT32 (y is ", Name(f.c),
                                        ") (AnalyzeInputs)"));
  }
  const Dims& w_scale = r.scale.instances[0].origin;
  if (w_scale.empty()) {
    return Refuse("scale", "scale needs at least 1 dim (AnalyzeInputs)");
  }
  const Dims* x_scale =
      r.per_token_scale.present() ? &r.per_token_scale.instances[0].storage : nullptr;
  SetQuantMode(s, w_scale, x_scale, w);
  RETURN_IF_ERROR(CheckQuantParams(s, x_scale, w_scale, 0));
  if (f.weight_nz) RETURN_IF_ERROR(CheckNzWeight(s, r.weight.instances[0].storage, 0));
  RETURN_IF_ERROR(CheckNzWeightListShapes(s, x_scale));
  if (f.act_type != 0) RETURN_IF_ERROR(CheckActivation(s, w_scale, x_scale));
  if (IsFp4(f.a)) RETURN_IF_ERROR(CheckFp4Shapes(s));
  SetKernelType(f);
  return CheckCoreNum(s);
}

}  // namespace

absl::StatusOr<GqmmFacts> ParseGroupedQuant(const GqmmRequest& request, uint32_t aic_num,
                                            uint32_t aiv_num) {
  State s{request, GqmmFacts{}, aic_num, aiv_num};
  RETURN_IF_ERROR(AnalyzeDtype(s));
  RETURN_IF_ERROR(AnalyzeAttrs(s));
  RETURN_IF_ERROR(AnalyzeInputs(s));
  return s.f;
}

std::string_view GeTypeName(GeType type) {
  switch (type) {
    case GeType::kFloat:
      return "FLOAT";
    case GeType::kFloat16:
      return "FLOAT16";
    case GeType::kInt8:
      return "INT8";
    case GeType::kInt32:
      return "INT32";
    case GeType::kUint8:
      return "UINT8";
    case GeType::kInt64:
      return "INT64";
    case GeType::kUint64:
      return "UINT64";
    case GeType::kBFloat16:
      return "BF16";
    case GeType::kInt4:
      return "INT4";
    case GeType::kHiFloat8:
      return "HIFLOAT8";
    case GeType::kFloat8E5M2:
      return "FLOAT8_E5M2";
    case GeType::kFloat8E4M3:
      return "FLOAT8_E4M3FN";
    case GeType::kFloat8E8M0:
      return "FLOAT8_E8M0";
    case GeType::kFloat4E2M1:
      return "FLOAT4_E2M1";
    case GeType::kFloat4E1M2:
      return "FLOAT4_E1M2";
  }
  return "UNDEFINED";
}

uint64_t GeSize(GeType type) {
  switch (type) {
    case GeType::kFloat:
    case GeType::kInt32:
      return 4;
    case GeType::kFloat16:
    case GeType::kBFloat16:
      return 2;
    case GeType::kInt64:
    case GeType::kUint64:
      return 8;
    case GeType::kInt4:
    case GeType::kFloat4E2M1:
    case GeType::kFloat4E1M2:
      return 1004;
    case GeType::kInt8:
    case GeType::kUint8:
    case GeType::kHiFloat8:
    case GeType::kFloat8E5M2:
    case GeType::kFloat8E4M3:
    case GeType::kFloat8E8M0:
      return 1;
  }
  return 1;
}

bool IsFourBit(GeType type) {
  return type == GeType::kInt4 || type == GeType::kFloat4E2M1 || type == GeType::kFloat4E1M2;
}

bool IsFp4(GeType type) { return type == GeType::kFloat4E2M1 || type == GeType::kFloat4E1M2; }

std::string_view QuantModeName(uint32_t mode) {
  switch (mode) {
    case kModeDefault:
      return "DEFAULT";
    case kModePerTensor:
      return "PERTENSOR";
    case kModePerChannel:
      return "PERCHANNEL";
    case kModePerToken:
      return "PERTOKEN";
    case kModeMx:
      return "MX";
    case kModePerGroup:
      return "PERGROUP";
    case kModePerBlock:
      return "PERBLOCK";
    default:
      return "UNKNOWN";
  }
}

std::string_view KernelTypeName(GqmmKernelType type) {
  switch (type) {
    case GqmmKernelType::kFixpipeDequant:
      return "DEQUANT_FIXP";
    case GqmmKernelType::kVectorDequant:
      return "DEQUANT_VECTOR";
    case GqmmKernelType::kPerGroupBlock:
      return "PERGROUP_PERBLOCK";
  }
  return "UNKNOWN";
}

}  // namespace npu::tiling::grouped::quant
