#include "emulator/quant_formats.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace npu::emu {
namespace {

using tiling::DataType;

// An IEEE-like binary format with `exp_bits` exponent and `man_bits` stored
// mantissa bits, and which of the all-ones-exponent patterns are special.
enum class Specials {
  kIeee,           // all-ones exponent: infinity (mantissa 0) or NaN
  kFiniteNanOnly,  // "fn": only all-ones exponent and mantissa is NaN
  kNone,           // every pattern is a finite number
};
struct MiniFloat {
  int exp_bits;
  int man_bits;
  int bias;
  Specials specials;
  double max_finite;
};

constexpr MiniFloat kE4M3 = {4, 3, 7, Specials::kFiniteNanOnly, 448.0};
constexpr MiniFloat kE5M2 = {5, 2, 15, Specials::kIeee, 57344.0};
constexpr MiniFloat kE2M1 = {2, 1, 1, Specials::kNone, 6.0};
constexpr MiniFloat kHalf = {5, 10, 15, Specials::kIeee, 65504.0};
// (2 - 2^-7) * 2^127.
const MiniFloat kBf16 = {8, 7, 127, Specials::kIeee, std::ldexp(255.0, 120)};

uint32_t ExpMask(const MiniFloat& f) { return (1u << f.exp_bits) - 1; }
uint32_t ManMask(const MiniFloat& f) { return (1u << f.man_bits) - 1; }
uint32_t SignBit(const MiniFloat& f) { return 1u << (f.exp_bits + f.man_bits); }

double DecodeMiniFloat(const MiniFloat& f, uint32_t code) {
  const bool negative = (code & SignBit(f)) != 0;
  const uint32_t exp_field = (code >> f.man_bits) & ExpMask(f);
  const uint32_t man = code & ManMask(f);
  double magnitude;
  if (f.specials == Specials::kIeee && exp_field == ExpMask(f)) {
    magnitude = man == 0 ? std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  } else if (f.specials == Specials::kFiniteNanOnly && exp_field == ExpMask(f) &&
             man == ManMask(f)) {
    magnitude = std::numeric_limits<double>::quiet_NaN();
  } else if (exp_field == 0) {  // zero or subnormal: no implicit 1
    magnitude = std::ldexp(static_cast<double>(man), 1 - f.bias - f.man_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>((1u << f.man_bits) | man),
                           static_cast<int>(exp_field) - f.bias - f.man_bits);
  }
  return negative ? -magnitude : magnitude;
}

// The largest finite magnitude's code (sign clear).
uint32_t MaxFiniteCode(const MiniFloat& f) {
  switch (f.specials) {
    case Specials::kIeee:
      return ((ExpMask(f) - 1) << f.man_bits) | ManMask(f);
    case Specials::kFiniteNanOnly:
      return (ExpMask(f) << f.man_bits) | (ManMask(f) - 1);
    case Specials::kNone:
      return (ExpMask(f) << f.man_bits) | ManMask(f);
  }
  return 0;
}
// A quiet NaN (sign clear); only for formats that have one.
uint32_t NanCode(const MiniFloat& f) {
  if (f.specials == Specials::kFiniteNanOnly) return (ExpMask(f) << f.man_bits) | ManMask(f);
  return (ExpMask(f) << f.man_bits) | (1u << (f.man_bits - 1));
}

// Round to nearest even at the format's precision, then apply the range
// rules of quant_formats.h.
uint32_t EncodeMiniFloat(const MiniFloat& f, double value, Overflow overflow) {
  const uint32_t sign = std::signbit(value) ? SignBit(f) : 0;
  if (std::isnan(value)) {
    if (overflow == Overflow::kSaturate || f.specials == Specials::kNone) return 0;
    return NanCode(f);
  }
  const double magnitude = std::fabs(value);
  if (magnitude == 0) return sign;

  const int emin = 1 - f.bias;  // exponent of the smallest normal
  bool overflowed = std::isinf(magnitude);
  double steps = 0;  // the rounded magnitude in units of 2^quantum_exp
  int quantum_exp = 0;
  if (!overflowed) {
    int frexp_exp;
    std::frexp(magnitude, &frexp_exp);  // magnitude = f * 2^frexp_exp, f in [0.5, 1)
    const int exponent = std::max(frexp_exp - 1, emin);
    quantum_exp = exponent - f.man_bits;
    steps = RoundHalfEven(std::ldexp(magnitude, -quantum_exp));  // exact scaling
    overflowed = std::ldexp(steps, quantum_exp) > f.max_finite;
  }
  if (overflowed) {
    if (overflow == Overflow::kSaturate || f.specials == Specials::kNone) {
      return sign | MaxFiniteCode(f);
    }
    if (f.specials == Specials::kIeee) return sign | (ExpMask(f) << f.man_bits);
    return sign | NanCode(f);
  }
  // A carry out of the mantissa moves to the next binade.
  const double implicit_one = std::ldexp(1.0, f.man_bits);
  if (steps >= 2 * implicit_one) {
    steps /= 2;
    ++quantum_exp;
  }
  if (steps < implicit_one) {  // subnormal (or zero after rounding)
    return sign | static_cast<uint32_t>(steps);
  }
  const uint32_t exp_field = static_cast<uint32_t>(quantum_exp + f.man_bits + f.bias);
  const uint32_t man = static_cast<uint32_t>(steps - implicit_one);
  return sign | (exp_field << f.man_bits) | man;
}

// ---- HiFloat8 -------------------------------------------------------------

constexpr uint8_t kHif8Nan = 0x80;
constexpr uint8_t kHif8PosInf = 0x6F;
constexpr uint8_t kHif8NegInf = 0xEF;
constexpr uint8_t kHif8Max = 0x6E;  // 2^15
// Magnitudes at and above the tie between 2^15 and the next step of the
// D = 4 grid (1.5 * 2^15) overflow: 1.25 * 2^15.
constexpr double kHif8OverflowThreshold = 40960.0;
// The virtual neighbour below the smallest denormal (see FloatToHiFloat8Bits).
constexpr double kHif8UnderflowNeighbour = 0x1p-23;

double HiFloat8Magnitude(uint8_t code) {
  // Width of the exponent field from the dot prefix in bits 6..3.
  const uint32_t dot = (code >> 3) & 0xF;
  if (dot == 0) return std::ldexp(1.0, static_cast<int>(code & 0x7) - 23);  // denormal
  int exp_bits;
  if (dot >= 0xC) {
    exp_bits = 4;  // prefix 11
  } else if (dot >= 0x8) {
    exp_bits = 3;  // prefix 10
  } else if (dot >= 0x4) {
    exp_bits = 2;  // prefix 01
  } else if (dot >= 0x2) {
    exp_bits = 1;  // prefix 001
  } else {
    exp_bits = 0;  // prefix 0001
  }
  // The prefix is 2 bits for D >= 2, 3 bits for D = 1 and 4 bits for D = 0;
  // exponent and mantissa share the 7 - prefix bits after it.
  const int prefix_bits = exp_bits >= 2 ? 2 : 4 - exp_bits;
  const int man_bits = 7 - prefix_bits - exp_bits;
  const uint32_t man = code & ((1u << man_bits) - 1);
  int exponent = 0;
  if (exp_bits > 0) {
    const uint32_t field = (code >> man_bits) & ((1u << exp_bits) - 1);
    const bool negative = (field >> (exp_bits - 1)) & 1;
    // The stored bits after the sign, under an implicit leading 1.
    const uint32_t magnitude = (1u << (exp_bits - 1)) | (field & ((1u << (exp_bits - 1)) - 1));
    exponent = negative ? -static_cast<int>(magnitude) : static_cast<int>(magnitude);
  }
  return std::ldexp(1.0 + std::ldexp(static_cast<double>(man), -man_bits), exponent);
}

// The positive finite HiFloat8 values with their codes, ascending.
const std::vector<std::pair<double, uint8_t>>& HiFloat8PositiveTable() {
  static const auto* table = [] {
    auto* entries = new std::vector<std::pair<double, uint8_t>>;
    for (uint32_t code = 1; code < 0x80; ++code) {
      if (code == kHif8PosInf) continue;
      entries->emplace_back(HiFloat8Magnitude(static_cast<uint8_t>(code)),
                            static_cast<uint8_t>(code));
    }
    std::sort(entries->begin(), entries->end());
    return entries;
  }();
  return *table;
}

// ---- float8_e8m0 ----------------------------------------------------------

constexpr uint8_t kE8M0Nan = 0xFF;
constexpr int kE8M0Bias = 127;

// ---- integers -------------------------------------------------------------

// `value` rounded to nearest even and saturated to [lo, hi]; NaN gives 0.
int64_t SaturateToInt(double value, int64_t lo, int64_t hi) {
  if (std::isnan(value)) return 0;
  if (value <= static_cast<double>(lo)) return lo;
  if (value >= static_cast<double>(hi)) return hi;
  const double rounded = value < 0 ? -RoundHalfEven(-value) : RoundHalfEven(value);
  return std::clamp(static_cast<int64_t>(rounded), lo, hi);
}

// splitmix64 (Steele, Lea, Flood 2014): a fixed, portable 64-bit generator.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n >= 1, without bias: accept a draw only at or above
  // 2^64 mod n, so the accepted range is a whole number of copies of [0, n).
  uint64_t Below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;
    for (;;) {
      const uint64_t x = Next();
      if (x >= threshold) return x % n;
    }
  }

 private:
  uint64_t state_;
};

