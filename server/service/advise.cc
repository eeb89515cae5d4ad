#include "server/service/advise.h"

#include <algorithm>
#include <string>

#include "server/service/convert.h"
#include "server/service/decision_cache.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
namespace adv = ::npu::advisor;

}  // namespace

adv::AdviseOptions AdviseOptionsFor(const pb::AdviseOptions& wire, const AdviseLimits& limits) {
  adv::AdviseOptions options;
  const uint32_t cap_candidates = std::max<uint32_t>(1, limits.max_candidates);
  options.max_candidates =
      std::min(cap_candidates,
               wire.max_candidates() == 0 ? limits.default_candidates : wire.max_candidates());
  options.max_candidates = std::max<uint32_t>(1, options.max_candidates);
  const uint32_t cap_ms = std::max<uint32_t>(1, limits.max_advisory_ms);
  // 0 asks for the server's budget; never the advisor's "no budget".
  options.max_advisory_ms =
      wire.max_advisory_ms() == 0 ? cap_ms : std::min(cap_ms, wire.max_advisory_ms());
  options.verify_recommendation =
      wire.has_verify_recommendation() ? wire.verify_recommendation() : true;
  // One host thread per numerics check: the service runs several advice
  // calls at once on its workers, and the checks are bounded to ~2^24 MACs.
  options.emulator_threads = 1;
  return options;
}

std::string AdviseCacheKey(const tl::MatmulProblem& problem, const tl::ChipSpec& chip,
                           const adv::AdviseOptions& options) {
  // The decision's key (self-delimiting) followed by the advice's options.
  pb::TilingRequest suffix;
  suffix.set_mode(pb::TILING_MODE_ADVISE);
  pb::AdviseOptions* wire = suffix.mutable_advise();
  wire->set_max_candidates(options.max_candidates);
  wire->set_max_advisory_ms(static_cast<uint32_t>(options.max_advisory_ms));
  wire->set_verify_recommendation(options.verify_recommendation);
  std::string key = DecisionCacheKey(problem, chip, "");
  key += suffix.SerializeAsString();
  return key;
}

pb::VariantKind VariantKindToProto(adv::VariantKind kind) {
  switch (kind) {
    case adv::VariantKind::kCannStrategy:
      return pb::VARIANT_KIND_CANN_STRATEGY;
    case adv::VariantKind::kBlockSearch:
      return pb::VARIANT_KIND_BLOCK_SEARCH;
    case adv::VariantKind::kSwatWindow:
      return pb::VARIANT_KIND_SWAT_WINDOW;
    case adv::VariantKind::kL1PartialResidency:
      return pb::VARIANT_KIND_L1_PARTIAL_RESIDENCY;
    case adv::VariantKind::kAivDot:
      return pb::VARIANT_KIND_AIV_DOT;
  }
  return pb::VARIANT_KIND_UNSPECIFIED;
}

pb::NumericsStatus NumericsToProto(adv::NumericsCheck check) {
  switch (check) {
    case adv::NumericsCheck::kNotChecked:
      return pb::NUMERICS_STATUS_NOT_CHECKED;
    case adv::NumericsCheck::kPassed:
      return pb::NUMERICS_STATUS_PASSED;
    case adv::NumericsCheck::kFailed:
      return pb::NUMERICS_STATUS_FAILED;
  }
  return pb::NUMERICS_STATUS_UNSPECIFIED;
}

pb::L1Residency L1ResidencyToProto(tl::L1Residency residency) {
  switch (residency) {
    case tl::L1Residency::kStreamed:
      return pb::L1_RESIDENCY_STREAMED;
    case tl::L1Residency::kABand:
      return pb::L1_RESIDENCY_A_BAND;
    case tl::L1Residency::kBBand:
      return pb::L1_RESIDENCY_B_BAND;
  }
  return pb::L1_RESIDENCY_UNSPECIFIED;
}

