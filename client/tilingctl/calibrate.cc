#include "client/tilingctl/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "client/tilingctl/cli.h"
#include "client/tilingctl/format.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;
using Json = nlohmann::json;

std::string KeyPath(absl::string_view path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}

absl::Status BadKey(absl::string_view path, absl::string_view key, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(KeyPath(path, key), ": ", what));
}

// The value of `key`, or nullptr when it is absent or null.
const Json* Value(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

// A non-negative integer of at most `max`, or nullopt when absent or null.
absl::StatusOr<std::optional<uint64_t>> OptionalCount(const Json& object, const char* key,
                                                      absl::string_view path, uint64_t max) {
  const Json* value = Value(object, key);
  if (value == nullptr) return std::optional<uint64_t>();
  if (!value->is_number_integer()) {
    return BadKey(path, key, absl::StrCat("not an integer: ", value->dump()));
  }
  if (!value->is_number_unsigned() && value->get<int64_t>() < 0) {
    return BadKey(path, key, absl::StrCat("negative: ", value->dump()));
  }
  const uint64_t v = value->get<uint64_t>();
  if (v > max) return BadKey(path, key, absl::StrCat("at most ", max, ", got ", v));
  return std::optional<uint64_t>(v);
}

absl::StatusOr<std::optional<bool>> OptionalBool(const Json& object, const char* key,
                                                 absl::string_view path) {
  const Json* value = Value(object, key);
  if (value == nullptr) return std::optional<bool>();
  if (!value->is_boolean()) {
    return BadKey(path, key, absl::StrCat("not a boolean: ", value->dump()));
  }
  return std::optional<bool>(value->get<bool>());
}

absl::StatusOr<std::optional<std::string>> OptionalString(const Json& object, const char* key,
                                                          absl::string_view path) {
  const Json* value = Value(object, key);
  if (value == nullptr) return std::optional<std::string>();
  if (!value->is_string()) return BadKey(path, key, absl::StrCat("not a string: ", value->dump()));
  return std::optional<std::string>(value->get<std::string>());
}

// One of `names` (the wire enum values listed with them), by its file name.
template <typename Enum>
absl::StatusOr<Enum> NamedValue(const std::string& name,
                                std::initializer_list<std::pair<const char*, Enum>> names,
                                absl::string_view path, const char* key) {
  std::vector<std::string> known;
  for (const auto& [file_name, value] : names) {
    if (name == file_name) return value;
    known.push_back(file_name);
  }
  return BadKey(
      path, key,
      absl::StrCat("unknown value \"", name, "\"; expected ", absl::StrJoin(known, ", ")));
}

// The integer keys of a kernel object and their fields (exactly one setter
// is set); a value must fit the field (the server checks it against the
// problem and the chip).
struct CountKey {
  const char* key;
  void (pb::KernelSchedule::*set32)(uint32_t);
  void (pb::KernelSchedule::*set64)(uint64_t);
};
constexpr uint64_t kMaxU32 = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();
const CountKey kCountKeys[] = {
    {"block_dim", &pb::KernelSchedule::set_block_dim, nullptr},
    {"base_m", nullptr, &pb::KernelSchedule::set_base_m},
    {"base_n", nullptr, &pb::KernelSchedule::set_base_n},
    {"base_k", nullptr, &pb::KernelSchedule::set_base_k},
    {"l1_m", nullptr, &pb::KernelSchedule::set_l1_m},
    {"l1_n", nullptr, &pb::KernelSchedule::set_l1_n},
    {"l1_k", nullptr, &pb::KernelSchedule::set_l1_k},
    {"l1_kb", nullptr, &pb::KernelSchedule::set_l1_kb},
    {"depth_a1", &pb::KernelSchedule::set_depth_a1, nullptr},
    {"depth_b1", &pb::KernelSchedule::set_depth_b1, nullptr},
    {"single_core_m", nullptr, &pb::KernelSchedule::set_single_core_m},
    {"single_core_n", nullptr, &pb::KernelSchedule::set_single_core_n},
    {"swizzle_offset", &pb::KernelSchedule::set_swizzle_offset, nullptr},
    {"swizzle_direction", &pb::KernelSchedule::set_swizzle_direction, nullptr},
    {"aswt_window", &pb::KernelSchedule::set_aswt_window, nullptr},
    {"sk_k_splits", &pb::KernelSchedule::set_sk_k_splits, nullptr},
    {"l2_split_rounds", &pb::KernelSchedule::set_l2_split_rounds, nullptr},
    {"l1_k_b", nullptr, &pb::KernelSchedule::set_l1_kb},
    {"scale_l1_k", nullptr, &pb::KernelSchedule::set_scale_l1_k},
    {"scale_l1_buffers", &pb::KernelSchedule::set_scale_l1_buffers, nullptr},
    {"workspace_slots", &pb::KernelSchedule::set_workspace_slots, nullptr},
};

struct BoolKey {
  const char* key;
  void (pb::KernelSchedule::*set)(bool);
};
const BoolKey kBoolKeys[] = {
    {"l0_double_buffer", &pb::KernelSchedule::set_l0_double_buffer},
    {"l0c_double_buffer", &pb::KernelSchedule::set_l0c_double_buffer},
    {"unit_flag", &pb::KernelSchedule::set_unit_flag},
    {"mdl", &pb::KernelSchedule::set_mdl},
    {"full_load_a", &pb::KernelSchedule::set_full_load_a},
};

// The enum-valued keys of a kernel object: schedule, inner_order, b_format,
// epilogue.
absl::Status SetKernelEnums(const Json& kernel, absl::string_view path, pb::KernelSchedule* out) {
  absl::StatusOr<std::optional<std::string>> schedule = OptionalString(kernel, "schedule", path);
  if (!schedule.ok()) return schedule.status();
  if (!schedule->has_value()) {
    return BadKey(path, "schedule",
                  "required: single_core, static_grid, round_robin_tiles, identity_swizzle, aswt, "
                  "stream_k_dp, swat or grouped_round_robin");
  }
  absl::StatusOr<pb::KernelScheduleKind> kind = NamedValue<pb::KernelScheduleKind>(
      **schedule,
      {{"single_core", pb::KERNEL_SCHEDULE_KIND_SINGLE_CORE},
       {"static_grid", pb::KERNEL_SCHEDULE_KIND_STATIC_GRID},
       {"round_robin_tiles", pb::KERNEL_SCHEDULE_KIND_ROUND_ROBIN_TILES},
       {"identity_swizzle", pb::KERNEL_SCHEDULE_KIND_IDENTITY_SWIZZLE},
       {"aswt", pb::KERNEL_SCHEDULE_KIND_ASWT},
       {"stream_k_dp", pb::KERNEL_SCHEDULE_KIND_STREAM_K_DP},
       {"swat", pb::KERNEL_SCHEDULE_KIND_SWAT},
       {"grouped_round_robin", pb::KERNEL_SCHEDULE_KIND_GROUPED_ROUND_ROBIN}},
      path, "schedule");
  if (!kind.ok()) return kind.status();
  out->set_kind(*kind);

  absl::StatusOr<std::optional<std::string>> text = OptionalString(kernel, "inner_order", path);
  if (!text.ok()) return text.status();
  if (text->has_value()) {
    absl::StatusOr<pb::TileOrder> order = NamedValue<pb::TileOrder>(
        **text, {{"row_major", pb::TILE_ORDER_ROW_MAJOR}, {"col_major", pb::TILE_ORDER_COL_MAJOR}},
        path, "inner_order");
    if (!order.ok()) return order.status();
    out->set_inner_order(*order);
  }
  text = OptionalString(kernel, "epilogue", path);
  if (!text.ok()) return text.status();
  if (text->has_value()) {
    absl::StatusOr<pb::Epilogue> epilogue =
        NamedValue<pb::Epilogue>(**text,
                                 {{"none", pb::EPILOGUE_NONE},
                                  {"relu_gm", pb::EPILOGUE_RELU_GM},
                                  {"relu_ub", pb::EPILOGUE_RELU_UB},
                                  {"dequant_aiv", pb::EPILOGUE_DEQUANT_AIV},
                                  {"dequant_gelu_aiv", pb::EPILOGUE_DEQUANT_GELU_AIV},
                                  {"gelu_ub", pb::EPILOGUE_GELU_UB},
                                  {"gelu_gm", pb::EPILOGUE_GELU_GM}},
                                 path, "epilogue");
    if (!epilogue.ok()) return epilogue.status();
    out->set_epilogue(*epilogue);
  }
  text = OptionalString(kernel, "b_format", path);
  if (!text.ok()) return text.status();
  if (text->has_value()) {
    // "NZ" is the schema's short name of FRACTAL_NZ.
    absl::StatusOr<pb::Format> format =
        **text == "NZ" ? pb::FORMAT_FRACTAL_NZ : FormatFromName(**text);
    if (!format.ok()) return BadKey(path, "b_format", format.status().message());
    out->set_b_format(*format);
  }
  text = OptionalString(kernel, "tile_numbering", path);
  if (!text.ok()) return text.status();
  if (text->has_value()) {
    absl::StatusOr<pb::TileNumbering> numbering =
        NamedValue<pb::TileNumbering>(**text,
                                      {{"row_major", pb::TILE_NUMBERING_ROW_MAJOR},
                                       {"col_major", pb::TILE_NUMBERING_COL_MAJOR},
                                       {"swat_window", pb::TILE_NUMBERING_SWAT_WINDOW}},
                                      path, "tile_numbering");
    if (!numbering.ok()) return numbering.status();
    out->set_tile_numbering(*numbering);
  }
  text = OptionalString(kernel, "l1_bank_split", path);
  if (!text.ok()) return text.status();
  if (text->has_value()) {
    absl::StatusOr<pb::L1BankSplit> split =
        NamedValue<pb::L1BankSplit>(**text,
                                    {{"ping_pong", pb::L1_BANK_SPLIT_PING_PONG},
                                     {"a_b", pb::L1_BANK_SPLIT_A_B},
                                     {"none", pb::L1_BANK_SPLIT_NONE}},
                                    path, "l1_bank_split");
    if (!split.ok()) return split.status();
    out->set_l1_bank_split(*split);
  }
  text = OptionalString(kernel, "aiv_split", path);
  if (!text.ok()) return text.status();
  if (text->has_value()) {
    absl::StatusOr<pb::AivSplit> split = NamedValue<pb::AivSplit>(
        **text, {{"single", pb::AIV_SPLIT_SINGLE}, {"alternate", pb::AIV_SPLIT_ALTERNATE}}, path,
        "aiv_split");
    if (!split.ok()) return split.status();
    out->set_aiv_split(*split);
  }
  return absl::OkStatus();
}

// A list of exactly two positive integers, or nullopt when absent or null.
absl::StatusOr<std::optional<std::pair<uint64_t, uint64_t>>> OptionalPair(const Json& object,
                                                                          const char* key,
                                                                          absl::string_view path) {
  const Json* value = Value(object, key);
  if (value == nullptr) return std::optional<std::pair<uint64_t, uint64_t>>();
  if (!value->is_array() || value->size() != 2 || !(*value)[0].is_number_unsigned() ||
      !(*value)[1].is_number_unsigned() || (*value)[0].get<uint64_t>() == 0 ||
      (*value)[1].get<uint64_t>() == 0 || (*value)[0].get<uint64_t>() > kMaxU32 ||
      (*value)[1].get<uint64_t>() > kMaxU32) {
    return BadKey(path, key, absl::StrCat("not a list of two positive integers: ", value->dump()));
  }
  return std::optional<std::pair<uint64_t, uint64_t>>(
      std::pair((*value)[0].get<uint64_t>(), (*value)[1].get<uint64_t>()));
}

// The schema /2 keys of a kernel object beyond the counts and flags: the
// mix kernel's shape (kernel_type, mix_ratio), the pairs (tail_split,
// aiv_tile), the L1 offsets, and the keys checked against the others
// (scale_factor_k, fixpipe_dst, fixpipe_dtype).
absl::Status SetKernelMix(const Json& kernel, absl::string_view path, pb::KernelSchedule* out) {
  absl::StatusOr<std::optional<std::string>> type = OptionalString(kernel, "kernel_type", path);
  if (!type.ok()) return type.status();
  absl::StatusOr<std::optional<std::string>> ratio = OptionalString(kernel, "mix_ratio", path);
  if (!ratio.ok()) return ratio.status();
  const bool mix = type->has_value() && **type == "mix";
  if (type->has_value() && !mix && **type != "aic_only") {
    return BadKey(path, "kernel_type",
                  absl::StrCat("unknown value \"", **type, "\"; expected aic_only, mix"));
  }
  if (ratio->has_value()) {
    if (**ratio != "1:1" && **ratio != "1:2") {
      return BadKey(path, "mix_ratio",
                    absl::StrCat("unknown value \"", **ratio, "\"; expected 1:1, 1:2"));
    }
    if (!mix) return BadKey(path, "mix_ratio", "only with kernel_type mix");
    out->set_aiv_per_aic(**ratio == "1:1" ? 1 : 2);
  } else if (mix) {
    return BadKey(path, "mix_ratio", "required with kernel_type mix (1:1 or 1:2)");
  }
  absl::StatusOr<std::optional<std::pair<uint64_t, uint64_t>>> pair =
      OptionalPair(kernel, "tail_split", path);
  if (!pair.ok()) return pair.status();
  if (pair->has_value()) {
    out->set_tail_split_m(static_cast<uint32_t>((*pair)->first));
    out->set_tail_split_n(static_cast<uint32_t>((*pair)->second));
  }
  pair = OptionalPair(kernel, "aiv_tile", path);
  if (!pair.ok()) return pair.status();
  if (pair->has_value()) {
    out->set_aiv_tile_rows((*pair)->first);
    out->set_aiv_tile_cols((*pair)->second);
  }
  if (const Json* offsets = Value(kernel, "l1_offsets"); offsets != nullptr) {
    const std::string offsets_path = KeyPath(path, "l1_offsets");
    if (!offsets->is_object()) return BadKey(path, "l1_offsets", "not an object");
    pb::L1Offsets* wire = out->mutable_l1_offsets();
    for (const auto& [name, list] : offsets->items()) {
      void (pb::L1Offsets::*add)(uint64_t) = nullptr;
      if (name == "a") add = &pb::L1Offsets::add_a;
      if (name == "b") add = &pb::L1Offsets::add_b;
      if (name == "scale_a") add = &pb::L1Offsets::add_scale_a;
      if (name == "scale_b") add = &pb::L1Offsets::add_scale_b;
      if (add == nullptr) {
        return BadKey(offsets_path, name, "unknown operand; expected a, b, scale_a, scale_b");
      }
      if (list.is_null()) continue;
      if (!list.is_array() || list.empty() || list.size() > 2) {
        return BadKey(offsets_path, name, "not a list of one or two byte offsets");
      }
      for (const Json& offset : list) {
        if (!offset.is_number_unsigned()) {
          return BadKey(offsets_path, name, absl::StrCat("not a byte offset: ", offset.dump()));
        }
        (wire->*add)(offset.get<uint64_t>());
      }
    }
  }
  // scale_factor_k restates scale_l1_k / l1_k.
  absl::StatusOr<std::optional<uint64_t>> factor =
      OptionalCount(kernel, "scale_factor_k", path, kMaxU32);
  if (!factor.ok()) return factor.status();
  if (factor->has_value() && out->scale_l1_k() != 0 && out->l1_k() != 0 &&
      **factor * out->l1_k() != out->scale_l1_k()) {
    return BadKey(path, "scale_factor_k",
                  absl::StrCat(**factor, " x l1_k=", out->l1_k(),
                               " must equal scale_l1_k=", out->scale_l1_k()));
  }
  // Where FIXPIPE writes follows from the epilogue.
  absl::StatusOr<std::optional<std::string>> dst = OptionalString(kernel, "fixpipe_dst", path);
  if (!dst.ok()) return dst.status();
  if (dst->has_value()) {
    const pb::Epilogue e = out->epilogue();
    const std::string want = e == pb::EPILOGUE_DEQUANT_AIV || e == pb::EPILOGUE_DEQUANT_GELU_AIV
                                 ? "gm_workspace"
                             : e == pb::EPILOGUE_RELU_UB || e == pb::EPILOGUE_GELU_UB ? "ub"
                                                                                      : "gm";
    if (**dst != "gm" && **dst != "gm_workspace" && **dst != "ub") {
      return BadKey(path, "fixpipe_dst",
                    absl::StrCat("unknown value \"", **dst, "\"; expected gm, gm_workspace, ub"));
    }
    if (**dst != want) {
      return BadKey(path, "fixpipe_dst",
                    absl::StrCat("\"", **dst, "\" does not go with the epilogue (which writes to ",
                                 want, ")"));
    }
  }
  absl::StatusOr<std::optional<std::string>> dtype = OptionalString(kernel, "fixpipe_dtype", path);
  if (!dtype.ok()) return dtype.status();
  if (dtype->has_value()) {
    absl::StatusOr<pb::DataType> parsed = DataTypeFromName(**dtype);
    if (!parsed.ok()) return BadKey(path, "fixpipe_dtype", parsed.status().message());
  }
  return absl::OkStatus();
}

// Keys of a row, and what goes wrong with them, named "row <id>: <key>".
absl::Status RowError(absl::string_view id, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("row ", id, ": ", status.message()));
}

