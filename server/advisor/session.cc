#include "server/advisor/session.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "emulator/emulator.h"
#include "server/tiling/status_macros.h"

namespace npu::advisor {

Session::Session(const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip,
                 const AdviseOptions& options, Advice& advice)
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

double Session::Now() const {
  if (options_.clock_ms) return options_.clock_ms();
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool Session::OutOfBudget(std::string_view next) {
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

absl::StatusOr<Timing> Session::Time(const tiling::TilingPlan& plan, bool split_rw) {
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

std::optional<Timing> Session::TimeVariant(const tiling::TilingPlan& plan, VariantKind kind,
                                           const std::string& name) {
  absl::StatusOr<Timing> timing = Time(plan, false);
  if (timing.ok()) return *timing;
  ++advice_.rejected_variants;
  NotOffer(kind, name, absl::StrCat(kEmulatorRejects, timing.status().ToString()));
  return std::nullopt;
}

void Session::Add(Candidate candidate, const Timing& timing) {
  candidate.predicted_cycles = timing.cycles;
  candidate.predicted_us = timing.us;
  candidate.bound = timing.bound;
  advice_.candidates.push_back(std::move(candidate));
}

}  // namespace npu::advisor
