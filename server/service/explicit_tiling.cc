#include "server/service/explicit_tiling.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/service/convert.h"
#include "server/service/validate.h"
#include "server/tiling/int_math.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/operator_table.h"
#include "server/tiling/schedule.h"
#include "server/tiling/tiling_data.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using tl::CeilDiv;

using tl::BasicField;
using tl::KEqZeroField;
using tl::ToMulField;
using tl::ToVectorField;

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

std::string FieldPath(std::string_view name) {
  return absl::StrCat("tiling.fields[", std::string(name), "]");
}

bool IsStreamKModel(tl::KernelModel model) {
  return model == tl::KernelModel::kStreamK || model == tl::KernelModel::kStreamKSplitK;
}

// A wire enum that must name a value: value - 1 is the engine's (CANN's)
// number. `name_field` / `name` is the matching CANN string, checked when
// given so that hand edits of only the name are caught.
template <typename Engine>
absl::StatusOr<Engine> EnumFromProto(absl::string_view field, int value, bool valid, int max_value,
                                     absl::string_view name_field, const std::string& name,
                                     std::string_view (*name_of)(Engine)) {
  if (value == 0) return FieldError(field, "required (UNSPECIFIED is not a value)");
  if (!valid || value > max_value) {
    return FieldError(field, absl::StrCat("unknown value ", value));
  }
  const Engine engine = static_cast<Engine>(value - 1);
  if (!name.empty() && name != name_of(engine)) {
    return FieldError(name_field, absl::StrCat("\"", name, "\" does not name the value of ", field,
                                               " (\"", std::string(name_of(engine)), "\")"));
  }
  return engine;
}

absl::StatusOr<tl::TilingKey> KeyFromProto(const pb::TilingResponse& tiling, tl::MatmulOp op) {
  const tl::KeyLayout layout = tl::KeyLayoutOf(op);
  if (!tiling.has_key()) {
    absl::StatusOr<tl::TilingKey> key = tl::TilingKey::Decode(tiling.tiling_key(), layout);
    if (!key.ok()) return FieldError("tiling.tiling_key", key.status().message());
    return key;
  }
  const pb::DecodedTilingKey& in = tiling.key();
  tl::TilingKey key;
  absl::StatusOr<tl::ApiLevel> level = EnumFromProto<tl::ApiLevel>(
      "tiling.key.api_level", in.api_level(), pb::ApiLevel_IsValid(in.api_level()), 3,
      "tiling.key.api_level_name", in.api_level_name(), &tl::ApiLevelName);
  if (!level.ok()) return level.status();
  absl::StatusOr<tl::KernelModel> model = EnumFromProto<tl::KernelModel>(
      "tiling.key.model", in.model(), pb::KernelModel_IsValid(in.model()), 8,
      "tiling.key.model_name", in.model_name(), &tl::KernelModelName);
  if (!model.ok()) return model.status();
  absl::StatusOr<tl::FullLoad> full_load = EnumFromProto<tl::FullLoad>(
      "tiling.key.full_load", in.full_load(), pb::FullLoad_IsValid(in.full_load()), 4,
      "tiling.key.full_load_name", in.full_load_name(), &tl::FullLoadName);
  if (!full_load.ok()) return full_load.status();
  absl::StatusOr<tl::L0cToOut> l0c2out = EnumFromProto<tl::L0cToOut>(
      "tiling.key.l0c2out", in.l0c2out(), pb::L0cToOut_IsValid(in.l0c2out()), 3,
      "tiling.key.l0c2out_name", in.l0c2out_name(), &tl::L0cToOutName);
  if (!l0c2out.ok()) return l0c2out.status();
  if (in.batch_model() > 15) {
    return FieldError("tiling.key.batch_model", absl::StrCat(in.batch_model(), " is not 4 bits"));
  }
  key.api_level = *level;
  key.trans_a = in.trans_a();
  key.trans_b = in.trans_b();
  key.batch_model = static_cast<uint8_t>(in.batch_model());
  key.model = *model;
  key.full_load = *full_load;
  key.l0c2out = *l0c2out;
  key.layout = layout;
  if (layout == tl::KeyLayout::kFused) {
    if (!pb::FusedOp_IsValid(in.fused_op())) {
      return FieldError("tiling.key.fused_op",
                        absl::StrCat("unknown value ", static_cast<int>(in.fused_op())));
    }
    key.fused_op = FusedOpFromProto(in.fused_op());
    if (!in.fused_op_name().empty() && in.fused_op_name() != tl::FusedOpKeyName(key.fused_op)) {
      return FieldError("tiling.key.fused_op_name",
                        absl::StrCat("\"", in.fused_op_name(), "\", but fused_op is ",
                                     std::string(tl::FusedOpKeyName(key.fused_op))));
    }
    if (in.inner_precise() > 1) {
      return FieldError("tiling.key.inner_precise",
                        absl::StrCat(in.inner_precise(), " must be 0 or 1"));
    }
    key.inner_precise = static_cast<uint8_t>(in.inner_precise());
  }
  return key;
}