absl::StatusOr<int64_t> RequiredInt(const Json& row, const char* key) {
  const Json* value = Value(row, key);
  if (value == nullptr) return BadKey("", key, "required");
  if (!value->is_number_integer()) {
    return BadKey("", key, absl::StrCat("not an integer: ", value->dump()));
  }
  return value->get<int64_t>();
}

// The element type named by `key`: a data type name, or float4_e1m2,
// which is timed as float4_e2m1 (the same four bits per value and the same
// cube rate; the emulator has no e1m2 code, and calibration runs timing
// only).
absl::StatusOr<pb::DataType> DtypeNamed(const Json& row, const char* key, bool required) {
  absl::StatusOr<std::optional<std::string>> name = OptionalString(row, key, "");
  if (!name.ok()) return name.status();
  if (!name->has_value()) {
    if (required) return BadKey("", key, "required");
    return pb::DATA_TYPE_UNSPECIFIED;
  }
  if (**name == "float4_e1m2") return pb::DATA_TYPE_FLOAT4_E2M1;
  absl::StatusOr<pb::DataType> dtype = DataTypeFromName(**name);
  if (!dtype.ok()) return BadKey("", key, dtype.status().message());
  return dtype;
}

absl::StatusOr<pb::DataType> RequiredDtype(const Json& row, const char* key) {
  return DtypeNamed(row, key, true);
}

