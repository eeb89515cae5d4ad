#include "client/tilingctl/conform_json.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "client/tilingctl/format.h"

namespace npu::client::conform_internal {

namespace pb = ::npu::tiling::v1;

absl::Status BadField(absl::string_view path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

absl::StatusOr<int64_t> GetInt(const Json& object, const char* key, absl::string_view path,
                               std::optional<int64_t> fallback) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (fallback.has_value()) return *fallback;
    return BadField(path, "required");
  }
  if (!it->is_number_integer()) return BadField(path, absl::StrCat("not an integer: ", it->dump()));
  return it->get<int64_t>();
}

absl::StatusOr<bool> GetBool(const Json& object, const char* key, absl::string_view path) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return false;
  if (!it->is_boolean()) return BadField(path, absl::StrCat("not a boolean: ", it->dump()));
  return it->get<bool>();
}

absl::StatusOr<pb::DataType> ParseDtype(const Json& value, absl::string_view path) {
  if (!value.is_string()) return BadField(path, absl::StrCat("not a dtype: ", value.dump()));
  absl::StatusOr<pb::DataType> dtype = DataTypeFromName(value.get<std::string>());
  if (!dtype.ok()) return BadField(path, dtype.status().message());
  return dtype;
}

absl::StatusOr<pb::Format> ParseFormat(const Json& object, const char* key,
                                       absl::string_view path) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return pb::FORMAT_ND;
  if (!it->is_string()) return BadField(path, absl::StrCat("not a format: ", it->dump()));
  absl::StatusOr<pb::Format> format = FormatFromName(it->get<std::string>());
  if (!format.ok()) return BadField(path, format.status().message());
  return format;
}

absl::StatusOr<PlatformFigure> GetPlatformFigure(const Json& value, absl::string_view path) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0) {
    return BadField(path, absl::StrCat("not a non-negative integer: ", value.dump()));
  }
  PlatformFigure figure;
  figure.value = value.get<uint64_t>();
  figure.value32 = static_cast<uint32_t>(std::min<uint64_t>(figure.value, UINT32_MAX));
  return figure;
}

std::string Quoted(absl::string_view s) { return absl::StrCat("\"", s, "\""); }

// Compares an integer expectation; non-integer expectations never match.
std::optional<std::string> CompareInt(absl::string_view field, const Json& expected,
                                      std::optional<uint64_t> got) {
  const bool integer = expected.is_number_integer() &&
                       (expected.is_number_unsigned() || expected.get<int64_t>() >= 0);
  if (integer && got.has_value() && expected.get<uint64_t>() == *got) return std::nullopt;
  return absl::StrCat("field ", field, " expected ", expected.dump(), " got ",
                      got.has_value() ? absl::StrCat(*got) : "<absent>");
}

std::optional<std::string> CompareName(absl::string_view field, const Json& expected,
                                       const std::string& got) {
  if (expected.is_string() && expected.get<std::string>() == got) return std::nullopt;
  return absl::StrCat("field ", field, " expected ", expected.dump(), " got ", Quoted(got));
}

bool ExpectsRefusal(const Json& expected) {
  auto it = expected.find("status");
  return it != expected.end() && *it == Json("GRAPH_FAILED");
}

std::string ErrorText(const absl::Status& status) {
  return absl::StrCat("error ", absl::StatusCodeToString(status.code()), ": ", status.message());
}

absl::Status SetShape(const Json& input, pb::MatmulProblem* p) {
  absl::StatusOr<int64_t> m = GetInt(input, "m", "input.m");
  absl::StatusOr<int64_t> n = GetInt(input, "n", "input.n");
  absl::StatusOr<int64_t> k = GetInt(input, "k", "input.k");
  for (const auto* value : {&m, &n, &k}) {
    if (!value->ok()) return value->status();
  }
  p->set_m(*m);
  p->set_n(*n);
  p->set_k(*k);
  return absl::OkStatus();
}

absl::Status SetDtypes(const Json& input, pb::MatmulProblem* p) {
  // All three dtypes are required: a missing one is reported as such before
  // any present one is parsed.
  for (const char* key : {"dtype_a", "dtype_b", "dtype_c"}) {
    auto it = input.find(key);
    if (it == input.end()) return BadField(absl::StrCat("input.", key), "required");
  }
  absl::StatusOr<pb::DataType> dtype_a = ParseDtype(input["dtype_a"], "input.dtype_a");
  absl::StatusOr<pb::DataType> dtype_b = ParseDtype(input["dtype_b"], "input.dtype_b");
  absl::StatusOr<pb::DataType> dtype_c = ParseDtype(input["dtype_c"], "input.dtype_c");
  for (const auto* value : {&dtype_a, &dtype_b, &dtype_c}) {
    if (!value->ok()) return value->status();
  }
  p->set_dtype_a(*dtype_a);
  p->set_dtype_b(*dtype_b);
  p->set_dtype_c(*dtype_c);
  return absl::OkStatus();
}

// Needs the bias flag and dtype_c already set.
absl::Status SetBiasDtype(const Json& input, pb::MatmulProblem* p) {
  if (!p->has_bias()) return absl::OkStatus();
  // The schema allows a null bias dtype; CANN's bias then follows C.
  auto it = input.find("bias_dtype");
  if (it == input.end() || it->is_null()) {
    p->set_dtype_bias(p->dtype_c());
    return absl::OkStatus();
  }
  absl::StatusOr<pb::DataType> dtype = ParseDtype(*it, "input.bias_dtype");
  if (!dtype.ok()) return dtype.status();
  p->set_dtype_bias(*dtype);
  return absl::OkStatus();
}

absl::Status SetFormats(const Json& input, pb::MatmulProblem* p) {
  absl::StatusOr<pb::Format> format_a = ParseFormat(input, "format_a", "input.format_a");
  absl::StatusOr<pb::Format> format_b = ParseFormat(input, "format_b", "input.format_b");
  absl::StatusOr<pb::Format> format_c = ParseFormat(input, "format_c", "input.format_c");
  for (const auto* value : {&format_a, &format_b, &format_c}) {
    if (!value->ok()) return value->status();
  }
  p->set_format_a(*format_a);
  p->set_format_b(*format_b);
  p->set_format_c(*format_c);
  return absl::OkStatus();
}

std::optional<std::string> JudgeRefusal(
    const absl::StatusOr<npu::tiling::v1::TilingResponse>& response, std::string* refusal) {
  if (response.ok()) {
    return absl::StrCat("status expected GRAPH_FAILED (a refusal) got a plan: strategy ",
                        response->strategy(), ", tiling_key ", response->tiling_key());
  }
  const absl::StatusCode code = response.status().code();
  if (code != absl::StatusCode::kInvalidArgument &&
      code != absl::StatusCode::kFailedPrecondition) {
    return absl::StrCat("status expected GRAPH_FAILED (a refusal) got ",
                        ErrorText(response.status()));
  }
  if (refusal != nullptr) *refusal = std::string(response.status().message());
  return std::nullopt;
}

}  // namespace npu::client::conform_internal
