#include "server/tiling/quant/stream_k_tiling.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"
#include "server/tiling/quant/base_block_calculator.h"
#include "server/tiling/quant/l1_tiling_calculator.h"
#include "server/tiling/quant/quant_capability.h"
#include "server/tiling/quant/quant_dtype.h"
#include "server/tiling/quant/sliding_window.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::quant {
namespace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

constexpr uint64_t kDefaultBaseMn = 256;
// baseN is aligned to 32 bytes of x2 when N is its inner axis.
constexpr uint64_t kL1AlignBytes = 32;
constexpr uint64_t kMxKGroup = 64;         // K elements per MX scale pair
constexpr uint64_t kMxScalesPerGroup = 2;  // scale columns per 64 K
constexpr uint64_t kMxScaleBlock = 32;     // K elements per MX scale
constexpr uint64_t kL0cBytesPerElement = 4;
constexpr uint64_t kDoubleBuffer = 2;
constexpr uint32_t kFourBuffers = 4, kTwoBuffers = 2;
// A Stream-K piece covers a multiple of 256 bytes of K (of x1).
constexpr uint64_t kSingleCoreKAlignBytes = 256;
// The small-M x N branch widens a tile count between a third and a half of
// the cores to half of them.
constexpr uint64_t kSmallMnLowDivisor = 3;
constexpr uint64_t kSmallMnHighDivisor = 2;

// The gate's constants (qbmm_streamk_tiling.cpp): bytes, nanoseconds and
// permille, tuned for the Ascend 950.
constexpr uint64_t kGateMinK = 4096;
constexpr uint64_t kGatePlainTransMinMn = 32;   // x1 plain, x2 transposed
constexpr uint64_t kGatePlainTransMinK = 8192;  // x1 plain, x2 transposed
constexpr uint64_t kGateMinSavedBytes = uint64_t{2} << 20;
constexpr uint64_t kGateMinSavedPermille = 330;
constexpr uint64_t kGateMte2BytesPerNs = 4000;
constexpr uint64_t kGateVectorBytesPerNs = 4000;
constexpr uint64_t kGateFixedOverheadNs = 500;
constexpr uint64_t kGateMinMarginNs = 300;
constexpr uint64_t kGateSafetyNum = 6, kGateSafetyDen = 5;  // 1.2 x the extra time
// The shadow's A-full-load rule (the cube strategies' UpdateAFullLoadStatus):
// one core's A rows within half of L1, fewer than 4 block rows.
constexpr uint64_t kFullAL1Share = 2;
constexpr uint64_t kFullAWindowLength = 4;

// The Stream-K struct's layout and the key.
constexpr uint32_t kKernelStreamK = 11;  // VEC_EPILOGUE_STREAMK_WITH_MMAPI
constexpr uint32_t kWithoutBatch = 1;
constexpr uint32_t kApiTensor = 2;
// The workspace: one FP32 256 x 256 partial tile per cube core, plus the
// 16 MiB the cross-core reduction synchronizes through.
constexpr uint64_t kPartialTileElements = 256 * 256;
constexpr uint64_t kReduceSyncBytes = uint64_t{16} << 20;
constexpr uint32_t kStreamKScheduleMode = 1;

// --- Saturating arithmetic ------------------------------------------------
// The gate never wraps: a product or sum that overflows becomes kSaturated,
// and the Checked forms also report the overflow.

bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > kSaturated / a) {
    *out = kSaturated;
    return false;
  }
  *out = a * b;
  return true;
}

bool CheckedAdd(uint64_t a, uint64_t b, uint64_t* out) {
  if (b > kSaturated - a) {
    *out = kSaturated;
    return false;
  }
  *out = a + b;
  return true;
}

uint64_t SatMul(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  CheckedMul(a, b, &out);
  return out;
}

uint64_t SatAdd(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  CheckedAdd(a, b, &out);
  return out;
}

// value * num / den in 128 bits, saturated; kSaturated when den is 0.
uint64_t SatMulDiv(uint64_t value, uint64_t num, uint64_t den) {
  if (den == 0) return kSaturated;
  const unsigned __int128 r = static_cast<unsigned __int128>(value) * num / den;
  return r > kSaturated ? kSaturated : static_cast<uint64_t>(r);
}

// num / den in thousandths (0 when den is 0), saturated.
uint64_t Permille(uint64_t num, uint64_t den) {
  if (den == 0) return 0;
  const unsigned __int128 r = static_cast<unsigned __int128>(num) * 1000 / den;
  return r > kSaturated ? kSaturated : static_cast<uint64_t>(r);
}

