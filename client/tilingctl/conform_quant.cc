// Schema "cann950-quant-ut-decoded/1" (QuantBatchMatmulV3's golden cases
// from CANN's unit test, tests/data/cann950_quant/README.md): a case's
// inputs as a request, and CANN's status, block dim, key and compared words
// against the answer, as far as the case's `checks` go.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/tilingctl/conform.h"
#include "client/tilingctl/conform_json.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;
using conform_internal::BadField;
using conform_internal::CompareInt;
using conform_internal::ErrorText;
using conform_internal::ExpectsRefusal;
using conform_internal::JudgeRefusal;
using conform_internal::GetBool;
using conform_internal::GetInt;
using conform_internal::GetPlatformFigure;
using conform_internal::Json;
using conform_internal::ParseDtype;

using Dims = std::vector<int64_t>;

std::string DimsText(const Dims& dims) { return absl::StrCat("[", absl::StrJoin(dims, ", "), "]"); }

// The integer list at `value` (nullopt for null).
absl::StatusOr<std::optional<Dims>> DimsOf(const Json& value, absl::string_view path) {
  if (value.is_null()) return std::optional<Dims>();
  if (!value.is_array()) return BadField(path, absl::StrCat("not a list: ", value.dump()));
  Dims dims;
  for (const Json& dim : value) {
    if (!dim.is_number_integer())
      return BadField(path, absl::StrCat("not an integer: ", dim.dump()));
    dims.push_back(dim.get<int64_t>());
  }
  return std::optional<Dims>(std::move(dims));
}

// The dtype object {"ge": "DT_INT8", "enum": 2} under `key`.
absl::StatusOr<pb::DataType> DtypeOf(const Json& inputs, const char* key) {
  const std::string path = absl::StrCat("inputs.", key);
  auto it = inputs.find(key);
  if (it == inputs.end() || !it->is_object() || !it->contains("ge")) {
    return BadField(path, "missing or not a {\"ge\": ...} object");
  }
  return ParseDtype((*it)["ge"], absl::StrCat(path, ".ge"));
}

// An operand's origin shape split into its batch dims and its matrix,
// checked against the matrix the problem states.
absl::Status SplitOperand(const Json& shapes, const char* name, int64_t rows, int64_t cols,
                          Dims* batch, std::string* inexpressible) {
  const std::string path = absl::StrCat("inputs.shapes.", name, ".origin");
  auto it = shapes.find(name);
  if (it == shapes.end() || !it->is_object()) return BadField(path, "missing");
  absl::StatusOr<std::optional<Dims>> origin = DimsOf((*it)["origin"], path);
  if (!origin.ok()) return origin.status();
  if (!origin->has_value() || (*origin)->size() < 2) return BadField(path, "rank below 2");
  const Dims& dims = **origin;
  if (dims[dims.size() - 2] != rows || dims.back() != cols) {
    *inexpressible = absl::StrCat(name, "'s shape ", DimsText(dims), " does not end in [", rows,
                                  ", ", cols, "] (m, n and k after the transposes)");
    return absl::OkStatus();
  }
  batch->assign(dims.begin(), dims.end() - 2);
  return absl::OkStatus();
}

// y's shape is a plain list.
absl::Status SplitOutput(const Json& shapes, int64_t m, int64_t n, Dims* batch,
                         std::string* inexpressible) {
  absl::StatusOr<std::optional<Dims>> y = DimsOf(shapes["y"], "inputs.shapes.y");
  if (!y.ok()) return y.status();
  if (!y->has_value() || (*y)->size() < 2) return BadField("inputs.shapes.y", "rank below 2");
  const Dims& dims = **y;
  if (dims[dims.size() - 2] != m || dims.back() != n) {
    *inexpressible =
        absl::StrCat("y's shape ", DimsText(dims), " does not end in [", m, ", ", n, "]");
    return absl::OkStatus();
  }
  batch->assign(dims.begin(), dims.end() - 2);
  return absl::OkStatus();
}

