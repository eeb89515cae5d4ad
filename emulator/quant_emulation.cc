#include "emulator/quant_emulation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/casts.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "emulator/quant_formats.h"
#include "server/tiling/batch_shape.h"
#include "server/tiling/quant/quant_parse.h"
#include "server/tiling/quant/quant_request.h"
#include "server/tiling/status_macros.h"

namespace npu::emu {
namespace {

using tiling::DataType;
using tiling::MatmulProblem;
using tiling::Range;
using tiling::WorkUnit;

constexpr double kInf = std::numeric_limits<double>::infinity();
// MX scales come in pairs of K groups: the scale's k dim is ceil(k / 64).
constexpr uint64_t kMxPair = 2;
// The fixpipe keeps the top 19 bits of an fp32 scale (quant_numerics.h).
constexpr uint32_t kFixpipeScaleMask = 0xFFFFE000u;

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

std::string Name(DataType dtype) { return std::string(tiling::DataTypeName(dtype)); }

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

std::vector<int64_t> Concat(std::vector<int64_t> front, std::initializer_list<uint64_t> back) {
  for (uint64_t dim : back) front.push_back(static_cast<int64_t>(dim));
  return front;
}

bool IsIntInput(DataType dtype) { return dtype == DataType::kInt8 || dtype == DataType::kInt4; }

// Little-endian element `index` of a tensor's raw bytes.
template <typename T>
T ReadRaw(const HostTensor& tensor, uint64_t index) {
  T value;
  std::memcpy(&value, tensor.bytes.data() + index * sizeof(T), sizeof(T));
  return value;
}

// ---------------------------------------------------------------------------
// The problem's layout.

// Where the scales sit (the file comment of quant_emulation.h).
enum class ScaleKind { kPerTensorOrChannel, kPerBlock, kMx };

// How the problem's tensors map onto the QuantOperands of one C batch.
struct QuantLayout {
  uint64_t m = 0, n = 0, k = 0;  // of one C batch (before any fold)
  bool trans_a = false, trans_b = false;
  DataType x1 = DataType::kInt8, x2 = DataType::kInt8, y = DataType::kFloat16;
  ScaleKind kind = ScaleKind::kPerTensorOrChannel;
  DataType scale_dtype = DataType::kFloat32;
  uint64_t scale_count = 1;  // kPerTensorOrChannel: 1 or n values
  bool has_pertoken = false;
  DataType pertoken_dtype = DataType::kFloat32;
  uint64_t pertoken_count = 1;  // kPerTensorOrChannel: 1 or m values
  // kPerBlock: group sizes and group counts; kMx: k_groups = ceil(k / 32)
  // and k_pairs = ceil(k / 64).
  uint64_t group_m = 1, group_n = 1, group_k = 0;
  uint64_t m_groups = 1, n_groups = 1, k_groups = 1, k_pairs = 1;
  bool has_bias = false;
  DataType bias_dtype = DataType::kInt32;
  bool bias_per_batch = false;  // [batch_c, 1, n]
  // C batches and the x1 / x2 batch each reads.
  uint64_t batches = 1;
  std::vector<uint64_t> a_of, b_of;
};

absl::Status RequireLayout(absl::string_view field, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& modelled, absl::string_view what) {
  if (shape == modelled) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(field, ": shape ", ShapeText(shape),
                                               " is accepted by CANN, but only the ", what,
                                               " layout ", ShapeText(modelled), " is modelled"));
}

absl::StatusOr<QuantLayout> LayoutOf(const MatmulProblem& p) {
  if (p.op != tiling::MatmulOp::kQuantBatchMatmulV3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "problem.op: ", std::string(tiling::MatmulOpName(p.op)), " is not QuantBatchMatmulV3"));
  }
  ASSIGN_OR_RETURN(const tiling::quant::QuantFacts facts,
                   tiling::quant::ParseQuantRequest(tiling::quant::QuantRequestOf(p)));
  RETURN_IF_ERROR(CheckModelled(p));

  QuantLayout l;
  l.m = static_cast<uint64_t>(p.m);
  l.n = static_cast<uint64_t>(p.n);
  l.k = static_cast<uint64_t>(p.k);
  l.trans_a = p.trans_a;
  l.trans_b = p.trans_b;
  l.x1 = p.dtype_a;
  l.x2 = p.dtype_b;
  l.y = p.dtype_c;
  l.scale_dtype = p.quant.scale.dtype;
  l.has_pertoken = p.quant.pertoken.present;
  l.pertoken_dtype = p.quant.pertoken.dtype;
  l.has_bias = p.has_bias;
  l.bias_dtype = p.dtype_bias;
  l.bias_per_batch = p.has_bias && p.quant.bias_shape.size() == 3;

  if (facts.is_mx) {
    l.kind = ScaleKind::kMx;
    l.k_groups = CeilDiv(l.k, kMxGroupSize);
    l.k_pairs = CeilDiv(l.k, kMxGroupSize * kMxPair);
    RETURN_IF_ERROR(RequireLayout("quant.pertoken_scale", p.quant.pertoken.shape,
                                  l.trans_a ? Concat(p.batch.a, {l.k_pairs, l.m, kMxPair})
                                            : Concat(p.batch.a, {l.m, l.k_pairs, kMxPair}),
                                  l.trans_a ? "[ceil(k / 64), m, 2]" : "[m, ceil(k / 64), 2]"));
    RETURN_IF_ERROR(RequireLayout("quant.scale", p.quant.scale.shape,
                                  l.trans_b ? Concat(p.batch.b, {l.n, l.k_pairs, kMxPair})
                                            : Concat(p.batch.b, {l.k_pairs, l.n, kMxPair}),
                                  l.trans_b ? "[n, ceil(k / 64), 2]" : "[ceil(k / 64), n, 2]"));
  } else if (facts.is_per_block) {
    l.kind = ScaleKind::kPerBlock;
    l.group_m = facts.group_size_m;
    l.group_n = facts.group_size_n;
    l.group_k = facts.group_size_k;
    l.m_groups = CeilDiv(l.m, l.group_m);
    l.n_groups = CeilDiv(l.n, l.group_n);
    l.k_groups = CeilDiv(l.k, l.group_k);
    RETURN_IF_ERROR(
        RequireLayout("quant.pertoken_scale", p.quant.pertoken.shape,
                      l.trans_a ? Concat(p.batch.a, {l.k_groups, l.m_groups})
                                : Concat(p.batch.a, {l.m_groups, l.k_groups}),
                      l.trans_a ? "x1's [k groups, m groups]" : "x1's [m groups, k groups]"));
    RETURN_IF_ERROR(
        RequireLayout("quant.scale", p.quant.scale.shape,
                      l.trans_b ? Concat(p.batch.b, {l.n_groups, l.k_groups})
                                : Concat(p.batch.b, {l.k_groups, l.n_groups}),
                      l.trans_b ? "x2's [n groups, k groups]" : "x2's [k groups, n groups]"));
  } else {
    // CANN's parse has made the scale [1] or [n] and the pertoken [1] or [m].
    l.scale_count = tiling::BatchProduct(p.quant.scale.shape);
    l.pertoken_count = l.has_pertoken ? tiling::BatchProduct(p.quant.pertoken.shape) : 1;
  }

  const std::vector<int64_t> c_dims = tiling::OutputBatchDims(p);
  const tiling::BatchSlots c_slots = tiling::RightAligned(c_dims);
  const tiling::BatchSlots a_slots = tiling::RightAligned(p.batch.a);
  const tiling::BatchSlots b_slots = tiling::RightAligned(p.batch.b);
  l.batches = tiling::BatchProduct(c_dims);
  for (uint64_t c = 0; c < l.batches; ++c) {
    l.a_of.push_back(tiling::BroadcastIndex(a_slots, c_slots, c));
    l.b_of.push_back(tiling::BroadcastIndex(b_slots, c_slots, c));
  }
  return l;
}

