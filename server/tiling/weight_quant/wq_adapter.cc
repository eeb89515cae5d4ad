#include "server/tiling/weight_quant/wq_adapter.h"

#include <memory>
#include <string>
#include <utility>

#include "server/tiling/cann_fault.h"
#include "server/tiling/strategy.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/weight_quant/adaptive_split.h"
#include "server/tiling/weight_quant/anti_reg.h"
#include "server/tiling/weight_quant/custom_deprecated.h"
#include "server/tiling/weight_quant/wq_parse.h"
#include "server/tiling/weight_quant/wq_strategy.h"

namespace npu::tiling::weight_quant {
namespace {

// The block sizes a plan states, read from its struct's TCubeTiling.
template <typename Field>
BlockTiling BlockOf(const TilingData& data) {
  const size_t first = static_cast<size_t>(Field::kMatmulTilingUsedCoreNum);
  auto word = [&](size_t offset) {
    return static_cast<uint64_t>(
        static_cast<uint32_t>(Get(data, static_cast<Field>(first + offset)).value_or(0)));
  };
  // TCubeTiling: 5 singleCoreM, 6 singleCoreN, 7 singleCoreK, 8-10 base,
  // 11 depthA1, 12 depthB1, 13 stepM, 14 stepN, 26 stepKa, 27 stepKb.
  BlockTiling b;
  b.single_core_m = word(5);
  b.single_core_n = word(6);
  b.single_core_k = word(7);
  b.base_m = word(8);
  b.base_n = word(9);
  b.base_k = word(10);
  b.depth_a1 = word(11);
  b.depth_b1 = word(12);
  b.step_m = word(13);
  b.step_n = word(14);
  b.step_ka = word(26);
  b.step_kb = word(27);
  b.m_l1 = b.base_m * b.step_m;
  b.n_l1 = b.base_n * b.step_n;
  b.k_l1 = b.base_k * b.step_ka;
  return b;
}

TilingPlan PlanOf(std::string_view strategy, WqPlan&& wq, const WqFacts& facts) {
  TilingPlan plan;
  plan.strategy = std::string(strategy);
  plan.key.layout = KeyLayout::kWeightQuant;
  plan.key.weight_quant_bits = wq.key.Pack();
  plan.key.trans_a = wq.key.trans_a;
  plan.key.trans_b = wq.key.trans_b;
  plan.block_dim = wq.block_dim;
  plan.workspace_bytes = wq.workspace_bytes;
  // The vector cores dequantize the weight for the cube in every kernel.
  plan.kernel_type = KernelType::kMixed1To2;
  plan.quant_mode = QuantTypeName(facts.antiquant);
  switch (wq.data.kernel) {
    case KernelId::kWeightQuantAdaptiveSplit:
      plan.block = BlockOf<WqAsField>(wq.data);
      break;
    case KernelId::kWeightQuantRegBase:
      plan.block = BlockOf<WqRegBaseField>(wq.data);
      break;
    default:
      plan.block = BlockOf<WqCustomField>(wq.data);
      break;
  }
  plan.data = std::move(wq.data);
  plan.detail = LazyText(std::move(wq.detail));
  return plan;
}

class WeightQuantStrategy final : public Strategy {
 public:
  explicit WeightQuantStrategy(std::unique_ptr<WqStrategy> strategy)
      : strategy_(std::move(strategy)) {}
  std::string_view name() const override { return strategy_->name(); }
  Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                       const ChipSpec& chip) const override {
    const WqFacts wq = ParseWeightQuant(problem);
    std::string reason;
    const bool ok = strategy_->IsCapable(wq, chip, facts.explain ? &reason : nullptr);
    return {ok, LazyText(std::move(reason))};
  }
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem, const ProblemFacts& /*facts*/,
                                      const ChipSpec& chip) const override {
    const WqFacts wq = ParseWeightQuant(problem);
    absl::StatusOr<WqPlan> plan = strategy_->DoTiling(wq, chip);
    if (!plan.ok()) {
      if (IsCannFault(plan.status())) return plan.status();
      // CANN's walk ends at a capable template that fails.
      return WalkEndingError(plan.status().message());
    }
    return PlanOf(strategy_->name(), *std::move(plan), wq);
  }

 private:
  std::unique_ptr<WqStrategy> strategy_;
};

}  // namespace

absl::Status RegisterWeightQuantStrategies(StrategyRegistry& registry) {
  constexpr MatmulOp kOp = MatmulOp::kWeightQuantBatchMatmulV2;
  absl::Status status = registry.Add(
      std::make_unique<WeightQuantStrategy>(std::make_unique<AdaptiveSplitStrategy>()), kOp);
  status.Update(registry.Add(
      std::make_unique<WeightQuantStrategy>(std::make_unique<AntiRegStrategy>()), kOp));
  status.Update(registry.Add(
      std::make_unique<WeightQuantStrategy>(std::make_unique<CustomDeprecatedStrategy>()), kOp));
  return status;
}

}  // namespace npu::tiling::weight_quant
