#include "server/tiling/weight_quant/adaptive_split.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/tiling/cube_tiling_search.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/weight_quant/wq_math.h"

namespace npu::tiling::weight_quant {
namespace {

constexpr uint64_t kKiB = 1024;
// M of one cube block: 256 rows, 240 with a bias (its L1 share).
constexpr uint64_t kMaxM = 256;
constexpr uint64_t kMaxMWithBias = 240;
// The N of an L1 block of the weight on the 950.
constexpr uint64_t kL1NMax = 256;
constexpr uint64_t kKL1 = 256;  // K of one L1 load in the default tiling
constexpr uint64_t kBlockCube = 16;
// L1 budgets: A's share and the whole, less 16 KiB with a bias or an int8
// output.
constexpr uint64_t kAL1Max = 256 * kKiB;
constexpr uint64_t kAL1MaxWithBias = 240 * kKiB;
constexpr uint64_t kL1Max = 512 * kKiB;
constexpr uint64_t kL1MaxWithBias = 496 * kKiB;
// The UB CANN budgets the weight's dequantization with (248 KiB, not the
// platform's: its comment says the framework reports 240 KiB).
constexpr uint64_t kUbBudget = 248 * kKiB;
constexpr uint64_t kSupportedC0 = 16;
constexpr std::array<uint64_t, 4> kGroupSizes = {32, 64, 128, 256};

// The MTE2 templates (the key's TEMPLATE_CUSTOM): inner size and buffers.
enum Mte2Config : uint64_t {
  kInner512Buf2 = 0,
  kInner512Buf4 = 1,
  kInner1024Buf2 = 2,
  kInner256Buf4 = 3,
  kInner512Default = 4,
};

// WeightQuantBatchMatmulV2ASTilingDataParams, member by member.
struct AsData {
  uint32_t cube_m = 0, cube_n = 0, has_bias = 0;
  uint32_t first_tail_count = 0, second_tail_count = 0, weight_l2_cacheable = 0;
  uint32_t main_l1 = 0, first_tail_l1 = 0, second_tail_l1 = 0, a_preload = 0;
  uint64_t group_size = 0, main_count = 0, m = 0, k = 0, n = 0;
  CubeTiling mm;
};

class AsTiler {
 public:
  AsTiler(const WqFacts& f, const ChipSpec& chip) : f_(f), chip_(chip) {
    aic_ = chip.aic_num;
    x_bytes_ = GeBytes(f.x);
    mxfp4_ = f.antiquant_scale == DataType::kFloat8E8M0 && f.weight == DataType::kFloat4E2M1;
    int4_ = f.weight == DataType::kInt4;
    nz_scene_ = f.weight_nz && !f.trans_b;
  }

  AsData Run(uint64_t* sub_algorithm, uint64_t* mte2, bool* high_perf) {
    d_.m = f_.m;
    d_.k = f_.k;
    d_.n = f_.n;
    d_.has_bias = f_.has_bias;
    d_.group_size = f_.group_size;
    const bool high = HighPerf();
    *high_perf = high;
    DefaultMatmulTiling();
    CubeSplit(high);
    OptimizeMatmulTiling();
    if (high) {
      TailResplitTiling();
    } else {
      BasicTiling();
    }
    if (high) PreloadA();
    *sub_algorithm = sub_algorithm_;
    *mte2 = mte2_;
    return d_;
  }

 private:
  bool Weight4Nz() const { return (int4_ || mxfp4_) && nz_scene_; }
  bool BiasOrInt8() const { return f_.has_bias || f_.y == DataType::kInt8; }
  uint64_t AL1Max() const { return BiasOrInt8() ? kAL1MaxWithBias : kAL1Max; }

  // CheckHighPerfScene.
  bool HighPerf() const {
    const bool nd_per_channel = f_.trans_b && f_.antiquant == QuantType::kPerChannel;
    const bool mxfp4_nd = mxfp4_ && f_.trans_b && !f_.weight_nz;
    const bool plain = !f_.trans_a && f_.y != DataType::kInt8;
    return plain && (nd_per_channel || mxfp4_nd || Weight4Nz());
  }

