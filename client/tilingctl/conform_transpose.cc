// Schema "cann950-ut-decoded/1" for TransposeBatchMatMul and
// TransposeQuantBatchMatMul (tests/data/cann950_tbmm/README.md): a case
// object as a request. Its expectations are judged as the other decoded
// cases' (FirstDecodedMismatch, conform_ut_decoded.cc).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
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
using conform_internal::SetDtypes;
using conform_internal::SetFormats;
using conform_internal::SetShape;

using Dims = std::vector<int64_t>;

std::string DimsText(const Dims& dims) { return absl::StrCat("[", absl::StrJoin(dims, ", "), "]"); }

// The integer list under `key` (absent or null: nullopt).
absl::StatusOr<std::optional<Dims>> GetList(const Json& object, const char* key,
                                            const std::string& path) {
  if (!object.is_object()) return std::optional<Dims>();
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<Dims>();
  if (!it->is_array()) return BadField(path, absl::StrCat("not a list: ", it->dump()));
  Dims dims;
  for (const Json& v : *it) {
    if (!v.is_number_integer()) return BadField(path, absl::StrCat("not an integer: ", v.dump()));
    dims.push_back(v.get<int64_t>());
  }
  return std::optional<Dims>(std::move(dims));
}

// The stored shape of a tensor whose logical dims are `logical`, read
// through `perm` (logical[i] = stored[perm[i]]); nullopt for a perm that is
// not a permutation (CANN refuses it; the stored shape is then not checked).
std::optional<Dims> StoredThrough(const Dims& perm, const Dims& logical) {
  if (perm.size() != logical.size()) return std::nullopt;
  Dims stored(logical.size(), -1);
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || static_cast<size_t>(perm[i]) >= logical.size() || stored[perm[i]] != -1) {
      return std::nullopt;
    }
    stored[perm[i]] = logical[i];
  }
  return stored;
}

// A scale input of the quantized op: its dtype and the storage shape CANN
// reads.
absl::Status SetScale(const Json& c, const char* dtype_key, const char* shape_key,
                      pb::QuantTensor* out) {
  auto it = c.find(dtype_key);
  if (it == c.end() || it->is_null()) return absl::OkStatus();  // absent
  absl::StatusOr<pb::DataType> dtype = ParseDtype(*it, dtype_key);
  if (!dtype.ok()) return dtype.status();
  out->set_dtype(*dtype);
  auto storage = c.find("storage_shapes");
  if (storage == c.end()) return absl::OkStatus();
  absl::StatusOr<std::optional<Dims>> shape =
      GetList(*storage, shape_key, absl::StrCat("storage_shapes.", shape_key));
  if (!shape.ok()) return shape.status();
  if (shape->has_value()) {
    for (int64_t d : **shape) out->add_shape(d);
  }
  return absl::OkStatus();
}

// The platform: core counts and buffer sizes. The vector core count is the
// one the op's compile info really holds (test_harness), where it reads one:
// TransposeBatchMatMul never does (its compile info holds 0, the default
// platform's count stands); TransposeQuantBatchMatMul's FP8 mode does.
absl::Status ApplyPlatform(const Json& c, pb::TilingRequest* request, std::string* inexpressible) {
  auto it = c.find("platform");
  if (it == c.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) return BadField("platform", "not an object");
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
    auto v = it->find(size.key);
    if (v == it->end() || v->is_null()) continue;
    absl::StatusOr<conform_internal::PlatformFigure> figure =
        GetPlatformFigure(*v, absl::StrCat("platform.", size.key));
    if (!figure.ok()) return figure.status();
    (o->*(size.set))(figure->value);
  }
  if (auto v = it->find("core_num"); v != it->end() && !v->is_null()) {
    absl::StatusOr<conform_internal::PlatformFigure> figure =
        GetPlatformFigure(*v, "platform.core_num");
    if (!figure.ok()) return figure.status();
    o->set_aic_num(figure->value32);
  }
  if (auto v = it->find("npu_arch_effective");
      v != it->end() && v->is_string() && v->get<std::string>() != "DAV_3510") {
    *inexpressible =
        absl::StrCat("platform ", v->get<std::string>(), ": the engine answers for DAV_3510 only");
  }
  auto harness = c.find("test_harness");
  if (harness != c.end() && harness->is_object()) {
    absl::StatusOr<int64_t> aiv =
        GetInt(*harness, "aiv_num_seen_by_tiling", "test_harness.aiv_num_seen_by_tiling", 0);
    if (!aiv.ok()) return aiv.status();
    // 0 (TransposeBatchMatMul, and one MXFP8 case): not read.
    if (*aiv > 0) o->set_aiv_num(static_cast<uint32_t>(*aiv));
  }
  return absl::OkStatus();
}

}  // namespace

