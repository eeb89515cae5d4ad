#include "server/service/convert.h"

#include <cassert>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "server/service/answer_walk.h"
#include "server/service/provenance.h"
#include "server/service/wire_answer.h"
#include "server/tiling/operator_table.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;

// The wire's dtypes and the engine's, pair by pair.
struct DataTypePair {
  pb::DataType wire;
  tl::DataType engine;
};
constexpr DataTypePair kDataTypePairs[] = {
    {pb::DATA_TYPE_FLOAT16, tl::DataType::kFloat16},
    {pb::DATA_TYPE_BFLOAT16, tl::DataType::kBFloat16},
    {pb::DATA_TYPE_FLOAT32, tl::DataType::kFloat32},
    {pb::DATA_TYPE_INT8, tl::DataType::kInt8},
    {pb::DATA_TYPE_INT4, tl::DataType::kInt4},
    {pb::DATA_TYPE_FLOAT8_E4M3FN, tl::DataType::kFloat8E4M3},
    {pb::DATA_TYPE_FLOAT8_E5M2, tl::DataType::kFloat8E5M2},
    {pb::DATA_TYPE_HIFLOAT8, tl::DataType::kHiFloat8},
    {pb::DATA_TYPE_FLOAT4_E2M1, tl::DataType::kFloat4E2M1},
    {pb::DATA_TYPE_FLOAT8_E8M0, tl::DataType::kFloat8E8M0},
    {pb::DATA_TYPE_INT32, tl::DataType::kInt32},
    {pb::DATA_TYPE_INT64, tl::DataType::kInt64},
    {pb::DATA_TYPE_UINT64, tl::DataType::kUint64},
    {pb::DATA_TYPE_FLOAT4_E1M2, tl::DataType::kFloat4E1M2},
};
static_assert(std::size(kDataTypePairs) == std::size(tl::kAllDataTypes),
              "every engine dtype has a wire value");

tl::Format FormatFromProto(pb::Format format) {
  switch (format) {
    case pb::FORMAT_UNSPECIFIED:  // documented default
    case pb::FORMAT_ND:
      return tl::Format::kNd;
    case pb::FORMAT_FRACTAL_NZ:
      return tl::Format::kFractalNz;
    default:
      break;
  }
  assert(false && "format must be validated before conversion");
  return tl::Format::kNd;
}

tl::MatmulOp OperatorFromProto(pb::Operator op) {
  for (const tl::OperatorSpec& spec : tl::Operators()) {
    if (op == spec.wire_value || (op == pb::OPERATOR_UNSPECIFIED && spec.wire_default)) {
      return spec.op;
    }
  }
  assert(false && "op must be validated before conversion");
  return tl::MatmulOp::kMatMulV3;
}

// The default operator stays unset, so that the canonical form of a request
// written before the field existed is unchanged.
pb::Operator OperatorToProto(tl::MatmulOp op) {
  const tl::OperatorSpec& spec = tl::OperatorSpecOf(op);
  return spec.wire_default ? pb::OPERATOR_UNSPECIFIED : static_cast<pb::Operator>(spec.wire_value);
}

}  // namespace

// The wire values are CANN's OPTYPE nibbles, as the engine's.
tl::FusedOp FusedOpFromProto(pb::FusedOp op) {
  assert(pb::FusedOp_IsValid(op) && "fused_op must be validated before conversion");
  return static_cast<tl::FusedOp>(op);
}

pb::FusedOp FusedOpToProto(tl::FusedOp op) { return static_cast<pb::FusedOp>(op); }

tl::DataType DataTypeFromProto(pb::DataType dtype) {
  for (const DataTypePair& pair : kDataTypePairs) {
    if (pair.wire == dtype) return pair.engine;
  }
  assert(false && "dtype must be validated before conversion");
  return tl::DataType::kFloat16;
}

pb::DataType DataTypeToProto(tl::DataType dtype) {
  for (const DataTypePair& pair : kDataTypePairs) {
    if (pair.engine == dtype) return pair.wire;
  }
  return pb::DATA_TYPE_UNSPECIFIED;
}

