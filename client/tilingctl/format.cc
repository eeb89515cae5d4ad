#include "client/tilingctl/format.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;

std::string Bytes(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0) {
    return absl::StrCat(bytes >> 20, " MiB");
  }
  if (bytes >= 1024 && bytes % 1024 == 0) return absl::StrCat(bytes >> 10, " KiB");
  return absl::StrCat(bytes, " B");
}

std::string ChipLine(const pb::ChipSpec& chip) {
  return absl::StrFormat(
      "%s%s: %u AIC, %u AIV, L1 %s, L0A %s, L0B %s, L0C %s, UB %s, L2 %s, BT %s, %u MHz, "
      "DDR %u B/cycle, L2 %u B/cycle",
      chip.name(), chip.npu_arch().empty() ? "" : absl::StrCat(" (", chip.npu_arch(), ")"),
      chip.aic_num(), chip.aiv_num(), Bytes(chip.l1_bytes()), Bytes(chip.l0a_bytes()),
      Bytes(chip.l0b_bytes()), Bytes(chip.l0c_bytes()), Bytes(chip.ub_bytes()),
      Bytes(chip.l2_bytes()), Bytes(chip.bt_bytes()), chip.cube_freq_mhz(),
      chip.ddr_bytes_per_cycle(), chip.l2_bytes_per_cycle());
}

}  // namespace

absl::StatusOr<pb::DataType> DataTypeFromName(absl::string_view name) {
  // Our names, short forms and GE's names (as CANN's tests print them).
  struct Named {
    pb::DataType dtype;
    const char* names[4];
  };
  static const Named kNames[] = {
      {pb::DATA_TYPE_FLOAT16, {"float16", "fp16", "DT_FLOAT16", nullptr}},
      {pb::DATA_TYPE_BFLOAT16, {"bfloat16", "bf16", "DT_BF16", nullptr}},
      {pb::DATA_TYPE_FLOAT32, {"float32", "fp32", "DT_FLOAT", "float"}},
      {pb::DATA_TYPE_INT8, {"int8", "DT_INT8", nullptr, nullptr}},
      {pb::DATA_TYPE_INT4, {"int4", "DT_INT4", nullptr, nullptr}},
      {pb::DATA_TYPE_FLOAT8_E4M3FN, {"float8_e4m3fn", "fp8_e4m3", "DT_FLOAT8_E4M3FN", nullptr}},
      {pb::DATA_TYPE_FLOAT8_E5M2, {"float8_e5m2", "fp8_e5m2", "DT_FLOAT8_E5M2", nullptr}},
      {pb::DATA_TYPE_HIFLOAT8, {"hifloat8", "hif8", "DT_HIFLOAT8", nullptr}},
      {pb::DATA_TYPE_FLOAT4_E2M1, {"float4_e2m1", "fp4_e2m1", "DT_FLOAT4_E2M1", nullptr}},
      {pb::DATA_TYPE_FLOAT8_E8M0, {"float8_e8m0", "e8m0", "DT_FLOAT8_E8M0", nullptr}},
      {pb::DATA_TYPE_INT32, {"int32", "DT_INT32", nullptr, nullptr}},
      {pb::DATA_TYPE_INT64, {"int64", "DT_INT64", nullptr, nullptr}},
      {pb::DATA_TYPE_UINT64, {"uint64", "DT_UINT64", nullptr, nullptr}},
      {pb::DATA_TYPE_FLOAT4_E1M2, {"float4_e1m2", "fp4_e1m2", "DT_FLOAT4_E1M2", nullptr}},
  };
  std::string known;
  for (const Named& named : kNames) {
    for (const char* alias : named.names) {
      if (alias != nullptr && name == alias) return named.dtype;
    }
    absl::StrAppend(&known, known.empty() ? "" : ", ", named.names[0]);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype \"", name, "\"; expected one of ", known));
}

absl::StatusOr<pb::Format> FormatFromName(absl::string_view name) {
  if (name == "ND") return pb::FORMAT_ND;
  if (name == "FRACTAL_NZ" || name == "NZ") return pb::FORMAT_FRACTAL_NZ;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown format \"", name, "\"; expected ND or FRACTAL_NZ"));
}