// The gate's ceiling division is 0 for a zero divisor.
uint64_t GateCeilDiv(uint64_t value, uint64_t divisor) {
  return divisor == 0 ? 0 : CeilDiv(value, divisor);
}

// Bytes of `elements` elements, saturated (4-bit types: half a byte each).
uint64_t SatBytesOf(uint64_t elements, GeDtype dtype) {
  if (IsFourBit(dtype)) return elements / 2 + elements % 2;
  return SatMul(elements, GeSizeOf(dtype));
}

// Total tiles of a split, or false on overflow.
bool TileCount(uint64_t batch, uint64_t m_count, uint64_t n_count, uint64_t* out) {
  uint64_t mn = 0;
  return CheckedMul(m_count, n_count, &mn) && CheckedMul(batch, mn, out);
}

// The largest K step (a multiple of `k_align`) whose baseM x K and baseN x K
// tiles fit half of L0A; 0 when not even `k_align` fits.
uint64_t L0aMaxK(const QuantFacts& facts, const ChipSpec& chip, uint64_t base_m, uint64_t base_n,
                 uint64_t k_align) {
  const uint64_t k_max =
      ElementsIn(chip.l0a_bytes / kDoubleBuffer, facts.x1) / std::max(base_m, base_n);
  return FloorAlign(k_max, k_align);
}

uint64_t SingleCoreKAlign(const QuantFacts& facts) {
  return ElementsIn(kSingleCoreKAlignBytes, facts.x1);
}

// --- The MTE2 traffic model -----------------------------------------------

// Adds `repeat` reads of an outer x inner tensor; false on overflow.
bool AddTensorReads(uint64_t repeat, uint64_t outer, uint64_t inner, GeDtype dtype,
                    uint64_t* total) {
  uint64_t elements = 0;
  if (!CheckedMul(outer, inner, &elements)) return false;
  uint64_t bytes = SatBytesOf(elements, dtype);
  if (bytes == kSaturated || !CheckedMul(repeat, bytes, &bytes)) return false;
  return CheckedAdd(*total, bytes, total);
}

// Bytes MTE2 moves for an m_count x n_count split: every block column reads
// all of A and every block row all of B, and for MX also their scales
// ([M, ceil(K/64)*2] and [ceil(K/64)*2, N] E8M0). The one or two scalar
// scales of a per-tensor input are left out. 0 for an MX scale of unknown
// size; kSaturated on overflow.
uint64_t EstimateMte2Bytes(const QuantFacts& facts, uint64_t m_count, uint64_t n_count) {
  if (facts.is_mx && (GeSizeOf(facts.scale) == 0 || GeSizeOf(facts.pertoken) == 0)) return 0;
  uint64_t total = 0;
  if (!AddTensorReads(n_count, facts.m, facts.k, facts.x1, &total) ||
      !AddTensorReads(m_count, facts.n, facts.k, facts.x2, &total)) {
    return kSaturated;
  }
  if (!facts.is_mx) return total;
  const uint64_t scale_k = SatMul(GateCeilDiv(facts.k, kMxKGroup), kMxScalesPerGroup);
  if (scale_k == kSaturated) return kSaturated;
  const bool ok = AddTensorReads(n_count, facts.m, scale_k, facts.pertoken, &total) &&
                  AddTensorReads(m_count, facts.n, scale_k, facts.scale, &total);
  return ok ? total : kSaturated;
}

// One split the gate weighs.
struct Candidate {
  uint64_t base_m = 0, base_n = 0, base_k = 0;
  uint64_t m_count = 0, n_count = 0, mn_count = 0;
  uint64_t single_core_k = 0;
  uint64_t split_k = 1;
  uint64_t mte2_bytes = 0;
};

bool Mte2Valid(uint64_t bytes) { return bytes != 0 && bytes != kSaturated; }

// A sliding-window split with baseM x baseN tiles and K unsplit
// (BuildBenefitCandidate); false when L0A cannot hold one K step or the
// counts overflow.
bool MakeWindowCandidate(const QuantFacts& facts, const ChipSpec& chip, uint64_t base_m,
                         uint64_t base_n, Candidate* c) {
  if (base_m == 0 || base_n == 0 || chip.aic_num == 0) return false;
  const uint64_t k_align = BaseKAlign(facts);
  if (k_align == 0) return false;
  const uint64_t k_max = L0aMaxK(facts, chip, base_m, base_n, k_align);
  if (k_max < k_align) return false;
  c->base_m = base_m;
  c->base_n = base_n;
  c->base_k = std::min(CeilAlign(facts.k, k_align), k_max);
  c->m_count = GateCeilDiv(facts.m, base_m);
  c->n_count = GateCeilDiv(facts.n, base_n);
  if (!TileCount(facts.batch_c, c->m_count, c->n_count, &c->mn_count)) return false;
  c->single_core_k = facts.k;
  c->split_k = 1;
  c->mte2_bytes = EstimateMte2Bytes(facts, c->m_count, c->n_count);
  return c->mn_count != 0 && Mte2Valid(c->mte2_bytes);
}

