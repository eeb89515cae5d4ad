// Schema "cann950-ut-decoded/1" (BatchMatMulV3's and FusedMatMul's golden
// cases from CANN's unit tests, tests/data/cann950_ops/README.md): a case
// object as a request, and CANN's status, block dim, key and compared words
// against the answer.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/tilingctl/conform.h"
#include "client/tilingctl/conform_json.h"
#include "client/tilingctl/format.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;
using conform_internal::BadField;
using conform_internal::CompareInt;
using conform_internal::CompareName;
using conform_internal::ErrorText;
using conform_internal::ExpectsRefusal;
using conform_internal::GetBool;
using conform_internal::GetInt;
using conform_internal::Json;
using conform_internal::JudgeRefusal;
using conform_internal::ParseDtype;
using conform_internal::ParseFormat;
using conform_internal::Quoted;
using conform_internal::SetBiasDtype;
using conform_internal::SetDtypes;
using conform_internal::SetFormats;
using conform_internal::SetShape;

using Dims = std::vector<int64_t>;

std::string DimsText(const Dims& dims) { return absl::StrCat("[", absl::StrJoin(dims, ", "), "]"); }

Dims Concat(Dims a, const Dims& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A list of integers, or nullopt when the key is absent or null.
absl::StatusOr<std::optional<Dims>> GetDims(const Json& object, const char* key,
                                            absl::string_view path) {
  if (!object.is_object()) return std::optional<Dims>();
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<Dims>();
  if (!it->is_array()) return BadField(path, absl::StrCat("not a list: ", it->dump()));
  Dims dims;
  for (const Json& dim : *it) {
    if (!dim.is_number_integer()) {
      return BadField(path, absl::StrCat("not an integer: ", dim.dump()));
    }
    dims.push_back(dim.get<int64_t>());
  }
  return std::optional<Dims>(std::move(dims));
}

// The object under `key`, or an empty object when absent or null.
absl::StatusOr<Json> GetObject(const Json& object, const char* key, absl::string_view path) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Json::object();
  if (!it->is_object()) return BadField(path, absl::StrCat("not an object: ", it->dump()));
  return *it;
}

absl::StatusOr<std::string> GetString(const Json& object, const char* key, absl::string_view path,
                                      const char* fallback) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string(fallback);
  if (!it->is_string()) return BadField(path, absl::StrCat("not a string: ", it->dump()));
  return it->get<std::string>();
}

absl::StatusOr<pb::Operator> ParseOperator(const Json& c) {
  absl::StatusOr<std::string> name = GetString(c, "op_type", "op_type", "");
  if (!name.ok()) return name.status();
  if (*name == "MatMulV3") return pb::OPERATOR_MATMUL_V3;
  if (*name == "BatchMatMulV3") return pb::OPERATOR_BATCH_MATMUL_V3;
  if (*name == "FusedMatMul") return pb::OPERATOR_FUSED_MATMUL;
  if (*name == "TransposeBatchMatMul") return pb::OPERATOR_TRANSPOSE_BATCH_MATMUL;
  if (*name == "TransposeQuantBatchMatMul") return pb::OPERATOR_TRANSPOSE_QUANT_BATCH_MATMUL;
  return BadField(
      "op_type", absl::StrCat("expected MatMulV3, BatchMatMulV3, FusedMatMul, TransposeBatchMatMul "
                              "or TransposeQuantBatchMatMul, got \"",
                              *name, "\""));
}

