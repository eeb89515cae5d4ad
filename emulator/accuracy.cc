#include "emulator/accuracy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "emulator/grouped_emulation.h"
#include "emulator/numerics.h"
#include "emulator/quant_emulation.h"
#include "emulator/thread_pool.h"
#include "emulator/weight_quant_emulation.h"
#include "emulator/transpose_emulation.h"
#include "server/tiling/status_macros.h"

namespace npu::emu {
namespace {

using tiling::DataType;
using tiling::MatmulProblem;

struct DtypeLimits {
  double smallest_subnormal;
  double smallest_normal;
  double largest_finite;
};

DtypeLimits Limits(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return {std::ldexp(1.0, -24), std::ldexp(1.0, -14), 65504.0};
    case DataType::kBFloat16:
      // bfloat16 keeps binary32's exponent range with 7 mantissa bits.
      return {std::ldexp(1.0, -133), std::ldexp(1.0, -126),
              std::ldexp(1.0, 127) * (2.0 - std::ldexp(1.0, -7))};
    case DataType::kFloat32:
      return {std::ldexp(1.0, -149), std::ldexp(1.0, -126),
              static_cast<double>(std::numeric_limits<float>::max())};
    default:  // the quantized types: the float paths never see them
      break;
  }
  return {0, 0, 0};
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string out;
  for (int64_t dim : shape) absl::StrAppend(&out, out.empty() ? "" : ",", dim);
  return absl::StrCat("[", out, "]");
}

absl::Status CheckShape(const char* name, const HostTensor& tensor, DataType dtype,
                        const std::vector<int64_t>& shape) {
  if (tensor.dtype != dtype || tensor.shape != shape ||
      tensor.bytes.size() != tiling::DataTypeBytesOf(dtype, tensor.elements())) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " is ", std::string(tiling::DataTypeName(tensor.dtype)), " ",
        ShapeString(tensor.shape), " with ", tensor.bytes.size(), " bytes; the problem needs ",
        std::string(tiling::DataTypeName(dtype)), " ", ShapeString(shape)));
  }
  return absl::OkStatus();
}

// What one row of C contributes to the report; rows are merged in order so
// that the report does not depend on which thread ran which row.
struct RowSummary {
  double max_abs_error = 0;
  double max_rel_error = 0;
  double worst_ratio = -1;
  double bound_at_worst = 0;
  uint64_t worst_col = 0;
  uint64_t over_bound = 0;
};

// The operands and C have the problem's dtypes and shapes.
absl::Status CheckOperands(const MatmulProblem& problem, const Tensors& inputs,
                           const HostTensor& c) {
  const OperandShapes shapes = ShapesOf(problem);
  RETURN_IF_ERROR(CheckShape("C", c, problem.dtype_c, shapes.c));
  RETURN_IF_ERROR(CheckShape("A", inputs.a, problem.dtype_a, shapes.a));
  RETURN_IF_ERROR(CheckShape("B", inputs.b, problem.dtype_b, shapes.b));
  if (problem.has_bias) {
    if (!inputs.bias.has_value()) return absl::InvalidArgumentError("the problem has a bias");
    RETURN_IF_ERROR(CheckShape("bias", *inputs.bias, problem.dtype_bias, shapes.bias));
  }
  if (!shapes.x3.empty()) {
    if (!inputs.x3.has_value()) return absl::InvalidArgumentError("the fused op reads x3");
    RETURN_IF_ERROR(CheckShape("x3", *inputs.x3, problem.dtype_a, shapes.x3));
  }
  return absl::OkStatus();
}

// The error of `got` against the reference `r`; NaN must match NaN, and an
// infinity is exact when round-to-nearest may overflow a same-sign `r` to it.
double ElementError(double got, double r, double bound, const DtypeLimits& limits) {
  if (std::isnan(got) || std::isnan(r)) {
    return std::isnan(got) && std::isnan(r) ? 0.0 : std::numeric_limits<double>::infinity();
  }
  if (std::isinf(got)) {
    // Round-to-nearest overflows to infinity: a same-sign reference that
    // reaches the largest finite value within its bound may give it.
    const bool same_sign = (got > 0) == (r > 0);
    return same_sign && std::fabs(r) + bound >= limits.largest_finite
               ? 0.0
               : std::numeric_limits<double>::infinity();
  }
  return std::fabs(got - r);
}

