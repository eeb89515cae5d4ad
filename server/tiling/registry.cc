#include "server/tiling/registry.h"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/batch_shape.h"
#include "server/tiling/block_heuristics.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/operator_table.h"
#include "server/tiling/plan_fit.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/transpose/transpose_parse.h"
#include "server/tiling/validate.h"

namespace npu::tiling {

namespace {

uint64_t SlotProduct(const std::array<uint64_t, kBatchSlots>& slots) {
  uint64_t product = 1;
  for (uint64_t slot : slots) product *= slot;
  return product;
}

// CANN's batch context of BatchMatMulV3 and FusedMatMul (ExtractMatrixBatchInfo
// and MergeBatchAndMAxis of the batch_mat_mul_v3 tiling).
void DeriveBatchFacts(const MatmulProblem& problem, ProblemFacts& facts) {
  facts.batch_context = true;
  facts.batch_a_dims = UnsignedSlots(RightAligned(problem.batch.a));
  facts.batch_b_dims = UnsignedSlots(RightAligned(problem.batch.b));
  if (problem.batch.c.empty()) {
    for (int i = 0; i < kBatchSlots; ++i) {
      facts.batch_c_dims[i] = std::max(facts.batch_a_dims[i], facts.batch_b_dims[i]);
    }
  } else {
    facts.batch_c_dims = UnsignedSlots(RightAligned(problem.batch.c));
  }
  facts.batch_a = SlotProduct(facts.batch_a_dims);
  facts.batch_b = SlotProduct(facts.batch_b_dims);
  facts.batch_c = SlotProduct(facts.batch_c_dims);
  facts.batch_bias = problem.batch.bias.empty() ? 1 : BatchProduct(problem.batch.bias);
  // A {1, 0, 2} view of A times a 2-D B is CANN's non-contiguous slice of
  // batch * m rows (validation keeps it to one batch dim and no transpose);
  // the merge below then multiplies by A's batch once more, as CANN does.
  if (problem.batch.a_interleaved && problem.batch.b.empty()) {
    facts.m *= facts.batch_a;
    // The slice's words (GetSliceInfo): rows per batch, the batch stride and
    // the row stride of the [rows, batch, k] storage.
    facts.slice_m_override = static_cast<uint64_t>(problem.m);
    facts.src_nd_stride = facts.k;
    facts.row_stride = facts.k * facts.batch_a;
  }
  // A batched A times an unbatched B is one matmul of batch_a * m rows when
  // A's rows are contiguous (A not transposed).
  if (MergesBatchIntoM(/*batched_op=*/true, problem.trans_a, facts.batch_a, facts.batch_b)) {
    facts.batch_merged_into_m = true;
    facts.m *= facts.batch_a;
    facts.batch_a_dims = {1, 1, 1, 1};
    facts.batch_c_dims = {1, 1, 1, 1};
    facts.batch_a = 1;
    facts.batch_c = 1;
  }
  if (problem.fused.x3_shape.size() == 3)
    facts.batch_x3 = static_cast<uint64_t>(problem.fused.x3_shape[0]);
}

}  // namespace

ProblemFacts DeriveFacts(const MatmulProblem& problem) { return DeriveFacts(problem, nullptr); }

ProblemFacts DeriveFacts(const MatmulProblem& problem, const quant::QuantFacts* parsed) {
  ProblemFacts facts;
  facts.m = static_cast<uint64_t>(problem.m);
  facts.n = static_cast<uint64_t>(problem.n);
  facts.k = static_cast<uint64_t>(problem.k);
  facts.a_bytes = DataTypeBytes(problem.dtype_a);
  facts.b_bytes = DataTypeBytes(problem.dtype_b);
  facts.c_bytes = DataTypeBytes(problem.dtype_c);
  facts.bias_bytes = problem.has_bias ? DataTypeBytes(problem.dtype_bias) : 0;
  const SliceView& slice = problem.a_slice;
  if (slice.enabled && slice.rank == 3) {
    facts.a_slice_3d = true;
    facts.slice_m_override = facts.m / static_cast<uint64_t>(slice.batch);
    facts.src_nd_stride = static_cast<uint64_t>(slice.batch_stride);
    facts.row_stride = static_cast<uint64_t>(slice.row_stride);
  } else if (slice.enabled) {
    facts.slice_m_override = 1;
    facts.src_nd_stride = static_cast<uint64_t>(slice.row_stride);
    facts.row_stride = static_cast<uint64_t>(slice.row_stride);
  } else {
    facts.src_nd_stride = 1;
    // Distance between rows of A in GM: K for row-major A, 1 when transposed.
    facts.row_stride = problem.trans_a ? 1 : facts.k;
  }
  if (problem.op == MatmulOp::kQuantBatchMatmulV3) {
    // The parse is CANN's, made once by validation and shared by its
    // strategies.
    facts.quant = parsed;
    return facts;
  }
  if (OperatorSpecOf(problem.op).batched) DeriveBatchFacts(problem, facts);
  if (transpose::IsTransposeOp(problem.op)) {
    // CANN's batch info of the transposed batch matmuls: x1's, x2's and y's
    // one batch dim, in the innermost slot.
    const uint64_t batch = static_cast<uint64_t>(problem.transpose.batch);
    facts.batch_context = true;
    facts.batch_a_dims = {1, 1, 1, batch};
    facts.batch_b_dims = facts.batch_a_dims;
    facts.batch_c_dims = facts.batch_a_dims;
    facts.batch_a = facts.batch_b = facts.batch_c = batch;
    facts.row_stride = facts.k;
  }
  return facts;
}

absl::Status StrategyRegistry::Add(std::unique_ptr<Strategy> strategy, MatmulOp op) {
  std::vector<std::unique_ptr<Strategy>>& strategies = strategies_[static_cast<int>(op)];
  for (const auto& existing : strategies) {
    if (existing->name() == strategy->name()) {
      return absl::AlreadyExistsError(absl::StrCat("strategy ", std::string(strategy->name()),
                                                   " is already registered for ",
                                                   std::string(MatmulOpName(op))));
    }
  }
  strategies.push_back(std::move(strategy));
  return absl::OkStatus();
}

std::vector<std::string> StrategyRegistry::Names(MatmulOp op) const {
  std::vector<std::string> names;
  for (const auto& strategy : ListOf(op)) names.emplace_back(strategy->name());
  return names;
}

absl::StatusOr<TilingDecision> StrategyRegistry::Decide(const MatmulProblem& problem,
                                                        const ChipSpec& chip,
                                                        const DecideOptions& options) const {
  RETURN_IF_ERROR(ValidateChip(chip));
  std::shared_ptr<const quant::QuantFacts> parsed;
  RETURN_IF_ERROR(ValidateProblem(problem, &parsed));
  return DecideChecked(problem, chip, options, parsed.get());
}

absl::Status StrategyRegistry::UncheckedInputsError() {
  return absl::FailedPreconditionError("the problem and the chip must be checked first");
}

absl::StatusOr<TilingDecision> StrategyRegistry::DecideChecked(
    const MatmulProblem& problem, const ChipSpec& chip, const DecideOptions& options,
    const quant::QuantFacts* parsed) const {
  // Always: a chip can be valid and still not one CANN's tiling covers.
  RETURN_IF_ERROR(ValidateTilingArch(chip));
  RETURN_IF_ERROR(ValidateProblemForChip(problem, chip));
  const bool forced = !options.forced_strategy.empty();
  const std::vector<std::unique_ptr<Strategy>>& list = ListOf(problem.op);
  // MatMulV3's capable strategies never fail (see the class comment).
  const bool falls_through = OperatorSpecOf(problem.op).walk == WalkPolicy::kFallThrough;
  ProblemFacts facts = DeriveFacts(problem, parsed);
  facts.explain = options.explain || forced;
  facts.describe = options.describe;

  if (forced) {
    bool known = false;
    for (const auto& strategy : list) known |= strategy->name() == options.forced_strategy;
    if (!known) {
      std::string names;
      for (const auto& strategy : list) {
        absl::StrAppend(&names, names.empty() ? "" : ", ", std::string(strategy->name()));
      }
      const std::string op_names =
          problem.op == MatmulOp::kMatMulV3
              ? std::string()
              : absl::StrCat(" for ", std::string(MatmulOpName(problem.op)));
      return absl::NotFoundError(absl::StrCat("unknown strategy \"", options.forced_strategy,
                                              "\"; registered", op_names, ": ", names));
    }
  }

  TilingDecision decision;
  if (facts.explain) decision.trace.reserve(list.size());
  for (const auto& strategy : list) {
    if (forced && strategy->name() != options.forced_strategy) continue;
    Capability capability = strategy->IsCapable(problem, facts, chip);
    if (!capability.ok) {
      if (facts.explain) {
        decision.trace.push_back(
            {std::string(strategy->name()), false, false, std::move(capability.reason)});
      }
      if (forced) {
        return absl::FailedPreconditionError(
            absl::StrCat("strategy ", std::string(strategy->name()),
                         " cannot apply: ", decision.trace.back().reason.str()));
      }
      continue;
    }
    absl::StatusOr<TilingPlan> plan = strategy->DoTiling(problem, facts, chip);
    if (!plan.ok()) {
      const absl::StatusCode code = plan.status().code();
      if (IsCannFault(plan.status())) {
        // CANN's process dies here, so its walk ends here too.
        absl::Status fault(
            code, absl::StrCat(std::string(strategy->name()), ": ", plan.status().message()));
        fault.SetPayload(kCannFaultPayload, absl::Cord(plan.status().message()));
        return fault;
      }
      // CANN's walk ends at failures it does not pass on.
      if (IsWalkEnding(plan.status())) {
        return absl::Status(
            code, absl::StrCat(std::string(strategy->name()), ": ", plan.status().message()));
      }
      if (falls_through && !forced && code == absl::StatusCode::kFailedPrecondition) {
        if (facts.explain) {
          decision.trace.push_back(
              {std::string(strategy->name()), true, false,
               absl::StrCat(capability.reason.str(), capability.reason.empty() ? "" : "; ",
                            "capable, but its tiling failed: ", plan.status().message())});
        }
        continue;
      }
      // Input-shaped failures keep their code; anything else is our bug.
      if (code == absl::StatusCode::kInvalidArgument ||
          code == absl::StatusCode::kFailedPrecondition) {
        return absl::Status(
            code, absl::StrCat(std::string(strategy->name()), ": ", plan.status().message()));
      }
      return absl::InternalError(
          absl::StrCat(std::string(strategy->name()), ": ", plan.status().message()));
    }
    plan->strategy = std::string(strategy->name());
    // A plan the kernel cannot launch is refused; one that overflows a
    // buffer is CANN's answer all the same, and goes out with a warning.
    RETURN_IF_ERROR(CheckPlanShape(*plan, chip));
    if (std::optional<PlanWarning> overflow = FindPlanOverflow(*plan, problem, chip)) {
      plan->warnings.push_back(*std::move(overflow));
    }
    if (facts.explain) {
      decision.trace.push_back(
          {std::string(strategy->name()), true, true, std::move(capability.reason)});
    }
    decision.plan = *std::move(plan);
    return decision;
  }
  if (falls_through && !list.empty()) {
    // CANN's walk ended with no plan: the op cannot run this problem.
    std::string why;
    if (facts.explain && !decision.trace.empty()) {
      why = absl::StrCat("; last: ", decision.trace.back().strategy, ": ",
                         decision.trace.back().reason.str());
    }
    return absl::FailedPreconditionError(absl::StrCat("no ", std::string(MatmulOpName(problem.op)),
                                                      " strategy could tile the problem", why));
  }
  return absl::InternalError("no strategy was capable; the fallback strategy is missing");
}

absl::Status CheckPlanShape(const TilingPlan& plan, const ChipSpec& chip) {
  auto fail = [&](std::string_view what) {
    return absl::FailedPreconditionError(
        absl::StrCat("plan of ", plan.strategy, " does not fit the platform: ", std::string(what)));
  };
  const uint32_t cores = plan.kernel_type == KernelType::kAivOnly ? chip.aiv_num : chip.aic_num;
  if (plan.block_dim == 0 || plan.block_dim > cores) {
    return fail(absl::StrCat("block_dim=", plan.block_dim, " outside [1, ", cores, "]"));
  }
  if (plan.kernel_type == KernelType::kAivOnly) return absl::OkStatus();
  const BlockTiling& b = plan.block;
  if (b.base_m == 0 || b.base_n == 0 || b.base_k == 0 || b.k_l1 == 0) {
    return fail(absl::StrCat("empty block baseM=", b.base_m, " baseN=", b.base_n,
                             " baseK=", b.base_k, " kL1=", b.k_l1));
  }
  // base_k may equal an unaligned per-core K slice (Stream-K with a short
  // K); the kernel then loads the whole slice in one step.
  const bool base_k_aligned = b.base_k % 8 == 0 || b.base_k == b.single_core_k;
  if (b.base_m % kBlock16 != 0 || b.base_n % kBlock16 != 0 || !base_k_aligned) {
    return fail(absl::StrCat("baseM=", b.base_m, " baseN=", b.base_n, " baseK=", b.base_k,
                             " break the 16 (baseK: 8) element alignment"));
  }
  return absl::OkStatus();
}

namespace {

// The buffer formula of `overflow` with its sizes, as CheckPlanFits() words it.
std::string OverflowFormula(const BufferOverflow& overflow, const MatmulProblem& problem) {
  const uint64_t need = overflow.need_bytes, have = overflow.have_bytes;
  switch (overflow.buffer) {
    case CubeBuffer::kL0a:
      return absl::StrCat("baseM*baseK*", DataTypeBytes(problem.dtype_a), "*2=", need,
                          " > l0a_bytes=", have);
    case CubeBuffer::kL0b:
      return absl::StrCat("baseN*baseK*", DataTypeBytes(problem.dtype_b), "*2=", need,
                          " > l0b_bytes=", have);
    case CubeBuffer::kL0c:
      return absl::StrCat("baseM*baseN*4*l0cDB=", need, " > l0c_bytes=", have);
    case CubeBuffer::kBiasTable:
      return absl::StrCat("bias baseN*4=", need, " > bt_bytes=", have);
    case CubeBuffer::kL1:
      return absl::StrCat("L1 stages need ", need, " bytes > l1_bytes=", have);
  }
  return std::string();
}

std::optional<BufferOverflow> FindOverflow(const TilingPlan& plan, const MatmulProblem& problem,
                                           const ChipSpec& chip) {
  if (plan.kernel_type == KernelType::kAivOnly) return std::nullopt;
  // The buffer formulas are shared with the emulator (plan_fit.h).
  return FindBufferOverflow(ComputeCubeBufferDemand(plan, problem), chip);
}

}  // namespace

std::optional<PlanWarning> FindPlanOverflow(const TilingPlan& plan, const MatmulProblem& problem,
                                            const ChipSpec& chip) {
  const std::optional<BufferOverflow> overflow = FindOverflow(plan, problem, chip);
  if (!overflow.has_value()) return std::nullopt;
  PlanWarning warning;
  warning.buffer = std::string(CubeBufferName(overflow->buffer));
  warning.need_bytes = overflow->need_bytes;
  warning.have_bytes = overflow->have_bytes;
  warning.message =
      absl::StrCat(warning.buffer, " overflows: ", OverflowFormula(*overflow, problem));
  const bool l0_ab = overflow->buffer == CubeBuffer::kL0a || overflow->buffer == CubeBuffer::kL0b;
  if (l0_ab) {
    // L0A and L0B hold two blocks (ping and pong), each in a fixed half.
    const uint64_t one_block = overflow->need_bytes / 2;
    absl::StrAppend(&warning.message,
                    one_block <= overflow->have_bytes
                        ? absl::StrCat("; one block fits, but the kernel's ping-pong halves are "
                                       "fixed at ",
                                       overflow->have_bytes / 2,
                                       " bytes, so its double buffering runs past the buffer")
                        : std::string("; even one block does not fit"));
  }
  return warning;
}

absl::Status PlanHazard(const TilingPlan& plan, std::string_view consequence) {
  if (plan.warnings.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("hazard: CANN's ", plan.strategy, " plan does not fit this chip (",
                   plan.warnings.front().message, ")", std::string(consequence)));
}

absl::Status CheckPlanFits(const TilingPlan& plan, const MatmulProblem& problem,
                           const ChipSpec& chip) {
  RETURN_IF_ERROR(CheckPlanShape(plan, chip));
  const std::optional<BufferOverflow> overflow = FindOverflow(plan, problem, chip);
  if (!overflow.has_value()) return absl::OkStatus();
  // CANN's heuristics are tuned for real Ascend buffers; a plan that does
  // not fit means the configured platform cannot run this problem.
  return absl::FailedPreconditionError(
      absl::StrCat("plan of ", plan.strategy,
                   " does not fit the platform: ", OverflowFormula(*overflow, problem)));
}

}  // namespace npu::tiling
