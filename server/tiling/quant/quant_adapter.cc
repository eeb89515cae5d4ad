#include "server/tiling/quant/quant_adapter.h"

#include <cassert>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/quant/cube_asw.h"
#include "server/tiling/quant/cube_basic_api_asw.h"
#include "server/tiling/quant/mix_asw.h"
#include "server/tiling/quant/mix_basic_api_asw.h"
#include "server/tiling/quant/mx_basic_api_asw.h"
#include "server/tiling/quant/perblock_basic_api_asw.h"
#include "server/tiling/quant/quant_capability.h"
#include "server/tiling/quant/quant_dtype.h"
#include "server/tiling/quant/quant_strategy.h"
#include "server/tiling/quant/stream_k_tiling.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/strategy.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling::quant {
namespace {

// A ported strategy in the engine's registry.
class PortedStrategy final : public Strategy {
 public:
  explicit PortedStrategy(std::unique_ptr<QuantStrategy> strategy)
      : strategy_(std::move(strategy)) {}
  std::string_view name() const override { return strategy_->name(); }
  Capability IsCapable(const MatmulProblem& /*problem*/, const ProblemFacts& facts,
                       const ChipSpec& chip) const override {
    std::string reason;
    const bool ok = strategy_->IsCapable(facts.quant, chip, facts.explain ? &reason : nullptr);
    return {ok, std::move(reason)};
  }
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& /*problem*/, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override {
    absl::StatusOr<QuantPlan> plan = strategy_->DoTiling(facts.quant, chip);
    if (!plan.ok()) {
      // CANN's walk ends at a capable strategy that fails.
      if (plan.status().code() == absl::StatusCode::kFailedPrecondition) {
        return WalkEndingError(plan.status().message());
      }
      return plan.status();
    }
    return PlanOfQuant(*plan, facts.quant);
  }

 private:
  std::unique_ptr<QuantStrategy> strategy_;
};

template <typename T>
std::unique_ptr<QuantStrategy> Make() {
  return std::make_unique<T>();
}

// CANN's seven strategies, indexed by QuantStrategyId.
using Factory = std::unique_ptr<QuantStrategy> (*)();
constexpr Factory kFactories[] = {
    Make<MxStreamKStrategy>,            // kMxStreamK
    Make<MxBasicApiAswStrategy>,        // kMxBasicApiAsw
    Make<CubeBasicApiAswStrategy>,      // kCubeBasicApiAsw
    Make<CubeAswStrategy>,              // kCubeAsw
    Make<MixBasicApiAswStrategy>,       // kMixBasicApiAsw
    Make<MixAswStrategy>,               // kMixAsw
    Make<PerblockBasicApiAswStrategy>,  // kPerblockBasicApiAsw
};
static_assert(std::size(kFactories) == kQuantStrategyOrder.size());

// The struct of a plan: its word count, and for 38 words the struct every
// basic-API kernel shares.
absl::StatusOr<KernelId> KernelOfWords(size_t words) {
  for (KernelId kernel : {KernelId::kQuantBasic, KernelId::kQuantStreamK,
                          KernelId::kQuantWithoutBatch, KernelId::kQuantHighLevel}) {
    if (StructWords(TilingStructOf(kernel)) == words) return kernel;
  }
  return absl::InternalError(absl::StrCat("no QuantBatchMatmulV3 struct has ", words, " words"));
}

uint64_t FieldOr(const TilingData& data, std::string_view name, uint64_t fallback) {
  return data.Get(name).value_or(fallback);
}

}  // namespace

std::string_view QuantModeName(const QuantFacts& facts) {
  if (facts.is_mx) return "MX";
  if (facts.is_per_block) return facts.group_size_m == 1 ? "PERTILE" : "PERBLOCK";
  if (facts.is_double_scale) return "DOUBLE_SCALE";
  if (facts.is_pertoken) return "PERTOKEN";
  if (facts.is_per_channel) return "PERCHANNEL";
  return "PERTENSOR";
}

absl::StatusOr<TilingPlan> PlanOfQuant(const QuantPlan& quant, const QuantFacts& facts) {
  ASSIGN_OR_RETURN(const KernelId kernel, KernelOfWords(quant.words.size()));
  TilingPlan plan;
  ASSIGN_OR_RETURN(plan.data, TilingDataFromWords(kernel, quant.words));
  plan.strategy = quant.strategy;
  TilingKey& key = plan.key;
  key.layout = KeyLayout::kQuant;
  key.trans_a = quant.key.a_trans != 0;
  key.trans_b = quant.key.b_trans != 0;
  key.batch_model = static_cast<uint8_t>(quant.key.batch_mode);
  key.quant_kernel = static_cast<uint8_t>(quant.key.kernel);
  key.api_level = static_cast<ApiLevel>(quant.key.api_level);
  plan.block_dim = quant.block_dim;
  plan.workspace_bytes = quant.workspace_bytes;
  plan.kernel_type = IsFourBit(facts.x1) ? KernelType::kMixed1To2 : KernelTypeOf(kernel, key);
  plan.quant_mode = QuantModeName(facts);
  // The block sizes, as the struct states them.
  const TilingData& d = plan.data;
  BlockTiling& b = plan.block;
  const bool high = kernel == KernelId::kQuantHighLevel;
  const bool packed = kernel == KernelId::kQuantWithoutBatch;
  const std::string prefix = packed ? "" : "matmulTiling.";
  b.base_m = FieldOr(d, absl::StrCat(prefix, "baseM"), 0);
  b.base_n = FieldOr(d, absl::StrCat(prefix, "baseN"), 0);
  b.base_k = FieldOr(d, absl::StrCat(prefix, "baseK"), 0);
  b.k_l1 = high ? b.base_k * FieldOr(d, "matmulTiling.stepKa", 1)
                : FieldOr(d, absl::StrCat(prefix, "kAL1"), b.base_k);
  b.m_l1 = b.base_m;
  b.n_l1 = b.base_n;
  b.single_core_m = high ? FieldOr(d, "matmulTiling.singleCoreM", facts.m) : facts.m;
  b.single_core_n = high ? FieldOr(d, "matmulTiling.singleCoreN", facts.n) : facts.n;
  b.single_core_k = facts.k;
  return plan;
}

absl::Status RegisterQuantStrategies(StrategyRegistry& registry) {
  absl::Status status;
  for (QuantStrategyId id : kQuantStrategyOrder) {
    std::unique_ptr<QuantStrategy> strategy = kFactories[static_cast<size_t>(id)]();
    // The table and the ids agree on every name.
    assert(strategy->name() == QuantStrategyName(id));
    status.Update(registry.Add(std::make_unique<PortedStrategy>(std::move(strategy)),
                               MatmulOp::kQuantBatchMatmulV3));
  }
  return status;
}

}  // namespace npu::tiling::quant