absl::StatusOr<pb::Operator> OperatorFromName(absl::string_view name) {
  if (name == "matmul_v3" || name == "MatMulV3") return pb::OPERATOR_MATMUL_V3;
  if (name == "batch_matmul_v3" || name == "BatchMatMulV3") return pb::OPERATOR_BATCH_MATMUL_V3;
  if (name == "fused_matmul" || name == "FusedMatMul") return pb::OPERATOR_FUSED_MATMUL;
  if (name == "quant_batch_matmul_v3" || name == "QuantBatchMatmulV3") {
    return pb::OPERATOR_QUANT_BATCH_MATMUL_V3;
  }
  if (name == "weight_quant_batch_matmul_v2" || name == "WeightQuantBatchMatmulV2") {
    return pb::OPERATOR_WEIGHT_QUANT_BATCH_MATMUL_V2;
  }
  if (name == "transpose_batch_matmul" || name == "TransposeBatchMatMul") {
    return pb::OPERATOR_TRANSPOSE_BATCH_MATMUL;
  }
  if (name == "transpose_quant_batch_matmul" || name == "TransposeQuantBatchMatMul") {
    return pb::OPERATOR_TRANSPOSE_QUANT_BATCH_MATMUL;
  }
  if (name == "grouped_matmul" || name == "GroupedMatmul") return pb::OPERATOR_GROUPED_MATMUL;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown operator \"", name,
                   "\"; expected matmul_v3, batch_matmul_v3, fused_matmul, quant_batch_matmul_v3, "
                   "weight_quant_batch_matmul_v2, transpose_batch_matmul, "
                   "transpose_quant_batch_matmul or grouped_matmul"));
}

absl::StatusOr<pb::FusedOp> FusedOpFromName(absl::string_view name) {
  struct Named {
    const char* name;
    pb::FusedOp op;
  };
  for (const Named& named :
       {Named{"", pb::FUSED_OP_UNSPECIFIED}, Named{"none", pb::FUSED_OP_UNSPECIFIED},
        Named{"relu", pb::FUSED_OP_RELU}, Named{"add", pb::FUSED_OP_ADD},
        Named{"mul", pb::FUSED_OP_MUL}, Named{"gelu_erf", pb::FUSED_OP_GELU_ERF},
        Named{"gelu_tanh", pb::FUSED_OP_GELU_TANH}, Named{"16cast32", pb::FUSED_OP_16CAST32}}) {
    if (name == named.name) return named.op;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown fused op \"", name,
                   "\"; expected none, relu, add, mul, gelu_erf, gelu_tanh or 16cast32"));
}

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) {
    return "{}";  // only fails for unresolvable Any types, which we never send
  }
  return json;
}

namespace {

void AppendTrace(const pb::TilingResponse& r, std::string* out) {
  if (r.trace_size() == 0) return;
  absl::StrAppendFormat(out, "\ntrace\n  %-16s %-8s %-7s %s\n", "strategy", "capable", "chosen",
                        "reason");
  for (const pb::TraceEntry& entry : r.trace()) {
    absl::StrAppendFormat(out, "  %-16s %-8s %-7s %s\n", entry.strategy(),
                          entry.capable() ? "yes" : "no", entry.chosen() ? "yes" : "",
                          entry.reason());
  }
}

// The buffers CANN's plan overflows, first thing after the plan: a caller
// who runs it must know.
void AppendWarnings(const pb::TilingResponse& r, std::string* out) {
  for (const pb::PlanWarning& warning : r.warnings()) {
    absl::StrAppendFormat(out, "%-16s %s\n", "WARNING", warning.message());
  }
}

// A compact answer (RESPONSE_VIEW_COMPACT) has no decoded key, no named
// fields and no platform: the launcher's numbers only.
std::string FormatCompactTiling(const pb::TilingResponse& r) {
  std::string out;
  absl::StrAppendFormat(&out, "%-16s %s\n", "strategy", r.strategy());
  absl::StrAppendFormat(&out, "%-16s %u (0x%x)\n", "tiling_key", r.tiling_key(), r.tiling_key());
  absl::StrAppendFormat(&out, "%-16s %s\n", "kernel_type", pb::KernelType_Name(r.kernel_type()));
  absl::StrAppendFormat(&out, "%-16s %u\n", "block_dim", r.block_dim());
  absl::StrAppendFormat(&out, "%-16s %u bytes\n", "workspace", r.workspace_bytes());
  absl::StrAppendFormat(&out, "%-16s %s\n", "from_cache", r.from_cache() ? "yes" : "no");
  absl::StrAppendFormat(&out, "%-16s %s\n", "raw_words", absl::StrJoin(r.raw_words(), " "));
  AppendWarnings(r, &out);
  AppendTrace(r, &out);
  return out;
}

}  // namespace

