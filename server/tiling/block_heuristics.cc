#include "server/tiling/block_heuristics.h"

#include <algorithm>
#include <cmath>

#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

// Target load balance of the (base_m, base_n) search: once the best candidate
// keeps 90% of the cores busy, candidates with worse re-read intensity that
// are still memory bound are not considered.
constexpr double kBalanceGoal = 0.9;
// The search keeps some headroom below the exact roofline edge.
constexpr double kCubeBoundMargin = 0.85;
// Ties in the intensity / balance score are decided by balance.
constexpr double kScoreEpsilon = 1e-9;
// Tail pieces smaller than this many elements cost more than they save.
constexpr uint64_t kMinTailPieceElements = 4096;
// fp32 cube-bound plans with many rounds need blocks of at least 64.
constexpr uint64_t kFp32MinBaseBlock = 64;
// Cube throughput is 16x16x16 MACs (8 flop units of 1024) per cycle for
// 16-bit inputs; fp32 without hf32 runs 16 times slower.
constexpr double kCubeFlopsPerCyclePerKibi = 8.0;
constexpr double kFp32CubeSlowdown = 16.0;
// CalL1Tiling never stages more than 8 K slices (MTE2 issue-queue depth).
constexpr uint64_t kMaxL1KSteps = 8;
// Bias tiles in L1 are staged double-buffered in fp32.
constexpr uint64_t kBiasL1Bytes = 4;

// Upper bound of base_m (left) or base_n (right) from L0A, L0C (or UB), the
// bias table, the L1 K staging and the shape itself.
uint64_t MaxBaseWithLimit(const MatmulProblem& problem, const ProblemFacts& facts,
                          const ChipSpec& chip, uint64_t buffer_limit_bytes, uint64_t align_unit,
                          bool right_matrix, bool memory_bound) {
  const uint64_t shape = right_matrix ? facts.n : facts.m;
  const uint64_t k_aligned = CeilAlign(facts.k, kBlock16);
  // Cube-bound plans need base_k >= 128 bytes to hide the fixpipe.
  const uint64_t k_limit = memory_bound ? kBlock16 : 128 / facts.a_bytes;
  const uint64_t min_k_l0_bytes = std::min(k_limit, k_aligned) * facts.a_bytes;
  const uint64_t max_with_buffer = buffer_limit_bytes / kFp32Bytes / kBlock16;
  uint64_t max_block = std::min(chip.l0a_bytes / kDoubleBuffer / min_k_l0_bytes, max_with_buffer);
  if (right_matrix && problem.has_bias) {
    max_block = std::min(max_block, chip.bt_bytes / kDoubleBuffer / kFp32Bytes);
  }
  // With K as the inner axis an L1 stage must cover 256 (memory bound) or
  // 512 bytes of K; CANN's batched ops always use 512 bytes
  // (matmul/mat_mul_v3/op_host/op_tiling/arch35/matmul_v3_tiling_helper.cpp,
  // GetMaxBaseWithLimit: the unit depends on batchInfo being set).
  const bool k_unit_256 = memory_bound && !facts.batch_context;
  const uint64_t k_align_unit =
      KIsInnerAxis(problem) ? (k_unit_256 ? 256 : 512) / facts.a_bytes : kBlock16;
  const uint64_t max_with_k_inner =
      chip.l1_bytes / (2 * kDoubleBuffer * facts.a_bytes * std::min(k_align_unit, k_aligned));
  max_block = std::min(max_block, max_with_k_inner);
  max_block = std::min(CeilAlign(shape, align_unit), FloorAlign(max_block, align_unit));
  if (shape < align_unit) max_block = std::min(max_block, CeilAlign(shape, kBlock16));
  return max_block;
}