absl::Status NoCodec(DataType dtype) {
  return absl::InvalidArgumentError(absl::StrCat(
      "dtype: ", std::string(tiling::DataTypeName(dtype)), " has no quantized element codec"));
}

}  // namespace

double RoundHalfEven(double x) {
  const double floor = std::floor(x);
  const double diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return std::fmod(floor, 2.0) == 0.0 ? floor : floor + 1;
}

float Float8E4M3BitsToFloat(uint8_t code) {
  return static_cast<float>(DecodeMiniFloat(kE4M3, code));
}
uint8_t FloatToFloat8E4M3Bits(float value, Overflow overflow) {
  return static_cast<uint8_t>(EncodeMiniFloat(kE4M3, value, overflow));
}
float Float8E5M2BitsToFloat(uint8_t code) {
  return static_cast<float>(DecodeMiniFloat(kE5M2, code));
}
uint8_t FloatToFloat8E5M2Bits(float value, Overflow overflow) {
  return static_cast<uint8_t>(EncodeMiniFloat(kE5M2, value, overflow));
}
float Float4E2M1BitsToFloat(uint8_t nibble) {
  return static_cast<float>(DecodeMiniFloat(kE2M1, nibble & 0xF));
}
uint8_t FloatToFloat4E2M1Bits(float value) {
  return static_cast<uint8_t>(EncodeMiniFloat(kE2M1, value, Overflow::kSaturate));
}

