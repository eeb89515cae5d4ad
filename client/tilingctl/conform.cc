#include "client/tilingctl/conform.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/tilingctl/conform_json.h"

namespace npu::client {

namespace pb = ::npu::tiling::v1;
using conform_internal::ErrorText;
using conform_internal::ExpectsRefusal;
using conform_internal::Json;

namespace {

// A "cann950-tiling-cases/1" entry: its "input" object is the request.
void ReadTilingCase(const Json& entry, std::vector<std::string>* ignored_keys, ConformanceCase& c) {
  auto input = entry.find("input");
  auto expected = entry.find("expected");
  if (input == entry.end()) {
    c.request = absl::InvalidArgumentError("input: missing");
  } else if (expected == entry.end() || !expected->is_object()) {
    c.request = absl::InvalidArgumentError("expected: missing or not an object");
  } else {
    c.request = RequestFromCaseInput(*input, ignored_keys);
    c.expected = *expected;
  }
}

std::optional<std::string> JudgeTilingCase(const ConformanceCase& c,
                                           const absl::StatusOr<pb::TilingResponse>& response,
                                           const absl::StatusOr<pb::TilingResponse>* /*companion*/,
                                           std::string* /*note*/) {
  if (!response.ok()) return ErrorText(response.status());
  return FirstMismatch(c.expected, *response);
}

// A "cann950-ut-decoded/1" entry: the input keys sit in the case object.
void ReadDecodedCase(const Json& entry, std::vector<std::string>* ignored_keys,
                     ConformanceCase& c) {
  auto expected = entry.find("expected");
  if (expected == entry.end() || !expected->is_object()) {
    c.request = absl::InvalidArgumentError("expected: missing or not an object");
  } else {
    c.request = RequestFromDecodedCase(entry, &c.inexpressible, ignored_keys, &c.note);
    c.expected = *expected;
  }
}

std::optional<std::string> JudgeDecodedCase(const ConformanceCase& c,
                                            const absl::StatusOr<pb::TilingResponse>& response,
                                            const absl::StatusOr<pb::TilingResponse>* /*companion*/,
                                            std::string* note) {
  std::string refusal;
  std::optional<std::string> failure = FirstDecodedMismatch(c.expected, response, &refusal);
  if (!failure.has_value() && !refusal.empty()) *note = absl::StrCat("refused: ", refusal);
  return failure;
}

// A "cann950-quant-ut-decoded/1" entry: the inputs sit under "inputs".
void ReadQuantCase(const Json& entry, std::vector<std::string>* /*ignored_keys*/,
                   ConformanceCase& c) {
  auto expected = entry.find("expected");
  if (expected == entry.end() || !expected->is_object()) {
    c.request = absl::InvalidArgumentError("expected: missing or not an object");
  } else {
    // WeightQuantBatchMatmulV2's goldens share the schema; the case's op
    // tells them apart.
    c.request = entry.value("op", std::string()) == "WeightQuantBatchMatmulV2"
                    ? RequestFromWeightQuantCase(entry, &c.inexpressible)
                    : RequestFromQuantCase(entry, &c.inexpressible);
    c.expected = *expected;
  }
}

std::optional<std::string> JudgeQuantCase(const ConformanceCase& c,
                                          const absl::StatusOr<pb::TilingResponse>& response,
                                          const absl::StatusOr<pb::TilingResponse>* /*companion*/,
                                          std::string* note) {
  std::string refusal;
  std::optional<std::string> failure = FirstQuantMismatch(c.expected, response, &refusal);
  if (!failure.has_value() && !refusal.empty()) *note = absl::StrCat("refused: ", refusal);
  return failure;
}

// A "cann950-gmm-ut-decoded/1" entry: GroupedMatmul's inputs sit under
// "inputs".
void ReadGmmCase(const Json& entry, std::vector<std::string>* /*ignored_keys*/,
                 ConformanceCase& c) {
  auto expected = entry.find("expected");
  if (expected == entry.end() || !expected->is_object()) {
    c.request = absl::InvalidArgumentError("expected: missing or not an object");
  } else {
    c.request = RequestFromGmmCase(entry);
    c.expected = *expected;
  }
}

std::optional<std::string> JudgeGmmCase(const ConformanceCase& c,
                                        const absl::StatusOr<pb::TilingResponse>& response,
                                        const absl::StatusOr<pb::TilingResponse>* companion,
                                        std::string* note) {
  std::string refusal;
  const std::vector<std::string> diffs = GmmMismatches(c.expected, response, companion, &refusal);
  if (!diffs.empty()) return absl::StrJoin(diffs, "; ");
  if (!refusal.empty()) *note = absl::StrCat("refused: ", refusal);
  return std::nullopt;
}

// One golden-case schema per row: a new schema is its own file (the request
// and the comparison) and a row here.
struct SchemaRow {
  CaseSchema kind;
  const char* name;
  // Fills the case's request and expectation from its entry in "cases".
  void (*read)(const Json& entry, std::vector<std::string>* ignored_keys, ConformanceCase& c);
  // The first difference from the expectation (nullopt: the case passes);
  // may set `*note` to what a pass reports. `companion`: the answer to the
  // case's companion request, when it has one.
  std::optional<std::string> (*judge)(const ConformanceCase& c,
                                      const absl::StatusOr<pb::TilingResponse>& response,
                                      const absl::StatusOr<pb::TilingResponse>* companion,
                                      std::string* note);
};
constexpr SchemaRow kSchemas[] = {
    {CaseSchema::kTilingCases, kConformanceSchema, ReadTilingCase, JudgeTilingCase},
    {CaseSchema::kUtDecoded, kUtDecodedSchema, ReadDecodedCase, JudgeDecodedCase},
    {CaseSchema::kQuantUtDecoded, kQuantUtDecodedSchema, ReadQuantCase, JudgeQuantCase},
    {CaseSchema::kGmmUtDecoded, kGmmUtDecodedSchema, ReadGmmCase, JudgeGmmCase},
};

const SchemaRow& SchemaOf(CaseSchema kind) {
  for (const SchemaRow& row : kSchemas) {
    if (row.kind == kind) return row;
  }
  return kSchemas[0];
}

}  // namespace

absl::StatusOr<std::vector<ConformanceCase>> ParseConformanceFile(
    absl::string_view json_text, std::vector<std::string>* ignored_keys) {
  Json root = Json::parse(json_text.begin(), json_text.end(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!root.is_object()) return absl::InvalidArgumentError("the top level is not an object");
  auto schema = root.find("schema");
  const std::string schema_name =
      schema != root.end() && schema->is_string() ? schema->get<std::string>() : "";
  const SchemaRow* row = nullptr;
  std::string known;
  for (const SchemaRow& candidate : kSchemas) {
    if (schema_name == candidate.name) row = &candidate;
    absl::StrAppend(&known, known.empty() ? "" : " or ", "\"", candidate.name, "\"");
  }
  if (row == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "schema: expected ", known, ", got ", schema == root.end() ? "nothing" : schema->dump()));
  }
  auto cases = root.find("cases");
  if (cases == root.end() || !cases->is_array()) {
    return absl::InvalidArgumentError("cases: missing or not a list");
  }

