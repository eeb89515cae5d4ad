#include "emulator/numerics.h"

#include <algorithm>
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
  }
}

std::vector<float> HostTensor::ToFloats() const {
  std::vector<float> values(elements());
  for (uint64_t i = 0; i < values.size(); ++i) values[i] = Get(i);
  return values;
}

HostTensor HostTensor::Zeros(DataType dtype, std::vector<int64_t> shape) {
  HostTensor tensor;
  tensor.dtype = dtype;
  tensor.shape = std::move(shape);
  tensor.bytes.assign(tensor.elements() * tiling::DataTypeBytes(dtype), 0);
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
  std::vector<float> af, bf;  // A [m, k] and B [k, n] as fp32, hf32-rounded when asked
  std::vector<float> bias_f;  // empty without a bias
  std::vector<float> workspace;
  HostTensor& c;
};

// One cube unit: its K chunks accumulated in fp32 from the bias or zero,
// then written to its workspace slot (a Stream-K partial) or to C.
void RunCubeUnit(NumericsData& d, const WorkUnit& unit, std::vector<float>& acc,
                 std::vector<float>& sum) {
  const uint64_t n = d.n, k = d.k;
  const uint64_t rows = unit.m.size(), cols = unit.n.size();
  const std::vector<Range> chunks = tiling::SplitKChunks(unit.k, d.schedule.split_k_chunk);
  for (size_t ci = 0; ci < chunks.size(); ++ci) {
    acc.assign(rows * cols, 0.0f);
    // L0C starts from the bias in the first chunk of K slice 0.
    if (!d.bias_f.empty() && unit.k_slice == 0 && ci == 0) {
      for (uint64_t r = 0; r < rows; ++r) {
        std::memcpy(acc.data() + r * cols, d.bias_f.data() + unit.n.begin, cols * sizeof(float));
      }
    }
    const Range chunk = chunks[ci];
    GemmAccumulate(rows, cols, chunk.size(), d.af.data() + unit.m.begin * k + chunk.begin, k,
                   d.bf.data() + chunk.begin * n + unit.n.begin, n, acc.data(), cols);
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
      for (uint64_t j = 0; j < cols; ++j) {
        d.c.Set((unit.m.begin + r) * n + unit.n.begin + j, sum[r * cols + j]);
      }
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
      d.c.Set(r * d.n + j, s);
    }
  }
}

// A TO_MUL unit: Mul then ReduceSum on the vector unit, separate fp32
// roundings, summed in k order.
void RunVectorMulUnit(NumericsData& d, const WorkUnit& unit) {
  const uint64_t n = d.n, k = d.k;
  for (uint64_t r = unit.m.begin; r < unit.m.end; ++r) {
    for (uint64_t j = unit.n.begin; j < unit.n.end; ++j) {
      float s = 0.0f;
      for (uint64_t p = 0; p < k; ++p) {
        const float product = d.af[r * k + p] * d.bf[p * n + j];
        s += product;
      }
      if (!d.bias_f.empty()) s += d.bias_f[j];
      d.c.Set(r * n + j, s);
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
        for (uint64_t j = unit.n.begin; j < unit.n.end; ++j) d.c.Set(r * d.n + j, 0.0f);
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

std::vector<float> OperandAsFloats(const HostTensor& tensor, uint64_t out_rows, uint64_t out_cols,
                                   bool transposed, bool hf32, ThreadPool& pool) {
  std::vector<float> out(out_rows * out_cols);
  constexpr uint64_t kRowsPerTask = 64;
  const uint64_t tasks = tiling::CeilDiv(out_rows, kRowsPerTask);
  pool.ParallelFor(tasks, [&](size_t task) {
    const uint64_t r0 = task * kRowsPerTask, r1 = std::min(out_rows, r0 + kRowsPerTask);
    for (uint64_t r = r0; r < r1; ++r) {
      for (uint64_t c = 0; c < out_cols; ++c) {
        float v = transposed ? tensor.Get(c * out_rows + r) : tensor.Get(r * out_cols + c);
        if (hf32) v = RoundToHf32(v);
        out[r * out_cols + c] = v;
      }
    }
  });
  return out;
}

absl::Status RunNumerics(const tiling::Schedule& schedule, const tiling::MatmulProblem& problem,
                         const HostTensor& a, const HostTensor& b, const HostTensor* bias,
                         ThreadPool& pool, const std::atomic<bool>* cancelled, HostTensor& c) {
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  const bool hf32 = problem.hf32;
  NumericsData data{schedule, n, k, {}, {}, {}, {}, c};
  data.af = OperandAsFloats(a, m, k, problem.trans_a, hf32 && a.dtype == DataType::kFloat32, pool);
  data.bf = OperandAsFloats(b, k, n, problem.trans_b, hf32 && b.dtype == DataType::kFloat32, pool);
  if (problem.has_bias && bias != nullptr) data.bias_f = bias->ToFloats();
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
