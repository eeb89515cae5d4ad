#include "emulator/numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "emulator/gemm_kernel.h"
#include "server/tiling/int_math.h"

namespace npu::emu {
namespace {

using tiling::DataType;
using tiling::Range;
using tiling::WorkUnit;

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

float HalfToFloatSlow(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    const float magnitude = static_cast<float>(mant) * 5.9604644775390625e-8f;  // 2^-24
    return sign ? -magnitude : magnitude;
  }
  if (exp == 31) return FromBits(sign | 0x7f800000u | (mant << 13));
  return FromBits(sign | ((exp + 112) << 23) | (mant << 13));
}

const std::vector<float>& HalfTable() {
  static const std::vector<float>* const table = [] {
    auto* t = new std::vector<float>(65536);
    for (uint32_t i = 0; i < 65536; ++i) (*t)[i] = HalfToFloatSlow(static_cast<uint16_t>(i));
    return t;
  }();
  return *table;
}

}  // namespace

float HalfBitsToFloat(uint16_t bits) { return HalfTable()[bits]; }

uint16_t FloatToHalfBits(float value) {
  uint32_t x = Bits(value);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  x &= 0x7fffffff;
  if (x >= 0x7f800000) return sign | (x > 0x7f800000 ? 0x7e00 : 0x7c00);
  if (x >= 0x477ff000) return sign | 0x7c00;  // >= 65520 rounds to infinity
  const int exp = static_cast<int>(x >> 23) - 127;
  const uint32_t mant = (x & 0x7fffff) | 0x800000;
  if (exp < -25) return sign;
  if (exp < -14) {
    const int shift = -(exp + 1);  // 14..24
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t q = (static_cast<uint32_t>(exp + 15) << 10) | ((mant >> 13) & 0x3ff);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ++q;
  return static_cast<uint16_t>(sign | q);
}

float BFloat16BitsToFloat(uint16_t bits) { return FromBits(uint32_t{bits} << 16); }

uint16_t FloatToBFloat16Bits(float value) {
  const uint32_t x = Bits(value);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

float RoundToHf32(float value) {
  const uint32_t x = Bits(value);
  if ((x & 0x7f800000) == 0x7f800000) return value;
  constexpr int kDrop = 23 - kHf32MantissaBits;
  const uint32_t rounded =
      (x + ((1u << (kDrop - 1)) - 1) + ((x >> kDrop) & 1)) & ~((1u << kDrop) - 1);
  return FromBits(rounded);
}

float RoundTo(DataType dtype, float value) {
  switch (dtype) {
    case DataType::kFloat16:
      return HalfBitsToFloat(FloatToHalfBits(value));
    case DataType::kBFloat16:
      return BFloat16BitsToFloat(FloatToBFloat16Bits(value));
    case DataType::kFloat32:
      return value;
    default:  // the quantized types: the float paths never see them
      break;
  }
  return value;
}

uint64_t HostTensor::elements() const {
  uint64_t count = 1;
  for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
  return count;
}

float HostTensor::Get(uint64_t index) const {
  switch (dtype) {
    case DataType::kFloat16: {
      uint16_t bits;
      std::memcpy(&bits, bytes.data() + 2 * index, 2);
      return HalfBitsToFloat(bits);
    }
    case DataType::kBFloat16: {
      uint16_t bits;
      std::memcpy(&bits, bytes.data() + 2 * index, 2);
      return BFloat16BitsToFloat(bits);
    }
    case DataType::kFloat32: {
      float value;
      std::memcpy(&value, bytes.data() + 4 * index, 4);
      return value;
    }
    default:  // the quantized types: the float paths never see them
      break;
  }
  return 0;
}

void HostTensor::Set(uint64_t index, float value) {
  switch (dtype) {
    case DataType::kFloat16: {
      const uint16_t bits = FloatToHalfBits(value);
      std::memcpy(bytes.data() + 2 * index, &bits, 2);
      return;
    }
    case DataType::kBFloat16: {
      const uint16_t bits = FloatToBFloat16Bits(value);
      std::memcpy(bytes.data() + 2 * index, &bits, 2);
      return;
    }
    case DataType::kFloat32:
      std::memcpy(bytes.data() + 4 * index, &value, 4);
      return;
    default:  // the quantized types: the float paths never see them
      break;
  }
}

void HostTensor::GetRun(uint64_t index, uint64_t count, float* out) const {
  switch (dtype) {
    case DataType::kFloat16: {
      const float* table = HalfTable().data();
      const uint8_t* in = bytes.data() + 2 * index;
      for (uint64_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, in + 2 * i, 2);
        out[i] = table[bits];
      }
      return;
    }
    case DataType::kBFloat16: {
      const uint8_t* in = bytes.data() + 2 * index;
      for (uint64_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, in + 2 * i, 2);
        out[i] = BFloat16BitsToFloat(bits);
      }
      return;
    }
    case DataType::kFloat32:
      std::memcpy(out, bytes.data() + 4 * index, 4 * count);
      return;
    default:  // the quantized types: the float paths never see them
      break;
  }
}