  // SetDefaultMatmulTiling.
  void DefaultMatmulTiling() {
    CubeTiling& t = d_.mm;
    t.m = static_cast<int32_t>(f_.m);
    t.ka = static_cast<int32_t>(f_.k);
    t.n = static_cast<int32_t>(f_.n);
    t.kb = static_cast<int32_t>(f_.k);
    t.single_core_m = static_cast<int32_t>(f_.has_bias ? kMaxMWithBias : kMaxM);
    t.single_core_k = static_cast<int32_t>(f_.k);
    t.single_core_n = static_cast<int32_t>(kL1NMax);
    t.base_m = t.single_core_m;
    t.base_n = t.single_core_n;
    t.base_k = static_cast<int32_t>((chip_.l0a_bytes >> 1) / x_bytes_ /
                                    static_cast<uint64_t>(t.single_core_n));
    t.db_l0a = 2;
    t.db_l0b = 2;
    t.db_l0c = 1;
    t.step_m = 1;
    t.step_n = 1;
    t.step_ka = static_cast<int32_t>(OpsCeilDiv(kKL1, static_cast<uint64_t>(t.base_k)));
    t.depth_a1 = t.step_ka * 2;
    t.step_kb = t.step_ka;
    t.depth_b1 = t.depth_a1;
    t.iterate_order = 0;
    t.is_bias = f_.has_bias ? 1 : 0;
    if (f_.y == DataType::kInt8) {
      t.share_l1_size = static_cast<int32_t>(2 * static_cast<uint64_t>(t.base_n) * 8);
    }
    t.share_l0c_size = t.base_m * t.base_n * 4;
  }

  // ComputeCubeSplit.
  void CubeSplit(bool high) {
    d_.a_preload = 0;
    if (high) {
      HighPerfCubeSplit();
      // Cache the weight in L2 when several M blocks read it or its rows
      // are not whole 128-byte lines (256 elements of a 4-bit weight).
      const uint64_t min_cache_line = (mxfp4_ || int4_) ? 256 : 128;
      d_.weight_l2_cacheable = d_.cube_m > 1 || f_.k % min_cache_line != 0;
      return;
    }
    d_.weight_l2_cacheable = 1;
    uint64_t main_l1 = kL1NMax;
    uint32_t main_count = static_cast<uint32_t>(OpsCeilDiv(f_.n, main_l1));
    const uint32_t m_max = static_cast<uint32_t>(OpsCeilDiv(f_.m, kMaxM));
    if (f_.trans_b) {
      const uint32_t half = aic_ >> 1;
      if (main_count <= half) {
        // Half the cores at most: split N finer.
        main_l1 >>= 1;
        main_count = static_cast<uint32_t>(OpsCeilDiv(f_.n, main_l1));
      }
      d_.cube_n = std::min(aic_, main_count);
      if (m_max <= (aic_ / d_.cube_n) >> 1) {
        d_.cube_m = static_cast<uint32_t>(OpsCeilDiv(f_.m, kMaxM >> 1));
      } else {
        d_.cube_m = std::min(m_max, aic_ / d_.cube_n);
      }
    } else {
      d_.cube_n = std::min(aic_, main_count);
      d_.cube_m = std::min(m_max, aic_ / d_.cube_n);
    }
  }