// A quantized row's QuantBatchMatmulV3 inputs (schema /2 "quant"): MX scales
// (float8_e8m0, [rows, ceil(k / 64), 2] as CANN stores them, transposed as
// the operand is) on both operands, or a per-column scale with an optional
// per-token one. The kernel's dequantization itself (cube, fixpipe, AIV) is
// the kernel object's business.
absl::Status SetQuant(const Json& quant, pb::MatmulProblem* p) {
  if (!quant.is_object()) return BadKey("", "quant", "not an object");
  absl::StatusOr<std::optional<std::string>> mode = OptionalString(quant, "mode", "quant");
  if (!mode.ok()) return mode.status();
  if (!mode->has_value()) return BadKey("quant", "mode", "required: mx or perchannel_pertoken");
  p->set_op(pb::OPERATOR_QUANT_BATCH_MATMUL_V3);
  pb::QuantInputs* q = p->mutable_quant();
  const int64_t pairs = (p->k() + 63) / 64;
  if (**mode == "mx") {
    absl::StatusOr<pb::DataType> scale = DtypeNamed(quant, "scale_dtype", true);
    if (!scale.ok()) return BadKey("quant", "scale_dtype", scale.status().message());
    if (*scale != pb::DATA_TYPE_FLOAT8_E8M0) {
      return BadKey("quant", "scale_dtype", "float8_e8m0 for mode mx");
    }
    q->mutable_scale()->set_dtype(*scale);
    for (int64_t dim : p->trans_b() ? std::vector<int64_t>{p->n(), pairs, 2}
                                    : std::vector<int64_t>{pairs, p->n(), 2}) {
      q->mutable_scale()->add_shape(dim);
    }
    q->mutable_pertoken_scale()->set_dtype(*scale);
    for (int64_t dim : p->trans_a() ? std::vector<int64_t>{pairs, p->m(), 2}
                                    : std::vector<int64_t>{p->m(), pairs, 2}) {
      q->mutable_pertoken_scale()->add_shape(dim);
    }
    q->set_group_size_m(1);
    q->set_group_size_n(1);
    q->set_group_size_k(32);
    return absl::OkStatus();
  }
  if (**mode == "perchannel_pertoken") {
    absl::StatusOr<pb::DataType> scale = DtypeNamed(quant, "scale_dtype", true);
    if (!scale.ok()) return scale.status();
    q->mutable_scale()->set_dtype(*scale);
    q->mutable_scale()->add_shape(p->n());
    absl::StatusOr<std::optional<bool>> pertoken = OptionalBool(quant, "pertoken", "quant");
    if (!pertoken.ok()) return pertoken.status();
    if (pertoken->value_or(false)) {
      absl::StatusOr<pb::DataType> dtype = DtypeNamed(quant, "pertoken_dtype", true);
      if (!dtype.ok()) return dtype.status();
      q->mutable_pertoken_scale()->set_dtype(*dtype);
      q->mutable_pertoken_scale()->add_shape(p->m());
    }
    return absl::OkStatus();
  }
  return BadKey("quant", "mode",
                absl::StrCat("unknown value \"", **mode, "\"; expected mx, perchannel_pertoken"));
}

