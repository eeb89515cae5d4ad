// Names, human-readable tables and JSON renderings of service messages for
// tilingctl.
//
// Tables are for people at a terminal; `--json` prints the proto's canonical
// JSON mapping (lowerCamelCase names, enums by name, 64-bit integers as
// strings) with default values included, so scripts see every field.
#ifndef NPU_CLIENT_TILINGCTL_FORMAT_H_
#define NPU_CLIENT_TILINGCTL_FORMAT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::client {

// Parses a dtype name: float16, bfloat16, float32 (also fp16, bf16, fp32).
absl::StatusOr<npu::tiling::v1::DataType> DataTypeFromName(absl::string_view name);
// Parses a format name: ND, FRACTAL_NZ (also NZ).
absl::StatusOr<npu::tiling::v1::Format> FormatFromName(absl::string_view name);

// Parses an operator name: matmul_v3, batch_matmul_v3, fused_matmul (also
// CANN's MatMulV3, BatchMatMulV3, FusedMatMul).
absl::StatusOr<npu::tiling::v1::Operator> OperatorFromName(absl::string_view name);
// Parses a fused op: none (or ""), relu, add, mul, gelu_erf, gelu_tanh,
// 16cast32.
absl::StatusOr<npu::tiling::v1::FusedOp> FusedOpFromName(absl::string_view name);

// The message as one line of JSON.
std::string ToJson(const google::protobuf::Message& message);

// The word of each tiling-data field of `response` in its raw words ("17"),
// with the byte for an 8-bit field ("17.2"), in field order.
std::vector<std::string> TilingFieldPositions(const npu::tiling::v1::TilingResponse& response);

// A decision: key and its parts, launch facts, the tiling-data fields with
// their word positions, the raw words, the platform and the trace.
std::string FormatTiling(const npu::tiling::v1::TilingResponse& response);

// An ADVISE answer: CANN's choice in one line, the ranked candidates (rank,
// candidate, predicted us, speed-up vs CANN, bound, numerics, explanation;
// CANN's choice marked with '*'), the split read / write model, the numerics
// check of the recommendation, and what was not offered and why. A response
// without `advice` prints only the CANN line and says so.
std::string FormatAdvice(const npu::tiling::v1::TilingResponse& response);

// "CANN_STRATEGY", "BLOCK_SEARCH", ... (the enum name without its prefix).
std::string VariantKindLabel(npu::tiling::v1::VariantKind kind);
// "PASSED", "FAILED", "NOT_CHECKED" ("-" when unspecified).
std::string NumericsLabel(npu::tiling::v1::NumericsStatus status);

// One row per batch item: index, id, status, strategy, key, block dim.
std::string FormatBatch(const std::vector<npu::tiling::v1::TilingResponse>& responses);

// One row per platform profile.
std::string FormatPlatforms(const npu::tiling::v1::ListPlatformsResponse& response);

}  // namespace npu::client

#endif  // NPU_CLIENT_TILINGCTL_FORMAT_H_
