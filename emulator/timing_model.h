// Simulated time: executes the per-core instruction streams of program.h.
//
// Every pipe of every core runs its stream in order. An operation starts when
// its pipe is free and every flag it waits on has been set; a waiter resumes
// at max(own time, set time). Operations are processed in (time, core, pipe)
// order, as gem5 orders events by (tick, priority), so simulated time never
// depends on host scheduling. Shared resources are the chip-wide DDR and L2
// channels, granted in that same order, and an LRU model of L2 that decides
// hits by footprint. A wait that can never be satisfied is a deadlock report
// naming the core, pipe and flag.
#ifndef NPU_EMULATOR_TIMING_MODEL_H_
#define NPU_EMULATOR_TIMING_MODEL_H_

#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"
#include "emulator/chip.h"
#include "emulator/program.h"
#include "emulator/stats.h"

namespace npu::emu {

struct TimingOptions {
  const std::atomic<bool>* cancelled = nullptr;  // checked every few thousand events
  uint64_t max_events = 0;                        // 0: unlimited
  // For the utilization figure: useful MACs and the operand type.
  uint64_t useful_macs = 0;
  tiling::DataType dtype = tiling::DataType::kFloat16;
  bool hf32 = false;
};

// Runs `programs` to completion. kInternal on deadlock, kCancelled when
// `cancelled` becomes true, kResourceExhausted past `max_events`.
absl::StatusOr<EmulatorStats> RunTiming(const ProgramSet& programs, const ChipModel& chip,
                                        const TimingOptions& options);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_TIMING_MODEL_H_
