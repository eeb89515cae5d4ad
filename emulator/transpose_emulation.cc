#include "emulator/transpose_emulation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "emulator/quant_emulation.h"
#include "emulator/quant_numerics.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/transpose/transpose_parse.h"

namespace npu::emu {
namespace {

using tiling::DataType;
using tiling::MatmulProblem;
using tiling::transpose::PrecisionMode;
using tiling::transpose::TransposeLayout;

// An int8 y's random scales: |y| of about 64 for the typical sqrt(k)-sized
// dot product of operands in [-1, 1).
constexpr double kInt8ScaleTarget = 64.0;

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

uint64_t ElementBytes(DataType dtype) { return tiling::DataTypeBytes(dtype); }

bool IsTbmm(const MatmulProblem& p) { return p.op == tiling::MatmulOp::kTransposeBatchMatMul; }

// The int8 y of TransposeBatchMatMul: the fixpipe quantizes it with the
// scale words.
bool HasInt8Output(const MatmulProblem& p) { return IsTbmm(p) && p.dtype_c == DataType::kInt8; }

absl::Status CheckStored(absl::string_view name, const HostTensor& tensor, DataType dtype,
                         const std::vector<int64_t>& shape, absl::string_view layout) {
  if (tensor.dtype != dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": dtype ", std::string(tiling::DataTypeName(tensor.dtype)),
                     ", expected ", std::string(tiling::DataTypeName(dtype))));
  }
  if (tensor.shape != shape) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": shape ", ShapeText(tensor.shape),
                                                   ", expected ", ShapeText(shape), " (", layout,
                                                   ")"));
  }
  if (tensor.bytes.size() != tiling::DataTypeBytesOf(dtype, tensor.elements())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", tensor.bytes.size(), " bytes, expected ",
                     tiling::DataTypeBytesOf(dtype, tensor.elements())));
  }
  return absl::OkStatus();
}

absl::Status CheckPresence(absl::string_view name, const std::optional<HostTensor>& tensor,
                           const tiling::QuantTensorSpec& spec, absl::string_view field) {
  if (tensor.has_value() != spec.present) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", tensor.has_value() ? "given, but " : "required: ", field,
                     tensor.has_value() ? " is absent" : " is present"));
  }
  if (!spec.present) return absl::OkStatus();
  return CheckStored(name, *tensor, spec.dtype, spec.shape, absl::StrCat(field, ".shape"));
}

// Swaps the two outer dims of `tensor` ([d0, d1, rest...] -> [d1, d0,
// rest...]), moving runs of the inner dims' bytes.
HostTensor SwapOuterDims(const HostTensor& tensor) {
  const int64_t d0 = tensor.shape[0], d1 = tensor.shape[1];
  std::vector<int64_t> shape = tensor.shape;
  std::swap(shape[0], shape[1]);
  HostTensor out = HostTensor::Zeros(tensor.dtype, shape);
  const uint64_t run = tensor.bytes.size() / static_cast<uint64_t>(d0 * d1);
  for (int64_t i = 0; i < d0; ++i) {
    for (int64_t j = 0; j < d1; ++j) {
      std::memcpy(out.bytes.data() + (j * d0 + i) * run, tensor.bytes.data() + (i * d1 + j) * run,
                  run);
    }
  }
  return out;
}

// The 64-bit words of an int64 / uint64 tensor, little-endian.
std::vector<uint64_t> Words(const HostTensor& tensor) {
  std::vector<uint64_t> words(tensor.elements());
  std::memcpy(words.data(), tensor.bytes.data(), 8 * words.size());
  return words;
}

}  // namespace

bool IsTransposed(const MatmulProblem& problem) {
  return tiling::transpose::IsTransposeOp(problem.op);
}

MatmulProblem LogicalProblem(const MatmulProblem& p, bool for_numerics) {
  const tiling::transpose::TransposeFacts facts = tiling::transpose::TransposeFactsOf(p);
  MatmulProblem l;
  l.m = p.m;
  l.n = p.n;
  l.k = p.k;
  l.dtype_a = p.dtype_a;
  l.dtype_b = p.dtype_b;
  l.dtype_c = p.dtype_c;
  l.trans_b = facts.trans_b;
  l.format_b = for_numerics ? tiling::Format::kNd : p.format_b;
  l.batch.a = {p.transpose.batch};
  l.batch.b = {p.transpose.batch};
  if (IsTbmm(p)) {
    l.op = tiling::MatmulOp::kBatchMatMulV3;
    l.hf32 = p.hf32;
    if (for_numerics && p.dtype_c == DataType::kInt8) l.dtype_c = DataType::kFloat32;
    return l;
  }
  l.op = tiling::MatmulOp::kQuantBatchMatmulV3;
  l.quant.scale = p.quant.scale;
  l.quant.group_size_m = p.quant.group_size_m;
  l.quant.group_size_n = p.quant.group_size_n;
  l.quant.group_size_k = p.quant.group_size_k;
  switch (facts.mode) {
    case PrecisionMode::kFp8:
      l.quant.pertoken = p.quant.pertoken;  // [m], one per token of every batch
      break;
    case PrecisionMode::kMxFp8: {
      // [m, batch, g, 2] read as QuantBatchMatmulV3's batch_a + [m, g, 2].
      const std::vector<int64_t>& s = p.quant.pertoken.shape;
      l.quant.pertoken = {true, p.quant.pertoken.dtype, {s[1], s[0], s[2], s[3]}};
      break;
    }
    case PrecisionMode::kHiFp8:
      // The kernel dequantizes with x2's scale alone (its fixpipe vector);
      // x1's scale is not read.
      break;
  }
  return l;
}

