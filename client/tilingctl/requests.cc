#include "client/tilingctl/requests.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/npy.h"
#include "client/tilingctl/calibrate.h"
#include "client/tilingctl/cli.h"
#include "client/tilingctl/execute.h"
#include "client/tilingctl/flags.h"
#include "client/tilingctl/format.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;

absl::StatusOr<pb::DataType> DtypeFlag(const std::optional<std::string>& specific,
                                       const char* flag) {
  const std::string name = specific.value_or(absl::GetFlag(FLAGS_dtype));
  absl::StatusOr<pb::DataType> dtype = DataTypeFromName(name);
  if (!dtype.ok())
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", dtype.status().message()));
  return dtype;
}

// Applies --platform and the override flags.
void ApplyPlatformFlags(pb::TilingRequest* request) {
  request->set_platform(absl::GetFlag(FLAGS_platform));
  pb::PlatformOverrides* o = request->mutable_platform_overrides();
  if (auto v = absl::GetFlag(FLAGS_aic_num)) o->set_aic_num(*v);
  if (auto v = absl::GetFlag(FLAGS_aiv_num)) o->set_aiv_num(*v);
  if (auto v = absl::GetFlag(FLAGS_l1_bytes)) o->set_l1_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_l0a_bytes)) o->set_l0a_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_l0b_bytes)) o->set_l0b_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_l0c_bytes)) o->set_l0c_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_ub_bytes)) o->set_ub_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_l2_bytes)) o->set_l2_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_bt_bytes)) o->set_bt_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_cube_freq_mhz)) o->set_cube_freq_mhz(*v);
  if (auto v = absl::GetFlag(FLAGS_ddr_bytes_per_cycle)) o->set_ddr_bytes_per_cycle(*v);
  if (auto v = absl::GetFlag(FLAGS_l2_bytes_per_cycle)) o->set_l2_bytes_per_cycle(*v);
}

// Applies --platform, the override flags, --strategy, --trace, --view and
// --id.
absl::Status ApplyDecisionFlags(pb::TilingRequest* request) {
  ApplyPlatformFlags(request);
  request->set_forced_strategy(absl::GetFlag(FLAGS_strategy));
  request->set_include_trace(absl::GetFlag(FLAGS_trace));
  request->set_id(absl::GetFlag(FLAGS_id));
  request->set_client_id(kClientId);
  const std::string view = absl::GetFlag(FLAGS_view);
  if (view == "full") {
    request->set_view(pb::RESPONSE_VIEW_FULL);
  } else if (view == "compact") {
    request->set_view(pb::RESPONSE_VIEW_COMPACT);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--view: unknown view \"", view, "\"; expected full or compact"));
  }
  return absl::OkStatus();
}

// Sets the dtypes of A, B, C and, with --bias, of the bias.
absl::Status ApplyDtypeFlags(pb::MatmulProblem* p) {
  absl::StatusOr<pb::DataType> a = DtypeFlag(absl::GetFlag(FLAGS_dtype_a), "--dtype-a");
  absl::StatusOr<pb::DataType> b = DtypeFlag(absl::GetFlag(FLAGS_dtype_b), "--dtype-b");
  absl::StatusOr<pb::DataType> c = DtypeFlag(absl::GetFlag(FLAGS_dtype_c), "--dtype-c");
  for (const auto* dtype : {&a, &b, &c}) {
    if (!dtype->ok()) return dtype->status();
  }
  p->set_dtype_a(*a);
  p->set_dtype_b(*b);
  p->set_dtype_c(*c);
  p->set_has_bias(absl::GetFlag(FLAGS_bias));
  if (p->has_bias()) {
    const std::optional<std::string> bias_dtype = absl::GetFlag(FLAGS_bias_dtype);
    if (bias_dtype.has_value()) {
      absl::StatusOr<pb::DataType> dtype = DataTypeFromName(*bias_dtype);
      if (!dtype.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--bias-dtype: ", dtype.status().message()));
      }
      p->set_dtype_bias(*dtype);
    } else {
      p->set_dtype_bias(p->dtype_c());
    }
  }
  return absl::OkStatus();
}

// Sets the layouts of A, B and C and the storage shape of an NZ B.
absl::Status ApplyLayoutFlags(pb::MatmulProblem* p) {
  struct FormatFlag {
    const char* name;
    std::string value;
    void (pb::MatmulProblem::*set)(pb::Format);
  };
  for (const FormatFlag& flag :
       {FormatFlag{"--format-a", absl::GetFlag(FLAGS_format_a), &pb::MatmulProblem::set_format_a},
        FormatFlag{"--format-b", absl::GetFlag(FLAGS_format_b), &pb::MatmulProblem::set_format_b},
        FormatFlag{"--format-c", absl::GetFlag(FLAGS_format_c),
                   &pb::MatmulProblem::set_format_c}}) {
    absl::StatusOr<pb::Format> format = FormatFromName(flag.value);
    if (!format.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(flag.name, ": ", format.status().message()));
    }
    (p->*flag.set)(*format);
  }
  for (const std::string& dim : absl::GetFlag(FLAGS_storage_shape_b)) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(dim, &value)) {
      return absl::InvalidArgumentError(absl::StrCat("--storage-shape-b: not an integer: ", dim));
    }
    p->add_storage_shape_b(value);
  }
  return absl::OkStatus();
}