// An optional input: present with its dtype and shape, or left out.
absl::Status SetQuantTensor(const Json& inputs, const char* flag, const char* dtype_key,
                            const char* shape_key, pb::QuantTensor* out) {
  bool present = true;
  if (flag != nullptr) {
    absl::StatusOr<bool> value = GetBool(inputs, flag, absl::StrCat("inputs.", flag));
    if (!value.ok()) return value.status();
    present = *value;
  }
  if (!present) return absl::OkStatus();
  absl::StatusOr<pb::DataType> dtype = DtypeOf(inputs, dtype_key);
  if (!dtype.ok()) return dtype.status();
  const std::string path = absl::StrCat("inputs.shapes.", shape_key);
  absl::StatusOr<std::optional<Dims>> shape = DimsOf(inputs["shapes"][shape_key], path);
  if (!shape.ok()) return shape.status();
  if (!shape->has_value()) return BadField(path, "missing for a present input");
  out->set_dtype(*dtype);
  for (int64_t dim : **shape) out->add_shape(dim);
  return absl::OkStatus();
}

// The platform of CANN's harness: its core counts and buffer sizes.
absl::Status ApplyQuantPlatform(const Json& platform, pb::TilingRequest* request) {
  if (!platform.is_object()) return BadField("inputs.platform", "not an object");
  pb::PlatformOverrides* o = request->mutable_platform_overrides();
  struct Size {
    const char* key;
    void (pb::PlatformOverrides::*set)(uint64_t);
  };
  static const Size kSizes[] = {{"l1", &pb::PlatformOverrides::set_l1_bytes},
                                {"l0a", &pb::PlatformOverrides::set_l0a_bytes},
                                {"l0b", &pb::PlatformOverrides::set_l0b_bytes},
                                {"l0c", &pb::PlatformOverrides::set_l0c_bytes},
                                {"ub", &pb::PlatformOverrides::set_ub_bytes},
                                {"l2", &pb::PlatformOverrides::set_l2_bytes},
                                {"bt", &pb::PlatformOverrides::set_bt_bytes}};
  for (const Size& size : kSizes) {
    const std::string path = absl::StrCat("inputs.platform.", size.key);
    absl::StatusOr<conform_internal::PlatformFigure> figure =
        GetPlatformFigure(platform.value(size.key, Json()), path);
    if (!figure.ok()) return figure.status();
    (o->*(size.set))(figure->value);
  }
  for (const char* key : {"aic_num", "aiv_num"}) {
    const std::string path = absl::StrCat("inputs.platform.", key);
    absl::StatusOr<conform_internal::PlatformFigure> figure =
        GetPlatformFigure(platform.value(key, Json()), path);
    if (!figure.ok()) return figure.status();
    if (std::string(key) == "aic_num") {
      o->set_aic_num(figure->value32);
    } else {
      o->set_aiv_num(figure->value32);
    }
  }
  return absl::OkStatus();
}

// Compares one expected int32 word with the engine's.
std::optional<std::string> CompareWord(size_t index, const Json& expected,
                                       const pb::TilingResponse& response, uint32_t mask) {
  const std::string field = absl::StrCat("word ", index);
  std::optional<uint64_t> got;
  if (index < static_cast<size_t>(response.raw_words_size())) got = response.raw_words(index);
  if (!expected.is_number_integer()) return CompareInt(field, expected, got);
  const uint32_t want = static_cast<uint32_t>(expected.get<int64_t>());
  if (got.has_value() && (want & mask) == (static_cast<uint32_t>(*got) & mask)) {
    return std::nullopt;
  }
  return CompareInt(field, expected, got);
}

// The bits of a partly compared word: all but the range "bits H:L ..."
// names (the harness resets them).
uint32_t ComparedBits(const std::string& why) {
  unsigned high = 0, low = 0;
  if (std::sscanf(why.c_str(), "bits %u:%u", &high, &low) != 2 || high > 31 || low > high) {
    return 0xFFFFFFFFu;
  }
  const uint64_t width = high - low + 1;
  return ~static_cast<uint32_t>(((uint64_t{1} << width) - 1) << low);
}

}  // namespace

