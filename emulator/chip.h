// The emulated chip: per-core buffers, pipes and the rates that time them.
//
// `ChipModel` is derived once from a `tiling::ChipSpec` (the same profile the
// tiling engine plans for) plus the constants below, which the spec does not
// carry. It is the only place the emulator's timing numbers come from; every
// constant names its source. Part of `npu_emulator`, which depends on the
// tiling value types only.
#ifndef NPU_EMULATOR_CHIP_H_
#define NPU_EMULATOR_CHIP_H_

#include <cstdint>
#include <optional>
#include <string>

#include "server/tiling/types.h"

namespace npu::emu {

// Pipes of the two core kinds. AIC: MTE2 (GM -> L1), MTE1 (L1 -> L0A/L0B),
// CUBE (L0A x L0B -> L0C), FIXPIPE (L0C -> GM). AIV: MTE2 (GM -> UB), VEC,
// MTE3 (UB -> GM).
enum class Pipe : uint8_t { kMte2 = 0, kMte1 = 1, kCube = 2, kFixpipe = 3, kVec = 4, kMte3 = 5 };
inline constexpr int kPipeCount = 6;
// "MTE2", "MTE1", "CUBE", "FIXPIPE", "VEC", "MTE3".
std::string PipeName(Pipe pipe);

// The cube's fractal: 16 x 16 outputs per cycle, 16 deep in K for 16-bit
// inputs (16x16x16 = 4096 MACs per cycle per AIC). fp32 operands come in
// 8-deep fractals (k0 = 8) whose rate depends on the architecture; hf32
// issues one 8-deep fractal per cycle. Source: asc-devkit
// docs/zh/api/附录/Cube指令理论性能汇总.md, tables 1 (NpuArch 2201) and 2
// (NpuArch 3510): cube_k 16 for half / bfloat16, 8 for HF32, and for float
// 4 on DAV_2201 but 1 on DAV_3510.
inline constexpr uint64_t kCubeFractalM = 16;
inline constexpr uint64_t kCubeFractalN = 16;
inline constexpr uint64_t kCubeFractalK16 = 16;
inline constexpr uint64_t kCubeFractalK32 = 8;
inline constexpr uint64_t kCubeCyclesPerHf32Fractal = 1;
// A fractal's K row is 32 bytes of input whatever the dtype: 16 deep for
// 16-bit inputs, 8 for fp32, 32 for 8-bit and 64 for 4-bit ones. So the
// cube does 16x32x16 MACs per cycle for int8 (asc-devkit
// quant_group_matmul_high_performance README: "16 x 32 x 16" on both the A2
// and the 950PR) and MXFP8 (cann-samples docs/quant_matmul_mx_performance.md:
// 16 x C0 x 16 with C0 = 32), and 16x64x16 for MX-FP4 (the same document,
// C0 = 64; asc-devkit matmul_mxfp4_*_high_performance READMEs, 950PR).
inline constexpr uint64_t kCubeFractalKBits = 256;
// The K depth of one cube fractal of `dtype` inputs.
uint64_t CubeFractalK(tiling::DataType dtype);

// AIV MTE3 (UB -> GM) per core, bytes per cycle (seeds/001: "MTE1 / MTE3
// 256 BPC").
inline constexpr uint64_t kMte3BytesPerCycle = 256;

// The 950's L1 is two 256 KiB banks, and L1 writes take priority: an MTE1
// read (LoadData L1 -> L0) of a bank MTE2 is writing at the same time
// slows down. cann-samples matmul_story docs/quant_matmul_mxfp4_tutorials.md
// section 5 (m=256, k=4096, n=256) measures the average MTE1 instruction at
// 270 -> 233 cycles (LOAD_2Dv2) and 442 -> 384 (LOAD_MX_2Dv2) once ping and
// pong sit in different banks: +16% and +15% with the conflict.
inline constexpr uint64_t kL1BankBytes = 256 * 1024;
inline constexpr double kL1BankConflictSlowdown = 0.16;

// MX quantization: one float8_e8m0 scale per 32 K values of each row of A
// and column of B (calibration README, "Hardware facts added"), stored in
// pairs along K.
inline constexpr uint64_t kMxScaleGroupK = 32;

// The published figures of one architecture, and the fixed costs the
// calibration found (bench/CALIBRATION.md: each constant, the rows that set
// it and the fit). Huawei writes a transfer's cost as bytes / bandwidth + a
// fixed latency it does not publish; the latencies here are those.
struct ArchTiming {
  // Cube: cycles per 16x16x8 fp32 fractal (k0 / cube_k of the tables above).
  uint64_t cube_cycles_per_fp32_fractal = 0;
  // MTE1 LoadData L1 -> L0A and L1 -> L0B, bytes per cycle (same document,
  // tables 3 and 5).
  uint64_t mte1_l0a_bytes_per_cycle = 0;
  uint64_t mte1_l0b_bytes_per_cycle = 0;
  // FIXPIPE L0C -> GM / UB, bytes per cycle (calibration README, "fixpipe
  // L0C->out 128 B per cycle" on both chips).
  uint64_t fixpipe_bytes_per_cycle = 0;
  // What one core's FIXPIPE writes to GM sustain, GB/s: msprof's
  // aic_fixpipe_time of the tuned 8192^3 kernels gives 124 GB/s on the
  // 950PR (128 KiB tiles in 1.06 us) and 125 GB/s on the A2 (64 KiB in
  // 0.52 us), the same in time on both clocks. Fitted.
  double fixpipe_gm_write_gbps = 0;
  // GM read bandwidth the chip sustains with every core reading, as a
  // fraction of the vendor's HBM figure (asc-devkit add_high_performance
  // README: 1.454 TB/s of 1.6 on 950PR, 1.456 of 1.8 on A2).
  double hbm_read_efficiency = 0;
  // L2's read bandwidth as a multiple of CANN's l2_rate (ChipSpec). Fitted.
  double l2_read_efficiency = 1;
  // One core's MTE2 port from GM (L2 or HBM), bytes per cycle. Fitted.
  double mte2_port_bytes_per_cycle = 0;
  // A GM read nothing was prefetched for (a single-buffered operand, a
  // one-off load) keeps only its own requests in flight and streams at this
  // latency-bound rate, bytes per cycle, whatever its size: msprof's mte2
  // time of the single-buffered kernels gives 47-49 on the 950PR for 32 KiB
  // and 256 KiB transfers alike, 29-36 on the A2. Fitted.
  double cold_read_bytes_per_cycle = 0;
  // Fixed cycles of each MTE2 transfer, and per burst (a contiguous run of
  // GM: one row of an ND tile, one fractal column of an NZ one). Fitted.
  uint64_t mte2_transfer_cycles = 0;
  double mte2_burst_cycles = 0;
  // Fixed cycles of each MTE1 LoadData, MMAD and FIXPIPE instruction (the
  // Δt / ΔT of the asc-devkit document). Fitted.
  uint64_t mte1_instruction_cycles = 0;
  uint64_t mmad_instruction_cycles = 0;
  uint64_t fixpipe_instruction_cycles = 0;
  // FIXPIPE straight to GM writing rows whose start is not 32-byte aligned
  // (C's row pitch n x sizeof(C) not a multiple of 32): extra cycles per
  // row. Fitted.
  double fixpipe_unaligned_row_cycles = 0;
  // The scalar unit issues instructions ahead of the pipes that run them,
  // as far as their queues allow: how many instructions it runs ahead of
  // the cube. Visible under UnitFlag, where the FIXPIPE starts when issued
  // and waits, busy, for L0C (msprof's fixpipe time "includes the unit-flag
  // wait"): single-buffered kernels, with more instructions per K step, see
  // it issued fewer steps ahead. Fitted.
  uint64_t scalar_run_ahead_instructions = 0;
  // MTE1's LoadData of MX scales (LOAD_MX_2Dv2, L1 -> L0A_MX / L0B_MX),
  // bytes per cycle. The scales are 1/32 of the data's elements, but their
  // loads are far slower per byte than the data's (the MXFP4 tutorial's
  // section 5: a 2 KiB scale load averages 384 cycles where a 32 KiB data
  // load takes 233). Fitted to the msprof mte1 times of the MXFP4 rows.
  double mte1_mx_bytes_per_cycle = 0;
  // The AIV's vector unit: fp32 elements one vector instruction processes
  // per cycle over UB, and each instruction's fixed cost. From the msprof
  // aiv_vec columns of the same dequant + per-token + FasterGelu + cast chain
  // (ten instructions per element) on both chips (asc-devkit
  // quant_group_matmul_high_performance README): 0.175 cycles per element
  // on the 950PR, 0.312 on the A2 at their clocks, i.e. 256 and 128 bytes
  // per cycle; the matmul_gelu_high_performance README's GELU columns agree
  // (A2 0.23 cycles per element for its eight-instruction GELU). The fixed
  // cost is fitted.
  uint64_t vector_fp32_lanes = 0;
  uint64_t vector_instruction_cycles = 0;
  // What one AIV's MTE3 writes to GM sustain, GB/s: the same README's
  // aiv_mte3 columns give 12 KiB stores at 48 bytes per cycle beyond their
  // fixed cost with one and with two AIVs per AIC, so the rate is the
  // core's, not a share. Fitted.
  double aiv_gm_write_gbps = 0;
  // Launch: task scheduling (~150 ns), hardware init (~50 ns) and software
  // init (~1 us) before the first instruction, the end-of-task report
  // (~500 ns) after the last (cann-samples npu_execution README). A launch
  // of more blocks than cores starts each further block on a core once its
  // previous block has ended, paying the hardware and software init again.
  double launch_ns = 0;
  double block_start_ns = 0;
  double end_of_task_ns = 0;
  // The kernel's own prologue on every core before its first transfer:
  // reading the tiling from GM, the scalar set-up of the tile loop, the
  // first instruction fetches. Fitted.
  double kernel_prologue_ns = 0;
};

// The timing figures of `arch`.
const ArchTiming& ArchTimingFor(tiling::NpuArch arch);

// Buffer sizes and rates of one chip.
struct ChipModel {
  tiling::ChipSpec spec;
  ArchTiming arch;
  // Chip-wide GM read bandwidths, bytes per cycle: HBM (ChipSpec's rate x
  // cube cores x hbm_read_efficiency) and L2 (ChipSpec's rate x cube cores).
  double ddr_bytes_per_cycle = 0;
  double l2_bytes_per_cycle = 0;
  double cycles_per_us = 0;  // cube clock
  // FIXPIPE L0C -> GM per core: the port or the GM write rate, the lower.
  uint64_t fixpipe_gm_bytes_per_cycle = 0;
  // AIV MTE3 UB -> GM per core: the port or the AIV's GM write rate.
  uint64_t mte3_gm_bytes_per_cycle = 0;

