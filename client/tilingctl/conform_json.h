// Helpers shared by the golden-case schemas of tilingctl's conformance runs
// (conform_tiling_cases.cc, conform_ut_decoded.cc): reading typed values out
// of a case's JSON with errors naming the key's path, and comparing an
// expectation with the engine's answer. Internal to the client library.
#ifndef NPU_CLIENT_TILINGCTL_CONFORM_JSON_H_
#define NPU_CLIENT_TILINGCTL_CONFORM_JSON_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::client::conform_internal {

using Json = nlohmann::ordered_json;

// kInvalidArgument "path: what".
absl::Status BadField(absl::string_view path, absl::string_view what);

// The integer under `key`; absent or null is `fallback`, or an error when
// there is none.
absl::StatusOr<int64_t> GetInt(const Json& object, const char* key, absl::string_view path,
                               std::optional<int64_t> fallback = std::nullopt);
// The boolean under `key`, false when absent or null.
absl::StatusOr<bool> GetBool(const Json& object, const char* key, absl::string_view path);
// A dtype name ("float16", "DT_BF16"...).
absl::StatusOr<npu::tiling::v1::DataType> ParseDtype(const Json& value, absl::string_view path);
// The format under `key`, ND when absent or null.
absl::StatusOr<npu::tiling::v1::Format> ParseFormat(const Json& object, const char* key,
                                                    absl::string_view path);

// A platform figure of a case: a non-negative integer, and its value for a
// 32-bit field, clamped so that the server reports a value that does not
// fit as out of range instead of a silently wrapped number.
struct PlatformFigure {
  uint64_t value = 0;
  uint32_t value32 = 0;
};
absl::StatusOr<PlatformFigure> GetPlatformFigure(const Json& value, absl::string_view path);

// `s` in double quotes.
std::string Quoted(absl::string_view s);
// "field F expected E got G", or nullopt when the integer expectation holds
// (a non-integer expectation never does).
std::optional<std::string> CompareInt(absl::string_view field, const Json& expected,
                                      std::optional<uint64_t> got);
// The same for a name.
std::optional<std::string> CompareName(absl::string_view field, const Json& expected,
                                       const std::string& got);

// Steps from a case's keys to the problem, shared by the schemas; each
// returns an error naming the bad key's path ("input.dtype_a").
// m, n, k.
absl::Status SetShape(const Json& input, npu::tiling::v1::MatmulProblem* p);
// dtype_a, dtype_b, dtype_c.
absl::Status SetDtypes(const Json& input, npu::tiling::v1::MatmulProblem* p);
// dtype_bias; needs the bias flag and dtype_c already set.
absl::Status SetBiasDtype(const Json& input, npu::tiling::v1::MatmulProblem* p);
// format_a, format_b, format_c.
absl::Status SetFormats(const Json& input, npu::tiling::v1::MatmulProblem* p);

// Whether the expectation is CANN's refusal (status GRAPH_FAILED).
bool ExpectsRefusal(const Json& expected);
// For an expected refusal: nullopt when the engine refused too
// (INVALID_ARGUMENT or FAILED_PRECONDITION; `*refusal`, when not null, gets
// its message), else what it answered instead.
std::optional<std::string> JudgeRefusal(
    const absl::StatusOr<npu::tiling::v1::TilingResponse>& response, std::string* refusal);
// "error CODE: message".
std::string ErrorText(const absl::Status& status);

// A "cann950-ut-decoded/1" case of TransposeBatchMatMul or
// TransposeQuantBatchMatMul (conform_transpose.cc) as a request of `op`:
// m, n, k, the batch, the perms, the batch split, the dtypes and formats,
// hf32, the scales (their storage shapes, which CANN reads) and group size
// of the quantized op, the platform with the vector core count the op's
// compile info holds where it reads one. x1's and x2's shapes must be the
// logical ones read through the perms; y's is only checked to be 3-D (a
// difference goes to `*note`). What the API cannot state sets
// `*inexpressible` and returns kFailedPrecondition.
absl::StatusOr<npu::tiling::v1::TilingRequest> RequestFromTransposeCase(
    const Json& c, npu::tiling::v1::Operator op, std::string* inexpressible, std::string* note);

}  // namespace npu::client::conform_internal

#endif  // NPU_CLIENT_TILINGCTL_CONFORM_JSON_H_