  // ComputeHighPerfSceneCubeSplit.
  void HighPerfCubeSplit() {
    if ((f_.m <= kMaxM && !f_.has_bias) || (f_.m <= kMaxMWithBias && f_.has_bias)) {
      // Small M: N blocks of about 128 columns use the bandwidth well; when N
      // is short of that on every core, or M is above 128, search the split
      // that moves the fewest bytes.
      constexpr uint64_t kTailThreshold = 128;
      const bool search =
          f_.n < kTailThreshold * aic_ || (f_.n >= kTailThreshold * aic_ && f_.m > kTailThreshold);
      if (!search) {
        d_.cube_m = 1;
        d_.cube_n = aic_;
        return;
      }
      uint64_t best_cost = UINT64_MAX, best_m = 1, best_n = aic_;
      const uint64_t m_blocks = std::min<uint64_t>(aic_, OpsCeilDiv(f_.m, kBlockCube));
      for (uint64_t m_blk = 1; m_blk <= m_blocks; ++m_blk) {
        const uint64_t n_blk_max = aic_ / m_blk;
        const uint64_t n_l1_min = OpsCeilAlign(OpsCeilDiv(f_.n, n_blk_max), kBlockCube);
        const uint64_t n_blk = std::min(OpsCeilDiv(f_.n, n_l1_min), n_blk_max);
        // K moves the same bytes in every split, so it is left out.
        uint64_t cost = x_bytes_ * f_.m * n_blk + GeBytes(f_.weight) * f_.n * m_blk;
        if (f_.weight == DataType::kInt4 || f_.weight == DataType::kFloat4E2M1) {
          cost = x_bytes_ * f_.m * n_blk + f_.n * m_blk / 2;
        }
        // Among equal costs the last, i.e. the most M blocks.
        if (cost <= best_cost) {
          best_cost = cost;
          best_m = m_blk;
          best_n = n_blk;
        }
      }
      d_.cube_m = static_cast<uint32_t>(best_m);
      d_.cube_n = static_cast<uint32_t>(best_n);
      return;
    }
    // Large M: up to 4 M blocks, N over the rest.
    const uint64_t m_max = std::min<uint64_t>(aic_, 4);
    const uint64_t m_real = OpsCeilDiv(f_.m, f_.has_bias ? kMaxMWithBias : kMaxM);
    d_.cube_m = static_cast<uint32_t>(std::min(m_max, m_real));
    const uint64_t n_blk_max = aic_ / d_.cube_m;
    const uint64_t n_l1_min = OpsCeilAlign(OpsCeilDiv(f_.n, n_blk_max), kBlockCube);
    d_.cube_n = static_cast<uint32_t>(std::min(OpsCeilDiv(f_.n, n_l1_min), n_blk_max));
  }

  // EnlargeBaseK.
  void EnlargeBaseK(uint64_t l0a_max_k) {
    CubeTiling& t = d_.mm;
    const uint64_t l0b_max_k = (chip_.l0b_bytes >> 1) / x_bytes_ /
                               static_cast<uint64_t>(t.single_core_n) / kBlockCube * kBlockCube;
    const std::vector<uint64_t> list = (mxfp4_ && nz_scene_) ? std::vector<uint64_t>{128, 64}
                                                             : std::vector<uint64_t>{256, 128, 64};
    t.base_k = static_cast<int32_t>(list.back());
    if ((f_.trans_b && f_.antiquant != QuantType::kPerTensor) || (mxfp4_ && nz_scene_)) {
      for (uint64_t k : list) {
        if (std::min(l0b_max_k, l0a_max_k) >= k) {
          t.base_k = static_cast<int32_t>(k);
          break;
        }
      }
    }
  }

  // EnlargeBaseKInFullloadA.
  void EnlargeBaseKFullLoadA(uint64_t max_base_k, uint64_t min_k_l1, uint64_t max_l1,
                             const std::vector<uint64_t>& l0_list,
                             const std::vector<uint64_t>& l1_list) {
    CubeTiling& t = d_.mm;
    t.base_k = static_cast<int32_t>(l0_list.back());
    for (uint64_t base_k : l0_list) {
      if (max_base_k < base_k) continue;
      const uint64_t step_ka = OpsCeilDiv(min_k_l1, base_k);
      const uint64_t max_kb_l1 =
          ((max_l1 - base_k * step_ka * static_cast<uint64_t>(static_cast<int64_t>(t.base_m))) >>
           1) /
          static_cast<uint64_t>(static_cast<int64_t>(t.base_n));
      if (max_kb_l1 < base_k) continue;
      t.base_k = static_cast<int32_t>(base_k);
      for (uint64_t k_l1 : l1_list) {
        if (max_kb_l1 < k_l1) continue;
        t.step_ka = static_cast<int32_t>(step_ka);
        t.step_kb = static_cast<int32_t>(std::min<uint64_t>(k_l1 / base_k, 4));
        t.depth_a1 = t.step_ka;
        t.depth_b1 = t.step_kb << 1;
        break;
      }
      break;
    }
  }