// Fraction of the cores' time spent on useful blocks when the last round is
// re-split into square-ish pieces. In the batch context every batch of A
// adds its blocks to the rounds and the tail is never re-split (CANN's
// GetBalanceRateWithTail, matmul_v3_tiling_helper.cpp).
double BalanceRateWithTail(const ProblemFacts& facts, uint64_t used_cores, uint64_t base_m,
                           uint64_t base_n, uint64_t m_blocks) {
  const uint64_t batch = facts.batch_context ? facts.batch_a : 1;
  const uint64_t total_rounds = batch * m_blocks * CeilDiv(facts.n, base_n);
  const uint64_t main_rounds = CeilDiv(total_rounds, used_cores) - 1;
  const uint64_t tail_split = FloorDiv(used_cores, total_rounds - used_cores * main_rounds);
  if (facts.m <= kBlock16) base_m = facts.m;
  if (facts.n <= kBlock16) base_n = facts.n;
  if (main_rounds == 0 || FloorDiv(base_m * base_n, tail_split) < kMinTailPieceElements ||
      facts.batch_context) {
    const double work_per_core = static_cast<double>(batch) * facts.m * facts.n / used_cores;
    return work_per_core / static_cast<double>((main_rounds + 1) * base_m * base_n);
  }
  const double work_per_core = static_cast<double>(facts.m) * facts.n / used_cores;
  const uint64_t split_root = static_cast<uint64_t>(std::sqrt(static_cast<double>(tail_split)));
  const uint64_t offset = FloorDiv(tail_split - split_root * split_root, split_root) + 1;
  const double tail_round = 1.0 / static_cast<double>(split_root * (split_root + offset - 1));
  return work_per_core / ((main_rounds + tail_round) * base_m * base_n);
}

// value / divisor and value % divisor (divisor > 0), in 32-bit arithmetic
// when both fit: a 64-bit division costs several times more on many CPUs.
inline void DivMod(uint64_t value, uint64_t divisor, uint64_t& quotient, uint64_t& remainder) {
  if (((value | divisor) >> 32) == 0) {
    const auto v = static_cast<uint32_t>(value), d = static_cast<uint32_t>(divisor);
    quotient = v / d;
    remainder = v % d;
  } else {
    quotient = value / divisor;
    remainder = value % divisor;
  }
}

// BalanceRateWithTail() for the many candidates of one search: the same
// numbers, with what depends only on the problem and the core count
// derived once, and the rounds' quotient and remainder from one division.
class BalanceModel {
 public:
  BalanceModel(const ProblemFacts& facts, uint64_t used_cores)
      : facts_(facts),
        used_cores_(used_cores),
        batch_(facts.batch_context ? facts.batch_a : 1),
        batched_work_per_core_(static_cast<double>(batch_) * facts.m * facts.n / used_cores),
        work_per_core_(static_cast<double>(facts.m) * facts.n / used_cores) {}

  // Whether Rate() is at most 1 for every candidate: the blocks' rounds
  // always cover the work, so no block keeps the cores busier than all of
  // them (with the tail re-split, the tail round counts at least as the
  // share of the cores it fills). Holds unless a size or the core count is
  // 0, where the general form's wrap-around rules apply.
  bool BoundedByOne() const {
    return used_cores_ > 0 && batch_ > 0 && facts_.m > 0 && facts_.n > 0;
  }

  double Rate(uint64_t base_m, uint64_t base_n, uint64_t m_blocks) const {
    const uint64_t total_rounds = batch_ * m_blocks * CeilDiv(facts_.n, base_n);
    // The general form keeps its zero-divisor and wrap-around rules.
    if (used_cores_ == 0 || total_rounds == 0) {
      return BalanceRateWithTail(facts_, used_cores_, base_m, base_n, m_blocks);
    }
    uint64_t full_rounds, last_round;
    DivMod(total_rounds, used_cores_, full_rounds, last_round);
    // CeilDiv(total, cores) - 1 and what the last round holds (1..cores).
    const uint64_t main_rounds = full_rounds - (last_round == 0 ? 1 : 0);
    const uint64_t tail_blocks = last_round == 0 ? used_cores_ : last_round;
    uint64_t tail_split, unused;
    DivMod(used_cores_, tail_blocks, tail_split, unused);
    if (facts_.m <= kBlock16) base_m = facts_.m;
    if (facts_.n <= kBlock16) base_n = facts_.n;
    // floor(x / t) < c is x < c * t for t >= 1.
    if (main_rounds == 0 || base_m * base_n < kMinTailPieceElements * tail_split ||
        facts_.batch_context) {
      return batched_work_per_core_ / static_cast<double>((main_rounds + 1) * base_m * base_n);
    }
    const uint64_t split_root = static_cast<uint64_t>(std::sqrt(static_cast<double>(tail_split)));
    const uint64_t offset = FloorDiv(tail_split - split_root * split_root, split_root) + 1;
    const double tail_round = 1.0 / static_cast<double>(split_root * (split_root + offset - 1));
    return work_per_core_ / ((main_rounds + tail_round) * base_m * base_n);
  }