// The inputs of the per-row check, shared by every row.
struct RowCheck {
  absl::Span<const float> a;
  absl::Span<const float> b;
  const std::vector<float>& bias;
  const HostTensor& c;
  uint64_t n = 0, k = 0;
  double u_out = 0;
  double accumulation_term = 0;
  DtypeLimits limits;
  bool relu = false;  // the kernel's ReLU epilogue (1-Lipschitz: the bound holds)
  // Batched problems: rows of one C batch and, per C batch, the A, B, bias
  // and x3 batch it reads.
  uint64_t m = 0;
  std::vector<uint64_t> a_of{}, b_of{}, bias_of{}, x3_of{};
  // FusedMatMul's epilogue (kNone for the other ops) and x3.
  tiling::FusedOp fused_op = tiling::FusedOp::kNone;
  const std::vector<float>* x3 = nullptr;
  int inner_precise = 0;
  DataType dtype_c = DataType::kFloat16;
};

// The GELU's largest slope (about 1.13): an error of the matmul grows by at
// most this much through it.
constexpr double kGeluLipschitz = 1.13;

// `ref` through the fused op in fp64 and the bound on the result's error
// given `mm_bound` on the matmul's: the op's own fp32 rounding (2^-24
// relative) is added by the caller.
double FusedReference(const RowCheck& check, double ref, double x3, double& mm_bound) {
  switch (check.fused_op) {
    case tiling::FusedOp::kAdd:
    case tiling::FusedOp::kMul:
      // High performance (inner_precise 1) casts the matmul to C's type
      // first: one more rounding of it.
      if (check.inner_precise == 1) mm_bound += check.u_out * std::fabs(ref);
      if (check.fused_op == tiling::FusedOp::kMul) mm_bound *= std::fabs(x3);
      break;
    case tiling::FusedOp::kGeluErf:
    case tiling::FusedOp::kGeluTanh:
      mm_bound *= kGeluLipschitz;
      break;
    case tiling::FusedOp::kNone:
    case tiling::FusedOp::kCast16To32:
    case tiling::FusedOp::kRelu:
      break;
  }
  return EpilogueFp64(check.fused_op, ref, x3);
}

// Row i of C against the fp64 reference and its error bound.
RowSummary CheckRow(const RowCheck& check, uint64_t i) {
  const uint64_t n = check.n, k = check.k;
  // The reference and sum_p |a_p * b_p| in one sweep over B, summed in
  // increasing p like ReferenceMatmul().
  std::vector<double> ref(n, 0.0), mag(n, 0.0);
  const uint64_t batch = i / check.m, local = i % check.m;
  const float* a_row = check.a.data() + (check.a_of[batch] * check.m + local) * k;
  const float* b_rows = check.b.data() + check.b_of[batch] * k * n;
  for (uint64_t p = 0; p < k; ++p) {
    const double av = a_row[p];
    const double av_abs = std::fabs(av);
    const float* b_row = b_rows + p * n;
    for (uint64_t j = 0; j < n; ++j) {
      const double bv = b_row[j];
      ref[j] += av * bv;
      mag[j] += av_abs * std::fabs(bv);
    }
  }
  if (!check.bias.empty()) {
    const float* bias = check.bias.data() + check.bias_of[batch] * n;
    for (uint64_t j = 0; j < n; ++j) {
      ref[j] += bias[j];
      mag[j] += std::fabs(static_cast<double>(bias[j]));
    }
  }
  const float* x3_row = check.x3 == nullptr || check.x3->empty()
                            ? nullptr
                            : check.x3->data() + (check.x3_of[batch] * check.m + local) * n;
  RowSummary row;
  for (uint64_t j = 0; j < n; ++j) {
    double mm_bound = check.accumulation_term * mag[j];
    double r = check.relu && ref[j] < 0 ? 0.0 : ref[j];
    double op_rounding = 0;
    if (check.fused_op != tiling::FusedOp::kNone) {
      r = FusedReference(check, ref[j], x3_row ? x3_row[j] : 0.0, mm_bound);
      op_rounding = kAccumulationUnitRoundoff * std::fabs(r);
    }
    const double got = check.c.Get(i * n + j);
    const double bound =
        check.u_out * std::fabs(r) + mm_bound + op_rounding + check.limits.smallest_subnormal;
    const double err = ElementError(got, r, bound, check.limits);
    row.max_abs_error = std::max(row.max_abs_error, err);
    if (std::fabs(r) >= check.limits.smallest_normal && std::isfinite(r)) {
      row.max_rel_error = std::max(row.max_rel_error, err / std::fabs(r));
    }
    // With NaN or infinite operands the bound itself may be NaN or
    // infinite: only an exact match passes then.
    const bool within = err == 0.0 || (std::isfinite(err) && err <= bound);
    double ratio = err == 0.0 ? 0.0 : err / bound;
    if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
    if (!within) ++row.over_bound;
    if (ratio > row.worst_ratio) {
      row.worst_ratio = ratio;
      row.bound_at_worst = bound;
      row.worst_col = j;
    }
  }
  return row;
}

