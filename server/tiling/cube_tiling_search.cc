// The TCubeTiling search of asc-devkit's MultiCoreMatmulTiling, restricted to
// what BatchMatMulV3's high-level strategies give it. Facts are from
// asc-devkit impl/adv_api/tiling/matmul/ (matmul_tiling_algorithm.cpp unless
// another file is named) and include/adv_api/matmul/matmul_tiling_base.h.
//
// The arithmetic is CANN's: 32-bit signed integers, float where CANN uses
// float, and the same order of ties, because every choice below is a
// comparison whose outcome decides the words. Products past 2^31 wrap as
// CANN's compiled code computes them; this file is compiled with -fwrapv
// (server/tiling/CMakeLists.txt), so a wrapped product is defined
// behaviour, and every division by a value that can reach zero or -1 goes
// through a guard. Where CANN's compiled search divides by zero (its
// optimizer drops the zero test of a divisor it assumes cannot wrap), the
// search reports CANN's fault instead of a plan (server/tiling/cann_fault.h).
//
// Facts that shape the whole search:
// - InitTCubeTilingData builds the tiling object with its default
//   constructor (matmul_tiling_base.cpp), so the search believes it runs on
//   an Ascend910B: L0A = L0B = 64 KiB, a 1 KiB bias table, and the 910B rules
//   (bias-table limits, the fp32 depthB1 correction) apply. Only
//   SetBufferSpace(L1, L0C, UB) brings the chip in, and it changes nothing
//   when any size exceeds the 910B default (512 KiB - 256 L1, 128 KiB L0C,
//   192 KiB - 256 UB) -- the case on the 950, whose L1 is 512 KiB.
// - SetShape() sets the single shape, so the multi-core scenario is always
//   "OTHERS" (GetMultiCoreScenario) and the SPLIT_MN basic-block path never
//   runs; the template configuration is fixed (L0C double buffer off, L1
//   double buffer on, factor split on).
#include "server/tiling/cube_tiling_search.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/small_divisors.h"