// Appends the integers of a comma-separated list flag to `out`.
absl::Status AppendDims(const std::vector<std::string>& dims, const char* flag,
                        google::protobuf::RepeatedField<int64_t>* out) {
  for (const std::string& dim : dims) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(dim, &value)) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": not an integer: ", dim));
    }
    out->Add(value);
  }
  return absl::OkStatus();
}

// Sets the operator, the batch dims and FusedMatMul's epilogue.
absl::Status ApplyOperatorFlags(pb::MatmulProblem* p) {
  absl::StatusOr<pb::Operator> op = OperatorFromName(absl::GetFlag(FLAGS_op));
  if (!op.ok()) return absl::InvalidArgumentError(absl::StrCat("--op: ", op.status().message()));
  // MatMulV3 stays unset, as requests that never name an operator.
  if (*op != pb::OPERATOR_MATMUL_V3) p->set_op(*op);
  absl::StatusOr<pb::FusedOp> fused = FusedOpFromName(absl::GetFlag(FLAGS_fused_op));
  if (!fused.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--fused-op: ", fused.status().message()));
  }
  p->set_fused_op(*fused);
  struct DimsFlag {
    const char* name;
    std::vector<std::string> dims;
    google::protobuf::RepeatedField<int64_t>* out;
  };
  for (const DimsFlag& flag :
       {DimsFlag{"--batch-a", absl::GetFlag(FLAGS_batch_a), p->mutable_batch_a()},
        DimsFlag{"--batch-b", absl::GetFlag(FLAGS_batch_b), p->mutable_batch_b()},
        DimsFlag{"--batch-c", absl::GetFlag(FLAGS_batch_c), p->mutable_batch_c()},
        DimsFlag{"--batch-bias", absl::GetFlag(FLAGS_batch_bias), p->mutable_batch_bias()},
        DimsFlag{"--x3-shape", absl::GetFlag(FLAGS_x3_shape), p->mutable_x3_shape()}}) {
    if (absl::Status status = AppendDims(flag.dims, flag.name, flag.out); !status.ok()) {
      return status;
    }
  }
  p->set_inner_precise(absl::GetFlag(FLAGS_inner_precise));
  p->set_a_batch_interleaved(absl::GetFlag(FLAGS_a_batch_interleaved));
  p->set_b_batch_interleaved(absl::GetFlag(FLAGS_b_batch_interleaved));
  return absl::OkStatus();
}

// One quant input from its dtype and shape flags; an empty dtype leaves it
// absent.
absl::Status ApplyQuantTensor(const char* name, const std::string& dtype,
                              const std::vector<std::string>& shape, pb::QuantTensor* out) {
  if (dtype.empty()) {
    if (!shape.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, "-shape needs --", name, "-dtype"));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<pb::DataType> parsed = DataTypeFromName(dtype);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, "-dtype: ", parsed.status().message()));
  }
  out->set_dtype(*parsed);
  return AppendDims(shape, absl::StrCat("--", name, "-shape").c_str(), out->mutable_shape());
}

// WeightQuantBatchMatmulV2's inputs: --scale-* is the antiquant scale,
// --offset-* the antiquant offset, --group-size the one group_size, and
// --quant-scale-* / --quant-offset-* the int8 output's.
absl::Status ApplyWeightQuantFlags(pb::MatmulProblem* p) {
  pb::QuantInputs quant;
  absl::Status status =
      ApplyQuantTensor("scale", absl::GetFlag(FLAGS_scale_dtype), absl::GetFlag(FLAGS_scale_shape),
                       quant.mutable_antiquant_scale());
  status.Update(ApplyQuantTensor("offset", absl::GetFlag(FLAGS_offset_dtype),
                                 absl::GetFlag(FLAGS_offset_shape),
                                 quant.mutable_antiquant_offset()));
  status.Update(ApplyQuantTensor("quant-scale", absl::GetFlag(FLAGS_quant_scale_dtype),
                                 absl::GetFlag(FLAGS_quant_scale_shape),
                                 quant.mutable_quant_scale()));
  status.Update(ApplyQuantTensor("quant-offset", absl::GetFlag(FLAGS_quant_offset_dtype),
                                 absl::GetFlag(FLAGS_quant_offset_shape),
                                 quant.mutable_quant_offset()));
  status.Update(
      AppendDims(absl::GetFlag(FLAGS_bias_shape), "--bias-shape", quant.mutable_bias_shape()));
  if (!status.ok()) return status;
  const std::vector<std::string> group = absl::GetFlag(FLAGS_group_size);
  if (!group.empty()) {
    google::protobuf::RepeatedField<int64_t> sizes;
    status = AppendDims(group, "--group-size", &sizes);
    if (!status.ok()) return status;
    if (sizes.size() != 1) {
      return absl::InvalidArgumentError(
          "--group-size: weight_quant_batch_matmul_v2 takes one group size (along K)");
    }
    quant.set_group_size(sizes[0]);
  }
  if (quant.ByteSizeLong() > 0) *p->mutable_quant() = std::move(quant);
  return absl::OkStatus();
}

