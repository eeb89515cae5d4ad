#include "server/tiling/quant/mx_basic_api_asw.h"

#include <algorithm>

#include "server/tiling/int_math.h"
#include "server/tiling/quant/base_block_calculator.h"
#include "server/tiling/quant/l1_tiling_calculator.h"
#include "server/tiling/quant/quant_capability.h"
#include "server/tiling/quant/quant_dtype.h"
#include "server/tiling/quant/sliding_window.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling::quant {
namespace {

constexpr uint64_t kWindowLength = 4;
// A is a full-load candidate only when one core's A takes at most half of L1.
constexpr uint64_t kFullAL1Share = 2;
constexpr uint64_t kMxKGroup = 64;      // K elements per pair of E8M0 scales
constexpr uint64_t kMxScaleGroup = 32;  // K elements per E8M0 scale
constexpr uint64_t kMxScalesPerKGroup = 2;
constexpr uint64_t kMte2AlignBytes = 128;
constexpr uint64_t kStepKTwoAlignBytes = 256;
constexpr uint64_t kEstimatedScaleK = 4096;
constexpr uint64_t kMaxStepKEstimate = 4;
constexpr uint64_t kStepKTwo = 2;
constexpr uint32_t kTwoBuffers = 2, kThreeBuffers = 3, kFourBuffers = 4;
// The L0C ping-pong kernels aim at this scale window, for outputs up to 128 MiB.
constexpr uint64_t kPingpongScaleKL1 = 2048;
constexpr uint64_t kPingpongMaxOutputBytes = uint64_t{128} << 20;
// A full load is kept when A's repeated reads exceed this share of the
// traffic without it.
constexpr double kRepeatALoadShare = 0.20;

// The 950's fixed figures of the MTE2-bound estimate.
constexpr double kMaxHbmTbps = 4.0;
constexpr double kMaxL2Tbps = 5.2;
constexpr double kMte2Utilization = 0.9;
constexpr double kBytesPerUsPerTbps = 1000.0 * 1000.0;
constexpr double kCubeFreqMhz = 1650.0;
constexpr uint64_t kMxfp8MacsPerCycle = 16 * 32 * 16;

// The roofline of IsMxCubeBound: minimum 950 bandwidths (TB/s), throughputs
// of the 32-core part (TFLOPS) and L2 capacity.
constexpr double kRooflineHbmTbps = 1.4;
constexpr double kRooflineL2Tbps = 5.2;
constexpr double kMxfp4Tflops = 1728.0;
constexpr double kMxfp8Tflops = 864.0;
constexpr double kOpsPerMac = 2.0;
constexpr uint64_t kMmadBlock = 256;
constexpr uint64_t kL2CacheBytes = uint64_t{128} << 20;
constexpr uint64_t kL2FootprintPercent = 80;
constexpr uint64_t kMxfp8InnerAlignBytes = 128;
constexpr uint64_t kMxfp4InnerAlignBytes = 256;

constexpr uint32_t kKernelPlain = 0;               // NO_VEC_EPILOGUE_WITH_MMAPI
constexpr uint32_t kKernelAFullLoad = 1;           // ..._CUSTOM_GMTOAL1_WITH_MMAPI
constexpr uint32_t kKernelPingpong = 9;            // ..._WITH_MMAPI_MX_L0C_PINGPONG
constexpr uint32_t kKernelAFullLoadPingpong = 10;  // ..._GMTOAL1_WITH_MMAPI_MX_L0C_PINGPONG
constexpr uint32_t kApiBasic = 1, kApiTensor = 2;
constexpr uint32_t kBatchModeWith = 0, kBatchModeWithout = 1;

bool IsFp4(GeDtype dtype) { return dtype == GeDtype::kFloat4E2M1; }

// One L1 configuration to price: the K of one A/B load, the scale window and
// the block, with A fully loaded or not.
struct L1Estimate {
  uint64_t k_l1 = 0, scale_k_l1 = 0;
  uint64_t base_m = 0, base_n = 0;
  bool a_full_load = false;
};

// CANN's MX-specific models, over the problem and the window as it stands.
class MxModel {
 public:
  MxModel(const QuantFacts& facts, const ChipSpec& chip, const SlidingWindow& window,
          const bool& a_full_load)
      : facts_(facts), chip_(chip), window_(window), a_full_load_(a_full_load) {}

