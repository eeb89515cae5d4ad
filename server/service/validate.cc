#include "server/service/validate.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/service/convert.h"
#include "server/tiling/chip_fields.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

absl::Status CheckLength(absl::string_view field, absl::string_view value, size_t limit) {
  if (value.size() > limit) {
    return FieldError(field, absl::StrCat("at most ", limit, " bytes, got ", value.size()));
  }
  return absl::OkStatus();
}

// A dtype that must name a type: UNSPECIFIED and unknown numbers are errors.
absl::Status CheckRequiredDataType(absl::string_view field, pb::DataType dtype) {
  if (dtype == pb::DATA_TYPE_UNSPECIFIED) {
    return FieldError(field,
                      "required (DATA_TYPE_FLOAT16, DATA_TYPE_BFLOAT16 or DATA_TYPE_FLOAT32)");
  }
  if (!pb::DataType_IsValid(dtype)) {
    return FieldError(field, absl::StrCat("unknown data type ", static_cast<int>(dtype)));
  }
  return absl::OkStatus();
}

// A format may be left UNSPECIFIED (meaning ND) but must not be an unknown
// number.
absl::Status CheckFormat(absl::string_view field, pb::Format format) {
  if (!pb::Format_IsValid(format)) {
    return FieldError(field, absl::StrCat("unknown format ", static_cast<int>(format)));
  }
  return absl::OkStatus();
}

// QuantBatchMatmulV3's inputs: known dtypes, bounded shapes and group
// sizes of 16 bits (CANN packs the three into one attribute). The engine
// checks CANN's rules (server/tiling/quant/).
absl::Status ValidateQuantFields(const pb::QuantInputs& quant) {
  struct Tensor {
    const char* field;
    const pb::QuantTensor& tensor;
  };
  for (const Tensor& t : {Tensor{"problem.quant.scale", quant.scale()},
                          Tensor{"problem.quant.pertoken_scale", quant.pertoken_scale()},
                          Tensor{"problem.quant.offset", quant.offset()}}) {
    if (!pb::DataType_IsValid(t.tensor.dtype())) {
      return FieldError(absl::StrCat(t.field, ".dtype"),
                        absl::StrCat("unknown data type ", t.tensor.dtype()));
    }
    if (t.tensor.shape_size() > kMaxQuantRank) {
      return FieldError(
          absl::StrCat(t.field, ".shape"),
          absl::StrCat("at most ", kMaxQuantRank, " dims, got ", t.tensor.shape_size()));
    }
  }
  if (quant.bias_shape_size() > kMaxQuantRank) {
    return FieldError(
        "problem.quant.bias_shape",
        absl::StrCat("at most ", kMaxQuantRank, " dims, got ", quant.bias_shape_size()));
  }
  struct Group {
    const char* field;
    int64_t value;
  };
  for (const Group& g : {Group{"problem.quant.group_size_m", quant.group_size_m()},
                         Group{"problem.quant.group_size_n", quant.group_size_n()},
                         Group{"problem.quant.group_size_k", quant.group_size_k()}}) {
    if (g.value < 0 || g.value > kMaxGroupSize) {
      return FieldError(g.field,
                        absl::StrCat("must be in [0, ", kMaxGroupSize, "], got ", g.value));
    }
  }
  return absl::OkStatus();
}

// The transposed batch matmuls' attributes: bounded lists and a known scale
// dtype. The engine checks CANN's rules (server/tiling/transpose/).
absl::Status ValidateTransposeFields(const pb::TransposeAttrs& transpose) {
  struct List {
    const char* field;
    int size;
  };
  for (const List& list : {List{"problem.transpose.perm_x1", transpose.perm_x1_size()},
                           List{"problem.transpose.perm_x2", transpose.perm_x2_size()},
                           List{"problem.transpose.perm_y", transpose.perm_y_size()},
                           List{"problem.transpose.scale.shape", transpose.scale().shape_size()}}) {
    if (list.size > kMaxQuantRank) {
      return FieldError(list.field,
                        absl::StrCat("at most ", kMaxQuantRank, " entries, got ", list.size));
    }
  }
  if (!pb::DataType_IsValid(transpose.scale().dtype())) {
    return FieldError("problem.transpose.scale.dtype",
                      absl::StrCat("unknown data type ", transpose.scale().dtype()));
  }
  return absl::OkStatus();
}

