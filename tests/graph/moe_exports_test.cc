// The committed mixture-of-experts exports (tests/data/onnx/*.lowering.json,
// scripts/moe_onnx_models.py): ONNX Runtime's com.microsoft MoE and QMoE,
// whose expert matmuls lower to GroupedMatmul over every expert, and a torch
// block whose experts are a Python loop, whose expert matmuls are UNRESOLVED
// naming the MoE routing. Every lowered node is the one its model was built
// with; the share of the FLOPs answered is the expected one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/graph/lowering.h"
#include "server/graph/onnx_model.h"
#include "tests/testing/files.h"
#include "tests/testing/status_matchers.h"

#ifndef NPU_TEST_DATA_DIR
#error "NPU_TEST_DATA_DIR is set by tests/graph/CMakeLists.txt"
#endif

namespace npu::graph {
namespace {

namespace tl = ::npu::tiling;
using ::npu::testing::IsOk;
using ::npu::testing::ReadFileBytes;
using ::testing::HasSubstr;

class MoeExportTest : public ::testing::TestWithParam<const char*> {};

TEST_P(MoeExportTest, EveryNodeLowersAsItsModelWasBuilt) {
  const std::string base = std::string(NPU_TEST_DATA_DIR) + "/onnx/" + GetParam();
  const nlohmann::json expected = nlohmann::json::parse(ReadFileBytes(base + ".lowering.json"));
  absl::StatusOr<onnx::ModelProto> model =
      ParseModel(ReadFileBytes(base + ".onnx"), ModelEncoding::kBinary);
  ASSERT_THAT(model, IsOk());
  ASSERT_THAT(CheckModel(*model), IsOk());
  Gear gear;
  for (const std::string& name : SymbolicDims(model->graph())) {
    gear.emplace_back(name, expected.at("dims").at(name).get<int64_t>());
  }
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(*model, gear, {});
  ASSERT_THAT(nodes, IsOk());
  const nlohmann::json& want = expected.at("nodes");
  ASSERT_EQ(nodes->size(), want.size()) << "every lowered node has an expectation";
  double ok_flops = 0, known_flops = 0;
  for (size_t i = 0; i < nodes->size(); ++i) {
    const LoweredNode& node = (*nodes)[i];
    const nlohmann::json& row = want[i];
    SCOPED_TRACE(node.name);
    EXPECT_EQ(node.name, row.at("name").get<std::string>()) << "the nodes come in graph order";
    EXPECT_EQ(node.op_type, row.at("op_type").get<std::string>());
    if (row.at("status") == "UNRESOLVED") {
      // A torch expert loop: the weight's k and n, m left to the run.
      EXPECT_EQ(node.status, NodeStatus::kUnresolved);
      EXPECT_THAT(node.reason, HasSubstr(row.at("reason").get<std::string>()));
      EXPECT_THAT(node.reason, HasSubstr(absl::StrCat("k = ", row.at("k").get<int64_t>(),
                                                      " and n = ", row.at("n").get<int64_t>())));
      EXPECT_FALSE(node.flops.has_value());
      continue;
    }
    ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
    ASSERT_TRUE(node.flops.has_value());
    EXPECT_DOUBLE_EQ(*node.flops, row.at("flops").get<double>());
    ok_flops += *node.flops;
    known_flops += *node.flops;
    const tl::MatmulProblem& problem = node.problem;
    EXPECT_EQ(std::string(tl::MatmulOpName(problem.op)), row.at("operator").get<std::string>());
    EXPECT_EQ(problem.m, row.at("m").get<int64_t>());
    EXPECT_EQ(problem.k, row.at("k").get<int64_t>());
    EXPECT_EQ(problem.n, row.at("n").get<int64_t>());
  }
  EXPECT_NEAR(ok_flops / known_flops, expected.at("answered_share").get<double>(), 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Models, MoeExportTest, ::testing::Values("mixtral_moe_loop"));

}  // namespace
}  // namespace npu::graph
