#include "server/tiling/quant/l1_tiling_calculator.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"
#include "server/tiling/quant/quant_dtype.h"

namespace npu::tiling::quant {
namespace {

constexpr uint64_t kDoubleBuffer = 2;
constexpr uint64_t kFractalRows = 16;
constexpr uint64_t kReduceBlockBytes = 32;
constexpr uint64_t kL2AlignBytes = 128;
// Per-block and MX kernels stall their issue queue beyond 4 K steps per load.
constexpr uint64_t kMaxStepKPerBlock = 4;
// One B load should move at least this much.
constexpr uint64_t kMinLoadBytes = 32 * 1024;
// MX: one E8M0 scale per 32 K elements, stored in pairs per 64-element group.
constexpr uint64_t kMxScaleGroup = 32;
constexpr uint64_t kMxKGroup = 64;
constexpr uint64_t kMxScalesPerKGroup = 2;
// The scale window the MX depth search reserves at first.
constexpr uint64_t kMxEstimatedScaleK = 4096;
constexpr uint64_t kMaxScaleFactor = 127;

// Steps from depths (CalStepKs): half of each depth, capped at K, the larger
// rounded down to a multiple of the smaller, capped at 4 for per-block, equal
// for per-block with bias; depth = two steps.
absl::Status StepsFromDepths(const QuantFacts& facts, uint64_t base_k, L1Tiling* l1) {
  l1->step_ka = l1->depth_ka / kDoubleBuffer;
  l1->step_kb = l1->depth_kb / kDoubleBuffer;
  if (l1->step_ka * base_k > facts.k) l1->step_ka = CeilDiv(facts.k, base_k);
  if (l1->step_kb * base_k > facts.k) l1->step_kb = CeilDiv(facts.k, base_k);
  if (l1->step_ka == 0 || l1->step_kb == 0) {
    return absl::FailedPreconditionError(absl::StrCat("L1: stepKa ", l1->step_ka, ", stepKb ",
                                                      l1->step_kb, " (depths ", l1->depth_ka, ", ",
                                                      l1->depth_kb, ")"));
  }
  if (l1->step_ka > l1->step_kb) l1->step_ka = l1->step_ka / l1->step_kb * l1->step_kb;
  if (l1->step_kb > l1->step_ka) l1->step_kb = l1->step_kb / l1->step_ka * l1->step_ka;
  if (facts.is_per_block || facts.is_mx) {
    l1->step_ka = std::min(l1->step_ka, kMaxStepKPerBlock);
    l1->step_kb = std::min(l1->step_kb, kMaxStepKPerBlock);
  }
  if (facts.is_per_block && facts.has_bias) {
    l1->step_ka = l1->step_kb = std::min(l1->step_ka, l1->step_kb);
  }
  l1->depth_ka = l1->step_ka * kDoubleBuffer;
  l1->depth_kb = l1->step_kb * kDoubleBuffer;
  return absl::OkStatus();
}

// L1 bytes of the whole of A's K for one baseM (A full load), K aligned to
// 16 elements when K is A's outer axis, to 32 bytes when inner.
uint64_t FullABytes(const QuantFacts& facts, uint64_t base_m) {
  return base_m * (facts.trans_a ? BytesOf(CeilAlign(facts.k, kFractalRows), facts.x1)
                                 : CeilAlign(BytesOf(facts.k, facts.x1), kReduceBlockBytes));
}

// Scale values per row of one baseK (MX): 32-element groups, in pairs.
uint64_t MxScaleK(uint64_t base_k) {
  return CeilAlign(CeilDiv(base_k, kMxScaleGroup), kMxScalesPerKGroup);
}

// B's depth beside a fully loaded A (GetDepthB1AfullLoad): a transposed B's
// K run is first made 128 bytes, then each load is made at least 32 KiB (or
// half of what is left), at least 2 steps when K has more than one block.
// For MX a load also counts B's scale columns (sized as B elements).
uint64_t DepthBBesideFullA(const QuantFacts& facts, uint64_t base_n, uint64_t base_k,
                           uint64_t left_bytes) {
  uint64_t step = 1;
  if (facts.trans_b) {
    const uint64_t k_bytes = BytesOf(base_k, facts.x2);
    if (k_bytes != 0 && k_bytes < kL2AlignBytes) step = CeilDiv(kL2AlignBytes, k_bytes);
  }
  const uint64_t scale_k = facts.is_mx ? MxScaleK(base_k) : 0;
  const uint64_t load_bytes = BytesOf(base_n * (base_k + scale_k) * step, facts.x2);
  if (load_bytes == 0) return kDoubleBuffer;
  const uint64_t scale = left_bytes >= kMinLoadBytes * kDoubleBuffer
                             ? CeilDiv(kMinLoadBytes, load_bytes)
                             : CeilDiv(left_bytes / kDoubleBuffer, load_bytes);
  step *= scale;
  constexpr uint64_t kMinSteps = 2;
  if (step == 1 && facts.k > base_k && left_bytes > load_bytes * kMinSteps) step = kMinSteps;
  return step * kDoubleBuffer;
}

// MX DEFAULT depth (GetDepthA1B1): the largest power of two of A+B blocks
// that fits beside a double-buffered scale window of min(K, 4096) K elements,
// the window growing with the K a step covers.
uint64_t MxDepth(const QuantFacts& facts, uint64_t base_m, uint64_t base_n, uint64_t base_k,
                 uint64_t left_bytes) {
  uint64_t scale_k = std::min(facts.k, kMxEstimatedScaleK);
  const uint64_t ab_bytes = BytesOf(base_m * base_k, facts.x1) + BytesOf(base_n * base_k, facts.x2);
  const uint64_t scale_row_bytes = BytesOf(base_m, facts.pertoken) + BytesOf(base_n, facts.scale);
  auto scale_bytes = [&](uint64_t k) {
    return scale_row_bytes * CeilDiv(k, kMxKGroup) * kMxScalesPerKGroup * kDoubleBuffer;
  };
  uint64_t reserved = scale_bytes(scale_k);
  uint64_t depth = 1;
  while (depth * ab_bytes + reserved <= left_bytes) {
    depth *= 2;
    const uint64_t k_l1 = depth / kDoubleBuffer * base_k;
    if (k_l1 > scale_k) {
      scale_k = k_l1;
      reserved = scale_bytes(scale_k);
    }
  }
  return depth == 1 ? depth : depth / 2;
}

// MX DEFAULT scale factors (CalScaleFactors): the L1 left after the A and B
// depths holds the double-buffered A and B scales of whole 64-element K
// groups; the scale window is that many groups, capped at K rounded up to a
// K load, rounded down to whole K loads. Both factors are the window in loads.
absl::Status MxScaleFactors(const QuantFacts& facts, uint64_t base_m, uint64_t base_n,
                            uint64_t base_k, uint64_t left_bytes, L1Tiling* l1) {
  const uint64_t ab_bytes = l1->depth_ka * BytesOf(base_m * base_k, facts.x1) +
                            l1->depth_kb * BytesOf(base_n * base_k, facts.x2);
  if (left_bytes < ab_bytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("L1: A and B loads (", ab_bytes, " bytes) exceed ", left_bytes));
  }
  const uint64_t k_l1 = std::min(l1->step_ka, l1->step_kb) * base_k;
  const uint64_t group_bytes = (BytesOf(base_m, facts.pertoken) + BytesOf(base_n, facts.scale)) *
                               kMxScalesPerKGroup * kDoubleBuffer;
  if (group_bytes == 0 || k_l1 == 0) {
    return absl::FailedPreconditionError("L1: zero MX scale group or K load");
  }
  uint64_t scale_k_l1 =
      std::min((left_bytes - ab_bytes) / group_bytes * kMxKGroup, CeilAlign(facts.k, k_l1));
  scale_k_l1 = scale_k_l1 / k_l1 * k_l1;
  if (scale_k_l1 == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("L1: no room for an MX scale load (", left_bytes - ab_bytes, " bytes left)"));
  }
  l1->scale_factor_a = l1->scale_factor_b = scale_k_l1 / k_l1;
  return absl::OkStatus();
}

