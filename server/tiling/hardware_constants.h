// Sizes of the device's data layout that the tiling engine, the buffer-fit
// check and the emulator all count in.
//
// One definition for every layer: the engine's heuristics (npu_tiling), the
// shared buffer-fit check (plan_fit.h) and the emulator (npu_emulator) read
// them from here. Header-only, part of `npu_tiling_types`.
#ifndef NPU_SERVER_TILING_HARDWARE_CONSTANTS_H_
#define NPU_SERVER_TILING_HARDWARE_CONSTANTS_H_

#include <cstdint>

namespace npu::tiling {

inline constexpr uint64_t kBlock16 = 16;    // cube fractal edge, elements
inline constexpr uint64_t kBlock256 = 256;  // DAV_3510 default (and largest) base block edge
inline constexpr uint64_t kFp32Bytes = 4;   // L0C accumulates in fp32
// Ping-pong buffers: L0A / L0B halves (HALF_L0_SIZE), L1 stages, L0C.
inline constexpr uint64_t kDoubleBuffer = 2;
// Every plan reserves 20 MiB of workspace for the runtime's RPC area
// (CANN's RPC_WORKSIZE) before the partial sums.
inline constexpr uint64_t kRuntimeWorkspaceBytes = 20ull * 1024 * 1024;

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_HARDWARE_CONSTANTS_H_
