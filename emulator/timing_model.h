// Simulated time: executes the per-core instruction streams of program.h.
//
// Every pipe of every core runs its stream in order. An operation starts when
// its pipe is free and every flag it waits on has been set; a waiter resumes
// at max(own time, set time). Operations are processed in (time, core, pipe)
// order, as gem5 orders events by (tick, priority), so simulated time never
// depends on host scheduling. GM bandwidth is shared evenly: each core that
// runs work reads at its MTE2 port rate or its share of the chip's L2 / HBM
// mix (the L2 hit share comes from the schedule, l2_traffic.h), whichever is
// lower, so a core's timeline depends on its own instructions only. A GM
// read nothing prefetched streams at the lower latency-bound rate. The run
// is framed by the launch and end-of-task costs.
// A wait that can never be satisfied is a deadlock report naming the core,
// pipe and flag. A program that stands for several identical cores
// (CoreProgram::replicas) is simulated once: its statistics are reported for
// each of those cores, and its operations and traffic count once per core, so
// the result, the event count and the work limit are those of simulating
// every core.
#ifndef NPU_EMULATOR_TIMING_MODEL_H_
#define NPU_EMULATOR_TIMING_MODEL_H_

#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"
#include "emulator/chip.h"
#include "emulator/program.h"
#include "emulator/stats.h"

namespace npu::emu {

// Separate DDR read and write bandwidth (seeds/001 section 6, item 5: CANN's
// roofline and the default model charge one shared DDR rate to reads only,
// and let L2 absorb every write). When enabled, DDR has a read port and a
// write port, both drawing on the shared DDR total: a read miss finishes
// when its port and the total have carried it, and every GM write is also
// written back to DDR through the write port and the total, finishing when
// the write-back does. Rates are bytes per cycle per cube core, like
// ChipSpec::ddr_bytes_per_cycle (CANN's platform files list ddr_read_rate and
// ddr_write_rate beside ddr_rate); 0 takes ddr_bytes_per_cycle.
struct GmReadWriteSplit {
  bool enabled = false;
  uint32_t read_bytes_per_cycle = 0;
  uint32_t write_bytes_per_cycle = 0;
};

// GM reads of the run as the L2 sees them: bytes served by L2 and bytes
// that missed it (l2_traffic.h estimates them from the schedule).
struct GmReadMix {
  uint64_t l2_read_bytes = 0;
  uint64_t ddr_read_bytes = 0;
  // Share of read bytes L2 serves; 0 when nothing is read.
  double HitFraction() const {
    const uint64_t total = l2_read_bytes + ddr_read_bytes;
    return total == 0 ? 0.0 : static_cast<double>(l2_read_bytes) / static_cast<double>(total);
  }
};

struct TimingOptions {
  const std::atomic<bool>* cancelled = nullptr;  // checked every few thousand events
  // Operations of all cores, replicas included; 0: unlimited.
  uint64_t max_events = 0;
  // For the utilization figure: useful MACs and the operand type.
  uint64_t useful_macs = 0;
  tiling::DataType dtype = tiling::DataType::kFloat16;
  bool hf32 = false;
  GmReadWriteSplit gm_split;
  GmReadMix read_mix;
};

// Runs `programs` to completion. kInternal on deadlock, kCancelled when
// `cancelled` becomes true, kResourceExhausted past `max_events`.
absl::StatusOr<EmulatorStats> RunTiming(const ProgramSet& programs, const ChipModel& chip,
                                        const TimingOptions& options);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_TIMING_MODEL_H_