 private:
  const ProblemFacts& facts_;
  const uint64_t used_cores_;
  const uint64_t batch_;
  const double batched_work_per_core_;
  const double work_per_core_;
};

void ChooseBaseK(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                 CubeRunState& state) {
  if (const uint64_t base_k = CannBaseK(problem, facts, chip, state.base_m, state.base_n);
      base_k != 0) {
    state.base_k = base_k;
  }
}

}  // namespace

uint64_t CannBaseK(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                   uint64_t base_m, uint64_t base_n) {
  const uint64_t k_aligned = CeilAlign(facts.k, kBlock16);
  const uint64_t max_base_k =
      chip.l0a_bytes / kDoubleBuffer / facts.a_bytes / std::max(base_m, base_n);
  if (k_aligned <= max_base_k) return k_aligned;
  if (problem.trans_a && !problem.trans_b) return FloorAlign(max_base_k, kBlock16);
  if (max_base_k * facts.a_bytes >= 256) return FloorAlign(max_base_k, 256 / facts.a_bytes);
  for (uint64_t candidate : {128, 64, 32, 16}) {
    if (max_base_k >= candidate) return candidate;
  }
  return 0;
}

void SplitTailRoundAlong(const MatmulProblem& problem, const ProblemFacts& facts,
                         const ChipSpec& chip, uint64_t tiles, bool along_n, CubeRunState& state) {
  const uint64_t tail = tiles <= chip.aic_num ? 0 : tiles % chip.aic_num;
  state.tail_m_cnt = 1;
  state.tail_n_cnt = 1;
  if (tail == 0) return;
  uint64_t& split = along_n ? state.tail_n_cnt : state.tail_m_cnt;
  const uint64_t edge = along_n ? state.base_n : state.base_m;
  const uint64_t elem_bytes = along_n ? facts.b_bytes : facts.a_bytes;
  // N is B's inner axis unless B is transposed; M is A's when A is.
  const bool inner_axis = along_n ? !problem.trans_b : problem.trans_a;
  while ((split + 1) * tail <= chip.aic_num &&
         (!inner_axis || CeilDiv(edge, split) * elem_bytes > 128)) {
    ++split;
  }
}

void ResetBase(const ProblemFacts& facts, const ChipSpec& chip, CubeRunState& state) {
  state = CubeRunState{};
  state.used_core_num = chip.aic_num;
  state.base_m = kBlock256;
  state.base_n = kBlock256;
  state.base_k = 128 / facts.a_bytes;
  state.single_core_k = facts.k;
  state.single_core_m = state.base_m;
  state.single_core_n = state.base_n;
}