// ---------------------------------------------------------------------------
// Input checks.

absl::Status CheckTensor(absl::string_view name, const HostTensor& tensor, DataType dtype,
                         absl::string_view dtype_field, const std::vector<int64_t>& shape,
                         absl::string_view shape_field) {
  if (tensor.dtype != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": dtype ", Name(tensor.dtype), ", expected ", Name(dtype), " (", dtype_field, ")"));
  }
  if (tensor.shape != shape) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": shape ", ShapeText(tensor.shape),
                                                   ", expected ", ShapeText(shape), " (",
                                                   shape_field, ")"));
  }
  const uint64_t bytes = tiling::DataTypeBytesOf(dtype, tensor.elements());
  if (tensor.bytes.size() != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", tensor.bytes.size(),
                                                   " bytes, expected ", bytes, " for ", Name(dtype),
                                                   " ", ShapeText(shape)));
  }
  return absl::OkStatus();
}

absl::Status CheckOptional(absl::string_view name, const std::optional<HostTensor>& tensor,
                           const tiling::QuantTensorSpec& spec, absl::string_view field) {
  if (tensor.has_value() != spec.present) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", tensor.has_value() ? "given" : "missing", ", but ", field,
                     ".present is ", spec.present ? "true" : "false"));
  }
  if (!spec.present) return absl::OkStatus();
  return CheckTensor(name, *tensor, spec.dtype, absl::StrCat(field, ".dtype"), spec.shape,
                     absl::StrCat(field, ".shape"));
}

std::vector<int64_t> BiasShapeOf(const MatmulProblem& p) {
  return p.quant.bias_shape.empty() ? std::vector<int64_t>{p.n} : p.quant.bias_shape;
}

absl::StatusOr<QuantLayout> CheckAndLayout(const MatmulProblem& p, const Tensors& t) {
  ASSIGN_OR_RETURN(QuantLayout layout, LayoutOf(p));
  const OperandShapes shapes = ShapesOf(p);
  RETURN_IF_ERROR(CheckTensor("x1", t.a, p.dtype_a, "problem.dtype_a", shapes.a,
                              "ShapesOf(problem).a: batch.a + [m, k], [k, m] when trans_a"));
  RETURN_IF_ERROR(CheckTensor("x2", t.b, p.dtype_b, "problem.dtype_b", shapes.b,
                              "ShapesOf(problem).b: batch.b + [k, n], [n, k] when trans_b"));
  if (t.bias.has_value() != p.has_bias) {
    return absl::InvalidArgumentError(
        absl::StrCat("bias: ", t.bias.has_value() ? "given" : "missing",
                     ", but problem.has_bias is ", p.has_bias ? "true" : "false"));
  }
  if (p.has_bias) {
    RETURN_IF_ERROR(CheckTensor("bias", *t.bias, p.dtype_bias, "problem.dtype_bias", BiasShapeOf(p),
                                "problem.quant.bias_shape, [n] when empty"));
  }
  if (t.x3.has_value()) {
    return absl::InvalidArgumentError("x3: QuantBatchMatmulV3 takes no x3");
  }
  if (p.quant.scale.present && !t.scale.has_value()) {
    return absl::InvalidArgumentError("scale: required (problem.quant.scale)");
  }
  RETURN_IF_ERROR(CheckOptional("scale", t.scale, p.quant.scale, "problem.quant.scale"));
  RETURN_IF_ERROR(
      CheckOptional("pertoken", t.pertoken_scale, p.quant.pertoken, "problem.quant.pertoken"));
  RETURN_IF_ERROR(CheckOptional("offset", t.offset, p.quant.offset, "problem.quant.offset"));
  return layout;
}

// ---------------------------------------------------------------------------
// The QuantOperands of a block of one C batch.