// m, n, k, dtype_in (A and B) or dtype_a and dtype_b, dtype_out (C),
// trans_a, trans_b, bias, and for a quantized row its QuantBatchMatmulV3
// inputs.
absl::Status SetProblem(const Json& row, pb::MatmulProblem* p) {
  for (const auto& [key, set] : {std::make_pair("m", &pb::MatmulProblem::set_m),
                                 std::make_pair("n", &pb::MatmulProblem::set_n),
                                 std::make_pair("k", &pb::MatmulProblem::set_k)}) {
    absl::StatusOr<int64_t> value = RequiredInt(row, key);
    if (!value.ok()) return value.status();
    (p->*set)(*value);
  }
  absl::StatusOr<pb::DataType> in = RequiredDtype(row, "dtype_in");
  if (!in.ok()) return in.status();
  absl::StatusOr<pb::DataType> out = RequiredDtype(row, "dtype_out");
  if (!out.ok()) return out.status();
  absl::StatusOr<pb::DataType> a = DtypeNamed(row, "dtype_a", false);
  if (!a.ok()) return a.status();
  absl::StatusOr<pb::DataType> b = DtypeNamed(row, "dtype_b", false);
  if (!b.ok()) return b.status();
  if (*a != pb::DATA_TYPE_UNSPECIFIED && *a != *in) {
    return BadKey("", "dtype_a", "must equal dtype_in (dtype_in is A's type)");
  }
  p->set_dtype_a(*in);
  p->set_dtype_b(*b != pb::DATA_TYPE_UNSPECIFIED ? *b : *in);
  p->set_dtype_c(*out);
  for (const auto& [key, set] : {std::make_pair("trans_a", &pb::MatmulProblem::set_trans_a),
                                 std::make_pair("trans_b", &pb::MatmulProblem::set_trans_b),
                                 std::make_pair("bias", &pb::MatmulProblem::set_has_bias)}) {
    absl::StatusOr<std::optional<bool>> value = OptionalBool(row, key, "");
    if (!value.ok()) return value.status();
    (p->*set)(value->value_or(false));
  }
  // The rows give no bias dtype; C's is one CANN accepts with every input.
  if (p->has_bias()) p->set_dtype_bias(*out);
  if (const Json* quant = Value(row, "quant"); quant != nullptr) return SetQuant(*quant, p);
  return absl::OkStatus();
}

