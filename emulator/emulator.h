// The emulator's entry point: run a tiling plan on a model of the chip.
//
// `Emulate()` answers "does this tiling compute the right result, and how
// long would it take?" without the device. It expands the plan into per-core
// work units (tiling/schedule.h), checks the buffers the plan asks for,
// builds every core's pipe instruction streams (program.h), runs them in
// simulated time (timing_model.h) and, unless timing-only, computes C with
// the device's numerics on a pool of host threads (numerics.h). The library
// (`npu_emulator`) depends on the tiling value types only; the service turns
// its result into a response.
//
// Status codes: kInvalidArgument for inputs that do not match the problem or
// a plan whose buffers do not fit (naming the tiling field); kInternal for a
// kernel fault (deadlock, L0C hazard, a schedule that misses part of C);
// kFailedPrecondition for a Stream-K plan on a shape without a tail round;
// kCancelled and kResourceExhausted for the cancellation flag and the work
// limits; kUnimplemented for layouts the emulator does not model.
#ifndef NPU_EMULATOR_EMULATOR_H_
#define NPU_EMULATOR_EMULATOR_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "emulator/kernel_schedule.h"
#include "emulator/numerics.h"
#include "emulator/program.h"
#include "emulator/stats.h"
#include "emulator/timing_model.h"
#include "server/tiling/schedule.h"
#include "server/tiling/types.h"

namespace npu::emu {

// Operands as stored: A is [m, k] ([k, m] when trans_a), B is [k, n] ([n, k]
// when trans_b), the optional bias is [n]. A batched problem prefixes A and
// B with their batch dims (problem.batch.a, .b) and the bias with problem.batch.bias;
// FusedMatMul's add / mul read x3 of problem.fused.x3_shape ([m, n] when empty).
// The shapes are OperandShapes()'s.
struct Tensors {
  HostTensor a;
  HostTensor b;
  std::optional<HostTensor> bias;
  std::optional<HostTensor> x3;
  // QuantBatchMatmulV3 (a is x1, b is x2, the bias of problem.quant.bias_shape):
  // its scale, pertoken_scale and offset as problem.quant describes them.
  std::optional<HostTensor> scale, pertoken_scale, offset;
  // GroupedMatmul (grouped_emulation.h): each input list's tensors, by
  // tiling::GroupedTensor, one per instance of the problem's list; a, b and
  // the members above stay empty.
  std::array<std::vector<HostTensor>, tiling::kGroupedTensorCount> grouped;
};

// The shapes the emulator expects of A, B, the bias, x3 and C for `problem`
// (x3 empty unless the problem's fused op reads it).
struct OperandShapes {
  std::vector<int64_t> a, b, bias, x3, c;
};
OperandShapes ShapesOf(const tiling::MatmulProblem& problem);

// What the emulator models of a problem's layout: ND operands (and
// QuantBatchMatmulV3's FRACTAL_NZ x2, given in its ND layout), contiguous
// A, no transposed batch views. UNIMPLEMENTED naming the field otherwise
// (the code ExecuteRequest documents). Execute, the emulator's own entry
// points and the advisor's variants all ask this one check.
absl::Status CheckModelled(const tiling::MatmulProblem& problem);

struct EmulatorOptions {
  int threads = 1;           // host threads for the numerics
  bool timing_only = false;  // skip the numerics; `inputs` may be empty
  FaultInjection faults;
  // Checked between units and every few thousand simulated operations; when
  // it turns true Emulate() returns kCancelled promptly.
  const std::atomic<bool>* cancelled = nullptr;
  // Work limits (kResourceExhausted past them); 0 disables a limit. The
  // operations are counted for every core, also where cores with identical
  // programs are simulated once.
  uint64_t max_simulated_ops = 100'000'000;
  uint64_t max_numeric_macs = uint64_t{1} << 40;
  // Separate DDR read / write bandwidth in the timing (timing_model.h); off
  // keeps the default model.
  GmReadWriteSplit gm_split;
  // Timing figures to use instead of the chip architecture's calibrated
  // ones (chip.h ArchTimingFor()): for what-if studies and refitting.
  std::optional<ArchTiming> arch_timing;
  // Simulate every core's own program. Off, cores with identical programs
  // that share no flag with other cores are simulated once (program.h);
  // the results are the same, so this only serves to check that shortcut.
  bool simulate_every_core = false;
};

struct EmulationResult {
  // ShapesOf(problem).c of problem.dtype_c (GroupedMatmul: y); empty when
  // timing-only.
  HostTensor c;
  EmulatorStats stats;
  tiling::Schedule schedule;
};

// Emulates `plan` for `problem` on `chip`.
absl::StatusOr<EmulationResult> Emulate(const tiling::TilingPlan& plan,
                                        const tiling::MatmulProblem& problem,
                                        const tiling::ChipSpec& chip, const Tensors& inputs,
                                        const EmulatorOptions& options);

// Emulates a hand-written kernel's schedule (kernel_schedule.h) for
// `problem` on `chip`: validated field by field, expanded, then timed and
// (unless timing-only) computed exactly as Emulate() does. A FRACTAL_NZ
// `b_format` changes only how B is loaded: `inputs.b` holds B's values in
// its ND layout, which NZ merely permutes.
absl::StatusOr<EmulationResult> EmulateKernel(const KernelSchedule& kernel,
                                              const tiling::MatmulProblem& problem,
                                              const tiling::ChipSpec& chip, const Tensors& inputs,
                                              const EmulatorOptions& options);

// `reference` (ReferenceMatmul()'s C) with the kernel's epilogue applied,
// to hold an EmulateKernel() result against.
void ApplyEpilogue(Epilogue epilogue, std::vector<double>& reference);

// Operands drawn uniformly from [-1, 1) by a fixed generator seeded with
// `seed`, rounded to the problem's dtypes.
Tensors RandomInputs(const tiling::MatmulProblem& problem, uint64_t seed);

// The host library behind the numerics' fp32 block products and the kernel
// it picked for this CPU, e.g. "OpenBLAS Haswell" (OPENBLAS_CORETYPE
// overrides the pick).
std::string NumericsBackendName();

// C in fp64 from the operands as given (hf32 rounding applied when the
// problem asks), row-major [m, n]; for a batched problem the batches of C
// stacked (NumPy broadcast of A's and B's batch dims, the bias row of each
// batch), and FusedMatMul's epilogue applied in fp64 (with x3 broadcast
// over the batches when it has none).
std::vector<double> ReferenceMatmul(const tiling::MatmulProblem& problem, const Tensors& inputs);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_EMULATOR_H_