// The report over every row: the largest errors, the worst ratio to the
// bound and where it is, the elements over their bound.
AccuracyReport MergeRows(const std::vector<RowSummary>& rows, uint64_t n, double u_out) {
  AccuracyReport report;
  report.output_unit_roundoff = u_out;
  report.worst_bound_ratio = -1;
  for (uint64_t i = 0; i < rows.size(); ++i) {
    const RowSummary& row = rows[i];
    report.max_abs_error = std::max(report.max_abs_error, row.max_abs_error);
    report.max_rel_error = std::max(report.max_rel_error, row.max_rel_error);
    report.elements_over_bound += row.over_bound;
    if (row.worst_ratio > report.worst_bound_ratio) {
      report.worst_bound_ratio = row.worst_ratio;
      report.error_bound = row.bound_at_worst;
      report.worst_index = i * n + row.worst_col;
    }
  }
  report.worst_bound_ratio = std::max(0.0, report.worst_bound_ratio);
  report.passed = report.elements_over_bound == 0;
  return report;
}

}  // namespace

double EpilogueFp64(tiling::FusedOp op, double mm, double x3) {
  switch (op) {
    case tiling::FusedOp::kNone:
    case tiling::FusedOp::kCast16To32:
      return mm;
    case tiling::FusedOp::kRelu:
      return mm > 0 ? mm : (mm == mm ? 0.0 : mm);  // NaN stays NaN
    case tiling::FusedOp::kAdd:
      return mm + x3;
    case tiling::FusedOp::kMul:
      return mm * x3;
    case tiling::FusedOp::kGeluErf:
      return 0.5 * mm * (1.0 + std::erf(mm / std::sqrt(2.0)));
    case tiling::FusedOp::kGeluTanh:
      return 0.5 * mm * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (mm + 0.044715 * mm * mm * mm)));
  }
  return mm;
}

double UnitRoundoff(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return std::ldexp(1.0, -11);
    case DataType::kBFloat16:
      return std::ldexp(1.0, -8);
    case DataType::kFloat32:
      return std::ldexp(1.0, -24);
    default:  // the quantized types: the float paths never see them
      break;
  }
  return 1;
}

namespace {

// QuantBatchMatmulV3's C against its path's reference and bound. The
// accumulation roundoff is 0 where the cube sums integers exactly (int8 /
// int4 inputs, int32 accumulators) and fp32's otherwise; an int8 or int32 y
// rounds to integers (no relative unit roundoff: the rule says so).
absl::StatusOr<AccuracyReport> CompareQuant(const MatmulProblem& problem, const Tensors& inputs,
                                            const HostTensor& c) {
  ASSIGN_OR_RETURN(const QuantAccuracy quant, CheckQuantAccuracy(problem, inputs, c));
  AccuracyReport report;
  report.max_abs_error = quant.max_abs_error;
  report.max_rel_error = quant.max_rel_error;
  report.error_bound = quant.worst_bound;
  report.worst_bound_ratio = quant.max_error_over_bound;
  report.worst_index = quant.worst_index;
  report.elements_over_bound = quant.elements_over_bound;
  report.passed = quant.passed;
  const bool integer_sums =
      problem.dtype_a == DataType::kInt8 || problem.dtype_a == DataType::kInt4;
  report.accumulation_unit_roundoff = integer_sums ? 0.0 : kAccumulationUnitRoundoff;
  report.output_unit_roundoff =
      tiling::IsFloatMatmulType(problem.dtype_c) ? UnitRoundoff(problem.dtype_c) : 0.0;
  report.bound_rule = absl::StrCat(quant.path_name, ": ", quant.bound_rule);
  return report;
}

}  // namespace