namespace npu::tiling {
namespace {

// a * b with 32-bit two's-complement wrap-around (the machine's result for
// CANN's signed int products that overflow), without undefined behaviour.
int32_t WrapMul32(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

// --- Constants of the search -------------------------------------------------

constexpr int32_t kC0 = 16;       // rows of a fractal
constexpr int32_t kC0Bytes = 32;  // bytes of a fractal row
constexpr int32_t kFractalBytes = kC0 * kC0Bytes;
constexpr int32_t kMinFractal = 256;  // 16 x 16 elements
constexpr int32_t kFp32Bytes = 4;
constexpr int32_t kDbOn = 2;
constexpr int32_t kDbOff = 1;
constexpr int32_t kMinMte1Load = 32;
constexpr int32_t kDataCopyAlignBytes = 256;
constexpr int32_t kFp32AlignSize = 16;
constexpr int32_t kInt8AlignSize = 32;
constexpr int32_t kMaxN0WithBias = 64;
constexpr int32_t kFp32InvalidBaseK = 8;

// The buffers of the default-constructed tiling object (matmul_tiling_base.cpp,
// the 910B branch of its constants).
constexpr int32_t kDefaultL1 = 512 * 1024 - 256;
constexpr int32_t kDefaultL0c = 128 * 1024;
constexpr int32_t kDefaultL0a = 64 * 1024;
constexpr int32_t kDefaultL0b = 64 * 1024;
constexpr int32_t kDefaultBiasTable = 1024;
constexpr int32_t kDefaultUb = 192 * 1024 - 256;
constexpr int32_t kBufferAlign = 32;

// --- Integer helpers with CANN's semantics (math_util.{h,cpp}) ---------------

int32_t CeilDiv32Wide(int32_t a, int32_t b) {
  if (b == 0) return 0;
  return static_cast<int32_t>((static_cast<int64_t>(a) + b - 1) / b);
}
// The search divides mostly extents in fractals by block sides below 128:
// those take the table of small_divisors.h inline (a + b - 1 < 2^32).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int32_t CeilDiv32(int32_t a, int32_t b) {
  if (ABSL_PREDICT_TRUE(a >= 0 && b > 0 && b <= static_cast<int32_t>(kMaxTableDivisor))) {
    return static_cast<int32_t>(Quotient(static_cast<uint32_t>(a) + static_cast<uint32_t>(b) - 1,
                                         static_cast<uint32_t>(b)));
  }
  return CeilDiv32Wide(a, b);
}
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int32_t Align32(int32_t a, int32_t b) {
  return CeilDiv32(a, b) * b;
}
// a / b in 32 bits, wrapping INT32_MIN / -1 (which the machine traps on)
// to INT32_MIN; b must not be 0.
int32_t WrapQuot32(int32_t a, int32_t b) {
  return b == -1 ? static_cast<int32_t>(0U - static_cast<uint32_t>(a)) : a / b;
}
int32_t AlignDown32(int32_t a, int32_t b) { return b == 0 ? 0 : WrapQuot32(a, b) * b; }

// a * b * c * d when every factor is positive and every partial product
// fits in 32 bits; otherwise 0. (CANN checks each product as a > INT32_MAX /
// b; for positive operands that is a * b > INT32_MAX, tested here on the
// 64-bit product without a division.)
int32_t CheckedProduct(int32_t a, int32_t b, int32_t c, int32_t d = 1) {
  if (a <= 0 || b <= 0 || c <= 0 || d <= 0) return 0;
  int64_t product = static_cast<int64_t>(a) * b;
  if (product > INT32_MAX) return 0;
  product *= c;
  if (product > INT32_MAX) return 0;
  product *= d;
  return product > INT32_MAX ? 0 : static_cast<int32_t>(product);
}

// Rounds `shape` up to a power of two between 16 and 2048 (MapShape).
int32_t MapShape(int32_t shape) {
  uint32_t seed = 16;
  if (shape < static_cast<int32_t>(seed)) return shape;
  while (static_cast<int32_t>(seed) < 1024) {
    if (static_cast<int32_t>(seed) < shape && static_cast<int32_t>(seed << 1U) >= shape) break;
    seed <<= 1U;
  }
  return static_cast<int32_t>(seed << 1U);
}

// The number of divisors of f for f in [0, 128]: what CANN's CountFactors
// counts for a factor f (the i in [1, f + 1] that divide it).
constexpr std::array<int32_t, 129> kDivisorCounts = [] {
  std::array<int32_t, 129> counts{};
  for (int32_t f = 1; f <= 128; ++f) {
    for (int32_t i = 1; i <= f; ++i) counts[f] += f % i == 0 ? 1 : 0;
  }
  return counts;
}();

// The largest divisor count among the divisors of `dim` in [first, last]
// (CountFactorLayers), for 0 < first <= last <= 128, or `enough` as soon as
// one reaches it: the callers only compare the largest with a threshold.
int32_t LargestDivisorCount(int32_t dim, int32_t first, int32_t last, int32_t enough) {
  int32_t largest = 0;
  for (int32_t factor = last; factor >= first; --factor) {
    if (!Divides(dim, factor)) continue;
    largest = std::max(largest, kDivisorCounts[factor]);
    if (largest >= enough) break;
  }
  return largest;
}

// Whether `dim` has enough small divisors to split well
// (CheckFactorNumSatisfy): CANN takes the largest divisor count l0 among the
// divisors of dim in [1, 64] and l1 among those in [65, 128], and finds too
// few when l0 <= 2, or, for dim above 128, l0 + l1 <= 4. The counts stop
// growing where the answer is settled: l0 >= 3 for dim <= 128; l0 >= 5 (then
// l0 + l1 >= 5 whatever l1 is), or l1 >= 5 - l0, above.
bool HasEnoughFactors(int32_t dim) {
  if (dim <= 8) return true;
  const int32_t l0_count = LargestDivisorCount(dim, 1, 64, dim > 128 ? 5 : 3);
  if (l0_count <= 2) return false;
  if (dim <= 128 || l0_count >= 5) return true;
  const int32_t l1_count = LargestDivisorCount(dim, 65, 128, 5 - l0_count);
  return l0_count + l1_count > 4;
}

// FindBestSingleCore: the per-core extent nearest ceil(shape / cores) (walking
// towards the mapped shape's) whose divisors suffice.
int32_t BestSingleCore(int32_t shape, int32_t mapped, int32_t cores, bool is_k) {
  if (is_k) {
    const int32_t best_shape = Divides(shape, cores) ? shape : mapped;
    return CeilDiv32(best_shape, cores);
  }
  if (cores == 1 && HasEnoughFactors(shape)) return shape;
  int32_t best = CeilDiv32(shape, cores);
  const int32_t target = CeilDiv32(mapped, cores);
  while (best != target) {
    if (HasEnoughFactors(best)) return best;
    best += best < target ? 1 : -1;
  }
  return best;
}

// Up to two divisors of `dim` around `base`: the first above it (at most
// `max_num`), then the ones at or below it (GetTwoFactors).
void TwoFactors(int32_t (&out)[2], int32_t base, int32_t dim, int32_t max_num) {
  if (dim == 1) {
    out[0] = out[1] = 1;
    return;
  }
  out[0] = out[1] = 0;
  int count = 0;
  if (dim > 0 && (dim & (dim - 1)) == 0) {
    // A power of two (half the calls: BestPowerOfTwo's): its divisors are
    // the powers of two up to it, so both walks end at the next one.
    const uint32_t udim = static_cast<uint32_t>(dim);
    if (base >= 0 && base < dim) {
      // The least power of two above base.
      const uint32_t up =
          base == 0 ? 1U : uint32_t{1} << (32 - __builtin_clz(static_cast<uint32_t>(base)));
      if (up <= udim && static_cast<int64_t>(up) <= max_num)
        out[count++] = static_cast<int32_t>(up);
    }
    if (base >= 1) {
      const uint32_t top = std::min<uint32_t>(static_cast<uint32_t>(base), udim);
      const uint32_t below = uint32_t{1} << (31 - __builtin_clz(top));
      out[count++] = static_cast<int32_t>(below);
      if (count < 2 && below > 1) out[count++] = static_cast<int32_t>(below >> 1);
    }
    return;
  }
  for (int32_t up = base + 1; up <= max_num && up <= dim; ++up) {
    if (Divides(dim, up)) {
      out[count++] = up;
      break;
    }
  }
  for (int32_t down = base; down >= 1; --down) {
    if (Divides(dim, down)) {
      out[count++] = down;
      if (count == 2) break;
    }
  }
}

// 128 / x for x in [1, 64] from a table, other x (not 0) by division: the
// minimal L0 block of the core-split search (LoopNumFromSingleCoreToL0,
// CalcLoadSize) holds 128 fractals of M x N with sides of at most 64, and
// 64 / x is (128 / x) / 2.
constexpr std::array<uint8_t, 65> kQuotientsOf128 = [] {
  std::array<uint8_t, 65> quotients{};
  for (int32_t x = 1; x <= 64; ++x) quotients[x] = static_cast<uint8_t>(128 / x);
  return quotients;
}();
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int32_t QuotientOf128(int32_t x) {
  return x >= 1 && x <= 64 ? kQuotientsOf128[x] : 128 / x;
}
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int32_t QuotientOf64(int32_t x) {
  return x >= 1 && x <= 64 ? kQuotientsOf128[x] >> 1 : 64 / x;
}

// The primes below 64, and the multiples of each up to 64 as a bit set (bit
// i - 1: i): a count divides an extent only if each of its prime factors
// does, so one test of a prime strikes all its multiples.
constexpr std::array<int32_t, 18> kSmallPrimes = {2,  3,  5,  7,  11, 13, 17, 19, 23,
                                                  29, 31, 37, 41, 43, 47, 53, 59, 61};
constexpr std::array<uint64_t, 18> kMultiplesOfSmallPrimes = [] {
  std::array<uint64_t, 18> multiples{};
  for (size_t i = 0; i < kSmallPrimes.size(); ++i) {
    for (int32_t m = kSmallPrimes[i]; m <= 64; m += kSmallPrimes[i]) {
      multiples[i] |= uint64_t{1} << (m - 1);
    }
  }
  return multiples;
}();

// ceil(extent / side) for a side cut from the extent itself (side <=
// extent): 1 when the side is the whole extent, without a division.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int32_t BlocksOf(int32_t extent, int32_t side) {
  return side == extent && side > 0 ? 1 : CeilDiv32(extent, side);
}

// The largest power of two (up to 4096) not above `base`, 1 at least.
int32_t BestPowerOfTwo(int32_t base) {
  static constexpr int32_t kValues[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  for (size_t i = 1; i < std::size(kValues); ++i) {
    if (kValues[i] > base) return kValues[i - 1];
  }
  return kValues[std::size(kValues) - 1];
}

// Lowers `factor` until it divides `base` and is at most `cap` (GetNearestFactor).
void NearestFactor(int32_t base, int32_t& factor, int32_t cap = INT32_MAX) {
  if (cap == INT32_MAX) cap = base;
  while (factor > cap || (factor > 0 && !Divides(base, factor))) --factor;
}

// Up to four candidate factors, walked in descending order without repeats.
struct FourFactors {
  std::array<int32_t, 4> values{};
  int size = 0;

  // The candidates GetL0FactorsCand takes for one side: GetTwoFactors of
  // `dim` around `base` (at most `max_num` above it), then of the largest
  // power of two in `dim` (at most `pow2_max_num` above). A power of two up
  // to 4096 is its own largest power of two: with the same bound the second
  // pair repeats the first.
  void Fill(int32_t base, int32_t dim, int32_t max_num, int32_t pow2_max_num) {
    int32_t two[2];
    TwoFactors(two, base, dim, max_num);
    values[0] = two[0];
    values[1] = two[1];
    const int32_t pow2 = BestPowerOfTwo(dim);
    if (pow2 != dim || pow2_max_num != max_num) TwoFactors(two, base, pow2, pow2_max_num);
    values[2] = two[0];
    values[3] = two[1];
  }

  // Sorts values[0..3] descending (a five-comparator sorting network) and
  // drops repeats.
  void SortDescendingUnique() {
    int32_t v0 = values[0], v1 = values[1], v2 = values[2], v3 = values[3];
    const auto order = [](int32_t& a, int32_t& b) {
      if (a < b) std::swap(a, b);
    };
    order(v0, v1);
    order(v2, v3);
    order(v0, v2);
    order(v1, v3);
    order(v1, v2);
    // Sorted, a repeat follows its equal.
    size = 0;
    values[size++] = v0;
    if (v1 != v0) values[size++] = v1;
    if (v2 != v1) values[size++] = v2;
    if (v3 != v2) values[size++] = v3;
  }
  const int32_t* begin() const { return values.data(); }
  const int32_t* end() const { return values.data() + size; }
};

int32_t BitsOf(DataType type) { return static_cast<int32_t>(DataTypeBits(type)); }

// --- Search state --------------------------------------------------------------

// Per-core extents in fractal units and the core split (CoreStatusPack).
struct CoreSplit {
  int32_t batch = 1;
  int32_t m = 1;
  int32_t k = 1;
  int32_t n = 1;
  int32_t batch_dim = 1;
  int32_t m_dim = 1;
  int32_t n_dim = 1;
  int32_t k_dim = 1;
};

// The L0 block being searched (L0StatusPack).
struct L0Block {
  int32_t m = 1;  // mL0, in fractals
  int32_t n = 1;
  int32_t k = 1;
  int32_t db_a = 1;
  int32_t db_b = 1;
  int32_t db_c = 1;
  int32_t final_m = 0;
  int32_t final_k = 0;
  int32_t final_n = 0;
  int32_t final_load_size = INT_MAX;
  float final_l0c_use = 0;
  int32_t final_mad = 0;
  int32_t final_mte1_loop = INT_MAX;
  int32_t final_mte1_cycles = 0;
  int32_t max_mk = 1;
  int32_t max_nk = 1;
  int32_t max_mn = 1;
  int32_t major_axis = 0;  // 0: M is the major axis, else N
  int32_t max_axis_num = 0;
  int32_t max_axis_point = 1;
  int32_t max_n = 1;
  int32_t bias_bytes = 0;
  bool update_using_mte1 = false;
};

// The L1 plan being searched (L1StatusPack). Every field persists from one
// phase of the search to the next, as in CANN.
struct L1Plan {
  int32_t k_a = 1;  // kAL1, in fractals
  int32_t k_b = 1;
  int32_t m_a = 1;  // mAL1, in L0 blocks
  int32_t n_b = 1;
  int32_t db_a = 1;
  int32_t db_b = 1;
  int32_t a_size = 0;
  int32_t b_size = 0;
  int32_t a_times = 1;
  int32_t b_times = 1;
  int32_t all_times = 1;
  int32_t load_size = 0;
  int32_t max_m_a = 1;
  int32_t max_n_b = 1;
  int32_t max_k_a = 1;
  int32_t max_k_b = 1;
  bool both_full_load = false;
  bool a_full_load = false;
  bool b_full_load = false;
  int32_t bias_times = 0;  // channelWiseTimes

  void Set(int32_t ka, int32_t kb, int32_t ma, int32_t nb, int32_t dba, int32_t dbb) {
    k_a = ka;
    k_b = kb;
    m_a = ma;
    n_b = nb;
    db_a = dba;
    db_b = dbb;
  }
};

// One row of candidate L1 factors: kAL1, mAL1, dbAL1, kBL1, nBL1, dbBL1, load.
using L1Candidate = std::array<int32_t, 7>;

class CubeSearch {
 public:
  CubeSearch(const CubeTilingSearchInput& input, const ChipSpec& chip) : in_(input) {
    a_bits_ = BitsOf(input.a_dtype);
    b_bits_ = BitsOf(input.b_dtype);
    c_bits_ = BitsOf(input.c_dtype);
    has_bias_ = input.bias_dtype.has_value();
    bias_bytes_ = has_bias_ ? BitsOf(*input.bias_dtype) / 8 : 4;  // unset type: fp32
    a_fp32_ = input.a_dtype == DataType::kFloat32;
    b_fp32_ = input.b_dtype == DataType::kFloat32;
    a_nz_ = input.a_format == Format::kFractalNz;
    b_nz_ = input.b_format == Format::kFractalNz;
    c_nz_ = input.c_format == Format::kFractalNz;
    reduce_ = kC0Bytes * 8 / a_bits_;
    m_ = static_cast<int32_t>(input.m);
    n_ = static_cast<int32_t>(input.n);
    k_ = static_cast<int32_t>(input.k);
    cores_ = static_cast<int32_t>(chip.aic_num);
    SetBufferSpace(static_cast<int32_t>(chip.l1_bytes), static_cast<int32_t>(chip.l0c_bytes),
                   input.keep_default_ub ? -1 : static_cast<int32_t>(chip.ub_bytes));
  }

  absl::StatusOr<CubeTiling> Run();

 private:
  // SetBufferSpace (matmul_tiling_base.cpp): all-or-nothing when a size is
  // out of range, because it returns before storing anything; CANN ignores
  // the return value.
  void SetBufferSpace(int32_t l1, int32_t l0c, int32_t ub) {
    if (l1 < -1 || l1 > l1_) return;
    if (l0c < -1 || l0c > l0c_) return;
    if (ub < -1 || ub > ub_) return;
    if (l1 != -1) l1_ = l1 - l1 % kBufferAlign;
    if (l0c != -1) l0c_ = l0c - l0c % kBufferAlign;
    if (ub != -1) ub_ = ub - ub % kBufferAlign;
  }

  void SplitCores();
  void SplitCoresByFactors();
  bool SplitMiniShape();
  // Core-split candidates, ascending: up to 64 without a heap allocation.
  using Factors = absl::InlinedVector<int32_t, 64>;
  Factors SplitCandidates(int32_t dim, int32_t mapped, const int32_t (&extra)[2]) const;
  // A split count of one dimension and what a split reads of it: the
  // per-core extent in fractals and the big-package rule's view of it.
  struct SplitSide {
    int32_t factor = 1;
    int32_t extent = 1;
    int32_t extent64 = 1;  // min(extent, 64): the side of a minimal L0 block
    int32_t extent16 = 1;  // min(extent, 16): N of the first minimal block
    // The extent keeps 16 fractals where the rule asks for them (not a
    // contiguous side of 16 fractals or more cut below 16).
    bool keeps = true;
    // The side's condition for a big package (16 fractals or more where
    // the side is contiguous).
    bool big = true;
  };
  SplitSide MSide(int32_t factor) const;
  SplitSide NSide(int32_t factor) const;
  // The core-split search's running best (DimCalculator). Its load is read
  // only when a split ties it in core use, so it is computed then (unless a
  // load can fault: then every one is computed, as CANN computes it).
  struct SplitChoice {
    int32_t m_factor = 1;
    int32_t n_factor = 1;
    int32_t m_extent = 1;
    int32_t n_extent = 1;
    int32_t load = INT_MAX;
    bool load_known = true;
    int32_t core_use = 1;
    int32_t loops = INT_MAX;
    bool big_package = false;
  };
  SplitChoice BestSplit(const Factors& m_factors, const Factors& n_factors) const;
  void TryCoreFactors(const SplitSide& m, const SplitSide& n, SplitChoice& best) const;
  int32_t LoadSizeOfSplit(int32_t m_factor, int32_t n_factor, int32_t a_size, int32_t b_size,
                          int32_t k_bytes) const;
  int32_t LoadBeyondL1(int32_t m_factor, int32_t n_factor, int32_t a_size, int32_t b_size,
                       int32_t m0, int32_t n0, int32_t k_bytes) const;

  // CheckK0Align: an fp32 NZ operand whose K is the inner axis in NZ
  // fractals (A transposed, B not) loads K in pairs of fractals.
  bool NeedsEvenK() const {
    return (a_fp32_ && a_nz_ && in_.trans_a) || (b_fp32_ && b_nz_ && !in_.trans_b);
  }

  void SearchL0();
  void SearchL0Candidates(int32_t major_axis, L0Block& best);
  void ConsiderL0(int32_t k0, int32_t major, int32_t minor);
  int32_t L0LoadSize() const;
  bool L0FitsL1() const;

  void SearchL1();
  int32_t L1Bytes(const L1Plan& plan) const;
  int32_t MaxL1Len(int32_t bytes, const L1Plan& plan, int32_t align, int axis) const;
  void KAlign(int32_t& ka, int32_t& kb) const;
  void BothFullLoad(L1Candidate& out);
  void AFullLoad(L1Candidate& out);
  void BFullLoad(L1Candidate& out);
  void NeitherFullLoad(L1Candidate& out);
  bool NeitherFullLoadFaults();
  void NeitherDoubleBuffer();
  void NeitherK();
  void NeitherKSideBySide(int axis);
  void NeitherKTransposedA();
  void NeitherMN();

  absl::StatusOr<CubeTiling> Finish();

  const CubeTilingSearchInput& in_;
  int32_t a_bits_ = 16;
  int32_t b_bits_ = 16;
  int32_t c_bits_ = 16;
  int32_t bias_bytes_ = 4;
  bool has_bias_ = false;
  bool a_fp32_ = false;
  bool b_fp32_ = false;
  bool a_nz_ = false;  // A and C are ND for BatchMatMulV3; the rules are kept
  bool b_nz_ = false;
  bool c_nz_ = false;
  int32_t reduce_ = 16;  // elements of K per fractal row
  int32_t m_ = 0;
  int32_t n_ = 0;
  int32_t k_ = 0;
  int32_t cores_ = 1;
  int32_t l1_ = kDefaultL1;
  int32_t l0c_ = kDefaultL0c;
  int32_t ub_ = kDefaultUb;
  int32_t l0a_ = kDefaultL0a;
  int32_t l0b_ = kDefaultL0b;
  int32_t bt_ = kDefaultBiasTable;
  int32_t db_l0a_ = kDbOn;
  int32_t db_l0b_ = kDbOn;

  // Fractal counts of the problem (MatmulRunParas).
  int32_t m32_ = 1;
  int32_t n32_ = 1;
  int32_t k32_ = 1;
  int32_t m_mapped_ = 1;
  int32_t n_mapped_ = 1;
  int32_t k_mapped_ = 1;

  CoreSplit core_;
  // Whether CalcLoadSize can divide by zero on some split (see
  // SplitCoresByFactors()).
  bool split_load_may_fault_ = true;
  // The divisors of the core count up to 64 (bit i - 1: i).
  uint64_t core_divisors_ = 0;
  // Bytes of the whole K of one fractal column (kBytes of GetDimsHelper).
  int32_t k_bytes_ = 0;

  L0Block l0_;
  // Whether the per-core A or B fits L0 whole (set before the L0 search).
  bool core_fits_l0_ = false;
  L1Plan l1_plan_;
  // Set when CANN's search would divide by zero (the host process dies with
  // SIGFPE there); the search then reports CANN's fault instead of a plan.
  // `fault_site_` names the first such division.
  mutable bool divides_by_zero_ = false;
  mutable const char* fault_site_ = "";

  void NoteFault(const char* site) const {
    if (!divides_by_zero_) fault_site_ = site;
    divides_by_zero_ = true;
  }
  int32_t Quot(int32_t a, int32_t b, const char* site = "an L1 depth of the L1 search") const {
    if (b == 0) {
      NoteFault(site);
      return 0;
    }
    return WrapQuot32(a, b);
  }
  int32_t Rem(int32_t a, int32_t b) const {
    if (b == 0) {
      NoteFault("the K-slice nesting of the L1 search");
      return 0;
    }
    return b == -1 ? 0 : a % b;
  }
  // CeilDiv32 by a product whose zero test CANN's compiled code has dropped:
  // a divisor that wraps to zero faults there.
  int32_t CeilQuot(int32_t a, int32_t b, const char* site) const {
    if (b == 0) {
      NoteFault(site);
      return 0;
    }
    return CeilDiv32(a, b);
  }
};

absl::Status Fail(const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("TCubeTiling search failed: ", why));
}

// --- Core split (GetDims and helpers) ----------------------------------------

// PreProcessMiniShape: a problem that fits one core's L0 in every dimension
// is spread over 32-fractal pieces only.
bool CubeSearch::SplitMiniShape() {
  const int32_t mini_l0c = l0c_ / kMinFractal / kFp32Bytes;
  const int32_t mini_l0ab = l0a_ / kFractalBytes;
  if (!(n32_ * m32_ <= cores_ && m32_ * k32_ <= mini_l0ab && n32_ * k32_ <= mini_l0ab &&
        m32_ * n32_ <= mini_l0c)) {
    return false;
  }
  core_.n_dim = n32_ <= kMinMte1Load ? 1 : n_mapped_ / kMinMte1Load;
  core_.m_dim = m32_ <= kMinMte1Load ? 1 : m_mapped_ / kMinMte1Load;
  core_.k_dim = 1;
  core_.batch = 1;
  core_.n = core_.n_dim == 1 ? n32_ : CeilDiv32(n_mapped_, core_.n_dim);
  core_.m = core_.m_dim == 1 ? m32_ : CeilDiv32(m_mapped_, core_.m_dim);
  core_.k = k32_;
  core_.batch_dim = 1;
  core_.n_dim = CeilDiv32(n32_, core_.n);
  core_.m_dim = CeilDiv32(m32_, core_.m);
  core_.k_dim = CeilDiv32(k32_, core_.k);
  return true;
}

// CalcLoadSize: the GM traffic of an (m, n) core split whose per-core
// extents are `a_size` (M) and `b_size` (N) fractals, by which of A and B (or
// their K slices) L1 can hold. Most splits of a problem whose K fits L1
// return at the first test, which is inline; the rest is LoadBeyondL1().
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int32_t CubeSearch::LoadSizeOfSplit(
    int32_t m_factor, int32_t n_factor, int32_t a_size, int32_t b_size, int32_t k_bytes) const {
  const int32_t n0 = std::min(16, b_size);
  const int32_t m0 = std::min(16, n0 == 0 ? 0 : std::min(a_size, QuotientOf128(n0)));
  const int64_t l1 = l1_;
  const bool both = static_cast<int64_t>(a_size + b_size) * k_bytes <= l1;
  const bool a_full_b_k = static_cast<int64_t>(a_size + n0 * 2) * k_bytes <= l1;
  const bool b_full_a_k = static_cast<int64_t>(b_size + m0 * 2) * k_bytes <= l1;
  if (a_full_b_k || b_full_a_k || both) return m32_ * n_factor + n32_ * m_factor;
  return LoadBeyondL1(m_factor, n_factor, a_size, b_size, m0, n0, k_bytes);
}

// CalcLoadSize when neither operand's per-core block (with a minimal block of
// the other) fits L1 with its whole K.
int32_t CubeSearch::LoadBeyondL1(int32_t m_factor, int32_t n_factor, int32_t a_size, int32_t b_size,
                                 int32_t m0, int32_t n0, int32_t k_bytes) const {
  const int32_t ori_a = m32_;
  const int32_t ori_b = n32_;
  int32_t total = INT_MAX;
  auto offer = [&](int32_t a, int32_t b) { total = std::min(total, a + b); };
  const int32_t k0 =
      (m0 != 0 && n0 != 0) ? std::min(std::min(QuotientOf64(m0), QuotientOf64(n0)), k32_) : k32_;
  const int32_t fractal_k0 = k0 * kFractalBytes;
  if ((n0 * k_bytes + m0 * fractal_k0) * 2 > l1_ && (m0 * k_bytes + n0 * fractal_k0) * 2 > l1_) {
    offer(ori_a * CeilDiv32(n32_, n0), ori_b * CeilDiv32(m32_, m0));
    return total;
  }
  if ((m0 + n0) * k_bytes * 2 <= l1_) {
    // kBytes * 2 * m0 passes 2^31 when K is long (k around 2^22 and more)
    // and can wrap to exactly zero.
    constexpr const char* kSite =
        "CalcLoadSize of the core split: kBytes * 2 * m0 wraps to 0 in 32 bits";
    const int32_t m1 = CeilQuot(l1_ - n0 * k_bytes * 2, k_bytes * 2 * m0, kSite) * m0;
    const int32_t n1 = CeilQuot(l1_ - m0 * k_bytes * 2, k_bytes * 2 * n0, kSite) * n0;
    const int32_t m_first = ori_a * n_factor + ori_b * CeilDiv32(m32_, m1);
    const int32_t n_first = ori_b * m_factor + ori_a * CeilDiv32(n32_, n1);
    if (m_first < n_first) {
      offer(ori_a * n_factor, ori_b * CeilDiv32(m32_, m1));
    } else {
      offer(ori_a * CeilDiv32(n32_, n1), ori_b * m_factor);
    }
    return total;
  }
  if (a_size * k_bytes + n0 * fractal_k0 * 2 <= l1_ ||
      m0 * k_bytes * 2 + n0 * fractal_k0 * 2 <= l1_) {
    // An improvement also replaces the sizes the next test reads
    // (UpdateDimCalculator).
    const int32_t a = ori_a * n_factor;
    const int32_t b = ori_b * CeilDiv32(m32_, m0);
    if (a + b < total) {
      a_size = a;
      b_size = b;
    }
    offer(a, b);
  }
  if (b_size * k_bytes + m0 * fractal_k0 * 2 <= l1_ ||
      n0 * k_bytes * 2 + m0 * fractal_k0 * 2 <= l1_) {
    offer(ori_b * m_factor, ori_a * CeilDiv32(n32_, n0));
  }
  return total;
}

// GetDimsHelper for one (m, n) core factor pair (batch and K are not split):
// replaces `best` when the pair is better.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CubeSearch::TryCoreFactors(const SplitSide& m,
                                                                    const SplitSide& n,
                                                                    SplitChoice& best) const {
  const int32_t k_bytes = k_bytes_;
  // The split's GM traffic decides only a tie in core use, so it is
  // computed then, unless computing it can fault (split_load_may_fault_),
  // which every split's computation must then find.
  int32_t load = 0;
  if (split_load_may_fault_) {
    load = LoadSizeOfSplit(m.factor, n.factor, m.extent, n.extent, k_bytes);
  }

  // The "big package" rule prefers splits that keep 16 fractals on the
  // contiguous side of each non-transposed operand.
  int flag_kind = 0;
  if (!(in_.trans_b && !in_.trans_a)) {
    const bool keeps = m.keeps && n.keeps;
    if (!best.big_package && keeps) {
      flag_kind = 2;
    } else if (best.big_package && !keeps) {
      flag_kind = 1;
    }
  }
  if (flag_kind == 1) return;  // never replaces the best split
  // LoopNumFromSingleCoreToL0: L0 loops of a minimal block.
  int32_t n0 = n.extent16;
  int32_t m0 = n0 == 0 ? 0 : std::min(m.extent64, QuotientOf128(n0));
  n0 = m0 == 0 ? 0 : std::min(n.extent64, QuotientOf128(m0));
  m0 = n0 == 0 ? 0 : std::min(m.extent64, QuotientOf128(n0));
  const int32_t k0 =
      (m0 != 0 && n0 != 0) ? std::min(std::min(QuotientOf64(m0), QuotientOf64(n0)), k32_) : k32_;
  const int32_t loops = BlocksOf(m.extent, m0) * BlocksOf(n.extent, n0) * BlocksOf(k32_, k0);

  const int32_t used = m.factor * n.factor;
  const bool by_cores =
      flag_kind == 0 && (loops < best.loops || (used > best.core_use && loops == best.loops));
  bool replaces = flag_kind == 2 || by_cores;
  bool load_known = split_load_may_fault_;
  if (!replaces) {
    if (used != best.core_use) return;  // the loads decide nothing
    // A tie in core use: the loads decide (by_load, by_n_dim).
    if (!best.load_known) {
      best.load =
          LoadSizeOfSplit(best.m_factor, best.n_factor, best.m_extent, best.n_extent, k_bytes);
      best.load_known = true;
    }
    if (!load_known) {
      load = LoadSizeOfSplit(m.factor, n.factor, m.extent, n.extent, k_bytes);
      load_known = true;
    }
    replaces = load < best.load ||
               (load == best.load && best.n_factor * best.m_factor < m.factor * n.factor);
  }
  if (replaces) {
    best.load = load;
    best.load_known = load_known;
    best.n_factor = n.factor;
    best.m_factor = m.factor;
    best.m_extent = m.extent;
    best.n_extent = n.extent;
    best.core_use = used;
    best.loops = loops;
    best.big_package = n.big && m.big && used > 1;
  }
}

