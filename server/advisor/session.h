// One Advise() call's emulations: the timing problem, the budget and the
// advice being filled.
//
// Internal to `npu_advisor`: advisor.cc and variant_search.cc share it.
#ifndef NPU_SERVER_ADVISOR_SESSION_H_
#define NPU_SERVER_ADVISOR_SESSION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "server/advisor/advisor.h"
#include "server/tiling/types.h"

namespace npu::advisor {

// Prefix of the not-offered reason of a variant the emulator cannot run.
inline constexpr char kEmulatorRejects[] = "the emulator rejects the plan: ";

// The result of timing one plan.
struct Timing {
  uint64_t cycles = 0;
  double us = 0;
  std::string bound;
  uint64_t events = 0;
};

// Runs the emulations of one Advise() call and keeps the budget.
class Session {
 public:
  // Times `problem` as ND operands when it is not (the emulator models ND
  // only) and notes so in `advice`; the budget starts now.
  Session(const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip,
          const AdviseOptions& options, Advice& advice);

  // Milliseconds on the options' clock, and since the session started.
  double Now() const;
  double Elapsed() const { return Now() - start_ms_; }

  // True once the budget is spent; records `next` as skipped.
  bool OutOfBudget(std::string_view next);

  // Times `plan` (timing only), with separate GM read / write bandwidth when
  // `split_rw`.
  absl::StatusOr<Timing> Time(const tiling::TilingPlan& plan, bool split_rw);

  // Times a variant's plan; a plan the emulator rejects (a bug in its
  // generator) is reported as not offered, with the emulator's reason,
  // instead of failing the whole advice.
  std::optional<Timing> TimeVariant(const tiling::TilingPlan& plan, VariantKind kind,
                                    const std::string& name);

  // Adds a timed candidate to the advice.
  void Add(Candidate candidate, const Timing& timing);
  // Records a strategy or variant that is not a candidate, and why.
  void NotOffer(VariantKind kind, std::string name, std::string reason) {
    advice_.not_offered.push_back({kind, std::move(name), std::move(reason)});
  }

  const tiling::MatmulProblem& problem() const { return problem_; }
  const tiling::ChipSpec& chip() const { return chip_; }
  const AdviseOptions& options() const { return options_; }
  // CANN's choice (the registry's decision the advice starts from).
  const tiling::TilingPlan& cann_plan() const { return advice_.cann.plan; }

 private:
  const tiling::MatmulProblem& problem_;
  tiling::MatmulProblem timing_problem_;
  const tiling::ChipSpec& chip_;
  const AdviseOptions& options_;
  Advice& advice_;
  double start_ms_ = 0;
};

}  // namespace npu::advisor

#endif  // NPU_SERVER_ADVISOR_SESSION_H_