namespace conform_internal {

absl::StatusOr<pb::TilingRequest> RequestFromTransposeCase(const Json& c, pb::Operator op,
                                                           std::string* inexpressible,
                                                           std::string* note) {
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_op(op);
  for (absl::Status (*step)(const Json&, pb::MatmulProblem*) : {SetShape, SetDtypes, SetFormats}) {
    absl::Status status = step(c, p);
    if (!status.ok()) return status;
  }
  absl::StatusOr<bool> bias = GetBool(c, "bias", "bias");
  if (!bias.ok()) return bias.status();
  p->set_has_bias(*bias);
  if (*bias) p->set_dtype_bias(p->dtype_c());
  absl::StatusOr<bool> hf32 = GetBool(c, "enable_hf32_attr", "enable_hf32_attr");
  if (!hf32.ok()) return hf32.status();
  p->set_hf32(*hf32);

  pb::TransposeAttrs* t = p->mutable_transpose();
  Dims perms[3];
  const char* const kPerms[] = {"perm_x1", "perm_x2", "perm_y"};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::optional<Dims>> perm = GetList(c, kPerms[i], kPerms[i]);
    if (!perm.ok()) return perm.status();
    if (perm->has_value()) perms[i] = **perm;
  }
  t->mutable_perm_x1()->Add(perms[0].begin(), perms[0].end());
  t->mutable_perm_x2()->Add(perms[1].begin(), perms[1].end());
  t->mutable_perm_y()->Add(perms[2].begin(), perms[2].end());
  auto batch_it = c.find("batch");
  if (batch_it == c.end() || !batch_it->is_object()) return BadField("batch", "not an object");
  absl::StatusOr<int64_t> batch = GetInt(*batch_it, "batch_c", "batch.batch_c");
  if (!batch.ok()) return batch.status();
  t->set_batch(*batch);
  absl::StatusOr<int64_t> split = GetInt(c, "batch_split_factor", "batch_split_factor", 1);
  if (!split.ok()) return split.status();
  if (*split != 1) t->set_batch_split_factor(*split);

  std::string reason;
  absl::StatusOr<int64_t> k_b = GetInt(c, "k_b", "k_b", p->k());
  if (!k_b.ok()) return k_b.status();
  if (*k_b != p->k()) {
    reason =
        absl::StrCat("x1's K (", p->k(), ") differs from x2's K (", *k_b, "): a problem has one k");
  }
  // x1 and x2 as the test gives them must be the logical shapes read through
  // the perms; y is only checked to be 3-D (CANN reads no more of it).
  auto ori_it = c.find("ori_shapes");
  const Json ori = ori_it != c.end() && ori_it->is_object() ? *ori_it : Json::object();
  const Dims logical[] = {{*batch, p->m(), p->k()}, {*batch, p->k(), p->n()}};
  const char* const kOperands[] = {"x1", "x2"};
  for (int i = 0; i < 2 && reason.empty(); ++i) {
    absl::StatusOr<std::optional<Dims>> shape =
        GetList(ori, kOperands[i], absl::StrCat("ori_shapes.", kOperands[i]));
    if (!shape.ok()) return shape.status();
    const std::optional<Dims> stored = StoredThrough(perms[i], logical[i]);
    if (shape->has_value() && stored.has_value() && **shape != *stored) {
      reason = absl::StrCat(kOperands[i], "'s shape ", DimsText(**shape), " is not ",
                            DimsText(*stored), " (the logical shape ", DimsText(logical[i]),
                            " read through ", kPerms[i], ")");
    }
  }
  absl::StatusOr<std::optional<Dims>> y = GetList(ori, "y", "ori_shapes.y");
  if (!y.ok()) return y.status();
  if (reason.empty() && y->has_value() && (*y)->size() != 3) {
    reason = absl::StrCat("y's shape ", DimsText(**y), " is not 3-D");
  }
  const Dims y_stored = {p->m(), *batch, p->n()};
  if (note != nullptr && y->has_value() && (*y)->size() == 3 && **y != y_stored) {
    *note = absl::StrCat("y's shape ", DimsText(**y), " is not ", DimsText(y_stored),
                         "; CANN only checks that y is 3-D");
  }

  if (op == pb::OPERATOR_TRANSPOSE_QUANT_BATCH_MATMUL) {
    pb::QuantInputs* q = p->mutable_quant();
    absl::Status status = SetScale(c, "x1_scale_dtype", "x1_scale", q->mutable_pertoken_scale());
    if (status.ok()) status = SetScale(c, "x2_scale_dtype", "x2_scale", q->mutable_scale());
    if (!status.ok()) return status;
    absl::StatusOr<int64_t> group = GetInt(c, "group_size", "group_size", 0);
    if (!group.ok()) return group.status();
    // CANN's raw attribute: k | n << 16 | m << 32.
    const uint64_t raw = static_cast<uint64_t>(*group);
    q->set_group_size_k(static_cast<int64_t>(raw & 0xFFFF));
    q->set_group_size_n(static_cast<int64_t>((raw >> 16) & 0xFFFF));
    q->set_group_size_m(static_cast<int64_t>((raw >> 32) & 0xFFFF));
  }
  std::string platform_reason;
  absl::Status status = ApplyPlatform(c, &request, &platform_reason);
  if (!status.ok()) return status;
  if (reason.empty()) reason = platform_reason;
  if (!reason.empty()) {
    if (inexpressible != nullptr) *inexpressible = reason;
    return absl::FailedPreconditionError(absl::StrCat("not expressible: ", reason));
  }
  return request;
}

}  // namespace conform_internal
}  // namespace npu::client