// The operands of rows `rows`, columns `cols` and K range `ks` of C batch
// `batch`. A block of one row (column) of a C with more takes that row
// (column) twice: QuantOperands reads a 1-element per-token (per-channel)
// vector as per-tensor, which would change the path; the duplicate's values
// are discarded. Per-block groups become per row and column (group_m =
// group_n = 1 with each row's and column's block scale), so a block need not
// start on a group boundary; K ranges of per-block and MX blocks start on a
// K group (the caller checks). `t` has passed CheckAndLayout(), which made
// `l`: the scale is present, and the pertoken exactly when l.has_pertoken.
QuantOperands BuildOperands(const QuantLayout& l, const Tensors& t, uint64_t batch, Range rows,
                            Range cols, Range ks) {
  QuantOperands op;
  op.m = rows.size() == 1 && l.m > 1 ? 2 : rows.size();
  op.n = cols.size() == 1 && l.n > 1 ? 2 : cols.size();
  op.k = ks.size();
  const auto row = [&](uint64_t i) { return rows.begin + std::min(i, rows.size() - 1); };
  const auto col = [&](uint64_t j) { return cols.begin + std::min(j, cols.size() - 1); };

  op.x1_dtype = l.x1;
  op.x2_dtype = l.x2;
  op.x1.assign(QuantBytes(l.x1, op.m * op.k), 0);
  op.x2.assign(QuantBytes(l.x2, op.k * op.n), 0);
  const uint64_t a_base = l.a_of[batch] * l.m * l.k;
  for (uint64_t i = 0; i < op.m; ++i) {
    const uint64_t r = row(i);
    for (uint64_t kk = 0; kk < op.k; ++kk) {
      const uint64_t kg = ks.begin + kk;
      const uint64_t index = a_base + (l.trans_a ? kg * l.m + r : r * l.k + kg);
      SetQuantCode(l.x1, absl::MakeSpan(op.x1), i * op.k + kk,
                   GetQuantCode(l.x1, t.a.bytes, index));
    }
  }
  const uint64_t b_base = l.b_of[batch] * l.k * l.n;
  for (uint64_t kk = 0; kk < op.k; ++kk) {
    const uint64_t kg = ks.begin + kk;
    for (uint64_t j = 0; j < op.n; ++j) {
      const uint64_t c = col(j);
      const uint64_t index = b_base + (l.trans_b ? c * l.k + kg : kg * l.n + c);
      SetQuantCode(l.x2, absl::MakeSpan(op.x2), kk * op.n + j,
                   GetQuantCode(l.x2, t.b.bytes, index));
    }
  }

  op.scale_dtype = l.scale_dtype;
  switch (l.kind) {
    case ScaleKind::kPerTensorOrChannel: {
      const bool packed = l.scale_dtype == DataType::kUint64 || l.scale_dtype == DataType::kInt64;
      const uint64_t count = l.scale_count == 1 ? 1 : op.n;
      for (uint64_t j = 0; j < count; ++j) {
        const uint64_t index = l.scale_count == 1 ? 0 : col(j);
        if (packed) {
          op.scale_words.push_back(ReadRaw<uint64_t>(*t.scale, index));
        } else {
          op.scale.push_back(t.scale->Get(index));
        }
      }
      if (l.has_pertoken) {
        op.has_pertoken = true;
        const uint64_t tokens = l.pertoken_count == 1 ? 1 : op.m;
        for (uint64_t i = 0; i < tokens; ++i) {
          op.pertoken.push_back(t.pertoken_scale->Get(l.pertoken_count == 1 ? 0 : row(i)));
        }
      }
      break;
    }
    case ScaleKind::kPerBlock: {
      op.group_m = op.group_n = 1;
      op.group_k = l.group_k;
      const uint64_t g0 = ks.begin / l.group_k, groups = CeilDiv(op.k, l.group_k);
      const uint64_t b_scales = l.b_of[batch] * l.k_groups * l.n_groups;
      op.scale.resize(groups * op.n);
      for (uint64_t g = 0; g < groups; ++g) {
        for (uint64_t j = 0; j < op.n; ++j) {
          const uint64_t cg = col(j) / l.group_n;
          op.scale[g * op.n + j] = t.scale->Get(
              b_scales + (l.trans_b ? cg * l.k_groups + g0 + g : (g0 + g) * l.n_groups + cg));
        }
      }
      op.has_pertoken = true;
      const uint64_t a_scales = l.a_of[batch] * l.m_groups * l.k_groups;
      op.pertoken.resize(op.m * groups);
      for (uint64_t i = 0; i < op.m; ++i) {
        const uint64_t rg = row(i) / l.group_m;
        for (uint64_t g = 0; g < groups; ++g) {
          op.pertoken[i * groups + g] = t.pertoken_scale->Get(
              a_scales + (l.trans_a ? (g0 + g) * l.m_groups + rg : rg * l.k_groups + g0 + g));
        }
      }
      break;
    }
    case ScaleKind::kMx: {
      const uint64_t g0 = ks.begin / kMxGroupSize, groups = CeilDiv(op.k, kMxGroupSize);
      const uint64_t b_scales = l.b_of[batch] * l.k_pairs * l.n * kMxPair;
      op.scale_e8m0.resize(groups * op.n);
      for (uint64_t g = 0; g < groups; ++g) {
        const uint64_t pair = (g0 + g) / kMxPair, half = (g0 + g) % kMxPair;
        for (uint64_t j = 0; j < op.n; ++j) {
          const uint64_t c = col(j);
          op.scale_e8m0[g * op.n + j] =
              t.scale
                  ->bytes[b_scales +
                          (l.trans_b ? (c * l.k_pairs + pair) : (pair * l.n + c)) * kMxPair + half];
        }
      }
      op.has_pertoken = true;
      const uint64_t a_scales = l.a_of[batch] * l.k_pairs * l.m * kMxPair;
      op.pertoken_e8m0.resize(op.m * groups);
      for (uint64_t i = 0; i < op.m; ++i) {
        const uint64_t r = row(i);
        for (uint64_t g = 0; g < groups; ++g) {
          const uint64_t pair = (g0 + g) / kMxPair, half = (g0 + g) % kMxPair;
          op.pertoken_e8m0[i * groups + g] =
              t.pertoken_scale
                  ->bytes[a_scales +
                          (l.trans_a ? (pair * l.m + r) : (r * l.k_pairs + pair)) * kMxPair + half];
        }
      }
      break;
    }
  }

  if (l.has_bias) {
    op.has_bias = true;
    op.bias_dtype = l.bias_dtype;
    const uint64_t base = l.bias_per_batch ? batch * l.n : 0;
    for (uint64_t j = 0; j < op.n; ++j) {
      if (l.bias_dtype == DataType::kInt32) {
        op.bias_int32.push_back(ReadRaw<int32_t>(*t.bias, base + col(j)));
      } else {
        op.bias_float.push_back(t.bias->Get(base + col(j)));
      }
    }
  }
  op.y_dtype = l.y;
  return op;
}

