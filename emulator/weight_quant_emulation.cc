#include "emulator/weight_quant_emulation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "emulator/quant_formats.h"
#include "server/tiling/schedule.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/weight_quant/wq_parse.h"

namespace npu::emu {
namespace {

using tiling::DataType;
using tiling::MatmulProblem;
using tiling::weight_quant::QuantType;
using tiling::weight_quant::WqFacts;

std::string DimsText(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// The element type the weight's codes are (a packed word holds 4-bit codes).
DataType CodeType(DataType weight) {
  if (weight == DataType::kInt32) return DataType::kInt4;
  if (weight == DataType::kFloat32) return DataType::kFloat4E2M1;
  return weight;
}

std::vector<int64_t> BiasShape(const MatmulProblem& p) {
  return p.quant.bias_shape.empty() ? std::vector<int64_t>{p.n} : p.quant.bias_shape;
}

absl::Status CheckOne(const char* name, const std::optional<HostTensor>& t, bool needed,
                      DataType dtype, const std::vector<int64_t>& shape) {
  if (t.has_value() != needed) {
    return absl::InvalidArgumentError(absl::StrCat(name, needed ? ": required" : ": not expected"));
  }
  if (!needed) return absl::OkStatus();
  if (t->dtype != dtype || t->shape != shape) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", std::string(DataTypeName(t->dtype)), " ", DimsText(t->shape),
                     ", expected ", std::string(DataTypeName(dtype)), " ", DimsText(shape)));
  }
  if (t->bytes.size() != tiling::DataTypeBytesOf(dtype, t->elements())) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", t->bytes.size(), " bytes"));
  }
  return absl::OkStatus();
}

// The dequantization of one problem: what the kernels read per element.
class Dequantizer {
 public:
  Dequantizer(const MatmulProblem& p, const Tensors& t)
      : f_(tiling::weight_quant::ParseWeightQuant(p)), t_(t) {
    code_type_ = CodeType(p.dtype_b);
    groups_ = f_.group_size > 0 ? (f_.k + f_.group_size - 1) / f_.group_size : 1;
  }

  // The scale's (and offset's) flat index for weight element (kk, j).
  uint64_t ParamIndex(uint64_t kk, uint64_t j) const {
    switch (f_.antiquant) {
      case QuantType::kPerTensor:
        return 0;
      case QuantType::kPerChannel:
        return t_.scale->elements() == 1 ? 0 : j;
      case QuantType::kPerGroup:
      case QuantType::kMx: {
        const uint64_t g = kk / f_.group_size;
        return f_.trans_b ? j * groups_ + g : g * f_.n + j;
      }
      case QuantType::kNone:
        break;
    }
    return 0;
  }

  double Code(uint64_t kk, uint64_t j) const {
    const uint64_t index = f_.trans_b ? j * f_.k + kk : kk * f_.n + j;
    return DecodeQuant(code_type_, GetQuantCode(code_type_, t_.b.bytes, index));
  }

  double ScaleValue(uint64_t index) const {
    if (f_.antiquant_scale == DataType::kFloat8E8M0) {
      return DecodeQuant(DataType::kFloat8E8M0,
                         GetQuantCode(DataType::kFloat8E8M0, t_.scale->bytes, index));
    }
    return t_.scale->Get(index);
  }
  double OffsetValue(uint64_t index) const {
    return t_.offset.has_value() && f_.has_antiquant_offset ? t_.offset->Get(index) : 0.0;
  }

  // The kernels' value in L1: cast, add, multiply, each rounded to x.
  float Device(uint64_t kk, uint64_t j) const {
    const uint64_t pi = ParamIndex(kk, j);
    float w = RoundTo(f_.x, static_cast<float>(Code(kk, j)));
    if (f_.has_antiquant_offset) w = RoundTo(f_.x, w + static_cast<float>(OffsetValue(pi)));
    return RoundTo(f_.x, w * static_cast<float>(ScaleValue(pi)));
  }
  // The real dequantized value.
  double Exact(uint64_t kk, uint64_t j) const {
    const uint64_t pi = ParamIndex(kk, j);
    return (Code(kk, j) + OffsetValue(pi)) * ScaleValue(pi);
  }