// The "platform" object: core counts and buffer sizes as overrides. The
// compile_info_* copies of the test's JSON are ignored, as CANN's harness
// ignores them; a platform other than DAV_3510 cannot be asked for.
absl::Status ApplyDecodedPlatform(const Json& platform, pb::TilingRequest* request,
                                  std::string* inexpressible,
                                  std::vector<std::string>* ignored_keys) {
  if (!platform.is_object()) return BadField("platform", "not an object");
  pb::PlatformOverrides* o = request->mutable_platform_overrides();
  for (const auto& [key, value] : platform.items()) {
    const std::string path = absl::StrCat("platform.", key);
    if (key == "npu_arch_effective") {
      if (!value.is_string()) return BadField(path, "not a string");
      if (value.get<std::string>() != "DAV_3510") {
        *inexpressible = absl::StrCat("platform ", value.get<std::string>(),
                                      ": the engine answers for DAV_3510 only");
      }
      continue;
    }
    if (key == "intrinsic_mmad_s8s4") {
      // CANN's harness turns such a platform into DAV_RESV.
      if (value.is_boolean() && value.get<bool>()) {
        *inexpressible = "platform with the s8s4 mmad intrinsic (DAV_RESV)";
      }
      continue;
    }
    if (key == "soc_version" || key == "intrinsic_fix_pipe_l0c2out" ||
        key == "intrinsic_data_move_l12bt" || key == "compile_info_block_dim_json" ||
        key == "compile_info_attrs_json") {
      continue;
    }
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
    const bool core = key == "core_num" || key == "vector_core_num";
    const std::string& name = key;  // a structured binding cannot be captured in C++17
    const Size* size = std::find_if(std::begin(kSizes), std::end(kSizes),
                                    [&name](const Size& s) { return name == s.key; });
    if (!core && size == std::end(kSizes)) {
      if (ignored_keys != nullptr) ignored_keys->push_back(path);
      continue;
    }
    absl::StatusOr<conform_internal::PlatformFigure> figure =
        conform_internal::GetPlatformFigure(value, path);
    if (!figure.ok()) return figure.status();
    const uint64_t v = figure->value;
    const uint32_t v32 = figure->value32;
    if (key == "core_num") {
      o->set_aic_num(v32);
    } else if (key == "vector_core_num") {
      o->set_aiv_num(v32);
    } else {
      (o->*(size->set))(v);
    }
  }
  return absl::OkStatus();
}

// Whether `strides` make the rank-3 view `view` of a rank-1 storage CANN's
// {1, 0, 2} transposed non-contiguous view: [batch, rows, cols] viewed,
// [rows, batch, cols] stored, so strides [cols, batch * cols, 1]
// (IsTransposeNonContiguous in
// matmul/mat_mul_v3/op_host/op_tiling/arch35/matmul_v3_tiling_helper.cpp).
bool IsBatchInterleavedView(const Dims& view, const Dims& storage, const Dims& strides) {
  return view.size() == 3 && storage.size() == 1 && strides.size() == 3 && strides[0] == view[2] &&
         strides[1] == view[0] * view[2] && strides[2] == 1;
}