OperandShapes TransposedShapes(const MatmulProblem& problem) {
  const TransposeLayout layout = tiling::transpose::TransposeLayoutOf(problem);
  OperandShapes shapes;
  shapes.a = layout.X1Shape();
  shapes.b = layout.X2Shape();
  shapes.c = layout.YShape();
  return shapes;
}

absl::Status CheckTransposedInputs(const MatmulProblem& p, const Tensors& inputs) {
  const OperandShapes shapes = TransposedShapes(p);
  RETURN_IF_ERROR(
      CheckStored("x1", inputs.a, p.dtype_a, shapes.a,
                  "as stored: [m, batch, k] for perm_x1 [1, 0, 2], else [batch, m, k]"));
  RETURN_IF_ERROR(
      CheckStored("x2", inputs.b, p.dtype_b, shapes.b,
                  "as stored: [batch, n, k] for perm_x2 [0, 2, 1], else [batch, k, n]"));
  if (inputs.bias.has_value()) return absl::InvalidArgumentError("bias: the problem has none");
  if (inputs.x3.has_value()) return absl::InvalidArgumentError("x3: the problem has none");
  if (inputs.offset.has_value()) return absl::InvalidArgumentError("offset: the problem has none");
  if (IsTbmm(p)) {
    if (inputs.pertoken_scale.has_value()) {
      return absl::InvalidArgumentError("pertoken_scale: TransposeBatchMatMul takes none");
    }
    return CheckPresence("scale", inputs.scale, p.transpose.scale, "problem.transpose.scale");
  }
  RETURN_IF_ERROR(CheckPresence("scale", inputs.scale, p.quant.scale, "problem.quant.scale"));
  return CheckPresence("pertoken_scale", inputs.pertoken_scale, p.quant.pertoken,
                       "problem.quant.pertoken_scale");
}

Tensors LogicalInputs(const MatmulProblem& p, const Tensors& stored) {
  const TransposeLayout layout = tiling::transpose::TransposeLayoutOf(p);
  Tensors logical;
  // x1, row by row through the kernel's offsets (a [1, 0, 2] x1's rows sit
  // batch * k apart).
  const uint64_t es = ElementBytes(p.dtype_a);
  logical.a = HostTensor::Zeros(p.dtype_a, {p.transpose.batch, p.m, p.k});
  for (uint64_t b = 0; b < layout.batch; ++b) {
    for (uint64_t i = 0; i < layout.m; ++i) {
      std::memcpy(logical.a.bytes.data() + (b * layout.m + i) * layout.k * es,
                  stored.a.bytes.data() + layout.X1Offset(b, i, 0) * es, layout.k * es);
    }
  }
  // x2 is stored as the logical problem reads it.
  logical.b = stored.b;
  if (IsTbmm(p)) return logical;
  logical.scale = stored.scale;
  const tiling::transpose::TransposeFacts facts = tiling::transpose::TransposeFactsOf(p);
  if (facts.mode == PrecisionMode::kFp8) logical.pertoken_scale = stored.pertoken_scale;
  if (facts.mode == PrecisionMode::kMxFp8 && stored.pertoken_scale.has_value()) {
    logical.pertoken_scale = SwapOuterDims(*stored.pertoken_scale);
  }
  return logical;
}

HostTensor StoredOutput(const MatmulProblem& p, const HostTensor& logical) {
  const TransposeLayout layout = tiling::transpose::TransposeLayoutOf(p);
  HostTensor out = HostTensor::Zeros(logical.dtype, layout.YShape());
  const uint64_t es = ElementBytes(logical.dtype);
  // Each row of a batch's C through the kernel's output offset (rows batch
  // * n apart, or the part's inner batch * n when the batch is split).
  for (uint64_t b = 0; b < layout.batch; ++b) {
    for (uint64_t i = 0; i < layout.m; ++i) {
      std::memcpy(out.bytes.data() + layout.YOffset(b, i, 0) * es,
                  logical.bytes.data() + (b * layout.m + i) * layout.n * es, layout.n * es);
    }
  }
  return out;
}

