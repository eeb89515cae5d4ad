#include "server/tiling/custom_plans.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/tiling/int_math.h"
#include "server/tiling/quant/base_block_calculator.h"
#include "server/tiling/quant/high_level_tiling.h"
#include "server/tiling/quant/l1_tiling_calculator.h"
#include "server/tiling/quant/quant_adapter.h"
#include "server/tiling/quant/quant_capability.h"
#include "server/tiling/quant/quant_dtype.h"
#include "server/tiling/quant/quant_parse.h"
#include "server/tiling/quant/quant_request.h"
#include "server/tiling/quant/sliding_window.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling::quant {
namespace {

// baseK stays below 4096 (the base block calculator halves anything above
// 4095: the kernels' supported range, and a 16-bit field of the 16-word
// struct).
constexpr uint64_t kBaseKLimit = 4096;
// The per-block and MX kernels stall beyond 4 K slices per L1 load; the
// others gain nothing from deeper loads in the emulator's two-stage model.
constexpr uint64_t kMaxStepK = 4;
constexpr uint64_t kTwoBuffers = 2, kFourBuffers = 4;
constexpr uint64_t kL0cBytesPerElement = 4;
// baseN's alignment when N is x2's inner axis: 32 bytes, the L1 alignment
// the base block calculator keeps.
constexpr uint64_t kInnerAlignBytes = 32;
// MX: one e8m0 scale per 32 K values, stored in pairs.
constexpr uint64_t kMxScaleGroup = 32;
constexpr uint64_t kMxScalesPerPair = 2;
// The MX L0C ping-pong kernels keep the scale window near 2048 K values.
constexpr uint64_t kPingpongScaleKL1 = 2048;
// The key's KERNELTYPE values of the A-full-load kernels and the sibling
// CANN emits for the same path without the full load
// (quant_batch_matmul_v3_apt_tiling_key.h).
struct KernelSibling {
  uint8_t a_full_load, streamed;
};
constexpr KernelSibling kKernelSiblings[] = {
    {1, 0},   // NO_VEC_EPILOGUE_CUSTOM_GMTOAL1_WITH_MMAPI -> NO_VEC_EPILOGUE_WITH_MMAPI
    {3, 2},   // VEC_EPILOGUE_CUSTOM_GMTOAL1_WITH_MMAPI -> VEC_EPILOGUE_WITH_MMAPI
    {10, 9},  // the MX L0C ping-pong kernels
};
constexpr uint8_t kKernelMxPingpong = 9;

uint64_t StreamedKernel(uint8_t kernel) {
  for (const KernelSibling& s : kKernelSiblings) {
    if (s.a_full_load == kernel) return s.streamed;
  }
  return kernel;
}

// The problem as CANN parses it, 4-bit pairs as the INT8 pairs the kernels
// compute (CUBE_BASIC_API_ASW and MIX_ASW widen both operands first).
absl::StatusOr<QuantFacts> TiledFacts(const MatmulProblem& problem) {
  if (problem.op != MatmulOp::kQuantBatchMatmulV3) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(MatmulOpName(problem.op)), " is not QuantBatchMatmulV3"));
  }
  ASSIGN_OR_RETURN(QuantFacts facts, ParseQuantRequest(QuantRequestOf(problem)));
  if (IsInt4Pair(facts)) facts.x1 = facts.x2 = GeDtype::kInt8;
  return facts;
}

// L1 bytes of the double-buffered MX scales of a base_m x base_n block over
// `scale_k` K values (0 for other inputs).
uint64_t MxScaleBytes(const QuantFacts& facts, uint64_t base_m, uint64_t base_n, uint64_t scale_k) {
  if (!facts.is_mx) return 0;
  const uint64_t groups = CeilAlign(CeilDiv(scale_k, kMxScaleGroup), kMxScalesPerPair);
  return kTwoBuffers *
         (BytesOf(base_m * groups, facts.pertoken) + BytesOf(base_n * groups, facts.scale));
}