// The shapes of x1, x2, y, the bias and x3 as the test gives them, checked
// against m, n, k and the batch dims; sets the bias batch, x3, B's NZ storage
// and the views. What a problem cannot state sets `*inexpressible`.
absl::Status ApplyDecodedShapes(const Json& c, const Dims& batch_a, const Dims& batch_b,
                                const Dims& batch_c, pb::MatmulProblem* p,
                                std::string* inexpressible, std::string* note) {
  absl::StatusOr<Json> ori = GetObject(c, "ori_shapes", "ori_shapes");
  if (!ori.ok()) return ori.status();
  absl::StatusOr<Json> storage = GetObject(c, "storage_shapes", "storage_shapes");
  if (!storage.ok()) return storage.status();
  absl::StatusOr<Json> strides = GetObject(c, "strides", "strides");
  if (!strides.ok()) return strides.status();
  const int64_t m = p->m(), n = p->n(), k = p->k();

  struct Operand {
    const char* name;
    Dims expected;  // ori shape the problem implies
    void (pb::MatmulProblem::*set_view)(bool);
  };
  const Operand operands[] = {
      {"x1", Concat(batch_a, p->trans_a() ? Dims{k, m} : Dims{m, k}),
       &pb::MatmulProblem::set_a_batch_interleaved},
      {"x2", Concat(batch_b, p->trans_b() ? Dims{n, k} : Dims{k, n}),
       &pb::MatmulProblem::set_b_batch_interleaved},
      {"y", Concat(batch_c, Dims{m, n}), nullptr},
  };
  for (const Operand& operand : operands) {
    const std::string name = operand.name;
    absl::StatusOr<std::optional<Dims>> view =
        GetDims(*ori, operand.name, absl::StrCat("ori_shapes.", name));
    absl::StatusOr<std::optional<Dims>> stored =
        GetDims(*storage, operand.name, absl::StrCat("storage_shapes.", name));
    absl::StatusOr<std::optional<Dims>> stride =
        GetDims(*strides, operand.name, absl::StrCat("strides.", name));
    for (const auto* value : {&view, &stored, &stride}) {
      if (!value->ok()) return value->status();
    }
    // CANN tiles from x1 and x2 and reads only y's batch dims: a y whose
    // [m, n] disagrees with them is noted, not refused.
    if (operand.set_view == nullptr && view->has_value() && **view != operand.expected &&
        (*view)->size() == operand.expected.size() && (*view)->size() >= 2 &&
        std::equal((*view)->begin(), (*view)->end() - 2, operand.expected.begin())) {
      if (note != nullptr) {
        *note = absl::StrCat("y's shape ", DimsText(**view), " disagrees with x1 and x2 (",
                             DimsText(operand.expected), "); CANN tiles from x1 and x2");
      }
      continue;
    }
    if (view->has_value() && **view != operand.expected) {
      *inexpressible =
          absl::StrCat(name, "'s shape ", DimsText(**view), " is not ", DimsText(operand.expected),
                       " (the batch dims, m, n and k after the transposes)");
      return absl::OkStatus();
    }
    if (stride->has_value()) {
      if (operand.set_view == nullptr || !view->has_value() || !stored->has_value() ||
          !IsBatchInterleavedView(**view, **stored, **stride)) {
        *inexpressible = absl::StrCat(name, " is a view with strides ", DimsText(**stride),
                                      ", not the {1, 0, 2} batch-interleaved pattern");
        return absl::OkStatus();
      }
      (p->*(operand.set_view))(true);
      continue;
    }
    if (name == "x2" && p->format_b() == pb::FORMAT_FRACTAL_NZ) {
      if (stored->has_value()) {
        for (int64_t dim : **stored) p->add_storage_shape_b(dim);
      }
      continue;
    }
    if (view->has_value() && stored->has_value() && **stored != **view) {
      *inexpressible =
          absl::StrCat(name, "'s storage shape ", DimsText(**stored), " differs from its shape ",
                       DimsText(**view), " without being a view");
      return absl::OkStatus();
    }
  }

  // The bias: [n], or [..., 1, n]; dims before the last two are a bias batch.
  absl::StatusOr<std::optional<Dims>> bias = GetDims(*ori, "bias", "ori_shapes.bias");
  if (!bias.ok()) return bias.status();
  if (p->has_bias() && bias->has_value()) {
    const Dims& shape = **bias;
    if (shape.empty() || shape.back() != n || (shape.size() >= 2 && shape[shape.size() - 2] != 1)) {
      *inexpressible = absl::StrCat("the bias shape ", DimsText(shape), " is not [n] or [..., 1, ",
                                    n, "] (CANN refuses it: bias[-1] must be y[-1])");
      return absl::OkStatus();
    }
    for (size_t i = 0; i + 2 < shape.size(); ++i) p->add_batch_bias(shape[i]);
  }

  // x3 exists for add and mul only; the FusedMatMul harness wires it with
  // y's shape unless the case gives one.
  if (p->fused_op() == pb::FUSED_OP_ADD || p->fused_op() == pb::FUSED_OP_MUL) {
    absl::StatusOr<std::optional<Dims>> x3 = GetDims(*ori, "x3", "ori_shapes.x3");
    if (!x3.ok()) return x3.status();
    const Dims shape = x3->has_value() ? **x3 : Concat(batch_c, Dims{m, n});
    for (int64_t dim : shape) p->add_x3_shape(dim);
  }
  return absl::OkStatus();
}

