// The integer helpers CANN's WeightQuantBatchMatmulV2 tiling computes with,
// with their edge behaviour (ops::CeilDiv of a zero divisor is the
// dividend, ops::CeilAlign saturates and aligns to zero as zero), so that
// the strategies never divide by zero where CANN does not. Part of
// `npu_tiling`.
#ifndef NPU_SERVER_TILING_WEIGHT_QUANT_WQ_MATH_H_
#define NPU_SERVER_TILING_WEIGHT_QUANT_WQ_MATH_H_

#include <cstdint>
#include <limits>
#include <type_traits>

namespace npu::tiling::weight_quant {

// ops::CeilDiv: x / y rounded up; x when y or x is zero (signed: rounded
// towards +infinity only for operands of one sign).
template <typename T>
constexpr T OpsCeilDiv(T x, T y) {
  if (y == 0 || x == 0) return x;
  const T quotient = x / y;
  if constexpr (std::is_signed_v<T>) {
    return (x % y != 0 && ((x ^ y) >= 0)) ? quotient + 1 : quotient;
  } else {
    return x % y != 0 ? quotient + 1 : quotient;
  }
}

// ops::CeilAlign: x rounded up to a multiple of `align`; 0 for align 0, the
// type's maximum when the multiple does not fit.
template <typename T>
constexpr T OpsCeilAlign(T x, T align) {
  if (align == 0) return 0;
  const T div = OpsCeilDiv(x, align);
  if (div > std::numeric_limits<T>::max() / align) return std::numeric_limits<T>::max();
  return div * align;
}

// ops::FloorAlign: 0 for align 0.
template <typename T>
constexpr T OpsFloorAlign(T x, T align) {
  return align == 0 ? 0 : x / align * align;
}

// int64 a * b with the two's-complement wrap-around of CANN's compiled
// products (no undefined behaviour here).
constexpr int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

}  // namespace npu::tiling::weight_quant

#endif  // NPU_SERVER_TILING_WEIGHT_QUANT_WQ_MATH_H_