pb::Format FormatToProto(tl::Format format) {
  switch (format) {
    case tl::Format::kNd:
      return pb::FORMAT_ND;
    case tl::Format::kFractalNz:
      return pb::FORMAT_FRACTAL_NZ;
  }
  return pb::FORMAT_UNSPECIFIED;
}

pb::ApiLevel ApiLevelToProto(tl::ApiLevel level) {
  switch (level) {
    case tl::ApiLevel::kHigh:
      return pb::API_LEVEL_HIGH;
    case tl::ApiLevel::kBasic:
      return pb::API_LEVEL_BASIC;
    case tl::ApiLevel::kTensor:
      return pb::API_LEVEL_TENSOR;
  }
  return pb::API_LEVEL_UNSPECIFIED;
}

pb::KernelModel KernelModelToProto(tl::KernelModel model) {
  switch (model) {
    case tl::KernelModel::kBasic:
      return pb::KERNEL_MODEL_BASIC;
    case tl::KernelModel::kStreamK:
      return pb::KERNEL_MODEL_STREAM_K;
    case tl::KernelModel::kKEqualZero:
      return pb::KERNEL_MODEL_K_EQUAL_ZERO;
    case tl::KernelModel::kToMul:
      return pb::KERNEL_MODEL_TO_MUL;
    case tl::KernelModel::kToMultiMul:
      return pb::KERNEL_MODEL_TO_MULTI_MUL;
    case tl::KernelModel::kSlice:
      return pb::KERNEL_MODEL_SLICE;
    case tl::KernelModel::kBasicSplitK:
      return pb::KERNEL_MODEL_BASIC_SPLIT_K;
    case tl::KernelModel::kStreamKSplitK:
      return pb::KERNEL_MODEL_STREAM_K_SPLIT_K;
  }
  return pb::KERNEL_MODEL_UNSPECIFIED;
}

pb::FullLoad FullLoadToProto(tl::FullLoad full_load) {
  switch (full_load) {
    case tl::FullLoad::kNone:
      return pb::FULL_LOAD_NONE;
    case tl::FullLoad::kA:
      return pb::FULL_LOAD_A;
    case tl::FullLoad::kB:
      return pb::FULL_LOAD_B;
    case tl::FullLoad::kAB:
      return pb::FULL_LOAD_AB;
  }
  return pb::FULL_LOAD_UNSPECIFIED;
}

pb::L0cToOut L0cToOutToProto(tl::L0cToOut out) {
  switch (out) {
    case tl::L0cToOut::kOnTheFly:
      return pb::L0C_TO_OUT_ON_THE_FLY;
    case tl::L0cToOut::kNdFixpipe1To1:
      return pb::L0C_TO_OUT_ND_FIXPIPE_1_1;
    case tl::L0cToOut::kNdFixpipe1To2:
      return pb::L0C_TO_OUT_ND_FIXPIPE_1_2;
  }
  return pb::L0C_TO_OUT_UNSPECIFIED;
}

pb::KernelType KernelTypeToProto(tl::KernelType type) {
  switch (type) {
    case tl::KernelType::kAicOnly:
      return pb::KERNEL_TYPE_AIC_ONLY;
    case tl::KernelType::kMixed1To2:
      return pb::KERNEL_TYPE_MIX_AIC_1_AIV_2;
    case tl::KernelType::kAivOnly:
      return pb::KERNEL_TYPE_AIV_ONLY;
    case tl::KernelType::kMixed1To1:
      return pb::KERNEL_TYPE_MIX_AIC_1_AIV_1;
  }
  return pb::KERNEL_TYPE_UNSPECIFIED;
}