HostTensor LogicalOutput(const MatmulProblem& p, const HostTensor& stored) {
  const TransposeLayout layout = tiling::transpose::TransposeLayoutOf(p);
  HostTensor out = HostTensor::Zeros(stored.dtype, {static_cast<int64_t>(layout.batch), p.m, p.n});
  const uint64_t es = ElementBytes(stored.dtype);
  for (uint64_t b = 0; b < layout.batch; ++b) {
    for (uint64_t i = 0; i < layout.m; ++i) {
      std::memcpy(out.bytes.data() + (b * layout.m + i) * layout.n * es,
                  stored.bytes.data() + layout.YOffset(b, i, 0) * es, layout.n * es);
    }
  }
  return out;
}

Tensors RandomTransposedInputs(const MatmulProblem& p, uint64_t seed) {
  const MatmulProblem l = LogicalProblem(p, /*for_numerics=*/true);
  const TransposeLayout layout = tiling::transpose::TransposeLayoutOf(p);
  Tensors logical = IsTbmm(p) ? RandomInputs(l, seed) : RandomQuantInputs(l, seed);
  Tensors stored;
  // x1 into its stored layout, row by row.
  const uint64_t es = ElementBytes(p.dtype_a);
  stored.a = HostTensor::Zeros(p.dtype_a, layout.X1Shape());
  for (uint64_t b = 0; b < layout.batch; ++b) {
    for (uint64_t i = 0; i < layout.m; ++i) {
      std::memcpy(stored.a.bytes.data() + layout.X1Offset(b, i, 0) * es,
                  logical.a.bytes.data() + (b * layout.m + i) * layout.k * es, layout.k * es);
    }
  }
  stored.b = std::move(logical.b);
  if (IsTbmm(p)) {
    if (p.transpose.scale.present) {
      const tiling::QuantTensorSpec& spec = p.transpose.scale;
      HostTensor words = HostTensor::Zeros(spec.dtype, spec.shape);
      std::mt19937_64 engine(seed ^ 0x5ca1e5ca1e5ca1e5ULL);
      const double base =
          kInt8ScaleTarget / std::sqrt(static_cast<double>(std::max<int64_t>(1, p.k)));
      for (uint64_t i = 0; i < words.elements(); ++i) {
        const double f = 0.5 + 0.5 * static_cast<double>(engine() >> 11) / 9007199254740992.0;
        const uint64_t word = PackFixpipeScale(static_cast<float>(base * f));
        std::memcpy(words.bytes.data() + 8 * i, &word, 8);
      }
      stored.scale = std::move(words);
    }
    return stored;
  }
  stored.scale = std::move(logical.scale);
  const tiling::transpose::TransposeFacts facts = tiling::transpose::TransposeFactsOf(p);
  if (facts.mode == PrecisionMode::kMxFp8 && logical.pertoken_scale.has_value()) {
    stored.pertoken_scale = SwapOuterDims(*logical.pertoken_scale);
  } else if (facts.mode == PrecisionMode::kFp8) {
    stored.pertoken_scale = std::move(logical.pertoken_scale);
  } else if (p.quant.pertoken.present) {
    // HIFP8's optional x1 scale, which the kernel does not read.
    stored.pertoken_scale = HostTensor::Zeros(p.quant.pertoken.dtype, p.quant.pertoken.shape);
  }
  return stored;
}

absl::StatusOr<HostTensor> RunTransposedNumerics(const tiling::Schedule& schedule,
                                                 const MatmulProblem& p, const Tensors& inputs,
                                                 ThreadPool& pool,
                                                 const std::atomic<bool>* cancelled) {
  const MatmulProblem l = LogicalProblem(p, /*for_numerics=*/true);
  const Tensors logical = LogicalInputs(p, inputs);
  if (!IsTbmm(p)) {
    absl::StatusOr<HostTensor> c = RunQuantNumerics(schedule, l, logical, pool, cancelled);
    if (!c.ok()) {
      if (c.status().code() != absl::StatusCode::kInvalidArgument) return c.status();
      return absl::UnimplementedError(absl::StrCat(
          "the emulator computes TransposeQuantBatchMatMul through QuantBatchMatmulV3's paths, "
          "which do not take this problem: ",
          c.status().message()));
    }
    return StoredOutput(p, *c);
  }
  HostTensor c = HostTensor::Zeros(l.dtype_c, ShapesOf(l).c);
  RETURN_IF_ERROR(RunNumerics(schedule, l, logical.a, logical.b, nullptr, pool, cancelled, c));
  if (!HasInt8Output(p)) return StoredOutput(p, c);
  // The fixpipe's int8 output: the fp32 accumulator times the column's
  // dequantization word, rounded and saturated.
  const std::vector<uint64_t> words = Words(*inputs.scale);
  HostTensor y = HostTensor::Zeros(DataType::kInt8, c.shape);
  const uint64_t n = static_cast<uint64_t>(p.n), m = static_cast<uint64_t>(p.m);
  for (uint64_t index = 0; index < c.elements(); ++index) {
    const uint64_t word = words[(index / (m * n)) * n + index % n];
    const float value = c.Get(index) * FixpipeScaleValue(word);
    y.bytes[index] =
        static_cast<uint8_t>(static_cast<int8_t>(FixpipeToInt8(value, FixpipeOffset(word))));
  }
  return StoredOutput(p, y);
}