CubeSearch::SplitSide CubeSearch::MSide(int32_t factor) const {
  SplitSide side;
  side.factor = factor;
  side.extent = CeilDiv32(m32_, factor);
  side.extent64 = std::min(side.extent, 64);
  side.extent16 = std::min(side.extent, 16);
  side.keeps = !(in_.trans_a && m32_ >= 16 && side.extent < 16);
  side.big = in_.trans_a ? side.extent >= 16 : true;
  return side;
}

CubeSearch::SplitSide CubeSearch::NSide(int32_t factor) const {
  SplitSide side;
  side.factor = factor;
  side.extent = CeilDiv32(n32_, factor);
  side.extent64 = std::min(side.extent, 64);
  side.extent16 = std::min(side.extent, 16);
  side.keeps = !(!in_.trans_b && n32_ >= 16 && side.extent < 16);
  side.big = !in_.trans_b ? side.extent >= 16 : true;
  return side;
}

// GetDims's walk over the (n, m) pairs of candidates whose product is at
// most the core count, n ascending, then m ascending (both lists ascend):
// the best split.
CubeSearch::SplitChoice CubeSearch::BestSplit(const Factors& m_factors,
                                              const Factors& n_factors) const {
  SplitChoice best;
  // Every split replaces the best when none can keep the "big package" and
  // every one keeps the contiguous sides: with B not transposed and N below
  // 16 fractals (or A transposed and M below 16), no per-core N (M) reaches
  // 16, and the other side's rule holds for every split. The best is then
  // the last split of the walk. (Unless a split's load can fault: each one
  // is computed then, as CANN computes it.)
  const bool small_n_side = !in_.trans_b && n32_ < 16 && (!in_.trans_a || m32_ < 16);
  const bool small_m_side = in_.trans_a && m32_ < 16 && (in_.trans_b || n32_ < 16);
  if ((small_n_side || small_m_side) && !split_load_may_fault_) {
    for (const int32_t n_factor : n_factors) {
      if (m_factors.empty() || n_factor * m_factors.front() > cores_) break;
      best.n_factor = n_factor;
      for (const int32_t m_factor : m_factors) {
        if (n_factor * m_factor > cores_) break;
        best.m_factor = m_factor;
      }
    }
    return best;
  }
  // The per-core extent of each count is computed once, not per pair.
  absl::InlinedVector<SplitSide, 64> m_sides;
  for (const int32_t m_factor : m_factors) m_sides.push_back(MSide(m_factor));
  for (const int32_t n_factor : n_factors) {
    const SplitSide n_side = NSide(n_factor);
    // Once the best split is a big package it stays one (a split replacing
    // it keeps the contiguous sides, and more than one core), and a split
    // that does not keep them never replaces it. With B not transposed a
    // per-core N below 16 fractals (N of 16 fractals or more) does not keep,
    // and the per-core N only shrinks along the walk: no later split counts.
    // With A transposed the same holds for M within one n.
    if (best.big_package && !n_side.keeps && !split_load_may_fault_) break;
    for (const SplitSide& m_side : m_sides) {
      if (n_factor * m_side.factor > cores_) break;
      if (best.big_package && !m_side.keeps && !split_load_may_fault_) break;
      TryCoreFactors(m_side, n_side, best);
    }
  }
  return best;
}