  const WqFacts& facts() const { return f_; }

 private:
  const WqFacts f_;
  const Tensors& t_;
  DataType code_type_;
  uint64_t groups_ = 1;
};

std::vector<float> BiasFloats(const MatmulProblem& p, const Tensors& t) {
  std::vector<float> bias(static_cast<size_t>(p.n), 0.0f);
  if (p.has_bias && t.bias.has_value() && t.bias->elements() == static_cast<uint64_t>(p.n)) {
    for (int64_t j = 0; j < p.n; ++j) bias[j] = t.bias->Get(static_cast<uint64_t>(j));
  }
  return bias;
}

double UnitRoundoffOf(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return std::ldexp(1.0, -11);
    case DataType::kBFloat16:
      return std::ldexp(1.0, -8);
    default:
      return std::ldexp(1.0, -24);
  }
}

double SmallestSubnormal(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return std::ldexp(1.0, -24);
    case DataType::kBFloat16:
      return std::ldexp(1.0, -133);
    default:
      return std::ldexp(1.0, -149);
  }
}

uint64_t Mix(uint64_t& state) {  // splitmix64
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double Uniform(uint64_t& state) {  // [0, 1), 53 bits
  return static_cast<double>(Mix(state) >> 11) * std::ldexp(1.0, -53);
}

}  // namespace

std::vector<int64_t> WeightShapeOf(const MatmulProblem& p) {
  std::vector<int64_t> shape =
      p.trans_b ? std::vector<int64_t>{p.n, p.k} : std::vector<int64_t>{p.k, p.n};
  if (tiling::weight_quant::IsPackedWeight(p.dtype_b)) shape[1] /= 8;
  return shape;
}

absl::Status CheckWeightQuantInputs(const MatmulProblem& p, const Tensors& t) {
  if (t.a.dtype != p.dtype_a || t.a.shape != std::vector<int64_t>{p.m, p.k}) {
    return absl::InvalidArgumentError(
        absl::StrCat("a (x): ", std::string(DataTypeName(t.a.dtype)), " ", DimsText(t.a.shape),
                     ", expected ", std::string(DataTypeName(p.dtype_a)), " [m, k]"));
  }
  if (t.a.bytes.size() != tiling::DataTypeBytesOf(p.dtype_a, t.a.elements())) {
    return absl::InvalidArgumentError("a (x): wrong byte count");
  }
  RETURN_IF_ERROR(
      CheckOne("b (weight)", std::optional<HostTensor>(t.b), true, p.dtype_b, WeightShapeOf(p)));
  RETURN_IF_ERROR(CheckOne("scale (antiquant_scale)", t.scale, true, p.quant.antiquant_scale.dtype,
                           p.quant.antiquant_scale.shape));
  RETURN_IF_ERROR(CheckOne("offset (antiquant_offset)", t.offset, p.quant.antiquant_offset.present,
                           p.quant.antiquant_offset.dtype, p.quant.antiquant_offset.shape));
  if (t.pertoken_scale.has_value()) {
    return absl::InvalidArgumentError("pertoken_scale: WeightQuantBatchMatmulV2 reads none");
  }
  if (t.x3.has_value())
    return absl::InvalidArgumentError("x3: WeightQuantBatchMatmulV2 reads none");
  std::optional<HostTensor> bias = t.bias;
  return CheckOne("bias", bias, p.has_bias, p.dtype_bias, BiasShape(p));
}