  // Bytes of `rows` rows of the whole (64-aligned) K and their scales.
  uint64_t FullKBytes(uint64_t rows, GeDtype data, GeDtype scale) const {
    const uint64_t k_aligned = CeilAlign(facts_.k, kMxKGroup);
    const uint64_t scale_k = CeilDiv(facts_.k, kMxKGroup) * kMxScalesPerKGroup;
    return BytesOf(rows * k_aligned, data) + BytesOf(rows * scale_k, scale);
  }

  // L1 taken by `buffers` loads of A and B plus the double-buffered scale
  // windows and bias; a fully loaded A counts once with its whole scale.
  uint64_t UsedL1Bytes(const L1Estimate& e, uint32_t buffers) const {
    const uint64_t scale_cols = CeilDiv(e.scale_k_l1, kMxScaleGroup);
    uint64_t used = BytesOf(e.base_n * e.k_l1, facts_.x2) * buffers;
    used += BytesOf(e.base_n * scale_cols, facts_.scale) * kTwoBuffers;
    if (facts_.has_bias) used += BytesOf(e.base_n, facts_.bias) * kTwoBuffers;
    if (e.a_full_load) {
      used += FullKBytes(e.base_m, facts_.x1, facts_.pertoken);
    } else {
      used += BytesOf(e.base_m * e.k_l1, facts_.x1) * buffers;
      used += BytesOf(e.base_m * scale_cols, facts_.pertoken) * kTwoBuffers;
    }
    return used;
  }

  // Three buffers need the Tensor API.
  bool Fits(const L1Estimate& e, uint32_t buffers) const {
    if (buffers == kThreeBuffers && !facts_.tensor_api) return false;
    return UsedL1Bytes(e, buffers) <= chip_.l1_bytes;
  }

  // Whether A's (B's) K run is a whole number of 128-byte MTE2 units, or K
  // is not that operand's inner axis.
  bool AInnerKAligned() const {
    return facts_.trans_a || BytesOf(facts_.k, facts_.x1) % kMte2AlignBytes == 0;
  }
  bool BInnerKAligned() const {
    return !facts_.trans_b || BytesOf(facts_.k, facts_.x2) % kMte2AlignBytes == 0;
  }

  // Time of moving A, B and bias into the cores (GM reads once per batch
  // slice, the repeats from L2) at the given bandwidths, in us.
  double Mte2TimeUs(double gm_tbps, double l2_tbps) const {
    const double a_bytes = static_cast<double>(FullKBytes(facts_.m, facts_.x1, facts_.pertoken));
    const double b_bytes = static_cast<double>(FullKBytes(facts_.n, facts_.x2, facts_.scale));
    const double bias_bytes =
        facts_.has_bias ? static_cast<double>(BytesOf(facts_.n, facts_.bias)) : 0.0;
    const uint64_t m_blocks = CeilDiv(facts_.m, window_.base_m);
    const uint64_t n_blocks = CeilDiv(facts_.n, window_.base_n);
    const uint64_t batches = std::max<uint64_t>(1, facts_.batch_c);
    const uint64_t a_loads = batches * (a_full_load_ ? 1 : n_blocks);
    const uint64_t b_loads = batches * m_blocks;
    const uint64_t bias_loads = facts_.has_bias ? batches * m_blocks : 0;
    const uint64_t a_gm = std::min(a_loads, std::max<uint64_t>(1, facts_.batch_a));
    const uint64_t b_gm = std::min(b_loads, std::max<uint64_t>(1, facts_.batch_b));
    const uint64_t bias_gm = std::min(bias_loads, std::max<uint64_t>(1, facts_.batch_bias));
    const double gm_bytes = a_bytes * static_cast<double>(a_gm) +
                            b_bytes * static_cast<double>(b_gm) +
                            bias_bytes * static_cast<double>(bias_gm);
    const double l2_bytes = a_bytes * static_cast<double>(a_loads - a_gm) +
                            b_bytes * static_cast<double>(b_loads - b_gm) +
                            bias_bytes * static_cast<double>(bias_loads - bias_gm);
    return gm_bytes / (gm_tbps * kBytesPerUsPerTbps) + l2_bytes / (l2_tbps * kBytesPerUsPerTbps);
  }