absl::StatusOr<pb::TilingRequest> RequestFromQuantCase(const Json& c, std::string* inexpressible) {
  if (!c.is_object()) return BadField("case", "not an object");
  auto in = c.find("inputs");
  if (in == c.end() || !in->is_object()) return BadField("inputs", "missing or not an object");
  const Json& inputs = *in;
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_op(pb::OPERATOR_QUANT_BATCH_MATMUL_V3);
  for (const char* key : {"m", "n", "k"}) {
    absl::StatusOr<int64_t> value = GetInt(inputs, key, absl::StrCat("inputs.", key));
    if (!value.ok()) return value.status();
    if (key[0] == 'm') p->set_m(*value);
    if (key[0] == 'n') p->set_n(*value);
    if (key[0] == 'k') p->set_k(*value);
  }
  for (const auto& [key, set] : {std::pair{"trans_a", &pb::MatmulProblem::set_trans_a},
                                 std::pair{"trans_b", &pb::MatmulProblem::set_trans_b},
                                 std::pair{"has_bias", &pb::MatmulProblem::set_has_bias}}) {
    absl::StatusOr<bool> value = GetBool(inputs, key, absl::StrCat("inputs.", key));
    if (!value.ok()) return value.status();
    (p->*set)(*value);
  }
  for (const auto& [key, set] : {std::pair{"dtype_x1", &pb::MatmulProblem::set_dtype_a},
                                 std::pair{"dtype_x2", &pb::MatmulProblem::set_dtype_b},
                                 std::pair{"dtype_y", &pb::MatmulProblem::set_dtype_c}}) {
    absl::StatusOr<pb::DataType> dtype = DtypeOf(inputs, key);
    if (!dtype.ok()) return dtype.status();
    (p->*set)(*dtype);
  }
  if (p->has_bias()) {
    absl::StatusOr<pb::DataType> dtype = DtypeOf(inputs, "dtype_bias");
    if (!dtype.ok()) return dtype.status();
    p->set_dtype_bias(*dtype);
  }
  for (const auto& [key, set] : {std::pair{"format_x1", &pb::MatmulProblem::set_format_a},
                                 std::pair{"format_x2", &pb::MatmulProblem::set_format_b}}) {
    const std::string format = inputs.value(key, std::string("ND"));
    if (format != "ND" && format != "FRACTAL_NZ") {
      return BadField(absl::StrCat("inputs.", key), absl::StrCat("unknown format ", format));
    }
    (p->*set)(format == "ND" ? pb::FORMAT_ND : pb::FORMAT_FRACTAL_NZ);
  }

  auto shapes = inputs.find("shapes");
  if (shapes == inputs.end() || !shapes->is_object()) {
    return BadField("inputs.shapes", "missing or not an object");
  }
  std::string reason;
  const int64_t m = p->m(), n = p->n(), k = p->k();
  Dims batch_a, batch_b, batch_c;
  absl::Status status =
      SplitOperand(*shapes, "x1", p->trans_a() ? k : m, p->trans_a() ? m : k, &batch_a, &reason);
  if (status.ok() && reason.empty()) {
    status =
        SplitOperand(*shapes, "x2", p->trans_b() ? n : k, p->trans_b() ? k : n, &batch_b, &reason);
  }
  if (status.ok() && reason.empty()) status = SplitOutput(*shapes, m, n, &batch_c, &reason);
  if (!status.ok()) return status;
  for (int64_t d : batch_a) p->add_batch_a(d);
  for (int64_t d : batch_b) p->add_batch_b(d);
  for (int64_t d : batch_c) p->add_batch_c(d);
  if (reason.empty() && p->format_b() == pb::FORMAT_FRACTAL_NZ) {
    absl::StatusOr<std::optional<Dims>> storage =
        DimsOf((*shapes)["x2"]["storage"], "inputs.shapes.x2.storage");
    if (!storage.ok()) return storage.status();
    if (storage->has_value()) {
      for (int64_t d : **storage) p->add_storage_shape_b(d);
    }
  }

  pb::QuantInputs* q = p->mutable_quant();
  status = SetQuantTensor(inputs, nullptr, "dtype_scale", "scale", q->mutable_scale());
  if (status.ok()) {
    status = SetQuantTensor(inputs, "has_pertoken_scale", "dtype_pertoken_scale", "pertoken_scale",
                            q->mutable_pertoken_scale());
  }
  if (status.ok()) {
    status = SetQuantTensor(inputs, "has_offset", "dtype_offset", "offset", q->mutable_offset());
  }
  if (!status.ok()) return status;
  if (p->has_bias()) {
    absl::StatusOr<std::optional<Dims>> bias = DimsOf((*shapes)["bias"], "inputs.shapes.bias");
    if (!bias.ok()) return bias.status();
    if (bias->has_value()) {
      for (int64_t d : **bias) q->add_bias_shape(d);
    }
  }
  auto attrs = inputs.find("attrs");
  if (attrs != inputs.end() && attrs->is_object()) {
    absl::StatusOr<int64_t> group = GetInt(*attrs, "group_size", "inputs.attrs.group_size", 0);
    if (!group.ok()) return group.status();
    q->set_group_size_k(*group & 0xFFFF);
    q->set_group_size_n((*group >> 16) & 0xFFFF);
    q->set_group_size_m((*group >> 32) & 0xFFFF);
  }
  absl::StatusOr<int64_t> level =
      GetInt(inputs, "deterministic_level", "inputs.deterministic_level", 0);
  if (!level.ok()) return level.status();
  p->set_deterministic_level(static_cast<int32_t>(*level));
  if (auto platform = inputs.find("platform"); platform != inputs.end()) {
    status = ApplyQuantPlatform(*platform, &request);
    if (!status.ok()) return status;
  }
  if (!reason.empty()) {
    if (inexpressible != nullptr) *inexpressible = reason;
    return absl::FailedPreconditionError(absl::StrCat("not expressible: ", reason));
  }
  return request;
}