// Every top-level key of a decoded case that is input or description; others
// are reported.
void ReportUnknownDecodedKeys(const Json& c, std::vector<std::string>* ignored_keys) {
  if (ignored_keys == nullptr) return;
  static const char* const kKnown[] = {
      // input
      "op_type", "fused_op_type", "m", "n", "k", "k_b", "dtype_a", "dtype_b", "dtype_c", "bias",
      "bias_dtype", "format_a", "format_b", "format_c", "trans_a", "trans_b", "offset_x",
      "op_impl_mode", "enable_hf32_attr", "inner_precise", "batch", "storage_shapes", "ori_shapes",
      "strides", "platform",
      // description: provenance, the test's notes and bookkeeping
      "name", "source", "case_name_in_test", "bias_dtype_note", "bias_dtype_field",
      "inputs_are_TensorV2_views", "shape_note", "test_harness", "expected"};
  for (const auto& [key, value] : c.items()) {
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      ignored_keys->push_back(key);
    }
  }
}

// The transposed batch matmuls' keys beside the common ones.
void ReportUnknownTransposeKeys(const Json& c, std::vector<std::string>* ignored_keys) {
  if (ignored_keys == nullptr) return;
  // clang-format off
  static const char* const kKnown[] = {
      "op_type", "m", "n", "k", "k_b", "dtype_a", "dtype_b", "dtype_c", "bias", "bias_dtype",
      "format_a", "format_b", "format_c", "format_scales", "trans_a", "trans_b", "perm_x1",
      "perm_x2", "perm_y", "batch_split_factor", "enable_hf32_attr", "x1_scale_dtype",
      "x2_scale_dtype", "quant_mode", "group_size", "dtype_attr", "batch", "storage_shapes",
      "ori_shapes", "platform", "name", "source", "test_harness", "expected"};
  // clang-format on
  for (const auto& [key, value] : c.items()) {
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      ignored_keys->push_back(key);
    }
  }
}

// The names of the answer's tiling-data fields in word `index` (the packed
// bytes of a word joined with '/'), or "" when the answer has no such word.
std::string FieldsOfWord(const pb::TilingResponse& response, size_t index) {
  std::string names;
  size_t word = 0;
  int bits = 0;
  for (const pb::TilingField& field : response.fields()) {
    if (field.bits() >= 32 && bits != 0) {
      ++word;
      bits = 0;
    }
    if (word == index) absl::StrAppend(&names, names.empty() ? "" : "/", field.name());
    bits += static_cast<int>(std::min<uint32_t>(field.bits(), 32));
    if (bits >= 32) {
      ++word;
      bits = 0;
    }
    if (word > index) break;
  }
  return names;
}

// Compares one expected word (the tests print words as int32, so a negative
// value is the word's two's complement) with the engine's, naming the word's
// field.
std::optional<std::string> CompareWord(size_t index, const Json& expected,
                                       const pb::TilingResponse& response) {
  const std::string names = FieldsOfWord(response, index);
  const std::string field =
      names.empty() ? absl::StrCat("word ", index) : absl::StrCat("word ", index, " (", names, ")");
  std::optional<uint64_t> got;
  if (index < static_cast<size_t>(response.raw_words_size())) got = response.raw_words(index);
  if (!expected.is_number_integer()) return CompareInt(field, expected, got);
  const int64_t value = expected.get<int64_t>();
  if (value < INT32_MIN || value > UINT32_MAX) return CompareInt(field, expected, got);
  if (got.has_value() && static_cast<uint32_t>(value) == *got) return std::nullopt;
  return CompareInt(field, expected, got);
}

}  // namespace

