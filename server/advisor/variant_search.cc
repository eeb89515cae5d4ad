#include "server/advisor/variant_search.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/advisor/variants.h"
#include "server/tiling/strategy_id.h"

namespace npu::advisor {
namespace {

using tiling::L1Residency;
using tiling::MatmulProblem;
using tiling::StrategyId;
using tiling::TilingPlan;

// The CANN strategies the variants start from; candidate names begin with
// them (e.g. "BASIC_ASWT/base_128x192").
constexpr std::string_view kAswt = tiling::StrategyName(StrategyId::kSwizzledDataParallel);
constexpr std::string_view kToMul = tiling::StrategyName(StrategyId::kVectorMul);

std::string BlockName(const TilingPlan& plan) {
  return absl::StrCat(plan.block.base_m, "x", plan.block.base_n);
}

bool IsStreamedAswt(const TilingPlan& plan) {
  return (plan.key.model == tiling::KernelModel::kBasic ||
          plan.key.model == tiling::KernelModel::kBasicSplitK) &&
         plan.key.full_load == tiling::FullLoad::kNone &&
         plan.l1_residency == L1Residency::kStreamed;
}

}  // namespace

void SearchBlocks(Session& session, const std::optional<TilingPlan>& aswt, uint64_t ops_cap) {
  const MatmulProblem& problem = session.problem();
  const tiling::ChipSpec& chip = session.chip();
  const std::vector<std::pair<uint64_t, uint64_t>> grid = BlockSearchGrid(problem, chip);
  std::vector<std::tuple<double, uint64_t, uint64_t>> ranked;
  for (const auto& [bm, bn] : grid) {
    if (aswt.has_value() && IsStreamedAswt(*aswt) && aswt->block.base_m == bm &&
        aswt->block.base_n == bn) {
      continue;  // CANN's own block is already a candidate
    }
    if (EstimateBlockOps(problem, chip, bm, bn) > ops_cap) continue;
    ranked.emplace_back(EstimateBlockCycles(problem, chip, bm, bn), bm, bn);
  }
  std::sort(ranked.begin(), ranked.end());
  std::optional<Candidate> best;
  Timing best_timing;
  uint32_t timed = 0;
  std::string rejected;
  for (const auto& [estimate, bm, bn] : ranked) {
    if (timed >= session.options().block_search_emulations) break;
    Offer offer = BlockPlan(problem, chip, bm, bn);
    if (!offer.ok) {
      if (rejected.empty()) rejected = offer.reason;
      continue;
    }
    if (session.OutOfBudget(absl::StrCat("block ", bm, "x", bn))) break;
    Candidate candidate;
    candidate.name = absl::StrCat(std::string(kAswt), "/base_", bm, "x", bn);
    std::optional<Timing> timed_plan =
        session.TimeVariant(offer.plan, VariantKind::kBlockSearch, candidate.name);
    if (!timed_plan.has_value()) continue;
    const Timing& timing = *timed_plan;
    ++timed;
    if (best.has_value() &&
        std::tie(timing.cycles, candidate.name) >= std::tie(best_timing.cycles, best->name)) {
      continue;
    }
    candidate.kind = VariantKind::kBlockSearch;
    candidate.explanation =
        absl::StrCat(offer.reason, "; CANN's cubeBoundParam / balanceRate score picks ",
                     aswt.has_value() ? BlockName(*aswt) : "another block", " for BASIC_ASWT");
    candidate.plan = std::move(offer.plan);
    best = std::move(candidate);
    best_timing = timing;
  }
  if (!best.has_value()) {
    session.NotOffer(VariantKind::kBlockSearch, absl::StrCat(std::string(kAswt), "/base_*"),
                     ranked.empty() ? "no block of the search grid other than CANN's fits"
                                    : absl::StrCat("no grid block was timed (", rejected, ")"));
    return;
  }
  absl::StrAppend(&best->explanation, "; fastest of ", timed, " blocks timed out of ", grid.size(),
                  " in the grid");
  session.Add(*std::move(best), best_timing);
}

void SearchWindows(Session& session, const TilingPlan& aswt) {
  const std::string obstacle = WindowObstacle(aswt, session.problem(), session.chip());
  if (!obstacle.empty()) {
    session.NotOffer(VariantKind::kSwatWindow, absl::StrCat(std::string(kAswt), "/swat_window_*"),
                     obstacle);
    return;
  }
  const std::vector<uint32_t> windows = WindowCandidates(aswt, session.problem(), session.chip());
  std::optional<Candidate> best;
  Timing best_timing;
  uint32_t timed = 0;
  for (uint32_t window : windows) {
    if (timed >= session.options().window_emulations) break;
    Offer offer = WindowPlan(aswt, session.problem(), session.chip(), window);
    if (!offer.ok) continue;
    if (session.OutOfBudget(absl::StrCat("window ", window))) break;
    Candidate candidate;
    candidate.name = absl::StrCat(std::string(kAswt), "/swat_window_", window);
    std::optional<Timing> timed_plan =
        session.TimeVariant(offer.plan, VariantKind::kSwatWindow, candidate.name);
    if (!timed_plan.has_value()) continue;
    const Timing& timing = *timed_plan;
    ++timed;
    if (best.has_value() &&
        std::tie(timing.cycles, candidate.name) >= std::tie(best_timing.cycles, best->name)) {
      continue;
    }
    candidate.kind = VariantKind::kSwatWindow;
    candidate.explanation =
        absl::StrCat(offer.reason,
                     " on CANN's BASIC_ASWT blocks: the operands exceed L2, so the window sets "
                     "how often B is re-read from DDR");
    candidate.plan = std::move(offer.plan);
    best = std::move(candidate);
    best_timing = timing;
  }
  if (!best.has_value()) {
    session.NotOffer(VariantKind::kSwatWindow, absl::StrCat(std::string(kAswt), "/swat_window_*"),
                     "no window other than CANN's applies");
    return;
  }
  absl::StrAppend(&best->explanation, "; fastest of ", timed, " windows timed");
  session.Add(*std::move(best), best_timing);
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
  Candidate candidate;
  candidate.name =
      absl::StrCat(prefix, "_", a_side ? offer.plan.block.m_l1 : offer.plan.block.n_l1);
  std::optional<Timing> timing =
      session.TimeVariant(offer.plan, VariantKind::kL1PartialResidency, candidate.name);
  if (!timing.has_value()) return;
  candidate.kind = VariantKind::kL1PartialResidency;
  candidate.explanation = offer.reason;
  candidate.plan = std::move(offer.plan);
  session.Add(std::move(candidate), *timing);
}

void OfferAivDot(Session& session) {
  Offer offer = AivDotPlan(session.problem(), session.chip());
  if (!offer.ok) {
    session.NotOffer(VariantKind::kAivDot, absl::StrCat(std::string(kToMul), "/aiv_*"),
                     offer.reason);
    return;
  }
  if (session.OutOfBudget(absl::StrCat(std::string(kToMul), "/aiv"))) return;
  Candidate candidate;
  candidate.name = absl::StrCat(std::string(kToMul), "/aiv_",
                                std::string(tiling::DataTypeName(session.problem().dtype_a)));
  std::optional<Timing> timing =
      session.TimeVariant(offer.plan, VariantKind::kAivDot, candidate.name);
  if (!timing.has_value()) return;
  candidate.kind = VariantKind::kAivDot;
  candidate.explanation = offer.reason;
  candidate.plan = std::move(offer.plan);
  session.Add(std::move(candidate), *timing);
}

}  // namespace npu::advisor