// QuantBatchMatmulV3's scales, offset, bias shape, group sizes and runtime.
absl::Status ApplyQuantFlags(pb::MatmulProblem* p) {
  if (p->op() == pb::OPERATOR_WEIGHT_QUANT_BATCH_MATMUL_V2) return ApplyWeightQuantFlags(p);
  pb::QuantInputs quant;
  absl::Status status = ApplyQuantTensor("scale", absl::GetFlag(FLAGS_scale_dtype),
                                         absl::GetFlag(FLAGS_scale_shape), quant.mutable_scale());
  status.Update(ApplyQuantTensor("pertoken", absl::GetFlag(FLAGS_pertoken_dtype),
                                 absl::GetFlag(FLAGS_pertoken_shape),
                                 quant.mutable_pertoken_scale()));
  status.Update(ApplyQuantTensor("offset", absl::GetFlag(FLAGS_offset_dtype),
                                 absl::GetFlag(FLAGS_offset_shape), quant.mutable_offset()));
  status.Update(
      AppendDims(absl::GetFlag(FLAGS_bias_shape), "--bias-shape", quant.mutable_bias_shape()));
  if (!status.ok()) return status;
  const std::vector<std::string> group = absl::GetFlag(FLAGS_group_size);
  if (!group.empty()) {
    google::protobuf::RepeatedField<int64_t> sizes;
    status = AppendDims(group, "--group-size", &sizes);
    if (!status.ok()) return status;
    if (sizes.size() != 3) {
      return absl::InvalidArgumentError("--group-size: expected m,n,k (three integers)");
    }
    quant.set_group_size_m(sizes[0]);
    quant.set_group_size_n(sizes[1]);
    quant.set_group_size_k(sizes[2]);
  }
  quant.set_without_tensor_api(absl::GetFlag(FLAGS_without_tensor_api));
  if (quant.ByteSizeLong() > 0) *p->mutable_quant() = std::move(quant);
  return absl::OkStatus();
}

// The transposed batch matmuls' perms, batch and batch split; the --scale-*
// flags are TransposeBatchMatMul's int8 y scale (its sibling's, as
// QuantBatchMatmulV3's, are x2's scale, --pertoken-* x1's).
absl::Status ApplyTransposeFlags(pb::MatmulProblem* p) {
  const bool tbmm = p->op() == pb::OPERATOR_TRANSPOSE_BATCH_MATMUL;
  if (!tbmm && p->op() != pb::OPERATOR_TRANSPOSE_QUANT_BATCH_MATMUL) {
    if (!absl::GetFlag(FLAGS_perm_x1).empty() || !absl::GetFlag(FLAGS_perm_x2).empty() ||
        !absl::GetFlag(FLAGS_perm_y).empty() || absl::GetFlag(FLAGS_batch).has_value() ||
        absl::GetFlag(FLAGS_batch_split_factor).has_value()) {
      return absl::InvalidArgumentError(
          "--perm-x1, --perm-x2, --perm-y, --batch and --batch-split-factor are for "
          "transpose_batch_matmul and transpose_quant_batch_matmul");
    }
    return absl::OkStatus();
  }
  pb::TransposeAttrs* t = p->mutable_transpose();
  struct Perm {
    const char* name;
    std::vector<std::string> dims;
    std::vector<std::string> fallback;
    google::protobuf::RepeatedField<int64_t>* out;
  };
  for (const Perm& perm :
       {Perm{"--perm-x1", absl::GetFlag(FLAGS_perm_x1), {"1", "0", "2"}, t->mutable_perm_x1()},
        Perm{"--perm-x2", absl::GetFlag(FLAGS_perm_x2), {"0", "1", "2"}, t->mutable_perm_x2()},
        Perm{"--perm-y", absl::GetFlag(FLAGS_perm_y), {"1", "0", "2"}, t->mutable_perm_y()}}) {
    absl::Status status =
        AppendDims(perm.dims.empty() ? perm.fallback : perm.dims, perm.name, perm.out);
    if (!status.ok()) return status;
  }
  const std::optional<int64_t> batch = absl::GetFlag(FLAGS_batch);
  if (!batch.has_value())
    return absl::InvalidArgumentError("--batch is required for --op transpose_*");
  t->set_batch(*batch);
  if (const std::optional<int64_t> split = absl::GetFlag(FLAGS_batch_split_factor)) {
    t->set_batch_split_factor(*split);
  }
  if (tbmm && p->has_quant()) {
    // TransposeBatchMatMul's only scale is its int8 y's.
    *t->mutable_scale() = p->quant().scale();
    p->clear_quant();
  }
  return absl::OkStatus();
}