  // EnlargeBaseKNotFullloadA.
  void EnlargeBaseKStreamedA(uint64_t max_base_k, uint64_t max_k_l1,
                             const std::vector<uint64_t>& l0_list,
                             const std::vector<uint64_t>& l1_list) {
    CubeTiling& t = d_.mm;
    t.base_k = static_cast<int32_t>(l0_list.back());
    for (uint64_t base_k : l0_list) {
      if (max_base_k < base_k || max_k_l1 < base_k) continue;
      t.base_k = static_cast<int32_t>(base_k);
      for (uint64_t k_l1 : l1_list) {
        if (max_k_l1 < k_l1) continue;
        t.step_ka = static_cast<int32_t>(std::min<uint64_t>(k_l1 / base_k, 4));
        t.step_kb = t.step_ka;
        t.depth_a1 = t.step_ka << 1;
        t.depth_b1 = t.depth_a1;
        break;
      }
      break;
    }
  }

  // OptimizeMatmulTiling.
  void OptimizeMatmulTiling() {
    CubeTiling& t = d_.mm;
    t.single_core_m = static_cast<int32_t>(OpsCeilDiv(f_.m, static_cast<uint64_t>(d_.cube_m)));
    t.base_m = std::min(t.base_m, OpsCeilAlign(t.single_core_m, static_cast<int32_t>(kBlockCube)));
    const uint64_t single_n =
        OpsCeilAlign(OpsCeilDiv(f_.n, static_cast<uint64_t>(d_.cube_n)), kBlockCube);
    t.single_core_n = static_cast<int32_t>(std::min(kL1NMax, single_n));
    t.base_n = t.single_core_n;
    if (Weight4Nz() && int4_ && !f_.trans_a && !f_.trans_b &&
        f_.antiquant == QuantType::kPerGroup && f_.y != DataType::kInt8) {
      OptimizeInt4Nz();
      return;
    }
    // The largest K of an A block in L0A for this M, and in A's L1 share.
    uint64_t l0a_max_k = (chip_.l0a_bytes >> 1) / x_bytes_ /
                         static_cast<uint64_t>(static_cast<int64_t>(t.single_core_m)) / kBlockCube *
                         kBlockCube;
    const uint64_t a_share = f_.has_bias ? kAL1MaxWithBias : kAL1Max;
    l0a_max_k = std::min(l0a_max_k, (a_share >> 1) / x_bytes_ /
                                        static_cast<uint64_t>(static_cast<int64_t>(t.base_m)) /
                                        static_cast<uint64_t>(static_cast<int64_t>(t.step_ka)) /
                                        kBlockCube * kBlockCube);
    EnlargeBaseK(l0a_max_k);
    // A stays in L1 whole when a block row of it fits A's share.
    const uint64_t k_align = OpsCeilAlign(f_.k, kBlockCube);
    if (static_cast<uint64_t>(static_cast<int64_t>(t.base_m)) * k_align * x_bytes_ <= AL1Max()) {
      t.step_ka = static_cast<int32_t>(OpsCeilDiv(k_align, static_cast<uint64_t>(t.base_k)));
      t.depth_a1 = t.step_ka;
    }
  }