// GetBlockFactors and AddOptimalFactors for one dimension: the split counts
// up to min(cores, dim) that divide the dim (in fractals), its mapped extent
// or the core count, and the two `extra` counts, ascending and without
// repeats. CANN's sorted lists also hold counts outside [1, cores], which
// never form a split (a pair whose product is not in [1, cores] is skipped,
// and the walk stops at the first m past the core count), so they are left
// out. The mapped extent is a power of two (MapShape), whose divisors are
// the powers of two up to it, unless the dim is below 16 and maps to itself.
//
// Counts up to 64 (every count of a chip with up to 64 cores) are kept as a
// bit set: the divisors of the core count and the powers of two are set
// first, and only the other counts are tested against the dim.
CubeSearch::Factors CubeSearch::SplitCandidates(int32_t dim, int32_t mapped,
                                                const int32_t (&extra)[2]) const {
  const int32_t last_divisor = std::min(cores_, dim);
  const bool mapped_power_of_two = mapped > 0 && (mapped & (mapped - 1)) == 0;
  const auto bit = [](int32_t count) { return uint64_t{1} << (count - 1); };
  uint64_t in_mask = 0;  // bit i - 1: count i
  if (last_divisor >= 1) {
    const int32_t mask_last = std::min(last_divisor, 64);
    const uint64_t range = mask_last == 64 ? ~uint64_t{0} : bit(mask_last + 1) - 1;
    in_mask = core_divisors_ & range;
    if (mapped_power_of_two) {
      // Bits 0, 1, 3, 7, ...: the powers of two up to the mapped extent.
      for (int32_t power = 1; power <= mask_last && power <= mapped; power *= 2) {
        in_mask |= bit(power);
      }
    }
    uint64_t rest = range & ~in_mask;
    if (mapped_power_of_two && (dim & (dim - 1)) == 0) {
      // A power-of-two dim: its divisors are the powers of two, set above
      // (the mapped extent is at least the dim, or 2048).
      rest = 0;
    } else if (mapped_power_of_two) {
      // The counts left divide the dim or nothing: strike the multiples of
      // the primes that do not divide it.
      for (size_t i = 0; i < kSmallPrimes.size() && kSmallPrimes[i] <= mask_last; ++i) {
        if ((rest & kMultiplesOfSmallPrimes[i]) != 0 && !Divides(dim, kSmallPrimes[i])) {
          rest &= ~kMultiplesOfSmallPrimes[i];
        }
      }
    }
    for (; rest != 0; rest &= rest - 1) {
      const int32_t count = __builtin_ctzll(rest) + 1;
      if ((!mapped_power_of_two && Divides(mapped, count)) || Divides(dim, count)) {
        in_mask |= bit(count);
      }
    }
  }
  for (const int32_t count : extra) {
    if (count >= 1 && count <= std::min(cores_, 64)) in_mask |= bit(count);
  }
  Factors out;
  for (uint64_t rest = in_mask; rest != 0; rest &= rest - 1) {
    out.push_back(__builtin_ctzll(rest) + 1);
  }
  // Counts above 64 (only with more than 64 cores).
  int32_t last = last_divisor;
  for (const int32_t count : extra) {
    if (count <= cores_) last = std::max(last, count);
  }
  for (int32_t i = 65; i <= last; ++i) {
    const bool divides_mapped =
        mapped_power_of_two ? (i & (i - 1)) == 0 && i <= mapped : Divides(mapped, i);
    if (i == extra[0] || i == extra[1] ||
        (i <= last_divisor && (divides_mapped || Divides(cores_, i) || Divides(dim, i)))) {
      out.push_back(i);
    }
  }
  return out;
}

// GetDims without split K and with one batch.
void CubeSearch::SplitCoresByFactors() {
  // AddOptimalFactors: the split of the cores in the ratio of M to N adds
  // two candidates to each list.
  int32_t m_extra[2] = {0, 0};
  int32_t n_extra[2] = {0, 0};
  if (cores_ > 1) {
    const float point = static_cast<float>(std::sqrt(
        (static_cast<float>(m32_) + 0.0f) / static_cast<float>(n32_) * static_cast<float>(cores_)));
    const int32_t m_dim = static_cast<int32_t>(std::ceil(point));
    const int32_t n_dim = static_cast<int32_t>(std::ceil(static_cast<float>(cores_) / point));
    m_extra[0] = m_dim;
    m_extra[1] = n_dim == 0 ? 1 : cores_ / n_dim;
    n_extra[0] = n_dim;
    n_extra[1] = m_dim == 0 ? 1 : cores_ / m_dim;
  }
  // The divisors of the core count up to 64, as a bit set (bit i - 1: i),
  // found in pairs (i, cores / i) up to the square root.
  core_divisors_ = 0;
  for (int32_t i = 1; static_cast<int64_t>(i) * i <= cores_; ++i) {
    if (!Divides(cores_, i)) continue;
    const int32_t pair = Quotient(cores_, i);
    if (i <= 64) core_divisors_ |= uint64_t{1} << (i - 1);
    if (pair <= 64) core_divisors_ |= uint64_t{1} << (pair - 1);
  }
  // CalcLoadSize divides by kBytes * 2 * m0 and kBytes * 2 * n0 in 32 bits,
  // where kBytes * 2 = k32 * 1024 (mod 2^32) and m0, n0 are in [1, 16] (the
  // per-core extents are at least one fractal): such a product wraps to 0
  // only when kBytes * 2 is 0 or has at least 28 trailing zero bits (a power
  // of two up to 16 adds at most 4).
  k_bytes_ = k32_ * kC0 * kC0 * 2;
  const uint32_t k_bytes_twice = static_cast<uint32_t>(k32_) * 1024U;
  split_load_may_fault_ = k_bytes_twice == 0 || __builtin_ctz(k_bytes_twice) >= 28;
  const Factors m_factors = SplitCandidates(m32_, m_mapped_, m_extra);
  const Factors n_factors = SplitCandidates(n32_, n_mapped_, n_extra);
  const SplitChoice best = BestSplit(m_factors, n_factors);
  auto invalid = [&](int32_t used) { return used > cores_ || used <= 0; };
  core_.batch = 1;
  core_.n = CeilDiv32(n32_, best.n_factor);
  core_.m = CeilDiv32(m32_, best.m_factor);
  core_.k = k32_;
  // Factor split: move the per-core extents to ones with enough divisors
  // when the core count allows.
  const int32_t n = BestSingleCore(n32_, n_mapped_, best.n_factor, false);
  const int32_t m = BestSingleCore(m32_, m_mapped_, best.m_factor, false);
  const int32_t k = BestSingleCore(k32_, k_mapped_, 1, true);
  const int32_t need = CeilDiv32(n32_, n) * CeilDiv32(m32_, m) * CeilDiv32(k32_, k);
  if (!invalid(need)) {
    core_.n = n;
    core_.m = m;
    core_.k = k;
  }
  core_.batch_dim = 1;
  core_.n_dim = std::min(CeilDiv32(n32_, core_.n), cores_);
  core_.m_dim = std::min(CeilDiv32(m32_, core_.m), cores_);
  core_.k_dim = 1;
}

void CubeSearch::SplitCores() {
  if (cores_ == 1) {
    core_.m = BestSingleCore(m32_, m_mapped_, 1, false);
    core_.k = BestSingleCore(k32_, k_mapped_, 1, false);
    core_.n = BestSingleCore(n32_, n_mapped_, 1, false);
    return;
  }
  // NonFactorMap without split K: K keeps its extent.
  k_mapped_ = k32_;
  if (SplitMiniShape()) return;
  SplitCoresByFactors();
}

