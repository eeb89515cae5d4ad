#include "server/tiling/weight_quant/basic_block_solver.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace npu::tiling::weight_quant {
namespace {

constexpr int64_t kBits8 = 8;
constexpr int64_t kBits4 = 4;
constexpr int64_t kBits16 = 16;
constexpr int64_t kBaseMnLimit = 256 * 256;
constexpr int64_t kBaseMkLimit = 256 * 64;
constexpr int64_t kTableBlockNum = 32;  // the table's core count
constexpr int64_t kBaseBlockMin = 96;
constexpr int64_t kBaseBlockMax = 512;
constexpr int64_t kBlockCube = 16;
constexpr int64_t kBuf2 = 2, kBuf3 = 3, kBuf4 = 4;
constexpr int64_t kUbAlign = 32;
constexpr int64_t kW4MaxBl1Nz = 96 * 1024;
constexpr int64_t kW4MaxBubNz = 24 * 1024;
constexpr int64_t kW4MaxBubNd = 32 * 1024;
constexpr int64_t kCacheLineBytes = 256;
constexpr int64_t kMinCoreDim = 28;
constexpr int64_t kMinA1LoadBytes = 32 * 1024;
constexpr int64_t kGroup64 = 64;
constexpr double kTailRatioMax = 10000;
constexpr int64_t kBaseKList[] = {256, 128, 64, 32, 16};

// The solver's own helpers: 0 for a zero divisor.
int64_t CeilDiv(int64_t a, int64_t b) { return b == 0 ? 0 : (a + b - 1) / b; }
int64_t CeilAlign(int64_t a, int64_t b) { return b == 0 ? 0 : (a + b - 1) / b * b; }
int64_t FloorAlign(int64_t a, int64_t b) { return b == 0 ? 0 : a / b * b; }

// The largest divisor of `base` not above `value` (value itself when it
// divides base or is 0; 1 when nothing else does).
int64_t DownwardFactor(int64_t value, int64_t base) {
  if (value == 0 || base % value == 0) return value;
  while (--value > 1) {
    if (base % value == 0) return value;
  }
  return value;
}

// --- The precomputed table (bits of x 16, of the weight 8 or 4) -----------

// CANN's table model: 0.0016 of the clock, bandwidths HBM 1.6 and L2 5.4,
// everything in bits.
double TableMte2Bw(int64_t bits_a, int64_t bits_b, int64_t base_m, int64_t base_n, int64_t m_dim,
                   int64_t n_dim) {
  const double denom =
      static_cast<double>(m_dim * base_m * bits_a + n_dim * base_n * bits_b) / 1.6 +
      static_cast<double>((m_dim * n_dim - m_dim) * base_m * bits_a +
                          base_n * (m_dim * n_dim - n_dim) * bits_b) /
          5.4;
  if (denom == 0) return 0.0;
  return (static_cast<double>(m_dim * n_dim) * (base_m * bits_a + bits_b * base_n)) / denom *
         (static_cast<double>(m_dim * n_dim) / static_cast<double>(kTableBlockNum));
}

double TableMinMte2Bw(int64_t bits_a, int64_t bits_b, int64_t base_m, int64_t base_n, int64_t m_dim,
                      int64_t n_dim) {
  if (base_m == 0 || base_n == 0) return 0.0;
  return kBlockCube * kBlockCube * kBlockCube * 0.0016 * static_cast<double>(m_dim * n_dim) *
         (bits_a / static_cast<double>(base_n) + bits_b / static_cast<double>(base_m)) / kBits8;
}

// One row per split mDim = 1, 2, 4, ..., 32 (nDim = 32 / mDim): the blocks
// from baseM = start_m upwards whose bandwidth ratio is above 1.
using Table = std::array<std::vector<BasicBlock>, 6>;

Table BuildTable(int64_t bits_b, int64_t start_m) {
  Table table;
  size_t row = 0;
  for (int64_t m_dim = 1; m_dim <= kTableBlockNum; m_dim *= 2, ++row) {
    const int64_t n_dim = kTableBlockNum / m_dim;
    for (int64_t base_m = start_m; base_m <= kBaseBlockMax; base_m += kBlockCube) {
      const int64_t start_n =
          std::min<int64_t>(kBaseBlockMax, FloorAlign(kBaseMnLimit / base_m, kBlockCube));
      for (int64_t base_n = start_n; base_n >= kBlockCube; base_n -= kBlockCube) {
        const double bw = TableMte2Bw(kBits16, bits_b, base_m, base_n, m_dim, n_dim);
        const double min_bw = TableMinMte2Bw(kBits16, bits_b, base_m, base_n, m_dim, n_dim);
        if (min_bw == 0) continue;
        const double ratio = bw / min_bw;
        if (ratio > 1.0) {
          const int64_t base_k =
              FloorAlign(kBaseMkLimit / std::max<int64_t>(base_m, base_n), kBlockCube);
          table[row].push_back({base_m, base_n, base_k, bw, min_bw, ratio, 0.0});
        }
      }
    }
  }
  return table;
}

const Table& TableOf(int64_t bits_a, int64_t bits_b) {
  static const Table* const w4 = new Table(BuildTable(kBits4, kBaseBlockMin / 2));
  static const Table* const w8 = new Table(BuildTable(kBits8, kBaseBlockMin));
  return bits_a == kBits16 && bits_b == kBits4 ? *w4 : *w8;
}

// --- The comparators (CANN's, as they are) --------------------------------

bool CompareCubeBound(const BasicBlockParam& p1, const BasicBlockParam& p2) {
  if (p1.m_dim * p1.n_dim != p2.m_dim * p2.n_dim) return p1.m_dim * p1.n_dim > p2.m_dim * p2.n_dim;
  const double t1 = p1.block.mte2_tail_bw_ratio, t2 = p2.block.mte2_tail_bw_ratio;
  if (t1 > kTailRatioMax && t2 < kTailRatioMax) return true;
  if (t1 < kTailRatioMax && t2 > kTailRatioMax) return false;
  if (t1 > kTailRatioMax && t2 > kTailRatioMax) {
    return p1.block.mte2_bw_ratio > p2.block.mte2_bw_ratio;
  }
  return t1 > t2;
}

int64_t AInner(const BasicBlockParam& p) {
  return p.trans_a ? std::min(p.l1.step_m * p.block.base_m, p.single_m)
                   : std::min(p.l1.step_ka * p.block.base_k, p.single_k);
}
int64_t BInner(const BasicBlockParam& p) {
  return p.trans_b ? std::min(p.l1.step_kb * p.block.base_k, p.single_k)
                   : std::min(p.l1.step_n * p.block.base_n, p.single_n);
}
int64_t BFullInner(const BasicBlockParam& p) { return p.trans_b ? p.k : p.n; }

constexpr int64_t kLineBits = kCacheLineBytes * kBits8;

bool PreferFullKPerGroupShort(const BasicBlockParam& p1, const BasicBlockParam& p2, bool* result) {
  if (p1.weight_nz || p1.group_size <= 0 || !p1.trans_b) return false;
  const int64_t groups = CeilDiv(p1.k, p1.group_size);
  if (groups * p1.a_bits >= kLineBits) return false;
  const int64_t s1 = CeilDiv(BInner(p1), p1.group_size);
  const int64_t s2 = CeilDiv(BInner(p2), p2.group_size);
  if (s1 == groups && s2 < groups) {
    *result = true;
    return true;
  }
  if (s1 < groups && s2 == groups) {
    *result = false;
    return true;
  }
  return false;
}

int64_t NBl1Tail(const BasicBlockParam& p) {
  const int64_t tail = p.single_n % std::max(p.l1.step_n * p.block.base_n, kBlockCube);
  return tail == 0 ? p.l1.step_n * p.block.base_n : tail;
}
int64_t KTail(const BasicBlockParam& p, int64_t step_k) {
  const int64_t tail = p.single_k % std::max(step_k * p.block.base_k, kBlockCube);
  return tail == 0 ? step_k * p.block.base_k : tail;
}
bool RatioDiffers(const BasicBlockParam& p1, const BasicBlockParam& p2) {
  return std::fabs(p1.block.mte2_bw_ratio - p2.block.mte2_bw_ratio) >
         std::numeric_limits<double>::epsilon();
}

bool CompareW4PriorBNd(const BasicBlockParam& p1, const BasicBlockParam& p2) {
  const int64_t a1 = AInner(p1), a2 = AInner(p2), b1 = BInner(p1), b2 = BInner(p2);
  if (b1 * p1.b_bits % kLineBits == 0 && (b2 * p2.b_bits % kLineBits > 0 && b2 != BFullInner(p2))) {
    return true;
  }
  if ((b1 * p1.b_bits % kLineBits > 0 && b1 != BFullInner(p1)) && b2 * p2.b_bits % kLineBits == 0) {
    return false;
  }
  bool result = false;
  if (PreferFullKPerGroupShort(p1, p2, &result)) return result;
  const int64_t load1 = NBl1Tail(p1) * p1.l1.step_kb * p1.block.base_k;
  const int64_t load2 = NBl1Tail(p2) * p2.l1.step_kb * p2.block.base_k;
  if (load1 != load2) return load1 > load2;
  if (a1 * p1.a_bits % kLineBits == 0 && a2 * p2.a_bits % kLineBits > 0) return true;
  if (a1 * p1.a_bits % kLineBits > 0 && a2 * p2.a_bits % kLineBits == 0) return false;
  if (RatioDiffers(p1, p2)) return p1.block.mte2_bw_ratio > p2.block.mte2_bw_ratio;
  const int64_t al1 = p1.l1.step_m * p1.block.base_m * p1.l1.step_ka * p1.block.base_k;
  const int64_t al2 = p2.l1.step_m * p2.block.base_m * p2.l1.step_ka * p2.block.base_k;
  return al1 > al2;
}

bool CompareW4PriorBNz(const BasicBlockParam& p1, const BasicBlockParam& p2) {
  const int64_t bub1 =
      CeilAlign(CeilDiv(NBl1Tail(p1), kBuf2), kBlockCube) * p1.l1.step_kb * p1.block.base_k;
  const int64_t bub2 =
      CeilAlign(CeilDiv(NBl1Tail(p2), kBuf2), kBlockCube) * p2.l1.step_kb * p2.block.base_k;
  if (bub1 != bub2) return bub1 > bub2;
  if (RatioDiffers(p1, p2)) return p1.block.mte2_bw_ratio > p2.block.mte2_bw_ratio;
  const int64_t at1 = KTail(p1, p1.l1.step_ka), at2 = KTail(p2, p2.l1.step_ka);
  if (at1 != at2) return at1 > at2;
  const int64_t al1 = p1.l1.step_m * p1.block.base_m * p1.l1.step_ka * p1.block.base_k;
  const int64_t al2 = p2.l1.step_m * p2.block.base_m * p2.l1.step_ka * p2.block.base_k;
  return al1 > al2;
}

bool CompareW4PriorA(const BasicBlockParam& p1, const BasicBlockParam& p2) {
  const int64_t a1 = AInner(p1), a2 = AInner(p2), b1 = BInner(p1), b2 = BInner(p2);
  if (a1 * p1.a_bits % kLineBits == 0 && a2 * p2.a_bits % kLineBits > 0) return true;
  if (a1 * p1.a_bits % kLineBits > 0 && a2 * p2.a_bits % kLineBits == 0) return false;
  bool result = false;
  if (PreferFullKPerGroupShort(p1, p2, &result)) return result;
  const int64_t al1 = p1.l1.step_m * p1.block.base_m * p1.l1.step_ka * p1.block.base_k * p1.a_bits;
  const int64_t al2 = p2.l1.step_m * p2.block.base_m * p2.l1.step_ka * p2.block.base_k * p2.a_bits;
  constexpr int64_t kMinBits = kMinA1LoadBytes * kBits8;
  if (al1 >= kMinBits && al2 < kMinBits) return true;
  if (al1 < kMinBits && al2 >= kMinBits) return false;
  if (!p1.weight_nz) {
    if (b1 * p1.b_bits % kLineBits == 0 && b2 * p2.b_bits % kLineBits > 0) return true;
    if (b1 * p1.b_bits % kLineBits > 0 && b2 * p2.b_bits % kLineBits == 0) return false;
  }
  if (RatioDiffers(p1, p2)) return p1.block.mte2_bw_ratio > p2.block.mte2_bw_ratio;
  const int64_t bl1 = p1.l1.step_n * p1.block.base_n * p1.l1.step_kb * p1.block.base_k;
  const int64_t bl2 = p2.l1.step_n * p2.block.base_n * p2.l1.step_kb * p2.block.base_k;
  return bl1 > bl2;
}

bool CompareW4(const BasicBlockParam& p1, const BasicBlockParam& p2) {
  const int64_t c1 = p1.m_dim * p1.n_dim, c2 = p2.m_dim * p2.n_dim;
  if (c1 >= kMinCoreDim && c2 < kMinCoreDim) return true;
  if (c1 < kMinCoreDim && c2 >= kMinCoreDim) return false;
  const int64_t a_size = p1.m * p1.k * p1.a_bits;
  const int64_t b_size = p1.n * p1.k * p1.b_bits;
  if (b_size > a_size) {
    return p1.weight_nz ? CompareW4PriorBNz(p1, p2) : CompareW4PriorBNd(p1, p2);
  }
  return CompareW4PriorA(p1, p2);
}

bool CompareW8(const BasicBlockParam& p1, const BasicBlockParam& p2) {
  if (p1.m_dim * p1.n_dim != p2.m_dim * p2.n_dim) return p1.m_dim * p1.n_dim > p2.m_dim * p2.n_dim;
  if (RatioDiffers(p1, p2)) return p1.block.mte2_bw_ratio > p2.block.mte2_bw_ratio;
  const int64_t a_size = p1.m * p1.k * p1.a_bits;
  const int64_t b_size = p1.n * p1.k * p1.b_bits;
  const int64_t bt1 = KTail(p1, p1.l1.step_kb), bt2 = KTail(p2, p2.l1.step_kb);
  const int64_t at1 = KTail(p1, p1.l1.step_ka), at2 = KTail(p2, p2.l1.step_ka);
  if (b_size > a_size) {
    if (bt1 != bt2) return bt1 > bt2;
    return at1 > at2;
  }
  if (at1 != at2) return at1 > at2;
  return bt1 > bt2;
}

bool CompareMte2Bound(const BasicBlockParam& p1, const BasicBlockParam& p2) {
  return p1.b_bits == kBits4 ? CompareW4(p1, p2) : CompareW8(p1, p2);
}

// --- The solver --------------------------------------------------------------

class Solver {
 public:
  Solver(const SolverPlatform& platform, bool has_offset, QuantType antiquant,
         const BasicBlockParam& input)
      : pf_(platform), has_offset_(has_offset), antiquant_(antiquant), p_(input) {
    a_bytes_ = p_.a_bits / static_cast<double>(kBits8);
    b_bytes_ = p_.b_bits / static_cast<double>(kBits8);
    bias_bytes_ = p_.bias_bits / static_cast<double>(kBits8);
  }

