#include "server/tiling/grouped/quant/gqmm_tiling.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/int_math.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::grouped::quant {
namespace {

// The base block: at most 256 rows of x and 256 columns of the weight, and
// 128 bytes of k (256 4-bit elements), in 32-byte steps of k.
constexpr uint64_t kBlock256 = 256;
constexpr uint64_t kBlock128 = 128;
constexpr uint64_t kBlock512 = 512;
constexpr uint64_t kCubeBlock = 16;       // rows of a fractal
constexpr uint64_t kAlignBytes = 32;      // L1 and the cube's k steps
// Per-group x with per-block weights: 128-element blocks, a step K of at
// most 4 (so the issue queue does not stall).
constexpr uint64_t kPerBlockSize = 128;
constexpr uint64_t kGroupBlockMaxStepK = 4;
// MX: the mmad's k is a multiple of 64 (and a non-transposed fp4 weight's
// n too); one E8M0 scale per 32 elements of k, stored in pairs.
constexpr uint64_t kMxKAlign = 64;
constexpr uint64_t kMxGroup = 32;
constexpr uint64_t kMxPair = 2;
// L0C holds float32 partial sums, double-buffered when two blocks fit.
constexpr uint64_t kL0cBytesPerElem = 4;
constexpr uint64_t kDoubleBuffer = 2;
// An MTE2 load of at least 64 KiB reaches full bandwidth; the general L1
// model stops growing a side past two of them.
constexpr uint64_t kMte2MinLoadBytes = 64 * 1024;
// Scale factors are 8-bit fields of mxTypePara: 1 to 127.
constexpr uint32_t kScaleFactorMin = 1;
constexpr uint32_t kScaleFactorMax = 127;

// GetSizeWithDataType: bytes of `elements` of `type`; a 4-bit type's
// elements come in pairs, and CANN answers 0 for an odd count (after
// logging it) and goes on with that.
uint64_t Bytes(uint64_t elements, GeType type) {
  if (IsFourBit(type)) return elements % 2 != 0 ? 0 : elements / 2;
  return elements * GeSize(type);
}

// GetShapeWithDataType: elements of `type` in `bytes`.
uint64_t Elements(uint64_t bytes, GeType type) {
  return IsFourBit(type) ? bytes + bytes : bytes / GeSize(type);
}

absl::Status L1Overflow(absl::string_view where, uint64_t free_bytes, uint64_t used_bytes) {
  return absl::FailedPreconditionError(
      absl::StrCat("L1 space overflow in ", where, ": ", used_bytes, " bytes needed, ", free_bytes,
                   " free of the platform's L1; CANN refuses the problem"));
}

// CalBasicBlock.
void CalBasicBlock(const GqmmFacts& f, GqmmBlock& b) {
  b.base_m = std::min(f.m, kBlock256);
  b.base_m = f.trans_a ? CeilAlign(b.base_m, Elements(kAlignBytes, f.a))
                       : CeilAlign(b.base_m, kCubeBlock);
  if (f.group_block()) {
    // One x group and one weight block per base block along k; n doubles
    // when m is at most one block.
    b.base_n = f.n <= kPerBlockSize || b.base_m > kPerBlockSize ? kPerBlockSize : kBlock256;
    b.base_k = kPerBlockSize;
    return;
  }
  b.base_n = std::min(f.n, kBlock256);
  b.base_n = f.trans_b ? CeilAlign(b.base_n, kCubeBlock)
                       : CeilAlign(b.base_n, Elements(kAlignBytes, f.b));
  b.base_k = CeilAlign(std::min(Elements(kBlock128, f.a), f.k), Elements(kAlignBytes, f.a));
  if (f.mx()) {
    b.base_k = CeilAlign(b.base_k, kMxKAlign);
    if (IsFp4(f.a) && !f.trans_b) b.base_n = CeilAlign(b.base_n, kMxKAlign);
  }
}

// InitCommonL1TilingFields.
void InitCommon(const GqmmFacts& f, const GqmmPlatform& p, GqmmBlock& b) {
  b.step_m = 1;
  b.step_n = 1;
  b.single_core_m = std::min(f.m, b.base_m);
  b.single_core_n = std::min(f.n, b.base_n);
  b.single_core_k = f.k;
  b.iterate_order = 0;
  b.db_l0c = b.base_m * b.base_n * kL0cBytesPerElem * kDoubleBuffer <= p.l0c_bytes ? 2 : 1;
}

// IsBiasInL1: an INT32 bias, or an MX fp4 problem's FLOAT bias, is staged
// in L1 for the cube; other biases are added by the vector cores.
bool BiasInL1(const GqmmFacts& f) {
  if (!f.has_bias) return false;
  return f.bias == GeType::kInt32 || (f.mx() && IsFp4(f.a) && f.bias == GeType::kFloat);
}

// CalcLeftL1Size: L1 less one block of the staged bias and of a per-channel
// scale dequantized in the fixpipe.
absl::StatusOr<uint64_t> LeftL1(const GqmmFacts& f, const GqmmPlatform& p, const GqmmBlock& b) {
  const uint64_t bias = BiasInL1(f) ? b.base_n * GeSize(f.bias) : 0;
  const uint64_t scale = f.b_mode == kModePerChannel &&
                                 f.kernel_type == GqmmKernelType::kFixpipeDequant &&
                                 f.c != GeType::kInt32
                             ? b.base_n * GeSize(f.scale)
                             : 0;
  const uint64_t used = bias + scale;
  if (p.l1_bytes <= used) {
    return L1Overflow(absl::StrCat("CalcLeftL1Size (bias ", bias, " + scale ", scale, ")"),
                      p.l1_bytes, used);
  }
  return p.l1_bytes - used;
}

// The L1 bytes of one MX scale block of A and of B, k rounded to whole
// pairs of scales (CalcAlignedMxBaseScaleSize).
void AlignedMxScaleBytes(const GqmmFacts& f, const GqmmBlock& b, uint64_t& a, uint64_t& w) {
  const uint64_t k_scales = CeilAlign(CeilDiv(b.base_k, kMxGroup), kMxPair);
  a = Bytes(k_scales * b.base_m, f.per_token);
  w = Bytes(k_scales * b.base_n, f.scale);
}

// GetDepthA1B1: the depth of L1 stages of `per_depth` bytes that fits
// `left`. From 1 (`depth_init` 1): the largest power of two whose stages
// stay below `left`. From a common depth: `left / per_depth` more of it,
// rounded down until its k bytes are a multiple of 512 (or set to 256
// bytes of k), unless one stage already passes two full-bandwidth loads.
absl::StatusOr<uint64_t> DepthA1B1(const GqmmFacts& f, const GqmmBlock& b, uint64_t left,
                                   uint64_t per_depth, uint64_t depth_init, const char* what) {
  if (depth_init > 1 && per_depth > kDoubleBuffer * kMte2MinLoadBytes) return depth_init;
  if (per_depth == 0) {
    // CANN divides `left` by the stage's bytes. From a depth of 1 it never
    // uses the quotient, so the division is compiled away and its doubling
    // loop, whose stages are empty, never ends instead.
    if (depth_init > 1) {
      return CannFaultError(absl::StrCat("GetDepthA1B1 divides the ", left,
                                         " bytes of L1 left by the bytes of one stage of ", what,
                                         ", which is 0: baseM=", b.base_m, " baseN=", b.base_n,
                                         " (m=", f.m, " n=", f.n, ")"));
    }
    if (left > 0) {
      return CannFaultError(absl::StrCat("GetDepthA1B1 doubles a depth of ", what,
                                         " while its stages, of 0 bytes, stay below the ", left,
                                         " bytes of L1 left: baseM=", b.base_m, " baseN=",
                                         b.base_n, " baseK=", b.base_k, " (m=", f.m, " n=", f.n,
                                         " k=", f.k, ")"),
                            CannFaultKind::kNeverEnds);
    }
    return depth_init;
  }
  uint64_t depth = left / per_depth;
  if (depth_init > 1) {
    const uint64_t k_bytes = Bytes(b.base_k, f.a);
    while ((depth * k_bytes) % kBlock512 != 0 && depth * k_bytes > kBlock512) --depth;
    if ((depth * k_bytes) % kBlock512 != 0 && depth * k_bytes >= kBlock256) {
      depth = kBlock256 / k_bytes;
    }
    depth = std::max<uint64_t>(depth, 1);
  } else {
    depth = 1;
    while (depth * per_depth < left) depth *= 2;
    depth = depth == 1 ? depth : depth / 2;
  }
  return depth_init * depth;
}

// CalStepKs: each side's step K is half its depth (double-buffered), at
// most the whole k, the larger a multiple of the smaller while it does not
// cover k; the depths follow.
void CalStepKs(const GqmmFacts& f, GqmmBlock& b) {
  b.step_ka = b.depth_a1 == 1 ? 1 : b.depth_a1 / kDoubleBuffer;
  b.step_kb = b.depth_b1 == 1 ? 1 : b.depth_b1 / kDoubleBuffer;
  if (b.step_ka * b.base_k > f.k) b.step_ka = CeilDiv(f.k, b.base_k);
  if (b.step_kb * b.base_k >= f.k) b.step_kb = CeilDiv(f.k, b.base_k);
  if (f.group_block()) {
    b.step_ka = std::min(b.step_ka, kGroupBlockMaxStepK);
    b.step_kb = std::min(b.step_kb, kGroupBlockMaxStepK);
  }
  if (b.step_ka >= b.step_kb && b.step_ka * b.base_k < f.k) {
    b.step_ka = b.step_ka / b.step_kb * b.step_kb;
  }
  if (b.step_kb > b.step_ka && b.step_kb * b.base_k < f.k) {
    b.step_kb = b.step_kb / b.step_ka * b.step_ka;
  }
  b.depth_a1 = b.step_ka * kDoubleBuffer;
  b.depth_b1 = b.step_kb * kDoubleBuffer;
}

// The scale factors' bound from k: how many step-K loads the scales may
// cover at once, at most 127 and one 64 KiB load of scales.
struct ScaleBounds {
  uint64_t scale_a = 0, scale_b = 0;  // bytes of one block's scales, unaligned
  uint32_t max_a = 0, max_b = 0;
};

absl::StatusOr<ScaleBounds> MxScaleBounds(const GqmmFacts& f, const GqmmBlock& b) {
  ScaleBounds s;
  s.scale_a = Bytes(CeilDiv(b.base_k, kMxGroup) * b.base_m, f.per_token);
  s.scale_b = Bytes(CeilDiv(b.base_k, kMxGroup) * b.base_n, f.scale);
  if (s.scale_a == 0 || s.scale_b == 0) {
    return CannFaultError(absl::StrCat(
        "the scale factors' bound divides 65536 bytes by the bytes of one block of ",
        s.scale_a == 0 ? "x's" : "the weight's", " MX scales, which is 0 (baseM=", b.base_m,
        ", baseN=", b.base_n, ", baseK=", b.base_k, ")"));
  }
  s.max_a = std::min(static_cast<uint32_t>(kMte2MinLoadBytes / s.scale_a), kScaleFactorMax);
  s.max_b = std::min(static_cast<uint32_t>(kMte2MinLoadBytes / s.scale_b), kScaleFactorMax);
  return s;
}

// The L1 left once the depths of A and B and one block of bias are staged
// (CANN's 64-bit unsigned difference, which wraps if they overflow).
uint64_t L1AfterStages(const GqmmFacts& f, const GqmmPlatform& p, const GqmmBlock& b) {
  const uint64_t a = Bytes(b.base_m * b.base_k, f.a);
  const uint64_t w = Bytes(b.base_n * b.base_k, f.b);
  const uint64_t bias = f.has_bias ? b.base_n * GeSize(f.bias) : 0;
  return p.l1_bytes - (b.depth_a1 * a + b.depth_b1 * w + bias);
}

// GroupedQmmTiling::CalScaleFactors: from k, then from the L1 left: the
// factors that fit at a common count, and the rest to the side with more
// room.
absl::Status GeneralScaleFactors(const GqmmFacts& f, const GqmmPlatform& p, GqmmBlock& b) {
  uint64_t left = L1AfterStages(f, p, b);
  const uint64_t scale_a = Bytes(CeilDiv(b.base_k, kMxGroup) * b.base_m, f.per_token);
  const uint64_t scale_b = Bytes(CeilDiv(b.base_k, kMxGroup) * b.base_n, f.scale);
  const uint64_t both = b.depth_a1 * scale_a + b.depth_b1 * scale_b;
  if (both == 0) {
    return CannFaultError("CalScaleFactors divides the L1 left by the bytes of a stage of MX "
                          "scales, which is 0");
  }
  const uint32_t init = static_cast<uint32_t>(left / both);
  ASSIGN_OR_RETURN(const ScaleBounds s, MxScaleBounds(f, b));
  const uint32_t from_k_a = static_cast<uint32_t>(f.k / (b.step_ka * b.base_k));
  const uint32_t from_k_b = static_cast<uint32_t>(f.k / (b.step_kb * b.base_k));
  uint32_t fa = std::min(s.max_a, std::max(kScaleFactorMin, from_k_a));
  uint32_t fb = std::min(s.max_b, std::max(kScaleFactorMin, from_k_b));
  if (fa <= init && fb > init) {
    left -= fa * b.depth_a1 * scale_a;
    fb = std::min(static_cast<uint32_t>(left / (b.depth_b1 * scale_b)), fb);
  } else if (fb <= init && fa > init) {
    left -= fb * b.depth_b1 * scale_b;
    fa = std::min(static_cast<uint32_t>(left / (b.depth_a1 * scale_a)), fa);
  } else if (fa > init && fb > init) {
    left -= init * b.depth_b1 * scale_b + init * b.depth_a1 * scale_a;
    const uint32_t a_more = std::min(static_cast<uint32_t>(left / (b.depth_a1 * scale_a)),
                                     fa - init);
    const uint32_t b_more = std::min(static_cast<uint32_t>(left / (b.depth_b1 * scale_b)),
                                     fb - init);
    fa = a_more >= b_more ? a_more + init : init;
    fb = a_more < b_more ? b_more + init : init;
  }
  b.scale_factor_a = fa;
  b.scale_factor_b = fb;
  return absl::OkStatus();
}

// GroupedQmmTiling::CalL1Depth.
absl::Status GeneralL1Depth(const GqmmFacts& f, const GqmmPlatform& p, uint64_t left,
                            GqmmBlock& b) {
  const uint64_t a = Bytes(b.base_m * b.base_k, f.a);
  const uint64_t w = Bytes(b.base_n * b.base_k, f.b);
  uint64_t scale_a = 0, scale_b = 0;
  if (f.mx()) {
    if (f.group_type == kGroupSplitM) {
      AlignedMxScaleBytes(f, b, scale_a, scale_b);
    } else {
      // Split K: each group's k rounded to whole pairs of scales.
      const uint64_t k_scales = (b.base_k / (kMxGroup * kMxPair) + f.group_num) * kMxPair;
      scale_a = Bytes(k_scales * b.base_m, f.per_token);
      scale_b = Bytes(k_scales * b.base_n, f.scale);
    }
  }
  const uint64_t stage = a + w + scale_a + scale_b;
  if (left < stage) {
    return L1Overflow(absl::StrCat("CalL1Depth (one stage of A ", a, " + B ", w, " + scales ",
                                   scale_a + scale_b, ")"),
                      left, stage);
  }
  ASSIGN_OR_RETURN(const uint64_t init, DepthA1B1(f, b, left, stage, 1, "A and B"));
  const uint64_t rest = left - init * stage;
  ASSIGN_OR_RETURN(const uint64_t depth_a, DepthA1B1(f, b, rest, (a + scale_a) * init, init, "A"));
  ASSIGN_OR_RETURN(const uint64_t depth_b, DepthA1B1(f, b, rest, (w + scale_b) * init, init, "B"));
  b.depth_a1 = std::max(depth_a, depth_b);
  b.depth_b1 = b.depth_a1;
  if (b.depth_a1 * stage > left) {
    b.depth_a1 = depth_a >= depth_b ? depth_a : init;
    b.depth_b1 = depth_a < depth_b ? depth_b : init;
  }
  CalStepKs(f, b);
  if (f.mx()) RETURN_IF_ERROR(GeneralScaleFactors(f, p, b));
  return absl::OkStatus();
}

// GetDepthWithHighBW: the depth (in base blocks of k, double-buffered) that
// makes one load of `rows` rows at least 64 KiB, as a power of two, at most
// the whole k.
uint64_t HighBandwidthDepth(const GqmmFacts& f, const GqmmBlock& b, uint64_t rows) {
  const uint64_t k_bytes = Bytes(b.base_k, f.a);
  const uint64_t depth =
      CeilAlign(CeilDiv(kMte2MinLoadBytes, rows), kBlock256) / k_bytes * kDoubleBuffer;
  uint64_t pow2 = 2;
  while (pow2 < depth) pow2 *= 2;
  return std::min(pow2, CeilDiv(f.k, b.base_k) * kDoubleBuffer);
}

// ModifyDepthForUnalign: for a k not a multiple of 128, the side whose k is
// innermost in ND (x not transposed; a transposed ND weight) doubles its
// depth into the L1 left, so fewer, longer ND-to-NZ moves run.
void ModifyDepthForUnalignedK(const GqmmFacts& f, uint64_t left, uint64_t a, uint64_t w,
                              uint64_t scales, GqmmBlock& b) {
  if (f.k % kBlock128 == 0) return;
  if (f.trans_a && (!f.trans_b || f.weight_nz)) return;
  auto fits = [&] {
    return b.depth_a1 * a + b.depth_b1 * w + std::max(b.depth_a1, b.depth_b1) * scales <= left;
  };
  if (!f.trans_a) {
    if (b.depth_a1 <= b.depth_b1) {
      const uint64_t left_a = left - b.depth_b1 * w - b.depth_b1 * scales;
      while (b.depth_a1 * 2 * a <= left_a) b.depth_a1 *= 2;
      if (!fits()) b.depth_a1 = b.depth_b1;
    } else if (f.trans_b && !f.weight_nz) {
      const uint64_t left_b = left - b.depth_a1 * a - b.depth_a1 * scales;
      while (b.depth_b1 * 2 * w <= left_b) b.depth_b1 *= 2;
      if (!fits()) b.depth_b1 = b.depth_a1;
    }
    return;
  }
  // Both transposed with an ND weight is the one case left, where CANN
  // grows B's depth instead; the parse admits no such problem (a transposed
  // x means split K, whose weight is not transposed).
}

// GroupedQmmBasicApiTiling::CalScaleFactors: from k, then, when both sides
// want more than fits at a common count, the common count on the deeper
// side and as many more on the other as its depth is shallower.
absl::Status MxBasicScaleFactors(const GqmmFacts& f, const GqmmPlatform& p, GqmmBlock& b) {
  const uint64_t left = L1AfterStages(f, p, b);
  const uint64_t scale_a = Bytes(CeilDiv(b.base_k, kMxGroup) * b.base_m, f.per_token);
  const uint64_t scale_b = Bytes(CeilDiv(b.base_k, kMxGroup) * b.base_n, f.scale);
  const uint64_t depth = std::max(b.depth_a1, b.depth_b1);
  const uint64_t stage = depth * (scale_a + scale_b);
  if (stage == 0) {
    return CannFaultError("CalScaleFactors divides the L1 left by the bytes of a stage of MX "
                          "scales, which is 0");
  }
  const uint32_t init = static_cast<uint32_t>(left / stage);
  if (init == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the MX scales do not fit: the L1 left after the A / B stages (", left,
        " bytes) holds no stage of ", stage, " bytes of scales, so the scale factor would be 0; "
        "CANN refuses the problem (m=", f.m, " n=", f.n, " k=", f.k, " groups=", f.group_num,
        ")"));
  }
  ASSIGN_OR_RETURN(const ScaleBounds s, MxScaleBounds(f, b));
  const uint32_t from_k_a = static_cast<uint32_t>(CeilDiv(f.k, b.step_ka * b.base_k));
  const uint32_t from_k_b = static_cast<uint32_t>(CeilDiv(f.k, b.step_kb * b.base_k));
  uint32_t fa = std::min(s.max_a, std::max(kScaleFactorMin, from_k_a));
  uint32_t fb = std::min(s.max_b, std::max(kScaleFactorMin, from_k_b));
  if (fa > init && fb > init) {
    if (b.depth_a1 >= b.depth_b1) {
      fa = init;
      fb = static_cast<uint32_t>(init * b.depth_a1 / b.depth_b1);
    } else {
      fa = static_cast<uint32_t>(init * b.depth_b1 / b.depth_a1);
      fb = init;
    }
  }
  b.scale_factor_a = fa;
  b.scale_factor_b = fb;
  return absl::OkStatus();
}