namespace {

// Chip-wide bandwidths and cube throughput in bytes (flops) per ns. Only
// their ratios enter the search, so the common units cancel.
struct Roofline {
  double hbm_bw;
  double l2_bw;
  double compute;
  // fp32 without hf32 lowers the cube's roof, and the search then also
  // avoids small blocks (see SkipCandidate).
  bool slow_fp32;
};

Roofline ChipRoofline(const MatmulProblem& problem, const ChipSpec& chip) {
  const double freq_ghz = chip.cube_freq_mhz / 1000.0;
  Roofline roof;
  roof.hbm_bw = freq_ghz * chip.aic_num * chip.ddr_bytes_per_cycle / 1024.0;
  roof.l2_bw = freq_ghz * chip.aic_num * chip.l2_bytes_per_cycle / 1024.0;
  double core_compute = freq_ghz * kCubeFlopsPerCyclePerKibi;
  roof.slow_fp32 = problem.dtype_a == DataType::kFloat32 && !problem.hf32;
  if (roof.slow_fp32) core_compute /= kFp32CubeSlowdown;
  roof.compute = core_compute * chip.aic_num;
  return roof;
}

// Bytes one block's fp32 output may occupy. A split-K plan (fewer cores
// than the chip has) reduces its partial outputs through UB, so it must also
// fit there.
uint64_t OutputBufferLimit(const ChipSpec& chip, const CubeRunState& state) {
  return state.used_core_num == chip.aic_num ? chip.l0c_bytes
                                             : std::min(chip.l0c_bytes, chip.ub_bytes);
}

// The re-read intensity (1/base_m + 1/base_n) at which the cube, not MTE2,
// becomes the bound. Operands that overflow L2 are re-read from HBM, which
// moves the edge towards larger blocks.
double CubeBoundEdge(const ProblemFacts& facts, const ChipSpec& chip, const Roofline& roof) {
  const double m = static_cast<double>(facts.m);
  const double n = static_cast<double>(facts.n);
  const double cmr = (m + n) / (m * n);
  // Every batch of A reads its own operands through L2.
  const uint64_t batch = facts.batch_context ? facts.batch_a : 1;
  const double l2_usage = std::max(
      static_cast<double>(batch * (facts.m + facts.n) * facts.k * facts.a_bytes) / chip.l2_bytes,
      1.0);
  return (roof.l2_bw / roof.compute) + l2_usage * (1 - roof.l2_bw / roof.hbm_bw) * cmr -
         (1 + roof.l2_bw / roof.hbm_bw) / static_cast<double>(facts.k);
}

// Step sizes of the candidate walk and the largest block each axis allows.
struct BaseSearchBounds {
  uint64_t align_m;
  uint64_t align_n;
  uint64_t max_m;
  uint64_t max_n;
};

BaseSearchBounds SearchBounds(const MatmulProblem& problem, const ProblemFacts& facts,
                              const ChipSpec& chip, const Roofline& roof, uint64_t buffer_limit,
                              double cube_bound_edge) {
  // A shape that stays memory bound even with the largest block that fits
  // needs its inner-axis loads 128-byte aligned to reach full MTE2 bandwidth.
  const uint64_t best_m = std::min(CeilAlign(facts.m, kBlock16), kBlock256);
  const uint64_t best_n =
      std::max(kBlock16, std::min(CeilAlign(facts.n, kBlock16),
                                  FloorAlign(buffer_limit / kFp32Bytes / best_m, kBlock16)));
  const bool memory_bound = (1.0 / best_m) + (1.0 / best_n) > cube_bound_edge;
  const uint64_t inner_align_bytes = memory_bound ? 128 : 64;

  // When K is too small to hide the output, base_n must be 256-byte aligned
  // so the fixpipe writes at full bandwidth.
  const double m = static_cast<double>(facts.m);
  const double n = static_cast<double>(facts.n);
  const double fixpipe_bound_edge =
      static_cast<double>(facts.m * facts.n) * roof.hbm_bw / ((m + n) * roof.l2_bw);
  BaseSearchBounds bounds;
  bounds.align_m = problem.trans_a ? inner_align_bytes / facts.a_bytes : kBlock16;
  bounds.align_n = static_cast<double>(facts.k) < fixpipe_bound_edge
                       ? 256 / facts.b_bytes
                       : (problem.trans_b ? kBlock16 : inner_align_bytes / facts.b_bytes);
  bounds.max_m =
      MaxBaseWithLimit(problem, facts, chip, buffer_limit, bounds.align_m, false, memory_bound);
  bounds.max_n =
      MaxBaseWithLimit(problem, facts, chip, buffer_limit, bounds.align_n, true, memory_bound);
  return bounds;
}

// Seeds the search with the largest block the bounds allow, so every
// candidate must beat it; returns its balance.
double SeedLargestBase(const ProblemFacts& facts, uint64_t buffer_limit,
                       const BaseSearchBounds& bounds, CubeRunState& state) {
  state.base_m = std::max(kBlock16, std::min(bounds.max_m, kBlock256));
  state.base_n = std::max(
      kBlock16,
      std::min(bounds.max_n, FloorAlign(buffer_limit / kFp32Bytes / state.base_m, bounds.align_n)));
  state.cube_bound_param = (1.0 / state.base_m) + (1.0 / state.base_n);
  return BalanceRateWithTail(facts, state.used_core_num, state.base_m, state.base_n,
                             CeilDiv(facts.m, state.base_m));
}

// Prunes a candidate before it pays for the balance model: once the best
// block is balanced, a memory-bound candidate with more re-reads cannot win;
// slow fp32 cube-bound plans that take more than one round of cores need
// blocks of at least kFp32MinBaseBlock.
inline bool SkipCandidate(const ProblemFacts& facts, const ChipSpec& chip, bool slow_fp32,
                          const CubeRunState& state, double balance, uint64_t cur_m, uint64_t cur_n,
                          uint64_t cur_m_blocks, double cur_param) {
  bool skip = balance >= kBalanceGoal && cur_param > state.cube_bound_param &&
              cur_param > state.cube_bound_edge && state.cube_bound_edge > 0;
  skip |= slow_fp32 && cur_param < state.cube_bound_edge &&
          ((cur_m < kFp32MinBaseBlock || cur_n < kFp32MinBaseBlock) &&
           cur_m_blocks * CeilDiv(facts.n, cur_n) > chip.aic_num);
  return skip;
}

// Keeps a candidate if it is cube bound and better balanced, or if its
// re-reads per unit of balance are lower (ties go to the better balance).
// A cube-bound winner also tightens the edge later candidates must meet.
// `best_score` is the best candidate's cube_bound_param / balance, kept
// with it.
inline void ConsiderCandidate(const BalanceModel& model, uint64_t cur_m, uint64_t cur_n,
                              uint64_t cur_m_blocks, double cur_param, double& balance,
                              double& best_score, CubeRunState& state) {
  const double cur_balance = model.Rate(cur_m, cur_n, cur_m_blocks);
  const bool cube_bound_better = cur_param <= state.cube_bound_edge && cur_balance > balance;
  const double cur_score = cur_param / cur_balance;
  const bool score_better =
      cur_score < best_score ||
      (std::abs(cur_score - best_score) < kScoreEpsilon && cur_balance > balance);
  if (cube_bound_better || score_better) {
    if (cube_bound_better) state.cube_bound_edge = cur_param;
    state.base_m = cur_m;
    state.base_n = cur_n;
    state.cube_bound_param = cur_param;
    balance = cur_balance;
    best_score = state.cube_bound_param / balance;
  }
}

// Walks candidates from the largest blocks down. Unsigned wrap-around ends
// each loop once the candidate drops below one alignment unit.
void SearchBaseBlock(const ProblemFacts& facts, const ChipSpec& chip, bool slow_fp32,
                     uint64_t buffer_limit, const BaseSearchBounds& bounds, double balance,
                     CubeRunState& state) {
  const BalanceModel model(facts, state.used_core_num);
  double best_score = state.cube_bound_param / balance;
  // A candidate's score is at least its re-read intensity (its balance is
  // at most 1; the factor covers the rounding of the balance and of the
  // score). One that is not cube bound and whose intensity alone is further
  // above the best score than the tie margin cannot be taken, and neither
  // can the narrower blocks after it in the row, which only re-read more.
  constexpr double kBalanceRoundingSlack = 1.0 - 1e-9;
  const bool bounded = model.BoundedByOne();
  const uint64_t max_m = bounds.max_m;
  for (uint64_t cur_m = max_m; cur_m >= 1 && cur_m <= max_m; cur_m -= bounds.align_m) {
    const uint64_t cur_max_n =
        std::min(bounds.max_n, FloorAlign(buffer_limit / kFp32Bytes / cur_m, bounds.align_n));
    const uint64_t cur_m_blocks = CeilDiv(facts.m, cur_m);
    for (uint64_t cur_n = cur_max_n; cur_n >= 1 && cur_n <= cur_max_n; cur_n -= bounds.align_n) {
      const double cur_param = (1.0 / cur_m) + (1.0 / cur_n);
      if (bounded && cur_param > state.cube_bound_edge &&
          cur_param * kBalanceRoundingSlack > best_score + kScoreEpsilon) {
        break;
      }
      if (SkipCandidate(facts, chip, slow_fp32, state, balance, cur_m, cur_n, cur_m_blocks,
                        cur_param)) {
        continue;
      }
      ConsiderCandidate(model, cur_m, cur_n, cur_m_blocks, cur_param, balance, best_score, state);
    }
  }
}

// The search may pick blocks larger than a small shape; clamping them to
// the shape first keeps base_k, the core count and the buffering decisions
// about the data that actually exists.
void FinishBlock(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                 CubeRunState& state) {
  state.base_m = std::min(CeilAlign(facts.m, kBlock16), state.base_m);
  state.base_n = std::min(CeilAlign(facts.n, kBlock16), state.base_n);
  ChooseBaseK(problem, facts, chip, state);
  const uint64_t batch = facts.batch_context ? facts.batch_a : 1;
  const uint64_t blocks = batch * CeilDiv(facts.m, state.base_m) * CeilDiv(facts.n, state.base_n);
  state.used_core_num = std::min(blocks, state.used_core_num);
  const uint64_t out_bytes = state.base_m * state.base_n * kFp32Bytes;
  state.l0c_db = L0cDoubleBuffer(chip, state.base_m, state.base_n);
  state.ub_db = out_bytes <= chip.ub_bytes ? kDoubleBuffer : 1;
}

}  // namespace

