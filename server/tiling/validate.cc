#include "server/tiling/validate.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/tiling/batch_shape.h"
#include "server/tiling/grouped/gmm_path.h"
#include "server/tiling/int_math.h"
#include "server/tiling/operator_table.h"
#include "server/tiling/quant/quant_parse.h"
#include "server/tiling/quant/quant_request.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/transpose/transpose_parse.h"
#include "server/tiling/weight_quant/wq_parse.h"

namespace npu::tiling {
namespace {

// Each operand must stay below 2^46 bytes (64 TiB) so that every byte count
// the heuristics form, including sums of all three tensors, fits in 64 bits.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 46;
// Tiling-data stride fields are 32-bit.
constexpr int64_t kMaxStride = std::numeric_limits<uint32_t>::max();

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

absl::Status CheckDim(std::string_view field, int64_t value, int64_t min) {
  if (value < min || value > kMaxDim) {
    return Invalid(absl::StrCat("field ", std::string(field), "=", value, " must be in [", min,
                                ", ", kMaxDim, "]"));
  }
  return absl::OkStatus();
}

absl::Status CheckTensorBytes(std::string_view tensor, uint64_t rows, uint64_t cols,
                              DataType dtype) {
  // rows, cols <= 2^31, so the element count fits; the byte count may not.
  const unsigned __int128 bytes =
      static_cast<unsigned __int128>(rows) * cols * DataTypeBytes(dtype);
  if (bytes > kMaxTensorBytes) {
    return Invalid(absl::StrCat("tensor ", std::string(tensor), " of ", rows, "x", cols, " ",
                                std::string(DataTypeName(dtype)), " exceeds the limit of ",
                                kMaxTensorBytes, " bytes"));
  }
  return absl::OkStatus();
}

// CANN's MatMulV3 dtype table for arch35: A and B share a dtype; float16 and
// bfloat16 may produce float32; bias is C's dtype or float32.
bool DtypesSupported(const MatmulProblem& p) {
  if (p.dtype_a != p.dtype_b || !IsFloatMatmulType(p.dtype_a)) return false;
  if (!IsFloatMatmulType(p.dtype_c) || (p.has_bias && !IsFloatMatmulType(p.dtype_bias))) {
    return false;
  }
  const bool c_ok = p.dtype_c == p.dtype_a ||
                    (p.dtype_a != DataType::kFloat32 && p.dtype_c == DataType::kFloat32);
  if (!c_ok) return false;
  if (!p.has_bias) return true;
  if (p.dtype_a == DataType::kFloat32) return p.dtype_bias == DataType::kFloat32;
  return p.dtype_bias == p.dtype_a || p.dtype_bias == DataType::kFloat32;
}

absl::Status CheckNzStorageOfB(const MatmulProblem& p) {
  // B as stored: [k, n], or [n, k] when transposed.
  const int64_t rows = p.trans_b ? p.n : p.k;
  const int64_t cols = p.trans_b ? p.k : p.n;
  const int64_t col_align = 32 / static_cast<int64_t>(DataTypeBytes(p.dtype_b));
  if (p.storage_shape_b.empty()) return absl::OkStatus();  // canonical NZ storage
  const auto& s = p.storage_shape_b;
  const std::string shape = absl::StrCat("[", absl::StrJoin(s, ", "), "]");
  if (s.size() < 4) {
    return Invalid(
        absl::StrCat("field storage_shape_b=", shape, " must have at least 4 dims for FRACTAL_NZ"));
  }
  for (int64_t d : s) {
    if (d <= 0 || d > kMaxDim) {
      return Invalid(
          absl::StrCat("field storage_shape_b=", shape, " has a dim outside [1, ", kMaxDim, "]"));
    }
  }
  const size_t r = s.size();
  const int64_t rows_stored = s[r - 3] * s[r - 2];
  const int64_t cols_stored = s[r - 4] * s[r - 1];
  const int64_t rows_needed = static_cast<int64_t>(CeilAlign(rows, 16));
  const int64_t cols_needed = static_cast<int64_t>(CeilAlign(cols, col_align));
  if (rows_stored != rows_needed || cols_stored != cols_needed) {
    return Invalid(absl::StrCat("field storage_shape_b=", shape, " does not hold B of ", rows, "x",
                                cols,
                                ": FRACTAL_NZ needs dims[-3]*dims[-2]=align16(rows)=", rows_needed,
                                " and dims[-4]*dims[-1]=align", col_align, "(cols)=", cols_needed,
                                ", got ", rows_stored, " and ", cols_stored));
  }
  return absl::OkStatus();
}

absl::Status CheckSlice(const MatmulProblem& p) {
  const SliceView& s = p.a_slice;
  if (!s.enabled) return absl::OkStatus();
  if (p.trans_a)
    return Invalid("field a_slice: a non-contiguous slice view of A needs trans_a=false");
  if (s.rank != 2 && s.rank != 3) {
    return Invalid(absl::StrCat("field a_slice.rank=", s.rank, " must be 2 or 3"));
  }
  if (s.row_stride < p.k || s.row_stride > kMaxStride) {
    return Invalid(absl::StrCat("field a_slice.row_stride=", s.row_stride, " must be in [k=", p.k,
                                ", ", kMaxStride, "]"));
  }
  if (s.rank == 2) return absl::OkStatus();
  if (s.batch < 1 || s.batch > p.m || p.m % s.batch != 0) {
    return Invalid(absl::StrCat("field a_slice.batch=", s.batch, " must divide m=", p.m));
  }
  const int64_t rows = p.m / s.batch;
  const int64_t min_batch_stride = (rows - 1) * s.row_stride + p.k;
  if (s.batch_stride < min_batch_stride || s.batch_stride > kMaxStride) {
    return Invalid(absl::StrCat("field a_slice.batch_stride=", s.batch_stride, " must be in [",
                                min_batch_stride, ", ", kMaxStride,
                                "] so that batches do not overlap"));
  }
  return absl::OkStatus();
}

// CANN keeps up to four batch dims per operand (ranks up to 6).

std::string DimsText(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// A field that only some operators read; refusing it elsewhere keeps a
// request from meaning something the tiling silently ignores.
absl::Status OnlyFor(std::string_view field, std::string_view ops, const MatmulProblem& p) {
  return Invalid(absl::StrCat("field ", std::string(field), " is only valid for ", std::string(ops),
                              ", not for ", std::string(MatmulOpName(p.op))));
}

// The names of the operators whose row has `column` set: "BatchMatMulV3 and
// FusedMatMul".
std::string OpsWith(bool OperatorSpec::*column) {
  std::string names;
  for (const OperatorSpec& spec : Operators()) {
    if (spec.*column) absl::StrAppend(&names, names.empty() ? "" : " and ", std::string(spec.name));
  }
  return names;
}

absl::Status CheckFieldsOfOp(const MatmulProblem& p) {
  // The operators' names are looked up only for an error.
  const OperatorSpec& spec = OperatorSpecOf(p.op);
  const auto only = [&p](std::string_view field, bool OperatorSpec::*column) {
    return OnlyFor(field, OpsWith(column), p);
  };
  if (!spec.takes_slice_view) {
    if (p.a_slice.enabled) return only("a_slice", &OperatorSpec::takes_slice_view);
    if (p.force_grp_acc_fp32) return only("force_grp_acc_fp32", &OperatorSpec::takes_slice_view);
  }
  if (!spec.batched) {
    if (!p.batch.a.empty()) return only("batch_a", &OperatorSpec::batched);
    if (!p.batch.b.empty()) return only("batch_b", &OperatorSpec::batched);
    if (!p.batch.c.empty()) return only("batch_c", &OperatorSpec::batched);
    if (!p.batch.bias.empty()) return only("batch_bias", &OperatorSpec::batched_bias);
    if (p.batch.a_interleaved) return only("a_batch_interleaved", &OperatorSpec::batched);
    if (p.batch.b_interleaved) return only("b_batch_interleaved", &OperatorSpec::batched);
  }
  if (!spec.takes_epilogue) {
    if (p.fused.op != FusedOp::kNone) return only("fused_op", &OperatorSpec::takes_epilogue);
    if (!p.fused.x3_shape.empty()) return only("x3_shape", &OperatorSpec::takes_epilogue);
    if (p.fused.inner_precise != 0) return only("inner_precise", &OperatorSpec::takes_epilogue);
  }
  // FusedMatMul reads no offset_x attribute (fused_matmul_common.h).
  if (!spec.takes_tensor_api_switch && p.avoid_tensor_api) {
    return only("avoid_tensor_api", &OperatorSpec::takes_tensor_api_switch);
  }
  if (!spec.takes_quant && !p.quant.IsDefault()) return only("quant", &OperatorSpec::takes_quant);
  if (!spec.takes_transpose && !p.transpose.IsDefault()) {
    return only("transpose", &OperatorSpec::takes_transpose);
  }
  if (!spec.takes_grouped && !p.grouped.IsDefault()) {
    return only("grouped", &OperatorSpec::takes_grouped);
  }
  // QuantBatchMatmulV3 shapes its bias with quant.bias_shape.
  if (spec.takes_quant && !p.batch.bias.empty()) {
    return Invalid(
        "field batch_bias is not valid for QuantBatchMatmulV3: its bias is shaped by "
        "quant.bias_shape");
  }
  // FusedMatMul's bias has rank <= 2 (ValidateBias, fused_matmul_builtin_tiling.cpp).
  if (spec.batched && !spec.batched_bias && !p.batch.bias.empty()) {
    return Invalid(absl::StrCat("field batch_bias is not valid for ", std::string(spec.name),
                                ": its bias has rank <= 2"));
  }
  return absl::OkStatus();
}

// At most four dims, each in [1, kMaxDim], with a product that stays in
// [1, kMaxDim] (checked step by step, so it cannot overflow).
absl::Status CheckBatchList(std::string_view field, const std::vector<int64_t>& dims) {
  if (dims.size() > kMaxBatchDims) {
    return Invalid(absl::StrCat("field ", std::string(field), "=", DimsText(dims), " has ",
                                dims.size(), " dims; at most ", kMaxBatchDims,
                                " batch dims are supported (operand rank <= 6)"));
  }
  int64_t product = 1;
  for (int64_t d : dims) {
    if (d < 1 || d > kMaxDim) {
      return Invalid(absl::StrCat("field ", std::string(field), "=", DimsText(dims),
                                  " has a dim outside [1, ", kMaxDim, "]"));
    }
    // product and d are at most kMaxDim (2^31 - 1), so their product fits
    // in 62 bits: a multiplication, not a division, on the hot path.
    if (product * d > kMaxDim) {
      return Invalid(absl::StrCat("field ", std::string(field), "=", DimsText(dims),
                                  ": the product of the batch dims exceeds ", kMaxDim));
    }
    product *= d;
  }
  return absl::OkStatus();
}

// The batch rules of BatchMatMulV3 (ExtractMatrixBatchInfo,
// ValidateMatrixBatchInfo, MergeBatchAndMAxis and ValidateOptionalBatchInfo,
// matmul/batch_mat_mul_v3/op_host/op_tiling/arch35/batch_matmul_v3_tiling_advanced.cpp),
// which FusedMatMul inherits.
absl::Status CheckBatches(const MatmulProblem& p) {
  // No batch dims and no interleaved view: nothing below can fail.
  if (p.batch.IsDefault()) return absl::OkStatus();
  if (auto s = CheckBatchList("batch_a", p.batch.a); !s.ok()) return s;
  if (auto s = CheckBatchList("batch_b", p.batch.b); !s.ok()) return s;
  if (auto s = CheckBatchList("batch_c", p.batch.c); !s.ok()) return s;
  if (auto s = CheckBatchList("batch_bias", p.batch.bias); !s.ok()) return s;
  BatchSlots a = RightAligned(p.batch.a);
  const BatchSlots b = RightAligned(p.batch.b);
  BatchSlots broadcast{};
  for (size_t i = 0; i < kMaxBatchDims; ++i) broadcast[i] = std::max(a[i], b[i]);
  BatchSlots c = p.batch.c.empty() ? broadcast : RightAligned(p.batch.c);
  // CANN reads a {1, 0, 2} view of A by B's rank (ExtractNonContiguousDims of
  // the mat_mul_v3 tiling): with a 3-D B it is the transposed-view case; with
  // a 2-D B a non-contiguous slice of batch * m rows, whose M is then merged
  // with A's batch once more; a B of rank 4 to 6 is neither, and CANN fails.
  int64_t rows = p.m;
  if (p.batch.a_interleaved && p.batch.a.size() == 1) {
    if (p.batch.b.size() > 1) {
      return Invalid(absl::StrCat(
          "field a_batch_interleaved needs a 2-D or 3-D B (at most one batch dim), got batch_b=",
          DimsText(p.batch.b)));
    }
    if (p.batch.b.empty()) {
      if (p.trans_a) {
        return Invalid(
            "field trans_a must be false when a_batch_interleaved meets a 2-D B: CANN reads "
            "that view as a non-contiguous slice of A's rows");
      }
      if (p.m * p.batch.a[0] > kMaxDim) {  // each at most kMaxDim: no overflow
        return Invalid(absl::StrCat("fields m=", p.m, " and batch_a=", DimsText(p.batch.a),
                                    ": the slice view of A (B is 2-D) has batch * m rows, more "
                                    "than ",
                                    kMaxDim));
      }
      rows = p.m * p.batch.a[0];
    }
  }
  // An unbatched B times a row-major A is one matmul of batch_a * m rows:
  // CANN merges A's batch into M before the broadcast check.
  if (MergesBatchIntoM(p)) {
    if (rows * SlotProduct(a) > kMaxDim) {  // each at most kMaxDim: no overflow
      return Invalid(absl::StrCat("fields m=", p.m, " and batch_a=", DimsText(p.batch.a),
                                  ": merging A's batch into M (B is unbatched) gives more than ",
                                  kMaxDim, " rows"));
    }
  }
  for (size_t i = 0; i < kMaxBatchDims; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) {
      return Invalid(absl::StrCat("fields batch_a=", DimsText(p.batch.a),
                                  " and batch_b=", DimsText(p.batch.b),
                                  " break the broadcast rule: aligned batch dims must be equal "
                                  "or one of them 1"));
    }
  }
  if (!p.batch.c.empty() && c != broadcast) {
    return Invalid(absl::StrCat("field batch_c=", DimsText(p.batch.c),
                                " must be the broadcast of batch_a=", DimsText(p.batch.a),
                                " and batch_b=", DimsText(p.batch.b)));
  }
  if (p.batch.a_interleaved && p.batch.a.size() != 1) {
    return Invalid(
        absl::StrCat("field a_batch_interleaved needs a 3-D A (one batch dim), got batch_a=",
                     DimsText(p.batch.a)));
  }
  if (p.batch.b_interleaved && p.batch.b.size() != 1) {
    return Invalid(
        absl::StrCat("field b_batch_interleaved needs a 3-D B (one batch dim), got batch_b=",
                     DimsText(p.batch.b)));
  }
  if (p.batch.bias.empty()) return absl::OkStatus();
  if (!p.has_bias) return Invalid("field batch_bias needs has_bias=true");
  if (MergesBatchIntoM(p)) {  // A and C lose their batch
    a = {1, 1, 1, 1};
    c = {1, 1, 1, 1};
  }
  if (a != b) {
    return Invalid(absl::StrCat(
        "field batch_bias: a batched bias needs identical batch dims of A and B, got batch_a=",
        DimsText(p.batch.a), " and batch_b=", DimsText(p.batch.b)));
  }
  if (RightAligned(p.batch.bias) != c) {
    return Invalid(absl::StrCat("field batch_bias=", DimsText(p.batch.bias),
                                " must equal the output's batch dims"));
  }
  return absl::OkStatus();
}

// FusedMatMul's exact (x1, x2, y, bias) dtype tuples on DAV_3510
// (DTYPE_LIST_*_DAV_3510, fused_matmul_builtin_tiling.cpp); x3 always has
// the inputs' dtype here.
bool FusedDtypesSupported(const MatmulProblem& p) {
  const DataType in = p.dtype_a;
  if (p.dtype_b != in || !IsFloatMatmulType(in) || !IsFloatMatmulType(p.dtype_c)) return false;
  if (p.has_bias && !IsFloatMatmulType(p.dtype_bias)) return false;
  const bool sixteen = in == DataType::kFloat16 || in == DataType::kBFloat16;
  switch (p.fused.op) {
    case FusedOp::kGeluErf:
    case FusedOp::kGeluTanh:
      return sixteen && p.dtype_c == in && !p.has_bias;
    case FusedOp::kCast16To32:
      if (!sixteen || p.dtype_c != DataType::kFloat32) return false;
      return !p.has_bias || p.dtype_bias == in || p.dtype_bias == DataType::kFloat32;
    case FusedOp::kNone:
    case FusedOp::kRelu:
    case FusedOp::kAdd:
    case FusedOp::kMul:
      if (p.dtype_c != in) return false;
      return !p.has_bias || p.dtype_bias == in || p.dtype_bias == DataType::kFloat32;
  }
  return false;
}

// FusedMatMul's own input rules (ValidateOpSpecific, ValidateBias,
// ValidateMatrixBatchInfo and ValidateOptionalBatchInfo of
// matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_builtin_tiling.cpp).
absl::Status CheckFused(const MatmulProblem& p) {
  // Named only in errors; a view (absl's, which StrCat takes), not a copy.
  const std::string_view op_name = FusedOpName(p.fused.op);
  const absl::string_view op(op_name.data(), op_name.size());
  if (p.fused.inner_precise != 0 && p.fused.inner_precise != 1) {
    return Invalid(absl::StrCat("field inner_precise=", p.fused.inner_precise,
                                " must be 0 (high precision) or 1 (high performance)"));
  }
  if (TraitsOf(p.fused.op).gelu) {
    if (!p.batch.a.empty() || !p.batch.b.empty() || !p.batch.c.empty()) {
      return Invalid(absl::StrCat("fields batch_a/batch_b/batch_c must be empty for fused_op ", op,
                                  ": x1, x2 and y must be 2-D"));
    }
    if (p.has_bias) return Invalid(absl::StrCat("field has_bias: fused_op ", op, " takes no bias"));
  }
  if (TraitsOf(p.fused.op).reads_x3) {
    if (p.format_b != Format::kNd) {
      return Invalid(
          absl::StrCat("field format_b must be ND for fused_op ", op, " (x1, x2 and x3 are ND)"));
    }
    const std::vector<int64_t>& x3 = p.fused.x3_shape;
    if (!x3.empty()) {
      if (x3.size() < 2 || x3.size() > 3) {
        return Invalid(absl::StrCat("field x3_shape=", DimsText(x3), " must have 2 or 3 dims"));
      }
      if (x3[x3.size() - 2] != p.m || x3[x3.size() - 1] != p.n) {
        return Invalid(absl::StrCat("field x3_shape=", DimsText(x3), " must end in [m, n] = [", p.m,
                                    ", ", p.n, "]"));
      }
    }
  } else if (!p.fused.x3_shape.empty()) {
    return Invalid(absl::StrCat("field x3_shape is only read by fused_op add and mul, not ",
                                op.empty() ? "\"\"" : op));
  }
  if (!FusedDtypesSupported(p)) {
    return Invalid(absl::StrCat(
        "fields dtype_a/dtype_b/dtype_c", p.has_bias ? "/dtype_bias" : "", " = ",
        std::string(DataTypeName(p.dtype_a)), "/", std::string(DataTypeName(p.dtype_b)), "/",
        std::string(DataTypeName(p.dtype_c)),
        p.has_bias ? absl::StrCat("/", std::string(DataTypeName(p.dtype_bias))) : "",
        " are unsupported for FusedMatMul fused_op ", op.empty() ? "\"\"" : op,
        ": A, B and C share float16, bfloat16 or float32 (16cast32: float16/bfloat16 in, float32 "
        "out; gelu: 16-bit only, no bias); bias is A's dtype or float32"));
  }
  // DAV_3510 has no batch broadcast for FusedMatMul: x1 and x2 have the
  // same rank and the same batch dims.
  if (p.batch.a != p.batch.b) {
    return Invalid(absl::StrCat("fields batch_a=", DimsText(p.batch.a),
                                " and batch_b=", DimsText(p.batch.b),
                                " differ: FusedMatMul on DAV_3510 has no batch broadcast"));
  }
  return absl::OkStatus();
}

// x3's batch dim of add/mul must be 1 or the output's batch count.
absl::Status CheckX3Batch(const MatmulProblem& p) {
  if (!TraitsOf(p.fused.op).reads_x3 || p.fused.x3_shape.size() != 3) return absl::OkStatus();
  BatchSlots c = RightAligned(p.batch.c.empty() ? p.batch.a : p.batch.c);
  if (MergesBatchIntoM(p)) c = {1, 1, 1, 1};
  const int64_t batch_c = SlotProduct(c);
  if (p.fused.x3_shape[0] != 1 && p.fused.x3_shape[0] != batch_c) {
    return Invalid(absl::StrCat("field x3_shape=", DimsText(p.fused.x3_shape),
                                ": its batch dim must be 1 or the output's batch count ", batch_c));
  }
  return absl::OkStatus();
}

// QuantBatchMatmulV3: the fields it does not read, then CANN's parse and
// checker on the problem as its tiling context would hold it.
absl::Status ValidateQuantProblem(const MatmulProblem& p,
                                  std::shared_ptr<const quant::QuantFacts>* parsed) {
  if (p.hf32) return Invalid("field hf32 is not valid for QuantBatchMatmulV3");
  if (p.batch.a_interleaved || p.batch.b_interleaved) {
    return Invalid(absl::StrCat("field ", p.batch.a_interleaved ? "a" : "b",
                                "_batch_interleaved is not valid for QuantBatchMatmulV3"));
  }
  if (p.format_c != Format::kNd) {
    return Invalid("field format_c must be ND (QuantBatchMatmulV3 writes ND)");
  }
  if (p.deterministic_level < 0 || p.deterministic_level > 3) {
    return Invalid(
        absl::StrCat("field deterministic_level=", p.deterministic_level, " must be in [0, 3]"));
  }
  const QuantInputs& q = p.quant;
  if (q.antiquant_scale.present || q.antiquant_offset.present || q.quant_scale.present ||
      q.quant_offset.present || q.group_size != 0) {
    return Invalid(
        "fields quant.antiquant_scale, antiquant_offset, quant_scale, quant_offset and "
        "group_size are WeightQuantBatchMatmulV2's; QuantBatchMatmulV3 reads quant.scale, "
        "pertoken_scale, offset and group_size_m/n/k");
  }
  absl::StatusOr<quant::QuantFacts> facts = quant::ParseQuantRequest(quant::QuantRequestOf(p));
  if (!facts.ok()) return facts.status();
  if (parsed != nullptr) *parsed = std::make_shared<const quant::QuantFacts>(*std::move(facts));
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateProblemForChip(const MatmulProblem& p, const ChipSpec& chip) {
  // CheckPara's last part (CheckTempLimit) reads the chip's core counts.
  if (p.op == MatmulOp::kWeightQuantBatchMatmulV2) {
    return weight_quant::CheckWeightQuantOnChip(p, chip);
  }
  // The add / mul epilogue runs on two AIV cores per AIC
  // (ValidateOpSpecific, fused_matmul_builtin_tiling.cpp).
  if (p.op == MatmulOp::kFusedMatMul && TraitsOf(p.fused.op).reads_x3 &&
      chip.aiv_num != 2 * chip.aic_num) {
    return Invalid(absl::StrCat("field fused_op ", std::string(FusedOpName(p.fused.op)),
                                " needs aiv_num == 2 * aic_num on the platform; got aiv_num=",
                                chip.aiv_num, ", aic_num=", chip.aic_num));
  }
  return absl::OkStatus();
}

absl::Status ValidateProblem(const MatmulProblem& p) { return ValidateProblem(p, nullptr); }

absl::Status ValidateProblem(const MatmulProblem& p,
                             std::shared_ptr<const quant::QuantFacts>* parsed) {
  if (auto s = CheckFieldsOfOp(p); !s.ok()) return s;
  // QuantBatchMatmulV3's checks are CANN's own, in its order.
  if (p.op == MatmulOp::kQuantBatchMatmulV3) return ValidateQuantProblem(p, parsed);
  // WeightQuantBatchMatmulV2's too (CheckPara but its chip-dependent part).
  if (p.op == MatmulOp::kWeightQuantBatchMatmulV2) {
    return weight_quant::CheckWeightQuantProblem(p);
  }
  // So are the transposed batch matmuls'.
  if (transpose::IsTransposeOp(p.op)) return transpose::CheckTransposeProblem(p);
  // GroupedMatmul's op-level checks; each path checks its own rules.
  if (p.op == MatmulOp::kGroupedMatmul) return grouped::CheckGroupedProblem(p);
  if (auto s = CheckDim("m", p.m, 1); !s.ok()) return s;
  if (auto s = CheckDim("n", p.n, 1); !s.ok()) return s;
  if (auto s = CheckDim("k", p.k, 0); !s.ok()) return s;
  if (p.k == 0 && p.has_bias) {
    return Invalid("field k=0 is not allowed with a bias: k must be in [1, 2147483647]");
  }
  if (p.format_a != Format::kNd)
    return Invalid("field format_a must be ND (FRACTAL_NZ A is unsupported)");
  if (p.format_c != Format::kNd)
    return Invalid("field format_c must be ND (FRACTAL_NZ C is unsupported)");
  if (OperatorSpecOf(p.op).batched) {
    if (auto s = CheckBatches(p); !s.ok()) return s;
  }
  if (p.op == MatmulOp::kFusedMatMul) {
    if (auto s = CheckFused(p); !s.ok()) return s;
    if (auto s = CheckX3Batch(p); !s.ok()) return s;
  } else if (!DtypesSupported(p)) {
    return Invalid(absl::StrCat(
        "fields dtype_a/dtype_b/dtype_c", p.has_bias ? "/dtype_bias" : "", " = ",
        std::string(DataTypeName(p.dtype_a)), "/", std::string(DataTypeName(p.dtype_b)), "/",
        std::string(DataTypeName(p.dtype_c)),
        p.has_bias ? absl::StrCat("/", std::string(DataTypeName(p.dtype_bias))) : "",
        " are unsupported: A and B must match; C is A's dtype or float32 (float16/bfloat16 A); "
        "bias is A's dtype or float32"));
  }
  if (p.deterministic_level < 0 || p.deterministic_level > 3) {
    return Invalid(
        absl::StrCat("field deterministic_level=", p.deterministic_level, " must be in [0, 3]"));
  }
  if (p.hf32 && p.force_grp_acc_fp32) {
    return Invalid("fields hf32 and force_grp_acc_fp32 are exclusive (one opImplMode value)");
  }
  if (p.format_b == Format::kFractalNz) {
    if (auto s = CheckNzStorageOfB(p); !s.ok()) return s;
  } else if (!p.storage_shape_b.empty()) {
    return Invalid("field storage_shape_b is only meaningful when format_b is FRACTAL_NZ");
  }
  if (auto s = CheckSlice(p); !s.ok()) return s;
  // Every batch counts towards an operand's bytes (the products are at most
  // kMaxDim, so the 128-bit products below cannot overflow).
  const uint64_t batch_a = BatchProduct(p.batch.a), batch_b = BatchProduct(p.batch.b);
  const uint64_t batch_c = p.batch.c.empty() ? std::max(batch_a, batch_b) : BatchProduct(p.batch.c);
  const uint64_t m = p.m, n = p.n, k = p.k;
  if (auto s = CheckTensorBytes("A", batch_a * m, k, p.dtype_a); !s.ok()) return s;
  if (auto s = CheckTensorBytes("B", batch_b * k, n, p.dtype_b); !s.ok()) return s;
  if (auto s = CheckTensorBytes("C", batch_c * m, n, p.dtype_c); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status ValidateTilingArch(const ChipSpec& chip) {
  if (chip.npu_arch == NpuArch::kDav3510) return absl::OkStatus();
  // CANN selects its mat_mul_v3 host tiling per NpuArch; the arch35
  // strategies reimplemented here are DAV_3510's. Another architecture has
  // other buffers, another fixpipe and other kernels, so answering with
  // these plans would be wrong, not approximate.
  return absl::FailedPreconditionError(absl::StrCat(
      "CANN's arch35 mat_mul_v3 tiling applies to DAV_3510 only; platform \"", chip.name, "\" is ",
      std::string(NpuArchName(chip.npu_arch)), " (Execute with a kernel_schedule runs on it)"));
}

absl::Status CheckedInputs::CheckProblem(MatmulProblem problem) {
  return CheckProblemFilledBy([&](MatmulProblem& held) { held = std::move(problem); });
}

void CheckedInputs::ResetProblem() {
  problem_checked_ = false;
  quant_.reset();
  if (problem_filled_) problem_ = MatmulProblem();
  problem_filled_ = false;
}

absl::Status CheckedInputs::CheckHeldProblem() {
  RETURN_IF_ERROR(ValidateProblem(problem_, &quant_));
  problem_checked_ = true;
  return absl::OkStatus();
}

absl::Status CheckedInputs::CheckChip(ChipSpec chip) {
  chip_checked_ = false;
  RETURN_IF_ERROR(ValidateChip(chip));
  chip_ = std::move(chip);
  chip_checked_ = true;
  return absl::OkStatus();
}

absl::Status CheckedInputs::CheckPlatform(std::string_view name) {
  chip_checked_ = false;
  for (const ChipSpec& builtin : BuiltinPlatforms()) {
    if (builtin.name != name) continue;
    chip_ = builtin;
    chip_checked_ = true;
    return absl::OkStatus();
  }
  return FindPlatform(name).status();
}

MatmulProblem CheckedInputs::TakeProblem() {
  problem_checked_ = false;
  problem_filled_ = true;  // what a move leaves is unspecified, not a default problem
  return std::move(problem_);
}

ChipSpec CheckedInputs::TakeChip() {
  chip_checked_ = false;
  return std::move(chip_);
}

}  // namespace npu::tiling
