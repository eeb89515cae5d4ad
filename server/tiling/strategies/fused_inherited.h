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

#include "server/tiling/strategy.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// What FusedMatMul adds around one batched strategy.
struct FusedInheritance {
  using Check = Capability (*)(const MatmulProblem&, const ProblemFacts&, const ChipSpec&);
  using Amend = void (*)(const MatmulProblem&, const ProblemFacts&, const ChipSpec&, TilingPlan&);

  std::string_view name;  // CANN's name, "..._INHERITED_FROM_BMMV3"
  Check before;           // runs before the batched strategy's checks
  Check after;            // runs on a problem it took; nullptr: none
  Amend amend;            // runs after the common re-keying; nullptr: none
};

class FusedInheritedStrategy final : public Strategy {
 public:
  FusedInheritedStrategy(std::unique_ptr<Strategy> batched, FusedInheritance inheritance)
      : batched_(std::move(batched)), inheritance_(inheritance) {}
  std::string_view name() const override { return inheritance_.name; }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override;
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override;

 private:
  std::unique_ptr<Strategy> batched_;
  FusedInheritance inheritance_;
};

// FusedMatMul's five inherited strategies, in the order of its registry.
std::unique_ptr<Strategy> InheritedBatchStreamK();
std::unique_ptr<Strategy> InheritedMergeBatch();
std::unique_ptr<Strategy> InheritedIterBatch();
std::unique_ptr<Strategy> InheritedFullLoad(FullLoad resident);
std::unique_ptr<Strategy> InheritedDataParallel();

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGIES_FUSED_INHERITED_H_