absl::Status ExpectPath(const QuantOperands& op, QuantPath expected, absl::string_view what) {
  ASSIGN_OR_RETURN(const QuantPath path, ClassifyQuantPath(op));
  if (path == expected) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, " takes the ", QuantPathName(path),
                                          " path, the problem the ", QuantPathName(expected),
                                          " path"));
}

// ---------------------------------------------------------------------------
// Stream-K: raw slice accumulators and the dequantisation after the sum.

// Whether the cube's raw accumulator is int32 (int8 / int4 inputs) or fp32.
bool IntAccumulator(const QuantLayout& l) { return IsIntInput(l.x1); }

// The operands whose QuantMatmulDevice() result is the raw L0C accumulator of
// `op`'s K slice: int32 output for int inputs (int4 read as int8, as the
// kernels' int8 copies), a fixpipe scale of exactly 1 and float32 output
// for float8 / hifloat8, float32 output for MX and per-block (whose slice
// accumulator is already scaled). The bias stays where the path adds it in
// L0C (int32 biases; float ones on the fixpipe and MX paths), in the first
// slice only.
QuantOperands RawSliceOperands(QuantOperands op, QuantPath path, bool first_slice) {
  const bool bias_in_l0c = op.has_bias && (op.bias_dtype == DataType::kInt32 ||
                                           path == QuantPath::kFixpipe || path == QuantPath::kMx);
  op.has_bias = first_slice && bias_in_l0c;
  if (path == QuantPath::kMx || path == QuantPath::kPerBlock) {
    op.y_dtype = DataType::kFloat32;
    return op;
  }
  if (op.x1_dtype == DataType::kInt4) {
    for (auto* codes : {&op.x1, &op.x2}) {
      const uint64_t count = codes == &op.x1 ? op.m * op.k : op.k * op.n;
      std::vector<uint8_t> widened(count);
      for (uint64_t i = 0; i < count; ++i) {
        widened[i] = static_cast<uint8_t>(EncodeQuant(
            DataType::kInt8, static_cast<float>(DecodeQuant(
                                 DataType::kInt4, GetQuantCode(DataType::kInt4, *codes, i)))));
      }
      *codes = std::move(widened);
    }
    op.x1_dtype = op.x2_dtype = DataType::kInt8;
  }
  op.scale_dtype = DataType::kUint64;
  op.scale.clear();
  op.scale_words = {PackFixpipeScale(1.0f)};
  op.has_pertoken = false;
  op.pertoken.clear();
  op.y_dtype = IsIntInput(op.x1_dtype) ? DataType::kInt32 : DataType::kFloat32;
  return op;
}

QuantPath RawSlicePath(const QuantLayout& l, QuantPath path) {
  if (path == QuantPath::kMx || path == QuantPath::kPerBlock) return path;
  return IntAccumulator(l) ? QuantPath::kInt32Output : QuantPath::kFixpipe;
}

template <typename T>
T PerColumn(const std::vector<T>& values, uint64_t j) {
  return values.size() == 1 ? values[0] : values[j];
}

// The output cast of element column `j` (quant_numerics.h): float16 /
// bfloat16 nearest even without saturation, float32 as is, int8 by REQ8.
double CastToY(const QuantOperands& op, uint64_t j, float value) {
  switch (op.y_dtype) {
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return RoundToFormat(op.y_dtype, value, Overflow::kNonSaturate);
    case DataType::kInt8:
      return FixpipeToInt8(value, FixpipeOffset(PerColumn(op.scale_words, j)));
    default:
      return value;
  }
}