  bool Solve() {
    if (p_.m <= 0 || p_.n <= 0 || p_.k <= 0) return false;
    if (p_.a_bits <= 0 || p_.b_bits <= 0 || (p_.has_bias && p_.bias_bits <= 0) ||
        (!p_.has_bias && p_.bias_bits > 0)) {
      return false;
    }
    if (p_.group_size < 0 || p_.group_size >= p_.k) return false;
    Reset();
    const Table& table = TableOf(p_.a_bits, p_.b_bits);
    for (size_t i = 0; i < table.size(); ++i) {
      p_.m_dim = int64_t{1} << i;
      p_.n_dim = 32 / p_.m_dim;
      p_.single_m = CeilAlign(CeilDiv(p_.m, p_.m_dim), kBlockCube);
      p_.single_n = CeilAlign(CeilDiv(p_.n, p_.n_dim), kBlockCube);
      const int64_t m_fixed = CeilDiv(p_.m, p_.single_m);
      const int64_t n_fixed = CeilDiv(p_.n, p_.single_n);
      if (p_.m_dim * p_.n_dim != pf_.block_num || m_fixed != p_.m_dim || n_fixed != p_.n_dim) {
        continue;
      }
      SingleShapeTiling(table[i]);
    }
    if (!FinalResult()) return DefaultTiling();
    return true;
  }

