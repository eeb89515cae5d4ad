// GetGraphTiling through a real server: the answer's structure (gears, nodes,
// distinct problems decided once, emulated times, totals, provenance), its
// agreement with GetTiling, the errors, and the metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/service/provenance.h"
#include "tests/service/test_server.h"
#include "tests/testing/onnx_builder.h"

namespace npu::server {
namespace {

using ::npu::server::testing::CallGetTiling;
using ::npu::server::testing::LoopbackOptions;
using ::npu::server::testing::TestServer;
using ::npu::testing::kFloat16;
using ::npu::testing::OnnxBuilder;
using ::npu::testing::WaitFor;
using ::testing::HasSubstr;
using ::testing::SizeIs;

namespace pb = ::npu::tiling::v1;

// Two projections of the same shape and one attention product, over a
// symbolic sequence length.
std::string ProjectionModel() {
  OnnxBuilder model;
  model.Input("x", kFloat16, {2, "seq", 512}).Input("wq", kFloat16, {512, 512});
  model.Input("wk", kFloat16, {512, 512});
  model.Node("MatMul", {"x", "wq"}, {"q"}, {}, "q_proj");
  model.Node("MatMul", {"x", "wk"}, {"k"}, {}, "k_proj");
  model.Node("Transpose", {"k"}, {"kt"}, {::npu::testing::IntsAttr("perm", {0, 2, 1})});
  model.Node("MatMul", {"q", "kt"}, {"s"}, {}, "scores");
  model.Output("s", kFloat16);
  return model.Bytes();
}

pb::GraphTilingRequest Request(const std::string& model) {
  pb::GraphTilingRequest request;
  request.set_id("graph");
  request.set_model(model);
  pb::DimValues& seq = (*request.mutable_dims())["seq"];
  seq.add_values(128);
  seq.add_values(1024);
  return request;
}

grpc::Status Call(TestServer& server, const pb::GraphTilingRequest& request,
                  pb::GraphTilingResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return server.stub().GetGraphTiling(&context, request, response);
}

TEST(GraphServiceTest, AnswersEveryGearAndDecidesEachProblemOnce) {
  TestServer server;
  pb::GraphTilingRequest request = Request(ProjectionModel());
  request.set_emulate(true);
  pb::GraphTilingResponse response;
  const grpc::Status status = Call(server, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.id(), "graph");
  EXPECT_EQ(response.graph_nodes(), 4u);
  ASSERT_THAT(response.gears(), SizeIs(2));
  // Per gear: q_proj and k_proj share a problem, scores has its own; two
  // gears make four distinct problems.
  ASSERT_THAT(response.problems(), SizeIs(4));
  for (int g = 0; g < 2; ++g) {
    const pb::GraphGear& gear = response.gears(g);
    EXPECT_EQ(gear.dims().at("seq"), g == 0 ? 128 : 1024);
    ASSERT_THAT(gear.nodes(), SizeIs(3));
    EXPECT_EQ(gear.ok_nodes(), 3u);
    const pb::GraphNode& q = gear.nodes(0);
    const pb::GraphNode& k = gear.nodes(1);
    const pb::GraphNode& scores = gear.nodes(2);
    EXPECT_EQ(q.name(), "q_proj");
    EXPECT_EQ(q.status(), pb::NODE_STATUS_OK);
    EXPECT_EQ(q.problem_index(), k.problem_index());
    EXPECT_NE(q.problem_index(), scores.problem_index());
    EXPECT_EQ(q.op(), pb::OPERATOR_MATMUL_V3);
    EXPECT_EQ(q.problem().m(), 2 * gear.dims().at("seq"));
    EXPECT_TRUE(q.derivation().folded_batch());
    EXPECT_EQ(scores.op(), pb::OPERATOR_BATCH_MATMUL_V3);
    EXPECT_TRUE(scores.problem().trans_b());
    EXPECT_THAT(scores.derivation().absorbed_transposes(), SizeIs(1));
    // Totals: three nodes, the sum of their problems' times.
    double sum = 0;
    uint32_t counted = 0;
    for (const pb::OperatorTotal& total : gear.totals()) {
      sum += total.time_us();
      counted += total.nodes();
    }
    EXPECT_EQ(counted, 3u);
    EXPECT_NEAR(gear.total_time_us(), sum, 1e-9);
    const double expected = 2 * response.problems(q.problem_index()).time_us() +
                            response.problems(scores.problem_index()).time_us();
    EXPECT_NEAR(gear.total_time_us(), expected, 1e-6);
  }
  const std::string& fingerprint = response.provenance().chip_fingerprint();
  EXPECT_THAT(fingerprint, SizeIs(16));
  EXPECT_EQ(response.provenance().cann_revision(), kCannRevision);
  EXPECT_FALSE(response.provenance().engine_version().empty());
  for (const pb::GraphProblem& problem : response.problems()) {
    EXPECT_FALSE(problem.has_status()) << problem.status().message();
    EXPECT_GT(problem.time_us(), 0);
    EXPECT_EQ(problem.decision_key(), DecisionKey(problem.problem(), fingerprint));
    // The compact answer is GetTiling's.
    pb::TilingRequest tiling;
    *tiling.mutable_problem() = problem.problem();
    pb::TilingResponse direct;
    ASSERT_TRUE(CallGetTiling(server, tiling, &direct).ok());
    EXPECT_EQ(problem.answer().tiling_key(), direct.tiling_key());
    EXPECT_EQ(problem.answer().strategy(), direct.strategy());
    EXPECT_EQ(problem.answer().block_dim(), direct.block_dim());
    EXPECT_EQ(problem.answer().workspace_bytes(), direct.workspace_bytes());
    EXPECT_THAT(problem.answer().raw_words(), ::testing::ElementsAreArray(direct.raw_words()));
  }
  // A call's metrics are recorded as it finishes, after its answer is sent.
  EXPECT_TRUE(WaitFor([&server] {
    return server.Metric("grpc_server_handled_total",
                         {{"grpc_method", "GetGraphTiling"}, {"grpc_code", "OK"}}) >= 1;
  }));
  EXPECT_EQ(server.Metric("npu_graph_nodes_total"), 6);
  EXPECT_EQ(server.Metric("npu_graph_problems_total"), 4);
  EXPECT_EQ(server.Metric("grpc_server_handled_total",
                          {{"grpc_method", "GetGraphTiling"}, {"grpc_code", "OK"}}),
            1);
}

TEST(GraphServiceTest, CoverageSumsTheFlopsOfEachStatus) {
  // An answered projection, a quantized QDQ matmul answered as
  // QuantBatchMatmulV3, a weight-only one with uint8 codes (UNSUPPORTED) and
  // one whose rows are data-dependent (UNRESOLVED, its FLOPs unknown).
  using ::npu::testing::IntAttr;
  using ::npu::testing::kFloat;
  using ::npu::testing::kInt64;
  using ::npu::testing::kInt8;
  OnnxBuilder model;
  model.Input("x", kFloat16, {64, 512}).Input("w", kFloat16, {512, 256});
  model.Node("MatMul", {"x", "w"}, {"y"}, {}, "dense");
  model.Input("a", kFloat, {64, 512}).Input("s", kFloat, {});
  model.Input("w_q", kInt8, {256, 512}).Input("s_w", kFloat, {256});
  model.Initializer("zp", kInt8, {});
  model.Node("QuantizeLinear", {"a", "s", "zp"}, {"a_q"});
  model.Node("DequantizeLinear", {"a_q", "s", "zp"}, {"a_dq"});
  model.Node("DequantizeLinear", {"w_q", "s_w"}, {"w_dq"}, {IntAttr("axis", 0)}, "dq_w");
  model.Node("Gemm", {"a_dq", "w_dq"}, {"qy"}, {IntAttr("transB", 1)}, "quantized");
  model.Input("w_u8", onnx::TensorProto_DataType_UINT8, {256, 512});
  model.Node("DequantizeLinear", {"w_u8", "s_w"}, {"w_u8_dq"}, {IntAttr("axis", 0)}, "dq_u8");
  model.Node("Gemm", {"a", "w_u8_dq"}, {"wy"}, {IntAttr("transB", 1)}, "weight_only_uint8");
  model.Node("NonZero", {"x"}, {"nz"}, {}, "route");
  model.Initializer("zero", kInt64, {}, {0});
  model.Node("Gather", {"nz", "zero"}, {"rows"}, {IntAttr("axis", 0)});
  model.Node("Gather", {"x", "rows"}, {"picked"}, {IntAttr("axis", 0)});
  model.Node("MatMul", {"picked", "w"}, {"ey"}, {}, "expert");
  model.Output("y", kFloat16, 2).Output("qy", kFloat, 2).Output("wy", kFloat, 2);
  model.Output("ey", kFloat16, 2);
  TestServer server;
  pb::GraphTilingRequest request;
  request.set_model(model.Bytes());
  pb::GraphTilingResponse response;
  const grpc::Status status = Call(server, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_THAT(response.gears(), SizeIs(1));
  const pb::GraphGear& gear = response.gears(0);
  ASSERT_THAT(gear.nodes(), SizeIs(4));
  EXPECT_EQ(gear.nodes(1).status(), pb::NODE_STATUS_OK) << gear.nodes(1).reason();
  EXPECT_EQ(gear.nodes(1).op(), pb::OPERATOR_QUANT_BATCH_MATMUL_V3);
  EXPECT_FALSE(gear.nodes(1).problem().quant().scale().shape().empty());
  EXPECT_EQ(gear.nodes(2).status(), pb::NODE_STATUS_UNSUPPORTED);
  EXPECT_THAT(gear.nodes(2).reason(), HasSubstr("UINT8"));
  EXPECT_EQ(gear.nodes(3).status(), pb::NODE_STATUS_UNRESOLVED);
  EXPECT_THAT(gear.nodes(3).reason(), HasSubstr("NonZero 'route'"));
  const double each = 2.0 * 64 * 512 * 256;
  EXPECT_DOUBLE_EQ(gear.nodes(0).flops(), each);
  EXPECT_FALSE(gear.nodes(3).flops_known());
  const pb::GraphCoverage& coverage = gear.coverage();
  EXPECT_DOUBLE_EQ(coverage.answered_share(), 2.0 / 3.0);
  EXPECT_EQ(coverage.nodes_without_flops(), 1u);
  ASSERT_THAT(coverage.by_status(), SizeIs(3));
  EXPECT_EQ(coverage.by_status(0).status(), pb::NODE_STATUS_OK);
  EXPECT_EQ(coverage.by_status(0).nodes(), 2u);
  EXPECT_DOUBLE_EQ(coverage.by_status(0).flops(), 2 * each);
  EXPECT_EQ(coverage.by_status(1).status(), pb::NODE_STATUS_UNSUPPORTED);
  EXPECT_DOUBLE_EQ(coverage.by_status(1).flops(), each);
  EXPECT_EQ(coverage.by_status(2).status(), pb::NODE_STATUS_UNRESOLVED);
  EXPECT_EQ(coverage.by_status(2).nodes_without_flops(), 1u);
}

TEST(GraphServiceTest, DecisionKeysDependOnTheChip) {
  TestServer server;
  pb::GraphTilingRequest request = Request(ProjectionModel());
  pb::GraphTilingResponse base, smaller;
  ASSERT_TRUE(Call(server, request, &base).ok());
  request.mutable_platform_overrides()->set_aic_num(16);
  ASSERT_TRUE(Call(server, request, &smaller).ok());
  EXPECT_NE(base.provenance().chip_fingerprint(), smaller.provenance().chip_fingerprint());
  EXPECT_NE(base.problems(0).decision_key(), smaller.problems(0).decision_key());
  EXPECT_EQ(smaller.platform().aic_num(), 16u);
  // The same request twice: the same keys.
  pb::GraphTilingResponse again;
  ASSERT_TRUE(Call(server, request, &again).ok());
  EXPECT_EQ(again.problems(0).decision_key(), smaller.problems(0).decision_key());
}

TEST(GraphServiceTest, ErrorsNameTheFieldAndTheLimit) {
  ServerOptions options = LoopbackOptions();
  options.service.graph.max_gears = 2;
  options.service.graph.max_model_bytes = 4096;
  TestServer server(options);
  pb::GraphTilingResponse response;
  const struct {
    const char* what;
    pb::GraphTilingRequest request;
    grpc::StatusCode code;
    const char* message;
  } cases[] = {
      {"garbage",
       [] {
         auto r = Request(ProjectionModel());
         r.set_model("\x08\x01junk{");
         return r;
       }(),
       grpc::StatusCode::INVALID_ARGUMENT, "model: neither"},
      {"empty",
       [] {
         auto r = Request(ProjectionModel());
         r.clear_model();
         return r;
       }(),
       grpc::StatusCode::INVALID_ARGUMENT, "model: empty"},
      {"too large",
       [] {
         auto r = Request(ProjectionModel());
         r.set_model(std::string(5000, 'x'));
         return r;
       }(),
       grpc::StatusCode::INVALID_ARGUMENT, "above the limit of 4096 (--max_message_bytes)"},
      {"unknown dim",
       [] {
         auto r = Request(ProjectionModel());
         (*r.mutable_dims())["batch"].add_values(1);
         return r;
       }(),
       grpc::StatusCode::INVALID_ARGUMENT, "dims: 'batch' is not a symbolic dim"},
      {"gears",
       [] {
         auto r = Request(ProjectionModel());
         (*r.mutable_dims())["seq"].add_values(7);
         return r;
       }(),
       grpc::StatusCode::INVALID_ARGUMENT, "3 gears is above the limit of 2"},
      {"compute dtype",
       [] {
         auto r = Request(ProjectionModel());
         r.set_compute_dtype(pb::DATA_TYPE_FLOAT32);
         return r;
       }(),
       grpc::StatusCode::INVALID_ARGUMENT, "compute_dtype"},
      {"platform",
       [] {
         auto r = Request(ProjectionModel());
         r.set_platform("no-such-chip");
         return r;
       }(),
       grpc::StatusCode::NOT_FOUND, "no-such-chip"},
      {"architecture",
       [] {
         auto r = Request(ProjectionModel());
         r.set_platform("ascend910b1");
         return r;
       }(),
       grpc::StatusCode::FAILED_PRECONDITION, "platform:"},
      {"override",
       [] {
         auto r = Request(ProjectionModel());
         r.mutable_platform_overrides()->set_aic_num(0);
         return r;
       }(),
       grpc::StatusCode::INVALID_ARGUMENT, "platform_overrides.aic_num"},
  };
  for (const auto& c : cases) {
    const grpc::Status status = Call(server, c.request, &response);
    EXPECT_EQ(status.error_code(), c.code) << c.what << ": " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(c.message)) << c.what;
  }
  // More node answers than the server allows.
  ServerOptions small = LoopbackOptions();
  small.service.graph.max_node_answers = 5;
  TestServer limited(small);
  const grpc::Status limit = Call(limited, Request(ProjectionModel()), &response);
  EXPECT_EQ(limit.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << limit.error_message();
  EXPECT_THAT(limit.error_message(),
              HasSubstr("3 matmul nodes x 2 gears is 6 node answers, above the limit of 5"));
  // A symbolic dim without a value: the nodes that need it are unresolved,
  // the call is OK.
  pb::GraphTilingRequest request = Request(ProjectionModel());
  request.clear_dims();
  ASSERT_TRUE(Call(server, request, &response).ok());
  ASSERT_THAT(response.gears(), SizeIs(1));
  for (const pb::GraphNode& node : response.gears(0).nodes()) {
    EXPECT_EQ(node.status(), pb::NODE_STATUS_UNRESOLVED);
    EXPECT_THAT(node.reason(), HasSubstr("dim 'seq'"));
    EXPECT_EQ(node.problem_index(), -1);
  }
}

// ONNX Runtime's MoE over 16 tokens: the router's MatMul, then 8 experts
// (inter 128, top-2, SiLU-gated with fc3).
std::string MoeModel() {
  OnnxBuilder model;
  model.Input("x", kFloat16, {16, 64}).Input("gate", kFloat16, {64, 8});
  model.Input("w1", kFloat16, {8, 128, 64}).Input("w2", kFloat16, {8, 64, 128});
  model.Input("w3", kFloat16, {8, 128, 64});
  model.Node("MatMul", {"x", "gate"}, {"logits"}, {}, "router");
  model
      .Node(
          "MoE", {"x", "logits", "w1", "", "w2", "", "w3"}, {"y"},
          {::npu::testing::IntAttr("k", 2), ::npu::testing::StringAttr("activation_type", "silu")},
          "moe")
      .InDomain("com.microsoft");
  model.Output("y", kFloat16, 2);
  return model.Bytes();
}

TEST(GraphServiceTest, AnMoeNodeAnswersItsExpertMatmulsAsGroupedMatmul) {
  TestServer server;
  pb::GraphTilingRequest request;
  request.set_model(MoeModel());
  pb::GraphTilingResponse response;
  const grpc::Status status = Call(server, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_THAT(response.gears(), SizeIs(1));
  const pb::GraphGear& gear = response.gears(0);
  ASSERT_THAT(gear.nodes(), SizeIs(4));
  EXPECT_EQ(gear.nodes(0).op(), pb::OPERATOR_MATMUL_V3);
  const char* const names[] = {"moe/fc1", "moe/fc3", "moe/fc2"};
  for (int i = 1; i < 4; ++i) {
    const pb::GraphNode& node = gear.nodes(i);
    SCOPED_TRACE(node.name());
    EXPECT_EQ(node.name(), names[i - 1]);
    EXPECT_EQ(node.op_type(), "MoE");
    EXPECT_EQ(node.node_index(), 1);
    // Lowered; whether the engine has a tiling for it is the engine's.
    EXPECT_NE(node.status(), pb::NODE_STATUS_UNSUPPORTED) << node.reason();
    EXPECT_NE(node.status(), pb::NODE_STATUS_UNRESOLVED) << node.reason();
    ASSERT_GE(node.problem_index(), 0);
    EXPECT_EQ(node.op(), pb::OPERATOR_GROUPED_MATMUL);
    const pb::GroupedInputs& grouped = node.problem().grouped();
    ASSERT_THAT(grouped.x().instances(), SizeIs(1));
    EXPECT_THAT(grouped.x().instances(0).origin(), ::testing::ElementsAre(32, i == 3 ? 128 : 64));
    EXPECT_THAT(grouped.group_list().instances(0).origin(), ::testing::ElementsAre(8));
    EXPECT_TRUE(node.flops_known());
    EXPECT_DOUBLE_EQ(node.flops(), 2.0 * 32 * 64 * 128);
    ASSERT_THAT(node.derivation().assumptions(), SizeIs(1));
    EXPECT_THAT(node.derivation().assumptions(0), HasSubstr("spread them evenly (4 per expert)"));
  }
  // fc1 and fc3 are one problem, decided once.
  EXPECT_EQ(gear.nodes(1).problem_index(), gear.nodes(2).problem_index());
  EXPECT_THAT(response.problems(), SizeIs(3));
  // The node limit counts the MoE node's three answers.
  ServerOptions small = LoopbackOptions();
  small.service.graph.max_node_answers = 3;
  TestServer limited(small);
  const grpc::Status limit = Call(limited, request, &response);
  EXPECT_EQ(limit.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << limit.error_message();
  EXPECT_THAT(limit.error_message(), HasSubstr("4 matmul nodes x 1 gears is 4 node answers"));
}

TEST(GraphServiceTest, ListPlatformsCarriesTheProvenanceAndFingerprints) {
  TestServer server;
  grpc::ClientContext context;
  pb::ListPlatformsResponse platforms;
  ASSERT_TRUE(server.stub().ListPlatforms(&context, pb::ListPlatformsRequest(), &platforms).ok());
  EXPECT_EQ(platforms.provenance().cann_revision(), kCannRevision);
  ASSERT_EQ(platforms.chip_fingerprints_size(), platforms.platforms_size());
  pb::GraphTilingResponse graph;
  ASSERT_TRUE(Call(server, Request(ProjectionModel()), &graph).ok());
  EXPECT_EQ(platforms.chip_fingerprints().at("ascend950pr"), graph.provenance().chip_fingerprint());
  EXPECT_NE(platforms.chip_fingerprints().at("ascend950pr"),
            platforms.chip_fingerprints().at("ascend910b1"));
}

}  // namespace
}  // namespace npu::server
