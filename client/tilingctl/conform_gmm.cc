// GroupedMatmul's golden file, schema "cann950-gmm-ut-decoded/1"
// (tests/data/cann950_gmm/README.md): a case is the op's ten tensor lists,
// its attributes, the test's compile info and the context's platform; the
// answer is compared with everything the case's `expected` names. The
// engine's own reader of the file is tests/testing/gmm_golden_cases.h.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/tilingctl/conform.h"
#include "client/tilingctl/conform_json.h"

namespace npu::client {

namespace pb = ::npu::tiling::v1;
using conform_internal::BadField;
using conform_internal::ErrorText;
using conform_internal::ExpectsRefusal;
using conform_internal::GetPlatformFigure;
using conform_internal::Json;
using conform_internal::JudgeRefusal;
using conform_internal::ParseDtype;

namespace {

using ListSetter = pb::GroupedTensorList* (pb::GroupedInputs::*)();
struct GroupedList {
  const char* name;  // the IR name, the file's key
  ListSetter list;
};
constexpr GroupedList kLists[] = {
    {"x", &pb::GroupedInputs::mutable_x},
    {"weight", &pb::GroupedInputs::mutable_weight},
    {"bias", &pb::GroupedInputs::mutable_bias},
    {"scale", &pb::GroupedInputs::mutable_scale},
    {"offset", &pb::GroupedInputs::mutable_offset},
    {"antiquant_scale", &pb::GroupedInputs::mutable_antiquant_scale},
    {"antiquant_offset", &pb::GroupedInputs::mutable_antiquant_offset},
    {"group_list", &pb::GroupedInputs::mutable_group_list},
    {"per_token_scale", &pb::GroupedInputs::mutable_per_token_scale},
    {"y", &pb::GroupedInputs::mutable_y},
};

absl::StatusOr<std::vector<int64_t>> DimsOf(const Json& value, const std::string& path) {
  if (!value.is_array()) return BadField(path, "not a list of dims");
  std::vector<int64_t> dims;
  for (const Json& d : value) {
    if (!d.is_number_integer()) return BadField(path, absl::StrCat("dim ", d.dump()));
    dims.push_back(d.get<int64_t>());
  }
  return dims;
}

// One tensor list: its instances with their shapes, then (for a present
// one) its dtype and format. An absent list's dtype means nothing (the file
// may say DT_UNDEFINED) and is not read.
absl::Status SetList(const Json& tensors, const GroupedList& spec, pb::GroupedInputs* g) {
  const std::string path = absl::StrCat("inputs.tensors.", spec.name);
  auto it = tensors.find(spec.name);
  if (it == tensors.end() || !it->is_object()) return BadField(path, "missing or not an object");
  auto instances = it->find("instances");
  if (instances == it->end() || !instances->is_array()) {
    return BadField(path + ".instances", "missing or not a list");
  }
  if (instances->empty()) return absl::OkStatus();
  pb::GroupedTensorList* list = (g->*spec.list)();
  for (size_t i = 0; i < instances->size(); ++i) {
    const std::string at = absl::StrCat(path, ".instances[", i, "]");
    const Json& instance = (*instances)[i];
    if (!instance.is_object()) return BadField(at, "not an object");
    absl::StatusOr<std::vector<int64_t>> origin =
        DimsOf(instance.value("origin", Json()), at + ".origin");
    if (!origin.ok()) return origin.status();
    absl::StatusOr<std::vector<int64_t>> storage =
        DimsOf(instance.value("storage", Json()), at + ".storage");
    if (!storage.ok()) return storage.status();
    pb::GroupedShape* shape = list->add_instances();
    shape->mutable_origin()->Add(origin->begin(), origin->end());
    if (*storage != *origin) shape->mutable_storage()->Add(storage->begin(), storage->end());
  }
  auto dtype = it->find("dtype");
  if (dtype == it->end() || !dtype->is_object()) return BadField(path + ".dtype", "missing");
  absl::StatusOr<pb::DataType> parsed = ParseDtype(dtype->value("ge", Json()), path + ".dtype.ge");
  if (!parsed.ok()) return parsed.status();
  list->set_dtype(*parsed);
  const std::string format = it->value("format", std::string("ND"));
  if (format != "ND" && format != "FRACTAL_NZ") {
    return BadField(path + ".format", absl::StrCat("unknown format ", format));
  }
  list->set_format(format == "ND" ? pb::FORMAT_ND : pb::FORMAT_FRACTAL_NZ);
  return absl::OkStatus();
}

absl::Status SetAttrs(const Json& attrs, pb::GroupedInputs* g) {
  if (!attrs.is_object()) return BadField("inputs.attrs", "missing or not an object");
  struct Int {
    const char* key;
    void (pb::GroupedInputs::*set)(int64_t);
  };
  for (const Int& attr : {Int{"split_item", &pb::GroupedInputs::set_split_item},
                          Int{"dtype", &pb::GroupedInputs::set_dtype},
                          Int{"group_type", &pb::GroupedInputs::set_group_type},
                          Int{"group_list_type", &pb::GroupedInputs::set_group_list_type},
                          Int{"act_type", &pb::GroupedInputs::set_act_type}}) {
    absl::StatusOr<int64_t> value =
        conform_internal::GetInt(attrs, attr.key, absl::StrCat("inputs.attrs.", attr.key));
    if (!value.ok()) return value.status();
    (g->*attr.set)(*value);
  }
  for (const auto& [key, set] :
       {std::pair{"transpose_weight", &pb::GroupedInputs::set_transpose_weight},
        std::pair{"transpose_x", &pb::GroupedInputs::set_transpose_x}}) {
    absl::StatusOr<bool> value =
        conform_internal::GetBool(attrs, key, absl::StrCat("inputs.attrs.", key));
    if (!value.ok()) return value.status();
    (g->*set)(*value);
  }
  absl::StatusOr<std::vector<int64_t>> tuning =
      DimsOf(attrs.value("tuning_config", Json::array()), "inputs.attrs.tuning_config");
  if (!tuning.ok()) return tuning.status();
  g->mutable_tuning_config()->Add(tuning->begin(), tuning->end());
  return absl::OkStatus();
}

// The chip the case's path reads: the compile info the test fills (cores
// and buffers), but for the quant path, which reads its core count and
// buffers from the context's platform information (the README's harness
// facts) and its vector core count from the compile info.
absl::Status SetPlatform(const Json& inputs, const std::string& path, pb::TilingRequest* request) {
  auto ci = inputs.find("compile_info");
  if (ci == inputs.end() || !ci->is_object()) {
    return BadField("inputs.compile_info", "missing or not an object");
  }
  const bool quant = path == "quant";
  auto pf = inputs.find("platform");
  if (quant && (pf == inputs.end() || !pf->is_object())) {
    return BadField("inputs.platform", "missing or not an object");
  }
  pb::PlatformOverrides* o = request->mutable_platform_overrides();
  struct Size {
    const char* key;
    void (pb::PlatformOverrides::*set)(uint64_t);
  };
  for (const Size& size : {Size{"l1_size", &pb::PlatformOverrides::set_l1_bytes},
                           Size{"l0a_size", &pb::PlatformOverrides::set_l0a_bytes},
                           Size{"l0b_size", &pb::PlatformOverrides::set_l0b_bytes},
                           Size{"l0c_size", &pb::PlatformOverrides::set_l0c_bytes},
                           Size{"ub_size", &pb::PlatformOverrides::set_ub_bytes},
                           Size{"l2_size", &pb::PlatformOverrides::set_l2_bytes}}) {
    const Json& source = quant ? *pf : *ci;
    const std::string at =
        absl::StrCat(quant ? "inputs.platform." : "inputs.compile_info.", size.key);
    absl::StatusOr<conform_internal::PlatformFigure> figure =
        GetPlatformFigure(source.value(size.key, Json()), at);
    if (!figure.ok()) return figure.status();
    (o->*(size.set))(figure->value);
  }
  absl::StatusOr<conform_internal::PlatformFigure> aic =
      quant ? GetPlatformFigure(pf->value("core_num", Json()), "inputs.platform.core_num")
            : GetPlatformFigure(ci->value("aic_num", Json()), "inputs.compile_info.aic_num");
  if (!aic.ok()) return aic.status();
  absl::StatusOr<conform_internal::PlatformFigure> aiv =
      GetPlatformFigure(ci->value("aiv_num", Json()), "inputs.compile_info.aiv_num");
  if (!aiv.ok()) return aiv.status();
  o->set_aic_num(aic->value32);
  o->set_aiv_num(aiv->value32);
  return absl::OkStatus();
}

// A named value of the answer: a field of its struct read in its width.
std::optional<uint64_t> FieldBits(const pb::TilingResponse& response, const std::string& name,
                                  uint32_t* bits) {
  for (const pb::TilingField& field : response.fields()) {
    if (field.name() != name) continue;
    *bits = field.bits() == 0 ? 32 : field.bits();
    return field.value();
  }
  return std::nullopt;
}

// CANN's member value (sign-extended from its width when `want` is
// negative, as the file writes signed members).
std::optional<int64_t> FieldValue(const pb::TilingResponse& response, const std::string& name) {
  uint32_t bits = 32;
  std::optional<uint64_t> raw = FieldBits(response, name, &bits);
  if (!raw.has_value()) return std::nullopt;
  return static_cast<int64_t>(*raw);
}

bool FieldEquals(const pb::TilingResponse& response, const std::string& name, int64_t want) {
  uint32_t bits = 32;
  std::optional<uint64_t> raw = FieldBits(response, name, &bits);
  if (!raw.has_value()) return false;
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return (*raw & mask) == (static_cast<uint64_t>(want) & mask);
}

// The names of the fields in word `index` of the answer's struct (packed
// members share a word; a 64-bit member spans two), laid out as the words
// are.
std::string WordFields(const pb::TilingResponse& response, size_t index) {
  std::vector<std::string> names;
  size_t word = 0;
  uint32_t bits_in_word = 0;
  for (const pb::TilingField& field : response.fields()) {
    const uint32_t bits = field.bits() == 0 ? 32 : field.bits();
    if (bits < 32) {
      if (word == index) names.push_back(field.name());
      bits_in_word += bits;
      if (bits_in_word == 32) {
        ++word;
        bits_in_word = 0;
      }
      continue;
    }
    if (bits_in_word != 0) {
      ++word;
      bits_in_word = 0;
    }
    const size_t span = bits == 64 ? 2 : 1;
    if (index >= word && index < word + span) names.push_back(field.name());
    word += span;
  }
  return names.empty() ? std::string("no field") : absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<pb::TilingRequest> RequestFromGmmCase(const Json& c) {
  auto inputs = c.find("inputs");
  if (inputs == c.end() || !inputs->is_object()) {
    return BadField("inputs", "missing or not an object");
  }
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_op(pb::OPERATOR_GROUPED_MATMUL);
  pb::GroupedInputs* g = p->mutable_grouped();
  auto tensors = inputs->find("tensors");
  if (tensors == inputs->end() || !tensors->is_object()) {
    return BadField("inputs.tensors", "missing or not an object");
  }
  for (const GroupedList& list : kLists) {
    if (absl::Status s = SetList(*tensors, list, g); !s.ok()) return s;
  }
  if (absl::Status s = SetAttrs(inputs->value("attrs", Json()), g); !s.ok()) return s;
  const std::string path = c.value("path", std::string());
  if (absl::Status s = SetPlatform(*inputs, path, &request); !s.ok()) return s;
  return request;
}

std::vector<std::string> GmmMismatches(const Json& e,
                                       const absl::StatusOr<pb::TilingResponse>& response,
                                       const absl::StatusOr<pb::TilingResponse>* companion,
                                       std::string* refusal) {
  std::vector<std::string> diffs;
  if (ExpectsRefusal(e)) {
    if (auto diff = JudgeRefusal(response, refusal)) diffs.push_back(*diff);
    return diffs;
  }
  if (!response.ok()) {
    diffs.push_back(
        absl::StrCat("status expected GRAPH_SUCCESS got ", ErrorText(response.status())));
    return diffs;
  }
  const pb::TilingResponse& r = *response;
  if (e.contains("tiling_key") && e["tiling_key"].get<uint64_t>() != r.tiling_key()) {
    diffs.push_back(absl::StrCat("tiling_key expected ", e["tiling_key"].get<uint64_t>(), " got ",
                                 r.tiling_key()));
  }
  if (e.contains("tiling_key_not") && e["tiling_key_not"].get<uint64_t>() == r.tiling_key()) {
    diffs.push_back(absl::StrCat("tiling_key must not be ", r.tiling_key()));
  }
  if (e.contains("num_blocks") && e["num_blocks"].get<uint64_t>() != r.block_dim()) {
    diffs.push_back(absl::StrCat("num_blocks expected ", e["num_blocks"].get<uint64_t>(), " got ",
                                 r.block_dim()));
  }
  if (e.contains("tiling_struct")) {
    const std::string want = e["tiling_struct"].get<std::string>();
    const std::string got = absl::StrCat("GroupedMatmulTilingData::", r.tiling_struct());
    if (want != got) diffs.push_back(absl::StrCat("tiling_struct expected ", want, " got ", got));
  }
  const uint64_t bytes = 4 * static_cast<uint64_t>(r.raw_words_size());
  if (e.contains("data_size_bytes") && e["data_size_bytes"].get<uint64_t>() != bytes) {
    diffs.push_back(absl::StrCat("data_size_bytes expected ", e["data_size_bytes"].get<uint64_t>(),
                                 " got ", bytes));
  }
  if (e.contains("tiling_data_words")) {
    const std::vector<int64_t> want = e["tiling_data_words"].get<std::vector<int64_t>>();
    if (want.size() != static_cast<size_t>(r.raw_words_size())) {
      diffs.push_back(absl::StrCat("words expected ", want.size(), " got ", r.raw_words_size()));
    }
    for (const Json& index : e.value("compared_word_indices", Json::array())) {
      const size_t i = index.get<size_t>();
      if (i >= want.size() || i >= static_cast<size_t>(r.raw_words_size())) continue;
      if (static_cast<uint32_t>(want[i]) != r.raw_words(static_cast<int>(i))) {
        diffs.push_back(absl::StrCat("word ", i, " (", WordFields(r, i), ") expected ",
                                     static_cast<uint32_t>(want[i]), " got ",
                                     r.raw_words(static_cast<int>(i))));
      }
    }
  }
  for (const char* group : {"fields", "checked_fields"}) {
    if (!e.contains(group)) continue;
    for (const auto& [name, want] : e[group].items()) {
      if (FieldEquals(r, name, want.get<int64_t>())) continue;
      const std::optional<int64_t> got = FieldValue(r, name);
      diffs.push_back(absl::StrCat("field ", name, " expected ", want.get<int64_t>(), " got ",
                                   got ? absl::StrCat(*got) : "no such field"));
    }
  }
  const auto check_bounds = [&](const Json& bounds) {
    for (const auto& [name, range] : bounds.items()) {
      const std::optional<int64_t> got = FieldValue(r, name);
      const int64_t low = range.at(0).get<int64_t>(), high = range.at(1).get<int64_t>();
      if (!got || *got < low || *got > high) {
        diffs.push_back(absl::StrCat("field ", name, " expected in [", low, ", ", high, "] got ",
                                     got ? absl::StrCat(*got) : "no such field"));
      }
    }
  };
  if (e.contains("field_bounds")) check_bounds(e["field_bounds"]);
  for (const Json& rule : e.value("conditional_field_bounds", Json::array())) {
    const std::optional<int64_t> gate = FieldValue(r, rule.value("if_positive", std::string()));
    if (gate && *gate > 0) check_bounds(rule.value("bounds", Json::object()));
  }
  if (e.contains("tiling_key_differs_from")) {
    const std::string other = e["tiling_key_differs_from"].get<std::string>();
    if (companion == nullptr || !companion->ok()) {
      diffs.push_back(absl::StrCat("tiling_key_differs_from ", other, ": that case has no plan"));
    } else if ((*companion)->tiling_key() == r.tiling_key()) {
      diffs.push_back(
          absl::StrCat("tiling_key must differ from ", other, "'s, both are ", r.tiling_key()));
    }
  }
  return diffs;
}

}  // namespace npu::client