namespace {

// The problem's groups, each converted on its own: the slice view (its
// own message), the batch and the fused epilogue (fields of the problem
// message).
void SliceFromProto(const pb::SliceView& in, tl::SliceView& out) {
  out.enabled = true;
  out.rank = in.rank();
  out.batch = in.batch();
  out.batch_stride = in.batch_stride();
  out.row_stride = in.row_stride();
}

void SliceToProto(const tl::SliceView& in, pb::SliceView& out) {
  out.set_enabled(true);
  out.set_rank(in.rank);
  out.set_batch(in.batch);
  out.set_batch_stride(in.batch_stride);
  out.set_row_stride(in.row_stride);
}

void BatchFromProto(const pb::MatmulProblem& in, tl::BatchDims& out) {
  out.a.assign(in.batch_a().begin(), in.batch_a().end());
  out.b.assign(in.batch_b().begin(), in.batch_b().end());
  out.c.assign(in.batch_c().begin(), in.batch_c().end());
  out.bias.assign(in.batch_bias().begin(), in.batch_bias().end());
  out.a_interleaved = in.a_batch_interleaved();
  out.b_interleaved = in.b_batch_interleaved();
}

void BatchToProto(const tl::BatchDims& in, pb::MatmulProblem& out) {
  out.mutable_batch_a()->Add(in.a.begin(), in.a.end());
  out.mutable_batch_b()->Add(in.b.begin(), in.b.end());
  out.mutable_batch_c()->Add(in.c.begin(), in.c.end());
  out.mutable_batch_bias()->Add(in.bias.begin(), in.bias.end());
  out.set_a_batch_interleaved(in.a_interleaved);
  out.set_b_batch_interleaved(in.b_interleaved);
}

void FusedFromProto(const pb::MatmulProblem& in, tl::FusedEpilogue& out) {
  out.op = FusedOpFromProto(in.fused_op());
  out.x3_shape.assign(in.x3_shape().begin(), in.x3_shape().end());
  out.inner_precise = in.inner_precise();
}

void FusedToProto(const tl::FusedEpilogue& in, pb::MatmulProblem& out) {
  out.set_fused_op(FusedOpToProto(in.op));
  out.mutable_x3_shape()->Add(in.x3_shape.begin(), in.x3_shape.end());
  out.set_inner_precise(in.inner_precise);
}

// An optional quant input: present when its dtype is set.
void QuantTensorFromProto(const pb::QuantTensor& in, tl::QuantTensorSpec& out) {
  out.present = in.dtype() != pb::DATA_TYPE_UNSPECIFIED;
  if (!out.present) return;
  out.dtype = DataTypeFromProto(in.dtype());
  out.shape.assign(in.shape().begin(), in.shape().end());
}

void QuantTensorToProto(const tl::QuantTensorSpec& in, pb::QuantTensor& out) {
  if (!in.present) return;
  out.set_dtype(DataTypeToProto(in.dtype));
  out.mutable_shape()->Add(in.shape.begin(), in.shape.end());
}

void QuantFromProto(const pb::QuantInputs& in, tl::QuantInputs& out) {
  QuantTensorFromProto(in.scale(), out.scale);
  QuantTensorFromProto(in.pertoken_scale(), out.pertoken);
  QuantTensorFromProto(in.offset(), out.offset);
  QuantTensorFromProto(in.antiquant_scale(), out.antiquant_scale);
  QuantTensorFromProto(in.antiquant_offset(), out.antiquant_offset);
  QuantTensorFromProto(in.quant_scale(), out.quant_scale);
  QuantTensorFromProto(in.quant_offset(), out.quant_offset);
  out.group_size = in.group_size();
  out.bias_shape.assign(in.bias_shape().begin(), in.bias_shape().end());
  out.group_size_m = in.group_size_m();
  out.group_size_n = in.group_size_n();
  out.group_size_k = in.group_size_k();
  out.tensor_api = !in.without_tensor_api();
}

void QuantToProto(const tl::QuantInputs& in, pb::MatmulProblem& out) {
  if (in.IsDefault()) return;
  pb::QuantInputs* quant = out.mutable_quant();
  QuantTensorToProto(in.scale, *quant->mutable_scale());
  QuantTensorToProto(in.pertoken, *quant->mutable_pertoken_scale());
  QuantTensorToProto(in.offset, *quant->mutable_offset());
  quant->mutable_bias_shape()->Add(in.bias_shape.begin(), in.bias_shape.end());
  quant->set_group_size_m(in.group_size_m);
  quant->set_group_size_n(in.group_size_n);
  quant->set_group_size_k(in.group_size_k);
  quant->set_without_tensor_api(!in.tensor_api);
  QuantTensorToProto(in.antiquant_scale, *quant->mutable_antiquant_scale());
  QuantTensorToProto(in.antiquant_offset, *quant->mutable_antiquant_offset());
  QuantTensorToProto(in.quant_scale, *quant->mutable_quant_scale());
  QuantTensorToProto(in.quant_offset, *quant->mutable_quant_offset());
  quant->set_group_size(in.group_size);
}

// The transposed batch matmuls' group. The batch split is absent for 1, as
// the default problem has it, so that equal problems give equal messages.
void TransposeFromProto(const pb::TransposeAttrs& in, tl::TransposeAttrs& out) {
  out.perm_x1.assign(in.perm_x1().begin(), in.perm_x1().end());
  out.perm_x2.assign(in.perm_x2().begin(), in.perm_x2().end());
  out.perm_y.assign(in.perm_y().begin(), in.perm_y().end());
  out.batch = in.batch();
  out.batch_split_factor = in.has_batch_split_factor() ? in.batch_split_factor() : 1;
  QuantTensorFromProto(in.scale(), out.scale);
}

void TransposeToProto(const tl::TransposeAttrs& in, pb::MatmulProblem& out) {
  if (in.IsDefault()) return;
  pb::TransposeAttrs* t = out.mutable_transpose();
  t->mutable_perm_x1()->Add(in.perm_x1.begin(), in.perm_x1.end());
  t->mutable_perm_x2()->Add(in.perm_x2.begin(), in.perm_x2.end());
  t->mutable_perm_y()->Add(in.perm_y.begin(), in.perm_y.end());
  t->set_batch(in.batch);
  if (in.batch_split_factor != 1) t->set_batch_split_factor(in.batch_split_factor);
  QuantTensorToProto(in.scale, *t->mutable_scale());
  if (!in.scale.present) t->clear_scale();
}

// GroupedMatmul's group: the ten tensor lists in IR order, then the
// attributes. An empty storage shape is the origin's; group_type is absent
// for CANN's default -1.
using GroupedListField = const pb::GroupedTensorList& (pb::GroupedInputs::*)() const;
using GroupedMutableField = pb::GroupedTensorList* (pb::GroupedInputs::*)();
constexpr GroupedListField kGroupedLists[] = {
    &pb::GroupedInputs::x,
    &pb::GroupedInputs::weight,
    &pb::GroupedInputs::bias,
    &pb::GroupedInputs::scale,
    &pb::GroupedInputs::offset,
    &pb::GroupedInputs::antiquant_scale,
    &pb::GroupedInputs::antiquant_offset,
    &pb::GroupedInputs::group_list,
    &pb::GroupedInputs::per_token_scale,
    &pb::GroupedInputs::y,
};
constexpr GroupedMutableField kGroupedMutableLists[] = {
    &pb::GroupedInputs::mutable_x,
    &pb::GroupedInputs::mutable_weight,
    &pb::GroupedInputs::mutable_bias,
    &pb::GroupedInputs::mutable_scale,
    &pb::GroupedInputs::mutable_offset,
    &pb::GroupedInputs::mutable_antiquant_scale,
    &pb::GroupedInputs::mutable_antiquant_offset,
    &pb::GroupedInputs::mutable_group_list,
    &pb::GroupedInputs::mutable_per_token_scale,
    &pb::GroupedInputs::mutable_y,
};
static_assert(std::size(kGroupedLists) == tl::kGroupedTensorCount);
static_assert(std::size(kGroupedMutableLists) == tl::kGroupedTensorCount);

void GroupedFromProto(const pb::GroupedInputs& in, tl::GroupedInputs& out) {
  for (size_t t = 0; t < tl::kGroupedTensorCount; ++t) {
    const pb::GroupedTensorList& list = (in.*kGroupedLists[t])();
    tl::GroupedTensorList& to = out.tensors[t];
    if (list.instances_size() == 0) continue;  // absent: dtype and format mean nothing
    to.dtype = DataTypeFromProto(list.dtype());
    to.format = FormatFromProto(list.format());
    to.instances.resize(list.instances_size());
    for (int i = 0; i < list.instances_size(); ++i) {
      const pb::GroupedShape& shape = list.instances(i);
      to.instances[i].origin.assign(shape.origin().begin(), shape.origin().end());
      if (shape.storage_size() == 0) {
        to.instances[i].storage = to.instances[i].origin;
      } else {
        to.instances[i].storage.assign(shape.storage().begin(), shape.storage().end());
      }
    }
  }
  out.split_item = in.split_item();
  out.dtype = in.dtype();
  out.transpose_weight = in.transpose_weight();
  out.transpose_x = in.transpose_x();
  out.group_type = in.has_group_type() ? in.group_type() : tl::kGroupTypeNone;
  out.group_list_type = in.group_list_type();
  out.act_type = in.act_type();
  out.tuning_config.assign(in.tuning_config().begin(), in.tuning_config().end());
  out.token_histogram.assign(in.token_histogram().begin(), in.token_histogram().end());
}

void GroupedToProto(const tl::GroupedInputs& in, pb::MatmulProblem& out) {
  if (in.IsDefault()) return;
  pb::GroupedInputs* g = out.mutable_grouped();
  for (size_t t = 0; t < tl::kGroupedTensorCount; ++t) {
    const tl::GroupedTensorList& list = in.tensors[t];
    if (!list.present()) continue;
    pb::GroupedTensorList* to = (g->*kGroupedMutableLists[t])();
    to->set_dtype(DataTypeToProto(list.dtype));
    to->set_format(FormatToProto(list.format));
    for (const tl::GroupedShape& shape : list.instances) {
      pb::GroupedShape* s = to->add_instances();
      s->mutable_origin()->Add(shape.origin.begin(), shape.origin.end());
      if (shape.storage != shape.origin) {
        s->mutable_storage()->Add(shape.storage.begin(), shape.storage.end());
      }
    }
  }
  g->set_split_item(in.split_item);
  g->set_dtype(in.dtype);
  g->set_transpose_weight(in.transpose_weight);
  g->set_transpose_x(in.transpose_x);
  if (in.group_type != tl::kGroupTypeNone) g->set_group_type(in.group_type);
  g->set_group_list_type(in.group_list_type);
  g->set_act_type(in.act_type);
  g->mutable_tuning_config()->Add(in.tuning_config.begin(), in.tuning_config.end());
  g->mutable_token_histogram()->Add(in.token_histogram.begin(), in.token_histogram.end());
}

}  // namespace