void RebalanceBlock(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                    CubeRunState& state) {
  const Roofline roof = ChipRoofline(problem, chip);
  const uint64_t buffer_limit = OutputBufferLimit(chip, state);
  state.cube_bound_edge = CubeBoundEdge(facts, chip, roof);
  const BaseSearchBounds bounds =
      SearchBounds(problem, facts, chip, roof, buffer_limit, state.cube_bound_edge);
  const double balance = SeedLargestBase(facts, buffer_limit, bounds, state);
  // The search keeps headroom below the exact edge (kCubeBoundMargin); the
  // alignment choice above used the exact one.
  state.cube_bound_edge *= kCubeBoundMargin;
  SearchBaseBlock(facts, chip, roof.slow_fp32, buffer_limit, bounds, balance, state);
  FinishBlock(problem, facts, chip, state);
}

void StageL1(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
             CubeRunState& state) {
  const uint64_t usable_l1 =
      chip.l1_bytes - (problem.has_bias ? state.base_n * kDoubleBuffer * kBiasL1Bytes : 0);
  StageL1Steps(KIsInnerAxis(problem), usable_l1, facts, chip, state);
}

void StageL1Steps(bool k_inner, uint64_t usable_l1, const ProblemFacts& facts,
                  const ChipSpec& chip, CubeRunState& state) {
  const uint64_t max_steps = std::min(CeilDiv(facts.k, state.base_k), kMaxL1KSteps);
  const uint64_t k_align = k_inner ? 512 / facts.a_bytes : kBlock16;
  // Elements of K in 256 bytes (computed once: the loop tests every stage
  // against it).
  const uint64_t k_align_256 = max_steps > 0 ? 256 / facts.a_bytes : 1;
  // value % align == 0, by a mask for the powers of two these alignments are
  // for every whole-byte element type.
  const auto aligned = [](uint64_t value, uint64_t align) {
    return (align & (align - 1)) == 0 ? (value & (align - 1)) == 0 : value % align == 0;
  };
  uint64_t chosen_k_l1 = 0;
  uint64_t copy_bytes = 0;  // the larger single GM->L1 copy of the chosen stage
  for (uint64_t steps = 1; steps <= max_steps; ++steps) {
    const uint64_t k_l1 = state.base_k * steps;
    const uint64_t a_bytes = state.base_m * k_l1 * facts.a_bytes;
    const uint64_t b_bytes = state.base_n * k_l1 * facts.b_bytes;
    if ((a_bytes + b_bytes) * kDoubleBuffer > usable_l1 ||
        std::max(a_bytes, b_bytes) * kDoubleBuffer * 2 > chip.l1_bytes) {
      break;
    }
    // Prefer stages that are 256-byte (then 512-byte) aligned in K while the
    // copies are still small enough to gain from growing.
    const bool first = chosen_k_l1 == 0;
    const bool aligned_256 = aligned(k_l1, k_align_256);
    const bool improves_alignment =
        !aligned(chosen_k_l1, k_align) && (aligned_256 || copy_bytes < kL1SingleCopyLimitBytes);
    const bool grows_small_copy = aligned(chosen_k_l1, k_align) && aligned(k_l1, k_align) &&
                                  copy_bytes < kL1SingleCopyLimitBytes;
    if (first || improves_alignment || grows_small_copy) {
      chosen_k_l1 = k_l1;
      copy_bytes = std::max(a_bytes, b_bytes);
    }
  }
  state.step_ka = chosen_k_l1 / state.base_k;
  state.step_kb = state.step_ka;
  state.depth_a1 = state.step_ka * kDoubleBuffer;
  state.depth_b1 = state.step_kb * kDoubleBuffer;
  state.single_core_m = state.base_m;
  state.single_core_n = state.base_n;
}