// A grouped row's groups (schema /2 "groups"): the M of each group (its
// group_list, else the first dim of each of its shapes), and whether each
// group has its own B; the groups share n and k with the row.
absl::Status SetGroups(const Json& groups, pb::KernelSchedule* kernel) {
  if (!groups.is_object()) return BadKey("", "groups", "not an object");
  absl::StatusOr<std::optional<std::string>> axis = OptionalString(groups, "axis", "groups");
  if (!axis.ok()) return axis.status();
  if (axis->has_value() && **axis != "m") {
    return BadKey("groups", "axis", absl::StrCat("\"", **axis, "\": only m is modelled"));
  }
  const Json* list = Value(groups, "group_list");
  const Json* shapes = Value(groups, "shapes");
  if (list != nullptr) {
    if (!list->is_array() || list->empty()) return BadKey("groups", "group_list", "not a list");
    for (const Json& rows : *list) {
      if (!rows.is_number_unsigned() || rows.get<uint64_t>() == 0) {
        return BadKey("groups", "group_list", absl::StrCat("not a positive count: ", rows.dump()));
      }
      kernel->add_group_m(rows.get<uint64_t>());
    }
  } else if (shapes != nullptr && shapes->is_array() && !shapes->empty()) {
    for (const Json& shape : *shapes) {
      if (!shape.is_array() || shape.size() != 3 || !shape[0].is_number_unsigned()) {
        return BadKey("groups", "shapes", absl::StrCat("not an [m, n, k] list: ", shape.dump()));
      }
      kernel->add_group_m(shape[0].get<uint64_t>());
    }
  } else {
    return BadKey("groups", "group_list", "required (or shapes)");
  }
  absl::StatusOr<std::optional<bool>> b_per_group = OptionalBool(groups, "b_per_group", "groups");
  if (!b_per_group.ok()) return b_per_group.status();
  kernel->set_b_per_group(b_per_group->value_or(false));
  return absl::OkStatus();
}