float HiFloat8BitsToFloat(uint8_t code) {
  if (code == 0) return 0.0f;
  if (code == kHif8Nan) return std::numeric_limits<float>::quiet_NaN();
  if (code == kHif8PosInf) return std::numeric_limits<float>::infinity();
  if (code == kHif8NegInf) return -std::numeric_limits<float>::infinity();
  const double magnitude = HiFloat8Magnitude(code & 0x7F);
  return static_cast<float>((code & 0x80) ? -magnitude : magnitude);
}

uint8_t FloatToHiFloat8Bits(float value, Overflow overflow) {
  if (std::isnan(value)) return overflow == Overflow::kSaturate ? 0 : kHif8Nan;
  const uint8_t sign = std::signbit(value) ? 0x80 : 0;
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude == 0) return 0;               // one zero: -0 encodes as 0x00
  if (magnitude >= kHif8OverflowThreshold) {  // includes infinity
    if (overflow == Overflow::kSaturate) return sign | kHif8Max;
    return sign ? kHif8NegInf : kHif8PosInf;
  }
  // Nearest representable magnitude, ties away from zero. Below the
  // smallest denormal 2^-22 the lower neighbour is 2^-23, the value the
  // zero code would have as a denormal (exponent -23 encodes as 0x00): so
  // magnitudes below 1.5 * 2^-23 flush to zero.
  const auto& table = HiFloat8PositiveTable();
  const auto upper =
      std::lower_bound(table.begin(), table.end(), std::make_pair(magnitude, uint8_t{0}));
  if (upper != table.end() && upper->first == magnitude) return sign | upper->second;
  const double low = upper == table.begin() ? kHif8UnderflowNeighbour : std::prev(upper)->first;
  const uint8_t low_code = upper == table.begin() ? 0 : std::prev(upper)->second;
  if (upper == table.end()) return sign | low_code;  // (2^15, 40960): down to 2^15
  const double mid = 0.5 * (low + upper->first);     // exact: both are short dyadics
  if (magnitude < mid) return low_code == 0 ? 0 : (sign | low_code);
  return sign | upper->second;
}

