// Exact element codecs of the quantized formats QuantBatchMatmulV3 reads:
// int8, int4, float8_e4m3fn, float8_e5m2, HiFloat8, float4_e2m1, the MX scale
// format float8_e8m0 and int32. Part of `npu_emulator`; depends on the tiling
// value types only (the DataType enum).
//
// Vocabulary: a *code* is the raw bit pattern of one element (the low 4, 8 or
// 32 bits of a uint32_t); a *value* is what it means. Every finite value of
// the 4- and 8-bit formats is exactly an fp32 (and every int32 an fp64), so
// the decoders are exact.
//
// Formats (sources: OCP 8-bit floating point spec and OCP MX spec for the
// IEEE-like ones; asc-devkit `impl/basic_api/kernel_type_conversion_utils.h`
// (DAV_3510 scalar conversions) and arXiv 2409.16626 "Ascend HiFloat8 Format
// for Deep Learning" for HiFloat8):
//   * float8_e4m3fn  S.EEEE.MMM, bias 7, subnormals, no infinities,
//                    S.1111.111 is NaN, max 448 (0x7E), min subnormal 2^-9.
//   * float8_e5m2    S.EEEEE.MM, bias 15 (IEEE-like): 0x7C / 0xFC are +-inf,
//                    exponent 31 with a non-zero mantissa is NaN, max 57344.
//   * HiFloat8       sign bit 7, then a prefix-coded "dot" field in bits 6..3
//                    that gives the exponent width D, then the exponent in
//                    sign-magnitude with an implicit leading magnitude 1,
//                    then the mantissa (implicit leading 1):
//                      bits 6..5 = 11        D = 4, exponent bits 4..1, mantissa bit 0
//                      bits 6..5 = 10        D = 3, exponent bits 4..2, mantissa bits 1..0
//                      bits 6..5 = 01        D = 2, exponent bits 4..3, mantissa bits 2..0
//                      bits 6..4 = 001       D = 1, exponent bit 3,     mantissa bits 2..0
//                      bits 6..3 = 0001      D = 0, exponent 0,         mantissa bits 2..0
//                      bits 6..3 = 0000      denormal: value 2^(bits 2..0 - 23)
//                    In the D >= 1 rows the first exponent bit is the
//                    exponent's sign and the rest, with the implicit 1 in
//                    front, its magnitude: |E| in {1}, {2,3}, {4..7},
//                    {8..15}. Specials: 0x00 zero (the only zero), 0x80 NaN,
//                    0x6F +inf, 0xEF -inf. So the finite magnitudes are
//                    2^-22..2^-16 (denormal), then 2^-15 .. 2^15 with 1 to 3
//                    mantissa bits; max 0x6E = 2^15 = 32768.
//   * float4_e2m1    S.EE.M, bias 1, no inf/NaN: 0, 0.5, 1, 1.5, 2, 3, 4, 6.
//   * float8_e8m0    unsigned exponent: 2^(code - 127); 0xFF is NaN; no zero.
//   * int4 / int8 / int32  two's complement.
//
// Encoding from a float (`Encode*`):
//   * Rounding. float8_e4m3fn, float8_e5m2, float4_e2m1, float16, bfloat16:
//     round to nearest, ties to even (IEEE). int4 / int8 / int32: nearest,
//     ties to even. HiFloat8: nearest, ties AWAY from zero, because that is
//     what the hardware offers: the DAV_3510 float->hifloat8 conversions are
//     CAST_ROUND ("_rna", half away) or CAST_HYBRID (stochastic), there is no
//     round-to-even mode (asc-devkit docs `__float22hif82_rna*.md`,
//     `rounding_mode.md`); the paper calls it "TA". Below the smallest
//     denormal 2^-22 the lower neighbour is 2^-23 (where the zero code sits
//     as a denormal), so magnitudes under 1.5 * 2^-23 become 0 and
//     [1.5 * 2^-23, 2^-22) becomes 2^-22. This matches asc-devkit's reference
//     converter (`examples/.../matmul_fp8/scripts/hif8.py`,
//     cvt_float32_to_hifuint8, round mode "round") on every input we
//     compared. float8_e8m0: the nearest power of two, ties to the even code.
//   * Range (`Overflow`). The DAV_3510 conversions have a saturation mode and a
//     non-saturation mode (asc-devkit `rounding_mode.md`, `__float22hif82_*`):
//       kSaturate      overflow and +-inf give +-max finite (448, 57344,
//                      32768, 6, 65504, bf16 max, e8m0 2^127); NaN gives 0
//                      (e8m0: NaN, see below),
//                      as the hardware's saturation mode does.
//       kNonSaturate   overflow and +-inf give +-inf where the format has one
//                      (e5m2, HiFloat8, fp16, bf16) and NaN where it has not
//                      (e4m3fn 0x7F/0xFF, e8m0 0xFF); NaN stays NaN. fp4 has
//                      neither and saturates in both modes.
//     "Overflow" is decided after rounding, as in IEEE 754: e4m3fn 464 rounds
//     (tie, even) to 448, e5m2 61440 (tie, even) overflows, HiFloat8
//     overflows from 40960 = 1.25 * 2^15 (the tie with the next step, away).
//     Integer formats always saturate (NaN gives 0); the non-saturating
//     integer conversion of the hardware, which keeps the low bits, is not
//     modelled.
//     float8_e8m0 cannot hold zero or negatives: they, and NaN in either
//     mode, encode to 0xFF (NaN); positive values below 2^-127 give 2^-127
//     (code 0).
//
// Packing of the 4-bit formats: two elements per byte, element 2i in the low
// nibble and element 2i+1 in the high nibble (as ml_dtypes / packed int4, and
// as asc-devkit's examples pack int4 and fp4x2: `(x[2i+1] << 4) | (x[2i] &
// 0xF)` in `examples/.../mmad/scripts/gen_data.py` and `pack_fp4_to_fp4x2` in
// `examples/.../mmad_mx/scripts/gen_data.py`; the scalar fp4x2 -> float cast
// reads the low nibble first). Multi-byte codes (int32) are little-endian.
#ifndef NPU_EMULATOR_QUANT_FORMATS_H_
#define NPU_EMULATOR_QUANT_FORMATS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/tiling/types.h"

