#include "server/advisor/variant_search.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "emulator/grouped_emulation.h"
#include "emulator/work_estimate.h"
#include "server/advisor/variants.h"
#include "server/tiling/custom_plans.h"
#include "server/tiling/strategy_id.h"

namespace npu::advisor {
namespace {

using tiling::L1Residency;
using tiling::MatmulProblem;
using tiling::StrategyId;
using tiling::TilingPlan;
using tiling::quant::QuantBlockChoice;

// The CANN strategies the variants start from; candidate names begin with
// them (e.g. "BASIC_ASWT/base_128x192").
constexpr std::string_view kAswt = tiling::StrategyName(StrategyId::kSwizzledDataParallel);
constexpr std::string_view kToMul = tiling::StrategyName(StrategyId::kVectorMul);
// BatchMatMulV3's data-parallel strategy (CANN's ASW_BASIC), the base of the
// block search of BatchMatMulV3 / FusedMatMul problems.
constexpr std::string_view kBatchAsw = "ASW_BASIC";
// The transposed batch matmuls' one strategy, whose kernel the block search
// re-blocks.
constexpr std::string_view kTransposeBase = "BASE";
// GroupedMatmul's no-quant strategy, whose basic kernel the block search
// re-blocks.
constexpr std::string_view kGroupedNoQuant = "GROUPED_NO_QUANT";

std::string BlockName(const TilingPlan& plan) {
  return absl::StrCat(plan.block.base_m, "x", plan.block.base_n);
}

bool IsStreamedAswt(const TilingPlan& plan) {
  return (plan.key.model == tiling::KernelModel::kBasic ||
          plan.key.model == tiling::KernelModel::kBasicSplitK) &&
         plan.key.full_load == tiling::FullLoad::kNone &&
         plan.l1_residency == L1Residency::kStreamed;
}

// The fastest plan of one variant search, ties broken by name.
class FastestVariant {
 public:
  explicit FastestVariant(VariantKind kind) : kind_(kind) {}

  // Times `plan` as candidate `name`; keeps it, explained by `explain()`,
  // when it is the fastest so far. A plan the emulator rejects is reported
  // by the session and not counted.
  template <typename Explain>
  void Time(Session& session, TilingPlan plan, std::string name, Explain explain) {
    std::optional<Timing> timing = session.TimeVariant(plan, kind_, name);
    if (!timing.has_value()) return;
    ++timed_;
    if (best_.has_value() &&
        std::tie(timing->cycles, name) >= std::tie(best_timing_.cycles, best_->name)) {
      return;
    }
    Candidate candidate;
    candidate.name = std::move(name);
    candidate.kind = kind_;
    candidate.explanation = explain();
    candidate.plan = std::move(plan);
    best_ = std::move(candidate);
    best_timing_ = *timing;
  }

  uint32_t timed() const { return timed_; }
  bool found() const { return best_.has_value(); }

  // Adds the fastest plan as a candidate, `note` appended to its
  // explanation.
  void AddTo(Session& session, std::string_view note) {
    absl::StrAppend(&best_->explanation, std::string(note));
    session.Add(*std::move(best_), best_timing_);
  }

