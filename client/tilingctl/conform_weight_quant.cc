// WeightQuantBatchMatmulV2's golden cases (tests/data/cann950_wqbmm/, schema
// "cann950-quant-ut-decoded/1" with "op": "WeightQuantBatchMatmulV2"): a
// case's inputs as a request. The judge is QuantBatchMatmulV3's
// (FirstQuantMismatch): status, then block dim and key.
#include <cstdint>
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
using conform_internal::GetBool;
using conform_internal::GetInt;
using conform_internal::GetPlatformFigure;
using conform_internal::Json;
using conform_internal::ParseDtype;

using Dims = std::vector<int64_t>;

absl::StatusOr<std::optional<Dims>> DimsOf(const Json& value, absl::string_view path) {
  if (value.is_null()) return std::optional<Dims>();
  if (!value.is_array()) return BadField(path, absl::StrCat("not a list: ", value.dump()));
  Dims dims;
  for (const Json& dim : value) {
    if (!dim.is_number_integer()) {
      return BadField(path, absl::StrCat("not an integer: ", dim.dump()));
    }
    dims.push_back(dim.get<int64_t>());
  }
  return std::optional<Dims>(std::move(dims));
}

absl::StatusOr<pb::DataType> DtypeOf(const Json& inputs, const char* key) {
  const std::string path = absl::StrCat("inputs.", key);
  auto it = inputs.find(key);
  if (it == inputs.end() || !it->is_object() || !it->contains("ge")) {
    return BadField(path, "missing or not a {\"ge\": ...} object");
  }
  return ParseDtype((*it)["ge"], absl::StrCat(path, ".ge"));
}

// An input wired when its flag is set (always for a null flag): its dtype
// and storage shape. Absent inputs have neither, as in CANN's harness.
absl::Status SetTensor(const Json& inputs, const char* flag, const char* dtype_key,
                       const char* shape_key, pb::QuantTensor* out) {
  if (flag != nullptr) {
    absl::StatusOr<bool> present = GetBool(inputs, flag, absl::StrCat("inputs.", flag));
    if (!present.ok()) return present.status();
    if (!*present) return absl::OkStatus();
  }
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

absl::Status ApplyPlatform(const Json& platform, pb::TilingRequest* request) {
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
    absl::StatusOr<conform_internal::PlatformFigure> figure = GetPlatformFigure(
        platform.value(size.key, Json()), absl::StrCat("inputs.platform.", size.key));
    if (!figure.ok()) return figure.status();
    (o->*(size.set))(figure->value);
  }
  for (const char* key : {"aic_num", "aiv_num"}) {
    absl::StatusOr<conform_internal::PlatformFigure> figure =
        GetPlatformFigure(platform.value(key, Json()), absl::StrCat("inputs.platform.", key));
    if (!figure.ok()) return figure.status();
    if (std::string(key) == "aic_num") {
      o->set_aic_num(figure->value32);
    } else {
      o->set_aiv_num(figure->value32);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<pb::TilingRequest> RequestFromWeightQuantCase(const Json& c,
                                                             std::string* inexpressible) {
  if (!c.is_object()) return BadField("case", "not an object");
  auto in = c.find("inputs");
  if (in == c.end() || !in->is_object()) return BadField("inputs", "missing or not an object");
  const Json& inputs = *in;
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_op(pb::OPERATOR_WEIGHT_QUANT_BATCH_MATMUL_V2);
  for (const auto& [key, set] :
       {std::pair{"m", &pb::MatmulProblem::set_m}, std::pair{"n", &pb::MatmulProblem::set_n},
        std::pair{"k", &pb::MatmulProblem::set_k}}) {
    absl::StatusOr<int64_t> value = GetInt(inputs, key, absl::StrCat("inputs.", key));
    if (!value.ok()) return value.status();
    (p->*set)(*value);
  }
  for (const auto& [key, set] : {std::pair{"trans_a", &pb::MatmulProblem::set_trans_a},
                                 std::pair{"trans_b", &pb::MatmulProblem::set_trans_b},
                                 std::pair{"has_bias", &pb::MatmulProblem::set_has_bias}}) {
    absl::StatusOr<bool> value = GetBool(inputs, key, absl::StrCat("inputs.", key));
    if (!value.ok()) return value.status();
    (p->*set)(*value);
  }
  for (const auto& [key, set] : {std::pair{"dtype_x", &pb::MatmulProblem::set_dtype_a},
                                 std::pair{"dtype_weight", &pb::MatmulProblem::set_dtype_b},
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
  const std::string format = inputs.value("format_weight", std::string("ND"));
  if (format != "ND" && format != "FRACTAL_NZ") {
    return BadField("inputs.format_weight", absl::StrCat("unknown format ", format));
  }
  auto shapes = inputs.find("shapes");
  if (shapes == inputs.end() || !shapes->is_object()) {
    return BadField("inputs.shapes", "missing or not an object");
  }
  if (format == "FRACTAL_NZ") {
    p->set_format_b(pb::FORMAT_FRACTAL_NZ);
    absl::StatusOr<std::optional<Dims>> storage =
        DimsOf((*shapes)["weight"]["storage"], "inputs.shapes.weight.storage");
    if (!storage.ok()) return storage.status();
    if (storage->has_value()) {
      for (int64_t d : **storage) p->add_storage_shape_b(d);
    }
  }
  pb::QuantInputs* q = p->mutable_quant();
  absl::Status status = SetTensor(inputs, nullptr, "dtype_antiquant_scale", "antiquant_scale",
                                  q->mutable_antiquant_scale());
  if (status.ok()) {
    status = SetTensor(inputs, "has_antiquant_offset", "dtype_antiquant_offset", "antiquant_offset",
                       q->mutable_antiquant_offset());
  }
  if (status.ok()) {
    status = SetTensor(inputs, "has_quant_scale", "dtype_quant_scale", "quant_scale",
                       q->mutable_quant_scale());
  }
  if (status.ok()) {
    status = SetTensor(inputs, "has_quant_offset", "dtype_quant_offset", "quant_offset",
                       q->mutable_quant_offset());
  }
  if (!status.ok()) return status;
  if (p->has_bias()) {
    absl::StatusOr<std::optional<Dims>> bias = DimsOf((*shapes)["bias"], "inputs.shapes.bias");
    if (!bias.ok()) return bias.status();
    if (bias->has_value()) {
      for (int64_t d : **bias) q->add_bias_shape(d);
    }
  }
  if (auto attrs = inputs.find("attrs"); attrs != inputs.end() && attrs->is_object()) {
    absl::StatusOr<int64_t> group = GetInt(*attrs, "group_size", "inputs.attrs.group_size", 0);
    if (!group.ok()) return group.status();
    q->set_group_size(*group);
  }
  if (auto platform = inputs.find("platform"); platform != inputs.end()) {
    status = ApplyPlatform(*platform, &request);
    if (!status.ok()) return status;
  }
  (void)inexpressible;  // every case of the schema is expressible
  return request;
}

}  // namespace npu::client