// MX B scale factor beside a fully loaded A (GetScaleFactorBAfullLoad): as
// many B loads per scale load as 64 KiB (or what is left) holds for the
// double-buffered depth, kept a multiple of what makes a transposed B's scale
// run 128 bytes, and within 1..127 and the K loads K has.
uint64_t MxScaleFactorBBesideFullA(const QuantFacts& facts, uint64_t base_n, uint64_t base_k,
                                   const L1Tiling& l1, uint64_t left_bytes) {
  const uint64_t scale_k = MxScaleK(base_k);
  const uint64_t load_bytes = BytesOf(base_n * scale_k, facts.scale);
  if (load_bytes == 0 || l1.step_kb == 0 || l1.depth_kb == 0) return 1;
  uint64_t unit = 1;
  if (facts.trans_b) {
    const uint64_t run_bytes = BytesOf(scale_k, facts.scale);
    if (run_bytes != 0 && run_bytes < kL2AlignBytes) unit = CeilDiv(kL2AlignBytes, run_bytes);
  }
  const uint64_t max_from_k =
      std::max<uint64_t>(1, std::min(kMaxScaleFactor, facts.k / (l1.step_kb * base_k)));
  const uint64_t max_from_l1 =
      std::min(kMinLoadBytes * kDoubleBuffer, left_bytes) / (load_bytes * l1.depth_kb);
  if (max_from_l1 == 0) return 1;
  if (unit <= max_from_k && max_from_l1 >= unit) {
    return std::min(max_from_l1 / unit * unit, max_from_k);
  }
  return std::min(max_from_l1, max_from_k);
}

}  // namespace

