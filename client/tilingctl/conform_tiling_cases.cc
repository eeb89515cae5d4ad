// Schema "cann950-tiling-cases/1" (MatMulV3's golden cases,
// tests/data/cann950/README.md): a case's "input" object as a request, and
// its expected key, names and fields by name against the answer.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/tilingctl/conform.h"
#include "client/tilingctl/conform_json.h"
#include "client/tilingctl/format.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;
using conform_internal::BadField;
using conform_internal::CompareInt;
using conform_internal::CompareName;
using conform_internal::GetBool;
using conform_internal::GetInt;
using conform_internal::Json;
using conform_internal::ParseDtype;
using conform_internal::ParseFormat;
using conform_internal::Quoted;
using conform_internal::SetBiasDtype;
using conform_internal::SetDtypes;
using conform_internal::SetFormats;
using conform_internal::SetShape;

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
    absl::StatusOr<conform_internal::PlatformFigure> figure =
        conform_internal::GetPlatformFigure(value, path);
    if (!figure.ok()) return figure.status();
    const uint64_t v = figure->value;
    const uint32_t v32 = figure->value32;
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

// The steps of RequestFromCaseInput(), one per group of schema keys. Each
// sets its problem fields or returns an error naming the bad key's path
// ("input.dtype_a"), so that a case file can be fixed where it is wrong.

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

}  // namespace npu::client
