// The advisor's variant searches: each times the plans one variant
// generator (variants.h) offers and adds the best as a candidate, or says
// why the variant is not offered.
//
// Internal to `npu_advisor`: Advise() (advisor.cc) runs them in order.
#ifndef NPU_SERVER_ADVISOR_VARIANT_SEARCH_H_
#define NPU_SERVER_ADVISOR_VARIANT_SEARCH_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "server/advisor/session.h"
#include "server/tiling/types.h"

namespace npu::advisor {

// (1) Base blocks by predicted time: order the grid by the first-order
// estimate, skip blocks whose emulation would need more than `ops_cap` pipe
// operations, time the most promising, offer the fastest.
void SearchBlocks(Session& session, const std::optional<tiling::TilingPlan>& aswt,
                  uint64_t ops_cap);

// (1) for QuantBatchMatmulV3: `cann` (CANN's choice, or the first other
// CANN strategy's plan with a sliding window when CANN's is MX_STREAMK's) re-blocked on its own
// kernel and struct (QuantBlockPlan): CANN's block with deeper L1 loads and
// with the deepest base_k, then the grid of QuantBlockSearchGrid ordered by
// the first-order estimate, each with the deepest staging that keeps CANN's
// base_k; blocks whose emulation would need more than `ops_cap` pipe
// operations are skipped. The fastest is offered.
void SearchQuantBlocks(Session& session, const tiling::TilingPlan& cann, uint64_t ops_cap);

// (2) The SWAT window length: time the windows WindowCandidates proposes
// for `base`, CANN's BASIC_ASWT plan (or QuantBatchMatmulV3's sliding-window
// plan), naming the candidates after `prefix` ("BASIC_ASWT/swat_window_8").
void SearchWindows(Session& session, const tiling::TilingPlan& base, std::string_view prefix);

// (3) A band of A rows (kABand) or B columns (kBBand) resident in L1.
void OfferResidency(Session& session, const tiling::TilingPlan& aswt, tiling::L1Residency side);

// (4) Dot products on the AIV cores for 16-bit M == 1 or N == 1 problems.
void OfferAivDot(Session& session);

}  // namespace npu::advisor

#endif  // NPU_SERVER_ADVISOR_VARIANT_SEARCH_H_