Tensors RandomWeightQuantInputs(const MatmulProblem& p, uint64_t seed) {
  uint64_t state = seed ^ 0x5157424D4D563200ull;  // "QWBMMV2"
  Tensors t;
  t.a = HostTensor::Zeros(p.dtype_a, {p.m, p.k});
  for (uint64_t i = 0; i < t.a.elements(); ++i) {
    t.a.Set(i, static_cast<float>(2 * Uniform(state) - 1));
  }
  const DataType code = CodeType(p.dtype_b);
  const std::vector<int64_t> shape = WeightShapeOf(p);
  t.b = HostTensor::Zeros(p.dtype_b, shape);
  absl::StatusOr<std::vector<uint8_t>> codes =
      DrawQuantValues(code, static_cast<uint64_t>(p.k) * static_cast<uint64_t>(p.n), Mix(state));
  if (codes.ok() && codes->size() == t.b.bytes.size()) t.b.bytes = *std::move(codes);
  absl::StatusOr<std::vector<double>> values = RepresentableValues(code);
  double max_w = 1;
  if (values.ok() && !values->empty()) {
    max_w = std::max(std::fabs(values->front()), std::fabs(values->back()));
  }
  const tiling::QuantTensorSpec& s = p.quant.antiquant_scale;
  t.scale = HostTensor::Zeros(s.dtype, s.shape);
  for (uint64_t i = 0; i < t.scale->elements(); ++i) {
    const double f = 0.5 + 0.5 * Uniform(state);
    if (s.dtype == DataType::kFloat8E8M0) {
      const int e = static_cast<int>(std::floor(std::log2(f / max_w)));
      SetQuantCode(DataType::kFloat8E8M0, absl::MakeSpan(t.scale->bytes), i,
                   static_cast<uint32_t>(std::clamp(e + 127, 0, 254)));
    } else {
      t.scale->Set(i, static_cast<float>(f / max_w));
    }
  }
  const tiling::QuantTensorSpec& o = p.quant.antiquant_offset;
  if (o.present) {
    t.offset = HostTensor::Zeros(o.dtype, o.shape);
    if (o.dtype == DataType::kFloat16 || o.dtype == DataType::kBFloat16 ||
        o.dtype == DataType::kFloat32) {
      for (uint64_t i = 0; i < t.offset->elements(); ++i) {
        t.offset->Set(i, static_cast<float>((2 * Uniform(state) - 1) * max_w / 8));
      }
    }
  }
  if (p.has_bias) {
    t.bias = HostTensor::Zeros(p.dtype_bias, BiasShape(p));
    for (uint64_t i = 0; i < t.bias->elements(); ++i) {
      t.bias->Set(i, static_cast<float>(2 * Uniform(state) - 1));
    }
  }
  return t;
}

absl::StatusOr<HostTensor> RunWeightQuantNumerics(const tiling::Schedule& schedule,
                                                  const MatmulProblem& p, const Tensors& t,
                                                  ThreadPool& pool,
                                                  const std::atomic<bool>* cancelled) {
  RETURN_IF_ERROR(CheckWeightQuantInputs(p, t));
  RETURN_IF_ERROR(tiling::CheckScheduleCoverage(schedule, p));
  const Dequantizer deq(p, t);
  const uint64_t m = p.m, n = p.n, k = p.k;
  // The weight as the cube reads it from L1: dequantized, [k, n], once.
  std::vector<float> w(k * n);
  for (uint64_t kk = 0; kk < k; ++kk) {
    for (uint64_t j = 0; j < n; ++j) w[kk * n + j] = deq.Device(kk, j);
  }
  std::vector<float> x(m * k);
  t.a.GetRun(0, m * k, x.data());
  const std::vector<float> bias = BiasFloats(p, t);
  HostTensor c = HostTensor::Zeros(p.dtype_c, {p.m, p.n});
  std::vector<uint32_t> writes(m * n, 0);
  std::vector<absl::Status> status(schedule.units.size());
  pool.ParallelFor(schedule.units.size(), [&](size_t u) {
    if (cancelled != nullptr && cancelled->load()) {
      status[u] = absl::CancelledError("cancelled");
      return;
    }
    const tiling::WorkUnit& unit = schedule.units[u];
    if (unit.op != tiling::UnitOp::kMmad || unit.writes_partial || unit.k.begin != 0 ||
        unit.k.end != k) {
      status[u] = absl::InternalError("a WeightQuantBatchMatmulV2 unit computes its whole K");
      return;
    }
    std::vector<float> row(unit.n.size());
    for (uint64_t i = unit.m.begin; i < unit.m.end; ++i) {
      for (uint64_t j = unit.n.begin; j < unit.n.end; ++j) {
        float acc = bias[j];
        for (uint64_t kk = 0; kk < k; ++kk) acc += x[i * k + kk] * w[kk * n + j];
        row[j - unit.n.begin] = acc;
      }
      c.SetRun(i * n + unit.n.begin, row.data(), row.size());
      for (uint64_t j = unit.n.begin; j < unit.n.end; ++j) ++writes[i * n + j];
    }
  });
  for (const absl::Status& s : status) RETURN_IF_ERROR(s);
  for (uint32_t count : writes) {
    if (count != 1) return absl::InternalError("the schedule writes an element of C twice");
  }
  return c;
}