// L1 bytes of `buffers` loads of k_l1 of A's and B's blocks.
uint64_t LoadBytes(const QuantFacts& facts, uint64_t base_m, uint64_t base_n, uint64_t k_l1,
                   uint64_t buffers) {
  return buffers * (BytesOf(base_m * k_l1, facts.x1) + BytesOf(base_n * k_l1, facts.x2));
}

// The L0 and alignment checks every kernel shares; "" when they pass.
std::string BlockObstacle(const QuantFacts& facts, const ChipSpec& chip,
                          const QuantBlockChoice& c) {
  const QuantBlockAlign align{BaseMAlign(facts), BaseNAlign(facts, kInnerAlignBytes),
                              BaseKAlign(facts)};
  if (c.base_m == 0 || c.base_n == 0 || c.base_k == 0 || c.step_k == 0) {
    return absl::StrCat("block ", c.base_m, "x", c.base_n, "x", c.base_k, " with ", c.step_k,
                        " K slices per L1 load has an empty side");
  }
  if (c.base_m % align.m != 0 || c.base_n % align.n != 0 || c.base_k % align.k != 0) {
    return absl::StrCat("block ", c.base_m, "x", c.base_n, "x", c.base_k,
                        " breaks the kernels' alignment (baseM ", align.m, ", baseN ", align.n,
                        ", baseK ", align.k, facts.is_mx ? ": one pair of MX scales" : "", ")");
  }
  if (c.base_k >= kBaseKLimit) return absl::StrCat("baseK=", c.base_k, " is not below 4096");
  if (BytesOf(c.base_m * c.base_k, facts.x1) * kTwoBuffers > chip.l0a_bytes) {
    return absl::StrCat("two A blocks of ", c.base_m, "x", c.base_k, " exceed L0A (",
                        chip.l0a_bytes, " bytes)");
  }
  if (BytesOf(c.base_n * c.base_k, facts.x2) * kTwoBuffers > chip.l0b_bytes) {
    return absl::StrCat("two B blocks of ", c.base_k, "x", c.base_n, " exceed L0B (",
                        chip.l0b_bytes, " bytes)");
  }
  if (c.base_m * c.base_n * kL0cBytesPerElement > chip.l0c_bytes) {
    return absl::StrCat("the fp32 block ", c.base_m, "x", c.base_n, " exceeds L0C (",
                        chip.l0c_bytes, " bytes)");
  }
  if (!CheckBiasAndScale(facts, c.base_n, 1)) {
    return absl::StrCat("baseN=", c.base_n,
                        " exceeds the bias table or the fixpipe's scale buffer");
  }
  if (facts.is_per_block) {
    // 128 x 128 scale blocks: the per-block kernel scales each baseK step
    // by one K group, and a block holds whole N (and M) groups of at most
    // two (CANN's PERBLOCK block is 128 or 256 per side).
    const bool groups_ok = c.base_k == facts.group_size_k && c.base_n % facts.group_size_n == 0 &&
                           c.base_n <= 2 * facts.group_size_n &&
                           (facts.group_size_m == 1 || (c.base_m % facts.group_size_m == 0 &&
                                                        c.base_m <= 2 * facts.group_size_m));
    if (!groups_ok) {
      return absl::StrCat("block ", c.base_m, "x", c.base_n, "x", c.base_k,
                          " does not hold whole per-block scale groups (", facts.group_size_m, "x",
                          facts.group_size_n, "x", facts.group_size_k, ", at most two per side)");
    }
  }
  return "";
}

// Which of the three rewritable structs `plan` carries.
bool IsBasicStruct(KernelId kernel) {
  return kernel == KernelId::kQuantBasic || kernel == KernelId::kQuantWithoutBatch;
}

// A member of the basic-API structs, by the 38-word struct's name.
uint64_t BasicMember(const TilingPlan& plan, std::string_view name) {
  const bool packed = plan.data.kernel == KernelId::kQuantWithoutBatch;
  return plan.data.Get(packed ? name : absl::StrCat("matmulTiling.", std::string(name)))
      .value_or(0);
}
uint64_t ParamsMember(const TilingPlan& plan, std::string_view name) {
  const bool packed = plan.data.kernel == KernelId::kQuantWithoutBatch;
  return plan.data.Get(packed ? name : absl::StrCat("params.", std::string(name))).value_or(0);
}