void SplitTailRound(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                    CubeRunState& state) {
  const uint64_t blocks = CeilDiv(facts.m, state.base_m) * CeilDiv(facts.n, state.base_n);
  const uint64_t tail_blocks = blocks <= chip.aic_num ? 0 : blocks % chip.aic_num;
  state.tail_m_cnt = 1;
  state.tail_n_cnt = 1;
  if (tail_blocks == 0) return;
  uint64_t& mt = state.tail_m_cnt;
  uint64_t& nt = state.tail_n_cnt;
  while ((mt + 1) * nt * tail_blocks <= chip.aic_num &&
         (!problem.trans_a || CeilDiv(state.base_m, mt) * facts.a_bytes > 128)) {
    ++mt;
    if (mt * (nt + 1) * tail_blocks <= chip.aic_num &&
        (problem.trans_b || CeilDiv(state.base_n, nt) * facts.b_bytes > 128)) {
      ++nt;
    }
  }
}

L0cToOut ChooseFixpipeOutput(const MatmulProblem& problem, const ProblemFacts& facts,
                             const ChipSpec& chip, const CubeRunState& state) {
  const bool small_k_large_m = facts.k <= kBlock256 && facts.m >= kBlock256;
  const uint64_t blocks =
      CeilDiv(facts.m, state.single_core_m) * CeilDiv(facts.n, state.single_core_n);
  const bool multi_round = blocks > chip.aic_num;
  const uint64_t row_bytes = facts.n * facts.c_bytes;
  const bool unaligned_n = row_bytes % 128 != 0 && row_bytes > kBlock256;
  if (!(small_k_large_m && multi_round && unaligned_n) || chip.aiv_num != 2 * chip.aic_num) {
    return L0cToOut::kOnTheFly;
  }
  return problem.dtype_a == DataType::kFloat32 ? L0cToOut::kNdFixpipe1To2
                                               : L0cToOut::kNdFixpipe1To1;
}

