// How much work emulating a plan takes, estimated from the plan alone.
//
// Emulation cost grows with the pipe operations the instruction streams hold
// (program.h), which a tiny block on a huge problem makes astronomical. The
// service refuses such Execute requests and the advisor skips such variants
// before anything is expanded, both by this one estimate. Part of
// `npu_emulator`.
#ifndef NPU_EMULATOR_WORK_ESTIMATE_H_
#define NPU_EMULATOR_WORK_ESTIMATE_H_

#include <cstdint>
#include <string>

#include "server/tiling/types.h"

namespace npu::emu {

// How much work emulating a plan takes, estimated from the plan alone
// (before anything is expanded). Products saturate at 2^64 - 1.
struct EmulationWork {
  // Cube plans: base blocks of C and base_k steps of each (at least 1);
  // vector plans: 0.
  uint64_t base_blocks = 0;
  uint64_t k_steps = 0;
  // Work units: L1 tiles, Stream-K K slices, or vector units.
  uint64_t units = 0;
  // A lower bound on the pipe operations BuildPrograms() emits: one MMAD per
  // base block and K step, at least one operation per unit.
  uint64_t min_ops = 0;
  // A first-order count of them: per base block and K step one MTE1, one
  // MMAD and about one GM load; one output per unit.
  uint64_t expected_ops = 0;
  // What bounds min_ops, e.g. "4096 base blocks x 16 K steps".
  std::string why;
};

// Estimates the work of emulating `plan` for `problem`. Used to refuse (or
// not time) plans too costly to emulate before they are expanded.
EmulationWork EstimateEmulationWork(const tiling::TilingPlan& plan,
                                    const tiling::MatmulProblem& problem);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_WORK_ESTIMATE_H_
