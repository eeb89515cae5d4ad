// The committed torch exports (tests/data/onnx, scripts/export_onnx_models.py)
// against the GEMMs torch's profiler records on a CPU forward pass of the
// same model: the multiset of (batch, m, k, n) the service lowers equals the
// profiler's. The lowering rules make the two comparable: a MatMul with a
// 2-D weight folds A's batch into m, as aten::linear flattens it for mm /
// addmm, and a batched MatMul is one bmm per broadcast batch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

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
using Gemm = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // batch, m, k, n

class TorchExportTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchExportTest, LoweredProblemsAreTheProfilersGemms) {
  const std::string base = std::string(NPU_TEST_DATA_DIR) + "/onnx/" + GetParam();
  const nlohmann::json golden = nlohmann::json::parse(ReadFileBytes(base + ".matmuls.json"));
  absl::StatusOr<onnx::ModelProto> model =
      ParseModel(ReadFileBytes(base + ".onnx"), ModelEncoding::kBinary);
  ASSERT_THAT(model, IsOk());
  ASSERT_THAT(CheckModel(*model), IsOk());
  std::map<std::string, std::vector<int64_t>> values;
  for (const auto& [name, value] : golden.at("dims").items()) {
    const std::vector<std::string> dims = SymbolicDims(model->graph());
    if (std::find(dims.begin(), dims.end(), name) != dims.end()) {
      values[name] = {value.get<int64_t>()};
    }
  }
  absl::StatusOr<std::vector<Gear>> gears =
      BuildGears(SymbolicDims(model->graph()), values, GearPolicy::kZip, 1);
  ASSERT_THAT(gears, IsOk());
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(*model, gears->front(), {});
  ASSERT_THAT(nodes, IsOk());

  std::map<Gemm, int> lowered;
  for (const LoweredNode& node : *nodes) {
    ASSERT_EQ(node.status, NodeStatus::kOk) << node.name << ": " << node.reason;
    const tl::MatmulProblem& p = node.problem;
    const int64_t batch = p.op == tl::MatmulOp::kTransposeBatchMatMul
                              ? p.transpose.batch
                              : static_cast<int64_t>(tl::BatchProduct(
                                    p.batch.a.size() >= p.batch.b.size() ? p.batch.a : p.batch.b));
    ++lowered[Gemm{batch, p.m, p.k, p.n}];
  }
  std::map<Gemm, int> profiled;
  for (const nlohmann::json& gemm : golden.at("gemms")) {
    profiled[Gemm{gemm.at("batch"), gemm.at("m"), gemm.at("k"), gemm.at("n")}] +=
        gemm.at("count").get<int>();
  }
  EXPECT_EQ(lowered, profiled);
}

INSTANTIATE_TEST_SUITE_P(Models, TorchExportTest,
                         ::testing::Values("vit_b_16", "swin_t", "resnet50", "encoder_llama3_8b",
                                           "encoder_qwen2_7b"));

}  // namespace
}  // namespace npu::graph