float Float8E8M0BitsToFloat(uint8_t code) {
  if (code == kE8M0Nan) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(code) - kE8M0Bias);
}

uint8_t FloatToFloat8E8M0Bits(float value, Overflow overflow) {
  if (std::isnan(value) || value <= 0) return kE8M0Nan;
  const uint8_t overflow_code = overflow == Overflow::kSaturate ? 0xFE : kE8M0Nan;
  if (std::isinf(value)) return overflow_code;
  int frexp_exp;
  const double fraction = std::frexp(static_cast<double>(value), &frexp_exp);  // [0.5, 1)
  int exponent = frexp_exp - 1;  // value in [2^exponent, 2^(exponent+1))
  // Nearest of 2^exponent and 2^(exponent+1); the tie 1.5 * 2^exponent goes
  // to the even code.
  const double scaled = 2 * fraction;  // in [1, 2)
  if (scaled > 1.5 || (scaled == 1.5 && ((exponent + kE8M0Bias) & 1) != 0)) ++exponent;
  const int code = exponent + kE8M0Bias;
  if (code < 0) return 0;  // below 2^-127: the smallest e8m0
  if (code > 0xFE) return overflow_code;
  return static_cast<uint8_t>(code);
}

int Int4BitsToInt(uint8_t nibble) {
  const int low = nibble & 0xF;
  return low >= 8 ? low - 16 : low;
}
uint8_t FloatToInt4Bits(float value) {
  return static_cast<uint8_t>(SaturateToInt(value, -8, 7) & 0xF);
}

bool IsQuantElementType(DataType dtype) {
  switch (dtype) {
    case DataType::kInt4:
    case DataType::kInt8:
    case DataType::kInt32:
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
    case DataType::kHiFloat8:
    case DataType::kFloat4E2M1:
    case DataType::kFloat8E8M0:
      return true;
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat32:
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat4E1M2:  // not modelled (no operator Execute runs reads it)
      return false;
  }
  return false;
}

double DecodeQuant(DataType dtype, uint32_t code) {
  switch (dtype) {
    case DataType::kInt4:
      return Int4BitsToInt(static_cast<uint8_t>(code));
    case DataType::kInt8:
      return static_cast<int8_t>(static_cast<uint8_t>(code));
    case DataType::kInt32:
      return static_cast<int32_t>(code);
    case DataType::kFloat8E4M3:
      return Float8E4M3BitsToFloat(static_cast<uint8_t>(code));
    case DataType::kFloat8E5M2:
      return Float8E5M2BitsToFloat(static_cast<uint8_t>(code));
    case DataType::kHiFloat8:
      return HiFloat8BitsToFloat(static_cast<uint8_t>(code));
    case DataType::kFloat4E2M1:
      return Float4E2M1BitsToFloat(static_cast<uint8_t>(code));
    case DataType::kFloat8E8M0:
      return Float8E8M0BitsToFloat(static_cast<uint8_t>(code));
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat32:
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat4E1M2:
      break;
  }
  assert(false && "DecodeQuant: not a quantized element type");
  return std::numeric_limits<double>::quiet_NaN();
}

uint32_t EncodeQuant(DataType dtype, float value, Overflow overflow) {
  switch (dtype) {
    case DataType::kInt4:
      return FloatToInt4Bits(value);
    case DataType::kInt8:
      return static_cast<uint8_t>(SaturateToInt(value, -128, 127));
    case DataType::kInt32:
      return static_cast<uint32_t>(SaturateToInt(value, std::numeric_limits<int32_t>::min(),
                                                 std::numeric_limits<int32_t>::max()));
    case DataType::kFloat8E4M3:
      return FloatToFloat8E4M3Bits(value, overflow);
    case DataType::kFloat8E5M2:
      return FloatToFloat8E5M2Bits(value, overflow);
    case DataType::kHiFloat8:
      return FloatToHiFloat8Bits(value, overflow);
    case DataType::kFloat4E2M1:
      return FloatToFloat4E2M1Bits(value);
    case DataType::kFloat8E8M0:
      return FloatToFloat8E8M0Bits(value, overflow);
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat32:
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat4E1M2:
      break;
  }
  assert(false && "EncodeQuant: not a quantized element type");
  return 0;
}

