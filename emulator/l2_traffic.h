// Which GM reads of a schedule L2 serves, estimated before the timing runs.
//
// The chip's L2 keeps what was read or written recently; a read of data
// still resident is served at L2 bandwidth, the rest comes from HBM. The
// estimate walks the schedule's work units in launch order (round by round,
// the cores of a round side by side as they run concurrently, each unit's
// K range in a few parts so that cores walking K together share) through a
// least-recently-used model of L2 whose entries are the operand panels a
// unit reads (its A rows and B columns over its K range, or the whole matrix
// / band a resident operand loads), the C tiles and partial sums it writes.
// Re-reads inside a unit (A per base-block column, B per base-block row) hit.
// Deciding hits from the schedule rather than from simulated time keeps
// every core's timeline independent of the others. Part of `npu_emulator`.
#ifndef NPU_EMULATOR_L2_TRAFFIC_H_
#define NPU_EMULATOR_L2_TRAFFIC_H_

#include "emulator/timing_model.h"
#include "server/tiling/schedule.h"
#include "server/tiling/types.h"

namespace npu::emu {

// The read bytes of `schedule` that L2 serves and that miss it, for
// `problem` on a chip with `chip.l2_bytes` of L2. With `b_per_group` each
// unit reads the B of its group (WorkUnit::batch) of a grouped GEMM.
GmReadMix EstimateGmReadMix(const tiling::Schedule& schedule, const tiling::MatmulProblem& problem,
                            const tiling::ChipSpec& chip, bool b_per_group = false);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_L2_TRAFFIC_H_