// Sets the precision and determinism options and the slice view of A.
void ApplyOptionFlags(pb::MatmulProblem* p) {
  p->set_hf32(absl::GetFlag(FLAGS_hf32));
  p->set_force_grp_acc_fp32(absl::GetFlag(FLAGS_force_grp_acc_fp32));
  p->set_deterministic_level(absl::GetFlag(FLAGS_deterministic_level));
  p->set_avoid_tensor_api(absl::GetFlag(FLAGS_avoid_tensor_api));
  if (const std::optional<int32_t> rank = absl::GetFlag(FLAGS_slice_rank)) {
    pb::SliceView* slice = p->mutable_a_slice();
    slice->set_enabled(true);
    slice->set_rank(*rank);
    slice->set_batch(absl::GetFlag(FLAGS_slice_batch));
    slice->set_batch_stride(absl::GetFlag(FLAGS_slice_batch_stride));
    slice->set_row_stride(absl::GetFlag(FLAGS_slice_row_stride));
  }
}

// The operand files of `execute`: each flag with its path.
struct OperandPaths {
  std::string a, b, bias, scale, pertoken_scale, offset;
};

OperandPaths OperandPathsFromFlags() {
  return {absl::GetFlag(FLAGS_a),
          absl::GetFlag(FLAGS_b),
          absl::GetFlag(FLAGS_bias_npy),
          absl::GetFlag(FLAGS_scale_npy),
          absl::GetFlag(FLAGS_pertoken_npy),
          absl::GetFlag(FLAGS_offset_npy)};
}

// The dtype --dtype-a (or --dtype-b, over --dtype) names; UNSPECIFIED when
// it names none (RequestFromFlags() reports that).
pb::DataType DtypeOrUnspecified(const std::optional<std::string>& specific) {
  absl::StatusOr<pb::DataType> dtype =
      DataTypeFromName(specific.value_or(absl::GetFlag(FLAGS_dtype)));
  return dtype.ok() ? *dtype : pb::DATA_TYPE_UNSPECIFIED;
}

// Reads the operand files. Without --m / --n / --k the sizes come from the
// shapes of A and B (SizesFromOperands()); a bias file implies --bias.
absl::StatusOr<NpyOperands> ReadOperandFiles(const OperandPaths& paths) {
  NpyOperands files;
  struct File {
    const char* flag;
    const std::string& path;
    std::optional<NpyOperand>& out;
  };
  for (const File& file :
       {File{"--a", paths.a, files.a}, File{"--b", paths.b, files.b},
        File{"--bias", paths.bias, files.bias}, File{"--scale_npy", paths.scale, files.scale},
        File{"--pertoken_npy", paths.pertoken_scale, files.pertoken_scale},
        File{"--offset_npy", paths.offset, files.offset}}) {
    if (file.path.empty()) continue;
    absl::StatusOr<NpyArray> array = ReadNpyFile(file.path);
    if (!array.ok()) return array.status();
    file.out = NpyOperand{absl::StrCat(file.flag, " ", file.path), *std::move(array)};
  }
  const std::string op = absl::GetFlag(FLAGS_op);
  const bool transposed = op.rfind("transpose", 0) == 0 || op.rfind("Transpose", 0) == 0;
  if (files.a.has_value() && transposed) {
    // Their stored shapes put the batch among m and k (through the perms):
    // the sizes are given.
    if (!absl::GetFlag(FLAGS_m) || !absl::GetFlag(FLAGS_n) || !absl::GetFlag(FLAGS_k)) {
      return absl::InvalidArgumentError("--m, --n and --k are required with --a for --op " + op);
    }
  } else if (files.a.has_value()) {
    MatmulSizes sizes{absl::GetFlag(FLAGS_m), absl::GetFlag(FLAGS_n), absl::GetFlag(FLAGS_k)};
    absl::Status status = SizesFromOperands(
        *files.a, DtypeOrUnspecified(absl::GetFlag(FLAGS_dtype_a)), absl::GetFlag(FLAGS_trans_a),
        *files.b, DtypeOrUnspecified(absl::GetFlag(FLAGS_dtype_b)), absl::GetFlag(FLAGS_trans_b),
        sizes);
    if (!status.ok()) return status;
    absl::SetFlag(&FLAGS_m, sizes.m);
    absl::SetFlag(&FLAGS_n, sizes.n);
    absl::SetFlag(&FLAGS_k, sizes.k);
  }
  if (files.bias.has_value()) absl::SetFlag(&FLAGS_bias, true);
  return files;
}