double RoundToFormat(DataType dtype, float value, Overflow overflow) {
  switch (dtype) {
    case DataType::kFloat32:
      return value;
    case DataType::kFloat16:
      return DecodeMiniFloat(kHalf, EncodeMiniFloat(kHalf, value, overflow));
    case DataType::kBFloat16:
      return DecodeMiniFloat(kBf16, EncodeMiniFloat(kBf16, value, overflow));
    default:
      return DecodeQuant(dtype, EncodeQuant(dtype, value, overflow));
  }
}

uint64_t QuantBytes(DataType dtype, uint64_t elements) {
  const uint32_t bits = tiling::DataTypeBits(dtype);
  if (bits == 4) return elements / 2 + elements % 2;
  return elements * (bits / 8);
}

uint32_t GetQuantCode(DataType dtype, absl::Span<const uint8_t> bytes, uint64_t index) {
  switch (tiling::DataTypeBits(dtype)) {
    case 4: {
      const uint8_t byte = bytes[index / 2];
      return (index % 2 == 0) ? (byte & 0xF) : (byte >> 4);
    }
    case 8:
      return bytes[index];
    case 32: {
      const uint64_t at = 4 * index;
      return uint32_t{bytes[at]} | uint32_t{bytes[at + 1]} << 8 | uint32_t{bytes[at + 2]} << 16 |
             uint32_t{bytes[at + 3]} << 24;
    }
    default:
      assert(false && "GetQuantCode: not a quantized element type");
      return 0;
  }
}

void SetQuantCode(DataType dtype, absl::Span<uint8_t> bytes, uint64_t index, uint32_t code) {
  switch (tiling::DataTypeBits(dtype)) {
    case 4: {
      uint8_t& byte = bytes[index / 2];
      const uint8_t nibble = code & 0xF;
      byte = (index % 2 == 0) ? static_cast<uint8_t>((byte & 0xF0) | nibble)
                              : static_cast<uint8_t>((byte & 0x0F) | (nibble << 4));
      return;
    }
    case 8:
      bytes[index] = static_cast<uint8_t>(code);
      return;
    case 32:
      for (int i = 0; i < 4; ++i) bytes[4 * index + i] = static_cast<uint8_t>(code >> (8 * i));
      return;
    default:
      assert(false && "SetQuantCode: not a quantized element type");
  }
}

absl::StatusOr<std::vector<uint32_t>> FiniteCodes(DataType dtype) {
  if (!IsQuantElementType(dtype)) return NoCodec(dtype);
  if (dtype == DataType::kInt32) {
    return absl::InvalidArgumentError("dtype: int32 has 2^32 codes; they are not listed");
  }
  const uint32_t code_count = 1u << tiling::DataTypeBits(dtype);
  std::vector<uint32_t> codes;
  for (uint32_t code = 0; code < code_count; ++code) {
    if (std::isfinite(DecodeQuant(dtype, code))) codes.push_back(code);
  }
  return codes;
}

absl::StatusOr<std::vector<double>> RepresentableValues(DataType dtype) {
  absl::StatusOr<std::vector<uint32_t>> codes = FiniteCodes(dtype);
  if (!codes.ok()) return codes.status();
  std::vector<double> values;
  values.reserve(codes->size());
  // Adding +0 turns -0 into +0, so the two zeros are one value.
  for (uint32_t code : *codes) values.push_back(DecodeQuant(dtype, code) + 0.0);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

absl::StatusOr<std::vector<uint8_t>> DrawQuantValues(DataType dtype, uint64_t count,
                                                     uint64_t seed) {
  if (!IsQuantElementType(dtype)) return NoCodec(dtype);
  std::vector<uint8_t> bytes(QuantBytes(dtype, count), 0);
  SplitMix64 rng(seed);
  if (dtype == DataType::kInt32) {  // every code is finite
    for (uint64_t i = 0; i < count; ++i) {
      SetQuantCode(dtype, absl::MakeSpan(bytes), i, static_cast<uint32_t>(rng.Next() >> 32));
    }
    return bytes;
  }
  absl::StatusOr<std::vector<uint32_t>> codes = FiniteCodes(dtype);
  if (!codes.ok()) return codes.status();
  for (uint64_t i = 0; i < count; ++i) {
    SetQuantCode(dtype, absl::MakeSpan(bytes), i, (*codes)[rng.Below(codes->size())]);
  }
  return bytes;
}

}  // namespace npu::emu