// GroupedMatmul's group: bounded lists and shapes, known dtypes and
// formats, a dtype for every list with an instance. The engine checks CANN's
// rules (server/tiling/grouped/).
absl::Status ValidateGroupedFields(const pb::GroupedInputs& grouped) {
  struct List {
    const char* name;
    const pb::GroupedTensorList& list;
  };
  for (const List& l :
       {List{"x", grouped.x()}, List{"weight", grouped.weight()}, List{"bias", grouped.bias()},
        List{"scale", grouped.scale()}, List{"offset", grouped.offset()},
        List{"antiquant_scale", grouped.antiquant_scale()},
        List{"antiquant_offset", grouped.antiquant_offset()},
        List{"group_list", grouped.group_list()},
        List{"per_token_scale", grouped.per_token_scale()}, List{"y", grouped.y()}}) {
    const pb::GroupedTensorList& list = l.list;
    const std::string name = absl::StrCat("problem.grouped.", l.name);
    if (list.instances_size() > kMaxGroupedInstances) {
      return FieldError(name, absl::StrCat("at most ", kMaxGroupedInstances, " instances, got ",
                                           list.instances_size()));
    }
    if (!pb::DataType_IsValid(list.dtype())) {
      return FieldError(absl::StrCat(name, ".dtype"),
                        absl::StrCat("unknown data type ", list.dtype()));
    }
    if (list.instances_size() > 0 && list.dtype() == pb::DATA_TYPE_UNSPECIFIED) {
      return FieldError(absl::StrCat(name, ".dtype"), "required for a list with an instance");
    }
    if (absl::Status s = CheckFormat(absl::StrCat(name, ".format"), list.format()); !s.ok()) {
      return s;
    }
    for (int i = 0; i < list.instances_size(); ++i) {
      const pb::GroupedShape& shape = list.instances(i);
      if (shape.origin_size() > kMaxGroupedRank || shape.storage_size() > kMaxGroupedRank) {
        return FieldError(absl::StrCat(name, ".instances[", i, "]"),
                          absl::StrCat("at most ", kMaxGroupedRank, " dims per shape"));
      }
    }
  }
  if (grouped.tuning_config_size() > kMaxGroupedInstances) {
    return FieldError("problem.grouped.tuning_config",
                      absl::StrCat("at most ", kMaxGroupedInstances, " entries, got ",
                                   grouped.tuning_config_size()));
  }
  if (grouped.token_histogram_size() > kMaxGroupedInstances) {
    return FieldError("problem.grouped.token_histogram",
                      absl::StrCat("at most ", kMaxGroupedInstances, " entries, got ",
                                   grouped.token_histogram_size()));
  }
  return absl::OkStatus();
}

absl::Status ValidateProblemFields(const pb::MatmulProblem& problem) {
  absl::Status status;
  if (problem.op() == pb::OPERATOR_GROUPED_MATMUL) {
    // Its dtypes are its lists'; the engine refuses any other field set.
    if (!problem.has_grouped()) status.Update(FieldError("problem.grouped", "required"));
    for (const auto& [field, dtype] : {std::pair{"problem.dtype_a", problem.dtype_a()},
                                       std::pair{"problem.dtype_b", problem.dtype_b()},
                                       std::pair{"problem.dtype_c", problem.dtype_c()}}) {
      if (!pb::DataType_IsValid(dtype)) {
        status.Update(FieldError(field, absl::StrCat("unknown data type ", dtype)));
      }
    }
  } else {
    status.Update(CheckRequiredDataType("problem.dtype_a", problem.dtype_a()));
    status.Update(CheckRequiredDataType("problem.dtype_b", problem.dtype_b()));
    status.Update(CheckRequiredDataType("problem.dtype_c", problem.dtype_c()));
  }
  if (problem.has_bias()) {
    status.Update(CheckRequiredDataType("problem.dtype_bias", problem.dtype_bias()));
  } else if (!pb::DataType_IsValid(problem.dtype_bias())) {
    status.Update(
        FieldError("problem.dtype_bias", absl::StrCat("unknown data type ", problem.dtype_bias())));
  }
  status.Update(CheckFormat("problem.format_a", problem.format_a()));
  status.Update(CheckFormat("problem.format_b", problem.format_b()));
  status.Update(CheckFormat("problem.format_c", problem.format_c()));
  if (problem.storage_shape_b_size() > kMaxStorageShapeRank) {
    status.Update(FieldError("problem.storage_shape_b",
                             absl::StrCat("at most ", kMaxStorageShapeRank, " dimensions, got ",
                                          problem.storage_shape_b_size())));
  }
  if (problem.a_slice().enabled() && problem.a_slice().rank() != 2 &&
      problem.a_slice().rank() != 3) {
    status.Update(
        FieldError("problem.a_slice.rank",
                   absl::StrCat("must be 2 or 3 when enabled, got ", problem.a_slice().rank())));
  }
  if (!pb::Operator_IsValid(problem.op())) {
    status.Update(FieldError("problem.op", absl::StrCat("unknown operator ", problem.op())));
  }
  if (!pb::FusedOp_IsValid(problem.fused_op())) {
    status.Update(
        FieldError("problem.fused_op", absl::StrCat("unknown fused op ", problem.fused_op())));
  }
  // The engine checks the op's own rules (validate.h); the wire only bounds
  // the lists, so that nothing unbounded is converted.
  struct DimList {
    const char* field;
    int size;
  };
  for (const DimList& list : {DimList{"problem.batch_a", problem.batch_a_size()},
                              DimList{"problem.batch_b", problem.batch_b_size()},
                              DimList{"problem.batch_c", problem.batch_c_size()},
                              DimList{"problem.batch_bias", problem.batch_bias_size()}}) {
    if (list.size > kMaxBatchRank) {
      status.Update(FieldError(
          list.field, absl::StrCat("at most ", kMaxBatchRank, " batch dims, got ", list.size)));
    }
  }
  if (problem.x3_shape_size() > kMaxX3Rank) {
    status.Update(FieldError("problem.x3_shape", absl::StrCat("at most ", kMaxX3Rank, " dims, got ",
                                                              problem.x3_shape_size())));
  }
  if (problem.has_quant()) status.Update(ValidateQuantFields(problem.quant()));
  if (problem.has_transpose()) status.Update(ValidateTransposeFields(problem.transpose()));
  if (problem.has_grouped()) status.Update(ValidateGroupedFields(problem.grouped()));
  // Update() keeps the first error, so the message names the first field.
  return status;
}

