// QuantBatchMatmulV3 (CANN's quant_batch_matmul_v3, arch35 / DAV_3510): the
// parse that runs before any strategy. It checks the request's dtypes and
// shapes the way CANN's arch35 checker does, reads m, k, n and the batch dims
// from the origin shapes, infers missing group sizes, classifies the quant
// mode from the scale dtypes and shapes, and folds A's batch into M where
// CANN does. What CANN refuses comes back as INVALID_ARGUMENT naming the
// request field ("quant.scale: ...").
//
// Sources: CANN's matmul/quant_batch_matmul_v3/op_host/op_tiling/
// quant_batch_matmul_v3_tiling_base.cpp (GetShapeAttrsInfo and what it
// calls) and arch35/quant_batch_matmul_v3_checker.cpp (CheckDtype,
// CheckShape). Part of `npu_tiling`; the strategies read the QuantFacts.
#ifndef NPU_SERVER_TILING_QUANT_QUANT_PARSE_H_
#define NPU_SERVER_TILING_QUANT_QUANT_PARSE_H_

#include <string>

#include "absl/status/statusor.h"
#include "server/tiling/quant/quant_facts.h"

namespace npu::tiling::quant {

// Parses `request` into the problem CANN's strategies see, running CANN's
// checks in CANN's order; the first rule broken is the InvalidArgumentError
// returned. A tensor whose `storage` is empty is read as stored in its
// `origin` shape. Never faults, whatever the shapes hold.
absl::StatusOr<QuantFacts> ParseQuantRequest(const QuantRequest& request);

// Returns the lower-case name of `dtype` ("float8_e4m3fn"), or "dtype N" for
// a number GeDtype does not name.
std::string GeDtypeName(GeDtype dtype);

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_QUANT_PARSE_H_
