// The emulator's answer to "did this tiling compute the right C?": the
// emulated C against an fp64 reference computed from the same operands.
//
// `ReferenceMatmul()` (emulator.h) is the plain definition; this file is the
// check the service runs on every Execute, so it is built for that: the
// reference and the error bound are computed in one pass, rows in parallel on
// the emulator's host thread pool, and the pass stops promptly when the
// caller's cancellation flag turns true. Part of `npu_emulator` (tiling value
// types only).
//
// The bound is the one the dtypes imply. Per element
//   bound = u_out * |ref| + 2 * (k + 2) * u_acc * (sum_p |a_p * b_p| + |bias|)
//           + the smallest positive subnormal of dtype_c
// where u_out is the unit roundoff of C's dtype (the final round-to-nearest
// cast), u_acc = 2^-24 (fp32 accumulation in L0C, fp32 partial sums and their
// reduction: the standard forward bound of recursive summation, with slack
// for the two extra additions of the bias and the split-K partials), and the
// subnormal term absorbs the cast's absolute error near zero.
#ifndef NPU_EMULATOR_ACCURACY_H_
#define NPU_EMULATOR_ACCURACY_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "emulator/emulator.h"
#include "emulator/numerics.h"
#include "server/tiling/types.h"

namespace npu::emu {

// Unit roundoff (half an ulp of 1) of `dtype`: 2^-11, 2^-8 or 2^-24.
double UnitRoundoff(tiling::DataType dtype);
// FusedMatMul's epilogue `op` applied in fp64 to the matmul's value `mm` (x3
// is read by add and mul only): the one fp64 definition that the reference
// (ReferenceMatmul) and the accuracy check share.
double EpilogueFp64(tiling::FusedOp op, double mm, double x3);

// The fp32 accumulation's unit roundoff used in the bound.
inline constexpr double kAccumulationUnitRoundoff = 1.0 / 16777216.0;  // 2^-24

struct AccuracyReport {
  double max_abs_error = 0;
  // Over elements whose |ref| is at least the smallest normal of dtype_c.
  double max_rel_error = 0;
  // The element with the largest |C - ref| / bound: its bound and ratio.
  double error_bound = 0;
  double worst_bound_ratio = 0;
  uint64_t worst_index = 0;  // row-major index into C
  uint64_t elements_over_bound = 0;
  bool passed = true;
  double output_unit_roundoff = 0;
  double accumulation_unit_roundoff = kAccumulationUnitRoundoff;
  // QuantBatchMatmulV3: the dequantization path and its bound's rule in
  // words (quant_numerics.h QuantMatmulErrorBound()); empty for the float
  // operators, whose bound is u_out and u_acc above.
  std::string bound_rule;
};

// Compares `c` ([m, n] of problem.dtype_c) with the fp64 reference of
// `inputs` on `threads` host threads (0 or 1: the calling thread). An
// infinite C element matches a reference of the same sign beyond dtype_c's
// largest finite value; NaN matches NaN. kInvalidArgument when `c` or the
// inputs do not have the problem's shapes; kCancelled when `cancelled` turns
// true (checked once per row). `epilogue` is the kernel's (a ReLU clamps the
// reference as it clamps C). QuantBatchMatmulV3's C is held against
// CheckQuantAccuracy() (quant_emulation.h): an exact or fp64 reference with
// the bound of its dequantization path.
absl::StatusOr<AccuracyReport> CompareWithReference(const tiling::MatmulProblem& problem,
                                                    const Tensors& inputs, const HostTensor& c,
                                                    int threads, const std::atomic<bool>* cancelled,
                                                    Epilogue epilogue = Epilogue::kNone);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_ACCURACY_H_