// The mode and view and, in ADVISE mode, its options and the fields it
// excludes.
absl::Status ValidateMode(const pb::TilingRequest& request) {
  if (!pb::TilingMode_IsValid(request.mode())) {
    return FieldError("mode", absl::StrCat("unknown mode ", static_cast<int>(request.mode())));
  }
  if (!pb::ResponseView_IsValid(request.view())) {
    return FieldError("view", absl::StrCat("unknown view ", static_cast<int>(request.view())));
  }
  const bool advise = request.mode() == pb::TILING_MODE_ADVISE;
  if (request.has_advise() && !advise) {
    return FieldError("advise", "only allowed with mode TILING_MODE_ADVISE");
  }
  if (!advise) return absl::OkStatus();
  if (!request.forced_strategy().empty()) {
    return FieldError("forced_strategy",
                      "must be empty with mode TILING_MODE_ADVISE (the advice ranks every "
                      "strategy)");
  }
  if (request.advise().max_candidates() > kMaxAdviseCandidates) {
    return FieldError("advise.max_candidates",
                      absl::StrCat("must be in [0, ", kMaxAdviseCandidates, "], got ",
                                   request.advise().max_candidates()));
  }
  if (request.advise().max_advisory_ms() > kMaxAdvisoryMs) {
    return FieldError("advise.max_advisory_ms",
                      absl::StrCat("must be in [0, ", kMaxAdvisoryMs, "], got ",
                                   request.advise().max_advisory_ms()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePlatformOverrides(const pb::PlatformOverrides& overrides) {
  // In field-number order, the first offending field wins.
  for (size_t i = 0; i < npu::tiling::kChipFieldCount; ++i) {
    const ChipFieldWire& wire = kChipFieldWire[i];
    if (!wire.has_override(overrides)) continue;
    const npu::tiling::ChipField& field = npu::tiling::kChipFields[i];
    const uint64_t value = wire.override_value(overrides);
    if (value < field.min || value > field.max) {
      return FieldError(absl::StrCat("platform_overrides.", std::string(field.name)),
                        absl::StrCat("must be in [", field.min, ", ", field.max, "], got ", value));
    }
  }
  return absl::OkStatus();
}

namespace {

// The fields both requests spell the same way.
template <typename Request>
RequestParts SharedParts(const Request& request) {
  RequestParts parts;
  parts.id = request.id();
  parts.platform = request.platform();
  parts.forced_strategy = request.forced_strategy();
  parts.client_id = request.client_id();
  if (request.has_problem()) parts.problem = &request.problem();
  return parts;
}

}  // namespace

RequestParts PartsOf(const pb::TilingRequest& request) {
  RequestParts parts = SharedParts(request);
  if (request.has_platform_overrides()) parts.overrides = &request.platform_overrides();
  parts.tiling = &request;
  return parts;
}

RequestParts PartsOf(const pb::ExecuteRequest& request) {
  RequestParts parts = SharedParts(request);
  parts.overrides = &request.platform_overrides();
  return parts;
}

absl::Status ValidateRequest(const RequestParts& request) {
  absl::Status status;
  status.Update(CheckLength("id", request.id, kMaxIdBytes));
  status.Update(CheckLength("platform", request.platform, kMaxNameBytes));
  status.Update(CheckLength("forced_strategy", request.forced_strategy, kMaxNameBytes));
  status.Update(CheckLength("client_id", request.client_id, kMaxClientIdBytes));
  if (request.problem == nullptr) {
    status.Update(FieldError("problem", "required"));
  } else {
    status.Update(ValidateProblemFields(*request.problem));
  }
  if (request.overrides != nullptr) status.Update(ValidatePlatformOverrides(*request.overrides));
  if (request.tiling != nullptr) status.Update(ValidateMode(*request.tiling));
  return status;
}

absl::Status ValidateRequest(const pb::TilingRequest& request) {
  return ValidateRequest(PartsOf(request));
}

}  // namespace npu::server
