// A lowered QDQ node executed on the emulator against the ONNX graph's own
// arithmetic: tests/data/onnx/qdq_linear_small.onnx is one torch QAT Linear
// with its weights; its .reference.json holds an input's int8 codes, the
// weight's codes, the scales, the bias and the graph's float result, which
// scripts/quantized_onnx_models.py evaluated in numpy by ONNX's
// QuantizeLinear / DequantizeLinear arithmetic. The node lowers to
// QuantBatchMatmulV3 with s_x * s_w folded into quant.scale; Execute on the
// same codes gives that result within the path's bound.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "server/graph/lowering.h"
#include "server/graph/onnx_model.h"
#include "server/service/convert.h"
#include "server/service/execute.h"
#include "server/tiling/builtin_strategies.h"
#include "tests/testing/files.h"
#include "tests/testing/status_matchers.h"

#ifndef NPU_TEST_DATA_DIR
#error "NPU_TEST_DATA_DIR is set by tests/graph/CMakeLists.txt"
#endif

namespace npu::graph {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using ::npu::testing::IsOk;
using ::npu::testing::ReadFileBytes;

pb::Tensor Int8Tensor(const nlohmann::json& rows) {
  pb::Tensor tensor;
  tensor.set_dtype(pb::DATA_TYPE_INT8);
  tensor.add_shape(static_cast<int64_t>(rows.size()));
  tensor.add_shape(static_cast<int64_t>(rows.at(0).size()));
  std::string bytes;
  for (const nlohmann::json& row : rows) {
    for (const nlohmann::json& value : row) bytes.push_back(static_cast<char>(value.get<int>()));
  }
  tensor.set_data(bytes);
  return tensor;
}

pb::Tensor Float32Tensor(const std::vector<float>& values) {
  pb::Tensor tensor;
  tensor.set_dtype(pb::DATA_TYPE_FLOAT32);
  tensor.add_shape(static_cast<int64_t>(values.size()));
  tensor.set_data(values.data(), values.size() * sizeof(float));
  return tensor;
}

float Bfloat16At(const std::string& bytes, size_t i) {
  uint16_t bits;
  std::memcpy(&bits, bytes.data() + 2 * i, 2);
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, 4);
  return value;
}

TEST(QdqExecuteTest, LoweredNodeMatchesTheGraphsArithmetic) {
  const std::string base = std::string(NPU_TEST_DATA_DIR) + "/onnx/qdq_linear_small";
  const nlohmann::json reference = nlohmann::json::parse(ReadFileBytes(base + ".reference.json"));
  absl::StatusOr<onnx::ModelProto> model =
      ParseModel(ReadFileBytes(base + ".onnx"), ModelEncoding::kBinary);
  ASSERT_THAT(model, IsOk());
  StripInitializerData(*model);
  LoweringOptions options;
  options.compute_dtype = tl::DataType::kBFloat16;
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(*model, {}, options);
  ASSERT_THAT(nodes, IsOk());
  ASSERT_EQ(nodes->size(), 1u);
  const LoweredNode& node = nodes->front();
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  const tl::MatmulProblem& problem = node.problem;
  ASSERT_EQ(problem.op, tl::MatmulOp::kQuantBatchMatmulV3);
  ASSERT_TRUE(problem.trans_b);
  ASSERT_TRUE(problem.has_bias);
  ASSERT_EQ(problem.quant.scale.dtype, tl::DataType::kFloat32);
  const int64_t m = problem.m, n = problem.n;

  // The folded scale, as the lowering's derivation says: s_x * s_w per channel.
  const float s_x = reference.at("s_x").get<float>();
  std::vector<float> scale;
  for (const nlohmann::json& s_w : reference.at("s_w")) scale.push_back(s_x * s_w.get<float>());
  pb::ExecuteRequest request;
  request.set_id("qdq");
  *request.mutable_problem() = server::ProblemToProto(problem);
  request.set_return_c(true);
  pb::ExecuteInputs& inputs = *request.mutable_inputs();
  *inputs.mutable_a() = Int8Tensor(reference.at("x_q"));
  *inputs.mutable_b() = Int8Tensor(reference.at("w_q"));
  *inputs.mutable_scale() = Float32Tensor(scale);
  *inputs.mutable_bias() = Float32Tensor(reference.at("bias").get<std::vector<float>>());

  const tl::StrategyRegistry registry = tl::MakeBuiltinRegistry();
  const server::ExecuteOptions execute;
  absl::StatusOr<server::PreparedExecute> prepared =
      server::PrepareExecute(request, registry, execute);
  ASSERT_THAT(prepared, IsOk());
  pb::ExecuteResponse response;
  ASSERT_THAT(server::RunExecute(*prepared, execute, nullptr, &response), IsOk());
  EXPECT_TRUE(response.accuracy().passed());
  ASSERT_EQ(response.c().dtype(), pb::DATA_TYPE_BFLOAT16);
  ASSERT_EQ(response.c().data().size(), static_cast<size_t>(m * n * 2));

  // The bound of this path (MIX_ASW's vector epilogue): the L0C sum is
  // exact (int32); fp32(acc) * scale and + bias each round to fp32 (2^-24);
  // y rounds to bfloat16 (unit roundoff 2^-8); the graph's own float32
  // arithmetic adds a few units of 2^-24 of the largest term.
  EXPECT_EQ(response.accuracy().output_unit_roundoff(), 1.0 / 256);
  const nlohmann::json& y = reference.at("y");
  double largest = 0;
  for (const nlohmann::json& row : y) {
    for (const nlohmann::json& v : row) largest = std::max(largest, std::abs(v.get<double>()));
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double want = y.at(i).at(j).get<double>();
      const double got = Bfloat16At(response.c().data(), static_cast<size_t>(i * n + j));
      const double bound = (std::ldexp(1.0, -8) + std::ldexp(1.0, -20)) * std::abs(want) +
                           std::ldexp(1.0, -16) * largest;
      EXPECT_LE(std::abs(got - want), bound) << "y[" << i << "][" << j << "]";
    }
  }
}

}  // namespace
}  // namespace npu::graph