namespace {

// `count` floats narrowed to 16-bit words by `narrow`, stored little-endian.
template <uint16_t (*narrow)(float)>
void StoreNarrowed(uint8_t* dst, const float* values, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    const uint16_t bits = narrow(values[i]);
    std::memcpy(dst + 2 * i, &bits, 2);
  }
}

}  // namespace

void HostTensor::SetRun(uint64_t index, const float* values, uint64_t count) {
  switch (dtype) {
    case DataType::kFloat16:
      StoreNarrowed<FloatToHalfBits>(bytes.data() + 2 * index, values, count);
      return;
    case DataType::kBFloat16:
      StoreNarrowed<FloatToBFloat16Bits>(bytes.data() + 2 * index, values, count);
      return;
    case DataType::kFloat32:
      std::memcpy(bytes.data() + 4 * index, values, 4 * count);
      return;
    default:  // the quantized types: the float paths never see them
      break;
  }
}

std::vector<float> HostTensor::ToFloats() const {
  std::vector<float> values(elements());
  GetRun(0, values.size(), values.data());
  return values;
}

HostTensor HostTensor::Zeros(DataType dtype, std::vector<int64_t> shape) {
  HostTensor tensor;
  tensor.dtype = dtype;
  tensor.shape = std::move(shape);
  tensor.bytes.assign(tiling::DataTypeBytesOf(dtype, tensor.elements()), 0);
  return tensor;
}

HostTensor HostTensor::FromFloats(DataType dtype, std::vector<int64_t> shape,
                                  const std::vector<float>& values) {
  HostTensor tensor = Zeros(dtype, std::move(shape));
  for (uint64_t i = 0; i < values.size() && i < tensor.elements(); ++i) tensor.Set(i, values[i]);
  return tensor;
}

namespace {

// What the cube and vector units of one RunNumerics() call read and write.
struct NumericsData {
  const tiling::Schedule& schedule;
  uint64_t n = 0, k = 0;
  // A [batches][rows, k] and B [batches][k, n] as fp32, hf32-rounded when
  // asked (rows: one batch's M as walked).
  FloatBuffer af, bf;
  std::vector<float> bias_f;  // empty without a bias; [bias batches][n]
  std::vector<float> workspace;
  HostTensor& c;
  uint64_t rows = 0;  // rows of one C batch
  // Per C batch: the A, B, bias and x3 batch it reads.
  std::vector<uint64_t> a_of{}, b_of{}, bias_of{}, x3_of{};
  tiling::FusedOp fused_op = tiling::FusedOp::kNone;
  std::vector<float> x3f{};  // [x3 batches][rows, n]
  int inner_precise = 0;