// Checks of the key against the problem and itself.
absl::Status CheckKey(const pb::TilingResponse& tiling, const tl::TilingKey& key,
                      const tl::MatmulProblem& problem) {
  const std::string prefix = tiling.has_key() ? "tiling.key." : "tiling.tiling_key ";
  if (key.batch_model != 0 && problem.op == tl::MatmulOp::kMatMulV3) {
    return FieldError(absl::StrCat(prefix, "batch_model"),
                      absl::StrCat(key.batch_model, ", but MatMulV3 kernels use 0"));
  }
  if (key.batch_model > static_cast<uint8_t>(tl::BatchModel::kIterBatchBroadcastB)) {
    return FieldError(absl::StrCat(prefix, "batch_model"),
                      absl::StrCat(key.batch_model, " is no BATCH_MODEL (0..7)"));
  }
  if (key.layout == tl::KeyLayout::kFused && key.fused_op != problem.fused.op) {
    return FieldError(
        absl::StrCat(prefix, "fused_op"),
        absl::StrCat(std::string(tl::FusedOpKeyName(key.fused_op)), ", but problem.fused_op is ",
                     std::string(tl::FusedOpKeyName(problem.fused.op))));
  }
  // CANN leaves the transpose bits 0 in the K_EQUAL_ZERO and TO_MUL keys,
  // and clears MERGE_BATCH's transA when m is 1.
  const bool trans_free =
      key.batch_model == static_cast<uint8_t>(tl::BatchModel::kBatchMatMulToMul) ||
      (key.batch_model == static_cast<uint8_t>(tl::BatchModel::kMergeBatch) && problem.m == 1);
  if (key.model != tl::KernelModel::kKEqualZero && !trans_free) {
    if (key.trans_a != problem.trans_a) {
      return FieldError(absl::StrCat(prefix, "trans_a"),
                        absl::StrCat(key.trans_a, ", but problem.trans_a is ", problem.trans_a));
    }
    if (key.trans_b != problem.trans_b) {
      return FieldError(absl::StrCat(prefix, "trans_b"),
                        absl::StrCat(key.trans_b, ", but problem.trans_b is ", problem.trans_b));
    }
  }
  const bool k_zero_model = key.model == tl::KernelModel::kKEqualZero;
  if (k_zero_model != (problem.k == 0)) {
    return FieldError(absl::StrCat(prefix, "model"),
                      absl::StrCat(std::string(tl::KernelModelName(key.model)),
                                   k_zero_model ? " needs problem.k = 0" : " needs problem.k >= 1",
                                   "; k = ", problem.k));
  }
  return absl::OkStatus();
}

// The kernel type of the launch (`implied`, its kernel's for the key), which
// the request may restate.
absl::StatusOr<tl::KernelType> KernelTypeFromProto(const pb::TilingResponse& tiling,
                                                   const tl::TilingKey& key,
                                                   tl::KernelType implied) {
  const std::string implied_name(tl::KernelTypeName(implied));
  if (!pb::KernelType_IsValid(tiling.kernel_type())) {
    return FieldError("tiling.kernel_type",
                      absl::StrCat("unknown value ", static_cast<int>(tiling.kernel_type())));
  }
  if (tiling.kernel_type() != pb::KERNEL_TYPE_UNSPECIFIED &&
      tiling.kernel_type() != KernelTypeToProto(implied)) {
    return FieldError(
        "tiling.kernel_type",
        absl::StrCat(pb::KernelType_Name(tiling.kernel_type()), ", but model ",
                     std::string(tl::KernelModelName(key.model)), " with l0c2out ",
                     std::string(tl::L0cToOutName(key.l0c2out)), " runs as ", implied_name));
  }
  if (!tiling.kernel_type_name().empty() && tiling.kernel_type_name() != implied_name) {
    return FieldError(
        "tiling.kernel_type_name",
        absl::StrCat("\"", tiling.kernel_type_name(), "\", but the kernel runs as ", implied_name));
  }
  return implied;
}

