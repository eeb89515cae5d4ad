// WeightQuantBatchMatmulV2's output C computed as its kernels compute it:
// the vector cores dequantize each weight element into x's dtype (the
// arch35 kernels' antiquant: the code cast to x's dtype, the offset added
// and the scale multiplied, each step rounded to x's dtype; an MX scale is
// the power of two 2^(e - 127) of its e8m0 code, applied in fp32 and the
// product rounded to x's dtype), write it to L1, and the cube multiplies x
// by it, summing the exact products in fp32 from the fp32 bias; the result
// is cast to y (nearest even). Each kMmad unit of the schedule computes its
// own rows and columns over the whole K. Part of `npu_emulator`.
//
// Tensors (emulator.h Tensors), every one the raw little-endian codes of its
// dtype: a = x [m, k]; b = the weight [k, n] ([n, k] when trans_b), a
// FRACTAL_NZ weight given in that ND layout, 4-bit codes two per byte
// (element 2i in the low nibble) — a packed INT32 / FLOAT32 weight holds the
// same bytes with its last dim divided by 8; scale = the antiquant scale
// (problem.quant.antiquant_scale, its shape as given: [1], [n], [1, n] /
// [n, 1], [ceil(k / g), n] or [n, ceil(k / g)] with trans_b); offset = the
// antiquant offset (scale's shape, x's dtype); the bias [n] / [1, n] /
// [0]. No quant scale: CANN refuses an int8 output on DAV_3510.
//
// The reference is fp64 with the real dequantized weight ((w + offset) *
// scale, unrounded). The bound of an element is
//   (3 u_x + 3 u_x^2) S + (k + 1) u_fp32 (S + |bias|) + u_y (|ref| + e) + t
// where S = sum_k |x * (w + offset) * scale|, u_x / u_y the unit roundoffs
// of x's and y's dtypes, e the first two terms and t y's smallest subnormal:
// three roundings per dequantized element (cast, add, multiply), fp32
// accumulation, the output cast.
#ifndef NPU_EMULATOR_WEIGHT_QUANT_EMULATION_H_
#define NPU_EMULATOR_WEIGHT_QUANT_EMULATION_H_

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "emulator/accuracy.h"
#include "emulator/emulator.h"
#include "emulator/numerics.h"
#include "emulator/thread_pool.h"
#include "server/tiling/schedule.h"
#include "server/tiling/types.h"

namespace npu::emu {

// The weight's ND shape: [k, n] or [n, k] with trans_b, the last dim / 8 for
// a packed INT32 / FLOAT32 weight.
std::vector<int64_t> WeightShapeOf(const tiling::MatmulProblem& problem);

// Checks that `operands` hold the tensors of the file comment with the
// problem's dtypes and shapes; kInvalidArgument names the tensor.
absl::Status CheckWeightQuantInputs(const tiling::MatmulProblem& problem, const Tensors& operands);

// Random operands, deterministic for `seed`: x uniform in [-1, 1) rounded to
// its dtype; weight codes uniform over the weight dtype's finite codes
// (DrawQuantValues()); scales f / max|w| with f uniform in [1/2, 1) (MX: the
// power of two at most that), offsets uniform in [-max|w| / 8, max|w| / 8]
// rounded to x's dtype (int weights only), the bias uniform in [-1, 1).
Tensors RandomWeightQuantInputs(const tiling::MatmulProblem& problem, uint64_t seed);

// C of `operands` along `schedule` (see the file comment), the units on
// `pool`'s threads; bit-identical for any thread count. kInternal when the
// schedule does not cover C exactly once; kCancelled when `cancelled` turns
// true between units.
absl::StatusOr<HostTensor> RunWeightQuantNumerics(const tiling::Schedule& schedule,
                                                  const tiling::MatmulProblem& problem,
                                                  const Tensors& operands, ThreadPool& pool,
                                                  const std::atomic<bool>* cancelled);

// `c` against the fp64 reference under the bound of the file comment; the
// report's bound_rule names the antiquant mode and the rule.
absl::StatusOr<AccuracyReport> CheckWeightQuantAccuracy(const tiling::MatmulProblem& problem,
                                                        const Tensors& operands,
                                                        const HostTensor& c);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_WEIGHT_QUANT_EMULATION_H_
