#include "server/tiling/strategies/transpose_quant_l1.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/hardware_constants.h"

namespace npu::tiling {
namespace {

// MTE2 reaches its bandwidth from loads of 32 KiB; a stage whose blocks
// are larger than two such loads keeps its first depth.
constexpr uint64_t kMinLoadBytes = 32768;
// At most four K steps per load, so that the cube's issue queue does not
// stall behind one load's instructions.
constexpr uint64_t kMaxKSteps = 4;
// A K load is preferably a multiple of 512 bytes, else 256.
constexpr uint64_t kPreferredKBytes = 512;
constexpr uint64_t kMinKBytes = 256;
// MX scales: one per 32 elements of K, stored in pairs.
constexpr uint64_t kMxGroup = 32;
constexpr uint64_t kMxPair = 2;
// A scale factor is one byte of mxTypePara, in [1, 127].
constexpr uint32_t kMinScaleFactor = 1;
constexpr uint32_t kMaxScaleFactor = 127;

// CANN's division helpers: x / 0 is x, and a ceiling of x / 0 is x.
uint64_t FloorQuot(uint64_t x, uint64_t y) { return y == 0 ? x : x / y; }
uint64_t CeilQuot(uint64_t x, uint64_t y) { return y == 0 || x == 0 ? x : (x + y - 1) / y; }
uint64_t AlignDown(uint64_t x, uint64_t align) { return align == 0 ? 0 : x / align * align; }

// How many base blocks of `per_depth` bytes fit `left` bytes, as a multiple
// of `depth_init`. The first depth (depth_init 1) is the largest power of
// two whose blocks stay below `left`; a second one (depth_init above 1)
// fills what is left, cut so that a K load is a multiple of 512 bytes (or
// 256). nullopt when the power-of-two search never ends: `left` is a size
// that wrapped below zero, and the doubling runs past 2^64 to 0.
std::optional<uint64_t> Depth(uint64_t left, uint64_t per_depth, uint64_t depth_init,
                              uint64_t base_k_bytes) {
  if (depth_init > 1 && per_depth > kDoubleBuffer * kMinLoadBytes) return depth_init;
  uint64_t scale = FloorQuot(left, per_depth);
  if (depth_init > 1) {
    while ((scale * base_k_bytes) % kPreferredKBytes != 0 &&
           scale * base_k_bytes > kPreferredKBytes) {
      --scale;
    }
    if ((scale * base_k_bytes) % kPreferredKBytes != 0 && scale * base_k_bytes >= kMinKBytes) {
      scale = kMinKBytes / base_k_bytes;
    }
    scale = std::max<uint64_t>(scale, 1);
  } else {
    scale = 1;
    while (scale * per_depth < left) {
      scale *= 2;
      if (scale == 0) return std::nullopt;  // 0 * per_depth < left for ever
    }
    scale = scale == 1 ? 1 : scale / 2;
  }
  return depth_init * scale;
}

}  // namespace

absl::StatusOr<QuantL1Stage> StageQuantL1(const QuantL1Input& in) {
  const uint64_t base_a = in.base_m * in.base_k * in.a_bytes;
  const uint64_t base_b = in.base_n * in.base_k * in.b_bytes;
  // The scales of one block: ceil(baseK / 32) groups, in pairs, of one
  // float8_e8m0 byte per row (column).
  const uint64_t scale_k = in.mx ? CeilQuot(CeilQuot(in.base_k, kMxGroup), kMxPair) * kMxPair : 0;
  QuantL1Stage stage;
  stage.scale_a_bytes = scale_k * in.base_m;
  stage.scale_b_bytes = scale_k * in.base_n;
  const uint64_t scale_a = stage.scale_a_bytes, scale_b = stage.scale_b_bytes;
  const uint64_t block = base_a + base_b + scale_a + scale_b;
  const uint64_t base_k_bytes = in.base_k * in.a_bytes;
  const uint64_t left = in.l1_bytes;

  const auto hangs = [&]() {
    return CannFaultError(absl::StrCat("GetDepthA1B1 doubles a depth against L1 left = ", left,
                                       " - ", block,
                                       " bytes of one stage's blocks, which wraps below zero, so "
                                       "its search never ends"),
                          CannFaultKind::kNeverEnds);
  };
  const std::optional<uint64_t> depth_init = Depth(left, block, 1, base_k_bytes);
  if (!depth_init) return hangs();
  const uint64_t left_after = left - *depth_init * block;  // wraps when one stage overflows L1
  const std::optional<uint64_t> depth_a =
      Depth(left_after, (base_a + scale_a) * *depth_init, *depth_init, base_k_bytes);
  if (!depth_a) return hangs();
  const std::optional<uint64_t> depth_b =
      Depth(left_after, (base_b + scale_b) * *depth_init, *depth_init, base_k_bytes);
  if (!depth_b) return hangs();
  stage.depth_a1 = std::max(*depth_a, *depth_b);
  stage.depth_b1 = stage.depth_a1;
  if (stage.depth_a1 * block > left) {
    stage.depth_a1 = *depth_a >= *depth_b ? *depth_a : *depth_init;
    stage.depth_b1 = *depth_a < *depth_b ? *depth_b : *depth_init;
  }

  // K steps per load: half the depth (double buffering), at most the whole
  // K, one a multiple of the other, and at most four.
  uint64_t& ka = stage.step_ka;
  uint64_t& kb = stage.step_kb;
  ka = std::max<uint64_t>(stage.depth_a1 / kDoubleBuffer, 1);
  kb = std::max<uint64_t>(stage.depth_b1 / kDoubleBuffer, 1);
  if (ka * in.base_k > in.k) ka = CeilQuot(in.k, in.base_k);
  if (kb * in.base_k > in.k) kb = CeilQuot(in.k, in.base_k);
  if (ka > kb) ka = AlignDown(ka, kb);
  if (kb > ka) kb = AlignDown(kb, ka);
  ka = std::min(ka, kMaxKSteps);
  kb = std::min(kb, kMaxKSteps);
  stage.depth_a1 = ka * kDoubleBuffer;
  stage.depth_b1 = kb * kDoubleBuffer;
  if (!in.mx) return stage;

  // The scale factors: as many K loads of scales per scale load as the K
  // extent allows, at most one 32 KiB load of scales (and 127), then cut to
  // the L1 the data blocks leave.
  uint32_t& fa = stage.scale_factor_a;
  uint32_t& fb = stage.scale_factor_b;
  const uint32_t max_a =
      std::min(static_cast<uint32_t>(FloorQuot(kMinLoadBytes, scale_a)), kMaxScaleFactor);
  const uint32_t max_b =
      std::min(static_cast<uint32_t>(FloorQuot(kMinLoadBytes, scale_b)), kMaxScaleFactor);
  const uint32_t k32 = static_cast<uint32_t>(in.k);
  fa = std::min(max_a, static_cast<uint32_t>(k32 / (ka * in.base_k)));
  fb = std::min(max_b, static_cast<uint32_t>(k32 / (kb * in.base_k)));
  uint64_t rest = in.l1_bytes - (stage.depth_a1 * base_a + stage.depth_b1 * base_b);
  const uint64_t scales_a = stage.depth_a1 * scale_a, scales_b = stage.depth_b1 * scale_b;
  const uint32_t fit = static_cast<uint32_t>(rest / (scales_a + scales_b));
  if (fa <= fit && fb > fit) {
    rest -= static_cast<uint64_t>(fa) * scales_a;
    fb = std::min(static_cast<uint32_t>(rest / scales_b), fb);
  } else if (fb <= fit && fa > fit) {
    rest -= static_cast<uint64_t>(fb) * scales_b;
    fa = std::min(static_cast<uint32_t>(rest / scales_a), fa);
  } else if (fa > fit && fb > fit) {
    rest -= static_cast<uint64_t>(fit) * scales_b + static_cast<uint64_t>(fit) * scales_a;
    const uint32_t more_a = std::min(static_cast<uint32_t>(rest / scales_a), fa - fit);
    const uint32_t more_b = std::min(static_cast<uint32_t>(rest / scales_b), fb - fit);
    fa = more_a >= more_b ? more_a + fit : fit;
    fb = more_a < more_b ? more_b + fit : fit;
  }
  return stage;
}

uint32_t MxTypePara(uint32_t scale_factor_a, uint32_t scale_factor_b) {
  const auto in_range = [](uint32_t f) { return f >= kMinScaleFactor && f <= kMaxScaleFactor; };
  const bool keep = in_range(scale_factor_a) && in_range(scale_factor_b);
  const uint32_t a = keep ? scale_factor_a : 1, b = keep ? scale_factor_b : 1;
  // Bytes 2 and 3 (the M and N factors) are always 1.
  return (1u << 24) + (1u << 16) + (b << 8) + a;
}

}  // namespace npu::tiling