// The re-derived sliding window of the block: counts and rounds, edge
// balancing, the general tail-round split (no full load).
SlidingWindow WindowOf(const QuantFacts& facts, const ChipSpec& chip, const QuantBlockChoice& c,
                       uint64_t batch_cores) {
  BaseBlock block;
  block.base_m = c.base_m;
  block.base_n = c.base_n;
  block.base_k = c.base_k;
  SlidingWindow window = MakeSlidingWindow(facts, chip, block, batch_cores);
  BalanceEdgeBlocks(facts, chip, &window);
  SplitTailRoundGeneral(facts, chip, /*a_full_load=*/false, &window);
  return window;
}

// The basic-API structs (38 and 16 words).
absl::StatusOr<QuantPlan> BasicPlan(const QuantFacts& facts, const ChipSpec& chip,
                                    const TilingPlan& cann, const QuantBlockChoice& c,
                                    uint64_t l1_left) {
  BasicApiTiling t;
  t.x1_quant_mode = static_cast<uint32_t>(ParamsMember(cann, "x1QuantMode"));
  t.x2_quant_mode = static_cast<uint32_t>(ParamsMember(cann, "x2QuantMode"));
  t.base_m = c.base_m;
  t.base_n = c.base_n;
  t.base_k = c.base_k;
  t.k_al1 = t.k_bl1 = c.step_k * c.base_k;
  t.db_l0c = ChooseDbL0c(facts, chip, c.base_m, c.base_n);
  t.weight_must_hit_l2 = IsWeightMustHitL2(facts, c.base_m);
  const uint64_t k_l1 = t.k_al1;
  if (facts.is_mx) {
    // The scale window: whole K loads, as many as L1 holds beside two
    // loads of A and B, at most all of K (the ping-pong kernels' ~2048).
    const uint64_t loads = LoadBytes(facts, c.base_m, c.base_n, k_l1, kTwoBuffers);
    uint64_t window = CeilAlign(facts.k, k_l1);
    if (cann.key.quant_kernel == kKernelMxPingpong ||
        StreamedKernel(cann.key.quant_kernel) == kKernelMxPingpong) {
      window = std::min(window, std::max(k_l1, kPingpongScaleKL1 / k_l1 * k_l1));
    }
    while (window > k_l1 && loads + MxScaleBytes(facts, c.base_m, c.base_n, window) > l1_left) {
      window -= k_l1;
    }
    t.scale_k_l1 = window;
  } else {
    t.scale_k_l1 = BasicMember(cann, "scaleKL1");
  }
  const uint64_t scales = MxScaleBytes(facts, c.base_m, c.base_n, t.scale_k_l1);
  const uint64_t two = LoadBytes(facts, c.base_m, c.base_n, k_l1, kTwoBuffers) + scales;
  if (two > l1_left) {
    return absl::FailedPreconditionError(absl::StrCat(
        "two L1 loads of ", k_l1, " K", facts.is_mx ? " with their MX scales" : "", " (", two,
        " bytes) exceed the ", l1_left, " bytes L1 leaves beside the bias and scale rows"));
  }
  // Four buffers where they fit (CANN's cube rule), else two.
  const uint64_t four = LoadBytes(facts, c.base_m, c.base_n, k_l1, kFourBuffers) + scales;
  t.buffer_count = static_cast<uint32_t>(four <= l1_left ? kFourBuffers : kTwoBuffers);

  const SlidingWindow window = WindowOf(facts, chip, c, facts.batch_c);
  QuantPlan plan;
  plan.words = cann.data.kernel == KernelId::kQuantWithoutBatch
                   ? WriteWithoutBatchWords(facts, t, window)
                   : WriteBasicApiWords(facts, t, window);
  plan.block_dim = UsedCoreCount(window, chip);
  return plan;
}

