#include "emulator/chip.h"

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

ChipModel ChipModel::FromSpec(const tiling::ChipSpec& spec) {
  ChipModel model;
  model.spec = spec;
  model.ddr_bytes_per_cycle = uint64_t{spec.ddr_bytes_per_cycle} * spec.aic_num;
  model.l2_bytes_per_cycle = uint64_t{spec.l2_bytes_per_cycle} * spec.aic_num;
  model.cycles_per_us = static_cast<double>(spec.cube_freq_mhz);
  return model;
}

namespace {
using tiling::CeilDiv;
}  // namespace

uint64_t ChipModel::MmadCycles(uint64_t m, uint64_t n, uint64_t k, tiling::DataType dtype,
                               bool hf32) const {
  const uint64_t tiles = CeilDiv(m, kCubeFractalM) * CeilDiv(n, kCubeFractalN);
  if (dtype != tiling::DataType::kFloat32) return tiles * CeilDiv(k, kCubeFractalK16);
  const uint64_t per = hf32 ? kCubeCyclesPerHf32Fractal : kCubeCyclesPerFp32Fractal;
  return tiles * CeilDiv(k, kCubeFractalK32) * per;
}

double ChipModel::PeakMacsPerCycle(tiling::DataType dtype, bool hf32) const {
  const double fractal = static_cast<double>(kCubeFractalM * kCubeFractalN);
  if (dtype != tiling::DataType::kFloat32) return fractal * kCubeFractalK16;
  return fractal * kCubeFractalK32 /
         static_cast<double>(hf32 ? kCubeCyclesPerHf32Fractal : kCubeCyclesPerFp32Fractal);
}

}  // namespace npu::emu