  std::vector<ConformanceCase> out;
  out.reserve(cases->size());
  for (size_t i = 0; i < cases->size(); ++i) {
    const Json& entry = (*cases)[i];
    ConformanceCase c;
    c.schema = row->kind;
    c.name = absl::StrCat("case#", i);
    if (!entry.is_object()) {
      c.request = absl::InvalidArgumentError("not an object");
      out.push_back(std::move(c));
      continue;
    }
    if (auto name = entry.find("name"); name != entry.end() && name->is_string()) {
      c.name = name->get<std::string>();
    }
    row->read(entry, ignored_keys, c);
    if (c.request.ok()) c.request->set_id(c.name);
    out.push_back(std::move(c));
  }
  // A case whose key must differ from another's is decided with it.
  for (ConformanceCase& c : out) {
    auto other = c.expected.find("tiling_key_differs_from");
    if (other == c.expected.end() || !other->is_string()) continue;
    for (const ConformanceCase& named : out) {
      if (named.name == other->get<std::string>() && named.request.ok()) {
        c.companion = *named.request;
      }
    }
  }
  return out;
}

ConformanceSummary RunConformance(
    const std::vector<ConformanceCase>& cases,
    const std::function<absl::StatusOr<pb::TilingResponse>(const pb::TilingRequest&)>& decide,
    std::ostream& out) {
  ConformanceSummary summary;
  for (const ConformanceCase& c : cases) {
    std::optional<std::string> failure;
    std::string note;
    if (!c.inexpressible.empty()) {
      if (ExpectsRefusal(c.expected)) {
        note = absl::StrCat("not expressible, CANN refuses it too: ", c.inexpressible);
      } else {
        failure = absl::StrCat("not expressible: ", c.inexpressible);
      }
    } else if (!c.request.ok()) {
      failure = absl::StrCat("bad case: ", c.request.status().message());
    } else {
      std::optional<absl::StatusOr<pb::TilingResponse>> companion;
      if (c.companion.has_value()) companion = decide(*c.companion);
      failure = SchemaOf(c.schema).judge(c, decide(*c.request),
                                         companion.has_value() ? &*companion : nullptr, &note);
    }
    if (!c.note.empty()) note = note.empty() ? c.note : absl::StrCat(c.note, "; ", note);
    if (failure.has_value()) {
      ++summary.failed;
      out << "FAIL " << c.name << ": " << *failure << (c.note.empty() ? "" : " (" + c.note + ")")
          << "\n";
    } else {
      ++summary.passed;
      out << "PASS " << c.name << (note.empty() ? "" : absl::StrCat(" (", note, ")")) << "\n";
    }
  }
  out << summary.passed << " passed, " << summary.failed << " failed\n";
  return summary;
}

}  // namespace npu::client