// The named fields in struct order, each present once, of the right width
// and fitting it.
absl::StatusOr<tl::TilingData> DataFromProto(const pb::TilingResponse& tiling,
                                             tl::KernelId kernel) {
  const std::string_view struct_name = tl::TilingStructOf(kernel).name;
  const absl::Span<const tl::TilingFieldSpec> layout = tl::TilingStructOf(kernel).fields;
  std::map<std::string, const pb::TilingField*> given;
  for (const pb::TilingField& field : tiling.fields()) {
    const std::string path = FieldPath(field.name());
    auto known = std::find_if(layout.begin(), layout.end(),
                              [&](const tl::TilingFieldSpec& f) { return f.name == field.name(); });
    if (known == layout.end()) {
      return FieldError(path, absl::StrCat("not a field of ", std::string(struct_name)));
    }
    if (!given.emplace(field.name(), &field).second) return FieldError(path, "given twice");
    if (field.bits() != 0 && field.bits() != static_cast<uint32_t>(known->bits)) {
      return FieldError(
          absl::StrCat(path, ".bits"),
          absl::StrCat(field.bits(), ", but the field is ", known->bits, " bits wide"));
    }
    if (known->bits < 64 && field.value() >> known->bits != 0) {
      return FieldError(path,
                        absl::StrCat(field.value(), " does not fit in ", known->bits, " bits"));
    }
  }
  tl::TilingData data;
  data.kernel = kernel;
  for (const tl::TilingFieldSpec& f : layout) {
    auto it = given.find(std::string(f.name));
    if (it == given.end()) return FieldError(FieldPath(f.name), "missing");
    data.fields.push_back({f.name, it->second->value(), f.bits});
  }
  return data;
}

// Value checks of one struct, whose fields DataFromProto() found all present;
// errors name a field by its CANN name under "tiling.fields[...]".
class FieldChecker {
 public:
  FieldChecker(const tl::TilingData& data, const tl::MatmulProblem& problem, uint32_t block_dim)
      : data_(data), problem_(problem), block_dim_(block_dim) {}

  template <typename Field>
  uint64_t Get(Field field) const {
    return tl::Get(data_, field).value_or(0);
  }

  template <typename Field>
  absl::Status Equals(Field field, uint64_t expected, absl::string_view why) const {
    if (Get(field) != expected) {
      return FieldError(Path(field), absl::StrCat(Get(field), ", but ", why, " is ", expected));
    }
    return absl::OkStatus();
  }

  template <typename Field>
  absl::Status InRange(Field field, uint64_t min, uint64_t max, absl::string_view what = "") const {
    const uint64_t value = Get(field);
    if (value < min || value > max) {
      return FieldError(Path(field),
                        absl::StrCat(value, " must be in [", min, ", ", max, "]",
                                     what.empty() ? "" : absl::StrCat(" (", what, ")")));
    }
    return absl::OkStatus();
  }

  template <typename Field>
  absl::Status OneOf(Field field, std::initializer_list<uint64_t> allowed) const {
    const uint64_t value = Get(field);
    std::string list;
    for (uint64_t a : allowed) {
      if (a == value) return absl::OkStatus();
      absl::StrAppend(&list, list.empty() ? "" : " or ", a);
    }
    return FieldError(Path(field), absl::StrCat(value, " must be ", list));
  }

  // A positive multiple of `step` (the cube's fractal granularity).
  template <typename Field>
  absl::Status Multiple(Field field, uint64_t step, absl::string_view why) const {
    const uint64_t value = Get(field);
    if (value == 0 || value % step != 0) {
      return FieldError(Path(field), absl::StrCat(value, " must be a positive multiple of ", step,
                                                  " (", why, ")"));
    }
    return absl::OkStatus();
  }