// GroupedQmmBasicApiTiling::CalL1Depth.
absl::Status MxBasicL1Depth(const GqmmFacts& f, const GqmmPlatform& p, uint64_t left,
                            GqmmBlock& b) {
  const uint64_t a = Bytes(b.base_m * b.base_k, f.a);
  const uint64_t w = Bytes(b.base_n * b.base_k, f.b);
  uint64_t scale_a = 0, scale_b = 0;
  if (f.mx()) AlignedMxScaleBytes(f, b, scale_a, scale_b);
  const uint64_t stage = a + w + scale_a + scale_b;
  if (left < stage) {
    return L1Overflow(absl::StrCat("CalL1Depth (one stage of A ", a, " + B ", w, " + scales ",
                                   scale_a + scale_b, ")"),
                      left, stage);
  }
  ASSIGN_OR_RETURN(const uint64_t init, DepthA1B1(f, b, left, stage, 1, "A and B"));
  b.depth_a1 = HighBandwidthDepth(f, b, std::min(f.m, b.base_m));
  b.depth_b1 = HighBandwidthDepth(f, b, std::min(f.n, b.base_n));
  const uint64_t scales = scale_a + scale_b;
  if (b.depth_a1 * a + b.depth_b1 * w + std::max(b.depth_a1, b.depth_b1) * scales > left) {
    b.depth_a1 = init;
    b.depth_b1 = init;
  }
  ModifyDepthForUnalignedK(f, left, a, w, scales, b);
  CalStepKs(f, b);
  if (f.mx()) return MxBasicScaleFactors(f, p, b);
  return absl::OkStatus();
}

}  // namespace

