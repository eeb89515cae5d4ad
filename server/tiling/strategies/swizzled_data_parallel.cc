#include "server/tiling/strategies/swizzled_data_parallel.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/custom_plans.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"

namespace npu::tiling {
namespace {

// With four L1 buffers the streamed operand is quadruple-buffered.
constexpr uint64_t kQuadBuffer = 4;

bool CubeBound(const CubeRunState& state) {
  return state.cube_bound_param <= state.cube_bound_edge;
}

// What keeps an operand from staying resident in L1: whether something does,
// and in words what (only when the facts ask for the plan's detail).
struct Obstacle {
  bool found = false;
  LazyText why;
};

Obstacle Found(LazyText why) { return {true, std::move(why)}; }

// Why A may not stay resident in L1 (none found when it may).
Obstacle AFullLoadObstacle(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip, const SwizzledChoice& choice) {
  const CubeRunState& s = choice.state;
  if (choice.out != L0cToOut::kOnTheFly) return Found("fixpipe output chosen");
  if (CubeBound(s)) return Found("already cube bound");
  const uint64_t m_cnt = CeilDiv(facts.m, s.single_core_m);
  const uint64_t n_cnt = CeilDiv(facts.n, s.single_core_n);
  if (n_cnt <= chip.aic_num) {
    return Found(
        Describe(facts, "n blocks ", n_cnt, " <= aic ", chip.aic_num, ": no re-read to save"));
  }
  if (facts.k <= 128 && m_cnt != 1) return Found("K <= 128 with several m blocks (fixpipe bound)");
  const uint64_t a_bytes =
      CeilAlign(facts.m, kBlock16) * CeilAlign(facts.k, kBlock16) * facts.a_bytes;
  const uint64_t bias_bytes = problem.has_bias ? s.base_n * kDoubleBuffer * facts.bias_bytes : 0;
  if (a_bytes + bias_bytes > ResidentLimitBytes(chip)) {
    return Found(
        Describe(facts, "A ", a_bytes + bias_bytes, " B > 3/4 L1 ", ResidentLimitBytes(chip)));
  }
  return {};
}

Obstacle BFullLoadObstacle(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip, const SwizzledChoice& choice) {
  const CubeRunState& s = choice.state;
  if (CubeBound(s)) return Found("already cube bound");
  const uint64_t m_cnt = CeilDiv(facts.m, s.single_core_m);
  if (m_cnt <= chip.aic_num) {
    return Found(
        Describe(facts, "m blocks ", m_cnt, " <= aic ", chip.aic_num, ": no re-read to save"));
  }
  const uint64_t n_aligned = CeilAlign(facts.n, kBlock16);
  const uint64_t b_bytes = n_aligned * CeilAlign(facts.k, kBlock16) * facts.b_bytes;
  const uint64_t bias_bytes = problem.has_bias ? n_aligned * facts.bias_bytes : 0;
  if (b_bytes + bias_bytes > ResidentLimitBytes(chip)) {
    return Found(
        Describe(facts, "B ", b_bytes + bias_bytes, " B > 3/4 L1 ", ResidentLimitBytes(chip)));
  }
  return {};
}

// Chooses how many base_k slices of the streamed operand one L1 stage holds:
// the first count whose copy reaches 48 KiB and, when K is the streamed
// operand's inner axis, is 256-byte aligned.
uint64_t StreamedKSteps(uint64_t base_k, uint64_t other_edge, uint64_t elem_bytes, bool k_inner,
                        uint64_t max_steps) {
  uint64_t steps = 1;
  for (; steps < max_steps; ++steps) {
    const uint64_t k_l1 = base_k * steps;
    if (other_edge * k_l1 * elem_bytes < kL1SingleCopyLimitBytes) continue;
    if (k_inner && k_l1 % (256 / elem_bytes) != 0) continue;
    break;
  }
  return steps;
}

// The error for a platform whose L1 or L0C leaves no room for a 16-wide
// block of the streamed operand next to the resident one.
absl::Status NoBlockFits(std::string_view resident, std::string_view field, const ChipSpec& chip,
                         uint64_t max_by_l1, uint64_t max_by_l0c) {
  return absl::FailedPreconditionError(
      absl::StrCat("with ", std::string(resident), " resident in L1, ", std::string(field),
                   " has no 16-aligned width left: l1_bytes=", chip.l1_bytes, " allows ", max_by_l1,
                   ", l0c_bytes=", chip.l0c_bytes, " allows ", max_by_l0c));
}

void ResetTailBalance(CubeRunState& s) {
  s.m_base_tail_split_cnt = 1;
  s.n_base_tail_split_cnt = 1;
  s.m_tail_main = 0;
  s.n_tail_main = 0;
}

}  // namespace

// A stays in L1 for the whole kernel; each core streams its own columns of B.
absl::Status PlanAFullLoad(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip, CubeRunState& s) {
  ResetTailBalance(s);
  const uint64_t m_aligned = CeilAlign(facts.m, kBlock16);
  const uint64_t k_aligned = CeilAlign(facts.k, kBlock16);
  s.step_m = CeilDiv(m_aligned, s.base_m);
  s.step_ka = CeilDiv(k_aligned, s.base_k);
  const uint64_t a_bytes = m_aligned * k_aligned * facts.a_bytes;
  const uint64_t bias_bytes = problem.has_bias ? s.base_n * kDoubleBuffer * facts.bias_bytes : 0;
  const uint64_t free_l1 = chip.l1_bytes - (a_bytes + bias_bytes);
  const uint64_t max_n_by_l1 = free_l1 / (s.base_k * facts.b_bytes * kDoubleBuffer);
  const uint64_t max_n_by_l0c = chip.l0c_bytes / (s.base_m * kFp32Bytes * kDoubleBuffer);
  const uint64_t max_n = FloorAlign(std::min(max_n_by_l1, max_n_by_l0c), kBlock16);
  // MatMulV3 spreads N over the cores; in the batch context the batches
  // already do, so the buffers alone bound base_n (DoAL1FullLoad,
  // matmul_v3_basic_aswt_tiling.cpp).
  const uint64_t balanced_n =
      facts.batch_context ? max_n : CeilAlign(CeilDiv(facts.n, chip.aic_num), kBlock16);
  s.base_n = std::min(s.base_n, std::min(max_n, balanced_n));
  if (s.base_n == 0) {
    // CANN divides by this width next; on real chips it is never empty.
    return NoBlockFits("A", "base_n", chip, max_n_by_l1, max_n_by_l0c);
  }
  // With N as B's inner axis, keep base_n 128-byte aligned.
  const uint64_t align = 128 / facts.b_bytes;
  if (!problem.trans_b && s.base_n > align) s.base_n = FloorAlign(s.base_n, align);
  const uint64_t max_steps_by_l1 = free_l1 / (s.base_k * s.base_n * kDoubleBuffer * facts.b_bytes);
  const uint64_t max_steps =
      std::min(std::min(CeilDiv(facts.k, s.base_k), max_steps_by_l1), kMaxStreamedKSteps);
  // K-inner B whose L1 stage cannot reach 256 bytes: try a doubled base_k.
  if (problem.trans_b && max_steps == max_steps_by_l1 && max_steps * s.base_k % 256 != 0 &&
      (s.base_k << 1) * s.base_m * facts.a_bytes * kDoubleBuffer <= chip.l0a_bytes) {
    s.base_k <<= 1;
    const uint64_t max_n_by_l0b = chip.l0b_bytes / (s.base_k * facts.b_bytes * kDoubleBuffer);
    s.base_n = std::min(s.base_n, max_n_by_l0b);
    s.step_ka = CeilDiv(k_aligned, s.base_k);
  }
  s.step_kb = StreamedKSteps(s.base_k, s.base_n, facts.b_bytes, problem.trans_b, max_steps);
  s.depth_a1 = s.step_m * s.step_ka;
  s.depth_b1 = s.step_kb * kDoubleBuffer;
  s.single_core_m = facts.m;
  s.single_core_n = s.base_n;
  const uint64_t b_quad = s.base_k * s.step_kb * s.base_n * facts.b_bytes * kQuadBuffer;
  const uint64_t bias_quad = bias_bytes / kDoubleBuffer * kQuadBuffer;
  s.l1_buffer_num = b_quad + a_bytes + bias_quad > chip.l1_bytes ? kDoubleBuffer : kQuadBuffer;
  s.l0c_db = L0cDoubleBuffer(chip, s.base_m, s.base_n);
  const uint64_t batch = facts.batch_context ? facts.batch_c : 1;
  s.used_core_num = std::min<uint64_t>(CeilDiv(facts.n, s.base_n) * batch, chip.aic_num);
  // Tail round: split the last columns' blocks along N only.
  SplitTailRoundAlong(problem, facts, chip, CeilDiv(facts.n, s.base_n), /*along_n=*/true, s);
  return absl::OkStatus();
}

// B stays in L1 for the whole kernel; each core streams its own rows of A.
absl::Status PlanBFullLoad(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip, CubeRunState& s) {
  ResetTailBalance(s);
  const uint64_t n_aligned = CeilAlign(facts.n, kBlock16);
  const uint64_t k_aligned = CeilAlign(facts.k, kBlock16);
  s.step_n = CeilDiv(n_aligned, s.base_n);
  s.step_kb = CeilDiv(k_aligned, s.base_k);
  const uint64_t b_bytes = n_aligned * k_aligned * facts.b_bytes;
  const uint64_t bias_bytes = problem.has_bias ? n_aligned * facts.bias_bytes : 0;
  const uint64_t free_l1 = chip.l1_bytes - (b_bytes + bias_bytes);
  const uint64_t max_m_by_l1 = free_l1 / (s.base_k * facts.a_bytes * kDoubleBuffer);
  const uint64_t max_m_by_l0c = chip.l0c_bytes / (s.base_n * kFp32Bytes * kDoubleBuffer);
  const uint64_t max_m = FloorAlign(std::min(max_m_by_l1, max_m_by_l0c), kBlock16);
  // As for A resident: the batch context bounds base_m by the buffers only.
  const uint64_t balanced_m =
      facts.batch_context ? max_m : CeilAlign(CeilDiv(facts.m, chip.aic_num), kBlock16);
  s.base_m = std::min(s.base_m, std::min(max_m, balanced_m));
  if (s.base_m == 0) return NoBlockFits("B", "base_m", chip, max_m_by_l1, max_m_by_l0c);
  // With M as A's inner axis, keep base_m 128-byte aligned (CANN measures
  // the alignment in B's element size here).
  const uint64_t align = 128 / facts.b_bytes;
  if (problem.trans_a && s.base_m > align) s.base_m = FloorAlign(s.base_m, align);
  const uint64_t max_steps_by_l1 = free_l1 / (s.base_k * s.base_m * kDoubleBuffer * facts.a_bytes);
  const uint64_t max_steps =
      std::min(std::min(CeilDiv(facts.k, s.base_k), max_steps_by_l1), kMaxStreamedKSteps);
  if (!problem.trans_a && max_steps == max_steps_by_l1 && max_steps * s.base_k % 256 != 0 &&
      (s.base_k << 1) * s.base_n * facts.b_bytes * kDoubleBuffer <= chip.l0b_bytes) {
    s.base_k <<= 1;
    const uint64_t max_m_by_l0a = chip.l0a_bytes / (s.base_k * facts.a_bytes * kDoubleBuffer);
    s.base_m = std::min(s.base_m, max_m_by_l0a);
    s.step_kb = CeilDiv(k_aligned, s.base_k);
  }
  s.step_ka = StreamedKSteps(s.base_k, s.base_m, facts.a_bytes, !problem.trans_a, max_steps);
  s.depth_a1 = s.step_ka * kDoubleBuffer;
  s.depth_b1 = s.step_n * s.step_kb;
  s.single_core_m = s.base_m;
  s.single_core_n = facts.n;
  const uint64_t a_quad = s.base_k * s.step_ka * s.base_m * facts.a_bytes * kQuadBuffer;
  const uint64_t bias_quad = bias_bytes / kDoubleBuffer * kQuadBuffer;
  s.l1_buffer_num = a_quad + b_bytes + bias_quad > chip.l1_bytes ? kDoubleBuffer : kQuadBuffer;
  const uint64_t out_bytes = s.base_m * s.base_n * kFp32Bytes;
  s.l0c_db = L0cDoubleBuffer(chip, s.base_m, s.base_n);
  s.ub_db = out_bytes <= chip.ub_bytes ? kDoubleBuffer : 1;
  const uint64_t batch = facts.batch_context ? facts.batch_c : 1;
  s.used_core_num = std::min<uint64_t>(CeilDiv(facts.m, s.base_m) * batch, chip.aic_num);
  SplitTailRoundAlong(problem, facts, chip, CeilDiv(facts.m, s.base_m), /*along_n=*/false, s);
  return absl::OkStatus();
}

namespace {

void ChooseFp32SplitK(const MatmulProblem& problem, const ProblemFacts& facts,
                      SwizzledChoice& choice) {
  if (UsesFp32SplitK(problem, facts) && choice.full_load == FullLoad::kNone) {
    choice.model = KernelModel::kBasicSplitK;
    if (facts.describe)
      choice.detail = LazyText::Of(std::move(choice.detail), "; fp32 K=", facts.k,
                                   " >= 2048: split K in the core");
  }
}

void ChooseApiLevelAndModel(const MatmulProblem& problem, const ProblemFacts& facts,
                            SwizzledChoice& choice) {
  choice.api_level = problem.avoid_tensor_api ? ApiLevel::kBasic : ApiLevel::kTensor;
  if (facts.a_slice_3d) choice.model = KernelModel::kSlice;
}

// The blocks every variant starts from: roofline-balanced base blocks, the
// tail round split over idle cores, L1 stages and the output path.
void ChooseBlocks(const MatmulProblem& problem, const ProblemFacts& facts, const ChipSpec& chip,
                  SwizzledChoice& choice) {
  CubeRunState& s = choice.state;
  ResetBase(facts, chip, s);
  RebalanceBlock(problem, facts, chip, s);
  SplitTailRound(problem, facts, chip, s);
  StageL1(problem, facts, chip, s);
  choice.out = ChooseFixpipeOutput(problem, facts, chip, s);
}

// A resident in L1: each core reads A once and streams only B.
absl::Status KeepAResident(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip, SwizzledChoice& choice) {
  if (absl::Status status = PlanAFullLoad(problem, facts, chip, choice.state); !status.ok()) {
    return status;
  }
  choice.full_load = FullLoad::kA;
  choice.detail = "A resident in L1";
  ChooseFp32SplitK(problem, facts, choice);
  ChooseApiLevelAndModel(problem, facts, choice);
  return absl::OkStatus();
}

// B resident in L1; the answer says why A could not be.
absl::Status KeepBResident(const MatmulProblem& problem, const ProblemFacts& facts,
                           const ChipSpec& chip, const LazyText& a_obstacle,
                           SwizzledChoice& choice) {
  if (absl::Status status = PlanBFullLoad(problem, facts, chip, choice.state); !status.ok()) {
    return status;
  }
  choice.full_load = FullLoad::kB;
  choice.detail = Describe(facts, "B resident in L1 (A full load: ", a_obstacle, ")");
  ChooseApiLevelAndModel(problem, facts, choice);
  return absl::OkStatus();
}

// Neither operand resident: both stream through L1, which must hold two
// stages of each (a chip whose L1 cannot is a precondition failure, not our
// bug).
absl::Status StreamBoth(const MatmulProblem& problem, const ProblemFacts& facts,
                        const ChipSpec& chip, const LazyText& a_obstacle,
                        const LazyText& b_obstacle, SwizzledChoice& choice) {
  const CubeRunState& s = choice.state;
  if (!StageStreamedL1(problem, facts, chip, choice.state)) {
    return absl::FailedPreconditionError(
        absl::StrCat("l1_bytes=", chip.l1_bytes, " cannot hold two stages of ", s.base_m, "x",
                     s.base_k, " A and ", s.base_n, "x", s.base_k, " B blocks"));
  }
  choice.detail = Describe(facts, "A/B streamed (A full load: ", a_obstacle,
                           "; B full load: ", b_obstacle, ")");
  ChooseFp32SplitK(problem, facts, choice);
  ChooseApiLevelAndModel(problem, facts, choice);
  return absl::OkStatus();
}

// The fixpipe-bound case: a short K cannot hide an unaligned output row, so
// the output leaves through the AIV cores.
void OutputThroughAiv(const MatmulProblem& problem, const ProblemFacts& facts,
                      SwizzledChoice& choice) {
  choice.detail = Describe(facts, "fixpipe-bound output through AIV (K=", facts.k,
                           " <= 256, M=", facts.m, " >= 256, N row unaligned)");
  // CANN leaves the API level at BASIC for slice views here.
  if (!facts.a_slice_3d) ChooseApiLevelAndModel(problem, facts, choice);
}

// Chooses what stays resident in L1, in order of preference: A, then B,
// then neither. Each obstacle found on the way is kept for the answer's
// detail line; B's is only looked for once A is ruled out.
absl::Status ChooseResidency(const MatmulProblem& problem, const ProblemFacts& facts,
                             const ChipSpec& chip, SwizzledChoice& choice) {
  const Obstacle a_obstacle =
      facts.a_slice_3d ? Found("slice view") : AFullLoadObstacle(problem, facts, chip, choice);
  if (!a_obstacle.found) return KeepAResident(problem, facts, chip, choice);
  const Obstacle b_obstacle =
      facts.a_slice_3d ? Found("slice view") : BFullLoadObstacle(problem, facts, chip, choice);
  if (!b_obstacle.found) return KeepBResident(problem, facts, chip, a_obstacle.why, choice);
  if (choice.out == L0cToOut::kOnTheFly) {
    return StreamBoth(problem, facts, chip, a_obstacle.why, b_obstacle.why, choice);
  }
  OutputThroughAiv(problem, facts, choice);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SwizzledChoice> ChooseSwizzledPlan(const MatmulProblem& problem,
                                                  const ProblemFacts& facts, const ChipSpec& chip) {
  SwizzledChoice choice;
  ChooseBlocks(problem, facts, chip, choice);
  if (absl::Status status = ChooseResidency(problem, facts, chip, choice); !status.ok()) {
    return status;
  }
  return choice;
}

TilingPlan PackSwizzledPlan(const MatmulProblem& problem, const ProblemFacts& facts,
                            const ChipSpec& chip, SwizzledChoice& choice) {
  const CubeRunState& s = choice.state;
  TilingPlan plan;
  plan.key.api_level = choice.api_level;
  plan.key.trans_a = problem.trans_a;
  plan.key.trans_b = problem.trans_b;
  plan.key.model = choice.model;
  plan.key.full_load = choice.full_load;
  plan.key.l0c2out = choice.out;
  plan.block_dim = static_cast<uint32_t>(s.used_core_num);
  plan.kernel_type = KernelTypeOf(KernelId::kMatMulCube, plan.key);
  plan.workspace_bytes = kRuntimeWorkspaceBytes;
  plan.detail = std::move(choice.detail);
  FillBasicTilingData(problem, facts, chip, s, plan);
  return plan;
}

Capability SwizzledDataParallelStrategy::IsCapable(const MatmulProblem& problem,
                                                   const ProblemFacts& facts,
                                                   const ChipSpec& /*chip*/) const {
  // CANN's order never brings K = 0 here (K_EQUAL_ZERO comes first, and a
  // bias needs K >= 1); only a forced strategy can, and the block sizing
  // divides by the L0 bytes of a K step.
  if (problem.k == 0) {
    return Capability::No(
        Explain(facts, "K=0 leaves the cube nothing to multiply (K_EQUAL_ZERO clears C)"));
  }
  return Capability::Yes(Explain(facts, "always capable (fallback)"));
}

absl::StatusOr<TilingPlan> SwizzledDataParallelStrategy::DoTiling(const MatmulProblem& problem,
                                                                  const ProblemFacts& facts,
                                                                  const ChipSpec& chip) const {
  absl::StatusOr<SwizzledChoice> choice = ChooseSwizzledPlan(problem, facts, chip);
  if (!choice.ok()) return choice.status();
  LimitBaseNForBias(problem, chip, choice->state);
  return PackSwizzledPlan(problem, facts, chip, *choice);
}

}  // namespace npu::tiling