  const float* ARow(uint32_t batch, uint64_t row) const {
    return af.data() + (a_of[batch] * rows + row - uint64_t{batch} * rows) * k;
  }
  const float* BRows(uint32_t batch) const { return bf.data() + b_of[batch] * k * n; }
  const float* Bias(uint32_t batch) const { return bias_f.data() + bias_of[batch] * n; }
  // C[row, col] of the stacked C (the epilogue applied, cast to C's type).
  void SetC(uint64_t row, uint64_t col, float value) { SetCRun(row, col, &value, 1); }
  // C[row, col + i] = values[i] for i < count, the same way. `values` is
  // the caller's scratch: the epilogue may rewrite it.
  void SetCRun(uint64_t row, uint64_t col, float* values, uint64_t count) {
    if (fused_op != tiling::FusedOp::kNone) {
      const uint64_t batch = row / rows;
      const float* x3 = x3f.empty() ? nullptr : x3f.data() + (x3_of[batch] * rows + row % rows) * n;
      for (uint64_t i = 0; i < count; ++i) {
        values[i] = ApplyFusedOp(fused_op, values[i], x3 == nullptr ? 0.0f : x3[col + i], c.dtype,
                                 inner_precise);
      }
    }
    c.SetRun(row * n + col, values, count);
  }
};

// One cube unit: its K chunks accumulated in fp32 from the bias or zero,
// then written to its workspace slot (a Stream-K partial) or to C.
void RunCubeUnit(NumericsData& d, const WorkUnit& unit, std::vector<float>& acc,
                 std::vector<float>& sum) {
  const uint64_t n = d.n, k = d.k;
  const uint64_t rows = unit.m.size(), cols = unit.n.size();
  const std::vector<Range> chunks = tiling::SplitKChunks(unit.k, d.schedule.split_k_chunk);
  for (size_t ci = 0; ci < chunks.size(); ++ci) {
    acc.resize(rows * cols);
    const Range chunk = chunks[ci];
    const float* a_chunk = d.ARow(unit.batch, unit.m.begin) + chunk.begin;
    const float* b_chunk = d.BRows(unit.batch) + chunk.begin * n + unit.n.begin;
    // L0C starts from the bias in the first chunk of K slice 0, else from
    // zero (a product that writes the whole block, with nothing to clear).
    if (!d.bias_f.empty() && unit.k_slice == 0 && ci == 0) {
      for (uint64_t r = 0; r < rows; ++r) {
        std::memcpy(acc.data() + r * cols, d.Bias(unit.batch) + unit.n.begin, cols * sizeof(float));
      }
      GemmAccumulate(rows, cols, chunk.size(), a_chunk, k, b_chunk, n, acc.data(), cols);
    } else {
      GemmProduct(rows, cols, chunk.size(), a_chunk, k, b_chunk, n, acc.data(), cols);
    }
    if (ci == 0) {
      sum.swap(acc);
    } else {
      // fp32 atomic add of the chunk into GM.
      for (uint64_t i = 0; i < rows * cols; ++i) sum[i] += acc[i];
    }
  }
  if (unit.writes_partial) {
    const uint64_t stride = d.schedule.reductions[unit.reduction].workspace_row_stride;
    float* slot =
        d.workspace.data() + uint64_t{unit.workspace_slot} * tiling::kWorkspaceSlotElements;
    for (uint64_t r = 0; r < rows; ++r) {
      std::memcpy(slot + r * stride, sum.data() + r * cols, cols * sizeof(float));
    }
  } else {
    for (uint64_t r = 0; r < rows; ++r) {
      d.SetCRun(unit.m.begin + r, unit.n.begin, sum.data() + r * cols, cols);
    }
  }
}

// A Stream-K reduction unit: the K slices of its part of C summed in slot
// order from the workspace.
void RunReduceUnit(NumericsData& d, const WorkUnit& unit) {
  const tiling::ReductionGroup& group = d.schedule.reductions[unit.reduction];
  const uint64_t stride = group.workspace_row_stride;
  for (uint64_t r = unit.m.begin; r < unit.m.end; ++r) {
    const uint64_t row = (r - group.m.begin) * stride;
    for (uint64_t j = unit.n.begin; j < unit.n.end; ++j) {
      const uint64_t col = j - group.n.begin;
      float s = d.workspace[uint64_t{group.slots[0]} * tiling::kWorkspaceSlotElements + row + col];
      for (size_t i = 1; i < group.slots.size(); ++i) {
        s += d.workspace[uint64_t{group.slots[i]} * tiling::kWorkspaceSlotElements + row + col];
      }
      d.SetC(r, j, s);
    }
  }
}

// A TO_MUL unit: Mul then ReduceSum on the vector unit, separate fp32
// roundings, summed in k order.
void RunVectorMulUnit(NumericsData& d, const WorkUnit& unit) {
  const uint64_t n = d.n, k = d.k;
  const float* b = d.BRows(unit.batch);
  for (uint64_t r = unit.m.begin; r < unit.m.end; ++r) {
    const float* a = d.ARow(unit.batch, r);
    for (uint64_t j = unit.n.begin; j < unit.n.end; ++j) {
      float s = 0.0f;
      for (uint64_t p = 0; p < k; ++p) {
        const float product = a[p] * b[p * n + j];
        s += product;
      }
      if (!d.bias_f.empty()) s += d.Bias(unit.batch)[j];
      d.SetC(r, j, s);
    }
  }
}

void RunVectorUnit(NumericsData& d, const WorkUnit& unit) {
  switch (unit.op) {
    case tiling::UnitOp::kReduce:
      RunReduceUnit(d, unit);
      break;
    case tiling::UnitOp::kClear:
      for (uint64_t r = unit.m.begin; r < unit.m.end; ++r) {
        for (uint64_t j = unit.n.begin; j < unit.n.end; ++j) d.SetC(r, j, 0.0f);
      }
      break;
    case tiling::UnitOp::kVectorMul:
      RunVectorMulUnit(d, unit);
      break;
    case tiling::UnitOp::kMmad:
      break;
  }
}

}  // namespace