  // The struct's echo of the problem's m, n and k.
  template <typename Field>
  absl::Status ProblemDims() const {
    absl::Status status;
    status.Update(Equals(Field::kM, static_cast<uint64_t>(problem_.m), "problem.m"));
    status.Update(Equals(Field::kN, static_cast<uint64_t>(problem_.n), "problem.n"));
    status.Update(Equals(Field::kK, static_cast<uint64_t>(problem_.k), "problem.k"));
    return status;
  }

  template <typename Field>
  absl::Status UsedCores(Field field) const {
    return InRange(field, 1, block_dim_, "at most block_dim");
  }

  template <typename Field>
  static std::string Path(Field field) {
    return FieldPath(tl::FieldSpec(field).name);
  }

 private:
  const tl::TilingData& data_;
  const tl::MatmulProblem& problem_;
  const uint32_t block_dim_;
};

absl::Status CheckCubeFields(const FieldChecker& f, const tl::TilingKey& key,
                             const tl::MatmulProblem& problem, uint32_t block_dim) {
  absl::Status status = f.ProblemDims<BasicField>();
  status.Update(f.UsedCores(BasicField::kUsedCoreNum));
  // The cube computes 16 x 16 output fractals and reads 32-byte K fractals
  // (BLOCK_CUBE and C0 of the kernels), so L0 and L1 blocks come in those
  // units.
  const uint64_t c0 = 32 / tl::DataTypeBytes(problem.dtype_a);
  status.Update(f.Multiple(BasicField::kBaseM, 16, "16-row cube fractals"));
  status.Update(f.Multiple(BasicField::kBaseN, 16, "16-column cube fractals"));
  status.Update(f.Multiple(BasicField::kBaseK, c0, "32-byte K fractals of A's dtype"));
  status.Update(f.Multiple(BasicField::kML1, 16, "16-row cube fractals"));
  status.Update(f.Multiple(BasicField::kNL1, 16, "16-column cube fractals"));
  if (status.ok()) {
    status.Update(
        f.Multiple(BasicField::kKL1, f.Get(BasicField::kBaseK), "whole baseK slices per L1 stage"));
  }
  const uint64_t tail_m = std::max<uint64_t>(1, f.Get(BasicField::kMTailCnt));
  const uint64_t tail_n = std::max<uint64_t>(1, f.Get(BasicField::kNTailCnt));
  if (status.ok() && tail_m * tail_n > block_dim) {
    status = FieldError(
        FieldChecker::Path(BasicField::kMTailCnt),
        absl::StrCat("mTailCnt * nTailCnt = ", tail_m * tail_n,
                     ": a tail tile is split among at most block_dim = ", block_dim, " cores"));
  }
  status.Update(f.InRange(BasicField::kMBaseTailSplitCnt, 1, std::numeric_limits<uint32_t>::max()));
  status.Update(f.InRange(BasicField::kNBaseTailSplitCnt, 1, std::numeric_limits<uint32_t>::max()));
  status.Update(f.OneOf(BasicField::kL1BufferNum, {2, 4}));
  status.Update(f.OneOf(BasicField::kL0cDb, {1, 2}));
  status.Update(f.OneOf(BasicField::kUbDb, {1, 2}));
  status.Update(f.InRange(BasicField::kL2CacheDisable, 0, 3));
  status.Update(f.Equals(BasicField::kMmadParam, problem.hf32 ? 1 : 0, "problem.hf32"));
  if (IsStreamKModel(key.model)) {
    status.Update(f.InRange(BasicField::kSkSingleCoreK, 1, std::numeric_limits<uint32_t>::max(),
                            "the K of one Stream-K slice"));
  }
  return status;
}