std::vector<std::string> TilingFieldPositions(const pb::TilingResponse& r) {
  // The packing of the engine's TilingData::ForEachWord(): a 32-bit field
  // takes the next whole word, narrower fields (8 or 16 bits) fill one word
  // from the low bits up, shown as word.byte, and a 32-bit field after a
  // partly filled word starts a new one.
  std::vector<std::string> positions;
  positions.reserve(r.fields_size());
  int word = 0;
  uint32_t bits_in_word = 0;
  for (const pb::TilingField& field : r.fields()) {
    if (field.bits() != 0 && field.bits() < 32) {
      positions.push_back(absl::StrCat(word, ".", bits_in_word / 8));
      bits_in_word += field.bits();
      if (bits_in_word >= 32) {
        ++word;
        bits_in_word = 0;
      }
      continue;
    }
    if (bits_in_word != 0) {
      ++word;
      bits_in_word = 0;
    }
    positions.push_back(absl::StrCat(word));
    word += field.bits() == 64 ? 2 : 1;  // a 64-bit member takes two words
  }
  return positions;
}

std::string FormatTiling(const pb::TilingResponse& r) {
  if (!r.has_key() && r.fields_size() == 0) return FormatCompactTiling(r);
  std::string out;
  const pb::DecodedTilingKey& key = r.key();
  absl::StrAppendFormat(&out, "%-16s %s\n", "strategy", r.strategy());
  absl::StrAppendFormat(&out, "%-16s %s\n", "detail", r.detail());
  absl::StrAppendFormat(&out, "%-16s %u (0x%x)\n", "tiling_key", r.tiling_key(), r.tiling_key());
  if (key.fields_size() > 0) {
    // A layout that lists its fields (QuantBatchMatmulV3's).
    absl::StrAppendFormat(&out, "  %-14s %s\n", "layout", key.layout());
    for (const pb::KeyField& field : key.fields()) {
      absl::StrAppendFormat(&out, "  %-14s %u%s\n", field.name(), field.value(),
                            field.value_name().empty() ? "" : " " + field.value_name());
    }
  } else {
    absl::StrAppendFormat(&out, "  %-14s %s\n", "api_level", key.api_level_name());
    absl::StrAppendFormat(&out, "  %-14s %s / %s\n", "trans_a/b", key.trans_a() ? "true" : "false",
                          key.trans_b() ? "true" : "false");
    absl::StrAppendFormat(&out, "  %-14s %u\n", "batch_model", key.batch_model());
    absl::StrAppendFormat(&out, "  %-14s %s\n", "model", key.model_name());
    absl::StrAppendFormat(&out, "  %-14s %s\n", "full_load", key.full_load_name());
    absl::StrAppendFormat(&out, "  %-14s %s\n", "l0c2out", key.l0c2out_name());
  }
  // Only FusedMatMul keys carry the epilogue and the inner precision.
  if (!key.fused_op_name().empty()) {
    absl::StrAppendFormat(&out, "  %-14s %s\n", "fused_op", key.fused_op_name());
    absl::StrAppendFormat(&out, "  %-14s %u\n", "inner_precise", key.inner_precise());
  }
  if (!r.quant_mode().empty())
    absl::StrAppendFormat(&out, "%-16s %s\n", "quant_mode", r.quant_mode());
  absl::StrAppendFormat(&out, "%-16s %s\n", "kernel_type", r.kernel_type_name());
  absl::StrAppendFormat(&out, "%-16s %u\n", "block_dim", r.block_dim());
  absl::StrAppendFormat(&out, "%-16s %u bytes\n", "workspace", r.workspace_bytes());
  absl::StrAppendFormat(&out, "%-16s %s\n", "platform", ChipLine(r.platform()));
  absl::StrAppendFormat(&out, "%-16s %s\n", "from_cache", r.from_cache() ? "yes" : "no");

  absl::StrAppendFormat(&out, "\n%s (%d fields, %d words)\n", r.tiling_struct(), r.fields_size(),
                        r.raw_words_size());
  absl::StrAppendFormat(&out, "  %-6s %-20s %s\n", "word", "field", "value");
  const std::vector<std::string> positions = TilingFieldPositions(r);
  for (int i = 0; i < r.fields_size(); ++i) {
    const pb::TilingField& field = r.fields(i);
    absl::StrAppendFormat(&out, "  %-6s %-20s %u\n", positions[i], field.name(), field.value());
  }
  absl::StrAppendFormat(&out, "  raw words: %s\n", absl::StrJoin(r.raw_words(), " "));

  if (r.warnings_size() > 0) out += "\n";
  AppendWarnings(r, &out);
  AppendTrace(r, &out);
  return out;
}

