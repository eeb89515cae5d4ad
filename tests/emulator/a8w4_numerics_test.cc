// A8W4 and MX-A8W4 numerics (emulator/a8w4_numerics.h): the kernels' steps
// on hand-picked values, the device within the bound on random operands,
// and the bound tight enough that a dropped scale or bias is caught.
#include "emulator/a8w4_numerics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "emulator/numerics.h"
#include "emulator/quant_formats.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
using tiling::DataType;

// Elements of `device` beyond `bound` from `reference` (infinite bounds
// skipped), and the finite bounds seen.
struct Verdict {
  uint64_t over = 0, finite = 0;
};
Verdict Check(const std::vector<double>& device, const std::vector<double>& reference,
              const std::vector<double>& bound) {
  Verdict v;
  for (size_t i = 0; i < device.size(); ++i) {
    if (std::isinf(bound[i])) continue;
    ++v.finite;
    if (!(std::fabs(device[i] - reference[i]) <= bound[i])) ++v.over;
  }
  return v;
}

std::vector<uint8_t> Codes(DataType dtype, uint64_t count, std::mt19937_64& engine) {
  absl::StatusOr<std::vector<uint8_t>> codes = DrawQuantValues(dtype, count, engine());
  return codes.ok() ? *codes : std::vector<uint8_t>{};
}

// m x k x n with group size g; integer group scales 1 .. 16 unless `fraction`
// (then float16 values in [0.5, 9)).
A8W4Operands RandomA8W4(uint64_t m, uint64_t k, uint64_t n, uint64_t g, bool fraction,
                        uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  A8W4Operands a;
  a.m = m;
  a.k = k;
  a.n = n;
  a.group_size = g;
  a.x = Codes(DataType::kInt8, m * k, engine);
  a.weight = Codes(DataType::kInt4, k * n, engine);
  for (uint64_t i = 0; i < (k / g) * n; ++i) {
    a.antiquant_scale.push_back(
        fraction ? RoundTo(DataType::kFloat16, static_cast<float>(0.5 + 8.5 * unit(engine)))
                 : static_cast<float>(1 + engine() % 16));
  }
  for (uint64_t j = 0; j < n; ++j) {
    a.scale.push_back(static_cast<float>((0.5 + 0.5 * unit(engine)) * 16384.0 / (k * 16384.0)));
  }
  for (uint64_t i = 0; i < m; ++i) {
    a.per_token_scale.push_back(static_cast<float>(0.5 + unit(engine)));
  }
  a.has_bias = true;
  for (uint64_t j = 0; j < n; ++j) a.bias.push_back(static_cast<float>(2 * unit(engine) - 1));
  return a;
}

Verdict RunA8W4(const A8W4Operands& device_operands, const A8W4Operands& truth) {
  absl::StatusOr<std::vector<double>> device = A8W4Device(device_operands);
  absl::StatusOr<std::vector<double>> reference = A8W4Reference(truth);
  absl::StatusOr<std::vector<double>> bound = A8W4ErrorBound(truth);
  EXPECT_TRUE(device.ok() && reference.ok() && bound.ok())
      << device.status() << reference.status() << bound.status();
  if (!device.ok() || !reference.ok() || !bound.ok()) return {};
  return Check(*device, *reference, *bound);
}

TEST(A8W4NumericsTest, TheAivWidensInt4TimesTheFloat16ScaleToInt8RoundingHalfToEven) {
  A8W4Operands a;
  a.m = 1;
  a.k = 4;
  a.n = 1;
  a.group_size = 1;
  a.x.assign(4, 1);
  a.weight = std::vector<uint8_t>(2, 0);
  // w = 3, -8, 7, 5 with scales 0.5, 16, 16, 0.5: 1.5 -> 2, -128, 112, 2.5 -> 2.
  const int codes[] = {3, -8, 7, 5};
  for (uint64_t i = 0; i < 4; ++i) {
    SetQuantCode(DataType::kInt4, absl::MakeSpan(a.weight), i, FloatToInt4Bits(codes[i]));
  }
  a.antiquant_scale = {0.5f, 16.0f, 16.0f, 0.5f};
  a.scale = {1.0f};
  a.per_token_scale = {1.0f};
  absl::StatusOr<std::vector<uint8_t>> l1 = A8W4WeightInL1(a);
  ASSERT_TRUE(l1.ok()) << l1.status();
  EXPECT_EQ(static_cast<int8_t>((*l1)[0]), 2);
  EXPECT_EQ(static_cast<int8_t>((*l1)[1]), -128);
  EXPECT_EQ(static_cast<int8_t>((*l1)[2]), 112);
  EXPECT_EQ(static_cast<int8_t>((*l1)[3]), 2);
  // y = 2 - 128 + 112 + 2 = -12 on the device; the reference has 1.5 and
  // 2.5, and the bound covers the two half-integers' roundings only.
  absl::StatusOr<std::vector<double>> device = A8W4Device(a);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)[0], -12.0);
  EXPECT_EQ(*A8W4Reference(a), std::vector<double>{-12.0});
  const double bound = (*A8W4ErrorBound(a))[0];
  EXPECT_GE(bound, 1.0);
  EXPECT_LT(bound, 1.1);
}