absl::Status CheckVectorFields(const FieldChecker& f, const tl::TilingKey& key,
                               const tl::MatmulProblem& problem) {
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  absl::Status status;
  switch (key.model) {
    case tl::KernelModel::kKEqualZero:
      status.Update(f.Equals(KEqZeroField::kTotalDataAmount, m * n, "m * n"));
      status.Update(f.UsedCores(KEqZeroField::kAivNum));
      break;
    case tl::KernelModel::kToMul: {
      status.Update(f.ProblemDims<ToMulField>());
      status.Update(f.UsedCores(ToMulField::kUsedCoreNum));
      status.Update(f.InRange(ToMulField::kBaseMN, 1, std::numeric_limits<uint32_t>::max()));
      status.Update(f.InRange(ToMulField::kBaseK, 1, std::numeric_limits<uint32_t>::max()));
      status.Update(f.OneOf(ToMulField::kDataCopyMode, {0, 1}));
      if (!status.ok()) break;
      // The kernel reads the derived counts as given; they must agree with
      // the block sizes so that the struct describes one tiling.
      const uint64_t base_mn = f.Get(ToMulField::kBaseMN), base_k = f.Get(ToMulField::kBaseK);
      status.Update(
          f.Equals(ToMulField::kTileNum, CeilDiv(m * n, base_mn), "ceil(m * n / baseMN)"));
      status.Update(f.Equals(ToMulField::kTailMN, m * n % base_mn, "m * n % baseMN"));
      status.Update(f.Equals(ToMulField::kTailK, k % base_k, "k % baseK"));
      status.Update(f.Equals(ToMulField::kLoopK, CeilDiv(k, base_k), "ceil(k / baseK)"));
      break;
    }
    case tl::KernelModel::kToMultiMul:
      status.Update(f.ProblemDims<ToVectorField>());
      status.Update(f.UsedCores(ToVectorField::kUsedCoreNum));
      status.Update(f.InRange(ToVectorField::kBaseM, 1, std::numeric_limits<uint32_t>::max()));
      status.Update(f.InRange(ToVectorField::kBaseN, 1, std::numeric_limits<uint32_t>::max()));
      status.Update(f.InRange(ToVectorField::kBaseK, 1, std::numeric_limits<uint32_t>::max()));
      break;
    default:
      break;
  }
  return status;
}

// The kernel families that may run `key` for `problem`, each reading its
// struct: the model's for MatMulV3; for the batch ops the batch model's
// (BatchMatMulV3's kernel table,
// matmul/batch_mat_mul_v3/op_kernel/arch35/batch_mat_mul_v3.cpp), where
// FusedMatMul's 2-D strategies inherited from MatMulV3 keep its structs and
// its add / mul K=0 plans on batched shapes take the batch basic struct
// (issue17 brief 3). The first is the one the engine's own plans take.
std::vector<tl::KernelId> KernelsOf(const tl::TilingKey& key, const tl::MatmulProblem& p) {
  const tl::KernelId matmul = tl::MatMulKernelOf(key.model);
  if (!tl::OperatorSpecOf(p.op).batched) return {matmul};
  switch (static_cast<tl::BatchModel>(key.batch_model)) {
    case tl::BatchModel::kIterBatchSingleBias:
      return {tl::KernelId::kBatchIterate};
    case tl::BatchModel::kMergeBatch:
      return {tl::KernelId::kBatchMerge};
    case tl::BatchModel::kBatchMatMulToMul:
      return {tl::KernelId::kBatchToMul};
    case tl::BatchModel::kForBatch:
      if (key.model == tl::KernelModel::kKEqualZero || p.op == tl::MatmulOp::kFusedMatMul) {
        return {matmul, tl::KernelId::kBatchCube};
      }
      return {tl::KernelId::kBatchCube};
    default:
      return {tl::KernelId::kBatchCube};
  }
}

// What a struct check sees: the struct, the key, the problem as the kernel
// walks it (A's batch merged into M), its C batches and the launch.
struct StructCheckInput {
  const tl::TilingData& data;
  const tl::TilingKey& key;
  tl::KernelType kernel_type;
  const tl::MatmulProblem& walked;
  uint64_t batch = 1;
  uint32_t block_dim = 0;
};

// MatMulV3's structs (and any other read by MatMulV3's checks), by the key's
// model: K=0 clears every batch of C.
absl::Status CheckMatMulStruct(const StructCheckInput& in) {
  const FieldChecker fields(in.data, in.walked, in.block_dim);
  if (in.key.model == tl::KernelModel::kKEqualZero) {
    absl::Status status =
        fields.Equals(KEqZeroField::kTotalDataAmount,
                      static_cast<uint64_t>(in.walked.m) * in.walked.n * in.batch, "m * n * batch");
    status.Update(fields.UsedCores(KEqZeroField::kAivNum));
    return status;
  }
  return in.kernel_type == tl::KernelType::kAivOnly
             ? CheckVectorFields(fields, in.key, in.walked)
             : CheckCubeFields(fields, in.key, in.walked, in.block_dim);
}