  const BasicBlockParam& result() const { return p_; }

 private:
  void InitL1() { p_.l1 = L1Param{}; }
  void Reset() {
    p_.single_m = 1;
    p_.single_n = 1;
    p_.m_dim = 1;
    p_.n_dim = 1;
    p_.mte2_data_size = 0;
    p_.block = BasicBlock{};
    InitL1();
    mte2_bound_.clear();
    cube_bound_.clear();
  }

  double MinMte2Bw(int64_t base_m, int64_t base_n, int64_t m_dim, int64_t n_dim) const {
    if (m_dim * n_dim * base_m * base_n == 0) return 0;
    return kBlockCube * kBlockCube * kBlockCube * pf_.frequency * 0.001 *
           static_cast<double>(m_dim) * static_cast<double>(n_dim) *
           (a_bytes_ / static_cast<double>(base_n) + b_bytes_ / static_cast<double>(base_m));
  }
  double Mte2Bw(int64_t base_m, int64_t base_n, int64_t m_dim, int64_t n_dim) const {
    if (pf_.hbm_bw <= 0.0 || pf_.l2_bw <= 0.0 || pf_.block_num <= 0) return 0;
    const double denom =
        (static_cast<double>(m_dim * base_m) * a_bytes_ +
         static_cast<double>(n_dim * base_n) * b_bytes_) /
            pf_.hbm_bw +
        (static_cast<double>(m_dim * n_dim - m_dim) * static_cast<double>(base_m) * a_bytes_ +
         static_cast<double>(base_n) * static_cast<double>(m_dim * n_dim - n_dim) * b_bytes_) /
            pf_.l2_bw;
    if (denom <= 0.0) return 0;
    return (static_cast<double>(m_dim * n_dim) *
            (static_cast<double>(base_m) * a_bytes_ + b_bytes_ * static_cast<double>(base_n))) /
           denom * (static_cast<double>(m_dim * n_dim) / static_cast<double>(pf_.block_num));
  }
  double Mte2BwRatio(int64_t base_m, int64_t base_n, int64_t m_dim, int64_t n_dim) const {
    if (MinMte2Bw(base_m, base_n, m_dim, n_dim) > 0) {
      return Mte2Bw(base_m, base_n, m_dim, n_dim) / MinMte2Bw(base_m, base_n, m_dim, n_dim);
    }
    return 0;
  }