  // Time of the MMADs spread over the used cores, in us.
  double CubeTimeUs() const {
    const uint64_t m = CeilAlign(facts_.m, 16);
    const uint64_t n = CeilAlign(facts_.n, 16);
    const uint64_t k = CeilAlign(facts_.k, kMxKGroup);
    const uint64_t batches = std::max<uint64_t>(1, facts_.batch_c);
    const double macs = static_cast<double>(batches) * static_cast<double>(m) *
                        static_cast<double>(n) * static_cast<double>(k);
    const double macs_per_cycle = static_cast<double>(ElementsIn(kMxfp8MacsPerCycle, facts_.x1));
    return macs / static_cast<double>(UsedCoreCount(window_, chip_)) / macs_per_cycle /
           kCubeFreqMhz;
  }

  // IsMxMte2Bound at 90% of the 950's peak bandwidths: an inner axis that is
  // not 128-byte aligned counts as bound.
  bool IsMte2Bound() const {
    const double gm_tbps = kMaxHbmTbps * kMte2Utilization;
    const double l2_tbps = kMaxL2Tbps * kMte2Utilization;
    if (window_.base_m == 0 || window_.base_n == 0 || UsedCoreCount(window_, chip_) == 0) {
      return false;
    }
    const uint64_t a_inner = facts_.trans_a ? facts_.m : facts_.k;
    const uint64_t b_inner = facts_.trans_b ? facts_.k : facts_.n;
    const bool aligned = BytesOf(a_inner, facts_.x1) % kMte2AlignBytes == 0 &&
                         BytesOf(b_inner, facts_.x2) % kMte2AlignBytes == 0;
    if (!aligned) return true;
    return Mte2TimeUs(gm_tbps, l2_tbps) > CubeTimeUs();
  }

  // SelectL1BufferNum: 4 if they fit; 3 if they fit and either A is fully
  // loaded or two loads do not cover K and MTE2 bounds the time; else 2.
  uint32_t SelectBuffers(const L1Estimate& e) const {
    if (Fits(e, kFourBuffers)) return kFourBuffers;
    const bool three_allowed = e.a_full_load || (e.k_l1 * kTwoBuffers < facts_.k && IsMte2Bound());
    return three_allowed && Fits(e, kThreeBuffers) ? kThreeBuffers : kTwoBuffers;
  }

  // CanOpenMultiBufferByL1Estimate, before the L1 split: steps of 2 base K
  // and a scale window of min(K, 4096) rounded up to a load. Without A full
  // load, K must be MTE2-aligned on both inner axes and longer than two
  // loads of the largest step (4).
  bool CanOpenMultiBuffer(bool a_full_load, uint64_t base_m, uint64_t base_n) const {
    if (!a_full_load) {
      const bool long_k = kMaxStepKEstimate * window_.base_k * kTwoBuffers < facts_.k;
      if (!long_k || !AInnerKAligned() || !BInnerKAligned()) return false;
    }
    L1Estimate e;
    e.k_l1 = kStepKTwo * window_.base_k;
    e.scale_k_l1 = CeilAlign(std::min(facts_.k, kEstimatedScaleK), e.k_l1);
    e.base_m = base_m;
    e.base_n = base_n;
    e.a_full_load = a_full_load;
    return SelectBuffers(e) != kTwoBuffers;
  }