// The batch basic struct is MatMulV3's words plus batchDimAll and batchX3:
// its first words get MatMulV3's checks.
absl::Status CheckBatchCubeStruct(const StructCheckInput& in) {
  tl::TilingData basic = tl::NewTilingData<tl::BasicField>();
  for (size_t i = 0; i < basic.fields.size(); ++i) basic.fields[i].value = in.data.fields[i].value;
  const FieldChecker fields(basic, in.walked, in.block_dim);
  if (in.key.model == tl::KernelModel::kKEqualZero) {
    return fields.UsedCores(tl::BasicField::kUsedCoreNum);
  }
  absl::Status status = CheckCubeFields(fields, in.key, in.walked, in.block_dim);
  const FieldChecker batch_fields(in.data, in.walked, in.block_dim);
  status.Update(batch_fields.Equals(tl::BatchBasicField::kBatchDimAll, in.batch, "the C batches"));
  return status;
}

// The words the multi-batch structs share: the problem's dims and C batches
// first, the cube's precision and the L2 hint last.
template <typename F>
absl::Status CheckBatchDims(const FieldChecker& f, const StructCheckInput& in) {
  absl::Status status = f.ProblemDims<F>();
  status.Update(f.Equals(F::kB, in.batch, "the C batches"));
  return status;
}
template <typename F>
absl::Status CheckBatchFlags(const FieldChecker& f, const StructCheckInput& in) {
  absl::Status status = f.Equals(F::kMmadParam, in.walked.hf32 ? 1 : 0, "problem.hf32");
  status.Update(f.InRange(F::kL2CacheDisable, 0, 3));
  return status;
}

absl::Status CheckIterBatchStruct(const StructCheckInput& in) {
  using F = tl::IterBatchField;
  const FieldChecker f(in.data, in.walked, in.block_dim);
  const uint64_t c0 = 32 / tl::DataTypeBytes(in.walked.dtype_a);
  const uint64_t u32 = std::numeric_limits<uint32_t>::max();
  absl::Status status = CheckBatchDims<F>(f, in);
  status.Update(f.InRange(F::kIterBatchL1, 1, u32, "batches per L1 tile"));
  status.Update(f.InRange(F::kIterBatchL0, 1, u32, "batches per L0 block"));
  status.Update(f.Multiple(F::kBaseM, 16, "16-row cube fractals"));
  status.Update(f.Multiple(F::kBaseN, 16, "16-column cube fractals"));
  status.Update(f.Multiple(F::kBaseK, c0, "32-byte K fractals of A's dtype"));
  status.Update(CheckBatchFlags<F>(f, in));
  return status;
}

absl::Status CheckMergeBatchStruct(const StructCheckInput& in) {
  using F = tl::MergeBatchField;
  const FieldChecker f(in.data, in.walked, in.block_dim);
  const uint64_t c0 = 32 / tl::DataTypeBytes(in.walked.dtype_a);
  const uint64_t u32 = std::numeric_limits<uint32_t>::max();
  absl::Status status = CheckBatchDims<F>(f, in);
  status.Update(f.InRange(F::kBatchAL1, 1, u32, "batches per tile"));
  status.Update(f.InRange(F::kBatchBL1, 1, u32, "batches per tile"));
  status.Update(f.InRange(F::kBatchL0, 1, u32, "batches per L0 block"));
  status.Update(f.Multiple(F::kBaseK, c0, "32-byte K fractals of A's dtype"));
  if (status.ok()) {
    status.Update(f.Multiple(F::kKL1, f.Get(F::kBaseK), "whole baseK slices per L1 stage"));
  }
  status.Update(CheckBatchFlags<F>(f, in));
  return status;
}

absl::Status CheckBatchToMulStruct(const StructCheckInput& in) {
  using F = tl::BatchToMulField;
  const FieldChecker f(in.data, in.walked, in.block_dim);
  const uint64_t u32 = std::numeric_limits<uint32_t>::max();
  absl::Status status;
  status.Update(f.Equals(F::kM, static_cast<uint64_t>(in.walked.m), "problem.m"));
  status.Update(f.Equals(F::kN, static_cast<uint64_t>(in.walked.n), "problem.n"));
  status.Update(f.Equals(F::kB, in.batch, "the C batches"));
  status.Update(f.UsedCores(F::kUsedCoreNum));
  status.Update(f.InRange(F::kSingleCoreBatch, 1, u32, "batches per core"));
  status.Update(f.InRange(F::kBatchNum, 1, u32, "batches per round"));
  return status;
}