  bool CacheLineAligned(int64_t bits, int64_t line) const {
    return (p_.single_k * bits > line * kBits8) &&
           (p_.group_size == 0 || (p_.group_size * bits % (line * kBits8) == 0 ||
                                   line * kBits8 % (p_.group_size * bits) == 0));
  }

  void UpdateMte2DataSize() {
    const int64_t m_loop = CeilDiv(p_.single_m, p_.l1.step_m * p_.block.base_m);
    const int64_t n_loop = CeilDiv(p_.single_n, p_.l1.step_n * p_.block.base_n);
    const bool a_full = p_.block.base_k * p_.l1.step_ka >= p_.single_k;
    const bool b_full = p_.block.base_k * p_.l1.step_kb >= p_.single_k;
    const auto order_m = [&] {
      return static_cast<int64_t>(static_cast<double>(p_.single_m * p_.single_k) * a_bytes_ +
                                  static_cast<double>(m_loop * p_.single_n * p_.single_k) *
                                      b_bytes_);
    };
    const auto order_n = [&] {
      return static_cast<int64_t>(static_cast<double>(p_.single_n * p_.single_k) * b_bytes_ +
                                  static_cast<double>(n_loop * p_.single_m * p_.single_k) *
                                      a_bytes_);
    };
    if (a_full && b_full) {
      const int64_t m_first = order_m(), n_first = order_n();
      p_.mte2_data_size = std::min(n_first, m_first);
      p_.l1.iterate_order = m_first < n_first ? 0 : 1;
    } else if (a_full) {
      p_.mte2_data_size = order_m();
    } else if (b_full) {
      p_.mte2_data_size = order_n();
    } else {
      p_.mte2_data_size =
          static_cast<int64_t>(static_cast<double>(m_loop * p_.single_n * p_.single_k) * b_bytes_ +
                               static_cast<double>(n_loop * p_.single_m * p_.single_k) * a_bytes_);
    }
    p_.mte2_data_size *= p_.m_dim * p_.n_dim;
  }

