#include "server/advisor/advisor.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "emulator/emulator.h"
#include "server/advisor/variants.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/status_macros.h"
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

bool IsStrategy(std::string_view name, StrategyId id) { return tiling::FindStrategyId(name) == id; }

// The block search never times a plan that needs this many times more pipe
// operations than CANN's own (tiny blocks on a large problem cost the
// emulator far more than they could gain), except below the floor, where
// every plan is cheap to time.
constexpr uint64_t kBlockSearchOpsFactor = 2;
constexpr uint64_t kBlockSearchOpsFloor = 250'000;
// A cube plan within this fraction of the roofline bound leaves the cube
// variants less to gain than the timing model's own resolution (the tail
// round and pipeline fill alone cost a few percent), so they are not timed.
constexpr double kRooflineSlack = 0.03;

// No cube plan runs faster in the emulator than the cube peak on all cores
// or the unique operand bytes at the chip's DDR rate (every first touch of
// an operand misses L2).
double CubeRooflineCycles(const MatmulProblem& problem, const tiling::ChipSpec& chip) {
  const emu::ChipModel model = emu::ChipModel::FromSpec(chip);
  const double macs = static_cast<double>(problem.m) * static_cast<double>(problem.n) *
                      static_cast<double>(problem.k);
  const double cube = macs / (model.PeakMacsPerCycle(problem.dtype_a, problem.hf32) *
                              static_cast<double>(chip.aic_num));
  const double bytes =
      static_cast<double>(problem.m) * problem.k * tiling::DataTypeBytes(problem.dtype_a) +
      static_cast<double>(problem.k) * problem.n * tiling::DataTypeBytes(problem.dtype_b);
  return std::max(cube, bytes / static_cast<double>(model.ddr_bytes_per_cycle));
}

// Prefix of the not-offered reason of a variant the emulator cannot run.
constexpr char kEmulatorRejects[] = "the emulator rejects the plan: ";

struct Timing {
  uint64_t cycles = 0;
  double us = 0;
  std::string bound;
  uint64_t events = 0;
};

// Runs the emulations of one Advise() call and keeps the budget.
class Session {
 public:
  Session(const MatmulProblem& problem, const tiling::ChipSpec& chip, const AdviseOptions& options,
          Advice& advice)
      : problem_(problem), chip_(chip), options_(options), advice_(advice) {
    timing_problem_ = problem;
    const bool nd = problem.format_a == tiling::Format::kNd &&
                    problem.format_b == tiling::Format::kNd &&
                    problem.format_c == tiling::Format::kNd && !problem.a_slice.enabled;
    if (!nd) {
      timing_problem_.format_a = timing_problem_.format_b = timing_problem_.format_c =
          tiling::Format::kNd;
      timing_problem_.storage_shape_b.clear();
      timing_problem_.a_slice = tiling::SliceView{};
      advice_.timing_note =
          "timed with ND operands: the emulator models ND data only (FRACTAL_NZ or a slice view "
          "moves the same bytes)";
    }
    start_ms_ = Now();
  }

