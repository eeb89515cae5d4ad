// Sizes of the Ascend 950PR (DAV_3510) cube core that the tiling heuristics
// are built around and that the emulator's program builder relies on too.
//
// Part of npu_tiling_types, so the engine's strategies and the emulator read
// the same numbers instead of keeping copies. Per-chip limits that vary with
// the platform (buffer sizes, core counts, bandwidths) live in `ChipSpec`
// (types.h), not here.
#ifndef NPU_SERVER_TILING_HARDWARE_CONSTANTS_H_
#define NPU_SERVER_TILING_HARDWARE_CONSTANTS_H_

#include <cstdint>

namespace npu::tiling {

inline constexpr uint64_t kBlock16 = 16;    // cube fractal edge, elements
inline constexpr uint64_t kBlock256 = 256;  // DAV_3510 default base block edge
inline constexpr uint64_t kFp32Bytes = 4;   // L0C accumulates in fp32
inline constexpr uint64_t kDoubleBuffer = 2;
// GM->L1 copies below 48 KiB do not reach full MTE2 bandwidth.
inline constexpr uint64_t kL1SingleCopyLimitBytes = 48 * 1024;
// Every plan reserves 20 MiB of workspace for the runtime's RPC area (CANN's
// RPC_WORKSIZE), before any partial sums.
inline constexpr uint64_t kRuntimeWorkspaceBytes = 20ull * 1024 * 1024;

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_HARDWARE_CONSTANTS_H_
