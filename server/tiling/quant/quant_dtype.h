// Dtype arithmetic of CANN's QuantBatchMatmulV3 arch35 tiling: element sizes,
// and the conversions between element counts and bytes that treat the 4-bit
// types (INT4, FP4) as half a byte. A port must never divide by a raw dtype
// size for those; these helpers are the only place that knows the rule.
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_QUANT_DTYPE_H_
#define NPU_SERVER_TILING_QUANT_QUANT_DTYPE_H_

#include <cstdint>

#include "server/tiling/quant/quant_facts.h"

namespace npu::tiling::quant {

// GE reports a sub-byte type's size as 1000 + its bit count.
inline constexpr uint64_t kSubByteSizeOffset = 1000;

inline constexpr bool IsFourBit(GeDtype dtype) {
  return dtype == GeDtype::kInt4 || dtype == GeDtype::kFloat4E2M1;
}

inline constexpr bool IsFp8(GeDtype dtype) {
  return dtype == GeDtype::kFloat8E4M3 || dtype == GeDtype::kFloat8E5M2;
}

inline constexpr bool IsFp8OrHif8(GeDtype dtype) {
  return IsFp8(dtype) || dtype == GeDtype::kHiFloat8;
}

inline constexpr bool IsIntegerScale(GeDtype dtype) {
  return dtype == GeDtype::kUint64 || dtype == GeDtype::kInt64;
}

// GE's GetSizeByDataType: bytes per element, 1000 + bits for 4-bit types.
inline constexpr uint64_t GeSizeOf(GeDtype dtype) {
  switch (dtype) {
    case GeDtype::kFloat:
    case GeDtype::kInt32:
      return 4;
    case GeDtype::kFloat16:
    case GeDtype::kBFloat16:
      return 2;
    case GeDtype::kInt64:
    case GeDtype::kUint64:
      return 8;
    case GeDtype::kInt4:
    case GeDtype::kFloat4E2M1:
    case GeDtype::kFloat4E1M2:
      return kSubByteSizeOffset + 4;
    case GeDtype::kInt8:
    case GeDtype::kHiFloat8:
    case GeDtype::kFloat8E5M2:
    case GeDtype::kFloat8E4M3:
    case GeDtype::kFloat8E8M0:
      return 1;
  }
  return 0;
}

// Bytes of `elements` elements (4-bit types round up to whole bytes).
inline constexpr uint64_t BytesOf(uint64_t elements, GeDtype dtype) {
  return IsFourBit(dtype) ? (elements + 1) >> 1 : elements * GeSizeOf(dtype);
}

// Elements held by `bytes` bytes (0 for an unknown dtype).
inline constexpr uint64_t ElementsIn(uint64_t bytes, GeDtype dtype) {
  if (IsFourBit(dtype)) return bytes + bytes;
  const uint64_t size = GeSizeOf(dtype);
  return size == 0 ? 0 : bytes / size;
}

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_QUANT_DTYPE_H_