GqmmBlock BaseBlock(const GqmmFacts& f, const GqmmPlatform& platform) {
  GqmmBlock b;
  CalBasicBlock(f, b);
  InitCommon(f, platform, b);
  return b;
}

absl::StatusOr<GqmmBlock> GeneralTiling(const GqmmFacts& f, const GqmmPlatform& platform) {
  GqmmBlock b = BaseBlock(f, platform);
  // k = 0 (split K only): the depths and steps keep their initial 1.
  if (f.k == 0) return b;
  ASSIGN_OR_RETURN(const uint64_t left, LeftL1(f, platform, b));
  RETURN_IF_ERROR(GeneralL1Depth(f, platform, left, b));
  return b;
}

absl::StatusOr<GqmmBlock> MxBasicApiTiling(const GqmmFacts& f, const GqmmPlatform& platform) {
  GqmmBlock b = BaseBlock(f, platform);
  ASSIGN_OR_RETURN(const uint64_t left, LeftL1(f, platform, b));
  RETURN_IF_ERROR(MxBasicL1Depth(f, platform, left, b));
  return b;
}

uint32_t MxTypePara(const GqmmBlock& block) {
  auto in_range = [](uint32_t v) { return v >= kScaleFactorMin && v <= kScaleFactorMax; };
  const bool ok = in_range(block.scale_factor_a) && in_range(block.scale_factor_b);
  const uint32_t a = ok ? block.scale_factor_a : 1;
  const uint32_t b = ok ? block.scale_factor_b : 1;
  return 1u << 24 | 1u << 16 | b << 8 | a;
}

uint64_t MxScaleKL1(const GqmmFacts& f, const GqmmBlock& block) {
  const uint64_t k = std::max(block.scale_factor_a * block.step_ka,
                              block.scale_factor_b * block.step_kb) *
                     block.base_k;
  return std::min(k, f.k);
}

}  // namespace npu::tiling::grouped::quant