std::string VariantKindLabel(pb::VariantKind kind) {
  const std::string& name = pb::VariantKind_Name(kind);
  constexpr absl::string_view kPrefix = "VARIANT_KIND_";
  return absl::StartsWith(name, kPrefix) ? name.substr(kPrefix.size()) : name;
}

std::string NumericsLabel(pb::NumericsStatus status) {
  if (status == pb::NUMERICS_STATUS_UNSPECIFIED) return "-";
  const std::string& name = pb::NumericsStatus_Name(status);
  constexpr absl::string_view kPrefix = "NUMERICS_STATUS_";
  return absl::StartsWith(name, kPrefix) ? name.substr(kPrefix.size()) : name;
}

std::string FormatAdvice(const pb::TilingResponse& r) {
  std::string out;
  absl::StrAppendFormat(&out, "CANN's choice: %s, key %u, block_dim %u, %s%s\n", r.strategy(),
                        r.tiling_key(), r.block_dim(), r.tiling_struct(),
                        r.from_cache() ? " (from cache)" : "");
  if (!r.has_advice()) {
    out += "no advice in the response (not an ADVISE answer)\n";
    return out;
  }
  const pb::Advice& advice = r.advice();
  absl::StrAppendFormat(&out, "%d candidates, best first (max %u, budget %u ms, %u emulations%s)\n",
                        advice.candidates_size(), advice.max_candidates(), advice.max_advisory_ms(),
                        advice.emulations(), advice.budget_exhausted() ? ", BUDGET EXHAUSTED" : "");
  if (!advice.timing_note().empty()) absl::StrAppend(&out, "note: ", advice.timing_note(), "\n");
  if (advice.budget_exhausted()) absl::StrAppend(&out, "budget: ", advice.budget_note(), "\n");

  // Column widths fit the longest names the advisor emits
  // ("BASIC_ASWT/l1_band_a_256" and "NOT_CHECKED").
  constexpr char kRow[] = "%-5s %-28s %12s %9s %-8s %-11s %s\n";
  absl::StrAppendFormat(&out, kRow, "rank", "candidate", "predicted_us", "vs_cann", "bound",
                        "numerics", "explanation");
  for (int i = 0; i < advice.candidates_size(); ++i) {
    const pb::AdviceCandidate& c = advice.candidates(i);
    absl::StrAppendFormat(&out, kRow, absl::StrCat(i + 1, c.is_cann_choice() ? "*" : ""), c.name(),
                          absl::StrFormat("%.3f", c.predicted_time_us()),
                          absl::StrFormat("%.3fx", c.speedup_vs_cann()), c.bound_resource(),
                          NumericsLabel(c.numerics()), c.explanation());
  }
  out += "* CANN's choice; vs_cann above 1 is a predicted speed-up over it\n";

  const pb::SplitReadWriteSummary& split = advice.split_rw();
  if (split.timed()) {
    absl::StrAppendFormat(
        &out, "split GM read/write model: best %s (%s), %u re-timed candidates move\n",
        split.best(), split.changes_best() ? "differs from rank 1" : "same", split.rank_changes());
  }
  if (advice.has_verification()) {
    const pb::VerificationReport& v = advice.verification();
    absl::StrAppendFormat(&out, "numerics: rank 1 verified %s %dx%dx%d, worst error %.3g of bound",
                          v.shrunk() ? "on" : "at", v.m(), v.n(), v.k(), v.worst_error_ratio());
    if (!v.note().empty()) absl::StrAppend(&out, " (", v.note(), ")");
    out += "\n";
  } else if (!advice.verify_recommendation()) {
    out += "numerics: not checked (verification off)\n";
  }
  if (advice.not_offered_size() > 0) {
    absl::StrAppendFormat(&out, "\nnot offered\n  %-20s %-28s %s\n", "kind", "name", "reason");
    for (const pb::NotOffered& n : advice.not_offered()) {
      absl::StrAppendFormat(&out, "  %-20s %-28s %s\n", VariantKindLabel(n.kind()), n.name(),
                            n.reason());
    }
  }
  return out;
}