  double Now() const {
    if (options_.clock_ms) return options_.clock_ms();
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  double Elapsed() const { return Now() - start_ms_; }

  // True once the budget is spent; records `next` as skipped.
  bool OutOfBudget(std::string_view next) {
    if (options_.max_advisory_ms <= 0) return false;
    if (!advice_.budget_exhausted && Elapsed() <= options_.max_advisory_ms) return false;
    if (!advice_.budget_exhausted) {
      advice_.budget_exhausted = true;
      advice_.budget_note =
          absl::StrCat("advisory budget of ", options_.max_advisory_ms, " ms spent after ",
                       advice_.emulations, " emulations; skipped:");
    }
    absl::StrAppend(&advice_.budget_note, " ", std::string(next));
    return true;
  }

  absl::StatusOr<Timing> Time(const TilingPlan& plan, bool split_rw) {
    emu::EmulatorOptions options;
    options.timing_only = true;
    if (split_rw) options.gm_split = options_.split_rw;
    options.gm_split.enabled = split_rw;
    ++advice_.emulations;
    ASSIGN_OR_RETURN(emu::EmulationResult result,
                     emu::Emulate(plan, timing_problem_, chip_, {}, options));
    return Timing{result.stats.total_cycles, result.stats.microseconds, result.stats.bound,
                  result.stats.events};
  }

  // Times a variant's plan; a plan the emulator rejects (a bug in its
  // generator) is reported as not offered, with the emulator's reason,
  // instead of failing the whole advice.
  std::optional<Timing> TimeVariant(const TilingPlan& plan, VariantKind kind,
                                    const std::string& name) {
    absl::StatusOr<Timing> timing = Time(plan, false);
    if (timing.ok()) return *timing;
    ++advice_.rejected_variants;
    NotOffer(kind, name, absl::StrCat(kEmulatorRejects, timing.status().ToString()));
    return std::nullopt;
  }

  void Add(Candidate candidate, const Timing& timing) {
    candidate.predicted_cycles = timing.cycles;
    candidate.predicted_us = timing.us;
    candidate.bound = timing.bound;
    advice_.candidates.push_back(std::move(candidate));
  }

  void NotOffer(VariantKind kind, std::string name, std::string reason) {
    advice_.not_offered.push_back({kind, std::move(name), std::move(reason)});
  }

  const MatmulProblem& problem() const { return problem_; }
  const tiling::ChipSpec& chip() const { return chip_; }
  const AdviseOptions& options() const { return options_; }

 private:
  const MatmulProblem& problem_;
  MatmulProblem timing_problem_;
  const tiling::ChipSpec& chip_;
  const AdviseOptions& options_;
  Advice& advice_;
  double start_ms_ = 0;
};

std::string BlockName(const TilingPlan& plan) {
  return absl::StrCat(plan.block.base_m, "x", plan.block.base_n);
}

bool IsStreamedAswt(const TilingPlan& plan) {
  return (plan.key.model == tiling::KernelModel::kBasic ||
          plan.key.model == tiling::KernelModel::kBasicSplitK) &&
         plan.key.full_load == tiling::FullLoad::kNone &&
         plan.l1_residency == L1Residency::kStreamed;
}

// (1) Base blocks by predicted time: order the grid by the first-order
// estimate, time the most promising blocks, offer the fastest.
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

// (2) The SWAT window length: time the windows WindowCandidates proposes.
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

bool Before(const Candidate& a, const Candidate& b) {
  return std::tie(a.predicted_cycles, a.name) < std::tie(b.predicted_cycles, b.name);
}

}  // namespace

std::string_view VariantKindName(VariantKind kind) {
  switch (kind) {
    case VariantKind::kCannStrategy:
      return "CANN_STRATEGY";
    case VariantKind::kBlockSearch:
      return "BLOCK_SEARCH";
    case VariantKind::kSwatWindow:
      return "SWAT_WINDOW";
    case VariantKind::kL1PartialResidency:
      return "L1_PARTIAL_RESIDENCY";
    case VariantKind::kAivDot:
      return "AIV_DOT";
  }
  return "?";
}

std::string_view NumericsCheckName(NumericsCheck check) {
  switch (check) {
    case NumericsCheck::kNotChecked:
      return "NOT_CHECKED";
    case NumericsCheck::kPassed:
      return "PASSED";
    case NumericsCheck::kFailed:
      return "FAILED";
  }
  return "?";
}

