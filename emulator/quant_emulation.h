// QuantBatchMatmulV3's output C computed through the schedule of its kernel:
// the glue between a QuantBatchMatmulV3 problem (tiling/types.h), its tensors
// as the user stores them (`Tensors`: x1 in a, x2 in b, the bias, and scale,
// pertoken_scale, offset), a schedule from tiling::ExpandSchedule() and the
// per-path arithmetic of quant_numerics.h. Part of `npu_emulator`; it reads
// the problem through CANN's parse (tiling/quant/quant_parse.h) so that the
// quant mode, the inferred group sizes and the accepted scale shapes are
// CANN's, not re-derived here.
//
// Vocabulary (as quant_numerics.h): x1 is A, x2 is B; `scale` is x2's scale,
// `pertoken` (Tensors::pertoken_scale) x1's; a *C batch* is one [m, n]
// matrix of C (NumPy broadcast of x1's and x2's batch dims); the *stacked C*
// is C as the schedule walks it, [batches * m, n], so stacked row r is row
// r % m of C batch r / m (whether or not CANN folds x1's batch into M: the
// rows are the same).
//
// Layouts read (CANN's; the scale shapes quant_parse.cc accepts), every
// tensor the raw little-endian codes of its dtype:
//   * x1 batch_a + [m, k] ([k, m] when trans_a), x2 batch_b + [k, n] ([n, k]
//     when trans_b), ND only; 4-bit codes packed two per byte along the flat
//     element order (element 2i in the low nibble), which is the stored
//     innermost dim since CANN requires it even for int4 / float4_e2m1.
//   * bias [n] or [batch_c, 1, n] (problem.quant.bias_shape; one row per C
//     batch, as the kernels' biasThreeDim), dtype problem.dtype_bias.
//   * per-tensor / per-channel scale [1] or [n] (float32, bfloat16, or
//     uint64 / int64 fixpipe words, PackFixpipeScale()); pertoken [m]
//     (per-token) or [1] (float8 / hifloat8 "double scale"), float32.
//   * per-block: pertoken batch_a + [ceil(m / group_m), ceil(k / 128)]
//     ([k groups, m groups] when trans_a); scale batch_b + [ceil(k / 128),
//     ceil(n / 128)] ([n groups, k groups] when trans_b): x2's orientation.
//   * MX (float8_e8m0): pertoken batch_a + [m, ceil(k / 64), 2] ([ceil(k /
//     64), m, 2] when trans_a), scale batch_b + [ceil(k / 64), n, 2] ([n,
//     ceil(k / 64), 2] when trans_b); K group g of 32 is pair element g % 2 of
//     the k dim's index g / 2 (an odd group count leaves the last pair half
//     unused).
//   * offset: checked against the problem, never read. The arch35 kernels
//     take the int8 output's offset from the scale word (bits 45..37, as
//     TransQuantParamV2 packs it; ops-nn cmct/kernel/kernel_qbmm_cube.h reads
//     only the x2 scale words), so RandomQuantInputs() packs the offsets it
//     draws into the words.
// Shapes CANN accepts but whose layout is unclear (a per-block scale in the
// order other than x2's, MX scales with a 1 in place of k / 64 or n) are
// kUnimplemented here, as are FRACTAL_NZ operands, slice views and
// interleaved batches (the emulator's CheckModelled() rules).
//
// How C is computed (RunQuantNumerics): every kMmad unit of the schedule
// computes its own rectangle of the stacked C. A unit that writes C runs
// QuantMatmulDevice() on the operands of its rows and columns (its whole K);
// each element's value does not depend on the rest of C, so this is the
// kernels' arithmetic per path. A Stream-K unit (writes_partial) writes its
// K slice's raw accumulator, as the cube leaves it in L0C, to its workspace
// slot: int32 for int8 / int4 inputs (bias included in slice 0 when the bias
// is int32), fp32 for float8 / hifloat8 (from the fp32 bias in slice 0 when
// the path adds it in L0C) and, for MX and per-block, the fp32 sum of the
// slice's scaled groups (MX from the bias in slice 0). The reduction unit
// sums a group's slots in slot order (int32 modulo 2^32, or fp32) and then
// dequantises and casts exactly as the path does after its accumulator
// (ops-tensor blaze/epilogue/block/block_epilogue_qbmm_pertensor_streamk.h:
// the per-tensor AIV epilogue, whose masked merged scale and post-dequant
// bias orders are the fixpipe and vector-epilogue formulas of
// quant_numerics.h; block_epilogue_matmul_streamk.h for MX: sum and cast).
// The slice partials come from QuantMatmulDevice() on the slice's operands
// with the dequantisation switched off (int32 output, or a fixpipe scale of
// exactly 1 and float32 output); the dequantisation after the reduction is
// the one piece of arithmetic this file adds. Not modelled: the kernels'
// timing, the cube's order inside a 32-wide K step (quant_numerics.h), and
// Stream-K slices that cut an MX or per-block K group (kInternal).
#ifndef NPU_EMULATOR_QUANT_EMULATION_H_
#define NPU_EMULATOR_QUANT_EMULATION_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "emulator/emulator.h"
#include "emulator/numerics.h"
#include "emulator/quant_numerics.h"
#include "emulator/thread_pool.h"
#include "server/tiling/schedule.h"
#include "server/tiling/types.h"

