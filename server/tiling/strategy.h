// The interface every tiling strategy implements.
//
// A strategy answers two questions about one problem on one chip: can it
// apply (`IsCapable`), and if so, what plan it chooses (`DoTiling`). The
// registry (registry.h) runs the fixed pipeline around them: validate the
// problem, ask each strategy in priority order, tile with the first capable
// one, and check the plan fits the chip. Strategies never validate input and
// never fall through to one another.
#ifndef NPU_SERVER_TILING_STRATEGY_H_
#define NPU_SERVER_TILING_STRATEGY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/batch_shape.h"
#include "server/tiling/lazy_text.h"
#include "server/tiling/quant/quant_facts.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// Whether a strategy applies; `reason` explains the answer with the numbers
// that decided it (also filled when ok, e.g. which sub-mode matched), kept
// unformatted until read (lazy_text.h).
struct Capability {
  bool ok = false;
  LazyText reason;

  static Capability Yes(LazyText reason) { return {true, std::move(reason)}; }
  static Capability No(LazyText reason) { return {false, std::move(reason)}; }
};

// CANN keeps up to four batch dims per operand.
inline constexpr int kBatchSlots = static_cast<int>(kMaxBatchDims);

// Facts derived once from a validated problem and shared by all strategies.
struct ProblemFacts {
  uint64_t m = 0, n = 0, k = 0;
  uint64_t a_bytes = 2, b_bytes = 2, c_bytes = 2, bias_bytes = 0;
  // A is a rank-3 non-contiguous slice view (CANN's IsSelfNonContiguous):
  // the view strategies cannot read it and ASWT emits the SLICE model.
  bool a_slice_3d = false;
  // Values of the slice / row-stride fields of MatMulV3BasicTilingData.
  uint64_t slice_m_override = 0;  // 0: use base_m
  uint64_t src_nd_stride = 1;
  uint64_t row_stride = 1;
  // CANN's batch context (its batchInfo), set for BatchMatMulV3 and
  // FusedMatMul even when every operand is 2-D: several MatMulV3 helpers
  // branch on it (alignment, balance, full load, core count, L2). Batch
  // dims are right-aligned into four slots (slot 3 innermost, missing dims
  // 1); products are over the slots. When B is unbatched and A is not
  // transposed, A's batch is merged into M: `m` above is then
  // batch_a * problem.m and A's and C's slots are all 1.
  bool batch_context = false;
  bool batch_merged_into_m = false;
  std::array<uint64_t, kBatchSlots> batch_a_dims{1, 1, 1, 1};
  std::array<uint64_t, kBatchSlots> batch_b_dims{1, 1, 1, 1};
  std::array<uint64_t, kBatchSlots> batch_c_dims{1, 1, 1, 1};
  uint64_t batch_a = 1, batch_b = 1, batch_c = 1;
  uint64_t batch_bias = 1;  // product of a batched bias's dims
  uint64_t batch_x3 = 1;    // FusedMatMul: x3's leading dim when it is 3-D
  // Whether strategies write their texts: the Capability reasons (explain)
  // and the plan's `detail` (describe). The registry turns them off when no
  // one reads them; the plan is otherwise the same.
  bool explain = true;
  bool describe = true;
  // QuantBatchMatmulV3: the problem after CANN's parse (quant/quant_parse.h),
  // which its strategies read alone; null for the other operators. It points
  // at the parse validation made, which whoever derives the facts keeps
  // alive as long as them (a plain pointer keeps this struct trivial to
  // make, which every decision does).
  const quant::QuantFacts* quant = nullptr;
};

// The text absl::StrCat(pieces...) would give, kept as its pieces
// (LazyText::Of), when `facts` ask for reasons; else an empty text (and no
// work).
template <typename... Pieces>
LazyText Explain(const ProblemFacts& facts, Pieces&&... pieces) {
  return facts.explain ? LazyText::Of(std::forward<Pieces>(pieces)...) : LazyText();
}

// The plan's `detail`, the same way when `facts` ask for it.
template <typename... Pieces>
LazyText Describe(const ProblemFacts& facts, Pieces&&... pieces) {
  return facts.describe ? LazyText::Of(std::forward<Pieces>(pieces)...) : LazyText();
}

ProblemFacts DeriveFacts(const MatmulProblem& problem);
// The same with a QuantBatchMatmulV3 problem's parse (ValidateProblem()),
// which must outlive the facts; without it (null, or the one-argument form)
// the quant strategies find no parse and decline.
ProblemFacts DeriveFacts(const MatmulProblem& problem, const quant::QuantFacts* parsed);

class Strategy {
 public:
  virtual ~Strategy() = default;
  // CANN's name for the strategy, used on the wire and in the trace.
  virtual std::string_view name() const = 0;
  virtual Capability IsCapable(const MatmulProblem& problem, const ProblemFacts& facts,
                               const ChipSpec& chip) const = 0;
  // Computes the plan. Only called after IsCapable() said yes; an error here
  // is a bug in the strategy.
  virtual absl::StatusOr<TilingPlan> DoTiling(const MatmulProblem& problem,
                                              const ProblemFacts& facts,
                                              const ChipSpec& chip) const = 0;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGY_H_