float ApplyFusedOp(tiling::FusedOp op, float value, float x3, DataType dtype_c, int inner_precise) {
  switch (op) {
    case tiling::FusedOp::kNone:
    case tiling::FusedOp::kCast16To32:
      return value;
    case tiling::FusedOp::kRelu:
      return value < 0 ? 0.0f : value;
    case tiling::FusedOp::kAdd:
    case tiling::FusedOp::kMul: {
      const float mm = inner_precise == 1 ? RoundTo(dtype_c, value) : value;
      return op == tiling::FusedOp::kAdd ? mm + x3 : mm * x3;
    }
    case tiling::FusedOp::kGeluErf: {
      const double x = value;
      return static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
    }
    case tiling::FusedOp::kGeluTanh: {
      const double x = value;
      const double inner = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
      return static_cast<float>(0.5 * x * (1.0 + std::tanh(inner)));
    }
  }
  return value;
}

FloatBuffer BatchedOperandAsFloats(const HostTensor& tensor, uint64_t count, uint64_t rows,
                                   uint64_t cols, bool transposed, bool hf32, ThreadPool& pool) {
  FloatBuffer out(count * rows * cols);
  // Tasks of 64 output rows; a transposed operand is read as 64-element
  // runs of its stored rows (one per output column).
  constexpr uint64_t kRowsPerTask = 64;
  const uint64_t tasks_per = std::max<uint64_t>(1, tiling::CeilDiv(rows, kRowsPerTask));
  pool.ParallelFor(count * tasks_per, [&](size_t task) {
    const uint64_t batch = task / tasks_per, r0 = (task % tasks_per) * kRowsPerTask;
    const uint64_t r1 = std::min(rows, r0 + kRowsPerTask);
    const uint64_t base = batch * rows * cols;
    float* dst = out.data() + base;
    if (!transposed) {
      tensor.GetRun(base + r0 * cols, (r1 - r0) * cols, dst + r0 * cols);
    } else {
      float run[kRowsPerTask];
      for (uint64_t col = 0; col < cols; ++col) {
        tensor.GetRun(base + col * rows + r0, r1 - r0, run);
        for (uint64_t r = r0; r < r1; ++r) dst[r * cols + col] = run[r - r0];
      }
    }
    if (hf32) {
      for (uint64_t i = r0 * cols; i < r1 * cols; ++i) dst[i] = RoundToHf32(dst[i]);
    }
  });
  return out;
}