// The high-level struct (96 words).
absl::StatusOr<QuantPlan> HighLevelPlan(const QuantFacts& facts, const ChipSpec& chip,
                                        const QuantBlockChoice& c, uint64_t l1_left) {
  HighLevelTiling t;
  t.window = WindowOf(facts, chip, c, /*batch_cores=*/1);
  t.a_full_load = false;
  t.used_core_count = UsedCoreCount(t.window, chip);
  t.single_core_m = std::min(facts.m, c.base_m);
  t.single_core_n = std::min(facts.n, c.base_n);
  t.single_core_k = facts.k;
  t.db_l0c = ChooseDbL0c(facts, chip, c.base_m, c.base_n);
  t.l1.step_ka = t.l1.step_kb = c.step_k;
  t.l1.depth_ka = t.l1.depth_kb = kTwoBuffers * c.step_k;
  // MX: one scale load per K load (scale factors 1).
  if (facts.is_mx) t.l1.scale_factor_a = t.l1.scale_factor_b = 1;
  const uint64_t k_l1 = c.step_k * c.base_k;
  const uint64_t need = LoadBytes(facts, c.base_m, c.base_n, k_l1, kTwoBuffers) +
                        MxScaleBytes(facts, c.base_m, c.base_n, k_l1);
  if (need > l1_left) {
    return absl::FailedPreconditionError(absl::StrCat(
        "depthA1 = depthB1 = ", t.l1.depth_ka, " base blocks of K ", c.base_k, " (", need,
        " bytes) exceed the ", l1_left, " bytes L1 leaves beside the bias and scale rows"));
  }
  if (facts.is_pertoken) t.ub = CalcPertokenUbTiling(facts, chip, c.base_m, c.base_n);
  QuantPlan plan;
  plan.words = WriteHighLevelWords(facts, t);
  plan.block_dim = t.used_core_count;
  return plan;
}

}  // namespace

absl::StatusOr<QuantBlockAlign> QuantBlockAlignOf(const MatmulProblem& problem) {
  ASSIGN_OR_RETURN(const QuantFacts facts, TiledFacts(problem));
  return QuantBlockAlign{BaseMAlign(facts), BaseNAlign(facts, kInnerAlignBytes), BaseKAlign(facts)};
}

absl::StatusOr<QuantBlockChoice> DeepestQuantStaging(const MatmulProblem& problem,
                                                     const ChipSpec& chip, uint64_t base_m,
                                                     uint64_t base_n, uint64_t cann_base_k) {
  ASSIGN_OR_RETURN(const QuantFacts facts, TiledFacts(problem));
  const uint64_t k_align = BaseKAlign(facts);
  if (base_m == 0 || base_n == 0 || k_align == 0) {
    return absl::FailedPreconditionError(absl::StrCat("block ", base_m, "x", base_n, " is empty"));
  }
  QuantBlockChoice c;
  c.base_m = base_m;
  c.base_n = base_n;
  const uint64_t l0_k = std::min(ElementsIn(chip.l0a_bytes / kTwoBuffers, facts.x1) / base_m,
                                 ElementsIn(chip.l0b_bytes / kTwoBuffers, facts.x2) / base_n);
  c.base_k = std::min({FloorAlign(l0_k, k_align), FloorAlign(kBaseKLimit - 1, k_align),
                       CeilAlign(facts.k, k_align)});
  if (facts.is_per_block) c.base_k = facts.group_size_k;
  if (cann_base_k != 0 && cann_base_k < c.base_k) c.base_k = cann_base_k;
  if (c.base_k == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "block ", base_m, "x", base_n, " leaves L0A / L0B no room for ", k_align, " K values"));
  }
  ASSIGN_OR_RETURN(const uint64_t left, L1BytesForAB(facts, chip, base_n));
  const uint64_t k_slices = CeilDiv(facts.k, c.base_k);
  for (uint64_t step = std::min(kMaxStepK, k_slices); step >= 1; --step) {
    const uint64_t k_l1 = step * c.base_k;
    if (LoadBytes(facts, base_m, base_n, k_l1, kTwoBuffers) +
            MxScaleBytes(facts, base_m, base_n, k_l1) <=
        left) {
      c.step_k = step;
      return c;
    }
  }
  return absl::FailedPreconditionError(
      absl::StrCat("two L1 loads of the ", base_m, "x", base_n, "x", c.base_k, " block exceed L1"));
}