  // Whether A's repeated reads without a full load (once per block column
  // beyond the first) exceed 20% of all operand traffic.
  bool RepeatedALoadsMatter() const {
    if (window_.n_block_count <= 1 || window_.m_block_count == 0) return false;
    const double a_bytes = static_cast<double>(FullKBytes(facts_.m, facts_.x1, facts_.pertoken));
    const double repeat = a_bytes * static_cast<double>(window_.n_block_count - 1);
    const double a_total = a_bytes * static_cast<double>(window_.n_block_count);
    const double b_total = static_cast<double>(FullKBytes(facts_.n, facts_.x2, facts_.scale)) *
                           static_cast<double>(window_.m_block_count);
    const double total = a_total + b_total;
    if (total <= 0.0) return false;
    return repeat / total > kRepeatALoadShare;
  }

 private:
  const QuantFacts& facts_;
  const ChipSpec& chip_;
  const SlidingWindow& window_;
  const bool& a_full_load_;
};

// UpdateAFullLoadStatus for MX: A of one (balanced) block row, K aligned to
// 64, takes at most half of L1, fewer than a window of M blocks that divide
// the cores evenly, more blocks than cores, no batch. Such a candidate is
// fully loaded unless only the plain pipeline reaches 3-4 buffers and A's
// repeated reads are a small share of the traffic. A full load takes the
// balanced row height and drops the M balancing.
bool DecideAFullLoad(const QuantFacts& facts, const ChipSpec& chip, const MxModel& model,
                     SlidingWindow* w) {
  const uint64_t row_m = w->m_base_tail_split_count == 1 ? w->base_m : w->m_tail_main;
  const uint64_t a_bytes = BytesOf(row_m * CeilAlign(facts.k, kMxKGroup), facts.x1);
  const bool candidate = a_bytes <= chip.l1_bytes / kFullAL1Share &&
                         w->m_block_count < kWindowLength && chip.aic_num % w->m_block_count == 0 &&
                         w->total_block_count > chip.aic_num && facts.batch_c == 1;
  if (!candidate) return false;
  if (!model.CanOpenMultiBuffer(/*a_full_load=*/true, row_m, w->base_n) &&
      model.CanOpenMultiBuffer(/*a_full_load=*/false, w->base_m, w->base_n) &&
      !model.RepeatedALoadsMatter()) {
    return false;
  }
  if (w->base_m != row_m) {
    w->base_m = row_m;
    w->m_base_tail_split_count = 1;
    w->m_tail_main = 0;
  }
  return true;
}

// The block side one tail piece spans: the side (or the axis, if shorter)
// split `tiles` ways, aligned.
uint64_t TailPieceSide(uint64_t axis, uint64_t base, uint64_t tiles, uint64_t align) {
  if (tiles <= 1) return base;
  return CeilAlign(CeilDiv(std::min(axis, base), tiles), align);
}

// NormalizeSingleRoundTailSplitBasicBlock: a single round whose blocks were
// split becomes a round of the pieces themselves; the window is recounted
// and its edges balanced again.
void SplitToBaseBlocks(const QuantFacts& facts, const ChipSpec& chip, uint64_t batch_cores,
                       SlidingWindow* w) {
  if (w->window_count != 1 || w->tail_window_block_count == 0 ||
      (w->m_tail_tile == 1 && w->n_tail_tile == 1)) {
    return;
  }
  const uint64_t base_m = TailPieceSide(facts.m, w->base_m, w->m_tail_tile, BaseMAlign(facts));
  const uint64_t base_n = TailPieceSide(facts.n, w->base_n, w->n_tail_tile,
                                        BaseNAlign(facts, /*inner_align_bytes=*/32));
  if (base_m == 0 || base_n == 0 || base_m > w->base_m || base_n > w->base_n) return;
  if (base_m == w->base_m && base_n == w->base_n) return;
  BaseBlock block;
  block.base_m = base_m;
  block.base_n = base_n;
  block.base_k = w->base_k;
  block.use_tail_window_logic = w->use_tail_window_logic;
  *w = MakeSlidingWindow(facts, chip, block, batch_cores);
  BalanceEdgeBlocks(facts, chip, w);
}

// Caps a scale factor so that it covers about 2048 K elements of `step`
// loads of `base_k` (at least one load).
uint64_t PingpongScaleFactor(uint64_t factor, uint64_t step, uint64_t base_k) {
  const uint64_t unit = step * base_k;
  if (unit == 0) return factor;
  return std::min(factor, std::max<uint64_t>(1, kPingpongScaleKL1 / unit));
}

// The K load, scale window and buffer count (CalculateNBufferNum).
struct BufferPlan {
  uint64_t k_l1 = 0, scale_k_l1 = 0;
  uint32_t buffers = kTwoBuffers;
};

BufferPlan ChooseBuffers(const QuantFacts& facts, const ChipSpec& chip, const MxModel& model,
                         bool a_full_load, uint64_t base_m, uint64_t base_n, uint64_t base_k,
                         const L1Tiling& l1, uint64_t scale_k_l1) {
  // A window between half and all of K shrinks to half of K (whole loads)
  // when that is smaller; multiples of 4096 stay.
  auto estimate = [&](uint64_t k_l1) {
    L1Estimate e;
    e.k_l1 = k_l1;
    e.scale_k_l1 = scale_k_l1;
    if (scale_k_l1 % kEstimatedScaleK != 0) {
      const uint64_t half_k = CeilDiv(facts.k, 2);
      if (scale_k_l1 > half_k && scale_k_l1 < facts.k) {
        e.scale_k_l1 = std::min(scale_k_l1, CeilAlign(half_k, k_l1));
      }
    }
    e.base_m = base_m;
    e.base_n = base_n;
    e.a_full_load = a_full_load;
    return e;
  };
  // With more buffers the window grows to cover all of K when that fits.
  auto apply = [&](const L1Estimate& e, uint32_t buffers) {
    BufferPlan plan;
    plan.k_l1 = e.k_l1;
    plan.scale_k_l1 = e.scale_k_l1;
    plan.buffers = buffers;
    const uint64_t full_cover = CeilAlign(facts.k, e.k_l1);
    if (full_cover > e.scale_k_l1) {
      L1Estimate cover = e;
      cover.scale_k_l1 = full_cover;
      if (model.UsedL1Bytes(cover, buffers) <= chip.l1_bytes) plan.scale_k_l1 = full_cover;
    }
    return plan;
  };

  const uint64_t step_k = std::min(l1.step_ka, l1.step_kb);
  const L1Estimate current = estimate(step_k * base_k);
  const bool two_loads_short_of_k = current.k_l1 * kTwoBuffers < facts.k;
  if (model.Fits(current, kFourBuffers)) return apply(current, kFourBuffers);

  // A step of 3 or 4 that keeps four buffers out may give way to a step of
  // 2 when two loads do not cover K and both K runs stay aligned.
  const uint64_t two_step_k_l1 = kStepKTwo * base_k;
  const bool a_aligned =
      facts.trans_a || BytesOf(two_step_k_l1, facts.x1) % kStepKTwoAlignBytes == 0;
  const bool b_aligned =
      !facts.trans_b || BytesOf(two_step_k_l1, facts.x2) % kStepKTwoAlignBytes == 0;
  const bool reduce = two_loads_short_of_k && (step_k == 3 || step_k == 4) &&
                      model.AInnerKAligned() && model.BInnerKAligned() && a_aligned && b_aligned;
  L1Estimate two_step = current;
  if (reduce) {
    two_step = estimate(two_step_k_l1);
    if (model.Fits(two_step, kFourBuffers)) return apply(two_step, kFourBuffers);
  }

  // Three buffers serve B beside a fully loaded A, or an MTE2-bound problem
  // whose K two loads do not cover.
  const bool three_allowed = a_full_load || (two_loads_short_of_k && model.IsMte2Bound());
  if (three_allowed && model.Fits(current, kThreeBuffers)) return apply(current, kThreeBuffers);
  if (reduce && three_allowed && model.Fits(two_step, kThreeBuffers)) {
    return apply(two_step, kThreeBuffers);
  }
  BufferPlan plan;
  plan.k_l1 = current.k_l1;
  plan.scale_k_l1 = current.scale_k_l1;
  plan.buffers = kTwoBuffers;
  return plan;
}

}  // namespace

