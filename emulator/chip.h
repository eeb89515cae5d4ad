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
// inputs (16x16x16 = 4096 MACs per cycle per AIC; seeds/001 "关键硬件规格").
inline constexpr uint64_t kCubeFractalM = 16;
inline constexpr uint64_t kCubeFractalN = 16;
inline constexpr uint64_t kCubeFractalK16 = 16;
// fp32 fractals are 32 bytes deep (8 elements) and take two cycles: a
// quarter of the 16-bit MAC rate ("fp32 4x slower", issue 4). hf32 rounds the
// operands so one 8-deep fractal issues per cycle: half the 16-bit rate.
// TODO(emulator): confirm the hf32 rate against matmul_performance.md.
inline constexpr uint64_t kCubeFractalK32 = 8;
inline constexpr uint64_t kCubeCyclesPerFp32Fractal = 2;
inline constexpr uint64_t kCubeCyclesPerHf32Fractal = 1;

// MTE1 and MTE3 move 256 bytes per cycle per core (seeds/001: "MTE1 / MTE3
// 256 BPC ≈ 422.4 GB/s"). FIXPIPE is given the same rate: the seeds cite no
// separate figure and CANN's roofline treats L0C -> GM like MTE3.
inline constexpr uint64_t kMte1BytesPerCycle = 256;
inline constexpr uint64_t kMte3BytesPerCycle = 256;
inline constexpr uint64_t kFixpipeBytesPerCycle = 256;
// One core's MTE2 port. The chip-wide DDR and L2 channels (ChipSpec rates x
// cube cores) are the real limits; the port stops one core from taking the
// whole chip's bandwidth. Assumption: the MTE1/MTE3 figure.
inline constexpr uint64_t kMte2PortBytesPerCycle = 256;
// Vector unit: 64 AIV deliver 27 TFLOPS fp32 at 1.65 GHz (seeds/001 2.2),
// i.e. 256 FLOP per cycle per AIV: 128 fp32 lanes of multiply-add, or 128
// elements of one add / cast per cycle.
inline constexpr uint64_t kVecFp32ElementsPerCycle = 128;

// Buffer sizes and rates of one chip.
struct ChipModel {
  tiling::ChipSpec spec;
  uint64_t ddr_bytes_per_cycle = 0;  // chip-wide: spec rate x cube cores (1.6 TB/s on 950PR)
  uint64_t l2_bytes_per_cycle = 0;   // chip-wide: spec rate x cube cores (5.2 TB/s on 950PR)
  double cycles_per_us = 0;          // cube clock

  static ChipModel FromSpec(const tiling::ChipSpec& spec);
  // Cube cycles of one MMAD of m x n x k with `dtype` operands (hf32 when
  // `hf32` and the operands are fp32).
  uint64_t MmadCycles(uint64_t m, uint64_t n, uint64_t k, tiling::DataType dtype,
                      bool hf32) const;
  // Peak MACs per cycle of one AIC for `dtype` operands.
  double PeakMacsPerCycle(tiling::DataType dtype, bool hf32) const;
};

}  // namespace npu::emu

#endif  // NPU_EMULATOR_CHIP_H_
