// Host tensors, dtype conversions and the numerical execution of a schedule.
//
// The numbers follow the device: fp16 / bf16 / fp32 operands (fp32 rounded
// to hf32 when the problem asks), fp32 accumulation in L0C started from zero
// or the bias, fp32 partial sums in the workspace summed by AIV in slot order,
// fp32 split-K chunks added in GM, and a round-to-nearest-even cast to the
// output dtype. Every C element is produced by one task in a fixed order, so
// C is bit-identical for any number of host threads.
#ifndef NPU_EMULATOR_NUMERICS_H_
#define NPU_EMULATOR_NUMERICS_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "emulator/float_buffer.h"
#include "emulator/thread_pool.h"
#include "server/tiling/schedule.h"
#include "server/tiling/types.h"

namespace npu::emu {

// IEEE binary16 / bfloat16 <-> binary32; the narrowing casts round to
// nearest even (overflow to infinity, NaN stays NaN).
float HalfBitsToFloat(uint16_t bits);
uint16_t FloatToHalfBits(float value);
float BFloat16BitsToFloat(uint16_t bits);
uint16_t FloatToBFloat16Bits(float value);
// hf32: fp32 with the mantissa rounded (nearest even) to kHf32MantissaBits.
// Assumption: Ascend's HF32 keeps 11 explicit mantissa bits (one more than
// TF32); the seeds do not give the width.
inline constexpr int kHf32MantissaBits = 11;
float RoundToHf32(float value);
// `value` rounded to `dtype` and back.
float RoundTo(tiling::DataType dtype, float value);

// A dense row-major tensor as little-endian bytes of `dtype`.
struct HostTensor {
  tiling::DataType dtype = tiling::DataType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  uint64_t elements() const;
  float Get(uint64_t index) const;
  void Set(uint64_t index, float value);  // rounds to nearest even
  // Elements [index, index + count) as fp32 into `out`, and from `values`
  // (rounding to nearest even): Get() / Set() of a run, one dtype dispatch.
  void GetRun(uint64_t index, uint64_t count, float* out) const;
  void SetRun(uint64_t index, const float* values, uint64_t count);
  std::vector<float> ToFloats() const;
  static HostTensor Zeros(tiling::DataType dtype, std::vector<int64_t> shape);
  static HostTensor FromFloats(tiling::DataType dtype, std::vector<int64_t> shape,
                               const std::vector<float>& values);
};

// `count` matrices stored back to back in `tensor`, each [out_rows,
// out_cols] as the cube reads it, in order: row-major fp32 (which holds
// every input dtype exactly), read transposed when `transposed` (each stored
// as [out_cols, out_rows]) and rounded to hf32 when `hf32`. Filled on
// `pool`'s threads.
FloatBuffer BatchedOperandAsFloats(const HostTensor& tensor, uint64_t count, uint64_t out_rows,
                                   uint64_t out_cols, bool transposed, bool hf32, ThreadPool& pool);

// `value` (an fp32 accumulator of C) through FusedMatMul's epilogue `op`,
// before the cast to C's dtype: ReLU on the fixpipe; add / mul of the x3
// element `x3` (the accumulator first cast to `dtype_c` when inner_precise
// is 1, the high-performance path); GELU in its erf or tanh form, computed
// in fp64 and rounded to fp32 (the AIV's own approximation is not modelled).
// 16cast32 and "" leave the value as it is.
float ApplyFusedOp(tiling::FusedOp op, float value, float x3, tiling::DataType dtype_c,
                   int inner_precise);

// Computes C for every unit of `schedule`. `bias` may be null; `x3` is
// FusedMatMul's add / mul operand (null otherwise). A batched problem's
// operands are stored batch-major with its batch dims (batch_a + A's
// matrix, ...), C as the stacked batches. Returns kCancelled when
// `cancelled` turns true between units.
absl::Status RunNumerics(const tiling::Schedule& schedule, const tiling::MatmulProblem& problem,
                         const HostTensor& a, const HostTensor& b, const HostTensor* bias,
                         ThreadPool& pool, const std::atomic<bool>* cancelled, HostTensor& c,
                         const HostTensor* x3 = nullptr);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_NUMERICS_H_