std::string FormatBatch(const std::vector<pb::TilingResponse>& responses) {
  std::string out = absl::StrFormat("%-6s %-16s %-20s %-16s %-10s %-9s %s\n", "#", "id", "status",
                                    "strategy", "key", "block_dim", "struct / error");
  for (size_t i = 0; i < responses.size(); ++i) {
    const pb::TilingResponse& r = responses[i];
    if (r.has_status() && r.status().code() != 0) {
      absl::StrAppendFormat(&out, "%-6d %-16s %-20s %-16s %-10s %-9s %s\n", i, r.id(),
                            r.status().code_name(), "-", "-", "-", r.status().message());
    } else {
      absl::StrAppendFormat(&out, "%-6d %-16s %-20s %-16s %-10u %-9u %s\n", i, r.id(), "OK",
                            r.strategy(), r.tiling_key(), r.block_dim(), r.tiling_struct());
    }
  }
  return out;
}

std::string FormatPlatforms(const pb::ListPlatformsResponse& response) {
  std::string out = absl::StrFormat("%-14s %-8s %4s %4s %8s %8s %8s %8s %8s %8s %6s %6s %4s %4s\n",
                                    "name", "arch", "aic", "aiv", "l1", "l0a", "l0b", "l0c", "ub",
                                    "l2", "bt", "mhz", "ddr", "l2bw");
  for (const pb::ChipSpec& chip : response.platforms()) {
    absl::StrAppendFormat(
        &out, "%-14s %-8s %4u %4u %8s %8s %8s %8s %8s %8s %6s %6u %4u %4u%s\n", chip.name(),
        chip.npu_arch().empty() ? "-" : chip.npu_arch(), chip.aic_num(), chip.aiv_num(),
        Bytes(chip.l1_bytes()), Bytes(chip.l0a_bytes()), Bytes(chip.l0b_bytes()),
        Bytes(chip.l0c_bytes()), Bytes(chip.ub_bytes()), Bytes(chip.l2_bytes()),
        Bytes(chip.bt_bytes()), chip.cube_freq_mhz(), chip.ddr_bytes_per_cycle(),
        chip.l2_bytes_per_cycle(), chip.name() == response.default_platform() ? "  (default)" : "");
  }
  out +=
      "sizes per core except l2 (chip-wide); ddr and l2bw in bytes per cycle per cube core; "
      "CANN's tiling (tile, batch, advise) applies to DAV_3510, execute --kernel-schedule to "
      "every arch\n";
  return out;
}

}  // namespace npu::client
