// Division by small divisors without a division instruction, for the
// searches that test many candidate divisors per decision (the TCubeTiling
// search's core split, L0 block and L1 depths, cube_tiling_search.cc).
//
// A hardware integer division costs tens of cycles, and such a search makes
// a few hundred of them on divisors below 128 (the factors of a core count,
// of a per-core extent in fractals, of an L0 block side). Here each divisor
// d in [2, kMaxTableDivisor] has its 64-bit reciprocal c = ceil(2^64 / d)
// precomputed, and for every 32-bit n (Lemire, Kaser and Kurz, "Faster
// Remainder by Direct Computation", Software: Practice and Experience,
// 2019):
//
//   n / d         = the high 64 bits of the 128-bit product c * n
//   d divides n  <=> c * n mod 2^64 <= c - 1
//
// For d = 1 the table holds c = 0 (2^64 wrapped): the divisibility test
// still holds (0 <= 2^64 - 1) and the quotient is n. Larger divisors take
// the hardware division, so every function is exact for every operand it
// accepts.
#ifndef NPU_SERVER_TILING_SMALL_DIVISORS_H_
#define NPU_SERVER_TILING_SMALL_DIVISORS_H_

#include <array>
#include <cstdint>

#include "absl/base/attributes.h"

namespace npu::tiling {

// Divisors with a precomputed reciprocal: 1 to kMaxTableDivisor.
inline constexpr uint32_t kMaxTableDivisor = 128;

namespace small_divisors_internal {

// ceil(2^64 / d) for d in [1, kMaxTableDivisor], 0 for d = 1 where it wraps
// (entry 0 is unused).
inline constexpr std::array<uint64_t, kMaxTableDivisor + 1> kReciprocals = [] {
  std::array<uint64_t, kMaxTableDivisor + 1> reciprocals{};
  for (uint32_t d = 1; d <= kMaxTableDivisor; ++d) {
    reciprocals[d] = UINT64_C(0xFFFFFFFFFFFFFFFF) / d + 1;
  }
  return reciprocals;
}();

}  // namespace small_divisors_internal

// Whether `d` divides `n`; `d` must not be 0.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool Divides(uint32_t n, uint32_t d) {
  if (d > kMaxTableDivisor) return n % d == 0;
  const uint64_t c = small_divisors_internal::kReciprocals[d];
  return c * n <= c - 1;
}

// n / d rounded down; `d` must not be 0.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t Quotient(uint32_t n, uint32_t d) {
  if (d > kMaxTableDivisor) return n / d;
  if (d == 1) return n;
  const uint64_t c = small_divisors_internal::kReciprocals[d];
  return static_cast<uint32_t>((static_cast<unsigned __int128>(c) * n) >> 64);
}

// The same on signed 32-bit operands, with C++'s truncating division and
// remainder: the table serves n >= 0 and d > 0, other signs the hardware.
// `d` must not be 0, nor -1 with n = INT32_MIN.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool Divides(int32_t n, int32_t d) {
  if (n >= 0 && d > 0) return Divides(static_cast<uint32_t>(n), static_cast<uint32_t>(d));
  return n % d == 0;
}
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int32_t Quotient(int32_t n, int32_t d) {
  if (n >= 0 && d > 0) {
    return static_cast<int32_t>(Quotient(static_cast<uint32_t>(n), static_cast<uint32_t>(d)));
  }
  return n / d;
}

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_SMALL_DIVISORS_H_