 private:
  VariantKind kind_;
  std::optional<Candidate> best_;
  Timing best_timing_;
  uint32_t timed_ = 0;
};

// Times the offered plan and, when it ran, adds it as a candidate.
void TimeOffer(Session& session, VariantKind kind, std::string name, Offer offer) {
  std::optional<Timing> timing = session.TimeVariant(offer.plan, kind, name);
  if (!timing.has_value()) return;
  Candidate candidate;
  candidate.name = std::move(name);
  candidate.kind = kind;
  candidate.explanation = std::move(offer.reason);
  candidate.plan = std::move(offer.plan);
  session.Add(std::move(candidate), *timing);
}

}  // namespace

void SearchBlocks(Session& session, const std::optional<TilingPlan>& aswt, uint64_t ops_cap) {
  const MatmulProblem& problem = session.problem();
  const tiling::ChipSpec& chip = session.chip();
  // A batched problem searches one batch's blocks; its estimates stack the
  // batches' rows (the kernel walks batch x tiles over the cores).
  uint64_t batches = 1;
  // GroupedMatmul searches its no-quant kernel's blocks over the experts'
  // stacked rows; its estimates walk the experts themselves.
  const bool grouped = problem.op == tiling::MatmulOp::kGroupedMatmul;
  const MatmulProblem one_batch =
      grouped ? emu::GroupedTimedProblem(problem) : OneBatchProblem(problem, &batches);
  MatmulProblem stacked = grouped ? problem : one_batch;
  if (!grouped) stacked.m = static_cast<int64_t>(static_cast<uint64_t>(one_batch.m) * batches);
  // The transposed batch matmuls search their own (BASE's) kernel's blocks.
  const bool transposed = problem.op == tiling::MatmulOp::kTransposeBatchMatMul ||
                          problem.op == tiling::MatmulOp::kTransposeQuantBatchMatMul;
  const std::string prefix = problem.op == tiling::MatmulOp::kMatMulV3 ? std::string(kAswt)
                             : transposed                              ? std::string(kTransposeBase)
                             : grouped                                 ? std::string(kGroupedNoQuant)
                                                                       : std::string(kBatchAsw);
  const std::vector<std::pair<uint64_t, uint64_t>> grid = BlockSearchGrid(one_batch, chip);
  std::vector<std::tuple<double, uint64_t, uint64_t>> ranked;
  for (const auto& [bm, bn] : grid) {
    if (aswt.has_value() && IsStreamedAswt(*aswt) && aswt->block.base_m == bm &&
        aswt->block.base_n == bn) {
      continue;  // CANN's own block is already a candidate
    }
    if (grouped && session.cann_plan().block.base_m == bm &&
        session.cann_plan().block.base_n == bn) {
      continue;  // as CANN's choice
    }
    if (EstimateBlockOps(stacked, chip, bm, bn) > ops_cap) continue;
    ranked.emplace_back(EstimateBlockCycles(stacked, chip, bm, bn), bm, bn);
  }
  std::sort(ranked.begin(), ranked.end());
  FastestVariant fastest(VariantKind::kBlockSearch);
  std::string rejected;
  for (const auto& [estimate, bm, bn] : ranked) {
    if (fastest.timed() >= session.options().block_search_emulations) break;
    Offer offer = BlockPlan(problem, chip, bm, bn);
    if (!offer.ok) {
      if (rejected.empty()) rejected = offer.reason;
      continue;
    }
    if (session.OutOfBudget(absl::StrCat("block ", bm, "x", bn))) break;
    fastest.Time(session, std::move(offer.plan), absl::StrCat(prefix, "/base_", bm, "x", bn), [&] {
      if (grouped) {
        return absl::StrCat(offer.reason,
                            "; CANN's no-quant tiling takes one block for every expert, sized "
                            "by the L0 buffers and not by the experts' rows");
      }
      return absl::StrCat(offer.reason, "; CANN's cubeBoundParam / balanceRate score picks ",
                          aswt.has_value() ? BlockName(*aswt) : "another block", " for ", prefix);
    });
  }
  if (!fastest.found()) {
    session.NotOffer(VariantKind::kBlockSearch, absl::StrCat(prefix, "/base_*"),
                     ranked.empty() ? "no block of the search grid other than CANN's fits"
                                    : absl::StrCat("no grid block was timed (", rejected, ")"));
    return;
  }
  fastest.AddTo(session, absl::StrCat("; fastest of ", fastest.timed(), " blocks timed out of ",
                                      grid.size(), " in the grid"));
}

void SearchQuantBlocks(Session& session, const TilingPlan& cann, uint64_t ops_cap) {
  const MatmulProblem& problem = session.problem();
  const tiling::ChipSpec& chip = session.chip();
  const std::string prefix = cann.strategy;
  const absl::StatusOr<QuantBlockChoice> own = tiling::quant::QuantBlockOfPlan(cann);
  if (!own.ok()) {
    session.NotOffer(VariantKind::kBlockSearch, absl::StrCat(prefix, "/base_*"),
                     std::string(own.status().message()));
    return;
  }
  auto same = [](const QuantBlockChoice& a, const QuantBlockChoice& b) {
    return std::tie(a.base_m, a.base_n, a.base_k, a.step_k) ==
           std::tie(b.base_m, b.base_n, b.base_k, b.step_k);
  };
  // CANN's block first (its L1 loads as deep as L1 allows, then its deepest
  // base_k), then the grid by the first-order estimate.
  std::vector<std::pair<uint64_t, uint64_t>> order = {{own->base_m, own->base_n}};
  const std::vector<std::pair<uint64_t, uint64_t>> grid = QuantBlockSearchGrid(problem, chip);
  std::vector<std::tuple<double, uint64_t, uint64_t>> ranked;
  for (const auto& [bm, bn] : grid) {
    ranked.emplace_back(EstimateQuantBlockCycles(problem, chip, bm, bn), bm, bn);
  }
  std::sort(ranked.begin(), ranked.end());
  for (const auto& [estimate, bm, bn] : ranked) order.emplace_back(bm, bn);
  std::vector<QuantBlockChoice> tried;
  FastestVariant fastest(VariantKind::kBlockSearch);
  std::string rejected;
  for (size_t i = 0; i < order.size() + 1; ++i) {
    if (fastest.timed() >= session.options().block_search_emulations) break;
    // Entry 1 is CANN's block again with the deepest base_k.
    const auto [bm, bn] = i == 0 ? order[0] : order[i - 1];
    const uint64_t base_k_cap = i == 1 ? 0 : own->base_k;
    absl::StatusOr<QuantBlockChoice> choice =
        tiling::quant::DeepestQuantStaging(problem, chip, bm, bn, base_k_cap);
    if (!choice.ok()) {
      if (rejected.empty()) rejected = std::string(choice.status().message());
      continue;
    }
    // CANN's own plan is already a candidate (unless its kernel fully
    // loads A: the same block streamed is another kernel).
    if (same(*choice, *own) && !tiling::quant::KeepsAInL1(cann)) continue;
    if (std::any_of(tried.begin(), tried.end(),
                    [&](const QuantBlockChoice& c) { return same(c, *choice); })) {
      continue;
    }
    tried.push_back(*choice);
    Offer offer = QuantBlockPlan(problem, chip, cann, *choice);
    if (!offer.ok) {
      if (rejected.empty()) rejected = offer.reason;
      continue;
    }
    if (emu::EstimateEmulationWork(offer.plan, problem).expected_ops > ops_cap) continue;
    const std::string block =
        absl::StrCat(choice->base_m, "x", choice->base_n, "x", choice->base_k);
    if (session.OutOfBudget(absl::StrCat("block ", block))) break;
    fastest.Time(
        session, std::move(offer.plan),
        absl::StrCat(prefix, "/base_", block, "_l1k_", choice->step_k * choice->base_k), [&] {
          return absl::StrCat(offer.reason, "; CANN's base block calculator picks ", own->base_m,
                              "x", own->base_n, "x", own->base_k, " with L1 loads of ",
                              own->step_k * own->base_k, " K for ", prefix);
        });
  }
  if (!fastest.found()) {
    session.NotOffer(VariantKind::kBlockSearch, absl::StrCat(prefix, "/base_*"),
                     rejected.empty() ? "no block of the search grid other than CANN's fits"
                                      : absl::StrCat("no grid block was timed (", rejected, ")"));
    return;
  }
  fastest.AddTo(session, absl::StrCat("; fastest of ", fastest.timed(), " blocks timed out of ",
                                      grid.size(), " in the grid"));
}

void SearchWindows(Session& session, const TilingPlan& base, std::string_view prefix_view) {
  const std::string prefix(prefix_view);
  const std::string obstacle = WindowObstacle(base, session.problem(), session.chip());
  if (!obstacle.empty()) {
    session.NotOffer(VariantKind::kSwatWindow, absl::StrCat(prefix, "/swat_window_*"), obstacle);
    return;
  }
  const std::vector<uint32_t> windows = WindowCandidates(base, session.problem(), session.chip());
  FastestVariant fastest(VariantKind::kSwatWindow);
  for (uint32_t window : windows) {
    if (fastest.timed() >= session.options().window_emulations) break;
    Offer offer = WindowPlan(base, session.problem(), session.chip(), window);
    if (!offer.ok) continue;
    if (session.OutOfBudget(absl::StrCat("window ", window))) break;
    fastest.Time(session, std::move(offer.plan), absl::StrCat(prefix, "/swat_window_", window),
                 [&] {
                   return absl::StrCat(offer.reason, " on CANN's ", prefix,
                                       " blocks: the operands exceed L2, so the window sets how "
                                       "often B is re-read from DDR");
                 });
  }
  if (!fastest.found()) {
    session.NotOffer(VariantKind::kSwatWindow, absl::StrCat(prefix, "/swat_window_*"),
                     "no window other than CANN's applies");
    return;
  }
  fastest.AddTo(session, absl::StrCat("; fastest of ", fastest.timed(), " windows timed"));
}

void OfferResidency(Session& session, const TilingPlan& aswt, L1Residency side) {
  const bool a_side = side == L1Residency::kABand;
  Offer offer = ResidencyPlan(aswt, session.problem(), session.chip(), side);
  const std::string prefix = absl::StrCat(std::string(kAswt), a_side ? "/l1_band_a" : "/l1_band_b");
  if (!offer.ok) {
    session.NotOffer(VariantKind::kL1PartialResidency, absl::StrCat(prefix, "_*"), offer.reason);
    return;
  }
  if (session.OutOfBudget(prefix)) return;
  std::string name =
      absl::StrCat(prefix, "_", a_side ? offer.plan.block.m_l1 : offer.plan.block.n_l1);
  TimeOffer(session, VariantKind::kL1PartialResidency, std::move(name), std::move(offer));
}

void OfferAivDot(Session& session) {
  Offer offer = AivDotPlan(session.problem(), session.chip());
  if (!offer.ok) {
    session.NotOffer(VariantKind::kAivDot, absl::StrCat(std::string(kToMul), "/aiv_*"),
                     offer.reason);
    return;
  }
  if (session.OutOfBudget(absl::StrCat(std::string(kToMul), "/aiv"))) return;
  std::string name = absl::StrCat(std::string(kToMul), "/aiv_",
                                  std::string(tiling::DataTypeName(session.problem().dtype_a)));
  TimeOffer(session, VariantKind::kAivDot, std::move(name), std::move(offer));
}

}  // namespace npu::advisor