absl::StatusOr<pb::TilingRequest> RequestFromDecodedCase(const Json& c, std::string* inexpressible,
                                                         std::vector<std::string>* ignored_keys,
                                                         std::string* note) {
  if (!c.is_object()) return BadField("case", "not an object");
  std::string reason;
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  absl::StatusOr<pb::Operator> op = ParseOperator(c);
  if (!op.ok()) return op.status();
  if (*op == pb::OPERATOR_TRANSPOSE_BATCH_MATMUL ||
      *op == pb::OPERATOR_TRANSPOSE_QUANT_BATCH_MATMUL) {
    ReportUnknownTransposeKeys(c, ignored_keys);
    return conform_internal::RequestFromTransposeCase(c, *op, inexpressible, note);
  }
  if (*op != pb::OPERATOR_MATMUL_V3) p->set_op(*op);
  const bool fused = *op == pb::OPERATOR_FUSED_MATMUL;
  for (absl::Status (*step)(const Json&, pb::MatmulProblem*) : {SetShape, SetDtypes, SetFormats}) {
    absl::Status status = step(c, p);
    if (!status.ok()) return status;
  }
  struct BoolField {
    const char* key;
    void (pb::MatmulProblem::*set)(bool);
  };
  for (const BoolField& field : {BoolField{"trans_a", &pb::MatmulProblem::set_trans_a},
                                 BoolField{"trans_b", &pb::MatmulProblem::set_trans_b},
                                 BoolField{"bias", &pb::MatmulProblem::set_has_bias},
                                 BoolField{"enable_hf32_attr", &pb::MatmulProblem::set_hf32}}) {
    absl::StatusOr<bool> value = GetBool(c, field.key, field.key);
    if (!value.ok()) return value.status();
    (p->*field.set)(*value);
  }
  // MatMulV3 reads hf32 and fp32 group accumulation from op_impl_mode; the
  // other two operators from their enable_hf32 attribute.
  absl::StatusOr<int64_t> impl_mode = GetInt(c, "op_impl_mode", "op_impl_mode", 0);
  if (!impl_mode.ok()) return impl_mode.status();
  if (*op == pb::OPERATOR_MATMUL_V3) {
    p->set_hf32(*impl_mode == 0x40);
    p->set_force_grp_acc_fp32(*impl_mode == 0x4);
  }
  // offset_x is an attribute of MatMulV3 and BatchMatMulV3 only; 0x80 asks
  // for the basic API (ExtractAttrFlags in
  // matmul/mat_mul_v3/op_host/op_tiling/arch35/matmul_v3_tiling_advanced.cpp).
  absl::StatusOr<int64_t> offset_x = GetInt(c, "offset_x", "offset_x", 0);
  if (!offset_x.ok()) return offset_x.status();
  if (!fused) p->set_avoid_tensor_api(*offset_x == 0x80);
  if (p->has_bias()) {
    if (fused) {
      // The FusedMatMul test wires input 2 with the input dtype whatever the
      // case's bias_dtype says (TestOneParamCase of test_fused_matmul_tiling.cpp).
      p->set_dtype_bias(p->dtype_a());
    } else {
      absl::Status status = SetBiasDtype(c, p);
      if (!status.ok()) return status;
    }
  }
  absl::StatusOr<int64_t> k_b = GetInt(c, "k_b", "k_b", p->k());
  if (!k_b.ok()) return k_b.status();
  if (*k_b != p->k()) {
    reason =
        absl::StrCat("A's K (", p->k(), ") differs from B's K (", *k_b, "): a problem has one k");
  }
  if (fused) {
    absl::StatusOr<std::string> name = GetString(c, "fused_op_type", "fused_op_type", "");
    if (!name.ok()) return name.status();
    absl::StatusOr<pb::FusedOp> fused_op = FusedOpFromName(*name);
    if (fused_op.ok()) {
      p->set_fused_op(*fused_op);
    } else if (reason.empty()) {
      reason = absl::StrCat("fused_op_type \"", *name, "\" is no epilogue of DAV_3510");
    }
    absl::StatusOr<int64_t> inner = GetInt(c, "inner_precise", "inner_precise", 0);
    if (!inner.ok()) return inner.status();
    p->set_inner_precise(static_cast<int32_t>(*inner));
  }

  absl::StatusOr<Json> batch = GetObject(c, "batch", "batch");
  if (!batch.ok()) return batch.status();
  Dims dims[3];
  const char* const kBatchKeys[] = {"a_batch_dims", "b_batch_dims", "c_batch_dims"};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::optional<Dims>> value =
        GetDims(*batch, kBatchKeys[i], absl::StrCat("batch.", kBatchKeys[i]));
    if (!value.ok()) return value.status();
    if (value->has_value()) dims[i] = **value;
  }
  for (int64_t d : dims[0]) p->add_batch_a(d);
  for (int64_t d : dims[1]) p->add_batch_b(d);
  for (int64_t d : dims[2]) p->add_batch_c(d);
  if (reason.empty()) {
    absl::Status status = ApplyDecodedShapes(c, dims[0], dims[1], dims[2], p, &reason, note);
    if (!status.ok()) return status;
  }
  if (auto it = c.find("platform"); it != c.end() && !it->is_null()) {
    std::string platform_reason;
    absl::Status status = ApplyDecodedPlatform(*it, &request, &platform_reason, ignored_keys);
    if (!status.ok()) return status;
    if (reason.empty()) reason = platform_reason;
  }
  ReportUnknownDecodedKeys(c, ignored_keys);
  if (!reason.empty()) {
    if (inexpressible != nullptr) *inexpressible = reason;
    return absl::FailedPreconditionError(absl::StrCat("not expressible: ", reason));
  }
  return request;
}