// Sets request.tiling from the --tiling file, if one is given.
absl::Status ApplyTilingFile(pb::ExecuteRequest& request) {
  const std::string path = absl::GetFlag(FLAGS_tiling);
  if (path.empty()) return absl::OkStatus();
  if (!request.forced_strategy().empty()) {
    return absl::InvalidArgumentError("--tiling and --strategy exclude each other");
  }
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<pb::TilingResponse> tiling = ParseTilingFile(*text);
  if (!tiling.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", tiling.status().message()));
  }
  *request.mutable_tiling() = *std::move(tiling);
  return absl::OkStatus();
}

// Sets request.kernel_schedule from the --kernel-schedule file, if one is
// given.
absl::Status ApplyKernelScheduleFile(pb::ExecuteRequest& request) {
  const std::string path = absl::GetFlag(FLAGS_kernel_schedule);
  if (path.empty()) return absl::OkStatus();
  if (!absl::GetFlag(FLAGS_tiling).empty()) {
    return absl::InvalidArgumentError("--kernel-schedule and --tiling exclude each other");
  }
  if (!request.forced_strategy().empty()) {
    return absl::InvalidArgumentError("--kernel-schedule and --strategy exclude each other");
  }
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  const nlohmann::json kernel = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (kernel.is_discarded())
    return absl::InvalidArgumentError(absl::StrCat(path, ": not valid JSON"));
  absl::StatusOr<pb::KernelSchedule> schedule = KernelScheduleFromJson(kernel, "");
  if (!schedule.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", schedule.status().message()));
  }
  *request.mutable_kernel_schedule() = *std::move(schedule);
  return absl::OkStatus();
}

}  // namespace

