// Conversions between the wire and the emulator's kernel-facing types: a
// hand-written kernel's schedule (npu.tiling.v1.KernelSchedule <->
// npu::emu::KernelSchedule) and the msprof summary of a run.
//
// Execute with a `kernel_schedule` checks the message here, field by field
// and without the problem or the chip (enum values, required fields, wire
// ranges), then hands the converted schedule to the emulator's
// ValidateKernelSchedule(), which checks it against the problem and the chip.
// Both name the field as "kernel_schedule.<field>". Part of `npu_service`.
#ifndef NPU_SERVER_SERVICE_KERNEL_CONVERT_H_
#define NPU_SERVER_SERVICE_KERNEL_CONVERT_H_

#include "absl/status/statusor.h"
#include "emulator/kernel_schedule.h"
#include "emulator/stats.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/tiling/types.h"

namespace npu::server {

// The emulator's schedule for `schedule`, with the wire's defaults applied
// (0 depths, swizzle offset, window and splits, an absent l0_double_buffer,
// UNSPECIFIED order, epilogue and format). kInvalidArgument naming
// "kernel_schedule.<field>" for an UNSPECIFIED or unknown kind, an unknown
// enum value, a block_dim of 0 with a kind other than SINGLE_CORE, a size
// above npu::tiling::kMaxDim, a depth other than 0, 1 or 2, a swizzle
// direction other than 0 or 1, or sk_k_splits of 1.
absl::StatusOr<npu::emu::KernelSchedule> KernelScheduleFromProto(
    const npu::tiling::v1::KernelSchedule& schedule);

// The wire form of `schedule`, every field set explicitly (the echo of what
// ran).
npu::tiling::v1::KernelSchedule KernelScheduleToProto(const npu::emu::KernelSchedule& schedule);

// A plan that stands for `schedule` in the emulator's work estimate
// (work_estimate.h): the same base and L1 tiles and cores, and for
// STREAM_K_DP the K slices of its split tiles, so that Execute refuses a
// kernel too costly to emulate by the same estimate and limit as a CANN
// plan. Not a plan to run.
npu::tiling::TilingPlan WorkEstimatePlan(const npu::emu::KernelSchedule& schedule,
                                         const npu::tiling::MatmulProblem& problem);

// Copies `summary` into `out`.
void MsprofToProto(const npu::emu::MsprofSummary& summary, npu::tiling::v1::MsprofSummary* out);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_KERNEL_CONVERT_H_
