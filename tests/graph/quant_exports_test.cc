// The committed quantized and einsum exports (tests/data/onnx/*.lowering.json,
// scripts/quantized_onnx_models.py): a torch QAT QDQ block, ONNX Runtime's
// dynamic form and MatMulNBits, weight-only DQ in three layouts and an
// einsum MLA block. Every matmul-like node lowers to the CANN operator and
// problem its model was built with, or is UNSUPPORTED with the documented
// reason; the share of the FLOPs answered is the expected one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

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

// C's batch dims: A's and B's broadcast, or the transposed batch matmuls'
// one batch.
std::vector<int64_t> BatchOfC(const tl::MatmulProblem& problem) {
  if (problem.op == tl::MatmulOp::kTransposeBatchMatMul) return {problem.transpose.batch};
  const tl::BatchDims& batch = problem.batch;
  const bool a_longer = batch.a.size() >= batch.b.size();
  std::vector<int64_t> dims = a_longer ? batch.a : batch.b;
  const std::vector<int64_t>& other = a_longer ? batch.b : batch.a;
  for (size_t i = 0; i < other.size(); ++i) {
    int64_t& dim = dims[dims.size() - other.size() + i];
    dim = std::max(dim, other[i]);
  }
  return dims;
}

class QuantExportTest : public ::testing::TestWithParam<const char*> {};

TEST_P(QuantExportTest, EveryNodeLowersAsItsModelWasBuilt) {
  const std::string base = std::string(NPU_TEST_DATA_DIR) + "/onnx/" + GetParam();
  const nlohmann::json expected = nlohmann::json::parse(ReadFileBytes(base + ".lowering.json"));
  absl::StatusOr<onnx::ModelProto> model =
      ParseModel(ReadFileBytes(base + ".onnx"), ModelEncoding::kBinary);
  ASSERT_THAT(model, IsOk());
  ASSERT_THAT(CheckModel(*model), IsOk());
  Gear gear;
  const std::vector<std::string> symbolic = SymbolicDims(model->graph());
  for (const std::string& name : symbolic) {
    gear.emplace_back(name, expected.at("dims").at(name).get<int64_t>());
  }
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(*model, gear, {});
  ASSERT_THAT(nodes, IsOk());
  const nlohmann::json& want = expected.at("nodes");
  ASSERT_EQ(nodes->size(), want.size()) << "every matmul-like node has an expectation";
  std::map<std::string, const nlohmann::json*> by_name;
  for (const nlohmann::json& row : want) by_name[row.at("name").get<std::string>()] = &row;
  double ok_flops = 0, known_flops = 0;
  for (const LoweredNode& node : *nodes) {
    SCOPED_TRACE(node.name);
    ASSERT_EQ(by_name.count(node.name), 1u) << "no expectation for this node";
    const nlohmann::json& row = *by_name.at(node.name);
    EXPECT_EQ(node.op_type, row.at("op_type").get<std::string>());
    ASSERT_TRUE(node.flops.has_value());
    known_flops += *node.flops;
    if (row.at("status") == "UNSUPPORTED") {
      EXPECT_EQ(node.status, NodeStatus::kUnsupported);
      EXPECT_THAT(node.reason, HasSubstr(row.at("reason").get<std::string>()));
      EXPECT_DOUBLE_EQ(*node.flops, row.at("flops").get<double>());
      continue;
    }
    ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
    ok_flops += *node.flops;
    const tl::MatmulProblem& problem = node.problem;
    EXPECT_EQ(std::string(tl::MatmulOpName(problem.op)), row.at("operator").get<std::string>());
    EXPECT_EQ(problem.m, row.at("m").get<int64_t>());
    EXPECT_EQ(problem.k, row.at("k").get<int64_t>());
    EXPECT_EQ(problem.n, row.at("n").get<int64_t>());
    EXPECT_EQ(BatchOfC(problem), row.at("batch").get<std::vector<int64_t>>());
    if (row.contains("dtype_a")) {
      EXPECT_EQ(problem.dtype_a, tl::DataType::kInt8);
      EXPECT_EQ(problem.dtype_b, tl::DataType::kInt8);
    }
    if (row.contains("trans_b")) {
      EXPECT_EQ(problem.trans_b, row.at("trans_b").get<bool>());
    }
    if (row.contains("pertoken")) {
      EXPECT_EQ(problem.quant.pertoken.present, row.at("pertoken").get<bool>());
    }
    if (row.contains("perm_x1")) {
      EXPECT_EQ(problem.transpose.perm_x1, row.at("perm_x1").get<std::vector<int64_t>>());
      EXPECT_EQ(problem.transpose.perm_x2, row.at("perm_x2").get<std::vector<int64_t>>());
    }
    if (row.contains("dtype_b")) {
      EXPECT_EQ(tl::DataTypeName(problem.dtype_b), row.at("dtype_b").get<std::string>());
    }
    if (row.contains("antiquant_scale_shape")) {
      EXPECT_EQ(problem.quant.antiquant_scale.shape,
                row.at("antiquant_scale_shape").get<std::vector<int64_t>>());
    }
    if (row.contains("group_size")) {
      EXPECT_EQ(problem.quant.group_size, row.at("group_size").get<int64_t>());
    }
    if (row.contains("scale_shape")) {
      EXPECT_EQ(problem.quant.scale.shape, row.at("scale_shape").get<std::vector<int64_t>>());
    }
    // The FLOPs of the problem are the node's.
    const double batch = static_cast<double>(tl::BatchProduct(BatchOfC(problem)));
    EXPECT_DOUBLE_EQ(*node.flops, 2.0 * batch * static_cast<double>(problem.m) *
                                      static_cast<double>(problem.k) *
                                      static_cast<double>(problem.n));
  }
  EXPECT_NEAR(ok_flops / known_flops, expected.at("answered_share").get<double>(), 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Models, QuantExportTest,
                         ::testing::Values("llama_block_w8a8_qdq", "bert_large_dynamic",
                                           "qdq_linear_small", "llama_block_nbits",
                                           "weight_only_int8", "mla_einsum"));

}  // namespace
}  // namespace npu::graph