namespace {

// A GroupedMatmul instance [dims...], its storage the origin's (empty) or,
// for a FRACTAL_NZ weight, the unit tests' [..., ceil(c / c0), ceil(r / 16),
// 16, c0] with c0 = 64 for a 4-bit weight, else 32.
void AddInstance(std::vector<int64_t> dims, bool nz, bool four_bit, pb::GroupedTensorList* list) {
  pb::GroupedShape* shape = list->add_instances();
  shape->mutable_origin()->Add(dims.begin(), dims.end());
  if (!nz || dims.size() < 2) return;
  const int64_t c0 = four_bit ? 64 : 32;
  const int64_t r = dims[dims.size() - 2], c = dims.back();
  dims.resize(dims.size() - 2);
  for (int64_t d : {(c + c0 - 1) / c0, (r + 15) / 16, int64_t{16}, c0}) dims.push_back(d);
  shape->mutable_storage()->Add(dims.begin(), dims.end());
}

// The lists the shape flags describe (see GroupedRequestFromFlags()).
absl::Status GroupedFromShapeFlags(pb::GroupedInputs* g) {
  const std::optional<int64_t> m = absl::GetFlag(FLAGS_m);
  const std::optional<int64_t> n = absl::GetFlag(FLAGS_n);
  const std::optional<int64_t> k = absl::GetFlag(FLAGS_k);
  if (!m || !n || !k) {
    return absl::InvalidArgumentError(
        "--m, --n and --k are required for --op grouped_matmul (or give --grouped)");
  }
  const int64_t groups = absl::GetFlag(FLAGS_groups);
  if (groups < 1 || groups > 1024) {
    return absl::InvalidArgumentError("--groups: must be in [1, 1024]");
  }
  const std::string form = absl::GetFlag(FLAGS_form);
  const bool multi = form == "multi";
  if (!multi && form != "single" && form != "single_multi_single") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--form: unknown form \"", form, "\"; expected single, single_multi_single or multi"));
  }
  const std::string x_name = absl::GetFlag(FLAGS_dtype_a).value_or(absl::GetFlag(FLAGS_dtype));
  absl::StatusOr<pb::DataType> x = DataTypeFromName(x_name);
  if (!x.ok()) return absl::InvalidArgumentError(absl::StrCat("--dtype: ", x.status().message()));
  absl::StatusOr<pb::DataType> w = DataTypeFromName(absl::GetFlag(FLAGS_dtype_b).value_or(x_name));
  if (!w.ok()) return absl::InvalidArgumentError(absl::StrCat("--dtype-b: ", w.status().message()));
  absl::StatusOr<pb::DataType> y = DataTypeFromName(absl::GetFlag(FLAGS_dtype_c).value_or(x_name));
  if (!y.ok()) return absl::InvalidArgumentError(absl::StrCat("--dtype-c: ", y.status().message()));
  absl::StatusOr<pb::Format> format = FormatFromName(absl::GetFlag(FLAGS_format_b));
  if (!format.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--format-b: ", format.status().message()));
  }
  const bool nz = *format == pb::FORMAT_FRACTAL_NZ;
  const bool four_bit = *w == pb::DATA_TYPE_INT4 || *w == pb::DATA_TYPE_FLOAT4_E2M1 ||
                        *w == pb::DATA_TYPE_FLOAT4_E1M2;
  const bool trans_x = absl::GetFlag(FLAGS_trans_a), trans_w = absl::GetFlag(FLAGS_trans_b);
  const int64_t group_type = absl::GetFlag(FLAGS_group_type).value_or(multi ? -1 : 0);
  g->set_transpose_x(trans_x);
  g->set_transpose_weight(trans_w);
  g->set_group_type(group_type);
  g->set_group_list_type(absl::GetFlag(FLAGS_group_list_type));
  g->set_split_item(absl::GetFlag(FLAGS_split_item).value_or(multi ? 0 : 3));
  g->add_tuning_config(0);
  const std::vector<int64_t> x_dims =
      trans_x ? std::vector<int64_t>{*k, *m} : std::vector<int64_t>{*m, *k};
  const std::vector<int64_t> w_dims =
      trans_w ? std::vector<int64_t>{*n, *k} : std::vector<int64_t>{*k, *n};
  g->mutable_x()->set_dtype(*x);
  g->mutable_weight()->set_dtype(*w);
  g->mutable_weight()->set_format(*format);
  g->mutable_y()->set_dtype(*y);
  const int64_t lists = multi ? groups : 1;
  for (int64_t e = 0; e < lists; ++e) AddInstance(x_dims, false, false, g->mutable_x());
  if (form == "single") {
    std::vector<int64_t> stacked = {groups};
    stacked.insert(stacked.end(), w_dims.begin(), w_dims.end());
    AddInstance(stacked, nz, four_bit, g->mutable_weight());
  } else {
    for (int64_t e = 0; e < groups; ++e) AddInstance(w_dims, nz, four_bit, g->mutable_weight());
  }
  for (int64_t e = 0; e < lists; ++e) {
    AddInstance(group_type == 2 && !multi ? std::vector<int64_t>{groups, *m, *n}
                                          : std::vector<int64_t>{*m, *n},
                false, false, g->mutable_y());
  }
  if (group_type != -1) {
    g->mutable_group_list()->set_dtype(pb::DATA_TYPE_INT64);
    AddInstance({groups}, false, false, g->mutable_group_list());
  }
  if (absl::GetFlag(FLAGS_bias)) {
    // The unit tests' bias: float32 for bfloat16 x, x's dtype otherwise.
    const std::string fallback = *x == pb::DATA_TYPE_BFLOAT16 ? "float32" : x_name;
    absl::StatusOr<pb::DataType> bias =
        DataTypeFromName(absl::GetFlag(FLAGS_bias_dtype).value_or(fallback));
    if (!bias.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--bias-dtype: ", bias.status().message()));
    }
    g->mutable_bias()->set_dtype(*bias);
    if (form == "single") {
      AddInstance({groups, *n}, false, false, g->mutable_bias());
    } else {
      for (int64_t e = 0; e < groups; ++e) AddInstance({*n}, false, false, g->mutable_bias());
    }
  }
  return absl::OkStatus();
}

