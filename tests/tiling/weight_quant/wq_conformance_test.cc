// WeightQuantBatchMatmulV2's golden cases (tests/data/cann950_wqbmm): every
// case of CANN's three DAV_3510 unit tests the file decodes, run through the
// engine's registry on the harness's platform. CANN's tests check the status,
// then the tiling key and the block dim; so does this test, and the key's
// sub-algorithm names the strategy the case expects.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "server/tiling/builtin_strategies.h"

namespace npu::tiling {
namespace {

using Json = nlohmann::json;

struct WqGolden {
  std::string name;
  MatmulProblem problem;
  ChipSpec chip;
  bool expect_success = true;
  bool checks_key = false;
  uint64_t key = 0;
  uint32_t block_dim = 0;
  std::string strategy;
};

DataType Dtype(const Json& object) {
  static const std::pair<const char*, DataType> kNames[] = {
      {"DT_FLOAT16", DataType::kFloat16},
      {"DT_BF16", DataType::kBFloat16},
      {"DT_FLOAT", DataType::kFloat32},
      {"DT_INT8", DataType::kInt8},
      {"DT_INT4", DataType::kInt4},
      {"DT_FLOAT8_E4M3FN", DataType::kFloat8E4M3},
      {"DT_HIFLOAT8", DataType::kHiFloat8},
      {"DT_FLOAT4_E2M1", DataType::kFloat4E2M1},
      {"DT_FLOAT8_E8M0", DataType::kFloat8E8M0},
      {"DT_INT32", DataType::kInt32},
      {"DT_INT64", DataType::kInt64},
      {"DT_UINT64", DataType::kUint64},
  };
  const std::string ge = object.at("ge").get<std::string>();
  for (const auto& [name, dtype] : kNames) {
    if (ge == name) return dtype;
  }
  ADD_FAILURE() << "unknown dtype " << ge;
  return DataType::kFloat16;
}

std::vector<int64_t> Dims(const Json& value) {
  return value.is_null() ? std::vector<int64_t>() : value.get<std::vector<int64_t>>();
}

QuantTensorSpec Tensor(const Json& in, const char* flag, const char* dtype, const char* shape) {
  QuantTensorSpec t;
  if (flag != nullptr && !in.at(flag).get<bool>()) return t;
  t.present = true;
  t.dtype = Dtype(in.at(dtype));
  t.shape = Dims(in.at("shapes").at(shape));
  return t;
}

std::vector<WqGolden> LoadCases() {
  std::ifstream file(NPU_CONFORMANCE_WQBMM_CASES);
  std::stringstream text;
  text << file.rdbuf();
  const Json root = Json::parse(text.str());
  std::vector<WqGolden> cases;
  for (const Json& c : root.at("cases")) {
    const Json& in = c.at("inputs");
    WqGolden g;
    g.name = c.at("name").get<std::string>();
    for (char& ch : g.name) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    MatmulProblem& p = g.problem;
    p.op = MatmulOp::kWeightQuantBatchMatmulV2;
    p.m = in.at("m").get<int64_t>();
    p.n = in.at("n").get<int64_t>();
    p.k = in.at("k").get<int64_t>();
    p.trans_a = in.at("trans_a").get<bool>();
    p.trans_b = in.at("trans_b").get<bool>();
    p.dtype_a = Dtype(in.at("dtype_x"));
    p.dtype_b = Dtype(in.at("dtype_weight"));
    p.dtype_c = Dtype(in.at("dtype_y"));
    p.has_bias = in.at("has_bias").get<bool>();
    if (p.has_bias) {
      p.dtype_bias = Dtype(in.at("dtype_bias"));
      p.quant.bias_shape = Dims(in.at("shapes").at("bias"));
    }
    if (in.at("format_weight").get<std::string>() == "FRACTAL_NZ") {
      p.format_b = Format::kFractalNz;
      p.storage_shape_b = Dims(in.at("shapes").at("weight").at("storage"));
    }
    p.quant.antiquant_scale = Tensor(in, nullptr, "dtype_antiquant_scale", "antiquant_scale");
    p.quant.antiquant_offset =
        Tensor(in, "has_antiquant_offset", "dtype_antiquant_offset", "antiquant_offset");
    p.quant.quant_scale = Tensor(in, "has_quant_scale", "dtype_quant_scale", "quant_scale");
    p.quant.quant_offset = Tensor(in, "has_quant_offset", "dtype_quant_offset", "quant_offset");
    p.quant.group_size = in.at("attrs").at("group_size").get<int64_t>();
    // The harness's platform: the 950PR profile with its buffers and cores.
    g.chip = *FindPlatform(kDefaultPlatform);
    const Json& pf = in.at("platform");
    g.chip.l1_bytes = pf.at("l1").get<uint64_t>();
    g.chip.l0a_bytes = pf.at("l0a").get<uint64_t>();
    g.chip.l0b_bytes = pf.at("l0b").get<uint64_t>();
    g.chip.l0c_bytes = pf.at("l0c").get<uint64_t>();
    g.chip.ub_bytes = pf.at("ub").get<uint64_t>();
    g.chip.l2_bytes = pf.at("l2").get<uint64_t>();
    g.chip.bt_bytes = pf.at("bt").get<uint64_t>();
    g.chip.aic_num = pf.at("aic_num").get<uint32_t>();
    g.chip.aiv_num = pf.at("aiv_num").get<uint32_t>();
    const Json& expected = c.at("expected");
    g.expect_success = expected.at("status").get<std::string>() == "GRAPH_SUCCESS";
    g.checks_key = expected.at("checks").get<std::string>() == "status_key_numblocks";
    if (g.checks_key) {
      g.key = expected.at("tiling_key").get<uint64_t>();
      g.block_dim = expected.at("num_blocks").get<uint32_t>();
      g.strategy = expected.at("strategy_from_key").get<std::string>();
    }
    cases.push_back(std::move(g));
  }
  return cases;
}

class WqConformanceTest : public ::testing::TestWithParam<WqGolden> {};

TEST_P(WqConformanceTest, MatchesCann) {
  const WqGolden& golden = GetParam();
  const StrategyRegistry registry = MakeBuiltinRegistry();
  absl::StatusOr<TilingDecision> decision = registry.Decide(golden.problem, golden.chip);
  if (!golden.expect_success) {
    EXPECT_FALSE(decision.ok()) << "CANN refuses this problem";
    return;
  }
  ASSERT_TRUE(decision.ok()) << decision.status();
  const TilingPlan& plan = decision->plan;
  if (!golden.checks_key) return;
  EXPECT_EQ(plan.key.Encode(), golden.key) << "tiling_key";
  EXPECT_EQ(plan.block_dim, golden.block_dim) << "block_dim";
  EXPECT_EQ(plan.strategy, golden.strategy) << "strategy";
}

INSTANTIATE_TEST_SUITE_P(Cann950Wqbmm, WqConformanceTest, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<WqGolden>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace npu::tiling