absl::StatusOr<AccuracyReport> CheckTransposedAccuracy(const MatmulProblem& p,
                                                       const Tensors& inputs, const HostTensor& c,
                                                       int threads,
                                                       const std::atomic<bool>* cancelled) {
  RETURN_IF_ERROR(CheckTransposedInputs(p, inputs));
  const OperandShapes shapes = TransposedShapes(p);
  if (c.dtype != p.dtype_c || c.shape != shapes.c) {
    return absl::InvalidArgumentError(absl::StrCat(
        "y: ", std::string(tiling::DataTypeName(c.dtype)), " ", ShapeText(c.shape), ", expected ",
        std::string(tiling::DataTypeName(p.dtype_c)), " ", ShapeText(shapes.c)));
  }
  const MatmulProblem l = LogicalProblem(p, /*for_numerics=*/true);
  const Tensors logical = LogicalInputs(p, inputs);
  const HostTensor logical_c = LogicalOutput(p, c);
  if (!HasInt8Output(p)) {
    return CompareWithReference(l, logical, logical_c, threads, cancelled);
  }
  // int8 y: the reference's accumulator and its bound, through the output
  // stage at both ends of the bound.
  const std::vector<double> reference = ReferenceMatmul(l, logical);
  Tensors magnitudes = logical;
  for (HostTensor* t : {&magnitudes.a, &magnitudes.b}) {
    std::vector<float> values = t->ToFloats();
    for (float& v : values) v = std::fabs(v);
    *t = HostTensor::FromFloats(t->dtype, t->shape, values);
  }
  const std::vector<double> sums = ReferenceMatmul(l, magnitudes);
  const std::vector<uint64_t> words = Words(*inputs.scale);
  const uint64_t n = static_cast<uint64_t>(p.n), m = static_cast<uint64_t>(p.m);
  const double accumulation = 2.0 * static_cast<double>(p.k + 2) * kAccumulationUnitRoundoff;
  AccuracyReport report;
  report.output_unit_roundoff = 0.5;
  report.bound_rule =
      "int8 y: the fixpipe's output stage (round half to even, saturate) of the fp64 reference "
      "times the column's scale, +- the fp32 accumulation bound 2 (k + 2) 2^-24 sum|a b| times "
      "the scale (and its fp32 product's rounding)";
  for (uint64_t index = 0; index < reference.size(); ++index) {
    if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) {
      return absl::CancelledError("emulation cancelled during the reference check");
    }
    const uint64_t word = words[(index / (m * n)) * n + index % n];
    const double scale = FixpipeScaleValue(word);
    const int offset = FixpipeOffset(word);
    const double value = reference[index] * scale;
    const double bound =
        accumulation * sums[index] * std::fabs(scale) + std::fabs(value) * std::ldexp(1.0, -23);
    const double lo = FixpipeToInt8(static_cast<float>(value - bound), offset);
    const double hi = FixpipeToInt8(static_cast<float>(value + bound), offset);
    const double exact = FixpipeToInt8(static_cast<float>(value), offset);
    const double got = static_cast<int8_t>(logical_c.bytes[index]);
    const double error = std::fabs(got - exact);
    const bool ok = got >= lo && got <= hi;
    const double ratio =
        ok ? (hi > lo ? error / (hi - lo) : 0.0) : std::numeric_limits<double>::infinity();
    if (!ok) ++report.elements_over_bound;
    if (error > report.max_abs_error) report.max_abs_error = error;
    if (std::fabs(exact) >= 1 && error / std::fabs(exact) > report.max_rel_error) {
      report.max_rel_error = error / std::fabs(exact);
    }
    if (index == 0 || ratio > report.worst_bound_ratio) {
      report.worst_bound_ratio = ratio;
      report.worst_index = index;
      report.error_bound = bound;
    }
  }
  report.passed = report.elements_over_bound == 0;
  return report;
}

}  // namespace npu::emu