// The token histogram of --histogram, or the Zipf draw of --skew, over the
// problem's groups: group_list's length, and x's M (split M) or K (split K).
absl::Status ApplyHistogramFlags(pb::GroupedInputs* g) {
  const std::vector<std::string> listed = absl::GetFlag(FLAGS_histogram);
  const std::string skew = absl::GetFlag(FLAGS_skew);
  if (listed.empty() && skew.empty()) return absl::OkStatus();
  if (!listed.empty() && !skew.empty()) {
    return absl::InvalidArgumentError("--histogram and --skew: give one of them");
  }
  if (!listed.empty()) {
    g->clear_token_histogram();
    for (const std::string& entry : listed) {
      int64_t rows = 0;
      if (!absl::SimpleAtoi(entry, &rows) || rows < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--histogram: \"", entry, "\" is not a count >= 0"));
      }
      g->add_token_histogram(rows);
    }
    return absl::OkStatus();
  }
  double exponent = 0;
  if (!absl::StartsWith(skew, "zipf:") || !absl::SimpleAtod(skew.substr(5), &exponent) ||
      !(exponent > 0) || exponent > 16) {
    return absl::InvalidArgumentError(
        absl::StrCat("--skew: \"", skew, "\"; expected zipf:S with 0 < S <= 16"));
  }
  const int64_t group_type = g->has_group_type() ? g->group_type() : -1;
  if ((group_type != 0 && group_type != 2) || g->group_list().instances_size() == 0 ||
      g->group_list().instances(0).origin_size() == 0 || g->x().instances_size() != 1 ||
      g->x().instances(0).origin_size() < 2) {
    return absl::InvalidArgumentError(
        "--skew: needs a split problem (group_type 0 or 2) with one x and a group_list");
  }
  const auto& x = g->x().instances(0).origin();
  const int64_t rows = x[x.size() - 2], cols = x[x.size() - 1];
  const bool split_m = group_type == 0;
  const int64_t total = split_m ? (g->transpose_x() ? cols : rows) : (g->transpose_x() ? rows : cols);
  const int64_t groups = g->group_list().instances(0).origin(0);
  if (groups < 1 || groups > 1024) {
    return absl::InvalidArgumentError("--skew: group_list's length must be in [1, 1024]");
  }
  g->clear_token_histogram();
  for (int64_t count : ZipfHistogram(total, groups, exponent, absl::GetFlag(FLAGS_seed))) {
    g->add_token_histogram(count);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<pb::TilingRequest> GroupedRequestFromFlags() {
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_op(pb::OPERATOR_GROUPED_MATMUL);
  std::string json = absl::GetFlag(FLAGS_grouped);
  if (!json.empty() && json[0] == '@') {
    absl::StatusOr<std::string> text = ReadFile(json.substr(1));
    if (!text.ok()) return text.status();
    json = *std::move(text);
  }
  if (!json.empty()) {
    const google::protobuf::util::Status parsed =
        google::protobuf::util::JsonStringToMessage(json, p->mutable_grouped());
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--grouped: ", std::string(parsed.message())));
    }
  } else if (absl::Status status = GroupedFromShapeFlags(p->mutable_grouped()); !status.ok()) {
    return status;
  }
  if (absl::Status status = ApplyHistogramFlags(p->mutable_grouped()); !status.ok()) return status;
  if (absl::Status status = ApplyDecisionFlags(&request); !status.ok()) return status;
  return request;
}

absl::StatusOr<pb::TilingRequest> RequestFromFlags() {
  if (absl::StatusOr<pb::Operator> op = OperatorFromName(absl::GetFlag(FLAGS_op));
      op.ok() && *op == pb::OPERATOR_GROUPED_MATMUL) {
    return GroupedRequestFromFlags();
  }
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  const std::optional<int64_t> m = absl::GetFlag(FLAGS_m);
  const std::optional<int64_t> n = absl::GetFlag(FLAGS_n);
  const std::optional<int64_t> k = absl::GetFlag(FLAGS_k);
  if (!m || !n || !k) return absl::InvalidArgumentError("--m, --n and --k are required");
  p->set_m(*m);
  p->set_n(*n);
  p->set_k(*k);
  if (absl::Status status = ApplyDtypeFlags(p); !status.ok()) return status;
  p->set_trans_a(absl::GetFlag(FLAGS_trans_a));
  p->set_trans_b(absl::GetFlag(FLAGS_trans_b));
  if (absl::Status status = ApplyLayoutFlags(p); !status.ok()) return status;
  ApplyOptionFlags(p);
  if (absl::Status status = ApplyOperatorFlags(p); !status.ok()) return status;
  if (absl::Status status = ApplyQuantFlags(p); !status.ok()) return status;
  if (absl::Status status = ApplyTransposeFlags(p); !status.ok()) return status;
  if (absl::Status status = ApplyDecisionFlags(&request); !status.ok()) return status;
  return request;
}