namespace npu::emu {

// How a computed C compares with the exact answer (CheckQuantAccuracy()).
struct QuantAccuracy {
  // Every element within its bound: |c - ToOutputRange(reference)| <=
  // QuantMatmulErrorBound() (quant_numerics.h); a NaN or infinite c where
  // the reference is finite under a finite bound fails.
  bool passed = false;
  double max_abs_error = 0;
  // The largest error / bound (0 where both are 0, +infinity for an error
  // under a zero bound), and the flat index into C of that element.
  double max_error_over_bound = 0;
  uint64_t worst_index = 0;
  double worst_bound = 0;  // the bound of that element
  // Largest error / |reference| over elements whose |reference| is at
  // least 1 (below it the output's absolute rounding dominates).
  double max_rel_error = 0;
  uint64_t elements_over_bound = 0;
  uint64_t elements = 0;
  // Elements whose bound is +infinity: the output may overflow there, so they
  // pass whatever C holds (the random inputs keep this at 0).
  uint64_t unbounded_elements = 0;
  QuantPath path = QuantPath::kFixpipe;
  std::string path_name;   // QuantPathName(path)
  std::string bound_rule;  // the bound's rule for the path, in words
};

// Returns "fixpipe", "vector_epilogue", "per_block", "mx" or "int32_output".
std::string QuantPathName(QuantPath path);

// Checks the problem (CANN's parse: kInvalidArgument naming the request
// field) and that every tensor of `operands` has the dtype, shape and byte
// count the problem gives it: a (x1) and b (x2) ShapesOf(problem).a / .b;
// the bias problem.quant.bias_shape (or [n]), present exactly when
// problem.has_bias; no x3; scale, pertoken_scale and offset
// problem.quant.scale / .pertoken / .offset, each present exactly when the
// problem's spec is. kInvalidArgument names the tensor: "scale: required
// (problem.quant.scale)", "pertoken: given, but problem.quant.pertoken.present
// is false", "scale: shape [7], expected [8] (problem.quant.scale.shape)".
// kUnimplemented for the layouts the file comment lists.
absl::Status CheckQuantInputs(const tiling::MatmulProblem& problem, const Tensors& operands);

// Returns random operands for `problem`, deterministically for `seed` on
// every platform (splitmix64 and DrawQuantValues(), no std distributions):
// a (x1), b (x2), and those of the bias, scale, pertoken_scale and offset
// the problem has (never x3).
//   * x1, x2: DrawQuantValues(), every finite code equally likely;
//   * bias: int32 uniform in [-1000, 1000], or floats uniform in [-1, 1)
//     (multiples of 2^-23) rounded to the bias dtype;
//   * scales: with max1, max2 the largest magnitudes of x1's and x2's dtypes,
//     x1's scale (pertoken, per-block x1 scale) is f / max1 and x2's scale is
//     f * T / (S * max2), or f * T / (S * max1 * max2) when x1 has no scale,
//     f uniform in [1/2, 1) per value. T = 2^7 and S = sqrt(k) for an int8
//     output (its saturation is modelled exactly, so values may reach it);
//     T = 2^14 and S = k otherwise, so that |y| stays below about 2^14 (plus
//     the bias's share) even for a coherent sum of k maximal products: a
//     float16 y never overflows. float32 values are kept, bfloat16 ones
//     rounded, uint64 / int64 ones packed with PackFixpipeScale() (with the
//     offset when an offset tensor is present: integers in [-8, 8], one value
//     for all columns when the scale is one word). MX (float8_e8m0) scales
//     are powers of two, uniform over the 8 largest at most the magnitude
//     above (exponent codes floor(log2(magnitude)) + 127 - 7 .. + 127), so
//     the same bound holds.
// Precondition: a problem CheckQuantInputs() accepts with these operands
// (otherwise tensors of the problem's shapes with unspecified contents).
Tensors RandomQuantInputs(const tiling::MatmulProblem& problem, uint64_t seed);

// Computes C (ShapesOf(problem).c, dtype problem.dtype_c) of `operands` as
// the kernels do along `schedule` (see the file comment), the units on
// `pool`'s threads: C is bit-identical for any thread count. Errors: those of
// CheckQuantInputs(); QuantMatmulDevice()'s refusals of the values
// (kInvalidArgument, e.g. a bfloat16 bias that is not a bfloat16 value);
// kInternal when the schedule does not cover C exactly once
// (CheckScheduleCoverage(), and a count of the writes of every element) or
// has a unit the quant kernels do not run; kUnimplemented for a split-K
// chunking; kCancelled when `cancelled` (may be null) turns true between
// units.
absl::StatusOr<HostTensor> RunQuantNumerics(const tiling::Schedule& schedule,
                                            const tiling::MatmulProblem& problem,
                                            const Tensors& operands, ThreadPool& pool,
                                            const std::atomic<bool>* cancelled);

// Compares `c` with the fp64 reference of `operands`, every C batch
// (QuantMatmulReference()) under the path's bound (QuantMatmulErrorBound()).
// Errors: those of CheckQuantInputs(), and kInvalidArgument when `c` is not
// ShapesOf(problem).c of problem.dtype_c.
absl::StatusOr<QuantAccuracy> CheckQuantAccuracy(const tiling::MatmulProblem& problem,
                                                 const Tensors& operands, const HostTensor& c);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_QUANT_EMULATION_H_
