// An ordered list of tiling strategies and the pipeline that runs them.
//
// `Decide()` is the engine's entry point: validate the problem and chip (a
// chip whose architecture is not DAV_3510 is refused, see
// ValidateTilingArch()), try each strategy in registration order (the order
// is the priority), tile with the first capable one, then check the plan
// fits the chip's buffers.
// Every strategy consulted appears in the returned trace with the reason it
// was or was not capable, so "why not Stream-K?" has an answer.
#ifndef NPU_SERVER_TILING_REGISTRY_H_
#define NPU_SERVER_TILING_REGISTRY_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/tiling/strategy.h"
#include "server/tiling/types.h"
#include "server/tiling/validate.h"

namespace npu::tiling {

struct DecideOptions {
  // Run only the strategy with this CANN name (e.g. "BASIC_ASWT"). Unknown
  // names give kNotFound; a strategy that cannot apply gives
  // kFailedPrecondition with its reason.
  std::string forced_strategy;
  // Whether the decision carries its texts: the trace (explain) and the
  // plan's `detail` (describe). Off, Decide() skips formatting them (a
  // launcher reads only the numbers) and leaves them empty; every number of
  // the plan is the same. A forced strategy always explains why it cannot
  // apply.
  bool explain = true;
  bool describe = true;
};

// One ordered list of strategies per operator (MatmulOp): Decide() walks the
// list of the problem's op.
//
// MatMulV3's strategies never fail once capable. BatchMatMulV3's and
// FusedMatMul's may (a full-load plan that does not fit, a search the kernel
// API cannot satisfy); as in CANN, the walk then goes on with the next
// strategy, and the trace keeps the failure as that strategy's reason
// (capable, not chosen). A kFailedPrecondition from DoTiling() means such a
// failure; any other error stops the walk.
class StrategyRegistry {
 public:
  // Appends `strategy` to `op`'s list at the lowest priority so far;
  // kAlreadyExists when that list has a strategy of the same name.
  absl::Status Add(std::unique_ptr<Strategy> strategy, MatmulOp op);

  // Names of `op`'s strategies in priority order.
  std::vector<std::string> Names(MatmulOp op) const;

  // Checks the chip (ValidateChip()) and the problem (ValidateProblem()),
  // then decides.
  absl::StatusOr<TilingDecision> Decide(const MatmulProblem& problem, const ChipSpec& chip,
                                        const DecideOptions& options = {}) const;
  // Decides on inputs already checked (validate.h), without checking them
  // again; kFailedPrecondition when `inputs` is not complete. Either way
  // the chip's architecture (ValidateTilingArch()) and the problem's chip
  // rules (ValidateProblemForChip()) are checked.
  absl::StatusOr<TilingDecision> Decide(const CheckedInputs& inputs,
                                        const DecideOptions& options = {}) const {
    if (!inputs.complete()) return UncheckedInputsError();
    return DecideChecked(inputs.problem(), inputs.chip(), options, inputs.quant().get());
  }

 private:
  static absl::Status UncheckedInputsError();
  // `parsed`: QuantBatchMatmulV3's parse of `problem` by ValidateProblem().
  absl::StatusOr<TilingDecision> DecideChecked(const MatmulProblem& problem, const ChipSpec& chip,
                                               const DecideOptions& options,
                                               const quant::QuantFacts* parsed) const;

  const std::vector<std::unique_ptr<Strategy>>& ListOf(MatmulOp op) const {
    return strategies_[static_cast<int>(op)];
  }
  std::vector<std::unique_ptr<Strategy>> strategies_[kMatmulOpCount];
};

// Checks that a plan respects the chip: block dim within the cores,
// alignment, and every buffer by the formulas the emulator shares
// (plan_fit.h: L0A / L0B halves, L0C, bias table, L1). kFailedPrecondition
// names the field.
absl::Status CheckPlanFits(const TilingPlan& plan, const MatmulProblem& problem,
                           const ChipSpec& chip);

// The part of CheckPlanFits() a plan cannot run without: block dim within
// the cores, non-empty and aligned blocks. kFailedPrecondition names it.
absl::Status CheckPlanShape(const TilingPlan& plan, const ChipSpec& chip);

// The first buffer the plan overflows on `chip` (CheckPlanFits()'s buffer
// check), as a warning that names the formula and the sizes; nothing when
// every buffer fits or the plan runs on the vector cores only.
std::optional<PlanWarning> FindPlanOverflow(const TilingPlan& plan, const MatmulProblem& problem,
                                            const ChipSpec& chip);

// FAILED_PRECONDITION "hazard: CANN's <strategy> plan does not fit this chip
// (<first warning>)<consequence>" for a plan with warnings, which nothing
// may run; OK for a plan without.
absl::Status PlanHazard(const TilingPlan& plan, std::string_view consequence);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_REGISTRY_H_