// --- L0 block (GetL0Factors and helpers) --------------------------------------

int32_t CubeSearch::L0LoadSize() const {
  if (core_fits_l0_) return core_.m + core_.n;
  if (l0_.k >= core_.k) {
    return std::min(core_.n + CeilDiv32(core_.n, l0_.n) * core_.m,
                    core_.m + CeilDiv32(core_.m, l0_.m) * core_.n);
  }
  return CeilDiv32(core_.m, l0_.m) * core_.n + CeilDiv32(core_.n, l0_.n) * core_.m;
}

// CheckBaseMNKL1Size: the L0 blocks of A and B (and, under the 910B rules,
// a bias row) fit L1 once.
bool CubeSearch::L0FitsL1() const {
  const int32_t a = l0_.m * l0_.k * kFractalBytes;
  const int32_t b = l0_.n * l0_.k * kFractalBytes;
  const int32_t bias = has_bias_ ? l0_.n * kC0 * bias_bytes_ : 0;
  return a + b + bias <= l1_;
}

// GetFinalMkn: keeps (major, minor, k0) when it loads less or computes more
// per load than the best so far.
void CubeSearch::ConsiderL0(int32_t k0, int32_t major, int32_t minor) {
  if (k0 == 0) return;
  if (l0_.major_axis == 0) {
    l0_.m = major;
    l0_.n = minor;
  } else {
    l0_.m = minor;
    l0_.n = major;
  }
  l0_.k = k0;
  const int32_t mte1 = std::max(6, l0_.m * l0_.k * kFractalBytes / 256) +
                       std::max(6, l0_.k * l0_.n * kFractalBytes / 128);
  const int32_t mad = l0_.m * l0_.k * l0_.n;
  // The conditions every kept block meets, whatever it is compared on: once
  // a kept block hides its MTE1 cycles behind its mmads, so must the next;
  // it fits L1 (CheckBaseMNKL1Size); N spans a reduce unit where the core's
  // does; K is even where it loads in pairs. A block that fails one is not
  // compared at all.
  const bool mte1_hidden = (mte1 < mad && l0_.update_using_mte1) || !l0_.update_using_mte1;
  const int32_t last_reduce = (a_fp32_ || b_fp32_) ? 8 : 16;
  const bool n_wide_enough = !(core_.n >= last_reduce && l0_.n < last_reduce);
  const bool k_even = !NeedsEvenK() || l0_.k % 2 == 0;
  if (!(mte1_hidden && L0FitsL1() && n_wide_enough && k_even)) return;

  const int32_t load = L0LoadSize();
  const int32_t mte1_loop = (l0_.n != 1 ? l0_.k : 1) + (l0_.k != 1 ? l0_.m : 1);
  // L0C use of the block, as CANN computes it (read only on a tie in load).
  const auto l0c_use = [this] {
    return static_cast<float>(l0_.m * l0_.n * l0_.db_c * kMinFractal * kFp32Bytes * 1.0 / l0c_);
  };
  const bool first = l0_.final_m == 0;
  const bool less_load = load < l0_.final_load_size || (mte1 < mad && !l0_.update_using_mte1);
  const bool more_mad =
      load == l0_.final_load_size && mad > l0_.final_mad &&
      static_cast<float>(mad) * l0c_use() >= static_cast<float>(l0_.final_mad) * l0_.final_l0c_use;
  const bool fewer_loops =
      mad == l0_.final_mad && load == l0_.final_load_size && mte1_loop < l0_.final_mte1_loop;
  if (first || less_load || more_mad || fewer_loops) {
    l0_.final_m = l0_.m;
    l0_.final_k = l0_.k;
    l0_.final_n = l0_.n;
    l0_.final_load_size = load;
    l0_.final_l0c_use = l0c_use();
    l0_.final_mad = mad;
    l0_.final_mte1_cycles = mte1;
    l0_.final_mte1_loop = mte1_loop;
    l0_.update_using_mte1 = l0_.update_using_mte1 || mte1 < mad;
  }
}

// GetL0FactorsCand for one major axis; `best` receives the result when the
// pass found one.
void CubeSearch::SearchL0Candidates(int32_t major_axis, L0Block& best) {
  // The combination with L0C double buffering off (the template's setting):
  // dbL0A, dbL0B, dbL0C = 2, 2, 1; L0A/L0B halves; the whole L0C.
  const int32_t mn_max = l0c_ / (kC0 * kC0) / kFp32Bytes;
  const int32_t bias_n_max = bt_ / kC0 / kFp32Bytes;
  const int32_t left = std::min(l1_, l0a_ / db_l0a_);
  const int32_t right = std::min(l1_, l0b_ / db_l0b_);
  l0_.final_m = l0_.final_k = l0_.final_n = 0;
  l0_.final_load_size = INT_MAX;
  l0_.final_l0c_use = 0;
  l0_.final_mad = 0;
  l0_.final_mte1_loop = INT_MAX;
  l0_.final_mte1_cycles = 0;
  l0_.update_using_mte1 = false;
  l0_.db_a = db_l0a_;
  l0_.db_b = db_l0b_;
  l0_.db_c = 1;
  l0_.max_mk = left / kC0 / kC0Bytes;
  l0_.max_nk = right / kC0 / kC0Bytes;
  l0_.max_mn = mn_max;
  l0_.major_axis = major_axis;
  l0_.max_axis_num = 64;
  l0_.max_axis_point = std::min(11, 64);
  l0_.max_n = has_bias_ ? bias_n_max : 64;

  // An 8-bit B loads N in pairs of fractals (L0B_ALIGN_SIZE): N and its
  // candidate factors round up to even (GetL0bAlign).
  const int32_t n_align = b_bits_ == 8 ? 2 : 1;
  const int32_t n_dim = Align32(core_.n, n_align);
  const auto align_n_side = [n_align](FourFactors& factors) {
    if (n_align == 1) return;
    for (int32_t& f : factors.values) f = Align32(f, n_align);
  };
  const int32_t major_dim = major_axis == 0 ? core_.m : n_dim;
  const int32_t minor_dim = major_axis == 0 ? n_dim : core_.m;
  const int32_t major_k = major_axis == 0 ? l0_.max_mk : l0_.max_nk;
  const int32_t minor_k = major_axis == 0 ? l0_.max_nk : l0_.max_mk;
  const int32_t max_n = l0_.max_n;
  // With a bias, the N side is limited by the bias table.
  const bool bias_on_major = major_axis != 0 && has_bias_;
  const bool bias_on_minor = major_axis == 0 && has_bias_;
  FourFactors majors;
  const int32_t point = bias_on_major ? std::min(l0_.max_axis_point, max_n) : l0_.max_axis_point;
  const int32_t limit = bias_on_major ? std::min(l0_.max_axis_num, max_n) : l0_.max_axis_num;
  majors.Fill(point, major_dim, limit, limit);
  if (major_axis != 0) align_n_side(majors);
  majors.SortDescendingUnique();
  for (const int32_t major : majors) {
    if (major == 0 || major > l0_.max_mn || major > major_k || major > major_dim) continue;
    const int32_t minor_max = std::min(Quotient(l0_.max_mn, major), minor_k);
    FourFactors minors;
    const int32_t minor_cap = bias_on_minor ? std::min(minor_max, max_n) : minor_max;
    minors.Fill(minor_cap, minor_dim, minor_cap, minor_cap);
    if (major_axis == 0) align_n_side(minors);
    minors.SortDescendingUnique();
    for (const int32_t minor : minors) {
      if (minor == 0 || minor * major > l0_.max_mn || minor > minor_k || minor > minor_dim ||
          minor > major_k) {
        continue;
      }
      const int32_t n_side = major_axis != 0 ? major : minor;
      if (n_side > kMaxN0WithBias && has_bias_) continue;
      const int32_t k0_max = std::min(Quotient(major_k, major), Quotient(minor_k, minor));
      FourFactors k0s;
      k0s.Fill(k0_max, core_.k, k0_max, l0_.max_axis_num);
      k0s.SortDescendingUnique();
      for (int32_t k0 : k0s) {
        if (k0 == 0 || minor * k0 > minor_k || major * k0 > major_k) continue;
        if (NeedsEvenK() && k0 == 1) k0 = 2;
        if (a_fp32_) {
          // fp32 blocks that must be K-aligned to two fractals take more L0.
          const int32_t m_l0 = major_axis != 0 ? minor : major;
          const int32_t n_l0 = major_axis != 0 ? major : minor;
          const int32_t a_bytes =
              (in_.trans_a ? Align32(k0, 2) : k0) * kC0Bytes * m_l0 * kC0 * kDbOn;
          const int32_t b_bytes =
              (in_.trans_a || !in_.trans_b ? Align32(k0, 2) : k0) * kC0Bytes * n_l0 * kC0 * kDbOn;
          if (a_bytes > l0a_ || b_bytes > l0b_) continue;
        } else if (a_bits_ == 8) {
          // 8-bit blocks: the side that is not K-major in L0 pads its
          // fractals to pairs.
          const int32_t m_l0 = major_axis != 0 ? minor : major;
          const int32_t n_l0 = major_axis != 0 ? major : minor;
          const int32_t a_bytes =
              k0 * kC0Bytes * (in_.trans_a ? Align32(m_l0, 2) : m_l0) * kC0 * kDbOn;
          const int32_t b_bytes =
              k0 * kC0Bytes * (in_.trans_b ? n_l0 : Align32(n_l0, 2)) * kC0 * kDbOn;
          if (a_bytes > l0a_ || b_bytes > l0b_) continue;
        }
        ConsiderL0(k0, major, minor);
      }
    }
  }
  if (l0_.final_m != 0 && l0_.final_k != 0 && l0_.final_n != 0) {
    best.final_m = l0_.final_m;
    best.final_k = l0_.final_k;
    best.final_n = l0_.final_n;
  }
}

void CubeSearch::SearchL0() {
  l0_.bias_bytes = has_bias_ ? bias_bytes_ : 0;
  // L0LoadSize: the per-core A or B fits L0 whole.
  core_fits_l0_ = static_cast<int64_t>(core_.m * core_.k) * kFractalBytes <= l0a_ ||
                  static_cast<int64_t>(core_.n * core_.k) * kFractalBytes <= l0b_;
  L0Block best;
  // CANN searches M-major, then N-major, and the later pass wins when it
  // finds a block. Each pass starts from a reset state and leaves only its
  // block (the L1 search reads the block, the buffer counts and the bias
  // size of l0_, which do not depend on the passes), so the N-major pass
  // runs first and the M-major one only when it found nothing.
  SearchL0Candidates(1, best);
  if (best.final_m == 0) SearchL0Candidates(0, best);
  l0_.db_c = kDbOff;
  l0_.db_a = db_l0a_;
  l0_.db_b = db_l0b_;
  l0_.m = best.final_m;
  l0_.k = best.final_k;
  l0_.n = best.final_n;
}

// --- L1 plan (GetL1Factors and helpers) ---------------------------------------

// GetABL1KAlignValue: fp32 data aligns the K slices of the side that is
// K-major in L1 to two fractals.
void CubeSearch::KAlign(int32_t& ka, int32_t& kb) const {
  ka = 1;
  kb = 1;
  if (a_fp32_ || b_fp32_) {
    ka = in_.trans_a ? 2 : 1;
    kb = (in_.trans_a || !in_.trans_b) ? 2 : 1;
  }
}

