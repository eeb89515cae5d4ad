// The hardware figures of a ChipSpec, listed once.
//
// Every place that handles a chip field by field walks `kChipFields`: the
// engine's ValidateChip(), and in the service the platform overrides (their
// checks and their merge), the chip's wire form both ways, the explicit
// tiling's chip, the decision-cache key and the answer encoder. A field added
// to ChipSpec is added here and in the proto, and nowhere else. Part of
// `npu_tiling_types`: plain data, no protobuf.
#ifndef NPU_SERVER_TILING_CHIP_FIELDS_H_
#define NPU_SERVER_TILING_CHIP_FIELDS_H_

#include <cstdint>
#include <string_view>

#include "server/tiling/types.h"

namespace npu::tiling {

// One numeric figure of ChipSpec: its wire name (as in the proto's ChipSpec
// and PlatformOverrides), its unit, the limits ValidateChip() enforces, and
// the member that holds it (exactly one of `u32` / `u64` is set).
struct ChipField {
  std::string_view name;
  std::string_view unit;
  uint64_t min = 0;
  uint64_t max = 0;
  uint32_t ChipSpec::*u32 = nullptr;
  uint64_t ChipSpec::*u64 = nullptr;

  // The field's value in `chip`.
  constexpr uint64_t Get(const ChipSpec& chip) const { return u32 ? chip.*u32 : chip.*u64; }
  // Stores `value` in `chip`; a 32-bit member keeps the low 32 bits (callers
  // pass values the wire already holds in that width).
  void Set(ChipSpec& chip, uint64_t value) const {
    if (u32) {
      chip.*u32 = static_cast<uint32_t>(value);
    } else {
      chip.*u64 = value;
    }
  }
};

// The limits keep every intermediate product of the heuristics inside 64
// bits and reject sizes no Ascend core has; they are not tuning knobs.
inline constexpr uint64_t kChipKiB = 1024;
inline constexpr uint64_t kChipMaxCores = 1024;

// Every numeric ChipSpec field, in wire order: entry i is field i + 1 of
// PlatformOverrides and field i + 2 of the proto's ChipSpec (1 is the name).
inline constexpr ChipField kChipFields[] = {
    {"aic_num", "cores", 1, kChipMaxCores, &ChipSpec::aic_num, nullptr},
    {"aiv_num", "cores", 1, 2 * kChipMaxCores, &ChipSpec::aiv_num, nullptr},
    // L1 must hold at least one double-buffered 16x16 fp32 A and B block.
    {"l1_bytes", "bytes", 16 * kChipKiB, 64 * kChipKiB* kChipKiB, nullptr, &ChipSpec::l1_bytes},
    {"l0a_bytes", "bytes", 4 * kChipKiB, 16 * kChipKiB* kChipKiB, nullptr, &ChipSpec::l0a_bytes},
    {"l0b_bytes", "bytes", 4 * kChipKiB, 16 * kChipKiB* kChipKiB, nullptr, &ChipSpec::l0b_bytes},
    {"l0c_bytes", "bytes", 4 * kChipKiB, 16 * kChipKiB* kChipKiB, nullptr, &ChipSpec::l0c_bytes},
    {"ub_bytes", "bytes", 4 * kChipKiB, 16 * kChipKiB* kChipKiB, nullptr, &ChipSpec::ub_bytes},
    {"l2_bytes", "bytes", 1, 64 * kChipKiB* kChipKiB* kChipKiB, nullptr, &ChipSpec::l2_bytes},
    {"bt_bytes", "bytes", 1 * kChipKiB, 1 * kChipKiB* kChipKiB, nullptr, &ChipSpec::bt_bytes},
    {"cube_freq_mhz", "MHz", 1, 100000, &ChipSpec::cube_freq_mhz, nullptr},
    {"ddr_bytes_per_cycle", "bytes/cycle", 1, 1 * kChipKiB* kChipKiB,
     &ChipSpec::ddr_bytes_per_cycle, nullptr},
    {"l2_bytes_per_cycle", "bytes/cycle", 1, 1 * kChipKiB* kChipKiB, &ChipSpec::l2_bytes_per_cycle,
     nullptr},
};
inline constexpr size_t kChipFieldCount = sizeof(kChipFields) / sizeof(kChipFields[0]);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_CHIP_FIELDS_H_