std::optional<std::string> FirstQuantMismatch(const Json& expected,
                                              const absl::StatusOr<pb::TilingResponse>& response,
                                              std::string* refusal) {
  if (ExpectsRefusal(expected)) return JudgeRefusal(response, refusal);
  if (!response.ok()) {
    return absl::StrCat("status expected GRAPH_SUCCESS got ", ErrorText(response.status()));
  }
  const std::string checks = expected.value("checks", std::string("status_only"));
  if (checks == "status_only") return std::nullopt;
  if (auto diff =
          CompareInt("num_blocks", expected.value("num_blocks", Json()), response->block_dim())) {
    return diff;
  }
  if (auto diff =
          CompareInt("tiling_key", expected.value("tiling_key", Json()), response->tiling_key())) {
    return diff;
  }
  if (checks == "status_key_numblocks") return std::nullopt;
  if (checks != "status_key_numblocks_words") {
    return absl::StrCat("field checks: unknown value \"", checks, "\"");
  }
  auto words = expected.find("tiling_data_words");
  auto indices = expected.find("compared_word_indices");
  if (words == expected.end() || !words->is_array() || indices == expected.end() ||
      !indices->is_array()) {
    return "fields tiling_data_words and compared_word_indices: expected two lists";
  }
  if (static_cast<size_t>(response->raw_words_size()) != words->size()) {
    return absl::StrCat("field words: expected ", words->size(), " words got ",
                        response->raw_words_size(), " (", response->tiling_struct(), ")");
  }
  for (const Json& index : *indices) {
    if (!index.is_number_unsigned() || index.get<uint64_t>() >= words->size()) {
      return absl::StrCat("field compared_word_indices: ", index.dump(), " is not a word");
    }
    const size_t i = index.get<size_t>();
    if (auto diff = CompareWord(i, (*words)[i], *response, 0xFFFFFFFFu)) return diff;
  }
  // A word CANN's test compares in part: the byte the harness resets is left out.
  if (auto partial = expected.find("partially_compared_words");
      partial != expected.end() && partial->is_object()) {
    for (const auto& [key, why] : partial->items()) {
      const size_t i = std::stoul(key);
      if (i >= words->size()) continue;
      const uint32_t mask = why.is_string() ? ComparedBits(why.get<std::string>()) : 0xFFFFFFFFu;
      if (auto diff = CompareWord(i, (*words)[i], *response, mask)) return diff;
    }
  }
  return std::nullopt;
}

}  // namespace npu::client
