#include "server/tiling/grouped/weight_quant/gwq_parse.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace npu::tiling::grouped::weight_quant {
namespace {

using Shape = std::vector<int64_t>;

// GetTensorListSize stops counting at MAX_TENSOR_CONT + 1 instances.
constexpr size_t kCountLimit = kGwqMaxTensors + 1;
constexpr int64_t kMinXDims = 2;
constexpr int64_t kMaxXDims = 6;
constexpr int64_t kMinWeightDims = 2;
constexpr uint32_t kAicAivRatio = 2;
constexpr int64_t kMxGroup = 32;     // one E8M0 scale per 32 elements of K
constexpr int64_t kMxScalePair = 2;  // MX scales come in pairs: [..., k / 64, 2]
constexpr int64_t kNzN0 = 16;        // the N0 of MX-A8W4's NZ weight
constexpr int64_t kPackedElems = 8;  // int4 / float4 elements of a packed INT32 / FLOAT32
// The dims of the antiquant scale / offset of the A16W4 ND forms:
// per-channel [E, N] / per-group [E, G, N] with one x, [N] / [G, N] per
// tensor in the multi form.
constexpr size_t kSinglePerChannelDims = 2;
constexpr size_t kSinglePerGroupDims = 3;
constexpr size_t kMultiPerChannelDims = 1;
constexpr size_t kMultiPerGroupDims = 2;
constexpr size_t kMxScaleDims = 4;  // [E, N, K / 64, 2] (transposed weight) or [E, K / 64, N, 2]

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

std::string Name(DataType dtype) { return std::string(DataTypeName(dtype)); }

std::string Dims(const Shape& shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

std::string At(absl::string_view tensor, size_t i) {
  return absl::StrCat("grouped.", tensor, "[", i, "]");
}

// gert::Shape::GetDim: INT64_MIN past the last dim.
int64_t Dim(const Shape& shape, size_t i) {
  return i < shape.size() ? shape[i] : std::numeric_limits<int64_t>::min();
}
// The dim `back` places from the end (1 = last); INT64_MIN when the shape
// has fewer dims, as CANN's unsigned index arithmetic wraps past the end.
int64_t Back(const Shape& shape, size_t back) {
  return back <= shape.size() ? shape[shape.size() - back] : std::numeric_limits<int64_t>::min();
}

// int64 products with the two's-complement wrap of CANN's compiled code.
int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// gert::Shape::GetShapeSize: the product of the dims, 1 for no dims.
int64_t ShapeSize(const Shape& shape) {
  int64_t size = 1;
  for (int64_t d : shape) size = WrapMul(size, d);
  return size;
}

const Shape& Storage(const GroupedTensorList& list, size_t i) { return list.instances[i].storage; }
const Shape& Origin(const GroupedTensorList& list, size_t i) { return list.instances[i].origin; }

// The parse's state, named after CANN's members.
class Parser {
 public:
  Parser(const GroupedInputs& in, uint32_t aic_num, uint32_t aiv_num)
      : in_{in[GroupedTensor::kX],
            in[GroupedTensor::kWeight],
            in[GroupedTensor::kBias],
            in[GroupedTensor::kAntiquantScale],
            in[GroupedTensor::kAntiquantOffset],
            in[GroupedTensor::kGroupList],
            in[GroupedTensor::kPerTokenScale],
            in[GroupedTensor::kY],
            in} {
    f_.aic_num = aic_num;
    f_.aiv_num = aiv_num;
  }

  absl::StatusOr<GwqFacts> Run();

 private:
  bool IsA16W4Nd() const {
    return GwqGeSize(f_.x) == 2 &&
           (f_.weight_input == DataType::kInt4 || f_.weight_input == DataType::kInt32) &&
           !f_.weight_nz;
  }
  bool IsMxA8W4() const {
    return f_.x == DataType::kFloat8E4M3 &&
           (f_.weight_input == DataType::kFloat4E2M1 || f_.weight_input == DataType::kFloat32) &&
           f_.antiquant_scale == DataType::kFloat8E8M0;
  }

  absl::Status AnalyzeInput();
  absl::Status CheckCoreNum() const;
  absl::Status CheckUnsupportDataFlow() const;
  absl::Status CheckGroupTypeAndSplitItem() const;
  absl::Status CheckTensorListSize() const;
  absl::Status CheckEmptyTensorDefault() const;
  absl::Status CheckEmptyTensorSingleMultiSingle() const;
  absl::Status CheckAntiQuantDtype() const;
  absl::Status CheckBiasDtype() const;
  absl::Status CheckGroupList() const;
  absl::Status CheckEveryTensor() const;
  absl::Status CheckTensorDim(size_t i) const;
  absl::Status CheckDimValue(size_t i) const;
  absl::Status CheckXFormat() const;
  absl::Status CheckTensorShape(const GroupedTensorList& list, absl::string_view name,
                                bool is_scale, size_t i) const;
  absl::Status CheckWeightInnerAxisEven(size_t i) const;
  absl::Status CheckEveryTensorSingleMultiSingle() const;
  absl::Status CheckTensorShapeSingleMultiSingle(const GroupedTensorList& list,
                                                 absl::string_view name, bool is_scale,
                                                 size_t i) const;
  absl::Status SetShapeList();
  absl::Status SetAntiquantGroupSize();
  absl::Status DeriveGroupSizeSingle();
  absl::Status DeriveGroupSizeMulti();
  absl::Status DeriveMultiPerGroupSize(size_t i, uint32_t* group_size) const;
  absl::Status CheckOffsetMatchesScale(size_t i, const Shape& scale) const;
  absl::Status CheckGroupSize() const;
  absl::Status CheckPerTokenScale() const;
  absl::StatusOr<uint64_t> YLastDim() const;

  // The lists the path reads, and the attributes.
  struct Lists {
    const GroupedTensorList& x;
    const GroupedTensorList& weight;
    const GroupedTensorList& bias;
    const GroupedTensorList& antiquant_scale;
    const GroupedTensorList& antiquant_offset;
    const GroupedTensorList& group_list;
    const GroupedTensorList& per_token_scale;
    const GroupedTensorList& y;
    const GroupedInputs& attrs;
  };
  const Lists in_;
  GwqFacts f_;
  size_t num_x_ = 0, num_weight_ = 0, num_bias_ = 0, num_scale_ = 0, num_offset_ = 0;
};

absl::StatusOr<GwqFacts> Parser::Run() {
  f_.trans_a = in_.attrs.transpose_x;
  f_.trans_b = in_.attrs.transpose_weight;
  f_.group_type = in_.attrs.group_type;
  f_.split_item = in_.attrs.split_item;
  f_.group_list_type = in_.attrs.group_list_type;
  f_.single_x = f_.group_type != kGroupNoSplit && in_.x.size() < 2;
  // split_item 2 / 3: one y (for a list of x, or for one x).
  f_.single_y = f_.split_item == 2 || f_.split_item == 3;
  num_x_ = std::min(in_.x.size(), kCountLimit);
  num_weight_ = std::min(in_.weight.size(), kCountLimit);
  num_bias_ = std::min(in_.bias.size(), kCountLimit);
  num_scale_ = std::min(in_.antiquant_scale.size(), kCountLimit);
  num_offset_ = std::min(in_.antiquant_offset.size(), kCountLimit);
  if (absl::Status s = AnalyzeInput(); !s.ok()) return s;
  const size_t single_weight_dims = f_.weight_nz ? 5 : 3;
  f_.single_weight = f_.group_type != kGroupNoSplit && in_.weight.size() == 1 &&
                     Storage(in_.weight, 0).size() == single_weight_dims;
  f_.mx_a8w4 = IsMxA8W4();
  f_.a16w4_nd = IsA16W4Nd();
  f_.single_multi_single = f_.mx_a8w4 && f_.single_x && !f_.single_weight && f_.single_y;

  for (absl::Status s : {CheckCoreNum(), CheckUnsupportDataFlow()}) {
    if (!s.ok()) return s;
  }
  if (f_.trans_a)
    return Invalid("field grouped.transpose_x=true: x cannot be transposed (CheckTransposeStatus)");
  if (absl::Status s = CheckGroupTypeAndSplitItem(); !s.ok()) return s;
  if (absl::Status s = CheckTensorListSize(); !s.ok()) return s;
  if (absl::Status s =
          f_.single_multi_single ? CheckEmptyTensorSingleMultiSingle() : CheckEmptyTensorDefault();
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckAntiQuantDtype(); !s.ok()) return s;
  if (absl::Status s = CheckBiasDtype(); !s.ok()) return s;
  if (absl::Status s = CheckGroupList(); !s.ok()) return s;
  if (absl::Status s =
          f_.single_multi_single ? CheckEveryTensorSingleMultiSingle() : CheckEveryTensor();
      !s.ok()) {
    return s;
  }
  if (absl::Status s = SetShapeList(); !s.ok()) return s;
  if (absl::Status s = SetAntiquantGroupSize(); !s.ok()) return s;
  if (absl::Status s = CheckPerTokenScale(); !s.ok()) return s;
  return f_;
}

// AnalyzeInput: dtypes, the weight's format, and which optional inputs are
// there. A single bias or offset of no elements counts as absent.
absl::Status Parser::AnalyzeInput() {
  f_.x = in_.x.dtype;
  f_.weight_input = in_.weight.dtype;
  f_.weight = in_.weight.dtype;
  f_.weight_nz = in_.weight.format == Format::kFractalNz;
  f_.has_bias = num_bias_ > 0;
  if (num_bias_ == 1) f_.has_bias = ShapeSize(Storage(in_.bias, 0)) != 0;
  if (f_.has_bias) f_.bias = in_.bias.dtype;
  if (num_scale_ == 0) {
    return Invalid(
        "field grouped.antiquant_scale has no instance: the weight-quant path (x and weight of "
        "different "
        "dtypes) needs it (AnalyzeInput)");
  }
  f_.antiquant_scale = in_.antiquant_scale.dtype;
  f_.has_antiquant_offset = num_offset_ > 0;
  if (num_offset_ == 1) f_.has_antiquant_offset = ShapeSize(Storage(in_.antiquant_offset, 0)) != 0;
  return absl::OkStatus();
}

absl::Status Parser::CheckCoreNum() const {
  if (f_.aic_num == 0 || f_.aiv_num == 0) {
    return Invalid(absl::StrCat("platform aic_num=", f_.aic_num, ", aiv_num=", f_.aiv_num,
                                ": both must be above 0 (CheckCoreNum)"));
  }
  // CANN compares in 32 bits.
  if (static_cast<uint32_t>(f_.aic_num * kAicAivRatio) != f_.aiv_num) {
    return Invalid(absl::StrCat("platform aiv_num=", f_.aiv_num, ", aic_num=", f_.aic_num,
                                ": the weight-quant path needs aiv_num == 2 * aic_num "
                                "(CheckCoreNum)"));
  }
  return absl::OkStatus();
}

// CheckUnsupportDataFlow and CheckUnsupportedRemainingCases: the weight
// layouts each dtype pair's kernel reads. Other pairs pass.
absl::Status Parser::CheckUnsupportDataFlow() const {
  const DataType w = f_.weight_input;
  const bool nz = f_.weight_nz, tb = f_.trans_b;
  auto refuse = [&](absl::string_view need, absl::string_view pair) {
    return Invalid(absl::StrCat("field grouped.weight (", nz ? "FRACTAL_NZ" : "ND",
                                tb ? ", transposed" : ", not transposed", "): an x-weight pair ",
                                pair, " takes ", need, " weights only (CheckUnsupportDataFlow)"));
  };
  const bool x16 = GwqGeSize(f_.x) == 2;
  const std::string pair = absl::StrCat(Name(f_.x), "-", Name(w));
  if (x16 && (w == DataType::kInt8 || w == DataType::kInt32 || w == DataType::kInt4)) {
    if (nz) return refuse("ND", pair);
  } else if (x16 && (w == DataType::kFloat8E4M3 || w == DataType::kFloat8E5M2 ||
                     w == DataType::kHiFloat8)) {
    if (nz || !tb) return refuse("transposed ND", pair);
  } else if (x16 &&
             (w == DataType::kFloat4E2M1 || w == DataType::kFloat4E1M2 ||
              w == DataType::kFloat32) &&
             f_.antiquant_scale == DataType::kFloat8E8M0) {
    if (!nz || tb) return refuse("non-transposed FRACTAL_NZ", pair + " with an E8M0 scale");
  } else if (f_.x == DataType::kInt8 && w == DataType::kInt4) {
    if (!nz || tb) return refuse("non-transposed FRACTAL_NZ", pair);
  } else if (f_.x == DataType::kFloat8E4M3 &&
             (w == DataType::kFloat4E2M1 || w == DataType::kFloat32) &&
             f_.antiquant_scale == DataType::kFloat8E8M0) {
    if (!nz || !tb) return refuse("transposed FRACTAL_NZ", pair + " with an E8M0 scale");
  }
  return absl::OkStatus();
}

// A16W4 ND: group_type -1 with split_item 0 / 1 (a y per x), or 0 with 2 / 3.
absl::Status Parser::CheckGroupTypeAndSplitItem() const {
  if (!f_.a16w4_nd) return absl::OkStatus();
  if (f_.group_type != kGroupNoSplit && f_.group_type != kGroupSplitM) {
    return Invalid(absl::StrCat("field grouped.group_type=", f_.group_type,
                                ": an A16W4 ND problem takes -1 (no split) or 0 (split M) "
                                "(CheckGroupTypeAndSplitItem)"));
  }
  if (f_.group_type == kGroupNoSplit && f_.split_item != 0 && f_.split_item != 1) {
    return Invalid(
        absl::StrCat("field grouped.split_item=", f_.split_item,
                     ": must be 0 or 1 with group_type -1 (CheckGroupTypeAndSplitItem)"));
  }
  if (f_.group_type == kGroupSplitM && f_.split_item != 2 && f_.split_item != 3) {
    return Invalid(absl::StrCat("field grouped.split_item=", f_.split_item,
                                ": must be 2 or 3 with group_type 0 (CheckGroupTypeAndSplitItem)"));
  }
  return absl::OkStatus();
}

absl::Status Parser::CheckTensorListSize() const {
  if (num_x_ >= static_cast<size_t>(kGwqMaxTensors)) {
    return Invalid(absl::StrCat("field grouped.x has ", in_.x.size(), " tensors; at most ",
                                kGwqMaxTensors - 1, " (CheckTensorListSize)"));
  }
  if (f_.group_type == kGroupNoSplit) {
    if (num_x_ != num_weight_) {
      return Invalid(absl::StrCat("fields grouped.x and grouped.weight have ", num_x_, " and ",
                                  num_weight_,
                                  " tensors: with group_type -1 they must be as many "
                                  "(CheckTensorListSize)"));
    }
  } else if (f_.single_multi_single) {
    if (num_x_ != 1 || num_weight_ < 1) {
      return Invalid(absl::StrCat("fields grouped.x and grouped.weight have ", num_x_, " and ",
                                  num_weight_,
                                  " tensors: single-multi-single takes one x and at least one "
                                  "weight (CheckTensorListSize)"));
    }
  } else if (num_x_ != 1 || num_weight_ != 1) {
    return Invalid(absl::StrCat("fields grouped.x and grouped.weight have ", num_x_, " and ",
                                num_weight_, " tensors: with group_type ", f_.group_type,
                                " both must be one tensor (CheckTensorListSize)"));
  }
  if (num_scale_ != num_weight_) {
    return Invalid(absl::StrCat("field grouped.antiquant_scale has ", num_scale_,
                                " tensors: must be one per weight tensor (", num_weight_,
                                ") (CheckTensorListSize)"));
  }
  if (f_.has_antiquant_offset) {
    if (f_.single_multi_single) {
      return Invalid(
          "field grouped.antiquant_offset: single-multi-single (float8_e4m3fn x, float4_e2m1 "
          "weights) "
          "takes none (CheckTensorListSize)");
    }
    if (num_offset_ != num_weight_) {
      return Invalid(absl::StrCat("field grouped.antiquant_offset has ", num_offset_,
                                  " tensors: must be one per weight tensor (", num_weight_,
                                  ") (CheckTensorListSize)"));
    }
  }
  if (f_.has_bias && num_bias_ != num_weight_) {
    return Invalid(absl::StrCat("field grouped.bias has ", num_bias_,
                                " tensors: must be one per weight tensor (", num_weight_,
                                ") (CheckTensorListSize)"));
  }
  return absl::OkStatus();
}

// CheckEmptyTensorDefault: x has 2-6 dims, the weight (origin) at least 2,
// and K may be 0 only when M or N is.
absl::Status Parser::CheckEmptyTensorDefault() const {
  const size_t groups = std::min(num_x_, num_weight_);
  for (size_t i = 0; i < groups; ++i) {
    const Shape& x = Storage(in_.x, i);
    const int64_t x_dims = static_cast<int64_t>(x.size());
    if (x_dims < kMinXDims || x_dims > kMaxXDims) {
      return Invalid(absl::StrCat("field ", At("x", i), " ", Dims(x),
                                  ": must have 2-6 dims (CheckEmptyTensor)"));
    }
    int64_t m = Back(x, 2);
    const int64_t k = Back(x, 1);
    for (size_t d = 0; d + 2 < x.size(); ++d) m = WrapMul(m, x[d]);
    const Shape& w = Origin(in_.weight, i);
    if (static_cast<int64_t>(w.size()) < kMinWeightDims) {
      return Invalid(absl::StrCat("field ", At("weight", i), " origin ", Dims(w),
                                  ": must have at least 2 dims (CheckEmptyTensor)"));
    }
    const int64_t n = f_.trans_b ? Back(w, 2) : Back(w, 1);
    if (m != 0 && n != 0 && k == 0) {
      return Invalid(absl::StrCat("fields ", At("x", i), " ", Dims(x), " and ", At("weight", i),
                                  " ", Dims(w),
                                  ": K may be 0 only when M or N is (CheckEmptyTensor)"));
    }
  }
  return absl::OkStatus();
}

// The same for single-multi-single, with the weights' NZ storage shapes.
absl::Status Parser::CheckEmptyTensorSingleMultiSingle() const {
  const Shape& x = Storage(in_.x, 0);
  const int64_t x_dims = static_cast<int64_t>(x.size());
  if (x_dims < kMinXDims || x_dims > kMaxXDims) {
    return Invalid(
        absl::StrCat("field grouped.x[0] ", Dims(x), ": must have 2-6 dims (CheckEmptyTensor)"));
  }
  int64_t m = Back(x, 2);
  const int64_t k = Back(x, 1);
  for (size_t d = 0; d + 2 < x.size(); ++d) m = WrapMul(m, x[d]);
  for (size_t i = 0; i < num_weight_; ++i) {
    const Shape& w = Storage(in_.weight, i);
    if (static_cast<int64_t>(w.size()) < kMinWeightDims) {
      return Invalid(absl::StrCat("field ", At("weight", i), " ", Dims(w),
                                  ": must have at least 2 dims (CheckEmptyTensor)"));
    }
    if (f_.weight_nz && w.size() != 4) {
      return Invalid(absl::StrCat("field ", At("weight", i), " ", Dims(w),
                                  ": a single-multi-single FRACTAL_NZ weight has 4 dims "
                                  "(CheckEmptyTensor)"));
    }
    int64_t n = f_.trans_b ? Back(w, 2) : Back(w, 1);
    if (f_.weight_nz) {
      // (N1, K1, K0, N0), transposed (K1, N1, N0, K0).
      n = f_.trans_b ? WrapMul(Back(w, 3), Back(w, 2)) : WrapMul(Back(w, 4), Back(w, 1));
    }
    if (m != 0 && n != 0 && k == 0) {
      return Invalid(absl::StrCat("fields grouped.x[0] ", Dims(x), " and ", At("weight", i), " ",
                                  Dims(w), ": K may be 0 only when M or N is (CheckEmptyTensor)"));
    }
  }
  return absl::OkStatus();
}

// A16W4 ND: the antiquant scale and offset have x's dtype.
absl::Status Parser::CheckAntiQuantDtype() const {
  if (!f_.a16w4_nd) return absl::OkStatus();
  if (f_.antiquant_scale != f_.x) {
    return Invalid(absl::StrCat("field grouped.antiquant_scale dtype ", Name(f_.antiquant_scale),
                                ": must be x's dtype ", Name(f_.x), " (CheckAntiQuantDtype)"));
  }
  if (f_.has_antiquant_offset && in_.antiquant_offset.dtype != f_.x) {
    return Invalid(absl::StrCat("field grouped.antiquant_offset dtype ",
                                Name(in_.antiquant_offset.dtype), ": must be x's dtype ",
                                Name(f_.x), " (CheckAntiQuantDtype)"));
  }
  return absl::OkStatus();
}

// A16W4 ND: a float16 x takes a float16 bias, a bfloat16 x a bfloat16 or
// float32 one.
absl::Status Parser::CheckBiasDtype() const {
  if (!f_.a16w4_nd || !f_.has_bias) return absl::OkStatus();
  if (f_.x != DataType::kFloat16 && f_.x != DataType::kBFloat16) {
    return Invalid(absl::StrCat("field grouped.x dtype ", Name(f_.x),
                                ": no bias dtype goes with it (CheckBiasDtype)"));
  }
  const bool ok = f_.x == DataType::kFloat16
                      ? f_.bias == DataType::kFloat16
                      : (f_.bias == DataType::kBFloat16 || f_.bias == DataType::kFloat32);
  if (!ok) {
    return Invalid(absl::StrCat(
        "field grouped.bias dtype ", Name(f_.bias), ": x of ", Name(f_.x), " takes ",
        f_.x == DataType::kFloat16 ? "float16" : "bfloat16 or float32", " (CheckBiasDtype)"));
  }
  return absl::OkStatus();
}

// Split M: group_list_type 0 (cumulative) or 1 (counts), and group_list as
// long as there are groups (the weights of single-multi-single, else the
// weight's first dim).
absl::Status Parser::CheckGroupList() const {
  if (f_.group_type != kGroupSplitM) return absl::OkStatus();
  if (f_.group_list_type != 0 && f_.group_list_type != 1) {
    return Invalid(absl::StrCat("field grouped.group_list_type=", f_.group_list_type,
                                ": split M takes 0 (cumulative) or 1 (counts) (CheckGroupList)"));
  }
  if (in_.group_list.size() == 0) {
    return Invalid("field grouped.group_list has no instance: split M needs it (CheckGroupList)");
  }
  const int32_t size = static_cast<int32_t>(Dim(Origin(in_.group_list, 0), 0));
  const int32_t groups = f_.single_multi_single
                             ? static_cast<int32_t>(num_weight_)
                             : static_cast<int32_t>(Dim(Storage(in_.weight, 0), 0));
  if (size != groups) {
    return Invalid(absl::StrCat("field grouped.group_list of length ", size,
                                ": must be the group count ", groups, " (CheckGroupList)"));
  }
  return absl::OkStatus();
}

absl::Status Parser::CheckEveryTensor() const {
  for (size_t i = 0; i < num_x_; ++i) {
    if (absl::Status s = CheckTensorDim(i); !s.ok()) return s;
    if (absl::Status s = CheckDimValue(i); !s.ok()) return s;
    if (absl::Status s = CheckXFormat(); !s.ok()) return s;
    if (absl::Status s = CheckTensorShape(in_.antiquant_scale, "antiquant_scale", true, i);
        !s.ok()) {
      return s;
    }
    if (f_.has_antiquant_offset) {
      if (absl::Status s = CheckTensorShape(in_.antiquant_offset, "antiquant_offset", false, i);
          !s.ok()) {
        return s;
      }
    }
    if (f_.has_bias) {
      if (absl::Status s = CheckTensorShape(in_.bias, "bias", false, i); !s.ok()) return s;
    }
    if (absl::Status s = CheckWeightInnerAxisEven(i); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The dims of tensor i: split M (one x of [M, K], one weight of [E, K, N]
// or its NZ form, scale per form) or else the per-tensor forms.
absl::Status Parser::CheckTensorDim(size_t i) const {
  auto dims_of = [&](const GroupedTensorList& list, absl::string_view name, size_t want,
                     absl::string_view rule) -> absl::Status {
    const Shape& s = Storage(list, i);
    if (s.size() != want) {
      return Invalid(absl::StrCat("field ", At(name, i), " ", Dims(s), ": must have ", want,
                                  " dims ", rule, " (CheckTensorDim)"));
    }
    return absl::OkStatus();
  };
  auto dims_in = [&](const GroupedTensorList& list, absl::string_view name, size_t a, size_t b,
                     absl::string_view rule) -> absl::Status {
    const Shape& s = Storage(list, i);
    if (s.size() != a && s.size() != b) {
      return Invalid(absl::StrCat("field ", At(name, i), " ", Dims(s), ": must have ", a,
                                  " (per-channel) or ", b, " (per-group) dims ", rule,
                                  " (CheckTensorDim)"));
    }
    return absl::OkStatus();
  };
  if (f_.group_type == kGroupSplitM) {
    const absl::string_view rule = "with group_type 0";
    if (absl::Status s = dims_of(in_.x, "x", 2, rule); !s.ok()) return s;
    if (absl::Status s = dims_of(in_.weight, "weight", f_.weight_nz ? 5 : 3,
                                 f_.weight_nz ? "with group_type 0 (FRACTAL_NZ)" : rule);
        !s.ok()) {
      return s;
    }
    if (!f_.a16w4_nd && !f_.mx_a8w4) return absl::OkStatus();
    if (f_.a16w4_nd) {
      if (absl::Status s = dims_in(in_.antiquant_scale, "antiquant_scale", kSinglePerChannelDims,
                                   kSinglePerGroupDims, rule);
          !s.ok()) {
        return s;
      }
    } else if (absl::Status s = dims_of(in_.antiquant_scale, "antiquant_scale", kMxScaleDims,
                                        "(MX) with group_type 0");
               !s.ok()) {
      return s;
    }
    if (f_.has_bias) {
      if (absl::Status s = dims_of(in_.bias, "bias", 2, rule); !s.ok()) return s;
    }
    if (f_.has_antiquant_offset) {
      if (absl::Status s = dims_in(in_.antiquant_offset, "antiquant_offset", kSinglePerChannelDims,
                                   kSinglePerGroupDims, rule);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }
  const std::string rule = absl::StrCat("with group_type ", f_.group_type);
  if (absl::Status s = dims_of(in_.weight, "weight", 2, rule); !s.ok()) return s;
  if (f_.a16w4_nd) {
    if (absl::Status s = dims_in(in_.antiquant_scale, "antiquant_scale", kMultiPerChannelDims,
                                 kMultiPerGroupDims, rule);
        !s.ok()) {
      return s;
    }
  } else if (absl::Status s = dims_of(in_.antiquant_scale, "antiquant_scale", 1, rule); !s.ok()) {
    return s;
  }
  if (f_.has_bias) {
    if (absl::Status s = dims_of(in_.bias, "bias", 1, rule); !s.ok()) return s;
  }
  if (f_.has_antiquant_offset) {
    if (f_.a16w4_nd) {
      if (absl::Status s = dims_in(in_.antiquant_offset, "antiquant_offset", kMultiPerChannelDims,
                                   kMultiPerGroupDims, rule);
          !s.ok()) {
        return s;
      }
    } else if (absl::Status s = dims_of(in_.antiquant_offset, "antiquant_offset", 1, rule);
               !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// CheckDimValue: x's dims are not negative; A16W4 ND: the weight's N is not
// negative and its K (storage) is x's.
absl::Status Parser::CheckDimValue(size_t i) const {
  const Shape& x = Storage(in_.x, i);
  for (size_t d = 0; d < x.size(); ++d) {
    if (x[d] < 0) {
      return Invalid(absl::StrCat("field ", At("x", i), " ", Dims(x),
                                  ": dims must not be negative (CheckDimValue)"));
    }
  }
  if (!f_.a16w4_nd) return absl::OkStatus();
  const Shape& w = Storage(in_.weight, i);
  const int64_t wn = f_.trans_b ? Back(w, 2) : Back(w, 1);
  const int64_t wk = f_.trans_b ? Back(w, 1) : Back(w, 2);
  if (wn < 0) {
    return Invalid(absl::StrCat("field ", At("weight", i), " ", Dims(w),
                                ": N must not be negative (CheckDimValue)"));
  }
  if (Back(x, 1) != wk) {
    return Invalid(absl::StrCat("fields ", At("x", i), " ", Dims(x), " and ", At("weight", i), " ",
                                Dims(w), ": K of x (", Back(x, 1), ") must be the weight's (", wk,
                                ", its storage dim) (CheckDimValue)"));
  }
  return absl::OkStatus();
}

// CheckXAndWeightFormat: x is ND (an A16W4 ND weight is ND by definition).
absl::Status Parser::CheckXFormat() const {
  if (in_.x.format == Format::kFractalNz) {
    return Invalid("field grouped.x format FRACTAL_NZ: x must be ND (CheckXAndWeightFormat)");
  }
  return absl::OkStatus();
}

// CheckTensorShape (A16W4 ND and MX-A8W4): with split M the first dim of
// the antiquant scale / offset / bias is the group count, and their N is
// the weight's (MX scale [E, N, K / 64, 2]: the third dim from the end; an
// MX NZ weight's N is N1 * 16).
absl::Status Parser::CheckTensorShape(const GroupedTensorList& list, absl::string_view name,
                                      bool is_scale, size_t i) const {
  if (!f_.a16w4_nd && !f_.mx_a8w4) return absl::OkStatus();
  const Shape& t = Storage(list, i);
  const Shape& w = Storage(in_.weight, i);
  if (f_.group_type == kGroupSplitM &&
      static_cast<uint64_t>(Dim(w, 0)) != static_cast<uint64_t>(Dim(t, 0))) {
    return Invalid(absl::StrCat("field ", At(name, i), " ", Dims(t),
                                ": its first dim must be the group count ", Dim(w, 0),
                                " (CheckTensorShape)"));
  }
  int64_t wn = f_.a16w4_nd ? Back(w, f_.trans_b ? 2 : 1) : WrapMul(Back(w, 3), kNzN0);
  if (f_.a16w4_nd && f_.weight_input == DataType::kInt32 && !f_.trans_b &&
      f_.group_type == kGroupSplitM) {
    wn = WrapMul(wn, kPackedElems);
  }
  const int64_t tn = (f_.mx_a8w4 && is_scale) ? Back(t, 3) : Back(t, 1);
  if (wn != tn) {
    return Invalid(absl::StrCat("fields ", At(name, i), " ", Dims(t), " and ", At("weight", i), " ",
                                Dims(w), ": N of ", name, " (", tn, ") must be the weight's (", wn,
                                ") (CheckTensorShape)"));
  }
  return absl::OkStatus();
}

// An int4 weight's last origin dim is even (two elements per byte).
absl::Status Parser::CheckWeightInnerAxisEven(size_t i) const {
  if (f_.weight_input != DataType::kInt4) return absl::OkStatus();
  const Shape& w = Origin(in_.weight, i);
  if (Back(w, 1) % 2 != 0) {
    return Invalid(absl::StrCat("field ", At("weight", i), " origin ", Dims(w),
                                ": an int4 weight's last dim must be even "
                                "(CheckWeightInnerAxisEven)"));
  }
  return absl::OkStatus();
}

// CheckEveryTensorSingleXMultiWeightSingleY: x [M, K]; each weight NZ
// (K1, N1, N0, K0) of y's N and x's K; MX scales [N, K / 64, 2] per
// weight; no offset; biases [N].
absl::Status Parser::CheckEveryTensorSingleMultiSingle() const {
  const Shape& x = Storage(in_.x, 0);
  if (x.size() != 2) {
    return Invalid(absl::StrCat("field grouped.x[0] ", Dims(x),
                                ": single-multi-single takes a 2-dim x (CheckEveryTensor)"));
  }
  if (absl::Status s = CheckDimValue(0); !s.ok()) return s;
  if (absl::Status s = CheckXFormat(); !s.ok()) return s;
  const int64_t xk = Back(x, 1);
  if (in_.y.size() == 0) {
    return Invalid(
        "field grouped.y has no instance: single-multi-single reads its N (CheckWeight)");
  }
  const int64_t yn = Back(Origin(in_.y, 0), 1);
  const size_t weight_dims = f_.weight_nz ? 4 : 2;
  for (size_t i = 0; i < num_weight_; ++i) {
    const Shape& w = Storage(in_.weight, i);
    if (w.size() != weight_dims) {
      return Invalid(absl::StrCat("field ", At("weight", i), " ", Dims(w), ": must have ",
                                  weight_dims, " dims in single-multi-single (CheckWeight)"));
    }
    int64_t wk = f_.trans_b ? Back(w, 1) : Back(w, 2);
    int64_t wn = f_.trans_b ? Back(w, 2) : Back(w, 1);
    if (f_.weight_nz) {
      // (N1, K1, K0, N0): K = K1 * K0, N = N1 * N0; transposed (K1, N1, N0, K0).
      wk = f_.trans_b ? WrapMul(Back(w, 4), Back(w, 1)) : WrapMul(Back(w, 3), Back(w, 2));
      wn = f_.trans_b ? WrapMul(Back(w, 3), Back(w, 2)) : WrapMul(Back(w, 4), Back(w, 1));
    }
    if (xk != wk) {
      return Invalid(absl::StrCat("fields grouped.x[0] ", Dims(x), " and ", At("weight", i), " ",
                                  Dims(w), ": K of the weight (", wk, ") must be x's (", xk,
                                  ") (CheckWeight)"));
    }
    if (yn != wn) {
      return Invalid(absl::StrCat("field ", At("weight", i), " ", Dims(w), ": its N (", wn,
                                  ") must be y's last dim (", yn, ") (CheckWeight)"));
    }
    if (absl::Status s = CheckWeightInnerAxisEven(i); !s.ok()) return s;
  }
  for (size_t i = 0; i < num_scale_; ++i) {
    const Shape& t = Storage(in_.antiquant_scale, i);
    if (t.size() != 3) {
      return Invalid(
          absl::StrCat("field ", At("antiquant_scale", i), " ", Dims(t),
                       ": single-multi-single takes [N, K / 64, 2] (CheckAntiquantScale)"));
    }
    if (absl::Status s =
            CheckTensorShapeSingleMultiSingle(in_.antiquant_scale, "antiquant_scale", true, i);
        !s.ok()) {
      return s;
    }
  }
  if (f_.has_antiquant_offset) {
    return Invalid(
        "field grouped.antiquant_offset: single-multi-single takes none (CheckAntiquantOffset)");
  }
  if (!f_.has_bias) return absl::OkStatus();
  for (size_t i = 0; i < num_bias_; ++i) {
    const Shape& t = Storage(in_.bias, i);
    if (t.size() != 1) {
      return Invalid(absl::StrCat("field ", At("bias", i), " ", Dims(t),
                                  ": single-multi-single takes [N] (CheckBias)"));
    }
    if (absl::Status s = CheckTensorShapeSingleMultiSingle(in_.bias, "bias", false, i); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// N of the scale ([N, K / 64, 2]) or bias ([N]) is the weight's N1 * N0; the
// scale's K / 64 pairs cover K in groups of 32.
absl::Status Parser::CheckTensorShapeSingleMultiSingle(const GroupedTensorList& list,
                                                       absl::string_view name, bool is_scale,
                                                       size_t i) const {
  const Shape& t = Storage(list, i);
  const Shape& w = Storage(in_.weight, i);
  const int64_t wn = WrapMul(Back(w, 3), Back(w, 2));
  const int64_t tn = is_scale ? Back(t, 3) : Back(t, 1);
  if (wn != tn) {
    return Invalid(absl::StrCat("fields ", At(name, i), " ", Dims(t), " and ", At("weight", i), " ",
                                Dims(w), ": N of ", name, " (", tn, ") must be the weight's (", wn,
                                ") (CheckTensorShape)"));
  }
  if (!is_scale) return absl::OkStatus();
  const uint64_t k = static_cast<uint64_t>(Back(Storage(in_.x, 0), 1));
  const int64_t groups = WrapMul(Back(t, 2), kMxScalePair);
  if (groups <= 0 || k % static_cast<uint64_t>(groups) != 0) {
    return Invalid(absl::StrCat("field ", At(name, i), " ", Dims(t), ": its ", groups,
                                " scales per row must be above 0 and divide K=", k,
                                " (CheckTensorShape)"));
  }
  if (k % kMxGroup != 0 || groups != static_cast<int64_t>(k / kMxGroup)) {
    return Invalid(absl::StrCat("field ", At(name, i), " ", Dims(t), ": MX scales cover K=", k,
                                " in groups of 32 (CheckTensorShape)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Parser::YLastDim() const {
  if (in_.y.size() == 0) {
    return Invalid(
        "field grouped.y has no instance: an FRACTAL_NZ weight's N is read from y (SetShapeList)");
  }
  return static_cast<uint64_t>(Back(Origin(in_.y, 0), 1));
}

// SetShapeList of the three forms: single-single-single (split M, one x,
// weight and y), multi-multi-multi (a list of each), single-multi-single
// (MX-A8W4 with a weight per expert).
absl::Status Parser::SetShapeList() {
  const bool packed = f_.weight_input == DataType::kFloat32 || f_.weight_input == DataType::kInt32;
  auto unpack = [&] {
    if (packed) {
      f_.weight = f_.weight_input == DataType::kFloat32 ? DataType::kFloat4E2M1 : DataType::kInt4;
    }
  };
  // N of a weight's storage shape: ND [.., K, N] / [.., N, K], NZ (N1, K1,
  // K0, N0) / (K1, N1, N0, K0).
  auto weight_n = [&](const Shape& w) -> int64_t {
    if (f_.weight_nz) {
      return f_.trans_b ? WrapMul(Back(w, 3), Back(w, 2)) : WrapMul(Back(w, 4), Back(w, 1));
    }
    return f_.trans_b ? Back(w, 2) : Back(w, 1);
  };
  if (f_.single_x && f_.single_weight && f_.single_y) {
    const Shape& x = Storage(in_.x, 0);
    const Shape& w = Storage(in_.weight, 0);
    f_.group_num = static_cast<uint32_t>(static_cast<int32_t>(Dim(w, 0)));
    f_.m = static_cast<uint64_t>(Dim(x, 0));
    f_.k = static_cast<uint64_t>(Back(x, 1));
    f_.n = static_cast<uint64_t>(weight_n(w));
    if (f_.weight_nz) {
      absl::StatusOr<uint64_t> y_n = YLastDim();
      if (!y_n.ok()) return y_n.status();
      f_.n_ori = *y_n;
    }
    if (packed) {
      unpack();
      // Eight elements per word along N; K comes from x.
      if (!f_.trans_b) f_.n *= static_cast<uint64_t>(kPackedElems);
    }
    if (!f_.weight_nz) f_.n_ori = f_.n;
    f_.k_list[0] = static_cast<int32_t>(f_.k);
    f_.n_list[0] = static_cast<int32_t>(f_.n_ori);
    f_.m_list[0] = -1;
    return absl::OkStatus();
  }
  if (!f_.single_x && !f_.single_weight && !f_.single_y) {
    const size_t groups = std::min({in_.x.size(), in_.weight.size(), size_t{kGwqMaxTensors}});
    for (size_t i = 0; i < groups; ++i) {
      const Shape& x = Storage(in_.x, i);
      const Shape& w = Origin(in_.weight, i);
      ++f_.group_num;
      int64_t m = Back(x, 2);
      for (size_t d = 0; d + 2 < x.size(); ++d) m = WrapMul(m, x[d]);
      const int64_t k = f_.trans_b ? Dim(w, 1) : Dim(w, 0);
      const int64_t n = f_.trans_b ? Dim(w, 0) : Dim(w, 1);
      f_.m_list[i] = static_cast<int32_t>(m);
      f_.k_list[i] = static_cast<int32_t>(k);
      f_.n_list[i] = static_cast<int32_t>(n);
      f_.m = std::max(f_.m, static_cast<uint64_t>(m));
      f_.k = std::max(f_.k, static_cast<uint64_t>(k));
      f_.n = std::max(f_.n, static_cast<uint64_t>(n));
    }
    f_.n_ori = f_.n;
    return absl::OkStatus();
  }
  if (f_.single_multi_single) {
    const Shape& x = Storage(in_.x, 0);
    f_.m = static_cast<uint64_t>(Dim(x, 0));
    f_.k = static_cast<uint64_t>(Back(x, 1));
    if (f_.weight_nz) {
      absl::StatusOr<uint64_t> y_n = YLastDim();
      if (!y_n.ok()) return y_n.status();
      f_.n_ori = *y_n;
    }
    const size_t groups = std::min(in_.weight.size(), size_t{kGwqMaxTensors});
    for (size_t i = 0; i < groups; ++i) {
      uint64_t n = static_cast<uint64_t>(weight_n(Storage(in_.weight, i)));
      if (packed && !f_.trans_b) n *= static_cast<uint64_t>(kPackedElems);
      if (!f_.weight_nz) f_.n_ori = n;
      ++f_.group_num;
      f_.k_list[i] = static_cast<int32_t>(f_.k);
      f_.n_list[i] = static_cast<int32_t>(f_.n_ori);
      f_.m_list[i] = -1;
      f_.n = std::max(f_.n, n);
    }
    unpack();
    return absl::OkStatus();
  }
  return Invalid(absl::StrCat(
      "field grouped.group_type=", f_.group_type, " with ", f_.single_x ? "one x" : "a list of x",
      ", ", f_.single_weight ? "one weight" : "a list of weights", " and ",
      f_.single_y ? "one y" : "a list of y", " (split_item ", f_.split_item,
      "): the weight-quant path takes one of each (split M) or a list of each, or MX-A8W4's one x, "
      "weights per expert and one y (SetShapeList)"));
}

// The antiquant group size: from the scale's shape (per-group [E, G, N] or
// [G, N] per tensor, MX [E, N, K / 64, 2] / [N, K / 64, 2]); 0 when
// per-channel.
absl::Status Parser::SetAntiquantGroupSize() {
  f_.group_size = 0;
  if (absl::Status s =
          (f_.a16w4_nd && !f_.single_x) ? DeriveGroupSizeMulti() : DeriveGroupSizeSingle();
      !s.ok()) {
    return s;
  }
  return CheckGroupSize();
}

absl::Status Parser::DeriveGroupSizeSingle() {
  const Shape& t = Storage(in_.antiquant_scale, 0);
  const size_t d = t.size();
  int64_t groups = 0;
  if (f_.single_multi_single && d == kMxScaleDims - 1) {
    groups = WrapMul(Back(t, 2), kMxScalePair);  // [N, K / 64, 2]
  } else if (d == kSinglePerGroupDims) {
    if (f_.a16w4_nd) {
      groups = Dim(t, 1);  // [E, G, N]
    } else {
      groups = f_.trans_b ? Back(t, 1) : Back(t, 2);  // [E, K groups, N] or [E, N, K groups]
    }
  } else if (d == kMxScaleDims) {
    groups = WrapMul(f_.trans_b ? Back(t, 2) : Back(t, 3), kMxScalePair);
  } else {
    return f_.a16w4_nd ? CheckOffsetMatchesScale(0, t) : absl::OkStatus();
  }
  if (groups <= 0 || f_.k % static_cast<uint64_t>(groups) > 0) {
    return Invalid(absl::StrCat("field grouped.antiquant_scale[0] ", Dims(t), ": its group count ",
                                groups, " must be above 0 and divide K=", f_.k,
                                " (DeriveGroupSizeSingle)"));
  }
  f_.group_size = static_cast<uint32_t>(f_.k / static_cast<uint64_t>(groups));
  return f_.a16w4_nd ? CheckOffsetMatchesScale(0, t) : absl::OkStatus();
}

// A16W4 ND with a list of x: every scale per-channel [N_i], or every one
// per-group [G_i, N_i] with the same K_i / G_i.
absl::Status Parser::DeriveGroupSizeMulti() {
  const Shape& t0 = Storage(in_.antiquant_scale, 0);
  if (t0.size() != kMultiPerChannelDims && t0.size() != kMultiPerGroupDims) {
    return Invalid(absl::StrCat("field grouped.antiquant_scale[0] ", Dims(t0),
                                ": must have 1 (per-channel) or 2 (per-group) dims "
                                "(DeriveGroupSizeMulti)"));
  }
  if (t0.size() == kMultiPerChannelDims) {
    for (size_t i = 0; i < f_.group_num; ++i) {
      const Shape& t = Storage(in_.antiquant_scale, i);
      if (t.size() != kMultiPerChannelDims) {
        return Invalid(absl::StrCat("field ", At("antiquant_scale", i), " ", Dims(t),
                                    ": antiquant_scale[0] is per-channel, so every scale is [N] "
                                    "(CheckMultiA16W4PerChannelShape)"));
      }
      if (Dim(t, 0) != f_.n_list[i]) {
        return Invalid(absl::StrCat("field ", At("antiquant_scale", i), " ", Dims(t),
                                    ": its N must be weight[", i, "]'s N ", f_.n_list[i],
                                    " (CheckMultiA16W4PerChannelShape)"));
      }
      if (absl::Status s = CheckOffsetMatchesScale(i, t); !s.ok()) return s;
    }
    f_.group_size = 0;
    return absl::OkStatus();
  }
  uint32_t group_size = 0;
  if (absl::Status s = DeriveMultiPerGroupSize(0, &group_size); !s.ok()) return s;
  f_.group_size = group_size;
  for (size_t i = 0; i < f_.group_num; ++i) {
    const Shape& t = Storage(in_.antiquant_scale, i);
    if (t.size() != kMultiPerGroupDims) {
      return Invalid(absl::StrCat("field ", At("antiquant_scale", i), " ", Dims(t),
                                  ": antiquant_scale[0] is per-group, so every scale is [G, N] "
                                  "(CheckA16W4MultiPergroupScaleShape)"));
    }
    uint32_t size_i = 0;
    if (absl::Status s = DeriveMultiPerGroupSize(i, &size_i); !s.ok()) return s;
    if (size_i != f_.group_size) {
      return Invalid(absl::StrCat("field ", At("antiquant_scale", i), " ", Dims(t), ": group size ",
                                  size_i, " differs from antiquant_scale[0]'s ", f_.group_size,
                                  " (CheckA16W4MultiPergroupScaleShape)"));
    }
    if (Dim(t, 1) != f_.n_list[i]) {
      return Invalid(absl::StrCat("field ", At("antiquant_scale", i), " ", Dims(t),
                                  ": its N must be weight[", i, "]'s N ", f_.n_list[i],
                                  " (CheckA16W4MultiPergroupScaleShape)"));
    }
    if (absl::Status s = CheckOffsetMatchesScale(i, t); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// K_i / G_i of scale i ([G_i, N_i]).
absl::Status Parser::DeriveMultiPerGroupSize(size_t i, uint32_t* group_size) const {
  const Shape& t = Storage(in_.antiquant_scale, i);
  const int64_t groups = Dim(t, 0);
  const int64_t k = f_.k_list[i];
  if (groups <= 0 || k <= 0 || k % groups != 0) {
    return Invalid(absl::StrCat("field ", At("antiquant_scale", i), " ", Dims(t),
                                ": its group count ", groups, " must be above 0 and divide K=", k,
                                " of tensor ", i, " (DeriveA16W4MultiPergroupSizeFromScale)"));
  }
  *group_size = static_cast<uint32_t>(k / groups);
  return absl::OkStatus();
}

// An antiquant offset has its scale's shape.
absl::Status Parser::CheckOffsetMatchesScale(size_t i, const Shape& scale) const {
  if (!f_.has_antiquant_offset) return absl::OkStatus();
  if (i >= in_.antiquant_offset.size()) {
    return Invalid(absl::StrCat("field ", At("antiquant_offset", i),
                                " has no instance: every scale has its offset "
                                "(CheckAntiquantOffsetMatchScale)"));
  }
  const Shape& t = Storage(in_.antiquant_offset, i);
  if (t != scale) {
    return Invalid(absl::StrCat("fields ", At("antiquant_offset", i), " ", Dims(t), " and ",
                                At("antiquant_scale", i), " ", Dims(scale),
                                ": the offset has the scale's shape "
                                "(CheckAntiquantOffsetMatchScale)"));
  }
  return absl::OkStatus();
}

// The group sizes the kernels have: A16W4 ND per-group 32 / 64 / 128 / 256,
// A8W4 128 / 192 / 256 / 512.
absl::Status Parser::CheckGroupSize() const {
  const uint32_t g = f_.group_size;
  if (f_.A16W4NdPerGroup()) {
    if (g != 32 && g != 64 && g != 128 && g != 256) {
      return Invalid(absl::StrCat("field grouped.antiquant_scale: group size ", g,
                                  " (K / groups): an A16W4 ND per-group scale takes 32, 64, 128 or "
                                  "256 (CheckGroupSize)"));
    }
    return absl::OkStatus();
  }
  if (!f_.A8W4()) return absl::OkStatus();
  if (g != 128 && g != 256 && g != 512 && g != 192) {
    return Invalid(absl::StrCat("field grouped.antiquant_scale: group size ", g,
                                " (K / groups): an int8-int4 scale takes 128, 192, 256 or 512 "
                                "(CheckGroupSize)"));
  }
  return absl::OkStatus();
}

// MX-A8W4: per_token_scale is x's MX scale [M, K / 64, 2].
absl::Status Parser::CheckPerTokenScale() const {
  if (!f_.mx_a8w4) return absl::OkStatus();
  if (in_.per_token_scale.size() == 0) {
    return Invalid(
        "field grouped.per_token_scale has no instance: MX-A8W4 needs x's MX scale "
        "(CheckPerTokenScale)");
  }
  const Shape& t = Storage(in_.per_token_scale, 0);
  if (t.size() != 3) {
    return Invalid(absl::StrCat("field grouped.per_token_scale ", Dims(t),
                                ": must have 3 dims [M, K / 64, 2] (CheckPerTokenScale)"));
  }
  const int64_t k64 = static_cast<int64_t>(f_.k) / (kMxGroup * kMxScalePair);
  if (t[0] != static_cast<int64_t>(f_.m) || t[1] != k64 || t[2] != kMxScalePair) {
    return Invalid(absl::StrCat("field grouped.per_token_scale ", Dims(t), ": must be [", f_.m,
                                ", ", k64, ", 2] (CheckPerTokenScale)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GwqFacts> ParseGroupedWeightQuant(const GroupedInputs& in, uint32_t aic_num,
                                                 uint32_t aiv_num) {
  if (!in[GroupedTensor::kX].present() || !in[GroupedTensor::kWeight].present()) {
    return Invalid("fields grouped.x and grouped.weight need at least one tensor each");
  }
  Parser parser(in, aic_num, aiv_num);
  return parser.Run();
}

}  // namespace npu::tiling::grouped::weight_quant