  // The model of `spec`, with `timing` instead of its architecture's
  // calibrated figures when given.
  static ChipModel FromSpec(const tiling::ChipSpec& spec,
                            const std::optional<ArchTiming>& timing = std::nullopt);
  // Cube cycles one fractal (CubeFractalK() deep) of `dtype` inputs takes:
  // one, but for fp32 the architecture's figure (hf32: one).
  uint64_t CubeCyclesPerFractal(tiling::DataType dtype, bool hf32) const;
  // Cube cycles of one MMAD of m x n x k with `dtype` operands (hf32 when
  // `hf32` and the operands are fp32), without the instruction's fixed cost.
  uint64_t MmadCycles(uint64_t m, uint64_t n, uint64_t k, tiling::DataType dtype, bool hf32) const;
  // Peak MACs per cycle of one AIC for `dtype` operands.
  double PeakMacsPerCycle(tiling::DataType dtype, bool hf32) const;
  // Cycles of `passes` vector instructions, each over `elements` fp32 (or
  // narrower) elements in UB: the lanes' share plus each instruction's
  // fixed cost.
  uint64_t VectorCycles(uint64_t passes, uint64_t elements) const;
  // Nanoseconds as cube cycles, rounded up.
  uint64_t NsToCycles(double ns) const;
  // Cycles of a task outside its cores' instructions: the launch and the
  // kernel prologue before, the end-of-task report after.
  uint64_t FixedTaskCycles() const;
};

}  // namespace npu::emu

#endif  // NPU_EMULATOR_CHIP_H_