  int64_t UbLoadSize() const {
    if (p_.weight_nz || p_.group_size <= 0) return 0;
    const BasicBlock& b = p_.block;
    const L1Param& l1 = p_.l1;
    const int64_t inner_align = kUbAlign * kBits8 / p_.b_bits;
    int64_t inner = p_.trans_b ? CeilAlign(b.base_k * l1.step_kb, inner_align)
                               : CeilAlign(b.base_n * l1.step_n, inner_align);
    if (p_.b_bits == kBits4 && p_.trans_b && p_.group_size > kGroup64 &&
        p_.group_size % kGroup64 > 0 && inner > p_.group_size) {
      inner = std::max(inner, p_.group_size + 96);
    }
    const int64_t outer =
        p_.trans_b ? CeilDiv(b.base_n * l1.step_n, kBuf2) : CeilDiv(b.base_k * l1.step_kb, kBuf2);
    const int64_t scale =
        p_.trans_b
            ? CeilDiv(b.base_n * l1.step_n, kBuf2) *
                  CeilAlign(CeilDiv(b.base_k * l1.step_kb, p_.group_size), kBlockCube)
            : CeilDiv(CeilDiv(b.base_k * l1.step_kb, kBuf2), p_.group_size) * b.base_n * l1.step_n;
    return l1.b1_buffers * outer * inner * p_.b_bits +
           std::min(l1.b1_buffers, kBuf2) * (CeilAlign(outer, kBlockCube) + 1) * inner * p_.a_bits +
           l1.b1_buffers * scale * p_.a_bits * (static_cast<int64_t>(has_offset_) + 1);
  }

  bool InvalidBlock() const {
    constexpr int64_t kRegWidth = 128;
    const BasicBlock& b = p_.block;
    bool invalid =
        p_.b_bits == kBits8 && p_.group_size > 0 && !p_.weight_nz && !p_.trans_b &&
        ((p_.single_n > kRegWidth && p_.single_n > b.base_n && b.base_n % kRegWidth > 0) ||
         (p_.single_n <= kRegWidth && p_.single_n > b.base_n));
    return invalid || b.base_m <= 0 || b.base_k <= 0 || b.base_n <= 0;
  }

  bool InvalidW4() const {
    const BasicBlock& b = p_.block;
    const L1Param& l1 = p_.l1;
    if (b.base_n * l1.step_n <= 0 || p_.single_n <= 0 || p_.single_k <= 0 ||
        l1.step_kb * b.base_k <= 0) {
      return true;
    }
    bool invalid;
    if (p_.weight_nz) {
      invalid = static_cast<double>(CeilAlign(l1.step_n * b.base_n, kBlockCube * kBuf2) *
                                    l1.step_kb * b.base_k) *
                    a_bytes_ >
                kW4MaxBl1Nz;
      const int64_t n_tail = p_.single_n % (b.base_n * l1.step_n);
      const int64_t n_tail_last = p_.n % p_.single_n % (b.base_n * l1.step_n);
      const int64_t n_bub = CeilAlign(CeilDiv(b.base_n * l1.step_n, kBuf2), kBlockCube);
      invalid = invalid || ((n_tail > 0 && n_tail <= n_bub) ||
                            (n_tail_last > 0 && n_tail_last <= n_bub && n_tail_last < p_.n));
    } else {
      invalid = UbLoadSize() > pf_.ub_bytes * kBits8;
      if (p_.trans_b) {
        invalid =
            invalid || (CacheLineAligned(p_.b_bits, pf_.min_cache_line) &&
                        (l1.step_kb * b.base_k * p_.b_bits) % (pf_.min_cache_line * kBits8) > 0 &&
                        l1.step_kb * b.base_k < p_.single_k);
        const int64_t k_bl1 = std::min(b.base_k * l1.step_kb, p_.single_k);
        const int64_t k_bl1_tail = p_.single_k % k_bl1;
        const int64_t pair = kBuf2 * p_.group_size;
        invalid = invalid || (p_.group_size > kGroup64 && p_.group_size % kGroup64 > 0 &&
                              ((k_bl1 > p_.group_size && k_bl1 % pair > 0) ||
                               (k_bl1_tail > p_.group_size && k_bl1_tail % pair > 0 &&
                                k_bl1_tail % pair <= p_.group_size)));
      } else {
        invalid =
            invalid || ((p_.single_n * p_.b_bits > pf_.min_cache_line * kBits8) &&
                        (l1.step_n * b.base_n * p_.b_bits) % (pf_.min_cache_line * kBits8) > 0 &&
                        l1.step_n * b.base_n < p_.single_n);
      }
    }
    return invalid;
  }

  bool InvalidW8() const {
    const BasicBlock& b = p_.block;
    const L1Param& l1 = p_.l1;
    bool invalid = false;
    if (!p_.weight_nz && p_.group_size > 0) {
      invalid = UbLoadSize() > pf_.ub_bytes * kBits8;
      if (p_.trans_b) {
        invalid =
            invalid || (CacheLineAligned(p_.b_bits, pf_.min_cache_line) &&
                        (l1.step_kb * b.base_k * p_.b_bits) % (pf_.min_cache_line * kBits8) > 0 &&
                        l1.step_kb * b.base_k < p_.single_k);
      } else {
        invalid =
            invalid || ((p_.single_n * p_.b_bits > pf_.min_cache_line * kBits8) &&
                        (l1.step_n * b.base_n * p_.b_bits) % (pf_.min_cache_line * kBits8) > 0 &&
                        l1.step_n * b.base_n < p_.single_n);
      }
    } else if (!p_.trans_b) {
      const int64_t k_bl1 = std::min(p_.single_k, l1.step_kb * b.base_k);
      const int64_t n_bl1 = std::min(p_.single_n, l1.step_n * b.base_n);
      invalid = p_.single_n % kUbAlign != 0 || (l1.step_n * b.base_n) % kUbAlign != 0;
      const int64_t antiquant_size =
          antiquant_ == QuantType::kPerTensor
              ? 0
              : static_cast<int64_t>(static_cast<double>(n_bl1) * a_bytes_ +
                                     static_cast<double>(n_bl1) * a_bytes_);
      invalid = invalid ||
                static_cast<double>(l1.b1_buffers) *
                        (static_cast<double>(n_bl1 * CeilAlign(CeilDiv(k_bl1, kBuf2), kBlockCube)) *
                             (a_bytes_ + b_bytes_) +
                         static_cast<double>(antiquant_size)) >
                    static_cast<double>(pf_.ub_bytes);
    }
    return invalid;
  }