TEST(A8W4NumericsTest, AWeightBeyondInt8MakesItsColumnUnspecified) {
  A8W4Operands a = RandomA8W4(3, 128, 4, 128, false, 1);
  // Column 2's first weight: 7 * 20 = 140 does not fit int8.
  SetQuantCode(DataType::kInt4, absl::MakeSpan(a.weight), 2, FloatToInt4Bits(7));
  a.antiquant_scale[2] = 20.0f;
  const std::vector<double> bound = *A8W4ErrorBound(a);
  for (uint64_t i = 0; i < 3; ++i) {
    for (uint64_t j = 0; j < 4; ++j) EXPECT_EQ(std::isinf(bound[i * 4 + j]), j == 2) << i << j;
  }
}

TEST(A8W4NumericsTest, TheDeviceIsWithinTheBoundForIntegerAndFractionalGroupScales) {
  for (const auto& [g, fraction] :
       {std::pair{128, false}, std::pair{256, false}, std::pair{192, true}}) {
    const A8W4Operands a = RandomA8W4(17, 768, 40, static_cast<uint64_t>(g), fraction, 7);
    for (DataType y : {DataType::kFloat16, DataType::kBFloat16}) {
      A8W4Operands b = a;
      b.y_dtype = y;
      const Verdict v = RunA8W4(b, b);
      EXPECT_EQ(v.over, 0u) << g << " " << fraction;
      EXPECT_EQ(v.finite, 17u * 40u);
    }
  }
}

TEST(A8W4NumericsTest, ADroppedScaleOrBiasIsCaught) {
  const A8W4Operands truth = RandomA8W4(9, 512, 48, 128, false, 3);
  A8W4Operands no_group_scale = truth;
  for (float& s : no_group_scale.antiquant_scale) s = 1.0f;
  EXPECT_GT(RunA8W4(no_group_scale, truth).over, 9u * 48u / 2);
  A8W4Operands no_scale = truth;
  for (float& s : no_scale.scale) s = 1.0f;
  EXPECT_GT(RunA8W4(no_scale, truth).over, 9u * 48u / 2);
  A8W4Operands no_token = truth;
  for (float& s : no_token.per_token_scale) s = 1.0f;
  EXPECT_GT(RunA8W4(no_token, truth).over, 9u * 48u / 2);
  A8W4Operands no_bias = truth;
  no_bias.has_bias = false;
  no_bias.bias.clear();
  EXPECT_GT(RunA8W4(no_bias, truth).over, 9u * 48u / 4);
  // One element off by one unit of y is over too.
  std::vector<double> device = *A8W4Device(truth);
  device[5] += std::fabs(device[5]) * 0x1p-9 + 0.01;
  EXPECT_EQ(Check(device, *A8W4Reference(truth), *A8W4ErrorBound(truth)).over, 1u);
}

TEST(A8W4NumericsTest, BadOperandsAreRefusedNamingTheField) {
  A8W4Operands a = RandomA8W4(2, 128, 8, 128, false, 5);
  a.antiquant_scale.pop_back();
  EXPECT_THAT(A8W4Device(a).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("antiquant_scale")));
  a = RandomA8W4(2, 128, 8, 128, false, 5);
  a.antiquant_scale[0] = 0.1f;  // not a float16 value
  EXPECT_THAT(A8W4Reference(a).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("float16")));
  a = RandomA8W4(2, 128, 8, 128, false, 5);
  a.y_dtype = DataType::kFloat32;
  EXPECT_THAT(A8W4ErrorBound(a).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("y_dtype")));
}

TEST(MxA8W4NumericsTest, TheWeightRewriteIsTheFloat4ValueTimesTwoToTheMinusSix) {
  for (uint8_t nibble = 0; nibble < 16; ++nibble) {
    const uint8_t code = MxA8W4WeightCode(nibble);
    EXPECT_EQ(DecodeQuant(DataType::kFloat8E4M3, code),
              std::ldexp(DecodeQuant(DataType::kFloat4E2M1, nibble), -6))
        << static_cast<int>(nibble);
  }
}