tl::MatmulProblem ProblemFromProto(const pb::MatmulProblem& in) {
  tl::MatmulProblem out;
  ProblemFromProto(in, out);
  return out;
}

void ProblemFromProto(const pb::MatmulProblem& in, tl::MatmulProblem& out) {
  out.m = in.m();
  out.n = in.n();
  out.k = in.k();
  // GROUPED_MATMUL leaves them unset (its dtypes are its lists'); the
  // engine then keeps its defaults and refuses any other value.
  if (in.dtype_a() != pb::DATA_TYPE_UNSPECIFIED) out.dtype_a = DataTypeFromProto(in.dtype_a());
  if (in.dtype_b() != pb::DATA_TYPE_UNSPECIFIED) out.dtype_b = DataTypeFromProto(in.dtype_b());
  if (in.dtype_c() != pb::DATA_TYPE_UNSPECIFIED) out.dtype_c = DataTypeFromProto(in.dtype_c());
  out.has_bias = in.has_bias();
  // Without a bias the engine ignores dtype_bias; keep its default so that
  // equivalent requests convert to equal problems (and share a cache entry).
  if (in.has_bias()) out.dtype_bias = DataTypeFromProto(in.dtype_bias());
  out.trans_a = in.trans_a();
  out.trans_b = in.trans_b();
  out.format_a = FormatFromProto(in.format_a());
  out.format_b = FormatFromProto(in.format_b());
  out.format_c = FormatFromProto(in.format_c());
  out.storage_shape_b.assign(in.storage_shape_b().begin(), in.storage_shape_b().end());
  out.hf32 = in.hf32();
  out.force_grp_acc_fp32 = in.force_grp_acc_fp32();
  out.deterministic_level = in.deterministic_level();
  out.avoid_tensor_api = in.avoid_tensor_api();
  if (in.a_slice().enabled()) SliceFromProto(in.a_slice(), out.a_slice);
  out.op = OperatorFromProto(in.op());
  BatchFromProto(in, out.batch);
  FusedFromProto(in, out.fused);
  if (in.has_quant()) QuantFromProto(in.quant(), out.quant);
  if (in.has_transpose()) TransposeFromProto(in.transpose(), out.transpose);
  if (in.has_grouped()) GroupedFromProto(in.grouped(), out.grouped);
}