// The candidate base sizes along one axis (BuildBaseCandidates): the
// default min(shape, 256), the alignment itself, and shape / t for every
// t = 1..cores, each aligned up, no larger than the aligned shape, sorted
// and distinct.
std::vector<uint64_t> BaseCandidates(uint64_t shape, uint64_t align, uint64_t cores) {
  std::vector<uint64_t> bases;
  if (shape == 0 || align == 0 || cores == 0) return bases;
  bases.reserve(cores + 2);
  const uint64_t limit = CeilAlign(shape, align);
  auto add = [&](uint64_t base) {
    if (base != 0 && base <= limit) bases.push_back(base);
  };
  add(CeilAlign(std::min(shape, kDefaultBaseMn), align));
  add(align);
  for (uint64_t t = 1; t <= cores; ++t) add(CeilAlign(GateCeilDiv(shape, t), align));
  std::sort(bases.begin(), bases.end());
  bases.erase(std::unique(bases.begin(), bases.end()), bases.end());
  return bases;
}

// The split Stream-K itself would make, with the gate's arithmetic
// (BuildActualStreamKCandidate); it mirrors ComputeStreamKBlock.
bool MakeStreamKCandidate(const QuantFacts& facts, const ChipSpec& chip, Candidate* c) {
  const uint64_t cores = chip.aic_num;
  const uint64_t m_align = BaseMAlign(facts);
  const uint64_t n_align = BaseNAlign(facts, kL1AlignBytes);
  const uint64_t k_align = BaseKAlign(facts);
  if (cores == 0 || m_align == 0 || n_align == 0 || k_align == 0) return false;

  uint64_t base_m = CeilAlign(std::min(facts.m, kDefaultBaseMn), m_align);
  uint64_t base_n = CeilAlign(std::min(facts.n, kDefaultBaseMn), n_align);
  uint64_t m_count = GateCeilDiv(facts.m, base_m);
  uint64_t n_count = GateCeilDiv(facts.n, base_n);
  uint64_t mn_count = 0;
  if (!TileCount(facts.batch_c, m_count, n_count, &mn_count) || mn_count == 0) return false;

  uint64_t single_core_k = facts.k;
  if (mn_count <= cores / kSmallMnHighDivisor) {
    if (m_count > cores / kSmallMnLowDivisor && m_count < cores / kSmallMnHighDivisor) {
      m_count = cores / kSmallMnHighDivisor;
    }
    if (n_count > cores / kSmallMnLowDivisor && n_count < cores / kSmallMnHighDivisor) {
      n_count = cores / kSmallMnHighDivisor;
    }
    base_m = CeilAlign(GateCeilDiv(facts.m, m_count), m_align);
    base_n = CeilAlign(GateCeilDiv(facts.n, n_count), n_align);
    if (!TileCount(facts.batch_c, m_count, n_count, &mn_count) || mn_count == 0) return false;
    single_core_k = GateCeilDiv(facts.k, std::max<uint64_t>(cores / mn_count, 1));
  } else if (const uint64_t tail = mn_count % cores; tail != 0) {
    single_core_k = GateCeilDiv(facts.k, std::max<uint64_t>(cores / tail, 1));
  }
  single_core_k = CeilAlign(single_core_k, SingleCoreKAlign(facts));
  if (single_core_k == 0) return false;

  const uint64_t k_max = L0aMaxK(facts, chip, base_m, base_n, k_align);
  if (k_max < k_align) return false;
  if (!MakeWindowCandidate(facts, chip, base_m, base_n, c)) return false;
  c->m_count = m_count;
  c->n_count = n_count;
  if (!TileCount(facts.batch_c, m_count, n_count, &c->mn_count)) return false;
  c->single_core_k = single_core_k;
  c->split_k = std::max<uint64_t>(GateCeilDiv(facts.k, single_core_k), 1);
  c->base_k = std::min({single_core_k, k_max, CeilAlign(facts.k, k_align)});
  c->mte2_bytes = EstimateMte2Bytes(facts, m_count, n_count);
  return c->mn_count != 0 && c->base_k != 0 && Mte2Valid(c->mte2_bytes);
}