bool IsMxCubeBound(const QuantFacts& facts) {
  const bool fp4 = facts.is_mx && IsFp4(facts.x1) && IsFp4(facts.x2);
  const bool fp8 = facts.is_mx && IsFp8(facts.x1) && IsFp8(facts.x2);
  if (!fp4 && !fp8) return false;
  const uint64_t m = facts.m, n = facts.n, k = facts.k;
  const uint64_t a_elems = m * k;
  const uint64_t b_elems = n * k;
  const uint64_t copy_out = BytesOf(m * n, facts.y);
  const uint64_t hbm =
      BytesOf(a_elems, facts.x1) + BytesOf(CeilDiv(a_elems, kMxScaleGroup), facts.pertoken) +
      BytesOf(b_elems, facts.x2) + BytesOf(CeilDiv(b_elems, kMxScaleGroup), facts.scale);
  // Every block column but the first re-reads A from L2; every block row B.
  const uint64_t a_l2 = m * k * (CeilDiv(n, kMmadBlock) - 1);
  const uint64_t b_l2 = n * k * (CeilDiv(m, kMmadBlock) - 1);
  const uint64_t l2 = BytesOf(a_l2, facts.x1) +
                      BytesOf(CeilDiv(a_l2, kMxScaleGroup), facts.pertoken) +
                      BytesOf(b_l2, facts.x2) + BytesOf(CeilDiv(b_l2, kMxScaleGroup), facts.scale);
  const uint64_t footprint = hbm + copy_out;
  const double copy_out_tbps =
      footprint < kL2CacheBytes * kL2FootprintPercent / 100 ? kRooflineL2Tbps : kRooflineHbmTbps;
  const double transfer = static_cast<double>(hbm) / kRooflineHbmTbps +
                          static_cast<double>(l2) / kRooflineL2Tbps +
                          static_cast<double>(copy_out) / copy_out_tbps;
  const double compute = kOpsPerMac * static_cast<double>(m) * static_cast<double>(n) *
                         static_cast<double>(k) / (fp4 ? kMxfp4Tflops : kMxfp8Tflops);
  return compute > transfer;
}