pb::MatmulProblem ProblemToProto(const tl::MatmulProblem& in) {
  pb::MatmulProblem out;
  if (in.op == tl::MatmulOp::kGroupedMatmul) {
    // Its problem is the group alone (the other fields stay unset).
    out.set_op(OperatorToProto(in.op));
    GroupedToProto(in.grouped, out);
    return out;
  }
  out.set_m(in.m);
  out.set_n(in.n);
  out.set_k(in.k);
  out.set_dtype_a(DataTypeToProto(in.dtype_a));
  out.set_dtype_b(DataTypeToProto(in.dtype_b));
  out.set_dtype_c(DataTypeToProto(in.dtype_c));
  out.set_has_bias(in.has_bias);
  if (in.has_bias) out.set_dtype_bias(DataTypeToProto(in.dtype_bias));
  out.set_trans_a(in.trans_a);
  out.set_trans_b(in.trans_b);
  out.set_format_a(FormatToProto(in.format_a));
  out.set_format_b(FormatToProto(in.format_b));
  out.set_format_c(FormatToProto(in.format_c));
  out.mutable_storage_shape_b()->Add(in.storage_shape_b.begin(), in.storage_shape_b.end());
  out.set_hf32(in.hf32);
  out.set_force_grp_acc_fp32(in.force_grp_acc_fp32);
  out.set_deterministic_level(in.deterministic_level);
  out.set_avoid_tensor_api(in.avoid_tensor_api);
  if (in.a_slice.enabled) SliceToProto(in.a_slice, *out.mutable_a_slice());
  out.set_op(OperatorToProto(in.op));
  BatchToProto(in.batch, out);
  FusedToProto(in.fused, out);
  QuantToProto(in.quant, out);
  TransposeToProto(in.transpose, out);
  return out;
}

