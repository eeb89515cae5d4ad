// GroupedMatmul's quant path: CANN's parse and checks of the request
// (GroupedQmmTiling::GetShapeAttrsInfo in gmm/grouped_matmul/op_host/
// op_tiling/arch35/grouped_quant_matmul_tiling.cpp), which both quant
// strategies run before anything else, in CANN's order:
//
//   AnalyzeDtype   x / weight dtypes, the FLOAT4_E1M2 weight format, bias,
//                  y, scale and per-token dtypes, an NZ weight's dtypes,
//                  the bias dtype against x and y;
//   AnalyzeAttrs   group_list_type, group_type, transposes per group type;
//   AnalyzeInputs  group_list's shape and the group count, the NZ weight
//                  list, m / k / n, then (unless y is INT32) the scale, the
//                  quant modes, the scale shapes per mode, the NZ weight's
//                  storage, the activation, the fp4 shapes and bias, the
//                  kernel type and the compile info's AIV : AIC ratio.
//
// A broken rule ends CANN's tiling at once (no other strategy runs); here it
// is INVALID_ARGUMENT naming the field and the rule. Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_GROUPED_QUANT_GQMM_PARSE_H_
#define NPU_SERVER_TILING_GROUPED_QUANT_GQMM_PARSE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/tiling/grouped/quant/gqmm_facts.h"

namespace npu::tiling::grouped::quant {

// Parses `request` into the problem CANN's quant strategies see. `aic_num`
// and `aiv_num` are the compile info's core counts, which only the ratio
// check reads (the tiling itself takes its cores from the platform). Never
// faults, whatever the shapes hold.
absl::StatusOr<GqmmFacts> ParseGroupedQuant(const GqmmRequest& request, uint32_t aic_num,
                                            uint32_t aiv_num);

}  // namespace npu::tiling::grouped::quant

#endif  // NPU_SERVER_TILING_GROUPED_QUANT_GQMM_PARSE_H_