void LimitBaseNForBias(const MatmulProblem& problem, const ChipSpec& chip, CubeRunState& state) {
  if (problem.has_bias) {
    state.base_n = std::min(std::max<uint64_t>(chip.bt_bytes, kBlock256), state.base_n);
  }
}

uint64_t L2CacheDisableMode(const MatmulProblem& problem, const ProblemFacts& facts,
                            const ChipSpec& chip, const CubeRunState& state, uint64_t m_l1,
                            uint64_t k_l1, uint64_t n_l1) {
  return L2CacheDisableMode(problem.trans_a, problem.trans_b, facts, chip, state, m_l1, k_l1, k_l1,
                            n_l1);
}

uint64_t L2CacheDisableMode(bool trans_a, bool trans_b, const ProblemFacts& facts,
                            const ChipSpec& chip, const CubeRunState& state, uint64_t m_l1,
                            uint64_t ka_l1, uint64_t kb_l1, uint64_t n_l1) {
  const uint64_t inner_a = trans_a ? facts.m : facts.k;
  const uint64_t inner_b = trans_b ? facts.k : facts.n;
  const bool a_cut_aligned = (trans_a ? m_l1 : ka_l1) * facts.a_bytes % 128 == 0;
  const bool b_cut_aligned = (trans_b ? kb_l1 : n_l1) * facts.b_bytes % 128 == 0;
  // In the batch context every batch of each tensor counts
  // (SetDisableL2cache, matmul_v3_base_tiling_advanced.h).
  const bool batched = facts.batch_context;
  const uint64_t total_bytes = facts.m * facts.n * facts.c_bytes * (batched ? facts.batch_c : 1) +
                               facts.m * facts.k * facts.a_bytes * (batched ? facts.batch_a : 1) +
                               facts.k * facts.n * facts.b_bytes * (batched ? facts.batch_b : 1);
  if (total_bytes < chip.l2_bytes) return 0;
  const bool a_once = state.base_n >= facts.n && state.tail_n_cnt <= 1 &&
                      inner_a * facts.a_bytes % 128 == 0 && a_cut_aligned;
  const bool b_once = state.base_m >= facts.m && state.tail_m_cnt <= 1 &&
                      inner_b * facts.b_bytes % 128 == 0 && b_cut_aligned;
  return (a_once ? 1 : 0) | (b_once ? 2 : 0);
}