// The profile of the row's "chip", and its "aic", "aiv" and "freq_mhz" as
// overrides where they differ from it.
absl::Status SetPlatform(const Json& row, const pb::ListPlatformsResponse& platforms,
                         pb::ExecuteRequest* request) {
  absl::StatusOr<std::optional<std::string>> chip = OptionalString(row, "chip", "");
  if (!chip.ok()) return chip.status();
  if (!chip->has_value()) return BadKey("", "chip", "required");
  std::string profile;
  if (**chip == "ascend950pr" || **chip == "ascend950") {
    profile = "ascend950pr";
  } else if (**chip == "ascend910b1") {
    profile = "ascend910b1";
  } else {
    return BadKey("", "chip",
                  absl::StrCat("unknown chip \"", **chip,
                               "\"; expected ascend950pr, ascend950 or ascend910b1"));
  }
  const pb::ChipSpec* spec = nullptr;
  for (const pb::ChipSpec& platform : platforms.platforms()) {
    if (platform.name() == profile) spec = &platform;
  }
  if (spec == nullptr) {
    return BadKey("", "chip", absl::StrCat("the server has no platform \"", profile, "\""));
  }
  request->set_platform(profile);
  pb::PlatformOverrides* overrides = request->mutable_platform_overrides();
  const struct {
    const char* key;
    uint32_t profile_value;
    void (pb::PlatformOverrides::*set)(uint32_t);
  } figures[] = {{"aic", spec->aic_num(), &pb::PlatformOverrides::set_aic_num},
                 {"aiv", spec->aiv_num(), &pb::PlatformOverrides::set_aiv_num},
                 {"freq_mhz", spec->cube_freq_mhz(), &pb::PlatformOverrides::set_cube_freq_mhz}};
  for (const auto& figure : figures) {
    absl::StatusOr<std::optional<uint64_t>> value =
        OptionalCount(row, figure.key, "", std::numeric_limits<uint32_t>::max());
    if (!value.ok()) return value.status();
    if (value->has_value() && **value != figure.profile_value) {
      (overrides->*figure.set)(static_cast<uint32_t>(**value));
    }
  }
  if (overrides->ByteSizeLong() == 0) request->clear_platform_overrides();
  return absl::OkStatus();
}

// measured.task_duration_us and the published per-pipe figures.
absl::Status SetMeasured(const Json& row, CalibrationRow* out) {
  const Json* measured = Value(row, "measured");
  if (measured == nullptr) return BadKey("", "measured", "required");
  if (!measured->is_object()) return BadKey("", "measured", "not an object");
  auto positive = [&](const char* key, bool required) -> absl::StatusOr<std::optional<double>> {
    const Json* value = Value(*measured, key);
    if (value == nullptr) {
      if (required) return BadKey("measured", key, "required");
      return std::optional<double>();
    }
    if (!value->is_number() || !(value->get<double>() > 0)) {
      return BadKey("measured", key, absl::StrCat("not a positive number: ", value->dump()));
    }
    return std::optional<double>(value->get<double>());
  };
  absl::StatusOr<std::optional<double>> task = positive("task_duration_us", true);
  if (!task.ok()) return task.status();
  out->measured_us = **task;
  for (const char* pipe : kCalibrationPipes) {
    absl::StatusOr<std::optional<double>> value = positive(pipe, false);
    if (!value.ok()) return value.status();
    if (value->has_value()) out->measured_pipes.emplace_back(pipe, **value);
  }
  return absl::OkStatus();
}

absl::StatusOr<pb::ExecuteRequest> RequestFromRow(const Json& row,
                                                  const pb::ListPlatformsResponse& platforms,
                                                  const std::string& id) {
  pb::ExecuteRequest request;
  request.set_id(id);
  request.set_client_id(kClientId);
  request.set_timing_only(true);
  if (absl::Status status = SetProblem(row, request.mutable_problem()); !status.ok()) {
    return status;
  }
  if (absl::Status status = SetPlatform(row, platforms, &request); !status.ok()) return status;
  const Json* kernel = Value(row, "kernel");
  if (kernel == nullptr) return BadKey("", "kernel", "required");
  absl::StatusOr<pb::KernelSchedule> schedule = KernelScheduleFromJson(*kernel, "kernel");
  if (!schedule.ok()) return schedule.status();
  if (const Json* groups = Value(row, "groups"); groups != nullptr) {
    if (absl::Status status = SetGroups(*groups, &*schedule); !status.ok()) return status;
  }
  *request.mutable_kernel_schedule() = *std::move(schedule);
  return request;
}

double ErrorPct(double predicted, double measured) {
  return (predicted - measured) / measured * 100.0;
}

// msprof's name of a pipe figure, for the table: "aic_mac_time_us" -> "mac",
// "aiv_vec_time_us" -> "aiv_vec".
std::string PipeLabel(absl::string_view name) {
  absl::string_view label = name;
  absl::ConsumeSuffix(&label, "_time_us");
  absl::ConsumePrefix(&label, "aic_");
  return std::string(label);
}