  // OptimizeMatmulTilingInA16W4Nz.
  void OptimizeInt4Nz() {
    CubeTiling& t = d_.mm;
    static const std::vector<uint64_t> kL1KList = {512, 256};
    static const std::vector<uint64_t> kL0KList = {512, 256, 128, 64};
    const uint64_t l0a_max_k = (chip_.l0a_bytes >> 1) / x_bytes_ /
                               static_cast<uint64_t>(static_cast<int64_t>(t.single_core_m)) /
                               kBlockCube * kBlockCube;
    const uint64_t l0b_max_k = (chip_.l0b_bytes >> 1) / x_bytes_ /
                               static_cast<uint64_t>(static_cast<int64_t>(t.single_core_n)) /
                               kBlockCube * kBlockCube;
    const uint64_t b_l1 = static_cast<uint64_t>(static_cast<int64_t>(
        static_cast<int32_t>(static_cast<uint32_t>(t.depth_b1) * static_cast<uint32_t>(t.base_k) *
                             static_cast<uint32_t>(t.base_n))));
    const uint64_t k_align = OpsCeilAlign(f_.k, kBlockCube);
    const uint64_t l1_max = (BiasOrInt8() ? kL1MaxWithBias : kL1Max) / x_bytes_;
    const uint64_t base_m = static_cast<uint64_t>(static_cast<int64_t>(t.base_m));
    const uint64_t base_n = static_cast<uint64_t>(static_cast<int64_t>(t.base_n));
    const bool full_load_a = base_m * k_align <= (l1_max - b_l1);
    if (full_load_a) {
      EnlargeBaseKFullLoadA(std::min(l0a_max_k, l0b_max_k), k_align, l1_max, kL0KList, kL1KList);
    } else {
      const uint64_t l1_max_k = (l1_max / (base_n + base_m)) >> 1;
      EnlargeBaseKStreamedA(std::min(l0a_max_k, l0b_max_k), l1_max_k, kL0KList, kL1KList);
    }
  }

  // ComputeTailResplitTiling.
  void TailResplitTiling() {
    sub_algorithm_ = kSubAlgoTailResplit;
    ResplitTail();
    SetInnerSize();
    WidenTailBlocks();
  }

  // ResplitTail: N in main blocks of 256 columns (16 NZ column blocks), one
  // main block per core fewer when they do not divide evenly, and the rest
  // shared by one or two rounds of the cores in two sizes.
  void ResplitTail() {
    uint64_t main_l1 = kL1NMax;
    uint64_t n = f_.n;
    if (Weight4Nz()) {
      main_l1 = kL1NMax / kBlockCube;
      n = OpsCeilDiv(f_.n, kBlockCube);
    }
    const uint64_t cube_n = d_.cube_n;
    const uint64_t main_count = n / main_l1;
    if (main_count >= cube_n || n % (main_l1 * cube_n) == 0) {
      d_.main_l1 = static_cast<uint32_t>(main_l1);
      if (n % (main_l1 * cube_n) == 0) {
        d_.main_count = main_count;
      } else {
        d_.main_count = main_count / cube_n * cube_n - cube_n;
      }
    } else {
      d_.main_l1 = 0;
      d_.main_count = 0;
    }
    const uint64_t tail = n - d_.main_count * d_.main_l1;
    if (Weight4Nz()) d_.main_l1 = static_cast<uint32_t>(d_.main_l1 * kBlockCube);
    if (tail == 0) {
      d_.first_tail_l1 = d_.first_tail_count = d_.second_tail_l1 = d_.second_tail_count = 0;
      return;
    }
    const uint64_t tail_blocks = main_count >= cube_n ? 2 * cube_n : cube_n;
    d_.first_tail_count = static_cast<uint32_t>(tail_blocks - tail % tail_blocks);
    d_.first_tail_l1 = static_cast<uint32_t>(tail / tail_blocks);
    d_.second_tail_count = static_cast<uint32_t>(tail % tail_blocks);
    d_.second_tail_l1 = 0;
    if (tail % tail_blocks > 0) d_.second_tail_l1 = d_.first_tail_l1 + 1;
    if (Weight4Nz()) {
      d_.first_tail_l1 = static_cast<uint32_t>(d_.first_tail_l1 * kBlockCube);
      d_.second_tail_l1 = static_cast<uint32_t>(d_.second_tail_l1 * kBlockCube);
    }
  }

