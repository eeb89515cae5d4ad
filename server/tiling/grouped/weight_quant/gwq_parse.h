// CANN's input checks and parse of GroupedMatmul's weight-quant path on
// DAV_3510 (AnalyzeAttr of grouped_weight_quant_batch_matmul_tiling.cpp), on
// the problem's tensor lists.
//
// CANN checks in this order, and the parse answers its first failure:
// the core counts (AIV = 2 * AIC), the dtype / format / transpose pairs
// (CheckUnsupportDataFlow), transpose_x, group_type and split_item
// (A16W4 ND), the list lengths, the empty-tensor rule (k = 0 only when m or
// n is), the antiquant and bias dtypes (A16W4 ND), group_list's length, then
// per tensor the dims, the dim values, the formats and the antiquant /
// offset / bias shapes (per-channel, per-group or MX), the shape lists of
// the form (single, single-multi-single or multi), the antiquant group size
// and MX-A8W4's per-token scale. Each failed rule is INVALID_ARGUMENT naming
// the tensor or attribute and the rule, with CANN's function in
// parentheses. Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_PARSE_H_
#define NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_PARSE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/tiling/grouped/weight_quant/gwq_facts.h"
#include "server/tiling/types.h"

namespace npu::tiling::grouped::weight_quant {

// AnalyzeAttr: every check of the path, then the parse. `aic_num` and
// `aiv_num` are the compile info's core counts.
absl::StatusOr<GwqFacts> ParseGroupedWeightQuant(const GroupedInputs& in, uint32_t aic_num,
                                                 uint32_t aiv_num);

}  // namespace npu::tiling::grouped::weight_quant

#endif  // NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_PARSE_H_
