// FusedMatMul's batched strategies, CANN's "..._INHERITED_FROM_BMMV3"
// (matmul/fused_mat_mul/op_host/op_tiling/arch35/fused_matmul_*_tiling.cpp):
// each is a BatchMatMulV3 strategy behind a filter on the epilogue, whose
// plan is re-keyed into FusedMatMul's layout. The batched strategies know
// nothing of FusedMatMul; this decorator holds all of it, and only
// FusedMatMul's list registers it.
//
// The re-keying every inherited plan gets: FusedMatMul's layout with the
// epilogue and the inner precision, the basic API (its batched kernels have
// no tensor-API form) and FUSED_BATCH for FOR_BATCH. An inheritance may
// amend the plan further (the x3 output path, its data words), and may add
// a check after the batched strategy's own (UB room for x3). Part of
// `npu_tiling`.
#ifndef NPU_SERVER_TILING_STRATEGIES_FUSED_INHERITED_H_
#define NPU_SERVER_TILING_STRATEGIES_FUSED_INHERITED_H_

#include <memory>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/strategy.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// What FusedMatMul adds around one batched strategy is a type with these
// static members, which the decorator calls directly (so an inherited
// strategy costs what the batched one with its filter written in would):
//   static constexpr std::string_view kName;  CANN's "..._INHERITED_FROM_BMMV3"
//   static Capability Before(problem, facts, chip);  before the batched checks
//   static Capability After(problem, facts, chip);   on a problem it took
//   static void Amend(problem, facts, chip, TilingPlan&);  after the re-keying
// NoFusedExtras gives the After and the Amend that do nothing.
struct NoFusedExtras {
  static Capability After(const MatmulProblem& /*problem*/, const ProblemFacts& /*facts*/,
                          const ChipSpec& /*chip*/) {
    return Capability::Yes("");
  }
  static void Amend(const MatmulProblem& /*problem*/, const ProblemFacts& /*facts*/,
                    const ChipSpec& /*chip*/, TilingPlan& /*plan*/) {}
};

// The re-keying every inherited plan gets (see above), before the amendment.
void RekeyInheritedPlan(const MatmulProblem& problem, TilingPlan& plan);

// The batched strategy `Batched` (held by value, so its calls are direct)
// behind the inheritance `Inheritance`.
template <typename Batched, typename Inheritance>
class FusedInheritedStrategy final : public Strategy {
 public:
  // `batched_args` construct the batched strategy.
  template <typename... Args>
  explicit FusedInheritedStrategy(Args&&... batched_args)
      : batched_(std::forward<Args>(batched_args)...) {}
  std::string_view name() const override { return Inheritance::kName; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override {
    if constexpr (&Inheritance::After != &NoFusedExtras::After) {
      // One answer object, returned in place.
      Capability answer = Inheritance::Before(problem, facts, chip);
      if (!answer.ok) return answer;
      answer = batched_.IsCapable(problem, facts, chip);
      if (answer.ok) {
        if (Capability after = Inheritance::After(problem, facts, chip); !after.ok) {
          answer = std::move(after);
        }
      }
      return answer;
    } else {
      {
        Capability before = Inheritance::Before(problem, facts, chip);
        if (!before.ok) return before;
      }
      // The batched answer is this one's: the call can be a jump.
      return batched_.IsCapable(problem, facts, chip);
    }
  }
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override {
    absl::StatusOr<TilingPlan> plan = batched_.DoTiling(problem, facts, chip);
    if (!plan.ok()) return plan;
    RekeyInheritedPlan(problem, *plan);
    Inheritance::Amend(problem, facts, chip, *plan);
    plan->kernel_type = KernelTypeOf(plan->data.kernel, plan->key);
    return plan;
  }

 private:
  Batched batched_;
};

// FusedMatMul's five inherited strategies, in the order of its registry.
std::unique_ptr<Strategy> InheritedBatchStreamK();
std::unique_ptr<Strategy> InheritedMergeBatch();
std::unique_ptr<Strategy> InheritedIterBatch();
std::unique_ptr<Strategy> InheritedFullLoad(FullLoad resident);
std::unique_ptr<Strategy> InheritedDataParallel();

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_FUSED_INHERITED_H_
