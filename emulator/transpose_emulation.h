// TransposeBatchMatMul and TransposeQuantBatchMatMul on the emulator: the
// glue between their problems (y = permute(x1) @ permute(x2), TransposeAttrs
// in tiling/types.h), their tensors as stored, and the batched matmuls the
// emulator already computes. Part of `npu_emulator`.
//
// Vocabulary: the *logical* problem is the batched matmul the operator
// computes, x1 [batch, m, k], x2 [batch, k, n] ([batch, n, k] for perm_x2
// [0, 2, 1], read transposed), y [batch, m, n]: a BatchMatMulV3 problem for
// TransposeBatchMatMul, a QuantBatchMatmulV3 one for TransposeQuantBatchMatMul
// (its FP8 mode the per-token vector-epilogue path, MXFP8 the MX path,
// HIFP8 the fixpipe per-channel path: the paths quant_numerics.h models).
// The *stored* tensors are the user's: x1 [m, batch, k] for perm_x1
// [1, 0, 2], y [m, batch, n] (or the batch-split [f, m, batch / f * n]), the
// MXFP8 x1 scale [m, batch, g, 2] (tiling::TransposeLayout).
//
// How C is computed: x1 is read row by row through the kernels' strided
// offsets (TransposeLayout::X1Offset), the logical matmul runs along the
// plan's schedule with the numerics of its path, and y is written row by
// row through the kernels' output offsets (YOffset). TransposeBatchMatMul's
// int8 y is the fixpipe's: the fp32 accumulator times the column's
// dequantization word (PackFixpipeScale()), rounded and saturated
// (FixpipeToInt8()).
#ifndef NPU_EMULATOR_TRANSPOSE_EMULATION_H_
#define NPU_EMULATOR_TRANSPOSE_EMULATION_H_

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

// Whether `problem` is a transposed batch matmul's.
bool IsTransposed(const tiling::MatmulProblem& problem);

// The logical problem of `problem` (see the file comment). `for_numerics`
// turns an int8 y into the fp32 accumulator the fixpipe quantizes, and an
// NZ x2 into its ND layout (its values travel in ND).
tiling::MatmulProblem LogicalProblem(const tiling::MatmulProblem& problem, bool for_numerics);

// The stored shapes: a x1, b x2, c y (empty bias and x3).
OperandShapes TransposedShapes(const tiling::MatmulProblem& problem);

// Checks the stored tensors against the problem: x1, x2 (dtype, shape,
// bytes); TransposeBatchMatMul's int8 y scale (Tensors::scale, problem
// transpose.scale); TransposeQuantBatchMatMul's x1 and x2 scales
// (Tensors::pertoken_scale and scale, problem.quant). kInvalidArgument
// names the tensor.
absl::Status CheckTransposedInputs(const tiling::MatmulProblem& problem, const Tensors& inputs);

// Random stored tensors for `problem`, deterministic for `seed`: those of
// RandomInputs() / RandomQuantInputs() for the logical problem, stored
// through the perms; an int8 y's scale words draw f * 64 / sqrt(k), f in
// [1/2, 1), per column (so that y mostly stays inside int8, its saturation
// modelled exactly).
Tensors RandomTransposedInputs(const tiling::MatmulProblem& problem, uint64_t seed);

// The logical tensors of the stored ones: x1 gathered through its perm, the
// MXFP8 x1 scale [m, batch, g, 2] as [batch, m, g, 2]; the int8 y's scale is
// dropped (the caller applies it).
Tensors LogicalInputs(const tiling::MatmulProblem& problem, const Tensors& stored);

// y as stored from the logical C [batch, m, n] (each row written through
// YOffset), and back.
HostTensor StoredOutput(const tiling::MatmulProblem& problem, const HostTensor& logical);
HostTensor LogicalOutput(const tiling::MatmulProblem& problem, const HostTensor& stored);

// Computes y as stored (TransposedShapes().c of problem.dtype_c) along
// `schedule` (tiling::ExpandTileLoops() of the problem): bit-identical for
// any thread count. Errors as RunNumerics() / RunQuantNumerics() of the
// logical problem; kUnimplemented for a dtype set the logical paths do not
// take (QuantBatchMatmulV3's parse refuses the logical problem).
absl::StatusOr<HostTensor> RunTransposedNumerics(const tiling::Schedule& schedule,
                                                 const tiling::MatmulProblem& problem,
                                                 const Tensors& inputs, ThreadPool& pool,
                                                 const std::atomic<bool>* cancelled);

// Compares the stored y `c` with the fp64 reference of the stored inputs, as
// CompareWithReference() does for the logical problem (the worst index runs
// over the logical [batch, m, n]). An int8 y passes an element when it lies
// between the fixpipe's output stage of reference - e and reference + e,
// with e the accumulation bound times the column's scale.
absl::StatusOr<AccuracyReport> CheckTransposedAccuracy(const tiling::MatmulProblem& problem,
                                                       const Tensors& inputs, const HostTensor& c,
                                                       int threads,
                                                       const std::atomic<bool>* cancelled);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_TRANSPOSE_EMULATION_H_