absl::StatusOr<uint64_t> L1BytesForAB(const QuantFacts& facts, const ChipSpec& chip,
                                      uint64_t base_n) {
  const uint64_t scale_size = facts.y == GeDtype::kInt32 ? 0 : GeSizeOf(facts.scale);
  const uint64_t bias_bytes = facts.has_bias ? base_n * GeSizeOf(facts.bias) * kDoubleBuffer : 0;
  const uint64_t scale_bytes = facts.is_per_channel ? base_n * scale_size * kDoubleBuffer : 0;
  if (chip.l1_bytes < bias_bytes || chip.l1_bytes - bias_bytes < scale_bytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "L1: bias ", bias_bytes, " + scale ", scale_bytes, " bytes exceed L1 ", chip.l1_bytes));
  }
  return chip.l1_bytes - bias_bytes - scale_bytes;
}

absl::StatusOr<L1Tiling> ComputeL1Tiling(const QuantFacts& facts, const ChipSpec& chip,
                                         uint64_t base_m, uint64_t base_n, uint64_t base_k,
                                         L1TilingMode mode) {
  if (base_m == 0 || base_n == 0 || base_k == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("L1: base block ", base_m, "x", base_n, "x", base_k));
  }
  auto left = L1BytesForAB(facts, chip, base_n);
  if (!left.ok()) return left.status();

  L1Tiling l1;
  if (mode == L1TilingMode::kAFullLoad) {
    l1.step_ka = l1.depth_ka = CeilDiv(facts.k, base_k);
    // MX kernels take K in 64-element groups.
    const uint64_t a_bytes = facts.is_mx ? BytesOf(base_m * CeilAlign(facts.k, kMxKGroup), facts.x1)
                                         : FullABytes(facts, base_m);
    if (*left < a_bytes) {
      return absl::FailedPreconditionError(
          absl::StrCat("L1: full A (", a_bytes, " bytes) exceeds ", *left));
    }
    uint64_t rest = *left - a_bytes;
    if (facts.is_mx) {
      // A's whole scale stays too, 32-byte aligned.
      const uint64_t a_scale_bytes =
          CeilAlign(BytesOf(std::min(facts.m, base_m) *
                                CeilAlign(CeilDiv(facts.k, kMxScaleGroup), kMxScalesPerKGroup),
                            facts.pertoken),
                    kReduceBlockBytes);
      if (rest < a_scale_bytes) {
        return absl::FailedPreconditionError(
            absl::StrCat("L1: A's MX scale (", a_scale_bytes, " bytes) exceeds ", rest));
      }
      rest -= a_scale_bytes;
      l1.scale_factor_a = 1;
    }
    l1.depth_kb = DepthBBesideFullA(facts, base_n, base_k, rest);
    l1.step_kb = l1.depth_kb == 1 ? 1 : l1.depth_kb / kDoubleBuffer;
    if (facts.is_mx) {
      const uint64_t b_bytes =
          CeilAlign(l1.depth_kb * BytesOf(base_n * base_k, facts.x2), kReduceBlockBytes);
      if (rest < b_bytes) {
        return absl::FailedPreconditionError(
            absl::StrCat("L1: B loads (", b_bytes, " bytes) exceed ", rest, " beside full A"));
      }
      l1.scale_factor_b = MxScaleFactorBBesideFullA(facts, base_n, base_k, l1, rest - b_bytes);
    }
    return l1;
  }

  if (facts.is_mx) {
    // DEFAULT for MX: equal power-of-two depths, then the scale factors.
    const uint64_t scale_k = MxScaleK(base_k);
    const uint64_t block_bytes =
        BytesOf(base_m * base_k, facts.x1) + BytesOf(base_n * base_k, facts.x2) +
        BytesOf(scale_k * base_m, facts.pertoken) + BytesOf(scale_k * base_n, facts.scale);
    if (block_bytes == 0) return absl::FailedPreconditionError("L1: zero-size MX base block");
    l1.depth_ka = l1.depth_kb = MxDepth(facts, base_m, base_n, base_k, *left);
    absl::Status steps = StepsFromDepths(facts, base_k, &l1);
    if (!steps.ok()) return steps;
    absl::Status factors = MxScaleFactors(facts, base_m, base_n, base_k, *left, &l1);
    if (!factors.ok()) return factors;
    return l1;
  }

  // DEFAULT: half of the left L1 for each of A and B, in base blocks.
  const uint64_t a_block_bytes = BytesOf(base_m * base_k, facts.x1);
  const uint64_t b_block_bytes = BytesOf(base_n * base_k, facts.x2);
  if (a_block_bytes == 0 || b_block_bytes == 0) {
    return absl::FailedPreconditionError("L1: zero-size base block");
  }
  l1.depth_ka = *left / 2 / a_block_bytes;
  l1.depth_kb = *left / 2 / b_block_bytes;
  absl::Status steps = StepsFromDepths(facts, base_k, &l1);
  if (!steps.ok()) return steps;
  return l1;
}

}  // namespace npu::tiling::quant
