// Plain statistics of one emulation (gem5 style): filled by the emulator,
// never exported by it. The service maps them to its response and to
// low-cardinality metrics.
#ifndef NPU_EMULATOR_STATS_H_
#define NPU_EMULATOR_STATS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "emulator/chip.h"
#include "server/tiling/schedule.h"

namespace npu::emu {

struct CoreStats {
  tiling::CoreKind kind = tiling::CoreKind::kAic;
  uint32_t core = 0;
  uint32_t units = 0;         // work units the core ran
  uint64_t finish_cycle = 0;  // when its last pipe went idle
  // Busy cycles per pipe, indexed by Pipe; unused pipes stay 0.
  std::array<uint64_t, kPipeCount> pipe_busy_cycles{};
};

// Bytes moved per level of the memory hierarchy.
struct TrafficStats {
  uint64_t ddr_read_bytes = 0;   // GM reads that missed L2
  uint64_t l2_read_bytes = 0;    // GM reads served by L2
  uint64_t gm_write_bytes = 0;   // C, partial sums (absorbed by L2)
  uint64_t ddr_write_bytes = 0;  // written back to DDR (GmReadWriteSplit only)
  uint64_t l1_to_l0_bytes = 0;   // MTE1
  uint64_t l0c_out_bytes = 0;    // FIXPIPE
  uint64_t ub_in_bytes = 0;      // AIV MTE2
  uint64_t ub_out_bytes = 0;     // AIV MTE3
  uint64_t workspace_bytes = 0;  // partial-sum traffic (write + read)
};

// The run as msprof's op_summary reports it, the figures Ascend engineers
// read: Task Duration, and per AIC pipe the microseconds it was busy,
// averaged over the cube cores that ran (msprof's aic_*_time), with its
// ratio to the average core time (aic_*_ratio); the same for the AIV pipes.
struct MsprofSummary {
  double task_duration_us = 0;  // launch to end-of-task report
  double aic_time_us = 0;       // average AIC execution time (first op to last)
  double aic_mac_time_us = 0;
  double aic_mte1_time_us = 0;
  double aic_mte2_time_us = 0;
  double aic_fixpipe_time_us = 0;
  double aic_mac_ratio = 0;  // aic_mac_time_us / aic_time_us
  double aic_mte1_ratio = 0;
  double aic_mte2_ratio = 0;
  double aic_fixpipe_ratio = 0;
  uint32_t aic_cores = 0;  // cube cores that ran work
  double aiv_time_us = 0;
  double aiv_vec_time_us = 0;
  double aiv_mte2_time_us = 0;
  double aiv_mte3_time_us = 0;
  double aiv_vec_ratio = 0;
  double aiv_mte2_ratio = 0;
  double aiv_mte3_ratio = 0;
  uint32_t aiv_cores = 0;  // vector cores that ran work
};

struct EmulatorStats {
  // The task: launch, kernel prologue, the cores' instructions, end-of-task
  // report (chip.h ArchTiming).
  uint64_t total_cycles = 0;
  // From the first instruction to the last core's end.
  uint64_t kernel_cycles = 0;
  double microseconds = 0;
  // Useful MACs over the cube peak of the launched AIC cores for the run.
  double cube_utilization = 0;
  std::vector<CoreStats> cores;  // AIC cores first, then AIV
  // Busy cycles summed over cores, indexed by Pipe.
  std::array<uint64_t, kPipeCount> pipe_busy_cycles{};
  uint64_t ddr_channel_busy_cycles = 0;
  uint64_t l2_channel_busy_cycles = 0;
  uint64_t ddr_write_channel_busy_cycles = 0;  // GmReadWriteSplit only
  TrafficStats traffic;
  // The resource closest to saturation: "CUBE", "MTE1", "MTE2", "FIXPIPE",
  // "VEC", "MTE3", "DDR" or "L2".
  std::string bound;
  uint64_t events = 0;  // simulated pipe operations
  MsprofSummary msprof;
};

}  // namespace npu::emu

#endif  // NPU_EMULATOR_STATS_H_
