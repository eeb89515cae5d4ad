// Reader and judge of GroupedMatmul's golden file (`cann950-gmm-ut-decoded/1`,
// tests/data/cann950_gmm/README.md), for the engine's own tests: each case
// becomes a MatmulProblem (its `grouped` inputs) and the ChipSpec its path
// reads, and an engine decision is compared with everything the case's
// `expected` names. tilingctl's reader of the same file is
// client/tilingctl/conform_gmm.cc (the client speaks the wire API, not the
// engine's types).
#ifndef NPU_TESTS_TESTING_GMM_GOLDEN_CASES_H_
#define NPU_TESTS_TESTING_GMM_GOLDEN_CASES_H_

#include <cctype>
#include <cstdint>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/tiling/tiling_data.h"
#include "server/tiling/types.h"

namespace npu::testing {

struct GmmGoldenCase {
  std::string name;       // as in the file
  std::string test_name;  // "<Path>_<name>": NoQuant_, Quant_, WeightQuant_, NoInput_
  std::string path;       // the file's path: no_quant, quant, weight_quant, no_input
  tiling::MatmulProblem problem;
  tiling::ChipSpec chip;
  nlohmann::json expected;
};

inline void PrintTo(const GmmGoldenCase& c, std::ostream* os) { *os << c.name; }

// GE's dtype names as the file spells them; DT_UNDEFINED (and any name of a
// type the engine lacks) only on absent inputs, whose dtype means nothing.
inline std::optional<tiling::DataType> GmmDtypeOf(const std::string& ge) {
  static const std::pair<const char*, tiling::DataType> kNames[] = {
      {"DT_FLOAT16", tiling::DataType::kFloat16},
      {"DT_BF16", tiling::DataType::kBFloat16},
      {"DT_FLOAT", tiling::DataType::kFloat32},
      {"DT_INT8", tiling::DataType::kInt8},
      {"DT_INT4", tiling::DataType::kInt4},
      {"DT_FLOAT8_E4M3FN", tiling::DataType::kFloat8E4M3},
      {"DT_FLOAT8_E5M2", tiling::DataType::kFloat8E5M2},
      {"DT_HIFLOAT8", tiling::DataType::kHiFloat8},
      {"DT_FLOAT4_E2M1", tiling::DataType::kFloat4E2M1},
      {"DT_FLOAT4_E1M2", tiling::DataType::kFloat4E1M2},
      {"DT_FLOAT8_E8M0", tiling::DataType::kFloat8E8M0},
      {"DT_INT32", tiling::DataType::kInt32},
      {"DT_INT64", tiling::DataType::kInt64},
      {"DT_UINT64", tiling::DataType::kUint64},
  };
  for (const auto& [name, dtype] : kNames) {
    if (ge == name) return dtype;
  }
  return std::nullopt;
}

inline std::string GmmTestPrefix(const std::string& path) {
  if (path == "no_quant") return "NoQuant";
  if (path == "quant") return "Quant";
  if (path == "weight_quant") return "WeightQuant";
  return "NoInput";
}

// The chip a case's tiling reads. The no-quant and weight-quant paths read
// the compile info the test fills (cores and every buffer). The quant path
// reads its core count and buffer sizes from the context's platform
// information instead (the README's harness facts: L0C 131072 where the
// compile info may say 262144); its AIV count is the compile info's, which
// its core-ratio check (CheckCoreNum) reads together with the compile info's
// AIC count. The engine has one AIC count for both: the platform's, which is
// also the block dim; every quant case has the same count in both.
inline tiling::ChipSpec GmmChipOf(const nlohmann::json& inputs, const std::string& path) {
  tiling::ChipSpec chip = *tiling::FindPlatform(tiling::kDefaultPlatform);
  const nlohmann::json& ci = inputs.at("compile_info");
  chip.aic_num = ci.at("aic_num").get<uint32_t>();
  chip.aiv_num = ci.at("aiv_num").get<uint32_t>();
  chip.ub_bytes = ci.at("ub_size").get<uint64_t>();
  chip.l1_bytes = ci.at("l1_size").get<uint64_t>();
  chip.l2_bytes = ci.at("l2_size").get<uint64_t>();
  chip.l0a_bytes = ci.at("l0a_size").get<uint64_t>();
  chip.l0b_bytes = ci.at("l0b_size").get<uint64_t>();
  chip.l0c_bytes = ci.at("l0c_size").get<uint64_t>();
  if (path == "quant") {
    const nlohmann::json& pf = inputs.at("platform");
    chip.aic_num = pf.at("core_num").get<uint32_t>();
    chip.ub_bytes = pf.at("ub_size").get<uint64_t>();
    chip.l1_bytes = pf.at("l1_size").get<uint64_t>();
    chip.l2_bytes = pf.at("l2_size").get<uint64_t>();
    chip.l0a_bytes = pf.at("l0a_size").get<uint64_t>();
    chip.l0b_bytes = pf.at("l0b_size").get<uint64_t>();
    chip.l0c_bytes = pf.at("l0c_size").get<uint64_t>();
  }
  return chip;
}

inline tiling::GroupedInputs GmmInputsOf(const nlohmann::json& inputs) {
  tiling::GroupedInputs g;
  const nlohmann::json& tensors = inputs.at("tensors");
  for (size_t t = 0; t < tiling::kGroupedTensorCount; ++t) {
    const std::string name(tiling::GroupedTensorName(static_cast<tiling::GroupedTensor>(t)));
    const nlohmann::json& list = tensors.at(name);
    tiling::GroupedTensorList& to = g.tensors[t];
    for (const nlohmann::json& instance : list.at("instances")) {
      to.instances.push_back({instance.at("origin").get<std::vector<int64_t>>(),
                              instance.at("storage").get<std::vector<int64_t>>()});
    }
    if (!to.present()) continue;
    to.dtype = GmmDtypeOf(list.at("dtype").at("ge").get<std::string>())
                   .value_or(tiling::DataType::kFloat16);
    to.format = list.at("format").get<std::string>() == "FRACTAL_NZ" ? tiling::Format::kFractalNz
                                                                      : tiling::Format::kNd;
  }
  const nlohmann::json& a = inputs.at("attrs");
  g.split_item = a.at("split_item").get<int64_t>();
  g.dtype = a.at("dtype").get<int64_t>();
  g.transpose_weight = a.at("transpose_weight").get<bool>();
  g.transpose_x = a.at("transpose_x").get<bool>();
  g.group_type = a.at("group_type").get<int64_t>();
  g.group_list_type = a.at("group_list_type").get<int64_t>();
  g.act_type = a.at("act_type").get<int64_t>();
  g.tuning_config = a.at("tuning_config").get<std::vector<int64_t>>();
  return g;
}

inline std::vector<GmmGoldenCase> LoadGmmGoldenCases(const std::string& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json root = nlohmann::json::parse(text.str());
  std::vector<GmmGoldenCase> cases;
  for (const nlohmann::json& c : root.at("cases")) {
    GmmGoldenCase g;
    g.name = c.at("name").get<std::string>();
    g.path = c.at("path").get<std::string>();
    g.test_name = GmmTestPrefix(g.path) + "_" + g.name;
    for (char& ch : g.test_name) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    g.problem.op = tiling::MatmulOp::kGroupedMatmul;
    g.problem.grouped = GmmInputsOf(c.at("inputs"));
    g.chip = GmmChipOf(c.at("inputs"), g.path);
    g.expected = c.at("expected");
    cases.push_back(std::move(g));
  }
  return cases;
}

// The value of the field `name` of `data`, read as CANN's member (a signed
// member sign-extended from its width), or nullopt when the struct has no
// such field.
inline std::optional<int64_t> GmmFieldValue(const tiling::TilingData& data,
                                            const std::string& name) {
  for (const tiling::TilingField& field : data.fields) {
    if (field.name != name) continue;
    return static_cast<int64_t>(field.value);
  }
  return std::nullopt;
}

// Whether `got` (a field of `bits`) equals CANN's `want`, compared in the
// member's width (a negative `want` is its two's complement there).
inline bool GmmFieldEquals(const tiling::TilingData& data, const std::string& name, int64_t want) {
  for (const tiling::TilingField& field : data.fields) {
    if (field.name != name) continue;
    const uint64_t mask = field.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << field.bits) - 1;
    return (field.value & mask) == (static_cast<uint64_t>(want) & mask);
  }
  return false;
}