std::string_view PlatformName(const RequestParts& request) {
  return request.platform.empty()
             ? tl::kDefaultPlatform
             : std::string_view(request.platform.data(), request.platform.size());
}

absl::StatusOr<tl::ChipSpec> ResolveChip(const pb::TilingRequest& request) {
  return ResolveChip(PartsOf(request));
}

absl::StatusOr<tl::ChipSpec> ResolveChip(const RequestParts& request) {
  absl::StatusOr<tl::ChipSpec> found = tl::FindPlatform(PlatformName(request));
  if (!found.ok()) {
    return absl::Status(found.status().code(),
                        absl::StrCat("platform: ", found.status().message()));
  }
  tl::ChipSpec chip = *std::move(found);
  // The built-in profiles are valid as shipped (convert_test checks each
  // one): only overrides need the checks below.
  if (request.overrides == nullptr) return chip;
  const pb::PlatformOverrides& o = *request.overrides;
  ForEachChipField([&](const tl::ChipField& field, const ChipFieldWire& wire) {
    if (wire.has_override(o)) field.Set(chip, wire.override_value(o));
  });
  absl::Status valid = tl::ValidateChip(chip);
  if (!valid.ok()) {
    return absl::Status(valid.code(), absl::StrCat("platform: ", valid.message()));
  }
  // L0A and L0B are filled from L1, so no core has them larger than L1. The
  // engine's per-field ranges allow it, and BASIC_ASWT's resident-operand
  // sizing then clamps base_m or base_n to 0 and divides by it: one GetTiling
  // call with such overrides killed the server with SIGFPE (found by the
  // tiling_request fuzzer; tests/fuzz/corpus/tiling_request/regression-*).
  // The strategy now refuses platforms that leave it no block width; this
  // check stays because such a chip is not one the engine should be asked
  // about at all.
  if (chip.l0a_bytes > chip.l1_bytes || chip.l0b_bytes > chip.l1_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "platform: l0a_bytes=", chip.l0a_bytes, " and l0b_bytes=", chip.l0b_bytes,
        " must not exceed l1_bytes=", chip.l1_bytes, " (L0A and L0B are filled from L1)"));
  }
  return chip;
}