// The ASW strategies' own split (CalcAswtShadowInfo): the DEFAULT base block
// (with the MX load balance) without batch spread. (CANN takes the MMAD_S8S4
// block on chips with that instruction; DAV_3510 has none.)
bool MakeShadowCandidate(const QuantFacts& facts, const ChipSpec& chip, Candidate* c) {
  if (chip.aic_num == 0) return false;
  const absl::StatusOr<BaseBlock> block = ComputeBaseBlock(facts, chip, 1, BaseBlockMode::kDefault);
  if (!block.ok() || block->base_m == 0 || block->base_n == 0) return false;
  c->base_m = block->base_m;
  c->base_n = block->base_n;
  c->base_k = block->base_k;
  c->m_count = GateCeilDiv(facts.m, c->base_m);
  c->n_count = GateCeilDiv(facts.n, c->base_n);
  if (!TileCount(1, c->m_count, c->n_count, &c->mn_count)) return false;
  c->mte2_bytes = EstimateMte2Bytes(facts, c->m_count, c->n_count);
  return c->mn_count != 0 && Mte2Valid(c->mte2_bytes);
}

// Whether the ASW strategies would keep A fully in L1 for the shadow split
// (then their reuse of A beats any Stream-K MTE2 saving).
bool ShadowLoadsAFully(const QuantFacts& facts, const ChipSpec& chip, const Candidate& shadow) {
  if (facts.batch_c != 1 || chip.aic_num == 0 || shadow.m_count == 0 || shadow.mn_count == 0) {
    return false;
  }
  uint64_t a_elements = 0;
  if (!CheckedMul(shadow.base_m, facts.k, &a_elements)) return false;
  const uint64_t a_bytes = SatBytesOf(a_elements, facts.x1);
  return a_bytes != kSaturated && a_bytes <= chip.l1_bytes / kFullAL1Share &&
         shadow.m_count < kFullAWindowLength && chip.aic_num % shadow.m_count == 0 &&
         shadow.mn_count > chip.aic_num;
}

// What Stream-K adds: the vector cores read every partial FP32 tile of the
// tiles left over from the full rounds (all tiles when there are fewer than
// cores) and write those tiles' output, at 4000 B/ns, plus a fixed 500 ns.
void EstimateExtraCost(const QuantFacts& facts, const Candidate& sk, uint64_t cores,
                       StreamKGateResult* gate) {
  const uint64_t tail = (cores == 0 || sk.mn_count == 0)
                            ? 0
                            : (sk.mn_count < cores ? sk.mn_count : sk.mn_count % cores);
  const uint64_t tile_elements = SatMul(sk.base_m, sk.base_n);
  const uint64_t partial_bytes = SatMul(tile_elements, kL0cBytesPerElement);
  const uint64_t output_bytes = SatBytesOf(tile_elements, facts.y);
  const uint64_t read_bytes = SatMul(SatMul(tail, sk.split_k), partial_bytes);
  const uint64_t write_bytes = SatMul(tail, output_bytes);
  gate->extra_bytes = SatAdd(read_bytes, write_bytes);
  gate->extra_time_ns =
      SatAdd(GateCeilDiv(gate->extra_bytes, kGateVectorBytesPerNs), kGateFixedOverheadNs);
}

}  // namespace

