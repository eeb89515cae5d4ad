// The emulator's check that a plan's buffers fit the chip.
//
// `CheckBuffers()` runs before the instruction streams are built: an
// explicit plan whose blocks overflow a buffer is a user error that must name
// the tiling field at fault, not a hazard the timing discovers. The cube
// buffers (L0A / L0B / L0C / bias table / L1) use the formulas the engine's
// CheckPlanFits() shares (server/tiling/plan_fit.h); the Stream-K
// reduction's UB and the workspace slots are checked on the expanded
// schedule. Part of `npu_emulator`.
#ifndef NPU_EMULATOR_BUFFERS_H_
#define NPU_EMULATOR_BUFFERS_H_

#include "absl/status/status.h"
#include "emulator/chip.h"
#include "server/tiling/schedule.h"
#include "server/tiling/types.h"

namespace npu::emu {

// Checks the plan's buffers against the chip (L0A/L0B ping-pong, L0C, L1
// stages or the full-loaded matrix or the resident band, bias table, UB for
// the Stream-K reduction, the workspace). kInvalidArgument names the field.
absl::Status CheckBuffers(const tiling::Schedule& schedule, const tiling::TilingPlan& plan,
                          const tiling::MatmulProblem& problem, const ChipModel& chip);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_BUFFERS_H_