// GetL1Size: L1 bytes of a plan; 0 when a product is not positive or
// overflows.
int32_t CubeSearch::L1Bytes(const L1Plan& p) const {
  const int32_t a_const = kFractalBytes * p.db_a * (a_fp32_ ? 2 : 1);
  const int32_t b_const = kFractalBytes * p.db_b * (b_fp32_ ? 2 : 1);
  const int32_t bias_const = p.bias_times * kC0 * p.db_b * l0_.bias_bytes;
  int32_t ka = 1;
  int32_t kb = 1;
  KAlign(ka, kb);
  const int32_t a = CheckedProduct(p.m_a, l0_.m, a_const, Align32(p.k_a, ka));
  if (a == 0) return 0;
  const int32_t b = CheckedProduct(p.n_b, l0_.n, b_const, Align32(p.k_b, kb));
  if (b == 0) return 0;
  int32_t bias = 0;
  if (p.bias_times > 0) {
    bias = CheckedProduct(p.n_b, l0_.n, bias_const);
    if (bias == 0) return 0;
  }
  const int64_t total = static_cast<int64_t>(a) + b + bias;
  return total > INT_MAX ? INT_MAX : static_cast<int32_t>(total);
}

enum L1Axis { kAxisKA = 0, kAxisKB = 1, kAxisMA = 2, kAxisNB = 3 };

// CalL1MaxLen: how many units of `axis` fit `bytes` with the rest of the plan.
int32_t CubeSearch::MaxL1Len(int32_t bytes, const L1Plan& p, int32_t align, int axis) const {
  // bytes / (units * kFractalBytes): for bytes >= 0 and a unit count in the
  // table, (bytes / kFractalBytes) / units, without a division (floor(floor(x)
  // / u) = floor(x / u)); otherwise CANN's 32-bit quotient of the product.
  const auto fractal_quot = [&](int32_t units) {
    if (bytes >= 0 && units > 0 && units <= static_cast<int32_t>(kMaxTableDivisor)) {
      return Quotient(bytes / kFractalBytes, units);
    }
    return Quot(bytes, units * kFractalBytes);
  };
  int32_t len = 1;
  if (axis == kAxisKA) len = fractal_quot(p.m_a * l0_.m * p.db_a);
  if (axis == kAxisKB) len = fractal_quot(p.n_b * l0_.n * p.db_b);
  len = AlignDown32(len, align);
  if (axis == kAxisMA) len = fractal_quot(Align32(p.k_a, align) * l0_.m * p.db_a);
  if (axis == kAxisNB) {
    len = fractal_quot(Align32(p.k_b, align) * l0_.n * p.db_b + p.bias_times * l0_.n);
  }
  return len;
}

void CubeSearch::BothFullLoad(L1Candidate& out) {
  L1Plan& p = l1_plan_;
  p.k_a = CeilDiv32(p.k_a, l0_.k) * l0_.k;
  p.k_b = CeilDiv32(p.k_b, l0_.k) * l0_.k;
  const int32_t bytes = L1Bytes(p);
  if (bytes > 0 && bytes <= l1_ && 0 <= ub_) {
    p.both_full_load = true;
    p.load_size = core_.m + core_.n;
    out = {p.k_a, p.m_a, p.db_a, p.k_b, p.n_b, p.db_b, p.load_size};
  }
}

void CubeSearch::AFullLoad(L1Candidate& out) {
  L1Plan& p = l1_plan_;
  const int32_t m_repeat = CeilDiv32(core_.m, l0_.m);
  const int32_t n_repeat = CeilDiv32(core_.n, l0_.n);
  int32_t ka = 1;
  int32_t kb = 1;
  KAlign(ka, kb);
  p.k_a = CeilDiv32(p.k_a, l0_.k) * l0_.k;
  const int32_t bytes = L1Bytes(p);
  if (!(bytes > 0 && bytes <= l1_ && 0 < ub_)) return;
  p.a_full_load = true;
  p.a_size = std::max(Align32(core_.k, ka), Align32(p.k_a, ka)) * std::max(p.m_a * l0_.m, core_.m) *
             kFractalBytes;
  p.b_size = l1_ - p.a_size;
  p.db_b = kDbOn;
  if (L1Bytes(p) > l1_) p.db_b = kDbOff;
  const int32_t bias = p.bias_times * p.n_b * l0_.n * kC0 * l0_.bias_bytes * p.db_b;
  p.k_b = std::min(MaxL1Len(p.b_size - bias, p, kb, kAxisKB), core_.k);
  p.b_times = std::min(Quotient(p.k_b, l0_.k), p.max_k_b);
  NearestFactor(p.all_times, p.b_times);
  p.k_b = p.b_times * l0_.k;
  if (p.k_b == core_.k) {
    p.n_b = std::min(MaxL1Len(p.b_size, p, kb, kAxisNB), p.max_n_b);
    NearestFactor(n_repeat, p.n_b);
  }
  const bool invalid = p.n_b == 0 || p.k_b == 0;
  const int32_t m_passes = p.k_b == core_.k ? 1 : m_repeat;
  p.load_size = invalid ? INT32_MAX : core_.m + m_passes * core_.n;
  if (p.k_b == core_.k && p.n_b * l0_.n == core_.n) p.db_b = kDbOff;
  out = {p.k_a, p.m_a, p.db_a, p.k_b, p.n_b, p.db_b, p.load_size};
}

void CubeSearch::BFullLoad(L1Candidate& out) {
  L1Plan& p = l1_plan_;
  const int32_t m_repeat = CeilDiv32(core_.m, l0_.m);
  const int32_t n_repeat = CeilDiv32(core_.n, l0_.n);
  int32_t ka = 1;
  int32_t kb = 1;
  KAlign(ka, kb);
  p.k_b = CeilDiv32(p.k_b, l0_.k) * l0_.k;
  const int32_t bytes = L1Bytes(p);
  if (!(bytes > 0 && bytes <= l1_ && 0 < ub_)) return;
  p.b_full_load = true;
  p.b_size = std::max(Align32(core_.k, kb), Align32(p.k_b, kb)) * std::max(p.n_b * l0_.n, core_.n) *
             kFractalBytes;
  p.a_size = l1_ - p.b_size;
  p.db_a = kDbOn;
  if (L1Bytes(p) > l1_) p.db_a = kDbOff;
  const int32_t bias = p.bias_times * p.n_b * l0_.n * kC0 * l0_.bias_bytes * p.db_b;
  p.k_a = std::min(MaxL1Len(p.a_size - bias, p, ka, kAxisKA), core_.k);
  p.a_times = std::min(Quotient(p.k_a, l0_.k), p.max_k_a);
  NearestFactor(p.all_times, p.a_times);
  p.k_a = p.a_times * l0_.k;
  if (p.k_a == core_.k) {
    p.m_a = std::min(MaxL1Len(p.a_size - bias, p, ka, kAxisMA), p.max_m_a);
    NearestFactor(m_repeat, p.m_a);
  }
  const bool invalid = p.m_a == 0 || p.k_a == 0;
  const int32_t n_passes = p.k_a == core_.k ? 1 : n_repeat;
  p.load_size = invalid ? INT32_MAX : core_.n + n_passes * core_.m;
  if (p.k_a == core_.k && p.m_a * l0_.m >= core_.m) p.db_a = kDbOff;
  out = {p.k_a, p.m_a, p.db_a, p.k_b, p.n_b, p.db_b, p.load_size};
}

// NeitherFullLoadDb: double buffers that L1 can hold with a 2-fractal B
// slice, then both on again when the whole K of B would not fit anyway.
void CubeSearch::NeitherDoubleBuffer() {
  L1Plan& p = l1_plan_;
  const int32_t saved_kb = p.k_b;
  p.k_b = kDbOn;
  if (L1Bytes(p) > l1_) {
    p.db_b = kDbOff;
    if (L1Bytes(p) > l1_) p.db_a = kDbOff;
  }
  p.k_b = core_.k;
  const bool both_double = core_.m != l0_.m && core_.k > l0_.k && L1Bytes(p) > l1_;
  p.k_b = saved_kb;
  if (both_double) {
    p.db_a = kDbOn;
    p.db_b = kDbOn;
    if (L1Bytes(p) > l1_) {
      p.db_b = kDbOff;
      if (L1Bytes(p) > l1_) p.db_a = kDbOff;
    }
  }
}

// NeitherFullLoadKforND: grow the K slice of one side first (axis 1: A,
// axis 2: B), then fill the rest of L1 with the other side's.
void CubeSearch::NeitherKSideBySide(int axis) {
  L1Plan& p = l1_plan_;
  const int32_t bias = p.bias_times * p.n_b * l0_.n * kC0 * l0_.bias_bytes * p.db_b;
  // K, M and N cuts align to 16 elements (fp32's fractal), 32 for 8-bit
  // data (INT8_ALIGN_SIZE).
  const bool a8 = a_bits_ == 8, b8 = b_bits_ == 8;
  const int32_t align = a8 ? kInt8AlignSize : kFp32AlignSize;
  const int32_t align_k = CeilDiv32(l0_.k * reduce_, align) * align * a_bits_ / 8;
  const int32_t align_n = CeilDiv32(p.n_b * kC0, align) * align;
  const int32_t align_m = CeilDiv32(p.m_a * kC0, align) * align;
  if (axis == 1) {
    // B's slice is sized by its K alignment (fp32 B, or a transposed 8-bit
    // A), by its N alignment (an 8-bit B not transposed), or in fractals.
    const bool b_wide_k = b_fp32_ || (in_.trans_a && a8);
    const bool b_wide_n = !b_wide_k && !in_.trans_b && b8;
    p.k_b = l0_.k;
    if (b_wide_k) {
      p.b_size = p.k_b * l0_.n * kC0 * align_k * p.n_b * p.db_b;
    } else if (b_wide_n) {
      p.b_size = p.k_b * l0_.n * align_k * align_n * p.db_b;
    } else {
      p.b_size = p.k_b * p.n_b * l0_.n * kFractalBytes * p.db_b;
    }
    p.a_size = l1_ - p.b_size;
    const int32_t factor = p.m_a * l0_.m * kC0 * p.db_a * kC0Bytes;
    p.k_a = factor == 0 ? core_.k : std::min((p.a_size - bias) / factor, core_.k);
    p.a_times = std::max(Quotient(p.k_a, l0_.k), 1);
    NearestFactor(p.all_times, p.a_times);
    p.k_a = p.a_times * l0_.k;
    p.a_size = p.k_a * p.m_a * l0_.m * kFractalBytes * p.db_a;
    p.b_size = l1_ - p.a_size;
    if (b_wide_k) {
      p.k_b = std::min(Quot(p.b_size - bias, p.n_b * l0_.n * kC0 * p.db_b * align_k), core_.k);
    } else if (b_wide_n) {
      p.k_b = std::min(Quot(p.b_size - bias, align_n * l0_.n * p.db_b * align_k), core_.k);
    } else {
      p.k_b = std::min(Quot(p.b_size - bias, p.n_b * l0_.n * kC0 * p.db_b * kC0Bytes), core_.k);
    }
    p.b_times = std::max(std::min(Quotient(p.k_b, l0_.k), p.max_k_b), 1);
    NearestFactor(p.all_times, p.b_times);
    p.k_b = p.b_times * l0_.k;
    return;
  }
  // A's slice is sized by its K alignment (a transposed fp32 A, or an 8-bit
  // A not transposed), by its M alignment (a transposed 8-bit A), or in
  // fractals.
  const bool a_wide_k = (in_.trans_a && a_fp32_) || (!in_.trans_a && a8);
  const bool a_wide_m = !a_wide_k && in_.trans_a && a8;
  p.k_a = l0_.k;
  if (a_wide_k) {
    p.a_size = p.k_a * p.m_a * l0_.m * kC0 * align_k * p.db_a;
  } else if (a_wide_m) {
    p.a_size = p.k_a * align_m * l0_.m * align_k * p.db_a;
  } else {
    p.a_size = p.k_a * p.m_a * l0_.m * kFractalBytes * p.db_a;
  }
  p.b_size = l1_ - p.a_size;
  p.k_b = std::min(Quot(p.b_size - bias, p.n_b * l0_.n * kC0 * p.db_b * kC0Bytes), core_.k);
  p.b_times = std::max(Quotient(p.k_b, l0_.k), 1);
  NearestFactor(p.all_times, p.b_times);
  p.k_b = p.b_times * l0_.k;
  p.b_size = p.k_b * p.n_b * l0_.n * kFractalBytes * p.db_b;
  p.a_size = l1_ - p.b_size;
  if (a_wide_m) {
    p.k_a = std::min(Quot(p.a_size - bias, align_m * l0_.m * p.db_a * align_k), core_.k);
  } else {
    const int32_t factor = p.m_a * l0_.m * kC0 * p.db_a * (a_wide_k ? align_k : kC0Bytes);
    p.k_a = factor == 0 ? core_.k : std::min((p.a_size - bias) / factor, core_.k);
  }
  p.a_times = std::max(std::min(Quotient(p.k_a, l0_.k), p.max_k_a), 1);
  NearestFactor(p.all_times, p.a_times);
  p.k_a = p.a_times * l0_.k;
}