StreamKGateResult EvaluateStreamKGate(const QuantFacts& facts, const ChipSpec& chip) {
  StreamKGateResult gate;
  const uint64_t cores = chip.aic_num;
  const uint64_t m_align = BaseMAlign(facts);
  const uint64_t n_align = BaseNAlign(facts, kL1AlignBytes);
  if (cores == 0 || m_align == 0 || n_align == 0) {
    gate.reason = "invalid_basic_param";
    return gate;
  }
  // x1 plain with x2 transposed gains only on large shapes.
  if (!facts.trans_a && facts.trans_b &&
      (facts.m <= kGatePlainTransMinMn || facts.n <= kGatePlainTransMinMn ||
       facts.k <= kGatePlainTransMinK)) {
    gate.reason = "ta0tb1_small_shape";
    return gate;
  }

  Candidate sk, shadow;
  const bool has_sk = MakeStreamKCandidate(facts, chip, &sk);
  const bool has_shadow = MakeShadowCandidate(facts, chip, &shadow);

  // The window splits searched: the one using the most cores (ties: less
  // MTE2 traffic), and the one with least traffic among those filling all.
  Candidate best_util, best_full;
  bool has_util = false, has_full = false;
  uint64_t best_util_slots = 0;
  for (uint64_t base_m : BaseCandidates(facts.m, m_align, cores)) {
    for (uint64_t base_n : BaseCandidates(facts.n, n_align, cores)) {
      Candidate c;
      if (!MakeWindowCandidate(facts, chip, base_m, base_n, &c)) continue;
      const uint64_t slots = std::min(c.mn_count, cores);
      if (!has_util || slots > best_util_slots ||
          (slots == best_util_slots && c.mte2_bytes < best_util.mte2_bytes)) {
        best_util = c;
        best_util_slots = slots;
        has_util = true;
      }
      if (c.mn_count >= cores && (!has_full || c.mte2_bytes < best_full.mte2_bytes)) {
        best_full = c;
        has_full = true;
      }
    }
  }
  if (!has_util) {
    gate.reason = "no_legal_aswt_candidate";
    return gate;
  }

  // The window side is the shadow when there is one.
  gate.aswt_mn_count = best_util.mn_count;
  gate.aswt_mte2_bytes = best_util.mte2_bytes;
  gate.aswt_util_permille = Permille(best_util_slots, cores);
  if (has_shadow) {
    gate.aswt_mn_count = shadow.mn_count;
    gate.aswt_mte2_bytes = shadow.mte2_bytes;
    gate.aswt_util_permille = Permille(std::min(shadow.mn_count, cores), cores);
    gate.aswt_a_full_load = ShadowLoadsAFully(facts, chip, shadow);
  }
  if (has_sk) {
    EstimateExtraCost(facts, sk, cores, &gate);
    gate.sk_base_m = sk.base_m;
    gate.sk_base_n = sk.base_n;
    gate.sk_base_k = sk.base_k;
    gate.sk_mn_count = sk.mn_count;
    gate.sk_single_core_k = sk.single_core_k;
    gate.sk_split_k = sk.split_k;
    gate.sk_mte2_bytes = sk.mte2_bytes;
    gate.sk_util_permille = Permille(std::min(SatMul(sk.mn_count, sk.split_k), cores), cores);
    if (gate.sk_util_permille < gate.aswt_util_permille) {
      gate.reason = "sk_util_lower_than_aswt";
      return gate;
    }
  }

  // Small M x N: no window split fills the cores. Stream-K pays when the
  // window leaves most cores idle, K is long and the pieces fill the cores.
  if (best_util_slots < cores) {
    if (!has_sk) {
      gate.reason = "small_mn_no_sk_fill";
    } else if (gate.aswt_mn_count >= cores / 2) {
      gate.reason = "small_mn_aswt_half_core";
    } else {
      gate.admit = facts.k >= kGateMinK && SatMul(sk.mn_count, sk.split_k) >= cores;
      gate.reason = gate.admit ? "small_mn_core_fill" : "small_mn_extra_cost";
    }
    return gate;
  }

  // Large M x N: Stream-K's bigger tiles must save MTE2 traffic against the
  // cheapest full-core window split.
  if (!has_full || !has_sk) {
    gate.reason = "mte2_no_full_core_pair";
    return gate;
  }
  if (gate.aswt_a_full_load) {
    gate.reason = "mte2_aswt_a_full_load";
    return gate;
  }
  gate.aswt_mn_count = best_full.mn_count;
  gate.aswt_mte2_bytes = best_full.mte2_bytes;
  gate.saved_mte2_bytes =
      best_full.mte2_bytes > sk.mte2_bytes ? best_full.mte2_bytes - sk.mte2_bytes : 0;
  gate.saved_mte2_permille = Permille(gate.saved_mte2_bytes, gate.aswt_mte2_bytes);
  gate.saved_time_ns = GateCeilDiv(gate.saved_mte2_bytes, kGateMte2BytesPerNs);
  gate.required_saved_time_ns =
      SatAdd(SatMulDiv(gate.extra_time_ns, kGateSafetyNum, kGateSafetyDen), kGateMinMarginNs);
  if (sk.split_k == 1) {
    gate.reason = "mte2_no_splitk";
    return gate;
  }
  gate.admit = gate.saved_mte2_bytes >= kGateMinSavedBytes &&
               gate.saved_mte2_permille >= kGateMinSavedPermille &&
               gate.saved_time_ns >= gate.required_saved_time_ns;
  gate.reason = gate.admit ? "mte2_reuse_saving" : "mte2_extra_cost";
  return gate;
}

