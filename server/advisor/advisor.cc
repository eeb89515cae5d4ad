#include "server/advisor/advisor.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "emulator/emulator.h"
#include "emulator/grouped_emulation.h"
#include "server/advisor/session.h"
#include "server/advisor/variant_search.h"
#include "server/advisor/variants.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/custom_plans.h"
#include "server/tiling/grouped/gmm_groups.h"
#include "server/tiling/registry.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/strategy_id.h"

namespace npu::advisor {
namespace {

using tiling::L1Residency;
using tiling::MatmulProblem;
using tiling::StrategyId;
using tiling::TilingPlan;

// The CANN strategy most variants start from.
constexpr std::string_view kAswt = tiling::StrategyName(StrategyId::kSwizzledDataParallel);

bool IsStrategy(std::string_view name, StrategyId id) { return tiling::FindStrategyId(name) == id; }

// The block search never times a plan that needs this many times more pipe
// operations than CANN's own (tiny blocks on a large problem cost the
// emulator far more than they could gain), except below the floor, where
// every plan is cheap to time.
constexpr uint64_t kBlockSearchOpsFactor = 2;
constexpr uint64_t kBlockSearchOpsFloor = 250'000;
// A cube plan within this fraction of the roofline bound leaves the cube
// variants less to gain than the timing model's own resolution (the tail
// round, pipeline fill and the fixed cost of every GM transfer alone cost
// several percent), so they are not timed.
constexpr double kRooflineSlack = 0.10;

// No cube plan runs faster in the emulator than the cube peak on all cores
// or the unique operand bytes at the chip's DDR rate (every first touch of
// an operand misses L2), plus the task's fixed launch and end costs.
double CubeRooflineCycles(const MatmulProblem& problem, const tiling::ChipSpec& chip) {
  const emu::ChipModel model = emu::ChipModel::FromSpec(chip);
  if (problem.op == tiling::MatmulOp::kGroupedMatmul) {
    // The experts' useful MACs, and each expert's x rows and weight read once.
    const absl::StatusOr<tiling::grouped::GmmGroups> groups =
        tiling::grouped::GroupsOf(problem.grouped);
    const MatmulProblem stacked = emu::GroupedTimedProblem(problem);
    const double a_bytes = static_cast<double>(tiling::DataTypeBytes(stacked.dtype_a));
    const double b_bytes = static_cast<double>(tiling::DataTypeBytes(stacked.dtype_b));
    double bytes = 0;
    if (groups.ok()) {
      for (const tiling::grouped::GmmGroup& g : groups->groups) {
        bytes += static_cast<double>(g.m * g.k) * a_bytes + static_cast<double>(g.k * g.n) * b_bytes;
      }
    }
    const double cube = static_cast<double>(emu::GroupedUsefulMacs(problem)) /
                        (model.PeakMacsPerCycle(stacked.dtype_a, false) *
                         static_cast<double>(chip.aic_num));
    return std::max(cube, bytes / model.ddr_bytes_per_cycle) +
           static_cast<double>(model.FixedTaskCycles());
  }
  // Every C batch is a matmul (A's and B's bytes counted per batch: an
  // upper bound on the unique bytes when a batch is broadcast).
  uint64_t batches = 1;
  const MatmulProblem one = OneBatchProblem(problem, &batches);
  const double macs = static_cast<double>(one.m) * static_cast<double>(one.n) *
                      static_cast<double>(one.k) * static_cast<double>(batches);
  const double cube = macs / (model.PeakMacsPerCycle(problem.dtype_a, problem.hf32) *
                              static_cast<double>(chip.aic_num));
  // At the dtypes' bit widths: the 4-bit quant types are half a byte.
  const double bytes =
      (static_cast<double>(one.m) * one.k * tiling::DataTypeBits(problem.dtype_a) +
       static_cast<double>(one.k) * one.n * tiling::DataTypeBits(problem.dtype_b)) /
      8 * static_cast<double>(batches);
  return std::max(cube, bytes / model.ddr_bytes_per_cycle) +
         static_cast<double>(model.FixedTaskCycles());
}

// The plan's own account of itself, or (QuantBatchMatmulV3's plans carry
// none) its block, L1 stage and cores.
std::string DetailOf(const TilingPlan& plan) {
  if (!plan.detail.str().empty()) return plan.detail.str();
  return absl::StrCat("block ", plan.block.base_m, "x", plan.block.base_n, "x", plan.block.base_k,
                      ", L1 loads of ", plan.block.k_l1, " K, ", plan.block_dim, " cores");
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

namespace {

// CANN's choice: always timed, it is the baseline of every speed-up.
absl::StatusOr<Timing> AddCannChoice(Session& session, const TilingPlan& cann_plan) {
  // The baseline cannot be timed when the kernel would run past a buffer.
  RETURN_IF_ERROR(PlanHazard(cann_plan,
                             ", so there is no baseline to rank against; GetTiling in "
                             "CANN_COMPATIBLE mode gives the plan with this warning"));
  absl::StatusOr<Timing> timing = session.Time(cann_plan, false);
  if (!timing.ok()) {
    return absl::Status(
        timing.status().code(),
        absl::StrCat("timing CANN's choice ", cann_plan.strategy, ": ", timing.status().message()));
  }
  Candidate cann;
  cann.name = cann_plan.strategy;
  cann.kind = VariantKind::kCannStrategy;
  cann.plan = cann_plan;
  cann.is_cann_choice = true;
  cann.explanation = absl::StrCat("CANN's choice: ", DetailOf(cann_plan));
  session.Add(std::move(cann), *timing);
  return timing;
}

// Every other capable built-in strategy, as CANN would tile it if chosen.
// Returns BASIC_ASWT's plan when there is one (CANN's or forced), which the
// cube variants start from; `sliding` (QuantBatchMatmulV3) receives the
// first of them, in CANN's order, whose struct the quant block search can
// re-block.
std::optional<TilingPlan> AddOtherStrategies(Session& session,
                                             const tiling::StrategyRegistry& registry,
                                             const TilingPlan& cann_plan,
                                             std::optional<TilingPlan>& sliding) {
  std::optional<TilingPlan> aswt;
  if (IsStrategy(cann_plan.strategy, StrategyId::kSwizzledDataParallel)) aswt = cann_plan;
  for (const std::string& name : registry.Names(session.problem().op)) {
    if (name == cann_plan.strategy) continue;
    tiling::DecideOptions forced;
    forced.forced_strategy = name;
    absl::StatusOr<tiling::TilingDecision> decision =
        registry.Decide(session.problem(), session.chip(), forced);
    if (!decision.ok()) {
      session.NotOffer(VariantKind::kCannStrategy, name, std::string(decision.status().message()));
      continue;
    }
    if (IsStrategy(name, StrategyId::kSwizzledDataParallel)) aswt = decision->plan;
    if (!sliding.has_value() && session.problem().op == tiling::MatmulOp::kQuantBatchMatmulV3 &&
        tiling::quant::QuantBlockOfPlan(decision->plan).ok()) {
      sliding = decision->plan;
    }
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
        absl::StrCat("CANN's ", name, " if it had priority: ", DetailOf(decision->plan));
    session.Add(std::move(candidate), *timing);
  }
  return aswt;
}

// The variants, unless the problem rules them all out or CANN's choice is
// already at the roofline (then only the AIV dot product is tried).
void AddVariants(Session& session, const TilingPlan& cann_plan,
                 const std::optional<TilingPlan>& aswt, const std::optional<TilingPlan>& sliding,
                 const Timing& cann_timing) {
  const MatmulProblem& problem = session.problem();
  const std::string obstacle = VariantObstacle(problem);
  if (!obstacle.empty()) {
    for (VariantKind kind : {VariantKind::kAivDot, VariantKind::kBlockSearch,
                             VariantKind::kL1PartialResidency, VariantKind::kSwatWindow}) {
      session.NotOffer(kind, std::string(VariantKindName(kind)), obstacle);
    }
    return;
  }
  const bool batch_op = problem.op != tiling::MatmulOp::kMatMulV3;
  // QuantBatchMatmulV3's sliding-window kernels walk their tiles in SWAT
  // windows too: the block search and the window apply to them.
  const bool quant = problem.op == tiling::MatmulOp::kQuantBatchMatmulV3;
  if (batch_op) {
    // The variants other than the block search rewrite MatMulV3's kernels
    // (its window, its residency, its TO_MUL); the batch kernels have none.
    for (VariantKind kind :
         {VariantKind::kAivDot, VariantKind::kL1PartialResidency, VariantKind::kSwatWindow}) {
      if (quant && kind == VariantKind::kSwatWindow) continue;
      session.NotOffer(kind, std::string(VariantKindName(kind)),
                       absl::StrCat("a MatMulV3 variant; not offered for ",
                                    std::string(tiling::MatmulOpName(problem.op))));
    }
  } else {
    OfferAivDot(session);
  }
  const double roofline = CubeRooflineCycles(problem, session.chip());
  const bool at_roofline =
      static_cast<double>(cann_timing.cycles) <= (1 + kRooflineSlack) * roofline;
  const uint64_t ops_cap =
      std::max(kBlockSearchOpsFloor, kBlockSearchOpsFactor * cann_timing.events);
  if (at_roofline) {
    const std::string why =
        absl::StrCat("CANN's choice (", cann_timing.cycles, " cycles) is within ",
                     kRooflineSlack * 100, "% of the roofline bound (",
                     static_cast<uint64_t>(roofline), " cycles): no cube variant can gain more");
    for (VariantKind kind :
         {VariantKind::kBlockSearch, VariantKind::kL1PartialResidency, VariantKind::kSwatWindow}) {
      if (batch_op && kind != VariantKind::kBlockSearch &&
          !(quant && kind == VariantKind::kSwatWindow)) {
        continue;
      }
      session.NotOffer(kind, std::string(VariantKindName(kind)), why);
    }
    return;
  }
  if (quant) {
    // CANN's plan, or when its struct has no sliding window (MX_STREAMK) the
    // first other strategy's that does.
    const TilingPlan& base =
        tiling::quant::QuantBlockOfPlan(cann_plan).ok() || !sliding ? cann_plan : *sliding;
    SearchQuantBlocks(session, base, ops_cap);
    SearchWindows(session, base, base.strategy);
    return;
  }
  if (batch_op) {
    SearchBlocks(session, std::nullopt, ops_cap);
    return;
  }
  SearchBlocks(session, aswt, ops_cap);
  if (aswt.has_value()) {
    OfferResidency(session, *aswt, L1Residency::kABand);
    OfferResidency(session, *aswt, L1Residency::kBBand);
    SearchWindows(session, *aswt, kAswt);
  } else {
    for (VariantKind kind : {VariantKind::kL1PartialResidency, VariantKind::kSwatWindow}) {
      session.NotOffer(kind, std::string(VariantKindName(kind)),
                       absl::StrCat(std::string(kAswt), " has no plan for this problem"));
    }
  }
}

// Ranking: predicted cycles, ties by name; CANN's choice always stays within
// max_candidates. Sets each candidate's speed-up over CANN's cycles.
void Rank(Advice& advice, const AdviseOptions& options, uint64_t cann_cycles) {
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
  for (Candidate& candidate : list) {
    candidate.speedup_vs_cann =
        candidate.predicted_cycles == 0
            ? 1.0
            : static_cast<double>(cann_cycles) / static_cast<double>(candidate.predicted_cycles);
  }
}

// The numerics check of one candidate: its status, and on success the
// candidate marked PASSED with what was verified.
absl::Status CheckCandidate(Candidate& candidate, const MatmulProblem& problem,
                            const tiling::ChipSpec& chip, const AdviseOptions& options,
                            NumericsReport& report) {
  absl::Status status = VerifyNumerics(candidate.plan, problem, chip, options.numerics_seed,
                                       &report, options.emulator_threads);
  if (status.ok()) {
    candidate.numerics = NumericsCheck::kPassed;
    candidate.numerics_detail = absl::StrCat(
        report.shrunk ? "verified on " : "verified at ", report.m, "x", report.n, "x", report.k,
        " (", report.note, "), worst error ", report.worst_error_ratio, " of the bound");
  }
  return status;
}

// QuantBatchMatmulV3: CANN's own plan is checked too when it is not the
// recommendation (each quant path dequantizes in its own kernel, so its
// baseline is worth a check of its own). A failure is reported on the
// candidate; CANN's choice stays in the list.
void VerifyCannChoice(Advice& advice, const MatmulProblem& problem, const tiling::ChipSpec& chip,
                      const AdviseOptions& options) {
  if (problem.op != tiling::MatmulOp::kQuantBatchMatmulV3) return;
  for (Candidate& candidate : advice.candidates) {
    if (!candidate.is_cann_choice || candidate.numerics != NumericsCheck::kNotChecked ||
        !candidate.numerics_detail.empty()) {
      continue;
    }
    NumericsReport report;
    absl::Status status = CheckCandidate(candidate, problem, chip, options, report);
    if (status.ok()) continue;
    if (status.code() == absl::StatusCode::kUnimplemented) {
      candidate.numerics_detail = absl::StrCat("not checked: ", status.message());
      continue;
    }
    candidate.numerics = NumericsCheck::kFailed;
    candidate.numerics_detail = std::string(status.message());
  }
}

// The recommendation must compute the right numbers; a candidate that does
// not is our bug: it is reported and dropped (CANN's choice is only moved
// to the end, it always stays in the list).
void VerifyRecommendation(Advice& advice, const MatmulProblem& problem,
                          const tiling::ChipSpec& chip, const AdviseOptions& options) {
  std::vector<Candidate>& list = advice.candidates;
  size_t next = 0;
  while (next < list.size() && list[next].numerics == NumericsCheck::kNotChecked) {
    Candidate& best = list[next];
    NumericsReport report;
    absl::Status status = CheckCandidate(best, problem, chip, options, report);
    if (status.ok()) {
      advice.recommendation_check = report;
      break;
    }
    if (status.code() == absl::StatusCode::kUnimplemented) {
      // Too large to check (a batched problem is checked at full size
      // only): the ranking stands, unverified.
      best.numerics_detail = absl::StrCat("not checked: ", status.message());
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

// Variant 5: the best candidates again under separate GM read / write
// bandwidth, ranked again. A single candidate has no ranking to change: it
// is not re-timed. A budget that runs out midway leaves no split timings.
absl::Status TimeSplitReadWrite(Session& session, Advice& advice, const AdviseOptions& options) {
  std::vector<Candidate>& list = advice.candidates;
  const size_t retimed = std::min<size_t>(list.size(), options.split_rw_candidates);
  if (!options.time_split_rw || retimed <= 1) return absl::OkStatus();
  for (size_t i = 0; i < retimed; ++i) {
    Candidate& candidate = list[i];
    if (session.OutOfBudget(absl::StrCat(candidate.name, " (split GM read/write)"))) {
      for (Candidate& c : list) {
        c.split_rw_cycles = 0;
        c.split_rw_us = 0;
      }
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Timing timing, session.Time(candidate.plan, true));
    candidate.split_rw_cycles = timing.cycles;
    candidate.split_rw_us = timing.us;
  }
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
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Advice> Advise(const tiling::StrategyRegistry& registry,
                              const MatmulProblem& problem, const tiling::ChipSpec& chip,
                              const AdviseOptions& options) {
  Advice advice;
  ASSIGN_OR_RETURN(advice.cann, registry.Decide(problem, chip));
  Session session(problem, chip, options, advice);
  const TilingPlan& cann_plan = advice.cann.plan;
  ASSIGN_OR_RETURN(const Timing cann_timing, AddCannChoice(session, cann_plan));
  std::optional<TilingPlan> sliding;
  const std::optional<TilingPlan> aswt = AddOtherStrategies(session, registry, cann_plan, sliding);
  AddVariants(session, cann_plan, aswt, sliding, cann_timing);
  Rank(advice, options, cann_timing.cycles);
  if (options.verify_recommendation) {
    VerifyRecommendation(advice, problem, chip, options);
    VerifyCannChoice(advice, problem, chip, options);
  }
  RETURN_IF_ERROR(TimeSplitReadWrite(session, advice, options));
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