  int64_t L1LoadSize(const BasicBlock& b, const L1Param& l1) const {
    int64_t b1 = l1.b1_buffers;
    if (p_.group_size > 0 && !p_.weight_nz && b1 > 1) b1 = kBuf2;
    const int64_t bias_buffers = std::min(kBuf2, CeilDiv(p_.single_n, b.base_n));
    if (p_.b_bits == kBits4 && p_.weight_nz && l1.a1_buffers == 1 && l1.b1_buffers == kBuf4) {
      return std::max(
                 pf_.l1_bytes / kBuf2,
                 static_cast<int64_t>(
                     static_cast<double>(b.base_n * l1.step_n * b.base_k * l1.step_kb * kBuf2) *
                         a_bytes_ +
                     static_cast<double>(b.base_m * l1.step_m * b.base_k * l1.step_ka) *
                         a_bytes_)) +
             static_cast<int64_t>(
                 static_cast<double>(b.base_n * l1.step_n * b.base_k * l1.step_kb * kBuf2) *
                     a_bytes_ +
                 static_cast<double>(b.base_n * bias_buffers) * bias_bytes_);
    }
    return static_cast<int64_t>(
        static_cast<double>(b.base_m * l1.step_m * b.base_k * l1.step_ka * l1.a1_buffers) *
            a_bytes_ +
        static_cast<double>(b.base_n * l1.step_n * b.base_k * l1.step_kb * b1) * a_bytes_ +
        static_cast<double>(b.base_n * bias_buffers) * bias_bytes_);
  }

  bool Invalid(bool cube_bound, int64_t step_k_max) const {
    const BasicBlock& b = p_.block;
    const L1Param& l1 = p_.l1;
    const int64_t kb = l1.step_kb * b.base_k;
    bool invalid = L1LoadSize(b, l1) > pf_.l1_bytes;
    invalid = invalid || (p_.group_size > 0 && kb % p_.group_size > 0 && p_.group_size % kb > 0);
    invalid = invalid || (p_.group_size > 0 && !p_.weight_nz && !p_.trans_b && kb > p_.group_size &&
                          kb % (p_.group_size * kBuf2) > 0);
    invalid = invalid || (l1.step_ka < step_k_max && l1.step_kb < step_k_max &&
                          l1.step_ka % l1.step_kb > 0 && l1.step_kb % l1.step_ka > 0);
    invalid = invalid || (cube_bound && !p_.weight_nz && p_.trans_b && p_.group_size > kGroup64 &&
                          p_.group_size % kGroup64 > 0 &&
                          b.base_k * l1.step_kb < std::min<int64_t>(512, p_.k));
    invalid = invalid || (p_.b_bits == kBits8 && InvalidW8());
    invalid = invalid || (p_.b_bits == kBits4 && InvalidW4());
    return invalid;
  }

  void SetL1Param(bool cube_bound, int64_t step_k_max, int64_t step_ka, int64_t step_kb) {
    int64_t a1, b1;
    const int64_t m_blocks = CeilDiv(p_.single_m, p_.block.base_m);
    if (p_.group_size > 0) {
      const int64_t a1_max = (p_.b_bits == kBits4 && p_.weight_nz) ? kBuf4 : kBuf2;
      a1 = std::min(CeilDiv(step_k_max, step_ka) * m_blocks, a1_max);
      if (m_blocks == 1 && CeilDiv(step_k_max, step_ka) <= a1_max) {
        a1 = 1;
        step_ka = step_k_max;
      }
      b1 = std::min(CeilDiv(step_k_max, step_kb) * CeilDiv(p_.single_n, p_.block.base_n), kBuf4);
      if (cube_bound && !p_.weight_nz && p_.group_size > 0 && p_.trans_b && p_.k < 1024) {
        step_kb = step_k_max;
        b1 = std::min(CeilDiv(p_.single_n, p_.block.base_n), kBuf4);
      }
      a1 = a1 == kBuf3 ? kBuf2 : a1;
      b1 = b1 == kBuf3 ? kBuf2 : b1;
    } else {
      a1 = step_ka == step_k_max ? 1 : kBuf2;
      b1 = step_kb == step_k_max ? 1 : kBuf2;
    }
    p_.l1 = L1Param{1, 1, 1, step_ka, step_kb, a1, b1};
  }