namespace {

// One ranked candidate; its tiling without the chip, which the enclosing
// response carries once.
void CandidateToProto(const adv::Candidate& candidate, const tl::ChipSpec& chip,
                      pb::AdviceCandidate* c) {
  c->set_name(candidate.name);
  c->set_kind(VariantKindToProto(candidate.kind));
  tl::TilingDecision decision;
  decision.plan = candidate.plan;
  pb::TilingResponse* tiling = c->mutable_tiling();
  DecisionToProto(decision, chip, tiling, /*include_trace=*/false);
  tiling->clear_platform();
  // 0 means CANN's window (types.h); the wire always says how many rows.
  c->set_swat_window_rows(candidate.plan.swat_window_rows == 0 ? tl::kCannSwatWindowRows
                                                               : candidate.plan.swat_window_rows);
  c->set_l1_residency(L1ResidencyToProto(candidate.plan.l1_residency));
  c->set_predicted_cycles(candidate.predicted_cycles);
  c->set_predicted_time_us(candidate.predicted_us);
  c->set_bound_resource(candidate.bound);
  c->set_speedup_vs_cann(candidate.speedup_vs_cann);
  c->set_explanation(candidate.explanation);
  c->set_is_cann_choice(candidate.is_cann_choice);
  if (candidate.split_rw_rank != 0) {
    pb::SplitReadWriteTiming* split = c->mutable_split_rw();
    split->set_predicted_cycles(candidate.split_rw_cycles);
    split->set_predicted_time_us(candidate.split_rw_us);
    split->set_rank(candidate.split_rw_rank);
  }
  c->set_numerics(NumericsToProto(candidate.numerics));
  c->set_numerics_detail(candidate.numerics_detail);
}

// The numerics check of the recommendation, when it was asked for and a
// candidate passed.
void VerificationToProto(const adv::Advice& advice, const adv::AdviseOptions& options,
                         pb::Advice* out) {
  const bool verified = std::any_of(
      advice.candidates.begin(), advice.candidates.end(),
      [](const adv::Candidate& c) { return c.numerics == adv::NumericsCheck::kPassed; });
  if (!options.verify_recommendation || !verified) return;
  const adv::NumericsReport& report = advice.recommendation_check;
  pb::VerificationReport* v = out->mutable_verification();
  v->set_shrunk(report.shrunk);
  v->set_m(report.m);
  v->set_n(report.n);
  v->set_k(report.k);
  v->set_cores(report.cores);
  v->set_worst_error_ratio(report.worst_error_ratio);
  v->set_note(report.note);
}

}  // namespace

void AdviceToProto(const adv::Advice& advice, const tl::ChipSpec& chip,
                   const adv::AdviseOptions& options, pb::TilingResponse* response) {
  DecisionToProto(advice.cann, chip, response, /*include_trace=*/true);
  pb::Advice* out = response->mutable_advice();
  for (const adv::Candidate& candidate : advice.candidates) {
    CandidateToProto(candidate, chip, out->add_candidates());
  }
  for (const adv::NotOffered& not_offered : advice.not_offered) {
    pb::NotOffered* n = out->add_not_offered();
    n->set_kind(VariantKindToProto(not_offered.kind));
    n->set_name(not_offered.name);
    n->set_reason(not_offered.reason);
  }
  out->set_budget_exhausted(advice.budget_exhausted);
  out->set_budget_note(advice.budget_note);
  out->set_timing_note(advice.timing_note);
  out->set_emulations(advice.emulations);
  out->set_rejected_variants(advice.rejected_variants);
  pb::SplitReadWriteSummary* split = out->mutable_split_rw();
  split->set_timed(advice.split_rw_timed);
  split->set_best(advice.split_rw_best);
  split->set_changes_best(advice.split_rw_changes_best);
  split->set_rank_changes(advice.split_rw_rank_changes);
  VerificationToProto(advice, options, out);
  out->set_max_candidates(options.max_candidates);
  out->set_max_advisory_ms(static_cast<uint32_t>(options.max_advisory_ms));
  out->set_verify_recommendation(options.verify_recommendation);
}

}  // namespace npu::server