bool IsMxL0CPingpong(const QuantFacts& facts) {
  const bool fp4 = IsFp4(facts.x1) && IsFp4(facts.x2);
  const bool fp8 = IsFp8(facts.x1) && IsFp8(facts.x2);
  const bool half_output = facts.y == GeDtype::kFloat16 || facts.y == GeDtype::kBFloat16;
  const uint64_t a_inner = facts.trans_a ? facts.m : facts.k;
  const uint64_t b_inner = facts.trans_b ? facts.k : facts.n;
  const uint64_t align = fp4 ? kMxfp4InnerAlignBytes : kMxfp8InnerAlignBytes;
  const bool aligned =
      BytesOf(a_inner, facts.x1) % align == 0 && BytesOf(b_inner, facts.x2) % align == 0;
  return facts.is_mx && facts.scale == GeDtype::kFloat8E8M0 && facts.tensor_api && (fp4 || fp8) &&
         half_output && aligned && IsMxCubeBound(facts);
}

bool MxBasicApiAswStrategy::IsCapable(const QuantFacts& facts, const ChipSpec& chip,
                                      std::string* reason) const {
  return IsStrategyCapable(QuantStrategyId::kMxBasicApiAsw, facts, chip, reason);
}

absl::StatusOr<QuantPlan> MxBasicApiAswStrategy::DoTiling(const QuantFacts& facts,
                                                          const ChipSpec& chip) const {
  RETURN_IF_ERROR(CheckAswPlatform(chip));
  // The batch is spread over the cores with the blocks.
  const uint64_t batch_cores = facts.batch_c;
  ASSIGN_OR_RETURN(const BaseBlock block,
                   ComputeBaseBlock(facts, chip, batch_cores, BaseBlockMode::kDefault));
  SlidingWindow window = MakeSlidingWindow(facts, chip, block, batch_cores);
  BalanceEdgeBlocks(facts, chip, &window);

  // The model reads the window and the full-load choice as they evolve.
  bool a_full_load = false;
  const MxModel model(facts, chip, window, a_full_load);
  a_full_load = DecideAFullLoad(facts, chip, model, &window);
  if (window.use_tail_window_logic) {
    if (a_full_load) {
      SplitTailRoundAFullLoad(facts, chip, &window);
    } else {
      SplitTailRoundGeneral(facts, chip, /*a_full_load=*/false, &window);
    }
    SplitToBaseBlocks(facts, chip, batch_cores, &window);
  }

  ASSIGN_OR_RETURN(
      const L1Tiling l1,
      ComputeL1Tiling(facts, chip, window.base_m, window.base_n, window.base_k,
                      a_full_load ? L1TilingMode::kAFullLoad : L1TilingMode::kDefault));
  BasicApiTiling tiling;
  tiling.base_m = window.base_m;
  tiling.base_n = window.base_n;
  tiling.base_k = window.base_k;
  tiling.db_l0c = ChooseDbL0c(facts, chip, window.base_m, window.base_n);

  // The scale window: the shorter of A's and B's, in K elements. The L0C
  // ping-pong kernels cap it near 2048 for outputs up to 128 MiB.
  // CANN keeps the factors and the window in 32-bit fields.
  uint64_t factor_a = static_cast<uint32_t>(l1.scale_factor_a);
  uint64_t factor_b = static_cast<uint32_t>(l1.scale_factor_b);
  auto scale_window = [&]() {
    return std::min(factor_a * l1.step_ka * window.base_k, factor_b * l1.step_kb * window.base_k);
  };
  uint64_t scale_k_l1 = scale_window();
  const bool pingpong = IsMxL0CPingpong(facts);
  if (pingpong && BytesOf(facts.m * facts.n, facts.y) <= kPingpongMaxOutputBytes &&
      scale_k_l1 > kPingpongScaleKL1) {
    factor_a = PingpongScaleFactor(factor_a, l1.step_ka, window.base_k);
    factor_b = PingpongScaleFactor(factor_b, l1.step_kb, window.base_k);
    scale_k_l1 = scale_window();
  }
  scale_k_l1 = static_cast<uint32_t>(scale_k_l1);
  const BufferPlan buffers = ChooseBuffers(facts, chip, model, a_full_load, window.base_m,
                                           window.base_n, window.base_k, l1, scale_k_l1);
  tiling.k_al1 = tiling.k_bl1 = buffers.k_l1;
  tiling.scale_k_l1 = buffers.scale_k_l1;
  tiling.buffer_count = buffers.buffers;
  tiling.weight_must_hit_l2 = IsWeightMustHitL2(facts, window.base_m);
  tiling.x1_quant_mode = kMxPerGroup;
  tiling.x2_quant_mode = kMxPerGroup;

  const bool without_batch = facts.tensor_api && facts.batch_c == 1;
  QuantPlan plan;
  plan.strategy = std::string(name());
  plan.key.a_trans = facts.trans_a ? 1 : 0;
  plan.key.b_trans = facts.trans_b ? 1 : 0;
  plan.key.batch_mode = without_batch ? kBatchModeWithout : kBatchModeWith;
  if (pingpong) {
    plan.key.kernel = a_full_load ? kKernelAFullLoadPingpong : kKernelPingpong;
  } else {
    plan.key.kernel = a_full_load ? kKernelAFullLoad : kKernelPlain;
  }
  plan.key.api_level = facts.tensor_api ? kApiTensor : kApiBasic;
  plan.block_dim = UsedCoreCount(window, chip);
  plan.workspace_bytes = kLibraryWorkspaceBytes;
  plan.schedule_mode = 0;
  plan.words = without_batch ? WriteWithoutBatchWords(facts, tiling, window)
                             : WriteBasicApiWords(facts, tiling, window);
  return plan;
}

}  // namespace npu::tiling::quant