absl::StatusOr<AccuracyReport> CheckWeightQuantAccuracy(const MatmulProblem& p, const Tensors& t,
                                                        const HostTensor& c) {
  RETURN_IF_ERROR(CheckWeightQuantInputs(p, t));
  if (c.dtype != p.dtype_c || c.shape != std::vector<int64_t>{p.m, p.n}) {
    return absl::InvalidArgumentError("c: not [m, n] of dtype_c");
  }
  const Dequantizer deq(p, t);
  const WqFacts& f = deq.facts();
  const uint64_t m = p.m, n = p.n, k = p.k;
  std::vector<double> w(k * n);
  for (uint64_t kk = 0; kk < k; ++kk) {
    for (uint64_t j = 0; j < n; ++j) w[kk * n + j] = deq.Exact(kk, j);
  }
  const std::vector<float> bias = BiasFloats(p, t);
  const double ux = UnitRoundoffOf(p.dtype_a), uy = UnitRoundoffOf(p.dtype_c);
  const double u32 = std::ldexp(1.0, -24);
  const double tiny = SmallestSubnormal(p.dtype_c);
  AccuracyReport report;
  report.output_unit_roundoff = uy;
  report.accumulation_unit_roundoff = u32;
  report.passed = true;
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t j = 0; j < n; ++j) {
      double ref = bias[j], s = 0;
      for (uint64_t kk = 0; kk < k; ++kk) {
        const double term = static_cast<double>(t.a.Get(i * k + kk)) * w[kk * n + j];
        ref += term;
        s += std::fabs(term);
      }
      const double e =
          (3 * ux + 3 * ux * ux) * s + static_cast<double>(k + 1) * u32 * (s + std::fabs(bias[j]));
      const double bound = e + uy * (std::fabs(ref) + e) + tiny;
      const double got = c.Get(i * n + j);
      const double err = std::fabs(got - ref);
      const double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0);
      if (!(err <= bound)) {
        ++report.elements_over_bound;
        report.passed = false;
      }
      report.max_abs_error = std::max(report.max_abs_error, err);
      if (std::fabs(ref) >= 1) {
        report.max_rel_error = std::max(report.max_rel_error, err / std::fabs(ref));
      }
      if (ratio > report.worst_bound_ratio || (i == 0 && j == 0)) {
        report.worst_bound_ratio = ratio;
        report.worst_index = i * n + j;
        report.error_bound = bound;
      }
    }
  }
  report.bound_rule = absl::StrCat(
      "antiquant ", std::string(tiling::weight_quant::QuantTypeName(f.antiquant)),
      ": (w + offset) * scale in ", std::string(DataTypeName(p.dtype_a)),
      " (3 roundings per weight element: 3 u_x S), fp32 sum from the bias ((k + 1) u_fp32 "
      "(S + |bias|)), cast to ",
      std::string(DataTypeName(p.dtype_c)), " (u_y); S = sum |x (w + offset) scale|");
  return report;
}

}  // namespace npu::emu