absl::StatusOr<StreamKBlock> ComputeStreamKBlock(const QuantFacts& facts, const ChipSpec& chip,
                                                 uint64_t batch_core_count) {
  const uint64_t cores = chip.aic_num;
  const uint64_t m_align = BaseMAlign(facts);
  const uint64_t n_align = BaseNAlign(facts, kL1AlignBytes);
  const uint64_t k_align = BaseKAlign(facts);
  if (cores == 0 || batch_core_count == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("Stream-K base block: aic_num ", cores, ", batch cores ", batch_core_count));
  }
  if (m_align == 0 || n_align == 0 || k_align == 0) {
    return absl::FailedPreconditionError("Stream-K base block: a zero alignment (unknown dtype)");
  }

  // 256 x 256 tiles (aligned); K is split only for the tiles that do not
  // fill a whole round: all of them when there are at most half as many
  // tiles as cores (then a count between a third and a half of the cores is
  // widened to half, for smaller tiles), else the last round's.
  StreamKBlock b;
  b.base_m = CeilAlign(std::min(facts.m, kDefaultBaseMn), m_align);
  b.base_n = CeilAlign(std::min(facts.n, kDefaultBaseMn), n_align);
  b.m_count = CeilDiv(facts.m, b.base_m);
  b.n_count = CeilDiv(facts.n, b.base_n);
  uint64_t tiles = batch_core_count * b.m_count * b.n_count;
  if (tiles <= cores / kSmallMnHighDivisor) {
    if (b.m_count > cores / kSmallMnLowDivisor && b.m_count < cores / kSmallMnHighDivisor) {
      b.m_count = cores / kSmallMnHighDivisor;
    }
    if (b.n_count > cores / kSmallMnLowDivisor && b.n_count < cores / kSmallMnHighDivisor) {
      b.n_count = cores / kSmallMnHighDivisor;
    }
    b.base_m = CeilAlign(CeilDiv(facts.m, b.m_count), m_align);
    b.base_n = CeilAlign(CeilDiv(facts.n, b.n_count), n_align);
    tiles = batch_core_count * b.m_count * b.n_count;
    if (tiles == 0) return absl::FailedPreconditionError("Stream-K base block: no tiles");
    b.stream_k_count = std::max<uint64_t>(cores / tiles, 1);
    b.single_core_k = CeilDiv(facts.k, b.stream_k_count);
  } else if (const uint64_t tail = tiles % cores; tail == 0) {
    b.stream_k_count = 1;
    b.single_core_k = facts.k;
  } else {
    b.stream_k_count = std::max<uint64_t>(cores / tail, 1);
    b.single_core_k = CeilDiv(facts.k, b.stream_k_count);
  }

  b.single_core_k = CeilAlign(b.single_core_k, SingleCoreKAlign(facts));
  if (b.single_core_k == 0) return absl::FailedPreconditionError("Stream-K: singleCoreK 0");
  b.stream_k_count = CeilDiv(facts.k, b.single_core_k);
  const uint64_t k_max = L0aMaxK(facts, chip, b.base_m, b.base_n, k_align);
  if (k_max == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Stream-K: L0A ", chip.l0a_bytes, " holds no K step of ", b.base_m, "x", b.base_n));
  }
  b.base_k = std::min({b.single_core_k, k_max, CeilAlign(facts.k, k_align)});
  if (b.base_m == 0 || b.base_n == 0 || b.base_k == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("Stream-K base block ", b.base_m, "x", b.base_n, "x", b.base_k));
  }
  return b;
}

