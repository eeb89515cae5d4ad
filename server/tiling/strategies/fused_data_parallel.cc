#include "server/tiling/strategies/fused_data_parallel.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/strategies/fused_zero_k.h"
#include "server/tiling/strategies/swizzled_data_parallel.h"

namespace npu::tiling {
namespace {

// add / mul count N <= 32 with K <= 4096 as narrow; the other epilogues
// N < 16. Tail pieces of a narrow block stay at least 32 columns wide.
constexpr uint64_t kX3SmallNLimit = 32;
constexpr uint64_t kX3SmallNMaxK = 4096;
constexpr uint64_t kSmallNLimit = 16;
// The narrow-N kernels size base_k against a 64 KiB L0A whatever the chip.
constexpr uint64_t kSmallNL0aBytes = 64 * 1024;
// With four L1 buffers the streamed A is quadruple-buffered.
constexpr uint64_t kQuadBuffer = 4;

// base_m a narrow-N block aims for: add / mul stream x3 tiles through UB,
// halved for fp32; the others trade M against a longer K.
uint64_t SmallNTargetBaseM(const MatmulProblem& problem, const ProblemFacts& facts) {
  if (TraitsOf(problem.fused.op).reads_x3) {
    return problem.dtype_a == DataType::kFloat32 ? 512 : 1024;
  }
  if (facts.k >= 2048) return 256;
  if (facts.k >= 128) return 512;
  return 1024;
}

uint64_t SmallNBaseK(const MatmulProblem& problem, const ProblemFacts& facts, uint64_t base_m,
                     uint64_t base_n) {
  // fp32 with K inner in both operands loads 32-byte K steps.
  const uint64_t align =
      (!problem.trans_a && problem.trans_b && problem.dtype_a == DataType::kFloat32)
          ? 32 / facts.a_bytes
          : kBlock16;
  const uint64_t k_aligned = CeilAlign(facts.k, align);
  const uint64_t k_max =
      FloorAlign(kSmallNL0aBytes / kDoubleBuffer / facts.a_bytes / std::max(base_m, base_n), align);
  return std::min(k_aligned, k_max);
}

// Spreads the tail round's blocks over idle cores, M first; N is split
// only while the pieces stay kX3SmallNLimit columns wide.
void SpreadSmallNTail(const ChipSpec& chip, uint64_t tail, CubeRunState& s) {
  s.tail_m_cnt = 1;
  s.tail_n_cnt = 1;
  s.m_base_tail_split_cnt = 1;
  s.n_base_tail_split_cnt = 1;
  s.m_tail_main = 0;
  s.n_tail_main = 0;
  if (tail == 0) return;
  while ((s.tail_m_cnt + 1) * s.tail_n_cnt * tail <= chip.aic_num) {
    ++s.tail_m_cnt;
    const uint64_t n_piece = s.base_n / (s.tail_n_cnt + 1);
    if (n_piece >= kX3SmallNLimit && s.tail_m_cnt * (s.tail_n_cnt + 1) * tail <= chip.aic_num) {
      ++s.tail_n_cnt;
    }
  }
}

// B stays resident after the narrow-N widening: B's K steps cover all of
// K, A's stages fill the rest of L1, and the buffers are re-derived for
// the new blocks (UpdateBFullLoadDepth).
void RestageAroundResidentB(const MatmulProblem& problem, const ProblemFacts& facts,
                            const ChipSpec& chip, CubeRunState& s) {
  const uint64_t n_aligned = CeilAlign(facts.n, kBlock16);
  const uint64_t b_bytes = CeilAlign(facts.k, kBlock16) * n_aligned * facts.b_bytes;
  const uint64_t bias_bytes = problem.has_bias ? n_aligned * facts.bias_bytes : 0;
  s.step_kb = CeilDiv(facts.k, s.base_k);
  s.depth_b1 = CeilDiv(facts.n, s.base_n) * s.step_kb;
  if (chip.l1_bytes <= b_bytes + bias_bytes) return;
  const uint64_t free_l1 = chip.l1_bytes - b_bytes - bias_bytes;
  const uint64_t a_step_bytes = s.base_m * s.base_k * facts.a_bytes;
  s.step_ka = std::max<uint64_t>(free_l1 / kDoubleBuffer / a_step_bytes, 1);
  s.depth_a1 = s.step_ka * kDoubleBuffer;
  const uint64_t a_quad = s.base_k * s.step_ka * s.base_m * facts.a_bytes * kQuadBuffer;
  s.l1_buffer_num =
      a_quad + b_bytes + bias_bytes * kQuadBuffer > chip.l1_bytes ? kDoubleBuffer : kQuadBuffer;
  s.l0c_db = L0cDoubleBuffer(chip, s.base_m, s.base_n);
  s.ub_db = s.base_m * s.base_n * kFp32Bytes <= chip.ub_bytes ? kDoubleBuffer : 1;
  s.single_core_m = s.base_m;
  s.single_core_n = facts.n;
}

// The plan of the gelu epilogue: swizzled blocks with both operands
// streamed and written on the fly (MatMulV3AswTiling's steps), widened for
// a narrow N.
absl::StatusOr<SwizzledChoice> ChooseGeluPlan(const MatmulProblem& problem,
                                              const ProblemFacts& facts, const ChipSpec& chip) {
  SwizzledChoice choice;
  CubeRunState& s = choice.state;
  ResetBase(facts, chip, s);
  RebalanceBlock(problem, facts, chip, s);
  SplitTailRound(problem, facts, chip, s);
  StageL1(problem, facts, chip, s);
  const bool small_n = IsSmallN(problem, facts);
  if (small_n) WidenSmallNBlocks(problem, facts, chip, s);
  if (!StageStreamedL1(problem, facts, chip, s)) {
    return absl::FailedPreconditionError(
        absl::StrCat("l1_bytes=", chip.l1_bytes, " cannot hold two stages of ", s.base_m, "x",
                     s.base_k, " A and ", s.base_n, "x", s.base_k, " B blocks"));
  }
  choice.detail = Describe(facts, "gelu epilogue: A/B streamed", small_n ? ", narrow N" : "");
  return choice;
}

// The plan of the other epilogues: MatMulV3's BASIC_ASWT decision, then
// the narrow-N widening of add / mul around a resident B.
absl::StatusOr<SwizzledChoice> ChooseEpiloguePlan(const MatmulProblem& problem,
                                                  const ProblemFacts& facts, const ChipSpec& chip) {
  absl::StatusOr<SwizzledChoice> choice = ChooseSwizzledPlan(problem, facts, chip);
  if (!choice.ok()) return choice;
  // The epilogue kernels have no 1:1 ND fixpipe; the plan made for it is
  // written on the fly.
  if (choice->out == L0cToOut::kNdFixpipe1To1) choice->out = L0cToOut::kOnTheFly;
  if (TraitsOf(problem.fused.op).reads_x3 && IsSmallN(problem, facts) &&
      choice->full_load == FullLoad::kB) {
    WidenSmallNBlocks(problem, facts, chip, choice->state);
    RestageAroundResidentB(problem, facts, chip, choice->state);
    if (facts.describe) {
      choice->detail =
          LazyText::Of(std::move(choice->detail), "; narrow N: blocks widened along M");
    }
  }
  return choice;
}

}  // namespace

bool IsSmallN(const MatmulProblem& problem, const ProblemFacts& facts) {
  if (TraitsOf(problem.fused.op).reads_x3) {
    return facts.n <= kX3SmallNLimit && facts.k <= kX3SmallNMaxK;
  }
  return facts.n < kSmallNLimit;
}

void WidenSmallNBlocks(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip, CubeRunState& s) {
  const uint64_t target_m = SmallNTargetBaseM(problem, facts);
  const uint64_t base_n = CeilAlign(facts.n, kBlock16);
  const uint64_t max_m_by_l0c =
      chip.l0c_bytes / kDoubleBuffer / std::max(base_n, kBlock16) / kFp32Bytes;
  if (max_m_by_l0c < target_m) return;
  const uint64_t base_m = std::min(CeilAlign(facts.m, kBlock16), target_m);
  const uint64_t base_k = SmallNBaseK(problem, facts, base_m, base_n);
  if (base_k == 0) return;
  s.base_m = base_m;
  s.base_n = base_n;
  s.l0c_db = kDoubleBuffer;
  s.base_k = base_k;
  const uint64_t tiles = CeilDiv(facts.m, s.base_m) * CeilDiv(facts.n, s.base_n);
  SpreadSmallNTail(chip, tiles <= chip.aic_num ? 0 : tiles % chip.aic_num, s);
  s.used_core_num = std::min<uint64_t>(tiles, chip.aic_num);
}

Capability FusedDataParallelStrategy::IsCapable(const MatmulProblem& problem,
                                                const ProblemFacts& facts,
                                                const ChipSpec& chip) const {
  if (facts.batch_c > 1) {
    return Capability::No(
        Explain(facts, "batch-axis of y cannot be greater than 1 (batch_c=", facts.batch_c, ")"));
  }
  if (problem.format_a != Format::kNd || problem.format_b != Format::kNd) {
    return Capability::No(Explain(facts, "ND is the only format of the basic-API kernels"));
  }
  const bool aiv_epilogue = TraitsOf(problem.fused.op).on_vector_cores;
  if (aiv_epilogue && chip.aiv_num != 2 * chip.aic_num) {
    return Capability::No(Explain(facts, "fused_op ", std::string(FusedOpName(problem.fused.op)),
                                  " needs aiv=2*aic, got aiv=", chip.aiv_num,
                                  " aic=", chip.aic_num));
  }
  return Capability::Yes(Explain(facts, "one batch, ND inputs"));
}

absl::StatusOr<TilingPlan> FusedDataParallelStrategy::DoTiling(const MatmulProblem& problem,
                                                               const ProblemFacts& facts,
                                                               const ChipSpec& chip) const {
  // K_EQUAL_ZERO takes k = 0 except for 16CAST32 (and a forced strategy);
  // CANN's block rebalancing then divides by the bytes of a K step.
  if (problem.k == 0) {
    return CannFaultError("the block rebalancing of BASIC_ASWT divides by the bytes of K=0");
  }
  const bool gelu = TraitsOf(problem.fused.op).gelu;
  absl::StatusOr<SwizzledChoice> choice =
      gelu ? ChooseGeluPlan(problem, facts, chip) : ChooseEpiloguePlan(problem, facts, chip);
  if (!choice.ok()) return choice.status();
  LimitBaseNForBias(problem, chip, choice->state);
  TilingPlan plan = PackSwizzledPlan(problem, facts, chip, *choice);
  const TilingKey packed = plan.key;
  plan.key = FusedKey(problem);
  plan.key.api_level = ApiLevel::kBasic;
  plan.key.trans_a = problem.trans_a;
  plan.key.trans_b = problem.trans_b;
  plan.key.full_load = packed.full_load;
  plan.key.l0c2out = packed.l0c2out;
  // The AIV cores run the add / mul / gelu epilogue and any fixpipe output.
  plan.kernel_type = KernelTypeOf(KernelId::kMatMulCube, plan.key);
  if (gelu && IsSmallN(problem, facts)) {
    // The gelu epilogue of a narrow N stages the fp32 output in GM.
    plan.workspace_bytes += facts.m * facts.n * kFp32Bytes;
  }
  return plan;
}

}  // namespace npu::tiling
