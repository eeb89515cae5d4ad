// ADVISE mode: every applicable tiling of a problem, ranked by predicted time.
//
// CANN answers a matmul with one tiling from fixed heuristics. `Advise()`
// keeps that answer untouched (the registry's decision, byte for byte) and
// adds candidates, best first: the plan of every other built-in strategy
// that is capable, and the variants of variants.h that address the
// weaknesses of CANN's heuristics listed in seeds/001 section 6. Each
// candidate is timed by the emulator (timing only), with its bound resource
// and its speed-up over CANN's choice; the recommended one is checked for
// numerics (verify.h). A second timing model with separate GM read and write
// bandwidth (seeds/001 section 6 item 5) re-ranks the candidates, and the
// advice says how the ranking changes under it.
//
// Layering: `npu_advisor` sits above the tiling engine (`npu_tiling`) and
// the emulator (`npu_emulator`) and, like them, knows nothing of gRPC,
// protobuf or Prometheus; the service converts Advice to its response.
//
// Vocabulary: a *candidate* is one plan in the ranking; a *variant* is a
// candidate that no CANN strategy would produce; an *emulation* is one
// timing-only run of the emulator, the unit the advisory budget counts.
#ifndef NPU_SERVER_ADVISOR_ADVISOR_H_
#define NPU_SERVER_ADVISOR_ADVISOR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "emulator/timing_model.h"
#include "server/advisor/verify.h"
#include "server/tiling/registry.h"
#include "server/tiling/types.h"

namespace npu::advisor {

enum class VariantKind {
  kCannStrategy,        // a built-in strategy's own plan (CANN's choice or another capable one)
  kBlockSearch,         // (1) base_m / base_n chosen by predicted time
  kSwatWindow,          // (2) SWAT window length sized to the shape and L2
  kL1PartialResidency,  // (3) a band of A or B resident in L1
  kAivDot,              // (4) M == 1 / N == 1 fp16 / bf16 on the vector cores
};
// "CANN_STRATEGY", "BLOCK_SEARCH", "SWAT_WINDOW", "L1_PARTIAL_RESIDENCY", "AIV_DOT".
std::string_view VariantKindName(VariantKind kind);

enum class NumericsCheck { kNotChecked, kPassed, kFailed };
// "NOT_CHECKED", "PASSED", "FAILED".
std::string_view NumericsCheckName(NumericsCheck check);

struct Candidate {
  // Unique in one Advice: the CANN strategy name ("BASIC_STREAM_K"), or the
  // base kernel and the variant ("BASIC_ASWT/base_128x192",
  // "BASIC_ASWT/swat_window_8", "BASIC_ASWT/l1_band_a_96", "TO_MUL/aiv_float16").
  std::string name;
  VariantKind kind = VariantKind::kCannStrategy;
  tiling::TilingPlan plan;
  uint64_t predicted_cycles = 0;  // timing-only emulation, default GM model
  double predicted_us = 0;
  std::string bound;           // the emulator's bound resource ("CUBE", "DDR", ...)
  double speedup_vs_cann = 1;  // CANN's predicted cycles / this candidate's
  std::string explanation;
  bool is_cann_choice = false;
  // Under separate GM read / write bandwidth (AdviseOptions::split_rw); zero
  // when not timed (only the best split_rw_candidates are).
  uint64_t split_rw_cycles = 0;
  double split_rw_us = 0;
  uint32_t split_rw_rank = 0;  // 1-based position in that model's ranking
  NumericsCheck numerics = NumericsCheck::kNotChecked;
  std::string numerics_detail;  // the size verified, or the failure
};

// A strategy or variant that is not among the candidates, and why.
struct NotOffered {
  VariantKind kind = VariantKind::kCannStrategy;
  std::string name;  // strategy name or variant name
  std::string reason;
};

struct AdviseOptions {
  // Candidates returned, best first; CANN's choice is always among them.
  uint32_t max_candidates = 8;
  // Wall-clock budget for the advice, checked before every emulation; once
  // spent, the remaining strategies and variants are skipped and the advice
  // says so. 0: no budget. CANN's choice is always timed, and the numerics
  // check of the recommendation (bounded by kDirectVerifyMacs) always runs.
  double max_advisory_ms = 2000;
  // Host threads of the emulator's numerics check.
  int emulator_threads = 1;
  // Blocks of the search grid the emulator times (the most promising by
  // EstimateBlockCycles), and window lengths timed.
  uint32_t block_search_emulations = 6;
  uint32_t window_emulations = 2;
  // Variant 5: re-time the best `split_rw_candidates` candidates with
  // separate GM read and write bandwidth (the default rates are the chip's
  // DDR rate for both) and rank them again. Four keep the cost of a large
  // problem within a few full-size emulations.
  bool time_split_rw = true;
  uint32_t split_rw_candidates = 4;
  emu::GmReadWriteSplit split_rw{true, 0, 0};
  // Check the recommendation's numerics; a candidate that fails is dropped
  // from the ranking (reported in not_offered) and the next one is checked.
  bool verify_recommendation = true;
  uint64_t numerics_seed = 1;
  // Milliseconds on a monotonic clock; empty uses std::chrono::steady_clock.
  // Tests inject a fake clock to exercise the budget deterministically.
  std::function<double()> clock_ms;
};

struct Advice {
  tiling::TilingDecision cann;        // the registry's decision, unchanged
  std::vector<Candidate> candidates;  // best first: (predicted cycles, name)
  std::vector<NotOffered> not_offered;
  // Budget: whether it ran out, and what was skipped.
  bool budget_exhausted = false;
  std::string budget_note;
  uint32_t emulations = 0;
  double elapsed_ms = 0;
  // Variant plans the emulator could not run (a bug in their generator;
  // each is in not_offered with the emulator's error). Zero in a sound build.
  uint32_t rejected_variants = 0;
  // Set when the problem was timed as another layout (FRACTAL_NZ or a slice
  // view timed as ND: the emulator models ND operands only).
  std::string timing_note;
  // Variant 5 summary; split_rw_timed is false when the budget ran out first
  // or there is a single candidate (no ranking to change).
  bool split_rw_timed = false;
  std::string split_rw_best;           // best re-timed candidate under the split model
  bool split_rw_changes_best = false;  // it differs from candidates[0]
  uint32_t split_rw_rank_changes = 0;  // re-timed candidates whose position differs
  // The numerics check of candidates[0] (when verify_recommendation).
  NumericsReport recommendation_check;
};

// Ranks every applicable tiling of `problem` on `chip` using `registry` (the
// built-in strategies for the overload without one). Thread-safe: calls
// share no mutable state, so a server may advise on several threads. Errors: the registry's
// own (kInvalidArgument for a malformed problem, ...), or the emulator's for
// CANN's choice (e.g. kResourceExhausted past its work limit).
absl::StatusOr<Advice> Advise(const tiling::StrategyRegistry& registry,
                              const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip,
                              const AdviseOptions& options = {});
absl::StatusOr<Advice> Advise(const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip,
                              const AdviseOptions& options = {});

}  // namespace npu::advisor

#endif  // NPU_SERVER_ADVISOR_ADVISOR_H_