double PredictedPipe(const pb::MsprofSummary& msprof, absl::string_view name) {
  if (name == "aic_mac_time_us") return msprof.aic_mac_time_us();
  if (name == "aic_mte1_time_us") return msprof.aic_mte1_time_us();
  if (name == "aic_mte2_time_us") return msprof.aic_mte2_time_us();
  if (name == "aic_fixpipe_time_us") return msprof.aic_fixpipe_time_us();
  if (name == "aiv_vec_time_us") return msprof.aiv_vec_time_us();
  if (name == "aiv_mte2_time_us") return msprof.aiv_mte2_time_us();
  if (name == "aiv_mte3_time_us") return msprof.aiv_mte3_time_us();
  return 0;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

absl::StatusOr<pb::KernelSchedule> KernelScheduleFromJson(const Json& kernel,
                                                          absl::string_view path) {
  if (!kernel.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path.empty() ? "the kernel schedule" : std::string(path), ": not an object"));
  }
  for (const auto& [key, value] : kernel.items()) {
    const bool known = std::any_of(std::begin(kKernelScheduleKeys), std::end(kKernelScheduleKeys),
                                   [&key = key](const char* name) { return key == name; });
    if (!known) {
      return BadKey(
          path, key,
          absl::StrCat("unknown key; expected ", absl::StrJoin(kKernelScheduleKeys, ", ")));
    }
  }
  pb::KernelSchedule out;
  if (absl::Status status = SetKernelEnums(kernel, path, &out); !status.ok()) return status;
  for (const CountKey& count : kCountKeys) {
    absl::StatusOr<std::optional<uint64_t>> value =
        OptionalCount(kernel, count.key, path, count.set32 != nullptr ? kMaxU32 : kMaxU64);
    if (!value.ok()) return value.status();
    if (!value->has_value()) continue;
    if (count.set32 != nullptr) {
      (out.*count.set32)(static_cast<uint32_t>(**value));
    } else {
      (out.*count.set64)(**value);
    }
  }
  for (const BoolKey& flag : kBoolKeys) {
    absl::StatusOr<std::optional<bool>> value = OptionalBool(kernel, flag.key, path);
    if (!value.ok()) return value.status();
    if (value->has_value()) (out.*flag.set)(**value);
  }
  if (absl::Status status = SetKernelMix(kernel, path, &out); !status.ok()) return status;
  absl::StatusOr<std::optional<uint64_t>> batch = OptionalCount(kernel, "batch", path, kMaxU64);
  if (!batch.ok()) return batch.status();
  if (batch->has_value() && **batch != 1) {
    return BadKey(path, "batch",
                  absl::StrCat(**batch, ": batched kernels are not modelled (null or 1)"));
  }
  absl::StatusOr<std::optional<std::string>> notes = OptionalString(kernel, "notes", path);
  if (!notes.ok()) return notes.status();
  return out;
}

absl::StatusOr<std::vector<CalibrationRow>> ParseCalibrationFile(
    absl::string_view json_text, const pb::ListPlatformsResponse& platforms) {
  const Json root = Json::parse(json_text.begin(), json_text.end(), nullptr,
                                /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!root.is_object()) return absl::InvalidArgumentError("the top level must be an object");
  const Json* schema = Value(root, "schema");
  if (schema == nullptr || !schema->is_string() ||
      (schema->get<std::string>() != kCalibrationSchema &&
       schema->get<std::string>() != kCalibrationSchemaQuant)) {
    return absl::InvalidArgumentError(absl::StrCat("schema: expected \"", kCalibrationSchema,
                                                   "\" or \"", kCalibrationSchemaQuant, "\", got ",
                                                   schema == nullptr ? "none" : schema->dump()));
  }
  const Json* rows = Value(root, "rows");
  if (rows == nullptr || !rows->is_array() || rows->empty()) {
    return absl::InvalidArgumentError("rows: expected a non-empty list of rows");
  }
  std::vector<CalibrationRow> out;
  out.reserve(rows->size());
  for (size_t i = 0; i < rows->size(); ++i) {
    const Json& row = (*rows)[i];
    CalibrationRow parsed;
    parsed.id = absl::StrCat("#", i);
    if (!row.is_object()) {
      parsed.request = RowError(parsed.id, absl::InvalidArgumentError("not an object"));
      out.push_back(std::move(parsed));
      continue;
    }
    absl::StatusOr<std::optional<std::string>> id = OptionalString(row, "id", "");
    if (!id.ok() || !id->has_value() || (*id)->empty()) {
      parsed.request = RowError(parsed.id, id.ok() ? BadKey("", "id", "required") : id.status());
      out.push_back(std::move(parsed));
      continue;
    }
    parsed.id = **id;
    parsed.schema = schema->get<std::string>();
    absl::Status measured = SetMeasured(row, &parsed);
    if (!measured.ok()) {
      parsed.request = RowError(parsed.id, measured);
    } else {
      parsed.request = RequestFromRow(row, platforms, parsed.id);
      if (!parsed.request.ok()) parsed.request = RowError(parsed.id, parsed.request.status());
    }
    out.push_back(std::move(parsed));
  }
  return out;
}

CalibrationReport RunCalibration(
    const std::vector<CalibrationRow>& rows,
    const std::function<absl::StatusOr<pb::ExecuteResponse>(const pb::ExecuteRequest&)>& execute) {
  CalibrationReport report;
  for (const char* pipe : kCalibrationPipes) report.pipes.push_back({pipe, 0, 0, 0});
  if (!rows.empty() && !rows.front().schema.empty()) report.source_schema = rows.front().schema;
  std::vector<double> abs_errors;
  std::vector<std::vector<double>> pipe_errors(report.pipes.size());
  for (const CalibrationRow& row : rows) {
    CalibrationResult result;
    result.id = row.id;
    if (!row.request.ok()) {
      result.error = std::string(row.request.status().message());
      ++report.failed;
      report.rows.push_back(std::move(result));
      continue;
    }
    absl::StatusOr<pb::ExecuteResponse> response = execute(*row.request);
    if (!response.ok()) {
      result.error = absl::StrCat("row ", row.id,
                                  ": Execute: ", absl::StatusCodeToString(response.status().code()),
                                  ": ", response.status().message());
      ++report.failed;
      report.rows.push_back(std::move(result));
      continue;
    }
    result.platform = response->platform().name();
    result.msprof = response->timing().msprof();
    result.measured_us = row.measured_us;
    result.predicted_us = result.msprof.task_duration_us();
    result.error_pct = ErrorPct(result.predicted_us, result.measured_us);
    abs_errors.push_back(std::fabs(result.error_pct));
    for (const auto& [name, measured] : row.measured_pipes) {
      PipeComparison pipe;
      pipe.name = name;
      pipe.measured_us = measured;
      pipe.predicted_us = PredictedPipe(result.msprof, name);
      pipe.error_pct = ErrorPct(pipe.predicted_us, measured);
      for (size_t p = 0; p < report.pipes.size(); ++p) {
        PipeSummary& summary = report.pipes[p];
        if (summary.name != name) continue;
        ++summary.rows;
        summary.max_abs_error_pct = std::max(summary.max_abs_error_pct, std::fabs(pipe.error_pct));
        pipe_errors[p].push_back(std::fabs(pipe.error_pct));
      }
      result.pipes.push_back(std::move(pipe));
    }
    ++report.ran;
    report.rows.push_back(std::move(result));
  }
  for (size_t p = 0; p < report.pipes.size(); ++p) {
    report.pipes[p].median_abs_error_pct = Median(pipe_errors[p]);
  }
  if (!abs_errors.empty()) {
    report.median_abs_error_pct = Median(abs_errors);
    report.max_abs_error_pct = *std::max_element(abs_errors.begin(), abs_errors.end());
  }
  return report;
}

