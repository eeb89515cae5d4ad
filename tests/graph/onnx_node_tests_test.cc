// ONNX's own node tests of the matmul family (Debian's libonnx-testdata):
// every node lowers to a problem whose C has the shape ONNX's reference
// output has, the unsupported ones say why, and the emulator's numerics on
// the float cases match ONNX's reference output within ONNX's own
// tolerance (rtol 1e-3, atol 1e-7).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "server/graph/lowering.h"
#include "server/graph/onnx_model.h"
#include "server/service/convert.h"
#include "server/service/execute.h"
#include "server/tiling/builtin_strategies.h"
#include "tests/testing/files.h"
#include "tests/testing/status_matchers.h"

namespace npu::graph {
namespace {

namespace fs = std::filesystem;
namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using ::npu::testing::IsOk;
using ::npu::testing::ReadFileBytes;
using ::testing::HasSubstr;

const char kTestData[] = "/usr/share/libonnx-testdata/data";

struct NodeCase {
  const char* dir;  // under kTestData
  // Empty: lowered and checked numerically; else a substring of the reason
  // the node is unsupported.
  const char* unsupported;
};

const NodeCase kCases[] = {
    {"node/test_matmul_2d", ""},
    {"node/test_matmul_3d", ""},
    {"node/test_matmul_4d", ""},
    {"node/test_gemm_default_no_bias", ""},
    {"node/test_gemm_default_vector_bias", ""},
    {"node/test_gemm_default_matrix_bias", ""},
    {"node/test_gemm_default_scalar_bias", ""},
    {"node/test_gemm_default_single_elem_vector_bias", ""},
    {"node/test_gemm_default_zero_bias", ""},
    {"node/test_gemm_transposeA", ""},
    {"node/test_gemm_transposeB", ""},
    {"node/test_gemm_alpha", "alpha=0.5"},
    {"node/test_gemm_beta", "beta="},
    {"node/test_gemm_all_attributes", "alpha="},
    {"node/test_einsum_batch_matmul", "DOUBLE"},
    {"node/test_matmulinteger", "QuantBatchMatmulV3"},
    {"node/test_qlinearmatmul_2D", "QuantBatchMatmulV3"},
    {"node/test_qlinearmatmul_3D", "QuantBatchMatmulV3"},
    {"pytorch-converted/test_Linear", ""},
    {"pytorch-converted/test_Linear_no_bias", ""},
    {"pytorch-operator/test_operator_mm", ""},
    {"pytorch-operator/test_operator_addmm", ""},
};

std::vector<int64_t> DimsOf(const onnx::TensorProto& tensor) {
  return std::vector<int64_t>(tensor.dims().begin(), tensor.dims().end());
}

std::vector<float> FloatsOf(const onnx::TensorProto& tensor) {
  if (!tensor.raw_data().empty()) {
    std::vector<float> values(tensor.raw_data().size() / sizeof(float));
    std::memcpy(values.data(), tensor.raw_data().data(), values.size() * sizeof(float));
    return values;
  }
  return std::vector<float>(tensor.float_data().begin(), tensor.float_data().end());
}

pb::Tensor WireTensor(const std::vector<float>& values, const std::vector<int64_t>& shape) {
  pb::Tensor tensor;
  tensor.set_dtype(pb::DATA_TYPE_FLOAT32);
  for (int64_t dim : shape) tensor.add_shape(dim);
  tensor.set_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return tensor;
}

// The operand's storage dims as the problem states them.
std::vector<int64_t> StoredShape(const std::vector<int64_t>& batch, bool trans, int64_t rows,
                                 int64_t cols) {
  std::vector<int64_t> shape = batch;
  shape.push_back(trans ? cols : rows);
  shape.push_back(trans ? rows : cols);
  return shape;
}

// `addend` broadcast NumPy-style onto a tensor of `dims`, added to `values`.
void AddBroadcast(const std::vector<float>& addend, const std::vector<int64_t>& addend_dims,
                  const std::vector<int64_t>& dims, std::vector<float>& values) {
  for (size_t e = 0; e < values.size(); ++e) {
    size_t rest = e, offset = 0, stride = 1;
    for (size_t i = dims.size(); i-- > 0;) {
      const size_t coordinate = rest % static_cast<size_t>(dims[i]);
      rest /= static_cast<size_t>(dims[i]);
      const size_t back = dims.size() - 1 - i;
      if (back < addend_dims.size()) {
        const size_t size = static_cast<size_t>(addend_dims[addend_dims.size() - 1 - back]);
        offset += (size == 1 ? 0 : coordinate) * stride;
        stride *= size;
      }
    }
    values[e] += addend[offset];
  }
}

class OnnxNodeTest : public ::testing::TestWithParam<NodeCase> {};

TEST_P(OnnxNodeTest, LowersWithOnnxsShapeAndNumerics) {
  const fs::path dir = fs::path(kTestData) / GetParam().dir;
  if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << "libonnx-testdata is not installed";
  absl::StatusOr<onnx::ModelProto> model =
      ParseModel(ReadFileBytes(dir / "model.onnx"), ModelEncoding::kBinary);
  ASSERT_THAT(model, IsOk());
  ASSERT_THAT(CheckModel(*model), IsOk());
  absl::StatusOr<std::vector<LoweredNode>> nodes = LowerGraph(*model, {}, {});
  ASSERT_THAT(nodes, IsOk());
  ASSERT_FALSE(nodes->empty());
  // The last matmul computes the graph's output (addmm exports two Gemms).
  const LoweredNode& node = nodes->back();
  if (*GetParam().unsupported == '\0') {
    for (const LoweredNode& other : *nodes) {
      EXPECT_EQ(other.status, NodeStatus::kOk) << other.reason;
    }
  }
  if (*GetParam().unsupported != '\0') {
    EXPECT_EQ(node.status, NodeStatus::kUnsupported);
    EXPECT_THAT(node.reason, HasSubstr(GetParam().unsupported));
    return;
  }
  ASSERT_EQ(node.status, NodeStatus::kOk) << node.reason;
  const tl::MatmulProblem& problem = node.problem;

  // Every tensor by name: the initializers, and the test's inputs for the
  // other graph inputs, in order.
  std::map<std::string, onnx::TensorProto> tensors;
  for (const onnx::TensorProto& tensor : model->graph().initializer())
    tensors[tensor.name()] = tensor;
  int next_input = 0;
  for (const onnx::ValueInfoProto& input : model->graph().input()) {
    if (tensors.count(input.name()) != 0) continue;
    const fs::path file =
        dir / "test_data_set_0" / ("input_" + std::to_string(next_input++) + ".pb");
    ASSERT_TRUE(tensors[input.name()].ParseFromString(ReadFileBytes(file))) << file;
  }
  const onnx::NodeProto& matmul = model->graph().node(node.node_index);
  std::vector<onnx::TensorProto> inputs;
  for (const std::string& name : matmul.input()) {
    if (tensors.count(name) == 0) return;  // computed inside the graph: shapes only
    inputs.push_back(tensors.at(name));
  }
  onnx::TensorProto expected;
  ASSERT_TRUE(expected.ParseFromString(ReadFileBytes(dir / "test_data_set_0" / "output_0.pb")));
  const std::vector<int64_t> out_dims = DimsOf(expected);

  // C's shape: ONNX's output is C with the batch unfolded.
  uint64_t batch = tl::BatchProduct(
      problem.batch.a.size() >= problem.batch.b.size() ? problem.batch.a : problem.batch.b);
  int64_t elements = 1;
  for (int64_t dim : out_dims) elements *= dim;
  EXPECT_EQ(static_cast<int64_t>(batch) * problem.m * problem.n, elements) << GetParam().dir;
  EXPECT_EQ(out_dims.back(), problem.n);

  // Numerics: the emulator on ONNX's inputs.
  ASSERT_GE(inputs.size(), 2u);
  pb::ExecuteRequest request;
  *request.mutable_problem() = npu::server::ProblemToProto(problem);
  request.set_return_c(true);
  pb::ExecuteInputs& operands = *request.mutable_inputs();
  *operands.mutable_a() = WireTensor(
      FloatsOf(inputs[0]), StoredShape(problem.batch.a, problem.trans_a, problem.m, problem.k));
  *operands.mutable_b() = WireTensor(
      FloatsOf(inputs[1]), StoredShape(problem.batch.b, problem.trans_b, problem.k, problem.n));
  const bool c_ignored =
      std::any_of(node.derivation.notes.begin(), node.derivation.notes.end(),
                  [](const std::string& note) { return note.find("beta=0") != std::string::npos; });
  const bool has_c = inputs.size() > 2 && !c_ignored;
  if (problem.has_bias) {
    ASSERT_TRUE(has_c);
    *operands.mutable_bias() = WireTensor(FloatsOf(inputs[2]), {problem.n});
  }
  const tl::StrategyRegistry registry = tl::MakeBuiltinRegistry();
  npu::server::ExecuteOptions options;
  absl::StatusOr<npu::server::PreparedExecute> prepared =
      npu::server::PrepareExecute(request, registry, options);
  ASSERT_THAT(prepared, IsOk());
  pb::ExecuteResponse response;
  ASSERT_THAT(npu::server::RunExecute(*prepared, options, nullptr, &response), IsOk());
  std::vector<float> got(static_cast<size_t>(elements));
  ASSERT_EQ(response.c().data().size(), got.size() * sizeof(float));
  std::memcpy(got.data(), response.c().data().data(), response.c().data().size());
  // Gemm's C that is not a bias row is a separate elementwise Add.
  if (has_c && !problem.has_bias && node.op_type == "Gemm") {
    AddBroadcast(FloatsOf(inputs[2]), DimsOf(inputs[2]), out_dims, got);
  }
  const std::vector<float> want = FloatsOf(expected);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::fabs(got[i] - want[i]), 1e-7 + 1e-3 * std::fabs(want[i]))
        << GetParam().dir << " element " << i << ": " << got[i] << " vs " << want[i];
  }
}

INSTANTIATE_TEST_SUITE_P(MatmulFamily, OnnxNodeTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<NodeCase>& info) {
                           std::string name = fs::path(info.param.dir).filename().string();
                           return name.substr(5);  // without "test_"
                         });

}  // namespace
}  // namespace npu::graph
