// An explicit tiling from the wire, turned back into the engine's plan.
//
// Execute can run a tiling the caller wrote instead of the engine's answer:
// a TilingResponse as GetTiling returns it (`tilingctl tile --json`), perhaps
// edited by hand ("what if baseM were 128?"). The kernel only sees the tiling
// key, the launch facts and the named fields of its tiling-data struct, so
// those are what this file reads; it rebuilds the `TilingPlan` the emulator
// executes from them, and checks first everything the emulator must be able
// to rely on: every field of the struct present once and in range, the key
// consistent with itself, the struct and the problem, the launch within the
// chip. Buffer fits and kernel faults are left to the emulator, which names
// the tiling field that overflows.
//
// Every error is kInvalidArgument and starts with the wire path of the field,
// e.g. "tiling.fields[baseM]: ...". Service layer: the only place that knows
// both the proto and the engine's types (with convert.h).
#ifndef NPU_SERVER_SERVICE_EXPLICIT_TILING_H_
#define NPU_SERVER_SERVICE_EXPLICIT_TILING_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/tiling/types.h"

namespace npu::server {

// The plan `tiling` describes for `problem` on `chip` (the chip the request
// resolved to), after the checks listed in the proto's ExecuteRequest.tiling.
// The plan's strategy is the tiling's `strategy` (or "EXPLICIT") and its
// detail says it is an explicit tiling. The block members that are not
// tiling-data fields (steps, depths, single-core M / N, k_cnt) are copied
// from `tiling.block`: the kernel never reads them.
absl::StatusOr<npu::tiling::TilingPlan> PlanFromExplicitTiling(
    const npu::tiling::v1::TilingResponse& tiling, const npu::tiling::MatmulProblem& problem,
    const npu::tiling::ChipSpec& chip);

// The chip `tiling.platform` describes, checked like a platform with
// overrides ("tiling.platform: ..." on error). An empty npu_arch (an answer
// from before the field existed) means DAV_3510.
absl::StatusOr<npu::tiling::ChipSpec> ChipFromProto(const npu::tiling::v1::ChipSpec& chip);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_EXPLICIT_TILING_H_