namespace npu::emu {

// What an encoder does with values beyond the format's range (see the file
// comment).
enum class Overflow { kSaturate, kNonSaturate };

// Per-format codecs. Decoders read the low 8 (or 4) bits of `code`; encoders
// return a code in the low 8 (or 4) bits.
float Float8E4M3BitsToFloat(uint8_t code);
uint8_t FloatToFloat8E4M3Bits(float value, Overflow overflow = Overflow::kSaturate);
float Float8E5M2BitsToFloat(uint8_t code);
uint8_t FloatToFloat8E5M2Bits(float value, Overflow overflow = Overflow::kSaturate);
float HiFloat8BitsToFloat(uint8_t code);
uint8_t FloatToHiFloat8Bits(float value, Overflow overflow = Overflow::kSaturate);
float Float4E2M1BitsToFloat(uint8_t nibble);
uint8_t FloatToFloat4E2M1Bits(float value);
float Float8E8M0BitsToFloat(uint8_t code);
uint8_t FloatToFloat8E8M0Bits(float value, Overflow overflow = Overflow::kSaturate);
int Int4BitsToInt(uint8_t nibble);
uint8_t FloatToInt4Bits(float value);

// `x` (finite) to the nearest integer, ties to even.
double RoundHalfEven(double x);

// True for the element types that have a codec here: int4, int8, int32,
// float8_e4m3fn, float8_e5m2, hifloat8, float4_e2m1 and float8_e8m0.
bool IsQuantElementType(tiling::DataType dtype);

// The value of `code` (its low DataTypeBits(dtype) bits) in `dtype`. Exact.
// Precondition: IsQuantElementType(dtype).
double DecodeQuant(tiling::DataType dtype, uint32_t code);
// `value` encoded in `dtype` with the rounding and range rules above.
// Precondition: IsQuantElementType(dtype).
uint32_t EncodeQuant(tiling::DataType dtype, float value, Overflow overflow = Overflow::kSaturate);

// `value` rounded to `dtype` and back: the quantized element types above plus
// float16, bfloat16 (nearest even; overflow per `overflow`) and float32 (the
// identity). Precondition: IsQuantElementType(dtype) or dtype is float16,
// bfloat16 or float32.
double RoundToFormat(tiling::DataType dtype, float value, Overflow overflow = Overflow::kSaturate);

// Bytes `elements` elements of `dtype` occupy: ceil(elements / 2) for the
// 4-bit formats, elements * size otherwise.
uint64_t QuantBytes(tiling::DataType dtype, uint64_t elements);

// The code of element `index` of a packed `dtype` buffer, and its setter
// (which leaves the other nibble of a 4-bit byte alone). Preconditions:
// IsQuantElementType(dtype) and the buffer holds element `index`.
uint32_t GetQuantCode(tiling::DataType dtype, absl::Span<const uint8_t> bytes, uint64_t index);
void SetQuantCode(tiling::DataType dtype, absl::Span<uint8_t> bytes, uint64_t index, uint32_t code);

// Every code of `dtype` whose value is finite, ascending by code (both zeros
// where the format has -0). int32 is refused (2^32 codes): kInvalidArgument,
// as is a dtype without a codec.
absl::StatusOr<std::vector<uint32_t>> FiniteCodes(tiling::DataType dtype);
// Every finite value `dtype` represents, ascending, each once (-0 and +0 are
// one value). Sizes: e4m3fn 253, e5m2 247, hifloat8 253, fp4 15, e8m0 255,
// int8 256, int4 16. Same refusals as FiniteCodes().
absl::StatusOr<std::vector<double>> RepresentableValues(tiling::DataType dtype);

// `count` elements of `dtype` drawn independently and uniformly from
// FiniteCodes(dtype) (all 2^32 codes for int32), as raw packed bytes
// (QuantBytes(dtype, count) of them; an odd 4-bit count leaves the last high
// nibble 0). Deterministic for a given seed on every platform: splitmix64
// and a rejection mapping of our own, not std::uniform_int_distribution
// (whose output is implementation-defined). kInvalidArgument for a dtype
// without a codec.
absl::StatusOr<std::vector<uint8_t>> DrawQuantValues(tiling::DataType dtype, uint64_t count,
                                                     uint64_t seed);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_QUANT_FORMATS_H_