// NeitherFullLoadKforNZ (reached with A transposed and B not): the whole K
// of B if L1 holds it, else one common K slice.
void CubeSearch::NeitherKTransposedA() {
  L1Plan& p = l1_plan_;
  p.k_b = core_.k;
  const int32_t bias = p.bias_times * p.n_b * l0_.n * kC0 * l0_.bias_bytes * p.db_b;
  int32_t ka = 1;
  int32_t kb = 1;
  KAlign(ka, kb);
  const int32_t bytes = L1Bytes(p);
  if (bytes > 0 && bytes <= l1_) {
    p.b_size = Align32(core_.k, kb) * p.n_b * l0_.n * kFractalBytes * p.db_b;
    p.a_size = l1_ - p.b_size;
    p.k_a = std::min(MaxL1Len(p.a_size - bias, p, ka, kAxisKA), core_.k);
    p.a_times = std::max(std::min(Quotient(p.k_a, l0_.k), p.max_k_a), 1);
    NearestFactor(p.all_times, p.a_times);
    p.k_a = p.a_times * l0_.k;
    return;
  }
  int32_t per_k = std::min(
      Quot(Quot(l1_ - bias, l0_.m * kFractalBytes * p.db_a + kC0 * l0_.n * kC0Bytes * p.db_b),
           l0_.k) *
          l0_.k,
      core_.k);
  const int32_t bias_factor = has_bias_ ? p.n_b * l0_.n : 0;
  if (a_fp32_) {
    const int64_t a = p.m_a * l0_.m * Align32(per_k, ka) * p.db_a;
    const int64_t b = p.n_b * l0_.n * Align32(per_k, kb) * p.db_b;
    const int64_t need = (a + b) * kFractalBytes + bias_factor * kC0 * l0_.bias_bytes * p.db_b;
    if (need > l1_) per_k -= 1;
  }
  int32_t times = std::min(Quotient(per_k, l0_.k), std::max(p.max_k_a, p.max_k_b));
  NearestFactor(p.all_times, times);
  times = std::min(times, p.all_times);
  per_k = times * l0_.k;
  p.k_a = per_k;
  p.k_b = per_k;
}

void CubeSearch::NeitherK() {
  L1Plan& p = l1_plan_;
  if (l0_.k == core_.k) return;
  int axis = 0;
  if (!in_.trans_a && !in_.trans_b) axis = 1;
  if (in_.trans_a && in_.trans_b) axis = 2;
  if (!in_.trans_a && in_.trans_b) axis = l0_.m > l0_.n ? 1 : 2;
  if (axis != 0) {
    NeitherKSideBySide(axis);
  } else {
    NeitherKTransposedA();
  }
  // One K slice must divide the other (and K) so the loops nest.
  if (p.k_a > p.k_b && Rem(p.k_a, p.k_b) != 0) {
    while (!divides_by_zero_ &&
           (Rem(p.k_a, p.k_b) != 0 || (p.k_a != p.k_b && Rem(core_.k, p.k_a) != 0))) {
      --p.k_a;
    }
  }
  if (p.k_a < p.k_b && Rem(p.k_b, p.k_a) != 0) {
    while (!divides_by_zero_ &&
           (Rem(p.k_b, p.k_a) != 0 || (p.k_a != p.k_b && Rem(core_.k, p.k_b) != 0))) {
      --p.k_b;
    }
  }
}

// NeitherFullLoadMN: the M and N depths, M-first or N-first, chosen by
// which K slices cover the whole K.
void CubeSearch::NeitherMN() {
  L1Plan& p = l1_plan_;
  const int32_t m_repeat = CeilDiv32(core_.m, l0_.m);
  const int32_t n_repeat = CeilDiv32(core_.n, l0_.n);
  if (l0_.bias_bytes == kFp32Bytes && p.bias_times > 0) ++p.bias_times;
  int32_t bias = p.bias_times * p.n_b * l0_.n * kC0 * 2 * p.db_b;
  int32_t ka = 1;
  int32_t kb = 1;
  KAlign(ka, kb);
  L1Plan m_first = p;
  L1Plan n_first = p;

  m_first.b_size = Align32(m_first.k_b, kb) * l0_.n * kFractalBytes * m_first.db_b;
  m_first.a_size = l1_ - m_first.b_size;
  m_first.m_a = std::max(
      std::min(std::min(MaxL1Len(m_first.a_size - bias, m_first, ka, kAxisMA), m_first.max_m_a),
               m_repeat),
      1);
  NearestFactor(m_repeat, m_first.m_a);
  m_first.a_size = Align32(m_first.k_a, ka) * m_first.m_a * l0_.m * kFractalBytes * m_first.db_a;
  m_first.b_size = l1_ - m_first.a_size;
  m_first.n_b = std::max(
      std::min(std::min(MaxL1Len(m_first.b_size - bias, m_first, kb, kAxisNB), m_first.max_n_b),
               n_repeat),
      1);
  NearestFactor(n_repeat, m_first.n_b);
  m_first.load_size = core_.m + core_.n * CeilDiv32(core_.m, m_first.m_a * l0_.m);

  n_first.a_size = Align32(n_first.k_a, ka) * l0_.m * kFractalBytes * n_first.db_a;
  n_first.b_size = l1_ - n_first.a_size;
  n_first.n_b = std::max(
      std::min(std::min(MaxL1Len(n_first.b_size - bias, n_first, kb, kAxisNB), n_first.max_n_b),
               n_repeat),
      1);
  NearestFactor(n_repeat, n_first.n_b);
  n_first.b_size = Align32(core_.k, kb) * n_first.n_b * l0_.n * kFractalBytes * n_first.db_b;
  n_first.a_size = l1_ - n_first.b_size;
  bias = bias * n_first.n_b;
  n_first.m_a = std::max(
      std::min(std::min(MaxL1Len(n_first.a_size - bias, n_first, ka, kAxisMA), n_first.max_m_a),
               m_repeat),
      1);
  NearestFactor(m_repeat, n_first.m_a);
  n_first.load_size = core_.m * CeilDiv32(core_.n, n_first.n_b * l0_.n) + core_.n;

  if (p.k_a >= core_.k && p.k_b >= core_.k) {
    p = n_first.load_size > m_first.load_size ? m_first : n_first;
  }
  if (p.k_a >= core_.k && p.k_b < core_.k) {
    m_first.n_b = 1;
    p = m_first;
  }
  if (p.k_a < core_.k && p.k_b >= core_.k) {
    n_first.m_a = 1;
    p = n_first;
  }
  if (p.k_a < core_.k && p.k_b < core_.k) {
    p.m_a = 1;
    p.n_b = 1;
    p.load_size = core_.m * CeilDiv32(core_.n, m_first.n_b * l0_.n) +
                  core_.n * CeilDiv32(core_.m, m_first.m_a * l0_.m);
  }
}

// Whether NeitherFullLoad divides by zero, when the plan holding both
// operands whole fits L1 (so a K slice's bytes stay far below 2^31). Its K
// part does not (its divisors are positive products of block sides, and its
// K slices stay positive where they are divided by); NeitherFullLoadMN
// divides by the bytes of a K slice of A's depth and of B's (with the bias
// rows), which are 0 only when a slice is empty. A slice is never empty
// when L0 holds the whole K (the K part changes nothing) or when the slices
// grow side by side (NeitherFullLoadKforND: each at least one L0 K block);
// NeitherFullLoadKforNZ (A transposed, B not) can leave both empty, so there
// the K part runs here on a copy of the plan, which is left as it was.
bool CubeSearch::NeitherFullLoadFaults() {
  if (!(in_.trans_a && !in_.trans_b) || l0_.k == core_.k) return false;
  const L1Plan saved = l1_plan_;
  const bool saved_fault = divides_by_zero_;
  const char* const saved_site = fault_site_;
  L1Plan& p = l1_plan_;
  p.Set(l0_.k, l0_.k, 1, 1, kDbOn, kDbOn);
  NeitherDoubleBuffer();
  NeitherK();
  int32_t ka = 1;
  int32_t kb = 1;
  KAlign(ka, kb);
  // NeitherFullLoadMN's first step (a 4-byte bias counts one more row).
  const int32_t bias_times =
      l0_.bias_bytes == kFp32Bytes && p.bias_times > 0 ? p.bias_times + 1 : p.bias_times;
  const int32_t a_depth_bytes = Align32(p.k_a, ka) * l0_.m * p.db_a * kFractalBytes;
  const int32_t b_depth_bytes =
      Align32(p.k_b, kb) * l0_.n * p.db_b * kFractalBytes + bias_times * l0_.n * kFractalBytes;
  const bool faults = divides_by_zero_ || a_depth_bytes == 0 || b_depth_bytes == 0;
  l1_plan_ = saved;
  divides_by_zero_ = saved_fault;
  fault_site_ = saved_site;
  return faults;
}

void CubeSearch::NeitherFullLoad(L1Candidate& out) {
  NeitherDoubleBuffer();
  NeitherK();
  NeitherMN();
  const L1Plan& p = l1_plan_;
  out = {p.k_a, p.m_a, p.db_a, p.k_b, p.n_b, p.db_b, p.load_size};
}