namespace {

// A K length whose bytes are a non-zero multiple of 256 for each operand
// with K as its inner axis (x1 plain, x2 transposed).
bool KTailAligned(const QuantFacts& facts, uint64_t k_l1) {
  auto aligned = [k_l1](GeDtype dtype) {
    const uint64_t bytes = BytesOf(k_l1, dtype);
    return bytes != 0 && bytes % kSingleCoreKAlignBytes == 0;
  };
  return (facts.trans_a || aligned(facts.x1)) && (!facts.trans_b || aligned(facts.x2));
}

// The MX scale factors of a K step (CalScaleFactorsStreamK): how many steps
// of scales one load brings, ideally the whole piece, at most 32 KiB of
// scales and 127 steps, then cut to what L1 has left after the A and B
// buffers (split evenly first, the remainder to the side that wants more).
// Returns false on a zero divisor; a factor may come out 0 (no fit).
bool MxScaleFactors(const QuantFacts& facts, uint64_t base_m, uint64_t base_n, uint64_t base_k,
                    uint64_t target_k, uint64_t left_l1, StreamKL1* l1) {
  constexpr uint64_t kMaxScaleLoadBytes = 32768;
  constexpr uint64_t kMaxScaleFactor = 127;
  const uint64_t scale_k = CeilAlign(CeilDiv(base_k, kMxScaleBlock), kMxScalesPerGroup);
  const uint64_t scale_a_bytes = BytesOf(scale_k * base_m, facts.pertoken);
  const uint64_t scale_b_bytes = BytesOf(scale_k * base_n, facts.scale);
  const uint64_t step_k_len = l1->step_k * base_k;
  if (scale_a_bytes == 0 || scale_b_bytes == 0 || target_k == 0 || step_k_len == 0) return false;
  const uint64_t max_a = std::min(kMaxScaleLoadBytes / scale_a_bytes, kMaxScaleFactor);
  const uint64_t max_b = std::min(kMaxScaleLoadBytes / scale_b_bytes, kMaxScaleFactor);
  uint64_t factor_a = std::min(max_a, std::max<uint64_t>(target_k / step_k_len, 1));
  uint64_t factor_b = std::min(max_b, std::max<uint64_t>(target_k / step_k_len, 1));

  const uint64_t ab_bytes = l1->depth_k * BytesOf(base_m * base_k, facts.x1) +
                            l1->depth_k * BytesOf(base_n * base_k, facts.x2);
  if (left_l1 < ab_bytes) return false;
  uint64_t left = left_l1 - ab_bytes;
  const uint64_t per_a = l1->depth_k * scale_a_bytes;
  const uint64_t per_b = l1->depth_k * scale_b_bytes;
  if (per_a == 0 || per_b == 0 || per_a + per_b < per_a) return false;
  const uint64_t even = left / (per_a + per_b);
  if (factor_a <= even && factor_b > even) {
    left -= factor_a * per_a;
    factor_b = std::min(left / per_b, factor_b);
  } else if (factor_b <= even && factor_a > even) {
    left -= factor_b * per_b;
    factor_a = std::min(left / per_a, factor_a);
  } else if (factor_a > even && factor_b > even) {
    left -= even * per_b + even * per_a;
    const uint64_t more_a = std::min(left / per_a, factor_a - even);
    const uint64_t more_b = std::min(left / per_b, factor_b - even);
    factor_a = more_a >= more_b ? more_a + even : even;
    factor_b = more_a < more_b ? more_b + even : even;
  }
  l1->scale_factor_a = factor_a;
  l1->scale_factor_b = factor_b;
  return true;
}

}  // namespace

absl::StatusOr<StreamKL1> ComputeStreamKL1(const QuantFacts& facts, const ChipSpec& chip,
                                           uint64_t base_m, uint64_t base_n, uint64_t base_k,
                                           uint64_t single_core_k) {
  if (base_m == 0 || base_n == 0 || base_k == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("Stream-K L1: base block ", base_m, "x", base_n, "x", base_k));
  }
  ASSIGN_OR_RETURN(const uint64_t left_l1, L1BytesForAB(facts, chip, base_n));
  // The largest step (K blocks per load, double-buffered) that fits, trying
  // first only steps whose K length keeps the K-inner operands' loads
  // 256-byte aligned.
  const uint64_t target_k = single_core_k == 0 ? facts.k : single_core_k;
  const uint64_t max_step = std::max<uint64_t>(CeilDiv(target_k, base_k), 1);
  const uint64_t a_bytes = BytesOf(base_m * base_k, facts.x1);
  const uint64_t b_bytes = BytesOf(base_n * base_k, facts.x2);
  const bool wants_aligned_tail = !facts.trans_a || facts.trans_b;
  for (int pass = 0; pass < 2; ++pass) {
    const bool aligned_only = wants_aligned_tail && pass == 0;
    for (uint64_t step = max_step; step >= 1; --step) {
      if (aligned_only && !KTailAligned(facts, std::min(step * base_k, target_k))) continue;
      StreamKL1 l1;
      l1.step_k = step;
      l1.depth_k = step * kDoubleBuffer;
      if (l1.depth_k * a_bytes + l1.depth_k * b_bytes > left_l1) continue;
      if (!facts.is_mx) return l1;
      if (MxScaleFactors(facts, base_m, base_n, base_k, target_k, left_l1, &l1) &&
          l1.scale_factor_a >= 1 && l1.scale_factor_b >= 1) {
        return l1;
      }
    }
    if (!wants_aligned_tail) break;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("Stream-K L1: no K step of ", base_m, "x", base_n, "x", base_k, " fits"));
}

bool MxStreamKStrategy::IsCapable(const QuantFacts& facts, const ChipSpec& chip,
                                  std::string* reason) const {
  if (!StreamKInputCapable(facts, chip, reason)) return false;
  const StreamKGateResult gate = EvaluateStreamKGate(facts, chip);
  if (!gate.admit) {
    if (reason != nullptr) *reason = absl::StrCat("Stream-K cost model declines: ", gate.reason);
    return false;
  }
  // A bias added after the dequant exists only on Stream-K pieces: every
  // tile must be one, i.e. fewer tiles than cores.
  if (IsPostDequantBiasInput(facts) && gate.sk_mn_count >= chip.aic_num) {
    if (reason != nullptr) {
      *reason = absl::StrCat("post-dequant bias needs all tiles split (", gate.sk_mn_count,
                             " tiles, ", chip.aic_num, " cores)");
    }
    return false;
  }
  if (reason != nullptr) *reason = absl::StrCat("Stream-K cost model admits: ", gate.reason);
  return true;
}