bool KeepsAInL1(const TilingPlan& plan) {
  return plan.key.layout == KeyLayout::kQuant &&
         StreamedKernel(plan.key.quant_kernel) != plan.key.quant_kernel;
}

absl::StatusOr<QuantBlockChoice> QuantBlockOfPlan(const TilingPlan& plan) {
  QuantBlockChoice c;
  if (IsBasicStruct(plan.data.kernel)) {
    c.base_m = BasicMember(plan, "baseM");
    c.base_n = BasicMember(plan, "baseN");
    c.base_k = BasicMember(plan, "baseK");
    const uint64_t k_l1 = std::min(BasicMember(plan, "kAL1"), BasicMember(plan, "kBL1"));
    c.step_k = c.base_k == 0 ? 0 : std::max<uint64_t>(1, k_l1 / c.base_k);
    return c;
  }
  if (plan.data.kernel == KernelId::kQuantHighLevel) {
    c.base_m = plan.data.Get("matmulTiling.baseM").value_or(0);
    c.base_n = plan.data.Get("matmulTiling.baseN").value_or(0);
    c.base_k = plan.data.Get("matmulTiling.baseK").value_or(0);
    c.step_k = std::min(plan.data.Get("matmulTiling.stepKa").value_or(1),
                        plan.data.Get("matmulTiling.stepKb").value_or(1));
    return c;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("tiling struct ", std::string(plan.data.struct_name()),
                   " is not a sliding-window QuantBatchMatmulV3 struct"));
}

absl::StatusOr<TilingPlan> QuantPlanWithBlock(const MatmulProblem& problem, const ChipSpec& chip,
                                              const TilingPlan& cann,
                                              const QuantBlockChoice& choice) {
  ASSIGN_OR_RETURN(const QuantFacts facts, TiledFacts(problem));
  if (cann.data.kernel == KernelId::kQuantStreamK) {
    return absl::FailedPreconditionError(
        "MX_STREAMK's struct splits K over the cores; its own strategy is ranked as CANN tiles it");
  }
  if (!IsBasicStruct(cann.data.kernel) && cann.data.kernel != KernelId::kQuantHighLevel) {
    return absl::InvalidArgumentError(absl::StrCat("tiling struct ",
                                                   std::string(cann.data.struct_name()),
                                                   " is not a QuantBatchMatmulV3 struct"));
  }
  if (std::string why = BlockObstacle(facts, chip, choice); !why.empty()) {
    return absl::FailedPreconditionError(why);
  }
  ASSIGN_OR_RETURN(const uint64_t l1_left, L1BytesForAB(facts, chip, choice.base_n));
  absl::StatusOr<QuantPlan> quant = cann.data.kernel == KernelId::kQuantHighLevel
                                        ? HighLevelPlan(facts, chip, choice, l1_left)
                                        : BasicPlan(facts, chip, cann, choice, l1_left);
  if (!quant.ok()) return quant.status();
  quant->strategy = cann.strategy;
  quant->key.a_trans = cann.key.trans_a ? 1 : 0;
  quant->key.b_trans = cann.key.trans_b ? 1 : 0;
  quant->key.batch_mode = cann.key.batch_model;
  quant->key.kernel = cann.data.kernel == KernelId::kQuantHighLevel
                          ? HighLevelKernelType(facts, /*a_full_load=*/false)
                          : static_cast<uint32_t>(StreamedKernel(cann.key.quant_kernel));
  quant->key.api_level = static_cast<uint32_t>(cann.key.api_level);
  quant->workspace_bytes = cann.workspace_bytes;
  // The given facts: PlanOfQuant reads x1's width for the kernel type.
  ASSIGN_OR_RETURN(const QuantFacts given, ParseQuantRequest(QuantRequestOf(problem)));
  ASSIGN_OR_RETURN(TilingPlan plan, PlanOfQuant(*quant, given));
  plan.swat_window_rows = cann.swat_window_rows;
  return plan;
}

}  // namespace npu::tiling::quant