  void DoL1Tiling(bool cube_bound) {
    const BasicBlock& b = p_.block;
    const int64_t step_k_max = CeilDiv(p_.single_k, b.base_k);
    const int64_t step_ka_max = std::min(
        CeilDiv(step_k_max, kBuf2),
        CeilDiv(pf_.l1_bytes,
                static_cast<int64_t>(static_cast<double>(b.base_m * b.base_k) * a_bytes_)));
    const int64_t step_ka_min =
        !p_.trans_a && CacheLineAligned(p_.a_bits, pf_.cache_line)
            ? std::min(CeilDiv(pf_.cache_line,
                               static_cast<int64_t>(static_cast<double>(b.base_k) * a_bytes_)),
                       step_ka_max)
            : 1;
    int64_t kb_min_prune =
        std::min(CeilDiv(cube_bound ? pf_.min_cache_line : pf_.cache_line,
                         static_cast<int64_t>(static_cast<double>(b.base_k) * b_bytes_)),
                 step_k_max);
    kb_min_prune =
        p_.group_size > 0 && p_.trans_b ? DownwardFactor(kb_min_prune, step_k_max) : kb_min_prune;
    const int64_t step_kb_min =
        p_.trans_b && !p_.weight_nz && CacheLineAligned(p_.b_bits, pf_.cache_line) ? kb_min_prune
                                                                                   : 1;
    const int64_t kb_max_prune = p_.group_size > 0 && p_.trans_b && step_k_max <= 6
                                     ? std::min<int64_t>(step_k_max, 6)
                                     : CeilDiv(step_k_max, kBuf2);
    // A step of 0 would not advance (CANN loops for ever there); it cannot
    // occur for blocks of at least 16 elements.
    if (step_ka_min <= 0 || step_kb_min <= 0) return;
    for (int64_t step_ka = step_ka_min; step_ka <= step_ka_max; step_ka += step_ka_min) {
      const int64_t step_kb_max = std::min(
          kb_max_prune,
          CeilDiv(static_cast<int64_t>(
                      static_cast<double>(pf_.l1_bytes) -
                      static_cast<double>(p_.block.base_m * p_.block.base_k * step_ka) * a_bytes_),
                  static_cast<int64_t>(static_cast<double>(p_.block.base_n * p_.block.base_k) *
                                       a_bytes_)));
      for (int64_t step_kb = step_kb_min; step_kb <= step_kb_max; step_kb += step_kb_min) {
        SetL1Param(cube_bound, step_k_max, step_ka, step_kb);
        if (Invalid(cube_bound, step_k_max)) continue;
        UpdateMte2DataSize();
        mte2_bound_.push_back(p_);
      }
    }
  }

  int64_t BaseK(int64_t base_m, int64_t base_n) const {
    int64_t base_k =
        std::max(FloorAlign(kBaseMkLimit / std::max(base_m, base_n), kUbAlign), kUbAlign);
    if (p_.group_size > 0) {
      if (p_.group_size > base_k) {
        while (base_k > kUbAlign && p_.group_size % base_k > 0) base_k -= kUbAlign;
      } else {
        base_k = base_k / p_.group_size * p_.group_size;
        const int64_t align = p_.b_bits == kBits4 && p_.weight_nz ? kW4MaxBubNz : kW4MaxBubNd;
        while (align % p_.group_size == 0 && base_k > p_.group_size && align % base_k > 0) {
          base_k -= p_.group_size;
        }
      }
      return std::min(FloorAlign(CeilAlign(p_.k, kBlockCube), p_.group_size), base_k);
    }
    if (base_k >= kBaseKList[0]) {
      base_k = FloorAlign(base_k, kBaseKList[0]);
    } else if (base_k > 0 && kBaseKList[0] % base_k > 0) {
      for (int64_t k : kBaseKList) {
        if (base_k >= k) {
          base_k = k;
          break;
        }
      }
    }
    return std::min(CeilAlign(p_.k, kBlockCube), base_k);
  }

  void BasicBlockTable() {
    for (int64_t base_m = kBlockCube; base_m <= p_.single_m; base_m += kBlockCube) {
      int64_t n_max = std::min(kBaseBlockMax, FloorAlign(kBaseMnLimit / base_m, kBlockCube));
      n_max = std::min(p_.single_n, n_max);
      for (int64_t base_n = n_max; base_n >= kBlockCube; base_n -= kBlockCube) {
        const int64_t base_k = BaseK(base_m, base_n);
        const double min_bw = MinMte2Bw(base_m, base_n, p_.m_dim, p_.n_dim);
        const double bw = Mte2Bw(base_m, base_n, p_.m_dim, p_.n_dim);
        const double ratio = Mte2BwRatio(base_m, base_n, p_.m_dim, p_.n_dim);
        p_.block = {base_m, base_n, base_k, bw, min_bw, ratio, 0.0};
        if (base_m * base_n > kBaseMnLimit || base_m > kBaseBlockMax || base_n > kBaseBlockMax ||
            InvalidBlock()) {
          continue;
        }
        DoL1Tiling(false);
      }
    }
  }

  bool HalfSingleShape(const std::vector<BasicBlock>& row, int64_t* half_m, int64_t* half_n) const {
    if (row.empty()) return false;
    const int64_t min_m = row.front().base_m, max_n = row.front().base_n;
    const int64_t max_m = row.back().base_m, min_n = row.back().base_n;
    if (p_.single_m < min_m || p_.single_n < min_n) return false;
    while (*half_m > max_m) *half_m = ((*half_m / kBlockCube + 1) / 2) * kBlockCube;
    while (*half_n > max_n) *half_n = ((*half_n / kBlockCube + 1) / 2) * kBlockCube;
    return true;
  }