  // SetInnerSize: the K slice each MTE2 load of the weight covers.
  void SetInnerSize() {
    const uint64_t weight_l1_k = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(
        static_cast<uint32_t>(d_.mm.base_k) * static_cast<uint32_t>(d_.mm.step_kb))));
    if (Weight4Nz()) {
      if (int4_ && f_.antiquant == QuantType::kPerGroup) {
        mte2_ = kInner512Buf4;
      } else if (mxfp4_ && weight_l1_k >= 512) {
        mte2_ = kInner512Buf4;
      } else {
        mte2_ = kInner256Buf4;
      }
      return;
    }
    if (mxfp4_ && !f_.weight_nz) {
      mte2_ = kInner1024Buf2;
      return;
    }
    // The inner sizes are 512 and 1024: an L1 K beyond them settles it.
    if (weight_l1_k >= 1024) {
      mte2_ = kInner1024Buf2;
      return;
    }
    if (weight_l1_k >= 512) {
      mte2_ = kInner512Buf4;
      return;
    }
    const uint64_t block_max =
        std::max<uint64_t>(d_.main_l1, std::max(d_.first_tail_l1, d_.second_tail_l1));
    if (f_.k <= 256 * 4) {
      // Short K: long loads cost more in their start than they move.
      mte2_ = kInner256Buf4;
    } else if (block_max > (kL1NMax >> 1)) {
      mte2_ = kInner512Buf2;  // no room in UB for more buffers
    } else if (f_.k <= 512 * 4) {
      mte2_ = kInner512Buf4;
    } else {
      mte2_ = kInner1024Buf2;
    }
  }

  // RecalculateBaseBlockSize: with N between 256 and 512 columns per core,
  // the tail blocks are short; widen baseN to the tail (halving baseK) when
  // UB, L1 and L0C still hold it.
  void WidenTailBlocks() {
    if (mxfp4_) return;
    const uint64_t cores_n = static_cast<uint64_t>(aic_) * kL1NMax;
    if (!(cores_n < f_.n && cores_n * 2 > f_.n &&
          (f_.antiquant == QuantType::kPerChannel || f_.antiquant == QuantType::kPerGroup))) {
      return;
    }
    uint64_t tail = f_.n - d_.main_count * d_.main_l1;
    if (int4_ && nz_scene_) {
      tail = OpsCeilDiv(f_.n, kBlockCube) - d_.main_count * d_.main_l1 / kBlockCube;
    }
    const uint64_t tail_blocks = d_.cube_n;
    if (tail_blocks == 0) return;
    const uint64_t first_l1 = tail / tail_blocks;
    const uint64_t first_count = tail_blocks - tail % tail_blocks;
    uint64_t second_l1 = 0, second_count = 0;
    if (tail % tail_blocks > 0) {
      second_l1 = first_l1 + 1;
      second_count = tail % tail_blocks;
    }
    const uint64_t max_l1 = std::max(first_l1, second_l1);
    const uint64_t mte2_n =
        nz_scene_ ? OpsCeilDiv<uint64_t>(max_l1, 2) * kBlockCube : OpsCeilDiv<uint64_t>(max_l1, 2);
    const uint64_t base_n = nz_scene_ ? max_l1 * kBlockCube : OpsCeilAlign(max_l1, kBlockCube);
    if (!UbHolds(mte2_n) || !L1Holds(base_n) || !L0cHolds(base_n)) return;
    CubeTiling& t = d_.mm;
    t.base_n = static_cast<int32_t>(base_n);
    t.single_core_n = static_cast<int32_t>(base_n);
    t.base_k /= 2;
    t.step_ka *= 2;
    t.step_kb *= 2;
    t.depth_a1 *= 2;
    t.depth_b1 *= 2;
    t.share_l0c_size =
        static_cast<int32_t>(static_cast<uint64_t>(static_cast<int64_t>(t.base_m)) *
                             static_cast<uint64_t>(static_cast<int64_t>(t.base_n)) * 4);
    d_.first_tail_l1 = static_cast<uint32_t>(first_l1);
    d_.first_tail_count = static_cast<uint32_t>(first_count);
    d_.second_tail_l1 = static_cast<uint32_t>(second_l1);
    d_.second_tail_count = static_cast<uint32_t>(second_count);
    if (nz_scene_) {
      d_.first_tail_l1 = static_cast<uint32_t>(first_l1 * kBlockCube);
      d_.second_tail_l1 = static_cast<uint32_t>(second_l1 * kBlockCube);
    }
  }

