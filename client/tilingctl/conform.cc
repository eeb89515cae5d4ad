#include "client/tilingctl/conform.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/tilingctl/format.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;
using Json = nlohmann::ordered_json;

absl::Status BadField(absl::string_view path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

absl::StatusOr<int64_t> GetInt(const Json& object, const char* key, absl::string_view path,
                               std::optional<int64_t> fallback = std::nullopt) {
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

// The platform keys of the schema, which are also PlatformOverrides fields.
absl::Status ApplyPlatform(const Json& platform, pb::TilingRequest* request,
                           std::vector<std::string>* ignored_keys) {
  if (!platform.is_object()) return BadField("input.platform", "not an object");
  pb::PlatformOverrides* o = request->mutable_platform_overrides();
  for (const auto& [key, value] : platform.items()) {
    const std::string path = absl::StrCat("input.platform.", key);
    if (key == "name") {
      if (!value.is_string()) return BadField(path, "not a string");
      request->set_platform(value.get<std::string>());
      continue;
    }
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
      return BadField(path, absl::StrCat("not a non-negative integer: ", value.dump()));
    }
    const uint64_t v = value.get<uint64_t>();
    // uint32 fields: values that do not fit are clamped so that the server
    // reports them as out of range instead of a silently wrapped number.
    const uint32_t v32 = static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX));
    if (key == "aic_num") {
      o->set_aic_num(v32);
    } else if (key == "aiv_num") {
      o->set_aiv_num(v32);
    } else if (key == "l1_bytes") {
      o->set_l1_bytes(v);
    } else if (key == "l0a_bytes") {
      o->set_l0a_bytes(v);
    } else if (key == "l0b_bytes") {
      o->set_l0b_bytes(v);
    } else if (key == "l0c_bytes") {
      o->set_l0c_bytes(v);
    } else if (key == "ub_bytes") {
      o->set_ub_bytes(v);
    } else if (key == "l2_bytes") {
      o->set_l2_bytes(v);
    } else if (key == "bt_bytes") {
      o->set_bt_bytes(v);
    } else if (key == "cube_freq_mhz") {
      o->set_cube_freq_mhz(v32);
    } else if (key == "ddr_bytes_per_cycle") {
      o->set_ddr_bytes_per_cycle(v32);
    } else if (key == "l2_bytes_per_cycle") {
      o->set_l2_bytes_per_cycle(v32);
    } else if (ignored_keys != nullptr) {
      ignored_keys->push_back(path);
    }
  }
  return absl::OkStatus();
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

// The steps of RequestFromCaseInput(), one per group of schema keys. Each
// sets its problem fields or returns an error naming the bad key's path
// ("input.dtype_a"), so that a case file can be fixed where it is wrong.

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

// The boolean keys, each false when absent or null.
absl::Status SetFlags(const Json& input, pb::MatmulProblem* p) {
  struct BoolField {
    const char* key;
    void (pb::MatmulProblem::*set)(bool);
  };
  for (const BoolField& field :
       {BoolField{"trans_a", &pb::MatmulProblem::set_trans_a},
        BoolField{"trans_b", &pb::MatmulProblem::set_trans_b},
        BoolField{"bias", &pb::MatmulProblem::set_has_bias},
        BoolField{"hf32", &pb::MatmulProblem::set_hf32},
        BoolField{"force_grp_acc_fp32", &pb::MatmulProblem::set_force_grp_acc_fp32},
        BoolField{"avoid_tensor_api", &pb::MatmulProblem::set_avoid_tensor_api}}) {
    absl::StatusOr<bool> value = GetBool(input, field.key, absl::StrCat("input.", field.key));
    if (!value.ok()) return value.status();
    (p->*field.set)(*value);
  }
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

absl::Status SetDeterministicLevel(const Json& input, pb::MatmulProblem* p) {
  absl::StatusOr<int64_t> level =
      GetInt(input, "deterministic_level", "input.deterministic_level", 0);
  if (!level.ok()) return level.status();
  p->set_deterministic_level(static_cast<int32_t>(*level));
  return absl::OkStatus();
}

// B's storage shape when format_b is FRACTAL_NZ; absent or null leaves it
// empty, which the server takes as B's canonical NZ storage. The server
// checks the dims; here only that they are integers.
absl::Status SetStorageShapeB(const Json& input, pb::MatmulProblem* p) {
  auto it = input.find("storage_shape_b");
  if (it == input.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_array()) return BadField("input.storage_shape_b", "not a list");
  for (const Json& dim : *it) {
    if (!dim.is_number_integer()) {
      return BadField("input.storage_shape_b", absl::StrCat("not an integer: ", dim.dump()));
    }
    p->add_storage_shape_b(dim.get<int64_t>());
  }
  return absl::OkStatus();
}

// Reports the top-level keys the schema does not know, so that a typo in a
// case file is seen rather than silently tiling the default.
void ReportUnknownKeys(const Json& input, std::vector<std::string>* ignored_keys) {
  if (ignored_keys == nullptr) return;
  static const char* const kKnown[] = {"m",
                                       "n",
                                       "k",
                                       "dtype_a",
                                       "dtype_b",
                                       "dtype_c",
                                       "trans_a",
                                       "trans_b",
                                       "format_a",
                                       "format_b",
                                       "format_c",
                                       "bias",
                                       "bias_dtype",
                                       "hf32",
                                       "force_grp_acc_fp32",
                                       "avoid_tensor_api",
                                       "deterministic_level",
                                       "storage_shape_b",
                                       "platform"};
  for (const auto& [key, value] : input.items()) {
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      ignored_keys->push_back(absl::StrCat("input.", key));
    }
  }
}

}  // namespace