absl::Status ApplyAdviseFlags(pb::TilingRequest* request) {
  if (!request->forced_strategy().empty()) {
    return absl::InvalidArgumentError("--strategy cannot be used with advise");
  }
  request->set_mode(pb::TILING_MODE_ADVISE);
  pb::AdviseOptions* advise = request->mutable_advise();
  advise->set_max_candidates(absl::GetFlag(FLAGS_max_candidates));
  advise->set_max_advisory_ms(absl::GetFlag(FLAGS_budget_ms));
  if (absl::GetFlag(FLAGS_no_verify)) advise->set_verify_recommendation(false);
  // The table shows no trace; --json still carries it unless --notrace.
  if (!absl::GetFlag(FLAGS_json)) request->set_include_trace(false);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<pb::TilingRequest>> ParseBatchFile(const std::string& text) {
  nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!root.is_array()) return absl::InvalidArgumentError("the top level must be a list");
  std::vector<pb::TilingRequest> requests;
  requests.reserve(root.size());
  for (size_t i = 0; i < root.size(); ++i) {
    const nlohmann::json& item = root[i];
    if (!item.is_object())
      return absl::InvalidArgumentError(absl::StrCat("item ", i, ": not an object"));
    pb::TilingRequest request;
    google::protobuf::util::Status parsed;
    if (item.contains("problem")) {
      parsed = google::protobuf::util::JsonStringToMessage(item.dump(), &request);
    } else {
      if (absl::Status status = ApplyDecisionFlags(&request); !status.ok()) return status;
      parsed = google::protobuf::util::JsonStringToMessage(item.dump(), request.mutable_problem());
    }
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("item ", i, ": ", std::string(parsed.message())));
    }
    if (request.id().empty()) request.set_id(absl::StrCat(i));
    requests.push_back(std::move(request));
  }
  return requests;
}

absl::StatusOr<pb::ExecuteRequest> ExecuteRequestFromFlags() {
  const OperandPaths paths = OperandPathsFromFlags();
  const bool timing_only = absl::GetFlag(FLAGS_timing_only);
  const std::string out_path = absl::GetFlag(FLAGS_out);
  if (paths.a.empty() != paths.b.empty()) {
    return absl::InvalidArgumentError("--a and --b go together");
  }
  for (const auto& [flag, path] :
       {std::pair{"--bias FILE", &paths.bias}, std::pair{"--scale_npy", &paths.scale},
        std::pair{"--pertoken_npy", &paths.pertoken_scale},
        std::pair{"--offset_npy", &paths.offset}}) {
    if (!path->empty() && paths.a.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, " needs --a and --b"));
    }
  }
  if (timing_only && !out_path.empty()) {
    return absl::InvalidArgumentError("--out needs the numerics; drop --timing-only");
  }
  absl::StatusOr<NpyOperands> files = ReadOperandFiles(paths);
  if (!files.ok()) return files.status();
  absl::StatusOr<pb::TilingRequest> tiling_request = RequestFromFlags();
  if (!tiling_request.ok()) return tiling_request.status();
  const pb::Operator op = tiling_request->problem().op();
  if (op == pb::OPERATOR_GROUPED_MATMUL && !paths.a.empty()) {
    return absl::InvalidArgumentError(
        "--a / --b: GroupedMatmul's operands are tensor lists (ExecuteInputs.grouped); tilingctl "
        "generates them from --seed");
  }
  const bool scaled = op == pb::OPERATOR_QUANT_BATCH_MATMUL_V3 ||
                      op == pb::OPERATOR_WEIGHT_QUANT_BATCH_MATMUL_V2 ||
                      op == pb::OPERATOR_TRANSPOSE_QUANT_BATCH_MATMUL ||
                      op == pb::OPERATOR_TRANSPOSE_BATCH_MATMUL;
  if (!scaled) {
    for (const auto& [flag, path] : {std::pair{"--scale_npy", &paths.scale},
                                     std::pair{"--pertoken_npy", &paths.pertoken_scale},
                                     std::pair{"--offset_npy", &paths.offset}}) {
      if (!path->empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(flag,
                         " is for the quantized operators only (--op quant_batch_matmul_v3, "
                         "weight_quant_batch_matmul_v2, transpose_quant_batch_matmul; "
                         "transpose_batch_matmul's int8 y scale)"));
      }
    }
  }

  pb::ExecuteRequest request;
  request.set_id(tiling_request->id());
  *request.mutable_problem() = tiling_request->problem();
  request.set_platform(tiling_request->platform());
  *request.mutable_platform_overrides() = tiling_request->platform_overrides();
  request.set_forced_strategy(tiling_request->forced_strategy());
  request.set_client_id(tiling_request->client_id());
  if (absl::Status tiling = ApplyTilingFile(request); !tiling.ok()) return tiling;
  if (absl::Status kernel = ApplyKernelScheduleFile(request); !kernel.ok()) return kernel;
  if (files->a.has_value() && !timing_only) {
    absl::StatusOr<pb::ExecuteInputs> inputs = InputsFromNpy(request.problem(), *files);
    if (!inputs.ok()) return inputs.status();
    *request.mutable_inputs() = *std::move(inputs);
  }
  request.set_seed(absl::GetFlag(FLAGS_seed));
  request.set_timing_only(timing_only);
  request.set_return_c(!out_path.empty());
  request.set_threads(absl::GetFlag(FLAGS_threads));
  return request;
}

}  // namespace npu::client
