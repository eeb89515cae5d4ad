#include "server/tiling/quant/quant_adapter.h"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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
    if (facts.quant == nullptr) return Capability::No("the problem did not parse");
    std::string reason;
    const bool ok = strategy_->IsCapable(*facts.quant, chip, facts.explain ? &reason : nullptr);
    return {ok, std::move(reason)};
  }
  absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& /*problem*/, const ProblemFacts& facts,
                                      const ChipSpec& chip) const override {
    absl::StatusOr<QuantPlan> plan = strategy_->DoTiling(*facts.quant, chip);
    if (!plan.ok()) {
      // CANN's walk ends at a capable strategy that fails.
      if (plan.status().code() == absl::StatusCode::kFailedPrecondition) {
        return WalkEndingError(plan.status().message());
      }
      return plan.status();
    }
    return PlanOfQuant(*plan, *facts.quant);
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

// Where the block sizes sit in a struct: word indices of baseM, baseN,
// baseK and the K of an L1 load (kAL1, or stepKa for the high-level
// struct, whose kL1 is stepKa * baseK), and for the 16-word struct the
// packing of baseM | baseN << 16 and baseK in the low half of its word.
struct BlockWords {
  KernelId kernel;
  size_t words;
  size_t base_m, base_n, base_k, k_l1;
  bool packed;     // the 16-word struct
  bool step_of_k;  // k_l1 holds stepKa
  // The high-level struct's singleCoreM / singleCoreN (0: M and N whole).
  size_t single_core_m = 0, single_core_n = 0;
};

// Looked up once by member name in the struct tables.
const std::vector<BlockWords>& BlockWordsTable() {
  static const std::vector<BlockWords>* const table = [] {
    auto word_of = [](KernelId kernel, std::string_view name) {
      // The word a 32-bit member starts (packed members share a word).
      size_t bits = 0;
      for (const TilingFieldSpec& field : TilingStructOf(kernel).fields) {
        if (field.bits == 32) bits = (bits + 31) / 32 * 32;
        if (field.name == name) return bits / 32;
        bits += field.bits;
      }
      return size_t{0};
    };
    auto* rows = new std::vector<BlockWords>();
    for (KernelId kernel : {KernelId::kQuantBasic, KernelId::kQuantStreamK}) {
      rows->push_back({kernel, StructWords(TilingStructOf(kernel)),
                       word_of(kernel, "matmulTiling.baseM"), word_of(kernel, "matmulTiling.baseN"),
                       word_of(kernel, "matmulTiling.baseK"), word_of(kernel, "matmulTiling.kAL1"),
                       false, false});
    }
    constexpr KernelId kPacked = KernelId::kQuantWithoutBatch;
    rows->push_back({kPacked, StructWords(TilingStructOf(kPacked)), word_of(kPacked, "baseM"),
                     word_of(kPacked, "baseM"), word_of(kPacked, "baseK"), word_of(kPacked, "kAL1"),
                     true, false});
    constexpr KernelId kHigh = KernelId::kQuantHighLevel;
    rows->push_back({kHigh, StructWords(TilingStructOf(kHigh)),
                     word_of(kHigh, "matmulTiling.baseM"), word_of(kHigh, "matmulTiling.baseN"),
                     word_of(kHigh, "matmulTiling.baseK"), word_of(kHigh, "matmulTiling.stepKa"),
                     false, true, word_of(kHigh, "matmulTiling.singleCoreM"),
                     word_of(kHigh, "matmulTiling.singleCoreN")});
    return rows;
  }();
  return *table;
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
  const std::vector<BlockWords>& table = BlockWordsTable();
  const auto row = std::find_if(table.begin(), table.end(),
                                [&](const BlockWords& b) { return b.words == quant.words.size(); });
  if (row == table.end()) {
    return absl::InternalError(
        absl::StrCat("no QuantBatchMatmulV3 struct has ", quant.words.size(), " words"));
  }
  TilingPlan plan;
  ASSIGN_OR_RETURN(plan.data, TilingDataFromWords(row->kernel, quant.words));
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
  plan.kernel_type = IsFourBit(facts.x1) ? KernelType::kMixed1To2 : KernelTypeOf(row->kernel, key);
  plan.quant_mode = QuantModeName(facts);
  // The block sizes, as the struct states them.
  const std::vector<uint32_t>& w = quant.words;
  BlockTiling& b = plan.block;
  if (row->packed) {
    b.base_m = w[row->base_m] & 0xFFFF;
    b.base_n = w[row->base_n] >> 16;
    b.base_k = w[row->base_k] & 0xFFFF;
  } else {
    b.base_m = w[row->base_m];
    b.base_n = w[row->base_n];
    b.base_k = w[row->base_k];
  }
  b.k_l1 = row->step_of_k ? b.base_k * std::max<uint64_t>(w[row->k_l1], 1) : w[row->k_l1];
  b.m_l1 = b.base_m;
  b.n_l1 = b.base_n;
  b.single_core_m = row->single_core_m != 0 ? w[row->single_core_m] : facts.m;
  b.single_core_n = row->single_core_n != 0 ? w[row->single_core_n] : facts.n;
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