// The checks of each kernel family's struct, indexed by tl::KernelId.
using StructCheck = absl::Status (*)(const StructCheckInput&);
constexpr StructCheck kStructChecks[] = {
    CheckMatMulStruct,      // kUnstructured (never read from a request)
    CheckMatMulStruct,      // kMatMulCube
    CheckMatMulStruct,      // kMatMulZeroK
    CheckMatMulStruct,      // kMatMulToMul
    CheckMatMulStruct,      // kMatMulToVector
    CheckBatchCubeStruct,   // kBatchCube
    CheckIterBatchStruct,   // kBatchIterate
    CheckMergeBatchStruct,  // kBatchMerge
    CheckBatchToMulStruct,  // kBatchToMul
    CheckMatMulStruct,      // kBatchHighLevel (never read from a request)
    // QuantBatchMatmulV3's (never read: Execute refuses the operator).
    CheckMatMulStruct,  // kQuantBasic
    CheckMatMulStruct,  // kQuantStreamK
    CheckMatMulStruct,  // kQuantWithoutBatch
    CheckMatMulStruct,  // kQuantHighLevel
    // WeightQuantBatchMatmulV2's (never read: Execute takes CANN's plan only).
    CheckMatMulStruct,  // kWeightQuantAdaptiveSplit
    CheckMatMulStruct,  // kWeightQuantRegBase
    CheckMatMulStruct,  // kWeightQuantCustom
    // The transposed batch matmuls' (never read: their structs share
    // BatchMatMulV3TilingData's name, which reads as kBatchHighLevel).
    CheckMatMulStruct,  // kTransposeBatch
    CheckMatMulStruct,  // kTransposeQuantBatch
    // GroupedMatmul's (never read: Execute refuses the operator).
    CheckMatMulStruct,  // kGroupedNoQuant
    CheckMatMulStruct,  // kGroupedQuantBasicApi
    CheckMatMulStruct,  // kGroupedQuant
    CheckMatMulStruct,  // kGroupedWeightQuant
};
static_assert(std::size(kStructChecks) == tl::kKernelCount);

// The launch fits the chip: block_dim within its vector or cube cores.
absl::Status CheckBlockDim(const pb::TilingResponse& tiling, bool vector_only,
                           const tl::ChipSpec& chip) {
  const uint32_t core_limit = vector_only ? chip.aiv_num : chip.aic_num;
  if (tiling.block_dim() < 1 || tiling.block_dim() > core_limit) {
    return FieldError("tiling.block_dim",
                      absl::StrCat(tiling.block_dim(), " must be in [1, ", core_limit, "], the ",
                                   vector_only ? "vector" : "cube", " cores of ", chip.name));
  }
  return absl::OkStatus();
}

// The plan of a checked explicit tiling.
tl::TilingPlan PlanOf(const pb::TilingResponse& tiling, const tl::TilingKey& key,
                      tl::KernelType kernel_type, tl::TilingData data) {
  tl::TilingPlan plan;
  plan.strategy = tiling.strategy().empty() ? "EXPLICIT" : tiling.strategy();
  plan.key = key;
  plan.block_dim = tiling.block_dim();
  plan.kernel_type = kernel_type;
  plan.workspace_bytes = tiling.workspace_bytes();
  plan.detail = "explicit tiling from the request";
  if (kernel_type != tl::KernelType::kAivOnly) {
    // The kernel's view of the blocks is the struct; the rest of BlockTiling
    // is the engine's bookkeeping, echoed as given.
    const pb::BlockTiling& in = tiling.block();
    tl::BlockTiling& b = plan.block;
    tl::ReadBlockFields(data, b);
    if (tiling.has_block()) {
      b.step_m = in.step_m();
      b.step_n = in.step_n();
      b.step_ka = in.step_ka();
      b.step_kb = in.step_kb();
      b.depth_a1 = in.depth_a1();
      b.depth_b1 = in.depth_b1();
      b.single_core_m = in.single_core_m();
      b.single_core_n = in.single_core_n();
      b.k_cnt = in.k_cnt();
    }
  }
  plan.data = std::move(data);
  return plan;
}

}  // namespace

