#include "server/tiling/transpose/transpose_parse.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"

namespace npu::tiling::transpose {
namespace {

// CANN's largest m, n and k (INT32_MAX), and the engine's bounds of the
// batch: the batch words of the tiling data are 32-bit.
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();
// Each tensor stays below 2^46 bytes, as for the other operators, so that
// every byte count the tiling forms (sums of all three tensors included)
// fits in 64 bits.
constexpr unsigned __int128 kMaxTensorBytes = static_cast<unsigned __int128>(1) << 46;
// The group sizes are 16-bit parts of CANN's group_size attribute.
constexpr int64_t kMaxGroupSize = 0xFFFF;

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

std::string Dims(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// Whether `shape` is `dims` (compared in place: the checks run on every
// decision, the message's copy only on a failure).
bool ShapeIs(const std::vector<int64_t>& shape, std::initializer_list<int64_t> dims) {
  return std::equal(shape.begin(), shape.end(), dims.begin(), dims.end());
}

bool Is(const std::vector<int64_t>& perm, int64_t a, int64_t b, int64_t c) {
  return perm.size() == 3 && perm[0] == a && perm[1] == b && perm[2] == c;
}

std::string_view Name(MatmulOp op) { return MatmulOpName(op); }

absl::Status CheckPermSizes(const TransposeAttrs& t) {
  struct Perm {
    const char* field;
    const std::vector<int64_t>& dims;
  };
  for (const Perm& perm :
       {Perm{"transpose.perm_x1", t.perm_x1}, Perm{"transpose.perm_x2", t.perm_x2},
        Perm{"transpose.perm_y", t.perm_y}}) {
    if (perm.dims.size() != 3) {
      return Invalid(absl::StrCat("field ", perm.field, "=", Dims(perm.dims),
                                  " must have 3 entries (x1, x2 and y are 3-D)"));
    }
  }
  return absl::OkStatus();
}

// The accepted perms: x1 [1, 0, 2] (and [0, 1, 2] when `x1_identity`), x2
// [0, 1, 2] (and [0, 2, 1] when `x2_transposed`), y [1, 0, 2].
absl::Status CheckPermValues(const TransposeAttrs& t, bool x1_identity, bool x2_transposed,
                             std::string_view x2_rule) {
  if (!Is(t.perm_x1, 1, 0, 2) && !(x1_identity && Is(t.perm_x1, 0, 1, 2))) {
    return Invalid(absl::StrCat("field transpose.perm_x1=", Dims(t.perm_x1), " must be ",
                                x1_identity ? "[1, 0, 2] or [0, 1, 2]" : "[1, 0, 2]"));
  }
  if (!Is(t.perm_x2, 0, 1, 2) && !(x2_transposed && Is(t.perm_x2, 0, 2, 1))) {
    return Invalid(absl::StrCat("field transpose.perm_x2=", Dims(t.perm_x2), " must be ",
                                std::string(x2_rule)));
  }
  if (!Is(t.perm_y, 1, 0, 2)) {
    return Invalid(absl::StrCat("field transpose.perm_y=", Dims(t.perm_y), " must be [1, 0, 2]"));
  }
  return absl::OkStatus();
}

absl::Status CheckDims(const MatmulProblem& p) {
  for (const auto& [field, value] :
       {std::pair<const char*, int64_t>{"m", p.m}, {"k", p.k}, {"n", p.n}}) {
    if (value < 1 || value > kMaxDim) {
      return Invalid(absl::StrCat("field ", field, "=", value, " must be in [1, ", kMaxDim,
                                  "] (m, k and n must be positive)"));
    }
  }
  if (p.transpose.batch < 0 || p.transpose.batch > kMaxDim) {
    return Invalid(absl::StrCat("field transpose.batch=", p.transpose.batch, " must be in [0, ",
                                kMaxDim, "]"));
  }
  return absl::OkStatus();
}

// The engine's limit: A, B and C with their batch below 2^46 bytes each.
absl::Status CheckTensorBytes(const MatmulProblem& p) {
  const unsigned __int128 batch = static_cast<uint64_t>(p.transpose.batch);
  struct Tensor {
    const char* name;
    int64_t rows, cols;
    DataType dtype;
  };
  for (const Tensor& t : {Tensor{"x1", p.m, p.k, p.dtype_a}, Tensor{"x2", p.k, p.n, p.dtype_b},
                          Tensor{"y", p.m, p.n, p.dtype_c}}) {
    const unsigned __int128 bytes = batch * static_cast<uint64_t>(t.rows) *
                                    static_cast<uint64_t>(t.cols) * DataTypeBytes(t.dtype);
    if (bytes > kMaxTensorBytes) {
      return Invalid(absl::StrCat("tensor ", t.name, " of ", p.transpose.batch, "x", t.rows, "x",
                                  t.cols, " ", std::string(DataTypeName(t.dtype)),
                                  " exceeds the limit of ", static_cast<uint64_t>(kMaxTensorBytes),
                                  " bytes"));
    }
  }
  return absl::OkStatus();
}

// Fields neither op reads (their layouts are the perms'; CANN reads x2's
// origin shape only).
absl::Status CheckUnread(const MatmulProblem& p) {
  const auto op = [&p] { return std::string(Name(p.op)); };  // for the messages only
  if (p.trans_a || p.trans_b) {
    return Invalid(absl::StrCat("field ", p.trans_a ? "trans_a" : "trans_b", " is not valid for ",
                                op(),
                                ": transpose.perm_x1 and transpose.perm_x2 state the layouts"));
  }
  if (!p.storage_shape_b.empty()) {
    return Invalid(absl::StrCat("field storage_shape_b is not valid for ", op(),
                                ": CANN reads x2's origin shape only"));
  }
  if (p.deterministic_level != 0) {
    return Invalid(absl::StrCat("field deterministic_level=", p.deterministic_level,
                                " is not valid for ", op(), ": its tiling does not read it"));
  }
  const int64_t factor = p.transpose.batch_split_factor;
  if (factor < std::numeric_limits<int32_t>::min() || factor > kMaxDim) {
    return Invalid(absl::StrCat("field transpose.batch_split_factor=", factor,
                                " must fit in 32 bits (CANN reads the attribute as int32)"));
  }
  return absl::OkStatus();
}

bool TbmmDtypesSupported(const MatmulProblem& p) {
  const DataType a = p.dtype_a, b = p.dtype_b, c = p.dtype_c;
  if (a != b) return false;
  switch (a) {
    case DataType::kFloat16:
      return c == DataType::kFloat16 || c == DataType::kInt8;
    case DataType::kFloat32:
    case DataType::kBFloat16:
      return c == a;
    default:
      return false;
  }
}

// TransposeBatchMatMul, in the order of CANN's CheckArgs and GetArgs.
absl::Status CheckTransposeBatchMatMul(const MatmulProblem& p) {
  const TransposeAttrs& t = p.transpose;
  if (auto s = CheckPermSizes(t); !s.ok()) return s;
  if (p.has_bias) {
    return Invalid("field has_bias: TransposeBatchMatMul takes no bias (bias must be null)");
  }
  // CANN reads the scale's dims through perm_x2 before it checks the perms'
  // values; here the values come first, so that the dims are x2's.
  if (auto s = CheckPermValues(t, /*x1_identity=*/true, /*x2_transposed=*/true,
                               "[0, 1, 2] or [0, 2, 1]");
      !s.ok()) {
    return s;
  }
  const int32_t factor = static_cast<int32_t>(t.batch_split_factor);
  if (t.scale.present) {
    if (factor > 1) {
      return Invalid(absl::StrCat("field transpose.batch_split_factor=", factor,
                                  " must be 1 when transpose.scale is given"));
    }
    const int64_t columns = t.batch * p.n;  // each below 2^31: no overflow
    if (t.scale.shape.empty() || t.scale.shape[0] != columns) {
      return Invalid(absl::StrCat("field transpose.scale.shape=", Dims(t.scale.shape),
                                  ": its first dim must be batch * n = ", columns));
    }
    if (p.dtype_a != DataType::kFloat16 || p.dtype_b != DataType::kFloat16) {
      return Invalid(absl::StrCat("fields dtype_a/dtype_b = ", std::string(DataTypeName(p.dtype_a)),
                                  "/", std::string(DataTypeName(p.dtype_b)),
                                  " must be float16 when transpose.scale is given"));
    }
    // The kernel's fixpipe reads 64-bit dequantization words; CANN does not
    // check the dtype.
    if (t.scale.dtype != DataType::kInt64 && t.scale.dtype != DataType::kUint64) {
      return Invalid(
          absl::StrCat("field transpose.scale.dtype=", std::string(DataTypeName(t.scale.dtype)),
                       " must be int64 or uint64 (64-bit dequantization words)"));
    }
  }
  if (auto s = CheckDims(p); !s.ok()) return s;
  if (factor > 1 && t.batch % factor != 0) {
    return Invalid(absl::StrCat("field transpose.batch=", t.batch,
                                " must be divisible by transpose.batch_split_factor=", factor));
  }
  if (p.format_a != Format::kNd || p.format_c != Format::kNd) {
    return Invalid(absl::StrCat("field ", p.format_a != Format::kNd ? "format_a" : "format_c",
                                " must be ND (x1 and y cannot be FRACTAL_NZ)"));
  }
  if (!TbmmDtypesSupported(p)) {
    return Invalid(absl::StrCat(
        "fields dtype_a/dtype_b/dtype_c = ", std::string(DataTypeName(p.dtype_a)), "/",
        std::string(DataTypeName(p.dtype_b)), "/", std::string(DataTypeName(p.dtype_c)),
        " are unsupported for TransposeBatchMatMul: (float16, float16, float16), (float16, "
        "float16, int8), (float32, float32, float32) or (bfloat16, bfloat16, bfloat16)"));
  }
  return absl::OkStatus();
}

bool IsFp8(DataType d) { return d == DataType::kFloat8E4M3 || d == DataType::kFloat8E5M2; }

// TransposeQuantBatchMatMul's dtype table: (x1, x2, x1 scale, x2 scale, y).
bool TqbmmDtypesSupported(const MatmulProblem& p, PrecisionMode mode) {
  const DataType y = p.dtype_c;
  const bool half_y = y == DataType::kFloat16 || y == DataType::kBFloat16;
  const QuantInputs& q = p.quant;
  switch (mode) {
    case PrecisionMode::kHiFp8:
      // CANN reads the x1 scale's dtype as uint64 in this mode.
      return q.scale.dtype == DataType::kUint64 && (half_y || y == DataType::kHiFloat8);
    case PrecisionMode::kMxFp8:
      return p.dtype_a == DataType::kFloat8E4M3 && p.dtype_b == DataType::kFloat8E4M3 && half_y;
    case PrecisionMode::kFp8:
      return IsFp8(p.dtype_a) && IsFp8(p.dtype_b) && q.pertoken.dtype == DataType::kFloat32 &&
             q.scale.dtype == DataType::kFloat32 && half_y;
  }
  return false;
}

// The scales' shapes (CANN's CheckScale): MXFP8 x1 [m, batch, g, 2] and x2
// [batch, g, n, 2] read through perm_x2; otherwise x1 [m] (not checked in
// HIFP8) and x2 [n].
absl::Status CheckScales(const MatmulProblem& p, PrecisionMode mode, bool x2_transposed) {
  const QuantInputs& q = p.quant;
  const int64_t b = p.transpose.batch;
  if (mode != PrecisionMode::kHiFp8 && !q.pertoken.present) {
    return Invalid(
        "field quant.pertoken_scale (x1's scale) is required unless x1 and x2 are hifloat8");
  }
  if (mode == PrecisionMode::kMxFp8) {
    const int64_t g = MxScalePairs(p.k);
    const std::initializer_list<int64_t> x1 = {p.m, b, g, 2};
    if (!ShapeIs(q.pertoken.shape, x1)) {
      return Invalid(absl::StrCat("field quant.pertoken_scale.shape=", Dims(q.pertoken.shape),
                                  " must be [m, batch, ceil(ceil(k / 32) / 2), 2] = ", Dims(x1),
                                  " in MXFP8 mode"));
    }
    const std::initializer_list<int64_t> x2_nk = {b, p.n, g, 2};
    const std::initializer_list<int64_t> x2_kn = {b, g, p.n, 2};
    const std::initializer_list<int64_t> x2 = x2_transposed ? x2_nk : x2_kn;
    if (!ShapeIs(q.scale.shape, x2)) {
      return Invalid(absl::StrCat("field quant.scale.shape=", Dims(q.scale.shape), " must be ",
                                  x2_transposed ? "[batch, n, g, 2]" : "[batch, g, n, 2]", " = ",
                                  Dims(x2), " in MXFP8 mode (g = ceil(ceil(k / 32) / 2))"));
    }
    return absl::OkStatus();
  }
  if (mode != PrecisionMode::kHiFp8 && !ShapeIs(q.pertoken.shape, {p.m})) {
    return Invalid(absl::StrCat("field quant.pertoken_scale.shape=", Dims(q.pertoken.shape),
                                " must be [m] = [", p.m, "]"));
  }
  if (!ShapeIs(q.scale.shape, {p.n})) {
    return Invalid(absl::StrCat("field quant.scale.shape=", Dims(q.scale.shape), " must be [n] = [",
                                p.n, "]"));
  }
  return absl::OkStatus();
}

// TransposeQuantBatchMatMul, in the order of CANN's CheckArgs and GetArgs.
absl::Status CheckTransposeQuantBatchMatMul(const MatmulProblem& p) {
  const TransposeAttrs& t = p.transpose;
  const QuantInputs& q = p.quant;
  if (p.hf32) return Invalid("field hf32 is not valid for TransposeQuantBatchMatMul");
  if (t.scale.present) {
    return Invalid(
        "field transpose.scale is not valid for TransposeQuantBatchMatMul: its scales are "
        "quant.pertoken_scale (x1) and quant.scale (x2)");
  }
  if (q.offset.present || !q.bias_shape.empty() || !q.tensor_api) {
    return Invalid(absl::StrCat("field quant.",
                                q.offset.present       ? "offset"
                                : q.bias_shape.empty() ? "without_tensor_api"
                                                       : "bias_shape",
                                " is not valid for TransposeQuantBatchMatMul"));
  }
  for (const auto& [field, value] : {std::pair<const char*, int64_t>{"m", q.group_size_m},
                                     {"n", q.group_size_n},
                                     {"k", q.group_size_k}}) {
    if (value < 0 || value > kMaxGroupSize) {
      return Invalid(absl::StrCat("field quant.group_size_", field, "=", value, " must be in [0, ",
                                  kMaxGroupSize, "]"));
    }
  }
  if (auto s = CheckPermSizes(t); !s.ok()) return s;
  if (!q.scale.present) return Invalid("field quant.scale (x2's scale) is required");
  const bool hifp8 = p.dtype_a == DataType::kHiFloat8 && p.dtype_b == DataType::kHiFloat8;
  const bool mx = q.pertoken.present && q.pertoken.dtype == DataType::kFloat8E8M0 &&
                  q.scale.dtype == DataType::kFloat8E8M0;
  const PrecisionMode mode =
      mx ? PrecisionMode::kMxFp8 : (hifp8 ? PrecisionMode::kHiFp8 : PrecisionMode::kFp8);
  if (auto s = CheckPermValues(t, /*x1_identity=*/false, /*x2_transposed=*/mx || hifp8,
                               mx || hifp8 ? "[0, 1, 2] or [0, 2, 1]"
                                           : "[0, 1, 2] (FP8 mode: per-token x1, per-channel x2)");
      !s.ok()) {
    return s;
  }
  if (auto s = CheckDims(p); !s.ok()) return s;
  if (auto s = CheckScales(p, mode, Is(t.perm_x2, 0, 2, 1)); !s.ok()) return s;
  if (mx && !(q.group_size_m <= 1 && q.group_size_n <= 1 && q.group_size_k == kMxGroupK)) {
    return Invalid(absl::StrCat("fields quant.group_size_m/n/k = ", q.group_size_m, "/",
                                q.group_size_n, "/", q.group_size_k,
                                " must be 0 or 1 / 0 or 1 / 32 in MXFP8 mode"));
  }
  if (p.format_b == Format::kFractalNz && !mx) {
    return Invalid("field format_b: x2 may be FRACTAL_NZ in MXFP8 mode only");
  }
  if (p.has_bias) {
    return Invalid("field has_bias: TransposeQuantBatchMatMul takes no bias (bias must be null)");
  }
  if (mx && p.k % kMxKAlign != 0) {
    return Invalid(
        absl::StrCat("field k=", p.k, " must be a multiple of ", kMxKAlign, " in MXFP8 mode"));
  }
  if (mode == PrecisionMode::kFp8 && (p.k != kFp8ModeK || p.n != kFp8ModeN)) {
    return Invalid(absl::StrCat("fields k=", p.k, " and n=", p.n, " must be ", kFp8ModeK, " and ",
                                kFp8ModeN, " in FP8 mode (per-token x1, per-channel x2)"));
  }
  if (t.batch_split_factor != 1) {
    return Invalid(absl::StrCat("field transpose.batch_split_factor=", t.batch_split_factor,
                                " must be 1 for TransposeQuantBatchMatMul"));
  }
  if (p.format_a != Format::kNd || p.format_c != Format::kNd) {
    return Invalid(absl::StrCat("field ", p.format_a != Format::kNd ? "format_a" : "format_c",
                                " must be ND (x1 and y cannot be FRACTAL_NZ)"));
  }
  if (!TqbmmDtypesSupported(p, mode)) {
    return Invalid(absl::StrCat(
        "fields dtype_a/dtype_b/quant.pertoken_scale.dtype/quant.scale.dtype/dtype_c = ",
        std::string(DataTypeName(p.dtype_a)), "/", std::string(DataTypeName(p.dtype_b)), "/",
        q.pertoken.present ? std::string(DataTypeName(q.pertoken.dtype)) : std::string("absent"),
        "/", std::string(DataTypeName(q.scale.dtype)), "/", std::string(DataTypeName(p.dtype_c)),
        " are unsupported for TransposeQuantBatchMatMul: FP8 (float8_e5m2 or float8_e4m3fn "
        "inputs, float32 scales), MXFP8 (float8_e4m3fn inputs, float8_e8m0 scales) or HIFP8 "
        "(hifloat8 inputs, uint64 scales), with a float16 or bfloat16 y (HIFP8: also "
        "hifloat8)"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view PrecisionModeName(PrecisionMode mode) {
  switch (mode) {
    case PrecisionMode::kFp8:
      return "FP8";
    case PrecisionMode::kMxFp8:
      return "MXFP8";
    case PrecisionMode::kHiFp8:
      return "HIFP8";
  }
  return "";
}

absl::Status CheckTransposeProblem(const MatmulProblem& p) {
  if (auto s = CheckUnread(p); !s.ok()) return s;
  absl::Status status = p.op == MatmulOp::kTransposeBatchMatMul ? CheckTransposeBatchMatMul(p)
                                                                : CheckTransposeQuantBatchMatMul(p);
  if (!status.ok()) return status;
  return CheckTensorBytes(p);
}

std::vector<int64_t> TransposeLayout::X1Shape() const {
  const int64_t b = static_cast<int64_t>(batch), rows = static_cast<int64_t>(m);
  const int64_t depth = static_cast<int64_t>(k);
  return x1_batch_inner ? std::vector<int64_t>{rows, b, depth}
                        : std::vector<int64_t>{b, rows, depth};
}

std::vector<int64_t> TransposeLayout::X2Shape() const {
  const int64_t b = static_cast<int64_t>(batch), cols = static_cast<int64_t>(n);
  const int64_t depth = static_cast<int64_t>(k);
  return x2_transposed ? std::vector<int64_t>{b, cols, depth}
                       : std::vector<int64_t>{b, depth, cols};
}

std::vector<int64_t> TransposeLayout::YShape() const {
  const int64_t b = static_cast<int64_t>(batch), rows = static_cast<int64_t>(m);
  const int64_t cols = static_cast<int64_t>(n), f = static_cast<int64_t>(split);
  if (split > 1) return {f, rows, b / f * cols};
  return {rows, b, cols};
}

TransposeLayout TransposeLayoutOf(const MatmulProblem& p) {
  const TransposeFacts facts = TransposeFactsOf(p);
  TransposeLayout layout;
  layout.batch = static_cast<uint64_t>(p.transpose.batch);
  layout.m = static_cast<uint64_t>(p.m);
  layout.n = static_cast<uint64_t>(p.n);
  layout.k = static_cast<uint64_t>(p.k);
  layout.x1_batch_inner = facts.perm_x1 == 1;
  layout.x2_transposed = facts.trans_b;
  layout.split = facts.batch_split_factor;
  return layout;
}

TransposeFacts TransposeFactsOf(const MatmulProblem& p) {
  TransposeFacts facts;
  const TransposeAttrs& t = p.transpose;
  facts.perm_x1 = Is(t.perm_x1, 1, 0, 2) ? 1 : 0;
  facts.perm_x2 = Is(t.perm_x2, 0, 2, 1) ? 1 : 0;
  facts.trans_b = facts.perm_x2 == 1;
  const int32_t factor = static_cast<int32_t>(t.batch_split_factor);
  facts.batch_split_factor = factor > 1 ? static_cast<uint32_t>(factor) : 1;
  facts.has_scale = t.scale.present;
  const QuantInputs& q = p.quant;
  if (q.pertoken.present && q.pertoken.dtype == DataType::kFloat8E8M0 && q.scale.present &&
      q.scale.dtype == DataType::kFloat8E8M0) {
    facts.mode = PrecisionMode::kMxFp8;
  } else if (p.dtype_a == DataType::kHiFloat8 && p.dtype_b == DataType::kHiFloat8) {
    facts.mode = PrecisionMode::kHiFp8;
  }
  return facts;
}

}  // namespace npu::tiling::transpose