std::string CalibrationSummaryLine(const CalibrationReport& report) {
  return absl::StrFormat("%d rows: median |error| %.1f%%, max |error| %.1f%%", report.ran,
                         report.median_abs_error_pct, report.max_abs_error_pct);
}

std::string FormatCalibration(const CalibrationReport& report) {
  size_t id_width = 2;
  for (const CalibrationResult& row : report.rows) id_width = std::max(id_width, row.id.size());
  std::string out;
  absl::StrAppendFormat(&out, "%-*s %14s %14s %8s  %s\n", id_width, "id", "measured us",
                        "predicted us", "error", "pipes: measured / predicted us (error)");
  for (const CalibrationResult& row : report.rows) {
    if (!row.error.empty()) {
      absl::StrAppendFormat(&out, "%-*s FAILED: %s\n", id_width, row.id, row.error);
      continue;
    }
    absl::StrAppendFormat(&out, "%-*s %14.3f %14.3f %+7.1f%%", id_width, row.id, row.measured_us,
                          row.predicted_us, row.error_pct);
    for (const PipeComparison& pipe : row.pipes) {
      absl::StrAppendFormat(&out, "  %s %.3f / %.3f (%+.1f%%)", PipeLabel(pipe.name),
                            pipe.measured_us, pipe.predicted_us, pipe.error_pct);
    }
    out += "\n";
  }
  std::vector<std::string> pipes;
  for (const PipeSummary& pipe : report.pipes) {
    // The AIV's pipes only where some row publishes them.
    if (pipe.rows == 0 && absl::StartsWith(pipe.name, "aiv_")) continue;
    pipes.push_back(pipe.rows == 0
                        ? absl::StrCat(PipeLabel(pipe.name), " - (0 rows)")
                        : absl::StrFormat("%s %.1f%% / %.1f%% (%d rows)", PipeLabel(pipe.name),
                                          pipe.median_abs_error_pct, pipe.max_abs_error_pct,
                                          pipe.rows));
  }
  absl::StrAppend(&out, "per pipe, median / max |error|: ", absl::StrJoin(pipes, ", "), "\n");
  absl::StrAppend(&out, CalibrationSummaryLine(report), "\n");
  return out;
}

std::string CalibrationJson(const CalibrationReport& report) {
  using Ordered = nlohmann::ordered_json;
  Ordered root;
  root["schema"] = kCalibrationReportSchema;
  root["source_schema"] = report.source_schema;
  Ordered rows = Ordered::array();
  for (const CalibrationResult& row : report.rows) {
    Ordered item;
    item["id"] = row.id;
    if (!row.error.empty()) {
      item["error"] = row.error;
      rows.push_back(std::move(item));
      continue;
    }
    item["platform"] = row.platform;
    item["measured_us"] = row.measured_us;
    item["predicted_us"] = row.predicted_us;
    item["error_pct"] = row.error_pct;
    Ordered pipes = Ordered::object();
    for (const PipeComparison& pipe : row.pipes) {
      pipes[pipe.name] = {{"measured_us", pipe.measured_us},
                          {"predicted_us", pipe.predicted_us},
                          {"error_pct", pipe.error_pct}};
    }
    item["pipes"] = std::move(pipes);
    item["msprof"] = Ordered::parse(ToJson(row.msprof));
    rows.push_back(std::move(item));
  }
  root["rows"] = std::move(rows);
  Ordered summary;
  summary["rows"] = report.rows.size();
  summary["ran"] = report.ran;
  summary["failed"] = report.failed;
  summary["median_abs_error_pct"] = report.median_abs_error_pct;
  summary["max_abs_error_pct"] = report.max_abs_error_pct;
  Ordered pipes = Ordered::object();
  for (const PipeSummary& pipe : report.pipes) {
    pipes[pipe.name] = {{"rows", pipe.rows},
                        {"median_abs_error_pct", pipe.median_abs_error_pct},
                        {"max_abs_error_pct", pipe.max_abs_error_pct}};
  }
  summary["pipes"] = std::move(pipes);
  summary["line"] = CalibrationSummaryLine(report);
  root["summary"] = std::move(summary);
  return root.dump(1);
}

}  // namespace npu::client
