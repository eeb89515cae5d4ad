// Conformance runs for tilingctl: files of schema "cann950-tiling-cases/1"
// (MatMulV3) and "cann950-ut-decoded/1" (BatchMatMulV3 and FusedMatMul).
//
// A case is an input (a matmul problem and the platform's hardware facts)
// and the outputs CANN's own tiling produced for it. In
// "cann950-tiling-cases/1" (tests/data/cann950/README.md) those are the block
// dim, the tiling key, the key's decoded names, the tiling-data struct and its
// fields by name. In "cann950-ut-decoded/1" (tests/data/cann950_ops/README.md)
// they are CANN's status (a GRAPH_FAILED case must be refused), block dim,
// tiling key and the tiling-data words CANN's own unit test compares. These
// functions turn a case into a TilingRequest and compare a TilingResponse
// with the expectations; they do no I/O of their own, so the comparison is
// unit-tested without a server. Each schema is its own file
// (conform_tiling_cases.cc, conform_ut_decoded.cc) and a row of conform.cc's
// schema table, which the file reader and the run walk.
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
inline constexpr char kUtDecodedSchema[] = "cann950-ut-decoded/1";
inline constexpr char kQuantUtDecodedSchema[] = "cann950-quant-ut-decoded/1";
inline constexpr char kGmmUtDecodedSchema[] = "cann950-gmm-ut-decoded/1";

enum class CaseSchema {
  kTilingCases,     // kConformanceSchema
  kUtDecoded,       // kUtDecodedSchema
  kQuantUtDecoded,  // kQuantUtDecodedSchema
  kGmmUtDecoded,    // kGmmUtDecodedSchema
};

struct ConformanceCase {
  std::string name;
  CaseSchema schema = CaseSchema::kTilingCases;
  // The request for the case's input, or why the input is malformed.
  absl::StatusOr<npu::tiling::v1::TilingRequest> request;
  // kUtDecoded only: why the API cannot state the case's input at all (for
  // example A's K differing from B's: a problem has one k). Such a case is
  // judged without a request: it passes when CANN refused it, since no
  // request can ask the engine for it, and fails otherwise.
  std::string inexpressible;
  // kUtDecoded only: what the case states that the request leaves out, for
  // its PASS / FAIL line (a y shape whose [m, n] disagrees with x1 and x2:
  // CANN tiles from x1 and x2 and reads only y's batch dims).
  std::string note;
  // The case's "expected" object, keys in file order.
  nlohmann::ordered_json expected;
  // The request of the case whose tiling key this one's must differ from
  // (its expectation's "tiling_key_differs_from"), decided beside it.
  std::optional<npu::tiling::v1::TilingRequest> companion;
};

// Parses a whole file of either schema. kInvalidArgument when the text is
// not JSON, names another schema or has no "cases" list; a malformed case is
// reported in its own `request` so the other cases still run. Input keys the
// schema does not define are ignored and listed in `ignored_keys` (when not
// null).
absl::StatusOr<std::vector<ConformanceCase>> ParseConformanceFile(
    absl::string_view json_text, std::vector<std::string>* ignored_keys = nullptr);

// The request for one "cann950-ut-decoded/1" case (the whole case object:
// its input keys sit beside "expected"). What the API cannot state sets
// `*inexpressible` to the reason and returns kFailedPrecondition; a
// malformed case is kInvalidArgument naming the key.
//
// The mapping follows the harnesses of CANN's tests: op_type, m/n/k, dtypes,
// trans, formats (B's NZ storage from storage_shapes.x2), the bias with
// FusedMatMul's dtype quirk (its test gives the bias A's dtype whatever
// bias_dtype says), hf32 = enable_hf32_attr, avoid_tensor_api = offset_x ==
// 0x80 (BatchMatMulV3 only), the batch dims, a bias batch from a bias of rank
// above 2, x3 from ori_shapes.x3 (add / mul only), batch-interleaved views
// from the {1, 0, 2} `strides` pattern, inner_precise, and the platform's
// core counts and buffer sizes.
absl::StatusOr<npu::tiling::v1::TilingRequest> RequestFromDecodedCase(
    const nlohmann::ordered_json& c, std::string* inexpressible,
    std::vector<std::string>* ignored_keys = nullptr, std::string* note = nullptr);