absl::Status RunNumerics(const tiling::Schedule& schedule, const tiling::MatmulProblem& problem,
                         const HostTensor& a, const HostTensor& b, const HostTensor* bias,
                         ThreadPool& pool, const std::atomic<bool>* cancelled, HostTensor& c,
                         const HostTensor* x3) {
  const uint64_t n = problem.n, k = problem.k;
  const bool hf32 = problem.hf32;
  absl::StatusOr<tiling::BatchShape> walk = tiling::BatchShapeOf(problem);
  if (!walk.ok()) return walk.status();
  NumericsData data{schedule, n, k, {}, {}, {}, {}, c};
  data.rows = walk->rows;
  const uint64_t batches_a = static_cast<uint64_t>(tiling::SlotProduct(walk->a));
  const uint64_t batches_b = static_cast<uint64_t>(tiling::SlotProduct(walk->b));
  data.af = BatchedOperandAsFloats(a, batches_a, walk->rows, k, problem.trans_a,
                                   hf32 && a.dtype == DataType::kFloat32, pool);
  data.bf = BatchedOperandAsFloats(b, batches_b, k, n, problem.trans_b,
                                   hf32 && b.dtype == DataType::kFloat32, pool);
  if (problem.has_bias && bias != nullptr) data.bias_f = bias->ToFloats();
  // x3 is [m, n] or [b, m, n] with b 1 or batchC (FusedMatMul's check,
  // matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_builtin_tiling.cpp).
  const bool x3_batched = problem.fused.x3_shape.size() == 3 && problem.fused.x3_shape[0] > 1;
  for (uint64_t i = 0; i < walk->batch; ++i) {
    data.a_of.push_back(walk->ABatch(i));
    data.b_of.push_back(walk->BBatch(i));
    data.bias_of.push_back(problem.batch.bias.empty() ? 0
                                                      : walk->OperandBatch(problem.batch.bias, i));
    data.x3_of.push_back(x3_batched ? i : 0);
  }
  data.fused_op =
      problem.op == tiling::MatmulOp::kFusedMatMul ? problem.fused.op : tiling::FusedOp::kNone;
  data.inner_precise = problem.fused.inner_precise;
  if (x3 != nullptr) data.x3f = x3->ToFloats();
  data.workspace.resize(uint64_t{schedule.workspace_slots} * tiling::kWorkspaceSlotElements);

  std::map<uint32_t, std::vector<const WorkUnit*>> aic;
  std::vector<const WorkUnit*> aiv;
  for (const WorkUnit& unit : schedule.units) {
    if (unit.core_kind == tiling::CoreKind::kAic) {
      aic[unit.core].push_back(&unit);
    } else {
      aiv.push_back(&unit);
    }
  }
  std::vector<std::vector<const WorkUnit*>> cores;
  for (auto& [core, units] : aic) cores.push_back(std::move(units));
  std::atomic<bool> stopped{false};
  auto cancelled_now = [&] {
    if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) stopped = true;
    return stopped.load(std::memory_order_relaxed);
  };

  // Cube units: one task per AIC core, its units in round order.
  pool.ParallelFor(cores.size(), [&](size_t index) {
    thread_local std::vector<float> acc, sum;
    for (const WorkUnit* unit : cores[index]) {
      if (cancelled_now()) return;
      RunCubeUnit(data, *unit, acc, sum);
    }
  });
  if (stopped) return absl::CancelledError("emulation cancelled during the cube numerics");

  // Vector units: independent, each writes its own part of C.
  pool.ParallelFor(aiv.size(), [&](size_t index) {
    if (cancelled_now()) return;
    RunVectorUnit(data, *aiv[index]);
  });
  if (stopped) return absl::CancelledError("emulation cancelled during the vector numerics");
  return absl::OkStatus();
}

}  // namespace npu::emu