absl::StatusOr<AccuracyReport> CompareWithReference(const MatmulProblem& problem,
                                                    const Tensors& inputs, const HostTensor& c,
                                                    int threads, const std::atomic<bool>* cancelled,
                                                    Epilogue epilogue) {
  // GroupedMatmul: every group against its path's reference.
  if (problem.op == tiling::MatmulOp::kGroupedMatmul) {
    return CheckGroupedAccuracy(problem, inputs, c, threads, cancelled);
  }
  if (problem.m <= 0 || problem.n <= 0 || problem.k < 0) {
    return absl::InvalidArgumentError("problem sizes must be m, n > 0 and k >= 0");
  }
  if (problem.op == tiling::MatmulOp::kQuantBatchMatmulV3) return CompareQuant(problem, inputs, c);
  if (problem.op == tiling::MatmulOp::kWeightQuantBatchMatmulV2) {
    return CheckWeightQuantAccuracy(problem, inputs, c);
  }
  if (IsTransposed(problem)) return CheckTransposedAccuracy(problem, inputs, c, threads, cancelled);
  RETURN_IF_ERROR(CheckOperands(problem, inputs, c));
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  ThreadPool pool(std::max(1, threads));
  const bool hf32 = problem.hf32;
  // The reference walks the problem's own batch dims (no merge into M).
  tiling::MatmulProblem unmerged = problem;
  unmerged.op = tiling::MatmulOp::kMatMulV3;
  ASSIGN_OR_RETURN(const tiling::BatchShape walk, tiling::BatchShapeOf(unmerged));
  const FloatBuffer a =
      BatchedOperandAsFloats(inputs.a, static_cast<uint64_t>(tiling::SlotProduct(walk.a)), m, k,
                             problem.trans_a, hf32 && inputs.a.dtype == DataType::kFloat32, pool);
  const FloatBuffer b =
      BatchedOperandAsFloats(inputs.b, static_cast<uint64_t>(tiling::SlotProduct(walk.b)), k, n,
                             problem.trans_b, hf32 && inputs.b.dtype == DataType::kFloat32, pool);
  std::vector<float> bias;
  if (problem.has_bias) bias = inputs.bias->ToFloats();
  std::vector<float> x3;
  if (inputs.x3.has_value()) x3 = inputs.x3->ToFloats();
  const double u_out = UnitRoundoff(problem.dtype_c);
  RowCheck check{a.span(), b.span(), bias, c, n, k, u_out, 0, Limits(problem.dtype_c)};
  check.accumulation_term = 2.0 * static_cast<double>(k + 2) * kAccumulationUnitRoundoff;
  check.relu = epilogue != Epilogue::kNone;
  RowCheck& batched = check;
  batched.m = m;
  const bool x3_batched = problem.fused.x3_shape.size() == 3 && problem.fused.x3_shape[0] > 1;
  for (uint64_t i = 0; i < walk.batch; ++i) {
    batched.a_of.push_back(walk.ABatch(i));
    batched.b_of.push_back(walk.BBatch(i));
    batched.bias_of.push_back(
        problem.batch.bias.empty() ? 0 : walk.OperandBatch(problem.batch.bias, i));
    batched.x3_of.push_back(x3_batched ? i : 0);
  }
  if (problem.op == tiling::MatmulOp::kFusedMatMul) batched.fused_op = problem.fused.op;
  batched.x3 = &x3;
  batched.inner_precise = problem.fused.inner_precise;
  batched.dtype_c = problem.dtype_c;

  std::vector<RowSummary> rows(m * walk.batch);
  std::atomic<bool> stopped{false};
  pool.ParallelFor(rows.size(), [&](size_t i) {
    if (stopped.load(std::memory_order_relaxed)) return;
    if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) {
      stopped.store(true, std::memory_order_relaxed);
      return;
    }
    rows[i] = CheckRow(check, i);
  });
  if (stopped.load()) return absl::CancelledError("reference check cancelled");
  return MergeRows(rows, n, u_out);
}

}  // namespace npu::emu
