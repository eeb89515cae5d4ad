// Request-level checks of the wire API, run before anything is converted.
//
// The tiling engine validates the problem itself (dimension ranges, dtype
// combinations, NZ shapes) and the chip as a whole. What only the wire can get
// wrong is checked here: required enums left UNSPECIFIED, enum numbers proto3
// lets through but that name nothing, oversized strings and repeated fields,
// and platform overrides outside the ranges the service accepts. Every error
// is kInvalidArgument and starts with the proto field path, e.g.
// "problem.dtype_a: ...".
#ifndef NPU_SERVER_SERVICE_VALIDATE_H_
#define NPU_SERVER_SERVICE_VALIDATE_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::server {

// Fixed limits of the wire API. They bound memory and log size per request,
// not what the engine can compute.
inline constexpr size_t kMaxIdBytes = 256;
inline constexpr size_t kMaxNameBytes = 64;  // platform and strategy names
inline constexpr size_t kMaxClientIdBytes = 128;
// A FRACTAL_NZ storage shape is [..., d0, d1, d2, d3]; 8 leaves room for four
// batch dimensions, more than any CANN matmul accepts.
inline constexpr int kMaxStorageShapeRank = 8;
// Batch dims per operand (CANN's rank limit of 6, less the two matrix dims)
// and the rank of FusedMatMul's x3.
inline constexpr int kMaxBatchRank = 4;
inline constexpr int kMaxX3Rank = 3;
// QuantBatchMatmulV3: dims of a scale, offset or bias shape (CANN's tensors
// have at most rank 8), and each group size (16 bits of group_size).
inline constexpr int kMaxQuantRank = 8;
inline constexpr int64_t kMaxGroupSize = 65535;
// GroupedMatmul: instances per tensor list and entries of tuning_config and
// token_histogram (CANN's largest group count is 1024), dims per shape (the
// engine keeps the same bounds, server/tiling/grouped/gmm_path.h).
inline constexpr int kMaxGroupedInstances = 1024;
inline constexpr int kMaxGroupedRank = 8;

// PlatformOverrides are checked against the ranges of the engine's chip
// table (npu::tiling::kChipFields, also what ValidateChip() checks), so that
// an out-of-range override is reported under its wire name,
// "platform_overrides.<field>".
inline constexpr uint64_t kKiB = 1024;

// Wire limits of AdviseOptions (ADVISE mode). Servers cap both lower
// (--max_advise_candidates, --max_advisory_ms); these only reject values no
// server would honour, so that a typo is an error rather than a silent cap.
inline constexpr uint32_t kMaxAdviseCandidates = 64;
inline constexpr uint32_t kMaxAdvisoryMs = 600000;  // 10 minutes

// The fields every RPC that tiles a problem carries, read in place from its
// request (GetTiling's TilingRequest, Execute's ExecuteRequest), so that the
// pipeline serves each without copying it into another message.
struct RequestParts {
  absl::string_view id;
  absl::string_view platform;
  absl::string_view forced_strategy;
  absl::string_view client_id;
  const npu::tiling::v1::MatmulProblem* problem = nullptr;        // null when absent
  const npu::tiling::v1::PlatformOverrides* overrides = nullptr;  // null when absent
  // GetTiling's own fields (mode, view, advise); null for the other RPCs.
  const npu::tiling::v1::TilingRequest* tiling = nullptr;
};
RequestParts PartsOf(const npu::tiling::v1::TilingRequest& request);
// Execute's overrides always count as present (an empty message overrides
// nothing).
RequestParts PartsOf(const npu::tiling::v1::ExecuteRequest& request);

// OK, or kInvalidArgument naming the first offending field of `request`.
absl::Status ValidateRequest(const RequestParts& request);
absl::Status ValidateRequest(const npu::tiling::v1::TilingRequest& request);

// The checks of ValidateRequest() that concern `overrides` alone.
absl::Status ValidatePlatformOverrides(const npu::tiling::v1::PlatformOverrides& overrides);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_VALIDATE_H_