absl::StatusOr<tl::ChipSpec> ChipFromProto(const pb::ChipSpec& in) {
  tl::ChipSpec chip;
  chip.name = in.name();
  ForEachChipField([&](const tl::ChipField& field, const ChipFieldWire& wire) {
    field.Set(chip, wire.spec_value(in));
  });
  if (chip.name.size() > kMaxNameBytes) {
    return FieldError("tiling.platform.name",
                      absl::StrCat("at most ", kMaxNameBytes, " bytes, got ", chip.name.size()));
  }
  if (!in.npu_arch().empty()) {
    absl::StatusOr<tl::NpuArch> arch = tl::ParseNpuArch(in.npu_arch());
    if (!arch.ok()) return FieldError("tiling.platform.npu_arch", arch.status().message());
    chip.npu_arch = *arch;
  }
  absl::Status valid = tl::ValidateChip(chip);
  if (!valid.ok()) return FieldError("tiling.platform", valid.message());
  return chip;
}

absl::StatusOr<tl::TilingPlan> PlanFromExplicitTiling(const pb::TilingResponse& tiling,
                                                      const tl::MatmulProblem& problem,
                                                      const tl::ChipSpec& chip) {
  if (tiling.strategy().size() > kMaxNameBytes) {
    return FieldError("tiling.strategy", absl::StrCat("at most ", kMaxNameBytes, " bytes, got ",
                                                      tiling.strategy().size()));
  }
  absl::StatusOr<tl::TilingKey> key = KeyFromProto(tiling, problem.op);
  if (!key.ok()) return key.status();
  absl::Status status = CheckKey(tiling, *key, problem);
  if (!status.ok()) return status;
  // Checked after the parts, whose messages say more than a mismatch does.
  if (tiling.has_key() && tiling.tiling_key() != 0 && tiling.tiling_key() != key->Encode()) {
    return FieldError(
        "tiling.tiling_key",
        absl::StrCat(tiling.tiling_key(), " disagrees with tiling.key, which encodes ",
                     key->Encode(), "; edit both or set tiling_key to 0"));
  }
  const std::vector<tl::KernelId> kernels = KernelsOf(*key, problem);
  absl::StatusOr<tl::KernelType> kernel_type =
      KernelTypeFromProto(tiling, *key, tl::KernelTypeOf(kernels.front(), *key));
  if (!kernel_type.ok()) return kernel_type.status();

  const bool vector_only = *kernel_type == tl::KernelType::kAivOnly;
  status = CheckBlockDim(tiling, vector_only, chip);
  if (!status.ok()) return status;

  const auto chosen = std::find_if(kernels.begin(), kernels.end(), [&](tl::KernelId kernel) {
    return tl::TilingStructOf(kernel).name == tiling.tiling_struct();
  });
  if (chosen == kernels.end()) {
    std::string names;
    for (tl::KernelId kernel : kernels) {
      absl::StrAppend(&names, names.empty() ? "" : " or ",
                      std::string(tl::TilingStructOf(kernel).name));
    }
    return FieldError("tiling.tiling_struct",
                      absl::StrCat("\"", tiling.tiling_struct(), "\", but model ",
                                   std::string(tl::KernelModelName(key->model)),
                                   problem.op == tl::MatmulOp::kMatMulV3
                                       ? std::string()
                                       : absl::StrCat(" with batch model ", key->batch_model),
                                   " reads ", names));
  }
  const tl::KernelId kernel = *chosen;
  absl::StatusOr<tl::TilingData> data = DataFromProto(tiling, kernel);
  if (!data.ok()) return data.status();
  absl::StatusOr<tl::BatchShape> walk = tl::BatchShapeOf(problem);
  if (!walk.ok()) return FieldError("problem", walk.status().message());
  tl::MatmulProblem walked = problem;
  walked.m = static_cast<int64_t>(walk->rows);
  status = kStructChecks[static_cast<size_t>(kernel)](
      {*data, *key, *kernel_type, walked, walk->batch, tiling.block_dim()});
  if (!status.ok()) return status;

  tl::TilingPlan plan = PlanOf(tiling, *key, *kernel_type, *std::move(data));
  if (tl::KernelRowOf(kernel).block_in_struct) plan.block = tl::KernelBlock(plan, walked);
  return plan;
}

}  // namespace npu::server