MxA8W4Operands RandomMx(uint64_t m, uint64_t k, uint64_t n, DataType y, uint64_t seed) {
  std::mt19937_64 engine(seed);
  MxA8W4Operands a;
  a.m = m;
  a.k = k;
  a.n = n;
  a.x = Codes(DataType::kFloat8E4M3, m * k, engine);
  a.weight = Codes(DataType::kFloat4E2M1, k * n, engine);
  const uint64_t kg = (k + 31) / 32;
  // x scales 2^-9 .. 2^-16 (x up to 448), weight scales 2^-3 .. 2^-10.
  for (uint64_t i = 0; i < m * kg; ++i) a.x_scale.push_back(127 - 9 - engine() % 8);
  for (uint64_t i = 0; i < kg * n; ++i) a.weight_scale.push_back(127 - 3 - engine() % 8);
  a.has_bias = true;
  a.bias_dtype = a.y_dtype = y;
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (uint64_t j = 0; j < n; ++j) a.bias.push_back(RoundTo(y, static_cast<float>(unit(engine))));
  return a;
}

Verdict RunMx(const MxA8W4Operands& device_operands, const MxA8W4Operands& truth) {
  absl::StatusOr<std::vector<double>> device = MxA8W4Device(device_operands);
  absl::StatusOr<std::vector<double>> reference = MxA8W4Reference(truth);
  absl::StatusOr<std::vector<double>> bound = MxA8W4ErrorBound(truth);
  EXPECT_TRUE(device.ok() && reference.ok() && bound.ok())
      << device.status() << reference.status() << bound.status();
  if (!device.ok() || !reference.ok() || !bound.ok()) return {};
  return Check(*device, *reference, *bound);
}

TEST(MxA8W4NumericsTest, TheDeviceIsWithinTheBound) {
  for (DataType y : {DataType::kFloat16, DataType::kBFloat16}) {
    const MxA8W4Operands a = RandomMx(13, 512, 36, y, 11);
    const Verdict v = RunMx(a, a);
    EXPECT_EQ(v.over, 0u);
    EXPECT_EQ(v.finite, 13u * 36u);
  }
  // A float16 bias whose 2^-6 is subnormal: the AIV's rounding is counted.
  MxA8W4Operands tiny = RandomMx(4, 128, 8, DataType::kFloat16, 12);
  for (float& b : tiny.bias) b = std::ldexp(3.0f, -20);
  EXPECT_EQ(RunMx(tiny, tiny).over, 0u);
}

TEST(MxA8W4NumericsTest, ADroppedScaleOrBiasIsCaught) {
  const MxA8W4Operands truth = RandomMx(8, 256, 40, DataType::kFloat16, 21);
  MxA8W4Operands no_bias = truth;
  no_bias.has_bias = false;
  no_bias.bias.clear();
  EXPECT_GT(RunMx(no_bias, truth).over, 8u * 40u / 4);
  MxA8W4Operands no_weight_scale = truth;
  for (uint8_t& e : no_weight_scale.weight_scale) e = 127;
  EXPECT_GT(RunMx(no_weight_scale, truth).over, 8u * 40u / 2);
  MxA8W4Operands no_x_scale = truth;
  for (uint8_t& e : no_x_scale.x_scale) e = 127;
  EXPECT_GT(RunMx(no_x_scale, truth).over, 8u * 40u / 2);
  // The weight as float8 without its 2^-6 (the fixpipe's 64 dropped).
  absl::StatusOr<std::vector<double>> device = MxA8W4Device(truth);
  ASSERT_TRUE(device.ok());
  for (double& v : *device) v /= 64;
  EXPECT_GT(Check(*device, *MxA8W4Reference(truth), *MxA8W4ErrorBound(truth)).over, 8u * 40u / 2);
}

TEST(MxA8W4NumericsTest, BadOperandsAreRefusedNamingTheField) {
  MxA8W4Operands a = RandomMx(2, 64, 8, DataType::kBFloat16, 3);
  a.bias_dtype = DataType::kFloat16;
  EXPECT_THAT(MxA8W4Device(a).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bias_dtype")));
  a = RandomMx(2, 64, 8, DataType::kBFloat16, 3);
  a.x_scale.pop_back();
  EXPECT_THAT(MxA8W4Reference(a).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x_scale")));
}

}  // namespace
}  // namespace npu::emu