  void SingleShapeTiling(const std::vector<BasicBlock>& row) {
    InitL1();
    int64_t half_m = p_.single_m, half_n = p_.single_n;
    if (!HalfSingleShape(row, &half_m, &half_n)) return;
    for (const BasicBlock& block : row) {
      p_.block = block;
      if (InvalidBlock()) continue;
      BasicBlock& b = p_.block;
      b.base_k = BaseK(b.base_m, b.base_n);
      const int64_t sm = p_.single_m, sn = p_.single_n;
      if (sm % b.base_m == 0 && sn % b.base_n == 0) {
        b.mte2_tail_bw_ratio = kTailRatioMax + 1;
      } else if (sm % b.base_m == 0 && sn >= b.base_n) {
        b.mte2_tail_bw_ratio = Mte2BwRatio(b.base_m, sn % b.base_n, p_.m_dim, p_.n_dim);
      } else if (sn % b.base_n == 0 && sm >= b.base_m) {
        b.mte2_tail_bw_ratio = Mte2BwRatio(sm % b.base_m, b.base_n, p_.m_dim, p_.n_dim);
      } else if (half_m % b.base_m == 0 && sn >= b.base_n) {
        b.mte2_tail_bw_ratio = Mte2BwRatio(b.base_m, sn % b.base_n, p_.m_dim, p_.n_dim);
      } else if (half_n % b.base_n == 0 && sm >= b.base_m) {
        b.mte2_tail_bw_ratio = Mte2BwRatio(sm % b.base_m, b.base_n, p_.m_dim, p_.n_dim);
      } else {
        continue;
      }
      cube_bound_.push_back(p_);
    }
  }

  bool ValidResult() const {
    const BasicBlock& b = p_.block;
    if (p_.m_dim * p_.n_dim * p_.k_dim > pf_.block_num) return false;
    if (L1LoadSize(b, p_.l1) > pf_.l1_bytes) return false;
    const int64_t a2 = static_cast<int64_t>(static_cast<double>(b.base_m * b.base_k) * a_bytes_ *
                                            static_cast<double>(kBuf2));
    const int64_t b2 = static_cast<int64_t>(static_cast<double>(b.base_n * b.base_k) * a_bytes_ *
                                            static_cast<double>(kBuf2));
    if (a2 > pf_.l0a_bytes || b2 > pf_.l0b_bytes || a2 == 0 || b2 == 0) return false;
    const int64_t step_k_max = CeilDiv(p_.single_k, b.base_k);
    if ((p_.l1.step_ka < step_k_max && p_.l1.step_kb < step_k_max) &&
        (p_.l1.step_ka % p_.l1.step_kb > 0 && p_.l1.step_kb % p_.l1.step_ka > 0)) {
      return false;
    }
    return true;
  }

  bool L1ForCubeBound() {
    for (const BasicBlockParam& candidate : cube_bound_) {
      p_ = candidate;
      DoL1Tiling(true);
      if (!mte2_bound_.empty()) {
        std::stable_sort(mte2_bound_.begin(), mte2_bound_.end(), CompareMte2Bound);
        p_ = mte2_bound_.front();
        return true;
      }
    }
    return false;
  }

  bool FinalResult() {
    bool ok = true;
    if (cube_bound_.empty() && mte2_bound_.empty()) {
      ok = false;
    } else if (!cube_bound_.empty() && mte2_bound_.empty()) {
      std::stable_sort(cube_bound_.begin(), cube_bound_.end(), CompareCubeBound);
      ok = L1ForCubeBound();
    } else if (cube_bound_.empty() && !mte2_bound_.empty()) {
      std::stable_sort(mte2_bound_.begin(), mte2_bound_.end(), CompareMte2Bound);
      p_ = mte2_bound_.front();
    }
    return ok && ValidResult();
  }

  bool DefaultTiling() {
    Reset();
    const int64_t m_dim_max = std::min(CeilDiv(p_.m, kBlockCube), pf_.block_num);
    for (int64_t m_dim = m_dim_max; m_dim >= 1; --m_dim) {
      const int64_t n_dim_max = std::min(CeilDiv(p_.n, kBlockCube), pf_.block_num / m_dim);
      for (int64_t n_dim = n_dim_max; n_dim >= 1; --n_dim) {
        if ((!cube_bound_.empty() || !mte2_bound_.empty()) &&
            static_cast<double>(m_dim * n_dim) < 0.8 * static_cast<double>(pf_.block_num)) {
          continue;
        }
        p_.m_dim = m_dim;
        p_.n_dim = n_dim;
        p_.single_m = CeilAlign(CeilDiv(p_.m, p_.m_dim), kBlockCube);
        p_.single_n = CeilAlign(CeilDiv(p_.n, p_.n_dim), kBlockCube);
        const int64_t m_fixed = CeilDiv(p_.m, p_.single_m);
        const int64_t n_fixed = CeilDiv(p_.n, p_.single_n);
        if (m_fixed != p_.m_dim || n_fixed != p_.n_dim) continue;
        BasicBlockTable();
      }
    }
    return FinalResult();
  }

  const SolverPlatform& pf_;
  const bool has_offset_;
  const QuantType antiquant_;
  BasicBlockParam p_;
  double a_bytes_ = 0, b_bytes_ = 0, bias_bytes_ = 0;
  std::vector<BasicBlockParam> mte2_bound_;
  std::vector<BasicBlockParam> cube_bound_;
};

}  // namespace

bool SolveBasicBlock(const SolverPlatform& platform, bool has_offset, QuantType antiquant,
                     BasicBlockParam* param) {
  Solver solver(platform, has_offset, antiquant, *param);
  const bool ok = solver.Solve();
  *param = solver.result();
  return ok;
}

}  // namespace npu::tiling::weight_quant
