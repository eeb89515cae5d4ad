// Conformance runs for tilingctl: files of schema "cann950-tiling-cases/1".
//
// A case is an input (a matmul problem and the platform's hardware facts)
// and the outputs CANN's own tiling produced for it (block dim, tiling key,
// the key's decoded names, the tiling-data struct and its fields by name).
// tests/data/cann950/README.md describes the schema. This file turns a case
// into a TilingRequest and compares a TilingResponse with the expectations;
// it does no I/O of its own, so the comparison is unit-tested without a
// server.
#ifndef NPU_CLIENT_TILINGCTL_CONFORM_H_
#define NPU_CLIENT_TILINGCTL_CONFORM_H_

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::client {

inline constexpr char kConformanceSchema[] = "cann950-tiling-cases/1";

struct ConformanceCase {
  std::string name;
  // The request for the case's input, or why the input is malformed.
  absl::StatusOr<npu::tiling::v1::TilingRequest> request;
  // The case's "expected" object, keys in file order.
  nlohmann::ordered_json expected;
};

// Parses a whole file. kInvalidArgument when the text is not JSON, names
// another schema or has no "cases" list; a malformed case is reported in its
// own `request` so the other cases still run. Input keys the schema does not
// define are ignored and listed in `ignored_keys` (when not null).
absl::StatusOr<std::vector<ConformanceCase>> ParseConformanceFile(
    absl::string_view json_text, std::vector<std::string>* ignored_keys = nullptr);

// The request for one case's "input" object: default platform plus every
// hardware fact of "input.platform" as an override.
absl::StatusOr<npu::tiling::v1::TilingRequest> RequestFromCaseInput(
    const nlohmann::ordered_json& input, std::vector<std::string>* ignored_keys = nullptr);

// The first difference between `expected` and `response`, as
// "field X expected E got G", or nullopt when every expectation holds. The
// order is block_dim, tiling_key, api_level, model, full_load, l0c2out,
// tiling_struct, then "fields" in file order.
std::optional<std::string> FirstMismatch(const nlohmann::ordered_json& expected,
                                         const npu::tiling::v1::TilingResponse& response);

struct ConformanceSummary {
  int passed = 0;
  int failed = 0;
};

// Runs every case through `decide`, writing "PASS name" or
// "FAIL name: <why>" per case and the final line "N passed, M failed".
ConformanceSummary RunConformance(
    const std::vector<ConformanceCase>& cases,
    const std::function<absl::StatusOr<npu::tiling::v1::TilingResponse>(
        const npu::tiling::v1::TilingRequest&)>& decide,
    std::ostream& out);

}  // namespace npu::client

#endif  // NPU_CLIENT_TILINGCTL_CONFORM_H_