  // CheckL1SizeAfterExtending, with CANN's unsigned wrap-around.
  bool L1Holds(uint64_t base_n) const {
    const CubeTiling& t = d_.mm;
    const uint64_t a_l1 = static_cast<uint64_t>(static_cast<int64_t>(t.base_m) * t.depth_a1 *
                                                t.base_k * static_cast<int64_t>(x_bytes_));
    const uint64_t b_l1 = base_n * static_cast<uint64_t>(static_cast<int64_t>(t.depth_b1)) *
                          static_cast<uint64_t>(static_cast<int64_t>(t.base_k)) * x_bytes_;
    return !(AL1Max() - a_l1 < b_l1 - (chip_.l1_bytes >> 1));
  }

  bool L0cHolds(uint64_t base_n) const {
    return static_cast<uint64_t>(static_cast<int64_t>(d_.mm.base_m)) * base_n * 4 <=
           chip_.l0c_bytes;
  }

  // CheckUbSizeAfterExtending: the 4- or 8-bit weight slices, its 16-bit
  // copy (128 KiB for int4 NZ, 66 KiB otherwise) and 8 KiB of scales.
  bool UbHolds(uint64_t mte2_n) const {
    const uint64_t params = 8 * kKiB;
    uint64_t low_bit = mte2_n * kKiB;
    const uint64_t f16 = (int4_ && nz_scene_) ? 128 * kKiB : 66 * kKiB;
    if (f_.weight == DataType::kInt4) low_bit /= 2;
    if (mte2_ == kInner512Buf4 || mte2_ == kInner1024Buf2) low_bit *= 2;
    return low_bit + f16 + params <= kUbBudget;
  }

  // SetPreLoad: a small A (M below 512 that the cores' L1 shares hold) is
  // loaded ahead, its elements split over the cores in 128-byte lines.
  void PreloadA() {
    const uint64_t a_bytes = f_.m * f_.k * x_bytes_;
    const uint64_t cores = static_cast<uint64_t>(d_.cube_m * d_.cube_n);
    if (f_.m < 512 && a_bytes < static_cast<uint64_t>(d_.cube_m) * d_.cube_n * AL1Max()) {
      d_.a_preload =
          static_cast<uint32_t>(OpsCeilAlign(OpsCeilDiv(f_.m * f_.k, cores), uint64_t{64}));
    }
  }

  // ComputeBasicTiling.
  void BasicTiling() {
    sub_algorithm_ = kSubAlgoBasicBlock;
    if (f_.trans_b) {
      ResplitTail();
      mte2_ = kInner512Default;
      return;
    }
    // N is the weight's inner axis: no re-split.
    const uint64_t single_n = static_cast<uint64_t>(static_cast<int64_t>(d_.mm.single_core_n));
    d_.main_l1 = static_cast<uint32_t>(single_n);
    d_.main_count = f_.n / single_n / d_.cube_n * d_.cube_n;
    d_.first_tail_l1 = static_cast<uint32_t>(single_n);
    const uint64_t tail = f_.n - d_.main_count * d_.main_l1;
    d_.first_tail_count = static_cast<uint32_t>(OpsCeilDiv(tail, single_n));
    d_.second_tail_l1 = 0;
    d_.second_tail_count = 0;
    mte2_ = kInner256Buf4;
  }

  const WqFacts& f_;
  const ChipSpec& chip_;
  uint32_t aic_ = 0;
  uint64_t x_bytes_ = 2;
  bool mxfp4_ = false, int4_ = false, nz_scene_ = false;
  AsData d_;
  uint64_t sub_algorithm_ = kSubAlgoTailResplit;
  uint64_t mte2_ = kInner512Buf2;
};