// The first difference between a "cann950-ut-decoded/1" expectation and the
// engine's answer, or nullopt when it holds: the status (GRAPH_FAILED needs
// a refusal, INVALID_ARGUMENT or FAILED_PRECONDITION), then block_dim and
// tiling_key (unless null), then the words of compared_word_indices against
// tiling_data_words. A refusal that matches sets `*refusal` (when not null)
// to the engine's message.
std::optional<std::string> FirstDecodedMismatch(
    const nlohmann::ordered_json& expected,
    const absl::StatusOr<npu::tiling::v1::TilingResponse>& response,
    std::string* refusal = nullptr);

// The request for one "cann950-quant-ut-decoded/1" case: QuantBatchMatmulV3
// with m, n, k, the transposes, the dtypes (GE names), x1 / x2 formats (x2's
// NZ storage from its storage shape), the batch dims from the origin shapes
// of x1, x2 and y, the scale, pertoken scale, offset and bias with their
// shapes, the group size attribute, the deterministic level and the
// platform's core counts and buffer sizes. What the API cannot state sets
// `*inexpressible` and returns kFailedPrecondition.
absl::StatusOr<npu::tiling::v1::TilingRequest> RequestFromQuantCase(const nlohmann::ordered_json& c,
                                                                    std::string* inexpressible);

// The request for one "cann950-quant-ut-decoded/1" case whose "op" is
// WeightQuantBatchMatmulV2 (conform_weight_quant.cc): x, the weight (ND, or
// NZ with its storage shape), the antiquant scale and offset, the quant
// scale and offset and the bias as the case wires them, group_size and the
// platform's core counts and buffer sizes.
absl::StatusOr<npu::tiling::v1::TilingRequest> RequestFromWeightQuantCase(
    const nlohmann::ordered_json& c, std::string* inexpressible);

// The first difference between a "cann950-quant-ut-decoded/1" expectation
// and the engine's answer, as far as its `checks` go: the status, then
// num_blocks and tiling_key, then the word count and every word of
// compared_word_indices (and the compared bits of partially_compared_words).
std::optional<std::string> FirstQuantMismatch(
    const nlohmann::ordered_json& expected,
    const absl::StatusOr<npu::tiling::v1::TilingResponse>& response,
    std::string* refusal = nullptr);

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
// "FAIL name: <why>" per case and the final line "N passed, M failed". A
// "cann950-ut-decoded/1" case CANN refused passes as
// "PASS name (refused: <engine's message>)", an inexpressible one as
// "PASS name (not expressible, CANN refuses it too: <why>)".
ConformanceSummary RunConformance(
    const std::vector<ConformanceCase>& cases,
    const std::function<absl::StatusOr<npu::tiling::v1::TilingResponse>(
        const npu::tiling::v1::TilingRequest&)>& decide,
    std::ostream& out);

// The request for one "cann950-gmm-ut-decoded/1" case (conform_gmm.cc):
// GroupedMatmul with the case's ten tensor lists (origin and storage shapes,
// GE dtype, format; an absent input has no instance), its attributes, and
// the chip its path reads: the compile info's cores and buffers, or for the
// quant path the context platform's core count and buffers with the compile
// info's vector core count (the file README's harness facts).
absl::StatusOr<npu::tiling::v1::TilingRequest> RequestFromGmmCase(const nlohmann::ordered_json& c);

// Every difference between a "cann950-gmm-ut-decoded/1" expectation and the
// engine's answer (empty: it holds): the status (a refusal for
// GRAPH_FAILED, whose message goes to `*refusal`), tiling_key, tiling_key_not,
// num_blocks, the struct's name and data size, the compared words (named by
// their fields), the named and checked fields (in the member's width),
// field bounds and conditional bounds, and a key that must differ from
// `companion`'s answer.
std::vector<std::string> GmmMismatches(
    const nlohmann::ordered_json& expected,
    const absl::StatusOr<npu::tiling::v1::TilingResponse>& response,
    const absl::StatusOr<npu::tiling::v1::TilingResponse>* companion, std::string* refusal);

}  // namespace npu::client

#endif  // NPU_CLIENT_TILINGCTL_CONFORM_H_