absl::StatusOr<QuantPlan> MxStreamKStrategy::DoTiling(const QuantFacts& facts,
                                                      const ChipSpec& chip) const {
  RETURN_IF_ERROR(CheckAswPlatform(chip));
  ASSIGN_OR_RETURN(const StreamKBlock block, ComputeStreamKBlock(facts, chip, facts.batch_c));
  ASSIGN_OR_RETURN(const StreamKL1 l1, ComputeStreamKL1(facts, chip, block.base_m, block.base_n,
                                                        block.base_k, block.single_core_k));
  // One load brings stepK blocks of K, never past the piece; the scales
  // come scaleFactor loads at a time.
  const uint64_t k_l1 = std::min(l1.step_k * block.base_k, block.single_core_k);
  const uint64_t scale_k_l1 = std::max(std::min(l1.scale_factor_a * l1.step_k * block.base_k,
                                                l1.scale_factor_b * l1.step_k * block.base_k),
                                       k_l1);

  BasicApiTiling tiling;
  tiling.base_m = block.base_m;
  tiling.base_n = block.base_n;
  tiling.base_k = block.base_k;
  tiling.k_al1 = tiling.k_bl1 = k_l1;
  tiling.scale_k_l1 = scale_k_l1;
  tiling.db_l0c = SatMul(SatMul(SatMul(block.base_m, block.base_n), kL0cBytesPerElement),
                         kDoubleBuffer) <= chip.l0c_bytes
                      ? 2
                      : 1;
  tiling.weight_must_hit_l2 = IsWeightMustHitL2(facts, block.base_m);
  // The kernel always double-buffers L1; the buffer word still reports
  // whether four A/B buffers and two of the scales (and bias) would fit.
  tiling.buffer_count = kTwoBuffers;
  if (IsMxStreamKInput(facts)) {
    tiling.x1_quant_mode = kMxPerGroup;
    tiling.x2_quant_mode = kMxPerGroup;
    const uint64_t scale_cols = CeilDiv(scale_k_l1, kMxScaleBlock);
    uint64_t used = BytesOf(block.base_n * k_l1, facts.x2) * kFourBuffers;
    used += BytesOf(block.base_n * scale_cols, facts.scale) * kTwoBuffers;
    if (facts.has_bias) used += BytesOf(block.base_n, facts.bias) * kTwoBuffers;
    used += BytesOf(block.base_m * k_l1, facts.x1) * kFourBuffers;
    used += BytesOf(block.base_m * scale_cols, facts.pertoken) * kTwoBuffers;
    tiling.buffer_count = used < chip.l1_bytes ? kFourBuffers : kTwoBuffers;
  }

  // The basic-API words with a neutral window (no tail split or edge
  // merge), then the Stream-K piece between the cube tiling and the window.
  SlidingWindow neutral;
  const std::vector<uint32_t> basic = WriteBasicApiWords(facts, tiling, neutral);
  constexpr size_t kCubeEnd = 32;  // words 0-31: parameters and cube tiling
  QuantPlan plan;
  plan.words.assign(basic.begin(), basic.begin() + kCubeEnd);
  plan.words.push_back(static_cast<uint32_t>(block.single_core_k));
  plan.words.push_back(static_cast<uint32_t>(k_l1));
  plan.words.push_back(0);  // reserved
  plan.words.push_back(0);  // reserved
  plan.words.insert(plan.words.end(), basic.begin() + kCubeEnd, basic.end());

  plan.strategy = std::string(name());
  plan.key.a_trans = facts.trans_a ? 1 : 0;
  plan.key.b_trans = facts.trans_b ? 1 : 0;
  plan.key.batch_mode = kWithoutBatch;
  plan.key.kernel = kKernelStreamK;
  plan.key.api_level = kApiTensor;
  plan.block_dim = chip.aic_num;
  plan.workspace_bytes = kLibraryWorkspaceBytes +
                         uint64_t{chip.aic_num} * kPartialTileElements * kL0cBytesPerElement +
                         kReduceSyncBytes;
  plan.schedule_mode = kStreamKScheduleMode;
  return plan;
}

}  // namespace npu::tiling::quant