TilingData ToTilingData(const AsData& d) {
  using F = WqAsField;
  TilingData data = NewTilingData<F>();
  const TilingStructWriter<F> put(data);
  put(F::kCubeNumBlocksM, d.cube_m);
  put(F::kCubeNumBlocksN, d.cube_n);
  put(F::kHasBias, d.has_bias);
  put(F::kFirstTailBlockCount, d.first_tail_count);
  put(F::kSecondTailBlockCount, d.second_tail_count);
  put(F::kWeightL2Cacheable, d.weight_l2_cacheable);
  put(F::kMainBlockL1Size, d.main_l1);
  put(F::kFirstTailBlockL1Size, d.first_tail_l1);
  put(F::kSecondTailBlockL1Size, d.second_tail_l1);
  put(F::kAPreloadSize, d.a_preload);
  put(F::kGroupSize, d.group_size);
  put(F::kMainBlockCount, d.main_count);
  put(F::kMSize, d.m);
  put(F::kKSize, d.k);
  put(F::kNSize, d.n);
  const std::array<uint32_t, kCubeTilingWords> words = CubeTilingWords(d.mm);
  const size_t first = static_cast<size_t>(F::kMatmulTilingUsedCoreNum);
  for (int i = 0; i < kCubeTilingWords; ++i) put(static_cast<F>(first + i), words[i]);
  return data;
}

}  // namespace

bool AdaptiveSplitStrategy::IsCapable(const WqFacts& f, const ChipSpec& /*chip*/,
                                      std::string* reason) const {
  auto no = [reason](std::string text) {
    if (reason != nullptr) *reason = std::move(text);
    return false;
  };
  if (f.weight == DataType::kInt4 && f.weight_nz && (f.trans_a || f.trans_b)) {
    return no("an int4 NZ weight takes no transposes here");
  }
  if (f.weight_nz && f.c0 != kSupportedC0) {
    return no(absl::StrCat("an NZ weight needs C0 ", kSupportedC0, "; its C0 is ", f.c0));
  }
  if (f.antiquant == QuantType::kPerGroup) {
    const bool int4_nz = f.weight == DataType::kInt4 && f.weight_nz;
    const bool group_ok =
        std::find(kGroupSizes.begin(), kGroupSizes.end(), f.group_size) != kGroupSizes.end();
    if (!int4_nz || !group_ok) {
      return no(
          absl::StrCat("per-group only for an int4 NZ weight with group 32, 64, 128 or 256 "
                       "(here ",
                       std::string(DataTypeName(f.weight)), f.weight_nz ? " NZ" : " ND", ", group ",
                       f.group_size, ")"));
    }
  }
  if (reason != nullptr) {
    *reason =
        absl::StrCat(std::string(QuantTypeName(f.antiquant)), " ",
                     std::string(DataTypeName(f.weight)), f.weight_nz ? " NZ" : " ND", " weight");
  }
  return true;
}

absl::StatusOr<WqPlan> AdaptiveSplitStrategy::DoTiling(const WqFacts& f,
                                                       const ChipSpec& chip) const {
  AsTiler tiler(f, chip);
  uint64_t sub_algorithm = 0, mte2 = 0;
  bool high_perf = false;
  const AsData d = tiler.Run(&sub_algorithm, &mte2, &high_perf);
  WqPlan plan;
  plan.data = ToTilingData(d);
  WqKey& key = plan.key;
  key.sub_algorithm = sub_algorithm;
  key.template_custom = mte2;
  key.trans_a = f.trans_a;
  key.trans_b = f.trans_b;
  key.antiquant_type = static_cast<uint64_t>(f.antiquant);
  key.quant_type = static_cast<uint64_t>(f.quant);
  key.has_antiquant_offset = f.has_antiquant_offset;
  key.is_bias_fp32 = f.bias == DataType::kFloat32 && f.has_bias;
  key.is_weight_nz = f.weight_nz;
  plan.block_dim = d.cube_m * d.cube_n;
  plan.workspace_bytes = kWqSystemWorkspaceBytes;
  plan.detail =
      absl::StrCat(high_perf ? "N_FIRST_TAIL_RESPLIT" : "N_FIRST_BASIC_BLOCK", ": ", d.cube_m,
                   " x ", d.cube_n, " cube blocks (M x N), ", d.main_count, " main blocks of ",
                   d.main_l1, " columns, tails ", d.first_tail_count, " x ", d.first_tail_l1, " + ",
                   d.second_tail_count, " x ", d.second_tail_l1, ", baseK ", d.mm.base_k);
  return plan;
}

}  // namespace npu::tiling::weight_quant