// What the kernels do with the reduced accumulator `acc` (int32 or fp32
// bits) of element (i, j) of `op`'s block on path `path`, each fp32 step
// rounded on its own (the order of quant_numerics.h's DeviceElement):
//   * int32 output: the accumulator;
//   * fixpipe: fp32(acc) times the fp19 scale (the word's, or the fp32
//     product pertoken[0] * scale[0] of a double scale, or scale[0],
//     truncated), then the cast. BlockEpilogueQbmmPertensorStreamK does
//     the same without a post-dequant bias (DecodeMaskedDequantScale /
//     MergeAndMaskDequantScale);
//   * vector epilogue: fp32(acc) * scale[j] * pertoken[i] + float bias[j],
//     then the cast (that epilogue's post-dequant bias order: X2, X1, bias);
//   * MX and per-block: the accumulator is already scaled; the cast.
double DequantizeAccumulator(const QuantOperands& op, QuantPath path, bool int_acc, uint64_t i,
                             uint64_t j, uint32_t acc) {
  const float value =
      int_acc ? static_cast<float>(static_cast<int32_t>(acc)) : absl::bit_cast<float>(acc);
  switch (path) {
    case QuantPath::kInt32Output:
      return static_cast<int32_t>(acc);
    case QuantPath::kMx:
    case QuantPath::kPerBlock:
      return CastToY(op, j, value);
    case QuantPath::kFixpipe: {
      float scale = 0;
      if (op.scale_dtype == DataType::kUint64 || op.scale_dtype == DataType::kInt64) {
        scale = FixpipeScaleValue(PerColumn(op.scale_words, j));
      } else {
        const float product = op.has_pertoken ? op.pertoken[0] * op.scale[0] : op.scale[0];
        scale = absl::bit_cast<float>(absl::bit_cast<uint32_t>(product) & kFixpipeScaleMask);
      }
      const float scaled = value * scale;
      return CastToY(op, j, scaled);
    }
    case QuantPath::kVectorEpilogue: {
      float v = value * PerColumn(op.scale, j);
      if (op.has_pertoken) v = v * PerColumn(op.pertoken, i);
      if (op.has_bias && op.bias_dtype != DataType::kInt32) v = v + op.bias_float[j];
      return CastToY(op, j, v);
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------
// C as doubles of y in and out of a HostTensor.

void StoreY(HostTensor& c, uint64_t index, double value) {
  switch (c.dtype) {
    case DataType::kInt8: {
      const auto code = static_cast<int8_t>(value);
      std::memcpy(c.bytes.data() + index, &code, 1);
      return;
    }
    case DataType::kInt32: {
      const auto code = static_cast<int32_t>(value);
      std::memcpy(c.bytes.data() + 4 * index, &code, 4);
      return;
    }
    default:  // float16, bfloat16, float32: `value` is exactly one of them
      c.Set(index, static_cast<float>(value));
      return;
  }
}

double LoadY(const HostTensor& c, uint64_t index) {
  switch (c.dtype) {
    case DataType::kInt8: {
      int8_t code;
      std::memcpy(&code, c.bytes.data() + index, 1);
      return code;
    }
    case DataType::kInt32:
      return ReadRaw<int32_t>(c, index);
    default:
      return c.Get(index);
  }
}

// ---------------------------------------------------------------------------
// RunQuantNumerics.

struct RunContext {
  const QuantLayout& layout;
  const Tensors& operands;
  const tiling::Schedule& schedule;
  QuantPath path = QuantPath::kFixpipe;
  HostTensor& c;
  std::vector<uint32_t> workspace;                  // raw int32 / fp32 partials, by slot
  std::unique_ptr<std::atomic<uint16_t>[]> writes;  // per element of C

  void Write(uint64_t stacked_row, uint64_t column, double value) {
    const uint64_t index = stacked_row * layout.n + column;
    StoreY(c, index, value);
    writes[index].fetch_add(1, std::memory_order_relaxed);
  }
};

// The rows of `stacked` (rows of the stacked C) cut at C batch boundaries:
// calls fn(batch, rows within the batch, first stacked row).
template <typename Fn>
absl::Status ForEachBatchSegment(const QuantLayout& l, Range stacked, Fn&& fn) {
  for (uint64_t r = stacked.begin; r < stacked.end;) {
    const uint64_t batch = r / l.m, row = r % l.m;
    const uint64_t rows = std::min(stacked.end - r, l.m - row);
    RETURN_IF_ERROR(fn(batch, Range{row, row + rows}, r));
    r += rows;
  }
  return absl::OkStatus();
}

absl::Status RunMmadUnit(RunContext& ctx, const WorkUnit& unit, size_t index) {
  const QuantLayout& l = ctx.layout;
  if (unit.m.empty() || unit.n.empty() || unit.k.empty()) return absl::OkStatus();
  if (!unit.writes_partial) {
    if (unit.k.begin != 0 || unit.k.end != l.k) {
      return absl::InternalError(absl::StrCat("unit ", index, " computes K [", unit.k.begin, ", ",
                                              unit.k.end, ") of ", l.k,
                                              " and writes C; only Stream-K units split K"));
    }
    return ForEachBatchSegment(l, unit.m, [&](uint64_t batch, Range rows, uint64_t first) {
      const QuantOperands op = BuildOperands(l, ctx.operands, batch, rows, unit.n, Range{0, l.k});
      RETURN_IF_ERROR(ExpectPath(op, ctx.path, absl::StrCat("unit ", index, "'s block")));
      ASSIGN_OR_RETURN(const std::vector<double> values, QuantMatmulDevice(op));
      for (uint64_t i = 0; i < rows.size(); ++i) {
        for (uint64_t j = 0; j < unit.n.size(); ++j) {
          ctx.Write(first + i, unit.n.begin + j, values[i * op.n + j]);
        }
      }
      return absl::OkStatus();
    });
  }

  // A Stream-K K slice: its raw accumulator into its workspace slot.
  const tiling::ReductionGroup& group = ctx.schedule.reductions[unit.reduction];
  if (unit.m.begin < group.m.begin || unit.m.end > group.m.end || unit.n.begin < group.n.begin ||
      unit.n.end > group.n.end) {
    return absl::InternalError(
        absl::StrCat("unit ", index, " lies outside its reduction group ", unit.reduction));
  }
  const uint64_t k_align = ctx.path == QuantPath::kMx         ? kMxGroupSize
                           : ctx.path == QuantPath::kPerBlock ? l.group_k
                                                              : 1;
  if (unit.k.begin % k_align != 0) {
    return absl::InternalError(absl::StrCat("unit ", index, "'s K slice starts at ", unit.k.begin,
                                            ", inside a K group of ", k_align));
  }
  const uint64_t stride = group.workspace_row_stride;
  if (stride < group.n.size() ||
      (unit.m.end - group.m.begin - 1) * stride + (unit.n.end - group.n.begin) >
          tiling::kWorkspaceSlotElements) {
    return absl::InternalError(
        absl::StrCat("unit ", index, "'s partial overflows its workspace slot"));
  }
  const QuantPath raw_path = RawSlicePath(l, ctx.path);
  const bool int_acc = IntAccumulator(l);
  uint32_t* slot =
      ctx.workspace.data() + uint64_t{unit.workspace_slot} * tiling::kWorkspaceSlotElements;
  return ForEachBatchSegment(l, unit.m, [&](uint64_t batch, Range rows, uint64_t first) {
    const QuantOperands op = RawSliceOperands(
        BuildOperands(l, ctx.operands, batch, rows, unit.n, unit.k), ctx.path, unit.k_slice == 0);
    RETURN_IF_ERROR(ExpectPath(op, raw_path, absl::StrCat("unit ", index, "'s K slice")));
    ASSIGN_OR_RETURN(const std::vector<double> values, QuantMatmulDevice(op));
    for (uint64_t i = 0; i < rows.size(); ++i) {
      for (uint64_t j = 0; j < unit.n.size(); ++j) {
        const double value = values[i * op.n + j];
        slot[(first + i - group.m.begin) * stride + (unit.n.begin + j - group.n.begin)] =
            int_acc ? static_cast<uint32_t>(static_cast<int32_t>(value))
                    : absl::bit_cast<uint32_t>(static_cast<float>(value));
      }
    }
    return absl::OkStatus();
  });
}

// An AIV reduction: the group's slots summed in slot order (int32 modulo
// 2^32 or fp32), then the path's dequantisation and cast.
absl::Status RunReduceUnit(RunContext& ctx, const WorkUnit& unit, size_t index) {
  const QuantLayout& l = ctx.layout;
  if (unit.m.empty() || unit.n.empty()) return absl::OkStatus();
  const tiling::ReductionGroup& group = ctx.schedule.reductions[unit.reduction];
  if (unit.m.begin < group.m.begin || unit.m.end > group.m.end || unit.n.begin < group.n.begin ||
      unit.n.end > group.n.end) {
    return absl::InternalError(
        absl::StrCat("reduce unit ", index, " lies outside its group ", unit.reduction));
  }
  const bool int_acc = IntAccumulator(l);
  const uint64_t stride = group.workspace_row_stride;
  return ForEachBatchSegment(l, unit.m, [&](uint64_t batch, Range rows, uint64_t first) {
    // The block's scales and bias (one K element is enough to carry them).
    const QuantOperands op = BuildOperands(l, ctx.operands, batch, rows, unit.n, Range{0, 1});
    RETURN_IF_ERROR(ExpectPath(op, ctx.path, absl::StrCat("reduce unit ", index, "'s block")));
    for (uint64_t i = 0; i < rows.size(); ++i) {
      for (uint64_t j = 0; j < unit.n.size(); ++j) {
        const uint64_t offset =
            (first + i - group.m.begin) * stride + (unit.n.begin + j - group.n.begin);
        const auto at = [&](uint32_t slot) {
          return ctx.workspace[uint64_t{slot} * tiling::kWorkspaceSlotElements + offset];
        };
        uint32_t acc = at(group.slots[0]);
        for (size_t s = 1; s < group.slots.size(); ++s) {
          if (int_acc) {
            acc += at(group.slots[s]);  // int32 adds wrap like the hardware's
          } else {
            const float sum =
                absl::bit_cast<float>(acc) + absl::bit_cast<float>(at(group.slots[s]));
            acc = absl::bit_cast<uint32_t>(sum);
          }
        }
        ctx.Write(first + i, unit.n.begin + j,
                  DequantizeAccumulator(op, ctx.path, int_acc, i, j, acc));
      }
    }
    return absl::OkStatus();
  });
}

// Runs fn(task) for every task on `pool`, stopping between tasks when
// `cancelled` turns true or a task fails; returns the first failure by task
// index (so the status does not depend on the thread count), or kCancelled.
absl::Status RunTasks(ThreadPool& pool, size_t count, const std::atomic<bool>* cancelled,
                      absl::string_view phase,
                      const std::function<absl::Status(size_t, const std::function<bool()>&)>& fn) {
  std::vector<absl::Status> statuses(count);
  std::atomic<bool> stop{false}, was_cancelled{false};
  const std::function<bool()> stopped = [&] {
    if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) {
      was_cancelled = true;
      stop = true;
    }
    return stop.load(std::memory_order_relaxed);
  };
  pool.ParallelFor(count, [&](size_t task) {
    if (stopped()) return;
    statuses[task] = fn(task, stopped);
    if (!statuses[task].ok()) stop = true;
  });
  for (const absl::Status& status : statuses) {
    if (!status.ok()) return status;
  }
  if (was_cancelled) {
    return absl::CancelledError(absl::StrCat("RunQuantNumerics cancelled during the ", phase));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Deterministic draws.

// splitmix64 (Steele, Lea, Flood 2014): the same sequence on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), a multiple of 2^-53.
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1p-53; }
  // Uniform in [1/2, 1).
  double Factor() { return 0.5 + 0.5 * Unit(); }

 private:
  uint64_t state_;
};

// A seed per tensor, so that adding one tensor does not shift the others.
uint64_t SubSeed(uint64_t seed, uint64_t tensor) {
  return SplitMix64(seed ^ (tensor * 0xD1B54A32D192ED03ull)).Next();
}

// The largest magnitude `dtype` represents (1 without a codec).
double MaxMagnitude(DataType dtype) {
  absl::StatusOr<std::vector<double>> values = RepresentableValues(dtype);
  if (!values.ok() || values->empty()) return 1;
  return std::max(std::fabs(values->front()), std::fabs(values->back()));
}

HostTensor DrawCodes(DataType dtype, const std::vector<int64_t>& shape, uint64_t seed) {
  HostTensor tensor;
  tensor.dtype = dtype;
  tensor.shape = shape;
  absl::StatusOr<std::vector<uint8_t>> bytes = DrawQuantValues(dtype, tensor.elements(), seed);
  tensor.bytes = bytes.ok()
                     ? *std::move(bytes)
                     : std::vector<uint8_t>(tiling::DataTypeBytesOf(dtype, tensor.elements()));
  return tensor;
}

// A scale tensor of `spec`: every value f * magnitude (f in [1/2, 1)),
// stored as the spec's dtype (see RandomQuantInputs()); `offsets` (may be
// empty) go into uint64 / int64 words, by column.
HostTensor DrawScale(const tiling::QuantTensorSpec& spec, double magnitude,
                     const std::vector<float>& offsets, uint64_t seed) {
  HostTensor tensor;
  tensor.dtype = spec.dtype;
  tensor.shape = spec.shape;
  const uint64_t count = tensor.elements();
  tensor.bytes.assign(tiling::DataTypeBytesOf(spec.dtype, count), 0);
  SplitMix64 rng(seed);
  // e8m0: the 8 exponents at and below floor(log2(magnitude)).
  const int top = std::clamp(127 + std::ilogb(magnitude), 7, 254);
  for (uint64_t i = 0; i < count; ++i) {
    const float value = static_cast<float>(rng.Factor() * magnitude);
    switch (spec.dtype) {
      case DataType::kUint64:
      case DataType::kInt64: {
        const float offset =
            offsets.empty() ? 0.0f : offsets[std::min<size_t>(i, offsets.size() - 1)];
        const uint64_t word = PackFixpipeScale(value, offset);
        std::memcpy(tensor.bytes.data() + 8 * i, &word, 8);
        break;
      }
      case DataType::kFloat8E8M0:
        tensor.bytes[i] = static_cast<uint8_t>(top - static_cast<int>(rng.Next() % 8));
        break;
      default:  // float32, bfloat16 (rounded to nearest even), float16
        tensor.Set(i, value);
        break;
    }
  }
  return tensor;
}

std::string BoundRule(QuantPath path) {
  switch (path) {
    case QuantPath::kFixpipe:
      return "L0C sum exact (int32) or within gamma_k (|bias| + sum |x1 x2|) (fp32); then "
             "fp32(acc) times the fixpipe's fp19 scale: the truncation |c~ - c| < 2^-10 |c| plus "
             "u = 2^-24 per fp32 step; then the output cast (float16 2^-11, bfloat16 2^-8 "
             "relative, int8 +1/2 after the exact clamps and offset)";
    case QuantPath::kVectorEpilogue:
      return "L0C sum exact (int32) or within gamma_k (|bias| + sum |x1 x2|) (fp32); then u = "
             "2^-24 per fp32 step of * scale, * pertoken, + bias; then the output cast (float16 "
             "2^-11, bfloat16 2^-8 relative)";
    case QuantPath::kPerBlock:
      return "per K group: fp32 sum within gamma_group, times fp32(x1_scale * x2_scale) with u; "
             "the groups' fp32 sum within gamma_(groups - 1); then the output cast";
    case QuantPath::kMx:
      return "gamma_(32 + blocks) (|bias| + sum_j 2^e_j sum_block |x1 x2|) plus 2 * 2^-150 per "
             "block; then the output cast (float16 2^-11, bfloat16 2^-8 relative)";
    case QuantPath::kInt32Output:
      return "exact: the int32 sum plus the int32 bias (no wrap-around assumed)";
  }
  return "";
}

}  // namespace

std::string QuantPathName(QuantPath path) {
  switch (path) {
    case QuantPath::kFixpipe:
      return "fixpipe";
    case QuantPath::kVectorEpilogue:
      return "vector_epilogue";
    case QuantPath::kPerBlock:
      return "per_block";
    case QuantPath::kMx:
      return "mx";
    case QuantPath::kInt32Output:
      return "int32_output";
  }
  return "";
}

absl::Status CheckQuantInputs(const MatmulProblem& problem, const Tensors& operands) {
  return CheckAndLayout(problem, operands).status();
}

Tensors RandomQuantInputs(const MatmulProblem& problem, uint64_t seed) {
  const OperandShapes shapes = ShapesOf(problem);
  Tensors operands;
  operands.a = DrawCodes(problem.dtype_a, shapes.a, SubSeed(seed, 1));
  operands.b = DrawCodes(problem.dtype_b, shapes.b, SubSeed(seed, 2));
  if (problem.has_bias) {
    HostTensor bias = HostTensor::Zeros(problem.dtype_bias, BiasShapeOf(problem));
    SplitMix64 rng(SubSeed(seed, 3));
    for (uint64_t i = 0; i < bias.elements(); ++i) {
      if (problem.dtype_bias == DataType::kInt32) {
        const auto value = static_cast<int32_t>(rng.Next() % 2001) - 1000;
        std::memcpy(bias.bytes.data() + 4 * i, &value, 4);
      } else {
        bias.Set(i, static_cast<float>(static_cast<double>(rng.Next() >> 40) * 0x1p-23 - 1.0));
      }
    }
    operands.bias = std::move(bias);
  }

  // The scales' magnitudes (RandomQuantInputs() in the header).
  const uint64_t k = static_cast<uint64_t>(std::max<int64_t>(problem.k, 1));
  const bool int8_out = problem.dtype_c == DataType::kInt8;
  const double target = int8_out ? 0x1p7 : 0x1p14;
  const double spread = int8_out ? std::sqrt(static_cast<double>(k)) : static_cast<double>(k);
  const double max1 = MaxMagnitude(problem.dtype_a), max2 = MaxMagnitude(problem.dtype_b);
  const bool x1_scaled = problem.quant.pertoken.present;
  const double x2_magnitude =
      x1_scaled ? target / (spread * max2) : target / (spread * max1 * max2);

  std::vector<float> offsets;
  if (problem.quant.offset.present) {
    HostTensor offset = HostTensor::Zeros(problem.quant.offset.dtype, problem.quant.offset.shape);
    SplitMix64 rng(SubSeed(seed, 6));
    // One word carries one offset: a per-tensor scale gets one value.
    const bool one_word = tiling::BatchProduct(problem.quant.scale.shape) == 1;
    const float first = static_cast<float>(static_cast<int>(rng.Next() % 17) - 8);
    for (uint64_t i = 0; i < offset.elements(); ++i) {
      const float value =
          one_word || i == 0 ? first : static_cast<float>(static_cast<int>(rng.Next() % 17) - 8);
      offset.Set(i, value);
      offsets.push_back(value);
    }
    operands.offset = std::move(offset);
  }
  if (problem.quant.scale.present) {
    operands.scale = DrawScale(problem.quant.scale, x2_magnitude, offsets, SubSeed(seed, 4));
  }
  if (x1_scaled) {
    operands.pertoken_scale = DrawScale(problem.quant.pertoken, 1.0 / max1, {}, SubSeed(seed, 5));
  }
  return operands;
}

absl::StatusOr<HostTensor> RunQuantNumerics(const tiling::Schedule& schedule,
                                            const MatmulProblem& problem, const Tensors& operands,
                                            ThreadPool& pool, const std::atomic<bool>* cancelled) {
  ASSIGN_OR_RETURN(const QuantLayout layout, CheckAndLayout(problem, operands));
  if (schedule.split_k_chunk != 0) {
    return absl::UnimplementedError(
        absl::StrCat("schedule.split_k_chunk: ", schedule.split_k_chunk,
                     "; the quant kernels accumulate a unit's K in L0C (no split-K chunks in GM)"));
  }
  const absl::Status coverage = tiling::CheckScheduleCoverage(schedule, problem);
  if (!coverage.ok()) {
    return absl::InternalError(
        absl::StrCat("the schedule does not cover C exactly once: ", coverage.message()));
  }
  const uint64_t stacked_rows = layout.batches * layout.m;
  if (schedule.batch_rows != 0 && schedule.batch * schedule.batch_rows != stacked_rows) {
    return absl::InternalError(absl::StrCat("the schedule walks ", schedule.batch, " x ",
                                            schedule.batch_rows, " rows, C has ", stacked_rows));
  }

  // The path of the whole product (of C batch 0; the batches differ only in
  // their values).
  const QuantOperands whole = BuildOperands(layout, operands, 0, Range{0, layout.m},
                                            Range{0, layout.n}, Range{0, layout.k});
  ASSIGN_OR_RETURN(const QuantPath path, ClassifyQuantPath(whole));

  HostTensor c = HostTensor::Zeros(problem.dtype_c, ShapesOf(problem).c);
  const uint64_t elements = stacked_rows * layout.n;
  RunContext ctx{layout, operands, schedule, path, c, {}, {}};
  ctx.writes.reset(new std::atomic<uint16_t>[elements]());
  bool any_partial = false;
  std::map<uint32_t, std::vector<std::pair<const WorkUnit*, size_t>>> cube_cores;
  std::vector<std::pair<const WorkUnit*, size_t>> reduce_units;
  for (size_t i = 0; i < schedule.units.size(); ++i) {
    const WorkUnit& unit = schedule.units[i];
    if (unit.core_kind == tiling::CoreKind::kAic && unit.op == tiling::UnitOp::kMmad) {
      cube_cores[unit.core].emplace_back(&unit, i);
      any_partial = any_partial || unit.writes_partial;
    } else if (unit.core_kind == tiling::CoreKind::kAiv && unit.op == tiling::UnitOp::kReduce) {
      reduce_units.emplace_back(&unit, i);
    } else {
      return absl::InternalError(absl::StrCat(
          "unit ", i, ": ", tiling::CoreKindName(unit.core_kind), " ", tiling::UnitOpName(unit.op),
          "; the quant kernels run cube units and reductions only"));
    }
  }
  if (any_partial) {
    ctx.workspace.assign(uint64_t{schedule.workspace_slots} * tiling::kWorkspaceSlotElements, 0);
  }

  // Cube units: one task per AIC core, its units in round order; each writes
  // its own elements of C or its own workspace slot.
  std::vector<const std::vector<std::pair<const WorkUnit*, size_t>>*> cores;
  for (const auto& [core, units] : cube_cores) cores.push_back(&units);
  RETURN_IF_ERROR(RunTasks(pool, cores.size(), cancelled, "cube units",
                           [&](size_t task, const std::function<bool()>& stopped) {
                             for (const auto& [unit, index] : *cores[task]) {
                               if (stopped()) return absl::OkStatus();
                               RETURN_IF_ERROR(RunMmadUnit(ctx, *unit, index));
                             }
                             return absl::OkStatus();
                           }));
  // Reductions: independent, each writes its own part of C.
  RETURN_IF_ERROR(RunTasks(pool, reduce_units.size(), cancelled, "reductions",
                           [&](size_t task, const std::function<bool()>&) {
                             return RunReduceUnit(ctx, *reduce_units[task].first,
                                                  reduce_units[task].second);
                           }));

  for (uint64_t i = 0; i < elements; ++i) {
    const uint16_t writes = ctx.writes[i].load(std::memory_order_relaxed);
    if (writes != 1) {
      const uint64_t row = i / layout.n;
      return absl::InternalError(absl::StrCat("C batch ", row / layout.m, " element (",
                                              row % layout.m, ", ", i % layout.n, ") written ",
                                              writes, " times"));
    }
  }
  return c;
}

absl::StatusOr<QuantAccuracy> CheckQuantAccuracy(const MatmulProblem& problem,
                                                 const Tensors& operands, const HostTensor& c) {
  ASSIGN_OR_RETURN(const QuantLayout l, CheckAndLayout(problem, operands));
  RETURN_IF_ERROR(CheckTensor("c", c, problem.dtype_c, "problem.dtype_c", ShapesOf(problem).c,
                              "ShapesOf(problem).c"));
  QuantAccuracy result;
  result.passed = true;
  bool have_worst = false;  // worst_index / worst_bound name a bounded element
  for (uint64_t batch = 0; batch < l.batches; ++batch) {
    const QuantOperands op =
        BuildOperands(l, operands, batch, Range{0, l.m}, Range{0, l.n}, Range{0, l.k});
    ASSIGN_OR_RETURN(const QuantPath path, ClassifyQuantPath(op));
    ASSIGN_OR_RETURN(const std::vector<double> reference, QuantMatmulReference(op));
    ASSIGN_OR_RETURN(const std::vector<double> bound, QuantMatmulErrorBound(op));
    result.path = path;
    for (uint64_t i = 0; i < l.m; ++i) {
      for (uint64_t j = 0; j < l.n; ++j) {
        const uint64_t local = i * l.n + j, index = batch * l.m * l.n + local;
        const double device = LoadY(c, index);
        const double expected = ToOutputRange(op, j, reference[local]);
        ++result.elements;
        if (bound[local] == kInf) {
          ++result.unbounded_elements;
          continue;
        }
        double error = std::fabs(device - expected);
        if (std::isnan(device) && std::isnan(expected)) error = 0;
        if (std::isnan(error)) error = kInf;
        const double ratio = error == 0 ? 0 : (bound[local] > 0 ? error / bound[local] : kInf);
        if (!(error <= bound[local])) {
          result.passed = false;
          ++result.elements_over_bound;
        }
        result.max_abs_error = std::max(result.max_abs_error, error);
        if (std::fabs(expected) >= 1) {
          result.max_rel_error = std::max(result.max_rel_error, error / std::fabs(expected));
        }
        if (ratio > result.max_error_over_bound || !have_worst) {
          have_worst = true;
          result.max_error_over_bound = ratio;
          result.worst_index = index;
          result.worst_bound = bound[local];
        }
      }
    }
  }
  result.path_name = QuantPathName(result.path);
  result.bound_rule = BoundRule(result.path);
  return result;
}

}  // namespace npu::emu