absl::StatusOr<pb::TilingRequest> RequestFromCaseInput(const Json& input,
                                                       std::vector<std::string>* ignored_keys) {
  if (!input.is_object()) return BadField("input", "not an object");
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  // In schema order, which is also the order errors are reported in.
  for (absl::Status (*step)(const Json&, pb::MatmulProblem*) :
       {SetShape, SetDtypes, SetFlags, SetBiasDtype, SetFormats, SetDeterministicLevel,
        SetStorageShapeB}) {
    absl::Status status = step(input, p);
    if (!status.ok()) return status;
  }
  if (auto it = input.find("platform"); it != input.end() && !it->is_null()) {
    absl::Status status = ApplyPlatform(*it, &request, ignored_keys);
    if (!status.ok()) return status;
  }
  ReportUnknownKeys(input, ignored_keys);
  return request;
}

absl::StatusOr<std::vector<ConformanceCase>> ParseConformanceFile(
    absl::string_view json_text, std::vector<std::string>* ignored_keys) {
  Json root = Json::parse(json_text.begin(), json_text.end(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!root.is_object()) return absl::InvalidArgumentError("the top level is not an object");
  auto schema = root.find("schema");
  if (schema == root.end() || !schema->is_string() ||
      schema->get<std::string>() != kConformanceSchema) {
    return absl::InvalidArgumentError(
        absl::StrCat("schema: expected \"", kConformanceSchema, "\", got ",
                     schema == root.end() ? "nothing" : schema->dump()));
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
    c.name = absl::StrCat("case#", i);
    if (!entry.is_object()) {
      c.request = absl::InvalidArgumentError("not an object");
      out.push_back(std::move(c));
      continue;
    }
    if (auto name = entry.find("name"); name != entry.end() && name->is_string()) {
      c.name = name->get<std::string>();
    }
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
    if (c.request.ok()) c.request->set_id(c.name);
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<std::string> FirstMismatch(const Json& expected, const pb::TilingResponse& response) {
  if (auto it = expected.find("block_dim"); it != expected.end()) {
    if (auto diff = CompareInt("block_dim", *it, response.block_dim())) return diff;
  }
  if (auto it = expected.find("tiling_key"); it != expected.end()) {
    if (auto diff = CompareInt("tiling_key", *it, response.tiling_key())) return diff;
  }
  const std::pair<const char*, const std::string*> names[] = {
      {"api_level", &response.key().api_level_name()}, {"model", &response.key().model_name()},
      {"full_load", &response.key().full_load_name()}, {"l0c2out", &response.key().l0c2out_name()},
      {"tiling_struct", &response.tiling_struct()},
  };
  for (const auto& [key, got] : names) {
    if (auto it = expected.find(key); it != expected.end()) {
      if (auto diff = CompareName(key, *it, *got)) return diff;
    }
  }
  if (auto fields = expected.find("fields"); fields != expected.end()) {
    if (!fields->is_object()) return absl::StrCat("field fields expected an object");
    for (const auto& [name, value] : fields->items()) {
      std::optional<uint64_t> got;
      for (const pb::TilingField& field : response.fields()) {
        if (field.name() == name) {
          got = field.value();
          break;
        }
      }
      if (auto diff = CompareInt(name, value, got)) return diff;
    }
  }
  return std::nullopt;
}

ConformanceSummary RunConformance(
    const std::vector<ConformanceCase>& cases,
    const std::function<absl::StatusOr<pb::TilingResponse>(const pb::TilingRequest&)>& decide,
    std::ostream& out) {
  ConformanceSummary summary;
  for (const ConformanceCase& c : cases) {
    std::optional<std::string> failure;
    if (!c.request.ok()) {
      failure = absl::StrCat("bad case: ", c.request.status().message());
    } else {
      absl::StatusOr<pb::TilingResponse> response = decide(*c.request);
      if (!response.ok()) {
        failure = absl::StrCat("error ", absl::StatusCodeToString(response.status().code()), ": ",
                               response.status().message());
      } else {
        failure = FirstMismatch(c.expected, *response);
      }
    }
    if (failure.has_value()) {
      ++summary.failed;
      out << "FAIL " << c.name << ": " << *failure << "\n";
    } else {
      ++summary.passed;
      out << "PASS " << c.name << "\n";
    }
  }
  out << summary.passed << " passed, " << summary.failed << " failed\n";
  return summary;
}

}  // namespace npu::client