absl::StatusOr<Advice> Advise(const tiling::StrategyRegistry& registry,
                              const MatmulProblem& problem, const tiling::ChipSpec& chip,
                              const AdviseOptions& options) {
  Advice advice;
  ASSIGN_OR_RETURN(advice.cann, registry.Decide(problem, chip));
  Session session(problem, chip, options, advice);
  const TilingPlan& cann_plan = advice.cann.plan;

  // CANN's choice: always timed, it is the baseline of every speed-up.
  absl::StatusOr<Timing> cann_timing = session.Time(cann_plan, false);
  if (!cann_timing.ok()) {
    return absl::Status(cann_timing.status().code(),
                        absl::StrCat("timing CANN's choice ", cann_plan.strategy, ": ",
                                     cann_timing.status().message()));
  }
  Candidate cann;
  cann.name = cann_plan.strategy;
  cann.kind = VariantKind::kCannStrategy;
  cann.plan = cann_plan;
  cann.is_cann_choice = true;
  cann.explanation = absl::StrCat("CANN's choice: ", cann_plan.detail);
  session.Add(std::move(cann), *cann_timing);

  // Every other capable built-in strategy, as CANN would tile it if chosen.
  std::optional<TilingPlan> aswt;
  if (IsStrategy(cann_plan.strategy, StrategyId::kSwizzledDataParallel)) aswt = cann_plan;
  for (const std::string& name : registry.Names()) {
    if (name == cann_plan.strategy) continue;
    tiling::DecideOptions forced;
    forced.forced_strategy = name;
    absl::StatusOr<tiling::TilingDecision> decision = registry.Decide(problem, chip, forced);
    if (!decision.ok()) {
      session.NotOffer(VariantKind::kCannStrategy, name, std::string(decision.status().message()));
      continue;
    }
    if (IsStrategy(name, StrategyId::kSwizzledDataParallel)) aswt = decision->plan;
    if (session.OutOfBudget(name)) continue;
    absl::StatusOr<Timing> timing = session.Time(decision->plan, false);
    if (!timing.ok()) {
      session.NotOffer(VariantKind::kCannStrategy, name,
                       absl::StrCat("the emulator cannot time it: ", timing.status().message()));
      continue;
    }
    Candidate candidate;
    candidate.name = name;
    candidate.kind = VariantKind::kCannStrategy;
    candidate.plan = decision->plan;
    candidate.explanation =
        absl::StrCat("CANN's ", name, " if it had priority: ", decision->plan.detail);
    session.Add(std::move(candidate), *timing);
  }

  // The variants.
  const std::string obstacle = VariantObstacle(problem);
  if (!obstacle.empty()) {
    for (VariantKind kind : {VariantKind::kAivDot, VariantKind::kBlockSearch,
                             VariantKind::kL1PartialResidency, VariantKind::kSwatWindow}) {
      session.NotOffer(kind, std::string(VariantKindName(kind)), obstacle);
    }
  } else {
    OfferAivDot(session);
    const double roofline = CubeRooflineCycles(problem, chip);
    const bool at_roofline =
        static_cast<double>(cann_timing->cycles) <= (1 + kRooflineSlack) * roofline;
    const uint64_t ops_cap =
        std::max(kBlockSearchOpsFloor, kBlockSearchOpsFactor * cann_timing->events);
    if (at_roofline) {
      const std::string why =
          absl::StrCat("CANN's choice (", cann_timing->cycles, " cycles) is within ",
                       kRooflineSlack * 100, "% of the roofline bound (",
                       static_cast<uint64_t>(roofline), " cycles): no cube variant can gain more");
      for (VariantKind kind : {VariantKind::kBlockSearch, VariantKind::kL1PartialResidency,
                               VariantKind::kSwatWindow}) {
        session.NotOffer(kind, std::string(VariantKindName(kind)), why);
      }
    } else {
      SearchBlocks(session, aswt, ops_cap);
      if (aswt.has_value()) {
        OfferResidency(session, *aswt, L1Residency::kABand);
        OfferResidency(session, *aswt, L1Residency::kBBand);
        SearchWindows(session, *aswt);
      } else {
        for (VariantKind kind : {VariantKind::kL1PartialResidency, VariantKind::kSwatWindow}) {
          session.NotOffer(kind, std::string(VariantKindName(kind)),
                           absl::StrCat(std::string(kAswt), " has no plan for this problem"));
        }
      }
    }
  }

  // Ranking: predicted cycles, ties by name; CANN's choice always stays.
  std::vector<Candidate>& list = advice.candidates;
  std::sort(list.begin(), list.end(), Before);
  const size_t limit = std::max<uint32_t>(1, options.max_candidates);
  if (list.size() > limit) {
    auto cann_it =
        std::find_if(list.begin(), list.end(), [](const Candidate& c) { return c.is_cann_choice; });
    if (static_cast<size_t>(cann_it - list.begin()) >= limit) {
      std::rotate(list.begin() + static_cast<std::ptrdiff_t>(limit) - 1, cann_it, cann_it + 1);
    }
    for (size_t i = limit; i < list.size(); ++i) {
      advice.not_offered.push_back(
          {list[i].kind, list[i].name,
           absl::StrCat("ranked ", i + 1, ", beyond max_candidates=", limit)});
    }
    list.resize(limit);
  }
  const uint64_t cann_cycles = cann_timing->cycles;
  for (Candidate& candidate : list) {
    candidate.speedup_vs_cann =
        candidate.predicted_cycles == 0
            ? 1.0
            : static_cast<double>(cann_cycles) / static_cast<double>(candidate.predicted_cycles);
  }

  // The recommendation must compute the right numbers; a candidate that
  // does not is our bug: it is reported and dropped (CANN's choice is only
  // moved to the end, it always stays in the list).
  if (options.verify_recommendation) {
    size_t next = 0;
    while (next < list.size() && list[next].numerics == NumericsCheck::kNotChecked) {
      Candidate& best = list[next];
      NumericsReport report;
      absl::Status status = VerifyNumerics(best.plan, problem, chip, options.numerics_seed, &report,
                                           options.emulator_threads);
      if (status.ok()) {
        best.numerics = NumericsCheck::kPassed;
        best.numerics_detail = absl::StrCat(
            report.shrunk ? "verified on " : "verified at ", report.m, "x", report.n, "x", report.k,
            " (", report.note, "), worst error ", report.worst_error_ratio, " of the bound");
        advice.recommendation_check = report;
        break;
      }
      advice.not_offered.push_back(
          {best.kind, best.name, absl::StrCat("numerics check failed: ", status.message())});
      best.numerics = NumericsCheck::kFailed;
      best.numerics_detail = std::string(status.message());
      if (best.is_cann_choice) {
        std::rotate(list.begin() + static_cast<std::ptrdiff_t>(next),
                    list.begin() + static_cast<std::ptrdiff_t>(next) + 1, list.end());
      } else {
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(next));
      }
    }
  }

  // Variant 5: the same candidates under separate GM read / write bandwidth.
  // Variant 5: the best candidates again under separate GM read / write
  // bandwidth. A single candidate has no ranking to change: it is not
  // re-timed.
  const size_t retimed = std::min<size_t>(list.size(), options.split_rw_candidates);
  if (options.time_split_rw && retimed > 1) {
    bool all = true;
    for (size_t i = 0; i < retimed; ++i) {
      Candidate& candidate = list[i];
      if (session.OutOfBudget(absl::StrCat(candidate.name, " (split GM read/write)"))) {
        all = false;
        break;
      }
      ASSIGN_OR_RETURN(Timing timing, session.Time(candidate.plan, true));
      candidate.split_rw_cycles = timing.cycles;
      candidate.split_rw_us = timing.us;
    }
    if (all) {
      std::vector<size_t> order(retimed);
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::tie(list[a].split_rw_cycles, list[a].name) <
               std::tie(list[b].split_rw_cycles, list[b].name);
      });
      for (size_t rank = 0; rank < order.size(); ++rank) {
        list[order[rank]].split_rw_rank = static_cast<uint32_t>(rank + 1);
        if (order[rank] != rank) ++advice.split_rw_rank_changes;
      }
      advice.split_rw_timed = true;
      advice.split_rw_best = list[order.front()].name;
      advice.split_rw_changes_best = order.front() != 0;
    } else {
      for (Candidate& candidate : list) {
        candidate.split_rw_cycles = 0;
        candidate.split_rw_us = 0;
      }
    }
  }

  advice.elapsed_ms = session.Elapsed();
  return advice;
}

absl::StatusOr<Advice> Advise(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                              const AdviseOptions& options) {
  static const tiling::StrategyRegistry* const kRegistry =
      new tiling::StrategyRegistry(tiling::MakeBuiltinRegistry());
  return Advise(*kRegistry, problem, chip, options);
}

}  // namespace npu::advisor