// Every difference between the case's expectation and `decision` (empty:
// the case passes). `companion` is the decision of the case named by
// `tiling_key_differs_from`, when the case has one.
inline std::vector<std::string> GmmGoldenDifferences(
    const GmmGoldenCase& c, const absl::StatusOr<tiling::TilingDecision>& decision,
    const absl::StatusOr<tiling::TilingDecision>* companion) {
  std::vector<std::string> diffs;
  const nlohmann::json& e = c.expected;
  const bool success = e.at("status").get<std::string>() == "GRAPH_SUCCESS";
  if (!success) {
    if (decision.ok()) {
      diffs.push_back(absl::StrCat("status: expected a refusal (GRAPH_FAILED), got a plan of ",
                                   decision->plan.strategy));
    } else if (decision.status().code() != absl::StatusCode::kInvalidArgument &&
               decision.status().code() != absl::StatusCode::kFailedPrecondition) {
      diffs.push_back(absl::StrCat("status: expected INVALID_ARGUMENT or FAILED_PRECONDITION, got ",
                                   decision.status().ToString()));
    }
    return diffs;
  }
  if (!decision.ok()) {
    diffs.push_back(absl::StrCat("status: expected GRAPH_SUCCESS, got ",
                                 decision.status().ToString()));
    return diffs;
  }
  const tiling::TilingPlan& plan = decision->plan;
  const uint64_t key = plan.key.Encode();
  if (e.contains("tiling_key") && e["tiling_key"].get<uint64_t>() != key) {
    diffs.push_back(absl::StrCat("tiling_key: expected ", e["tiling_key"].get<uint64_t>(),
                                 ", got ", key));
  }
  if (e.contains("tiling_key_not") && e["tiling_key_not"].get<uint64_t>() == key) {
    diffs.push_back(absl::StrCat("tiling_key: must not be ", key));
  }
  if (e.contains("num_blocks") && e["num_blocks"].get<uint32_t>() != plan.block_dim) {
    diffs.push_back(absl::StrCat("num_blocks: expected ", e["num_blocks"].get<uint32_t>(),
                                 ", got ", plan.block_dim));
  }
  const std::vector<uint32_t> words = plan.data.RawWords();
  if (e.contains("tiling_struct")) {
    const std::string want = e["tiling_struct"].get<std::string>();
    const std::string got =
        absl::StrCat("GroupedMatmulTilingData::", std::string(plan.data.struct_name()));
    if (want != got) diffs.push_back(absl::StrCat("tiling_struct: expected ", want, ", got ", got));
  }
  if (e.contains("data_size_bytes") && e["data_size_bytes"].get<size_t>() != 4 * words.size()) {
    diffs.push_back(absl::StrCat("data_size_bytes: expected ", e["data_size_bytes"].get<size_t>(),
                                 ", got ", 4 * words.size()));
  }
  if (e.contains("tiling_data_words")) {
    const std::vector<int64_t> want = e["tiling_data_words"].get<std::vector<int64_t>>();
    if (want.size() != words.size()) {
      diffs.push_back(absl::StrCat("words: expected ", want.size(), ", got ", words.size()));
    }
    for (size_t i : e.at("compared_word_indices").get<std::vector<size_t>>()) {
      if (i >= words.size() || i >= want.size()) continue;
      if (static_cast<uint32_t>(want[i]) != words[i]) {
        diffs.push_back(absl::StrCat("word ", i, ": expected ", static_cast<uint32_t>(want[i]),
                                     ", got ", words[i]));
      }
    }
  }
  for (const char* group : {"fields", "checked_fields"}) {
    if (!e.contains(group)) continue;
    for (const auto& [name, want] : e[group].items()) {
      if (!GmmFieldEquals(plan.data, name, want.get<int64_t>())) {
        const std::optional<int64_t> got = GmmFieldValue(plan.data, name);
        diffs.push_back(absl::StrCat(group, " ", name, ": expected ", want.get<int64_t>(),
                                     ", got ", got ? absl::StrCat(*got) : "no such field"));
      }
    }
  }
  const auto check_bounds = [&](const nlohmann::json& bounds) {
    for (const auto& [name, range] : bounds.items()) {
      const std::optional<int64_t> got = GmmFieldValue(plan.data, name);
      const int64_t low = range.at(0).get<int64_t>(), high = range.at(1).get<int64_t>();
      if (!got || *got < low || *got > high) {
        diffs.push_back(absl::StrCat("field ", name, ": expected in [", low, ", ", high, "], got ",
                                     got ? absl::StrCat(*got) : "no such field"));
      }
    }
  };
  if (e.contains("field_bounds")) check_bounds(e["field_bounds"]);
  if (e.contains("conditional_field_bounds")) {
    for (const nlohmann::json& rule : e["conditional_field_bounds"]) {
      const std::optional<int64_t> gate =
          GmmFieldValue(plan.data, rule.at("if_positive").get<std::string>());
      if (gate && *gate > 0) check_bounds(rule.at("bounds"));
    }
  }
  if (e.contains("tiling_key_differs_from")) {
    if (companion == nullptr || !companion->ok()) {
      diffs.push_back(absl::StrCat("tiling_key_differs_from ",
                                   e["tiling_key_differs_from"].get<std::string>(),
                                   ": that case has no plan"));
    } else if ((*companion)->plan.key.Encode() == key) {
      diffs.push_back(absl::StrCat("tiling_key: must differ from ",
                                   e["tiling_key_differs_from"].get<std::string>(),
                                   "'s, both are ", key));
    }
  }
  return diffs;
}

}  // namespace npu::testing

#endif  // NPU_TESTS_TESTING_GMM_GOLDEN_CASES_H_