std::optional<std::string> FirstDecodedMismatch(const Json& expected,
                                                const absl::StatusOr<pb::TilingResponse>& response,
                                                std::string* refusal) {
  if (ExpectsRefusal(expected)) return JudgeRefusal(response, refusal);
  if (auto it = expected.find("status");
      it != expected.end() && !it->is_null() && *it != Json("GRAPH_SUCCESS")) {
    return absl::StrCat("field status: expected GRAPH_SUCCESS or GRAPH_FAILED, got ", it->dump());
  }
  if (!response.ok()) {
    return absl::StrCat("status expected GRAPH_SUCCESS got ", ErrorText(response.status()));
  }
  for (const char* key : {"block_dim", "tiling_key"}) {
    auto it = expected.find(key);
    if (it == expected.end() || it->is_null()) continue;
    const uint64_t got =
        std::string(key) == "block_dim" ? response->block_dim() : response->tiling_key();
    if (auto diff = CompareInt(key, *it, got)) return diff;
  }
  auto indices = expected.find("compared_word_indices");
  if (indices == expected.end() || indices->is_null()) return std::nullopt;
  auto words = expected.find("tiling_data_words");
  if (!indices->is_array() || words == expected.end() || !words->is_array()) {
    return "field compared_word_indices: expected a list and tiling_data_words beside it";
  }
  for (const Json& index : *indices) {
    if (!index.is_number_unsigned() || index.get<uint64_t>() >= words->size()) {
      return absl::StrCat("field compared_word_indices: ", index.dump(),
                          " is not a word of tiling_data_words");
    }
    const size_t i = index.get<size_t>();
    if (auto diff = CompareWord(i, (*words)[i], *response)) return diff;
  }
  // A test that compares every word compares the string's length too.
  if (!words->empty() && indices->size() == words->size() &&
      static_cast<size_t>(response->raw_words_size()) != words->size()) {
    return absl::StrCat("word count expected ", words->size(), " got ", response->raw_words_size());
  }
  return std::nullopt;
}

}  // namespace npu::client
