// Hand-written kernel schedules (emulator/kernel_schedule.h) the emulator
// tests share: the published kernels of tests/data/calibration.
#ifndef NPU_TESTS_TESTING_KERNEL_SCHEDULES_H_
#define NPU_TESTS_TESTING_KERNEL_SCHEDULES_H_

#include "emulator/kernel_schedule.h"

namespace npu::testing {

// catlass example 46's kernel: ASWT over 256 x 256 L1 tiles on 32 cores.
inline emu::KernelSchedule CatlassAswt() {
  emu::KernelSchedule kernel;
  kernel.kind = emu::KernelScheduleKind::kAswt;
  kernel.block_dim = 32;
  kernel.base_m = kernel.base_n = 256;
  kernel.base_k = 64;
  kernel.l1_m = kernel.l1_n = 256;
  kernel.l1_k = 128;
  kernel.unit_flag = true;
  kernel.aswt_window = 4;
  return kernel;
}

}  // namespace npu::testing

#endif  // NPU_TESTS_TESTING_KERNEL_SCHEDULES_H_
