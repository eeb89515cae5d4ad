// Hand-written kernel schedules (emulator/kernel_schedule.h) the emulator
// tests share: the published kernels of tests/data/calibration.
#ifndef NPU_TESTS_TESTING_KERNEL_SCHEDULES_H_
#define NPU_TESTS_TESTING_KERNEL_SCHEDULES_H_

#include <cstdint>
#include <vector>

#include "emulator/kernel_schedule.h"
#include "server/tiling/types.h"

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

// An MXFP4 QuantBatchMatmulV3 problem as the MX samples run it: fp4 A
// [m, k] and B (stored [n, k] when trans_b), e8m0 scales per 32 K values on
// both, bf16 C.
inline tiling::MatmulProblem MxFp4Problem(int64_t m, int64_t n, int64_t k, bool trans_b = true) {
  tiling::MatmulProblem p;
  p.op = tiling::MatmulOp::kQuantBatchMatmulV3;
  p.m = m;
  p.n = n;
  p.k = k;
  p.trans_b = trans_b;
  p.dtype_a = p.dtype_b = tiling::DataType::kFloat4E2M1;
  p.dtype_c = tiling::DataType::kBFloat16;
  const int64_t pairs = (k + 63) / 64;
  p.quant.scale.present = true;
  p.quant.scale.dtype = tiling::DataType::kFloat8E8M0;
  p.quant.scale.shape =
      trans_b ? std::vector<int64_t>{n, pairs, 2} : std::vector<int64_t>{pairs, n, 2};
  p.quant.pertoken.present = true;
  p.quant.pertoken.dtype = tiling::DataType::kFloat8E8M0;
  p.quant.pertoken.shape = {m, pairs, 2};
  p.quant.group_size_m = p.quant.group_size_n = 1;
  p.quant.group_size_k = 32;
  return p;
}

// An int8 QuantBatchMatmulV3 problem with a float32 scale per column and
// per row (W8A8 per-channel x per-token), fp16 C.
inline tiling::MatmulProblem W8A8Problem(int64_t m, int64_t n, int64_t k) {
  tiling::MatmulProblem p;
  p.op = tiling::MatmulOp::kQuantBatchMatmulV3;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_b = tiling::DataType::kInt8;
  p.dtype_c = tiling::DataType::kFloat16;
  p.quant.scale.present = true;
  p.quant.scale.dtype = tiling::DataType::kFloat32;
  p.quant.scale.shape = {n};
  p.quant.pertoken.present = true;
  p.quant.pertoken.dtype = tiling::DataType::kFloat32;
  p.quant.pertoken.shape = {m};
  return p;
}

// asc-devkit's MXFP4 basic-API kernel (8192^3 on the 950PR): a static 4 x 8
// grid of 2048 x 1024 blocks, 256 x 256 x 256 base tiles, A / B packs of
// 512 K and scale packs of 2048 K, each ping-pong.
inline emu::KernelSchedule MxBasicApiKernel() {
  emu::KernelSchedule kernel;
  kernel.kind = emu::KernelScheduleKind::kStaticGrid;
  kernel.block_dim = 32;
  kernel.base_m = kernel.base_n = kernel.base_k = 256;
  kernel.l1_m = kernel.l1_n = 256;
  kernel.l1_k = 512;
  kernel.single_core_m = 2048;
  kernel.single_core_n = 1024;
  kernel.inner_order = emu::TileOrder::kColMajor;
  kernel.scale_l1_k = 2048;
  kernel.l1_bank_split = emu::L1BankSplit::kAB;
  return kernel;
}

// asc-devkit's int8 grouped matmul (quant_group_matmul_high_performance,
// scenario 2): 8 groups of 1024 rows, blocks of 256 x 1024 dealt
// round-robin across the groups, int32 through a 4-slot GM workspace to two
// AIVs per AIC alternating 24-row passes of dequant and GELU.
inline emu::KernelSchedule GroupedW8A8Kernel(uint32_t aivs = 2, uint32_t slots = 4) {
  emu::KernelSchedule kernel;
  kernel.kind = emu::KernelScheduleKind::kGroupedRoundRobin;
  kernel.block_dim = 32;
  kernel.base_m = kernel.base_n = 256;
  kernel.base_k = 128;
  kernel.l1_m = kernel.l1_n = 256;
  kernel.l1_k = 512;
  kernel.single_core_m = 256;
  kernel.single_core_n = 1024;
  kernel.unit_flag = true;
  kernel.mdl = true;
  kernel.b_format = tiling::Format::kFractalNz;
  kernel.epilogue = emu::Epilogue::kDequantGeluAiv;
  kernel.aiv_per_aic = aivs;
  kernel.workspace_slots = slots;
  kernel.aiv_tile_rows = 24;
  kernel.aiv_tile_cols = 256;
  kernel.aiv_split = aivs == 2 ? emu::AivSplit::kAlternate : emu::AivSplit::kSingle;
  kernel.group_m = std::vector<uint64_t>(8, 1024);
  kernel.b_per_group = true;
  return kernel;
}

}  // namespace npu::testing

#endif  // NPU_TESTS_TESTING_KERNEL_SCHEDULES_H_
