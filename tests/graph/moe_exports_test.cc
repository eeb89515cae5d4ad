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
#include "server/tiling/grouped/gmm_path.h"
#include "tests/testing/files.h"
#include "tests/testing/status_matchers.h"

#ifndef NPU_TEST_DATA_DIR
#error "NPU_TEST_DATA_DIR is set by tests/graph/CMakeLists.txt"
#endif

namespace npu::graph {
namespace {

namespace tl = ::npu::tiling;
namespace g = ::npu::tiling::grouped;
using ::npu::testing::IsOk;
using ::npu::testing::ReadFileBytes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The origin shapes of a tensor list's instances.
std::vector<std::vector<int64_t>> Shapes(const tl::GroupedInputs& grouped,
                                         tl::GroupedTensor tensor) {
  std::vector<std::vector<int64_t>> shapes;
  for (const tl::GroupedShape& shape : grouped[tensor].instances) shapes.push_back(shape.origin);
  return shapes;
}

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
    if (problem.op != tl::MatmulOp::kGroupedMatmul) {
      EXPECT_EQ(problem.m, row.at("m").get<int64_t>());
      EXPECT_EQ(problem.k, row.at("k").get<int64_t>());
      EXPECT_EQ(problem.n, row.at("n").get<int64_t>());
      continue;
    }
    // One GroupedMatmul over every expert: its path, its single x, weight,
    // y and group_list, its attributes and its scales.
    const tl::GroupedInputs& grouped = problem.grouped;
    EXPECT_EQ(std::string(g::GmmPathName(g::PathOf(grouped))), row.at("path").get<std::string>());
    EXPECT_THAT(Shapes(grouped, tl::GroupedTensor::kX),
                ElementsAre(row.at("x_shape").get<std::vector<int64_t>>()));
    EXPECT_THAT(Shapes(grouped, tl::GroupedTensor::kWeight),
                ElementsAre(row.at("weight_shape").get<std::vector<int64_t>>()));
    EXPECT_THAT(Shapes(grouped, tl::GroupedTensor::kY),
                ElementsAre(row.at("y_shape").get<std::vector<int64_t>>()));
    EXPECT_THAT(Shapes(grouped, tl::GroupedTensor::kGroupList),
                ElementsAre(row.at("group_list_shape").get<std::vector<int64_t>>()));
    EXPECT_EQ(row.at("group_list_shape")[0].get<int64_t>(), row.at("groups").get<int64_t>());
    EXPECT_EQ(tl::DataTypeName(grouped[tl::GroupedTensor::kX].dtype),
              row.at("dtype_x").get<std::string>());
    EXPECT_EQ(tl::DataTypeName(grouped[tl::GroupedTensor::kWeight].dtype),
              row.at("dtype_weight").get<std::string>());
    EXPECT_EQ(grouped.transpose_weight, row.at("transpose_weight").get<bool>());
    EXPECT_EQ(grouped.split_item, row.at("split_item").get<int64_t>());
    EXPECT_EQ(grouped.group_type, row.at("group_type").get<int64_t>());
    EXPECT_EQ(grouped.group_list_type, row.at("group_list_type").get<int64_t>());
    if (row.contains("antiquant_scale_shape")) {
      EXPECT_THAT(Shapes(grouped, tl::GroupedTensor::kAntiquantScale),
                  ElementsAre(row.at("antiquant_scale_shape").get<std::vector<int64_t>>()));
      EXPECT_EQ(tl::DataTypeName(grouped[tl::GroupedTensor::kAntiquantScale].dtype),
                row.at("dtype_antiquant_scale").get<std::string>());
    } else {
      EXPECT_FALSE(grouped[tl::GroupedTensor::kAntiquantScale].present());
    }
    // The FLOPs are the routed rows' through one expert each.
    EXPECT_DOUBLE_EQ(*node.flops, 2.0 * static_cast<double>(row.at("m").get<int64_t>()) *
                                      static_cast<double>(row.at("k").get<int64_t>()) *
                                      static_cast<double>(row.at("n").get<int64_t>()));
    EXPECT_THAT(node.derivation.assumptions,
                ::testing::Contains(HasSubstr("the router's choice at run time")));
  }
  EXPECT_NEAR(ok_flops / known_flops, expected.at("answered_share").get<double>(), 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Models, MoeExportTest,
                         ::testing::Values("mixtral_moe_ort", "phi35_moe_qmoe",
                                           "mixtral_moe_loop"));

}  // namespace
}  // namespace npu::graph