void FillBasicTilingData(const MatmulProblem& problem, const ProblemFacts& facts,
                         const ChipSpec& chip, const CubeRunState& state, TilingPlan& plan) {
  // CANN stages at most 4 K slices per L1 buffer in the basic kernels.
  constexpr uint64_t kMaxKernelKSteps = 4;
  const uint64_t m_l1 = std::min(CeilAlign(facts.m, kBlock16), state.base_m * state.step_m);
  const uint64_t n_l1 = std::min(CeilAlign(facts.n, kBlock16), state.base_n * state.step_n);
  const uint64_t k_l1 =
      state.base_k * std::min(kMaxKernelKSteps, std::min(state.step_ka, state.step_kb));

  BlockTiling& block = plan.block;
  block.base_m = state.base_m;
  block.base_n = state.base_n;
  block.base_k = state.base_k;
  block.m_l1 = m_l1;
  block.n_l1 = n_l1;
  block.k_l1 = k_l1;
  block.step_m = state.step_m;
  block.step_n = state.step_n;
  block.step_ka = state.step_ka;
  block.step_kb = state.step_kb;
  block.depth_a1 = state.depth_a1;
  block.depth_b1 = state.depth_b1;
  block.single_core_m = state.single_core_m;
  block.single_core_n = state.single_core_n;
  block.single_core_k = state.single_core_k;
  block.m_tail_cnt = state.tail_m_cnt;
  block.n_tail_cnt = state.tail_n_cnt;
  block.k_cnt = state.tail_k_cnt;
  block.l1_buffer_num = state.l1_buffer_num;
  block.l0c_db = state.l0c_db;
  block.ub_db = state.ub_db;

  // The struct's block fields come from `block`; the rest are set here.
  const uint64_t slice_m = facts.slice_m_override != 0 ? facts.slice_m_override : state.base_m;
  plan.data = NewTilingData<BasicField>();
  WriteBlockFields(block, plan.data);
  const TilingStructWriter<BasicField> put(plan.data);
  put(BasicField::kUsedCoreNum, state.used_core_num);
  put(BasicField::kM, facts.m);
  put(BasicField::kN, facts.n);
  put(BasicField::kK, facts.k);
  put(BasicField::kMBaseTailSplitCnt, state.m_base_tail_split_cnt);
  put(BasicField::kNBaseTailSplitCnt, state.n_base_tail_split_cnt);
  put(BasicField::kMTailMain, state.m_tail_main);
  put(BasicField::kNTailMain, state.n_tail_main);
  put(BasicField::kMmadParam, problem.hf32 ? 1u : 0u);
  put(BasicField::kL2CacheDisable,
      L2CacheDisableMode(problem, facts, chip, state, m_l1, k_l1, n_l1));
  put(BasicField::kSliceM, slice_m);
  put(BasicField::kSrcNdStride, facts.src_nd_stride);
  put(BasicField::kRowStride, facts.row_stride);
  put(BasicField::kInnerBatch, 0);
}

void FillBatchBasicTilingData(const MatmulProblem& problem, const ProblemFacts& facts,
                              const ChipSpec& chip, const CubeRunState& state, TilingPlan& plan) {
  FillBasicTilingData(problem, facts, chip, state, plan);
  // The batch struct repeats the basic one's fields in the same order.
  TilingData batch = NewTilingData<BatchBasicField>();
  for (size_t i = 0; i < plan.data.fields.size(); ++i) {
    batch.fields[i].value = plan.data.fields[i].value;
  }
  Set(batch, BatchBasicField::kBatchDimAll, facts.batch_c);
  Set(batch, BatchBasicField::kBatchX3, facts.batch_x3);
  plan.data = std::move(batch);
}

}  // namespace npu::tiling