pb::ChipSpec ChipToProto(const tl::ChipSpec& chip) {
  pb::ChipSpec out;
  out.set_name(chip.name);
  ForEachChipField([&](const tl::ChipField& field, const ChipFieldWire& wire) {
    wire.set_spec(out, field.Get(chip));
  });
  out.set_npu_arch(std::string(tl::NpuArchName(chip.npu_arch)));
  return out;
}

void ChipFieldsToOverrides(const tl::ChipSpec& chip, pb::PlatformOverrides* out) {
  ForEachChipField([&](const tl::ChipField& field, const ChipFieldWire& wire) {
    wire.set_override(*out, field.Get(chip));
  });
}

namespace {

// The message sink of WalkAnswer() (answer_walk.h): each field is set in
// the message with the accessor its descriptor names. Defaults are left
// unset, as the wire sink leaves them out, though to a proto3 message an
// unset scalar and one set to its default are the same.
template <typename M>
class MessageSink {
 public:
  explicit MessageSink(M* message) : message_(message) {}

  template <typename Field>
  void Uint(const Field& field, uint64_t value) {
    static_assert(std::is_same_v<typename Field::Message, M>, "a field of another message");
    if (value != 0) field.Set(*message_, value);
  }
  template <typename T>
  void Enum(const answer::ScalarField<M, T>& field, T value) {
    if (value != 0) (message_->*field.set)(value);
  }
  void String(const answer::StringField<M>& field, std::string_view value) {
    if (!value.empty()) (message_->*field.mutable_string)()->assign(value.data(), value.size());
  }
  void Text(const answer::StringField<M>& field, const tl::LazyText& text) {
    text.AppendTo((message_->*field.mutable_string)());
  }
  template <typename Sub, typename Body>
  void Message(const answer::MessageField<M, Sub>& field, const Body& body) {
    MessageSink<Sub> sub((message_->*field.get)());
    body(sub);
  }
  template <typename ForEach>
  void Packed(const answer::PackedField<M>& field, size_t count, const ForEach& for_each) {
    if (count == 0) return;
    google::protobuf::RepeatedField<uint32_t>* values = (message_->*field.mutable_values)();
    values->Reserve(static_cast<int>(count));
    for_each([values](uint32_t value) { values->AddAlreadyReserved(value); });
  }
  template <typename Body>
  void Run(size_t /*count*/, const Body& body) {
    body(*this);
  }

 private:
  M* const message_;
};

}  // namespace

void DecisionToProto(const tl::TilingDecision& decision, const tl::ChipSpec& chip,
                     pb::TilingResponse* response, bool include_trace, pb::ResponseView view) {
  response->Clear();
  AnswerForm form;
  form.view = view;
  form.include_trace = include_trace;
  MessageSink<pb::TilingResponse> sink(response);
  answer::WalkAnswer(decision, chip, form, sink);
}

void ApplyView(pb::ResponseView view, pb::TilingResponse* response) {
  if (view != pb::RESPONSE_VIEW_COMPACT) return;
  response->clear_key();
  response->clear_tiling_struct();
  response->clear_fields();
  response->clear_kernel_type_name();
  response->clear_detail();
  response->clear_block();
  response->clear_platform();
  response->clear_provenance();
}

}  // namespace npu::server
