#include "emulator/chip.h"

#include <algorithm>
#include <cmath>

#include "server/tiling/int_math.h"

namespace npu::emu {

std::string PipeName(Pipe pipe) {
  switch (pipe) {
    case Pipe::kMte2:
      return "MTE2";
    case Pipe::kMte1:
      return "MTE1";
    case Pipe::kCube:
      return "CUBE";
    case Pipe::kFixpipe:
      return "FIXPIPE";
    case Pipe::kVec:
      return "VEC";
    case Pipe::kMte3:
      return "MTE3";
  }
  return "?";
}

const ArchTiming& ArchTimingFor(tiling::NpuArch arch) {
  // Published figures as cited in chip.h; the fitted ones come from
  // bench/CALIBRATION.md's fit over the 37 published msprof runs.
  // DAV_3510: Ascend 950PR / 950DT.
  static const ArchTiming kDav3510 = {
      .cube_cycles_per_fp32_fractal = 8,
      .mte1_l0a_bytes_per_cycle = 256,
      .mte1_l0b_bytes_per_cycle = 256,
      .fixpipe_bytes_per_cycle = 128,
      .fixpipe_gm_write_gbps = 143,
      .hbm_read_efficiency = 1.454 / 1.6,
      .mte2_port_bytes_per_cycle = 169,
      .cold_read_bytes_per_cycle = 65,
      .mte2_transfer_cycles = 155,
      .mte2_burst_cycles = 0.23,
      .mte1_instruction_cycles = 24,
      .mmad_instruction_cycles = 9,
      .fixpipe_instruction_cycles = 31,
      .fixpipe_unaligned_row_cycles = 13,
      .scalar_run_ahead_instructions = 50,
      .mte1_mx_bytes_per_cycle = 32,
      .vector_fp32_lanes = 64,
      .vector_instruction_cycles = 20,
      .aiv_gm_write_gbps = 79,
      .launch_ns = 1200,
      .block_start_ns = 1050,
      .end_of_task_ns = 500,
      .kernel_prologue_ns = 3700,
  };
  // DAV_2201: Atlas A2 (Ascend 910B) and A3. The same fitted instruction
  // costs; its own MTE2 rates.
  static const ArchTiming kDav2201 = [] {
    ArchTiming t = kDav3510;
    t.cube_cycles_per_fp32_fractal = 2;
    t.mte1_l0b_bytes_per_cycle = 128;
    t.hbm_read_efficiency = 1.456 / 1.8;
    t.mte2_port_bytes_per_cycle = 92;
    t.cold_read_bytes_per_cycle = 44;
    t.vector_fp32_lanes = 32;
    return t;
  }();
  return arch == tiling::NpuArch::kDav2201 ? kDav2201 : kDav3510;
}

ChipModel ChipModel::FromSpec(const tiling::ChipSpec& spec,
                              const std::optional<ArchTiming>& timing) {
  ChipModel model;
  model.spec = spec;
  model.arch = timing.has_value() ? *timing : ArchTimingFor(spec.npu_arch);
  model.ddr_bytes_per_cycle =
      static_cast<double>(spec.ddr_bytes_per_cycle) * spec.aic_num * model.arch.hbm_read_efficiency;
  model.l2_bytes_per_cycle =
      static_cast<double>(spec.l2_bytes_per_cycle) * spec.aic_num * model.arch.l2_read_efficiency;
  model.cycles_per_us = static_cast<double>(spec.cube_freq_mhz);
  model.fixpipe_gm_bytes_per_cycle = std::max<uint64_t>(
      1, std::min<uint64_t>(model.arch.fixpipe_bytes_per_cycle,
                            static_cast<uint64_t>(std::llround(model.arch.fixpipe_gm_write_gbps *
                                                               1000.0 / model.cycles_per_us))));
  model.mte3_gm_bytes_per_cycle = std::max<uint64_t>(
      1, std::min<uint64_t>(kMte3BytesPerCycle,
                            static_cast<uint64_t>(std::llround(model.arch.aiv_gm_write_gbps *
                                                               1000.0 / model.cycles_per_us))));
  return model;
}

namespace {
using tiling::CeilDiv;
}  // namespace

uint64_t CubeFractalK(tiling::DataType dtype) {
  return kCubeFractalKBits / tiling::DataTypeBits(dtype);
}

uint64_t ChipModel::CubeCyclesPerFractal(tiling::DataType dtype, bool hf32) const {
  if (dtype != tiling::DataType::kFloat32) return 1;
  return hf32 ? kCubeCyclesPerHf32Fractal : arch.cube_cycles_per_fp32_fractal;
}

uint64_t ChipModel::MmadCycles(uint64_t m, uint64_t n, uint64_t k, tiling::DataType dtype,
                               bool hf32) const {
  const uint64_t tiles = CeilDiv(m, kCubeFractalM) * CeilDiv(n, kCubeFractalN);
  return tiles * CeilDiv(k, CubeFractalK(dtype)) * CubeCyclesPerFractal(dtype, hf32);
}

double ChipModel::PeakMacsPerCycle(tiling::DataType dtype, bool hf32) const {
  const double fractal = static_cast<double>(kCubeFractalM * kCubeFractalN);
  return fractal * static_cast<double>(CubeFractalK(dtype)) /
         static_cast<double>(CubeCyclesPerFractal(dtype, hf32));
}

uint64_t ChipModel::VectorCycles(uint64_t passes, uint64_t elements) const {
  if (passes == 0 || elements == 0) return 0;
  return passes * (CeilDiv(elements, std::max<uint64_t>(1, arch.vector_fp32_lanes)) +
                   arch.vector_instruction_cycles);
}

uint64_t ChipModel::NsToCycles(double ns) const {
  return static_cast<uint64_t>(std::ceil(ns * cycles_per_us / 1000.0));
}

uint64_t ChipModel::FixedTaskCycles() const {
  return NsToCycles(arch.launch_ns + arch.kernel_prologue_ns) + NsToCycles(arch.end_of_task_ns);
}

}  // namespace npu::emu
