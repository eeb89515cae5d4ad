#include "client/tilingctl/conform.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

// --- "cann950-ut-decoded/1" -------------------------------------------------

bool ExpectsRefusal(const Json& expected) {
  auto it = expected.find("status");
  return it != expected.end() && *it == Json("GRAPH_FAILED");
}

std::string ErrorText(const absl::Status& status) {
  return absl::StrCat("error ", absl::StatusCodeToString(status.code()), ": ", status.message());
}

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
  return BadField("op_type", absl::StrCat("expected MatMulV3, BatchMatMulV3 or FusedMatMul, got \"",
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
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
      return BadField(path, absl::StrCat("not a non-negative integer: ", value.dump()));
    }
    const uint64_t v = value.get<uint64_t>();
    const uint32_t v32 = static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX));
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

// Compares one expected word (the tests print words as int32, so a negative
// value is the word's two's complement) with the engine's.
std::optional<std::string> CompareWord(size_t index, const Json& expected,
                                       const pb::TilingResponse& response) {
  const std::string field = absl::StrCat("word ", index);
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
  const std::string schema_name =
      schema != root.end() && schema->is_string() ? schema->get<std::string>() : "";
  if (schema_name != kConformanceSchema && schema_name != kUtDecodedSchema) {
    return absl::InvalidArgumentError(
        absl::StrCat("schema: expected \"", kConformanceSchema, "\" or \"", kUtDecodedSchema,
                     "\", got ", schema == root.end() ? "nothing" : schema->dump()));
  }
  const CaseSchema kind =
      schema_name == kUtDecodedSchema ? CaseSchema::kUtDecoded : CaseSchema::kTilingCases;
  auto cases = root.find("cases");
  if (cases == root.end() || !cases->is_array()) {
    return absl::InvalidArgumentError("cases: missing or not a list");
  }

  std::vector<ConformanceCase> out;
  out.reserve(cases->size());
  for (size_t i = 0; i < cases->size(); ++i) {
    const Json& entry = (*cases)[i];
    ConformanceCase c;
    c.schema = kind;
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
    if (kind == CaseSchema::kUtDecoded) {
      // The input keys sit in the case object itself.
      if (expected == entry.end() || !expected->is_object()) {
        c.request = absl::InvalidArgumentError("expected: missing or not an object");
      } else {
        c.request = RequestFromDecodedCase(entry, &c.inexpressible, ignored_keys, &c.note);
        c.expected = *expected;
      }
    } else if (input == entry.end()) {
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

std::optional<std::string> FirstDecodedMismatch(const Json& expected,
                                                const absl::StatusOr<pb::TilingResponse>& response,
                                                std::string* refusal) {
  if (ExpectsRefusal(expected)) {
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
  return std::nullopt;
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
    } else if (c.schema == CaseSchema::kUtDecoded) {
      std::string refusal;
      failure = FirstDecodedMismatch(c.expected, decide(*c.request), &refusal);
      if (!failure.has_value() && !refusal.empty()) note = absl::StrCat("refused: ", refusal);
    } else {
      absl::StatusOr<pb::TilingResponse> response = decide(*c.request);
      if (!response.ok()) {
        failure = ErrorText(response.status());
      } else {
        failure = FirstMismatch(c.expected, *response);
      }
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