void CubeSearch::SearchL1() {
  L1Plan& p = l1_plan_;
  const int32_t mte1_loop =
      Quotient(kMinMte1Load, (l0_.n == 1 ? 1 : l0_.k) + (l0_.k == 1 ? 1 : l0_.m));
  L1Candidate both{}, a_full{}, b_full{}, neither{};
  p.all_times = CeilDiv32(core_.k, l0_.k);
  p.max_m_a = Quotient(core_.m + l0_.m - 1, l0_.m);
  p.max_n_b = Quotient(core_.n + l0_.n - 1, l0_.n);
  p.max_k_a =
      std::max(mte1_loop, Quotient(Quotient(kMinMte1Load + l0_.m - 1, l0_.m) + l0_.k - 1, l0_.k));
  p.max_k_b =
      std::max(mte1_loop, Quotient(Quotient(kMinMte1Load + l0_.n - 1, l0_.n) + l0_.k - 1, l0_.k));
  if (has_bias_) ++p.bias_times;

  p.Set(core_.k, core_.k, p.max_m_a, p.max_n_b, kDbOff, kDbOff);
  BothFullLoad(both);
  // With A and B in ND a full load must also hold the whole K in one slice.
  const int32_t k_fractals = CeilDiv32(k_, reduce_);
  auto one_slice = [&](int32_t k_slice) {
    return k_slice > 0 ? CeilDiv32(k_fractals, core_.k_dim * k_slice) == 1 : true;
  };
  const bool nd = !a_nz_ && !b_nz_;
  const bool both_ok = p.both_full_load && (!nd || (one_slice(both[0]) && one_slice(both[3])));
  // When both operands fit L1 whole, that plan is CANN's choice whatever the
  // other three are: its traffic core.m + core.n is the least any plan has
  // (each of the others loads each operand at least once), and on a tie its
  // depths (all of M and N) are the largest. The others are computed only
  // for the divisions by zero CANN would meet on the way: A's and B's full
  // loads divide by byte counts bounded by this plan's, which fits L1 (none
  // is 0), and NeitherFullLoad only in its M and N depths.
  if (both_ok && !NeitherFullLoadFaults()) {
    p.Set(both[0], both[3], both[1], both[4], both[2], both[5]);
    return;
  }
  p.Set(core_.k, l0_.k, p.max_m_a, 1, kDbOff, kDbOff);
  AFullLoad(a_full);
  p.Set(l0_.k, core_.k, 1, p.max_n_b, kDbOff, kDbOff);
  BFullLoad(b_full);
  neither[6] = INT_MAX;
  p.Set(l0_.k, l0_.k, 1, 1, kDbOn, kDbOn);
  NeitherFullLoad(neither);

  // Choose among the four: least GM traffic, then the larger depths.
  const L1Candidate* pick = &neither;
  int32_t pick_load = neither[6];
  const bool a_ok = p.a_full_load && (!nd || one_slice(a_full[0]));
  const bool b_ok = p.b_full_load && (!nd || one_slice(b_full[3]));
  auto better = [&](const L1Candidate& c) {
    return c[6] < pick_load || (c[6] == pick_load && c[1] + c[4] >= (*pick)[1] + (*pick)[4]);
  };
  if (a_ok && better(a_full)) {
    pick = &a_full;
    pick_load = a_full[6];
  }
  if (b_ok && better(b_full)) {
    pick = &b_full;
    pick_load = b_full[6];
  }
  if (both_ok && better(both)) pick = &both;
  const L1Candidate chosen = *pick;
  p.Set(chosen[0], chosen[3], chosen[1], chosen[4], chosen[2], chosen[5]);
}

// --- Result (UpdateTiling, CheckFinalParams) ----------------------------------

absl::StatusOr<CubeTiling> CubeSearch::Finish() {
  CubeTiling t;
  const L1Plan& p = l1_plan_;
  t.used_core_num = core_.batch_dim * core_.m_dim * core_.k_dim * core_.n_dim;
  int32_t single_m = CeilDiv32(m_, core_.m_dim);
  int32_t single_n = CeilDiv32(n_, core_.n_dim);
  int32_t single_k = CeilDiv32(k_, core_.k_dim);
  if (cores_ > 1) {
    // GetSingleShape re-derives M and N per core from the fractal-aligned
    // extents, and aligns them to 256 bytes for an NZ input when that still
    // leaves every core some work.
    const int32_t a_align = kDataCopyAlignBytes / a_bits_ * 8;
    const int32_t b_align = kDataCopyAlignBytes / b_bits_ * 8;
    const bool need_align = a_nz_ || b_nz_;
    // CANN forms these products in 32 bits; past 2^31 they wrap as its
    // compiled code does (WrapMul32 makes that defined behaviour here).
    const bool output_heavy =
        static_cast<int64_t>(WrapMul32(single_n, single_m)) * (2 * c_bits_) >
        static_cast<int64_t>(WrapMul32(WrapMul32(single_n, single_k), a_bits_)) +
            static_cast<int64_t>(WrapMul32(WrapMul32(single_m, single_k), b_bits_));
    auto align_single = [](bool align, int32_t shape, int32_t dim, int32_t unit, int32_t& out) {
      out = CeilDiv32(shape, dim);
      if (!align || unit == 0 || dim <= 1) return;
      const int32_t aligned = Align32(out, unit);
      if (aligned >= CeilDiv32(shape, dim - 1)) return;
      out = aligned;
    };
    align_single((need_align && (!in_.trans_b || output_heavy)) || c_nz_, n32_ * kC0, core_.n_dim,
                 b_align, single_n);
    align_single((need_align && in_.trans_a) || c_nz_, m32_ * kC0, core_.m_dim, a_align, single_m);
  }
  t.single_core_m = single_m;
  t.single_core_n = single_n;
  t.single_core_k = single_k;
  t.m = m_;
  t.n = n_;
  t.ka = k_;
  t.kb = k_;
  t.batch_m = 1;
  t.batch_n = 1;
  t.single_batch_m = 1;
  t.single_batch_n = 1;
  t.base_m = l0_.m * kC0;
  t.base_n = l0_.n * kC0;
  t.base_k = l0_.k * reduce_;

  // GetIteratorOrder: 0 walks M first, 1 walks N first.
  const bool a_whole_k =
      !(static_cast<float>(single_k) / static_cast<float>(p.k_a * reduce_) > 1.0);
  const bool b_whole_k =
      !(static_cast<float>(single_k) / static_cast<float>(p.k_b * reduce_) > 1.0);
  if (!a_whole_k && !b_whole_k) {
    t.iterate_order = 0;
  } else if (a_whole_k && !b_whole_k) {
    t.iterate_order = 1;
  } else if (!a_whole_k && b_whole_k) {
    t.iterate_order = 0;
  } else {
    const int32_t m_loops = CeilDiv32(single_m, p.m_a * l0_.m * kC0);
    const int32_t n_loops = CeilDiv32(single_n, p.n_b * l0_.n * kC0);
    t.iterate_order = single_m + single_n * m_loops < single_n + single_m * n_loops ? 1 : 0;
  }

  t.depth_a1 = CeilDiv32(p.k_a, l0_.k) * p.m_a * p.db_a;
  int32_t depth_b1 = CeilDiv32(p.k_b, l0_.k) * p.n_b * p.db_b;
  if (b_fp32_) {
    // UpdateDepthB1 (910B rule): fp32 B rows are padded to 16 elements of K;
    // when A and the padded B overflow L1 the B depth shrinks. CANN computes
    // the block sizes in 16 bits.
    const uint16_t aligned_k = static_cast<uint16_t>(CeilDiv32(t.base_k, 16) * 16);
    const uint16_t aligned_kn = static_cast<uint16_t>(aligned_k * t.base_n);
    uint16_t aligned_km = static_cast<uint16_t>(t.base_k * t.base_m);
    if (in_.trans_a && a_fp32_) aligned_km = static_cast<uint16_t>(aligned_k * t.base_m);
    if ((static_cast<size_t>(t.depth_a1 * aligned_km + aligned_kn * depth_b1)) * sizeof(float) >
        static_cast<size_t>(l1_)) {
      depth_b1 = aligned_kn == 0 ? depth_b1 : t.base_n * t.base_k * depth_b1 / aligned_kn;
      depth_b1 = std::max(depth_b1, 1);
    }
  }
  t.depth_b1 = depth_b1;
  const int32_t n_b = std::min(p.n_b, depth_b1);
  t.step_m = p.m_a;
  t.step_n = n_b;
  t.step_ka = CeilDiv32(p.k_a, l0_.k);
  t.step_kb = CeilDiv32(p.k_b, l0_.k);
  if (b_fp32_ && t.base_k == kFp32InvalidBaseK) {
    // AdjustFloatL1Factor: an 8-element fp32 K block loads B one step at a time.
    t.step_kb = 1;
    t.depth_b1 = n_b * p.db_b;
  }
  t.is_bias = has_bias_ ? 1 : 0;
  t.db_l0a = l0_.db_a;
  t.db_l0b = l0_.db_b;
  t.db_l0c = l0_.db_c;
  // UpdateUsedSize / GetUsedSize (910B): the L1 of both depths plus a bias
  // row; L0C of one block; no UB (no ND-to-NZ in UB on this chip class).
  t.share_l1_size = t.depth_a1 * (t.base_m * t.base_k * a_bits_ / 8) +
                    t.depth_b1 * (t.base_n * t.base_k * b_bits_ / 8) +
                    (has_bias_ ? t.base_n * bias_bytes_ : 0);
  t.share_l0c_size = t.base_m * t.base_n * kFp32Bytes;

  if (t.step_m == 0 || t.step_n == 0 || t.depth_a1 == 0 || t.depth_b1 == 0) {
    return Fail("stepM/stepN/depthA1/depthB1 is zero");
  }
  if (t.step_m > t.depth_a1 || t.step_n > t.depth_b1) {
    return Fail("stepM/stepN exceeds depthA1/depthB1");
  }
  if (t.share_l1_size > l1_ || t.share_l0c_size > l0c_ || t.share_ub_size > ub_) {
    return Fail(absl::StrCat("used L1/L0C/UB (", t.share_l1_size, "/", t.share_l0c_size, "/",
                             t.share_ub_size, " bytes) exceeds the buffer space (", l1_, "/", l0c_,
                             "/", ub_, ")"));
  }
  return t;
}

absl::StatusOr<CubeTiling> CubeSearch::Run() {
  // CheckSetParam.
  if (m_ == 0 || n_ == 0 || k_ == 0) return Fail("singleM/N/K is zero");
  // FillParam.
  k32_ = CeilDiv32(k_, reduce_);
  m32_ = CeilDiv32(m_, kC0);
  n32_ = CeilDiv32(n_, kC0);
  m_mapped_ = MapShape(m32_);
  k_mapped_ = MapShape(k32_);
  n_mapped_ = MapShape(n32_);
  auto fault = [&] {
    return CannFaultError(absl::StrCat("asc-devkit's TCubeTiling search, ", fault_site_));
  };
  SplitCores();
  if (divides_by_zero_) return fault();
  SearchL0();
  if (l0_.m == 0 || l0_.n == 0 || l0_.k == 0) return Fail("ml0/nl0/kl0 is zero");
  SearchL1();
  if (divides_by_zero_) return fault();
  return Finish();
}

}  // namespace

absl::StatusOr<CubeTiling> SearchCubeTiling(const CubeTilingSearchInput& input,
                                            const ChipSpec& chip) {
  return CubeSearch(input, chip).Run();
}

}  // namespace npu::tiling
