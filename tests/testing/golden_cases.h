// Reader for `cann950-tiling-cases/1` files (tests/data/cann950/README.md):
// turns each case into a MatmulProblem + ChipSpec and its expected outputs.
#ifndef NPU_TESTS_TESTING_GOLDEN_CASES_H_
#define NPU_TESTS_TESTING_GOLDEN_CASES_H_

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/tiling/types.h"

namespace npu::testing {

struct GoldenCase {
  std::string name;
  tiling::MatmulProblem problem;
  tiling::ChipSpec chip;
  uint32_t block_dim = 0;
  uint64_t tiling_key = 0;
  std::string api_level, model, full_load, l0c2out, tiling_struct;
  std::vector<std::pair<std::string, uint64_t>> fields;  // file order
};

inline tiling::DataType DtypeOf(const nlohmann::json& value) {
  return *tiling::ParseDataType(value.get<std::string>());
}

inline std::vector<GoldenCase> LoadGoldenCases(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<GoldenCase> cases;
  for (const auto& c : doc.at("cases")) {
    GoldenCase g;
    g.name = c.at("name").get<std::string>();
    const auto& in_json = c.at("input");
    tiling::MatmulProblem& p = g.problem;
    p.m = in_json.at("m");
    p.n = in_json.at("n");
    p.k = in_json.at("k");
    p.dtype_a = DtypeOf(in_json.at("dtype_a"));
    p.dtype_b = DtypeOf(in_json.at("dtype_b"));
    p.dtype_c = DtypeOf(in_json.at("dtype_c"));
    p.trans_a = in_json.at("trans_a");
    p.trans_b = in_json.at("trans_b");
    p.format_a = *tiling::ParseFormat(in_json.at("format_a").get<std::string>());
    p.format_b = *tiling::ParseFormat(in_json.at("format_b").get<std::string>());
    p.format_c = *tiling::ParseFormat(in_json.at("format_c").get<std::string>());
    p.has_bias = in_json.at("bias");
    if (p.has_bias) p.dtype_bias = DtypeOf(in_json.at("bias_dtype"));
    p.hf32 = in_json.at("hf32");
    p.force_grp_acc_fp32 = in_json.at("force_grp_acc_fp32");
    g.chip = *tiling::FindPlatform(tiling::kDefaultPlatform);
    const auto& pl = in_json.at("platform");
    g.chip.aic_num = pl.at("aic_num");
    g.chip.aiv_num = pl.at("aiv_num");
    g.chip.l1_bytes = pl.at("l1_bytes");
    g.chip.l0a_bytes = pl.at("l0a_bytes");
    g.chip.l0b_bytes = pl.at("l0b_bytes");
    g.chip.l0c_bytes = pl.at("l0c_bytes");
    g.chip.ub_bytes = pl.at("ub_bytes");
    g.chip.l2_bytes = pl.at("l2_bytes");
    g.chip.bt_bytes = pl.at("bt_bytes");
    const auto& ex = c.at("expected");
    g.block_dim = ex.at("block_dim");
    g.tiling_key = ex.at("tiling_key");
    g.api_level = ex.at("api_level");
    g.model = ex.at("model");
    g.full_load = ex.at("full_load");
    g.l0c2out = ex.at("l0c2out");
    g.tiling_struct = ex.at("tiling_struct");
    for (const auto& [field, value] : ex.at("fields").items()) {
      g.fields.emplace_back(field, value.get<uint64_t>());
    }
    cases.push_back(std::move(g));
  }
  return cases;
}

}  // namespace npu::testing

#endif  // NPU_TESTS_TESTING_GOLDEN_CASES_H_
