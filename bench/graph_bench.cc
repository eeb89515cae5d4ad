// GetGraphTiling at scale: a transformer of `layers` decoder layers as an
// ONNX model (9 matmuls a layer: q / k / v / o projections with their bias
// Adds, the two attention products over heads, and a gated MLP), answered
// for `gears` sequence lengths. 280 layers x 4 gears is 10,080 matmul node
// answers. Each phase is timed on its own:
//
//   BM_GraphParseAndCheck  parse the bytes, strip, ONNX's checker
//   BM_GraphLowerOneGear   shape inference, propagation and lowering, one gear
//   BM_GraphAnswer         the whole call (GraphService::Answer, every gear,
//                          the distinct problems decided in parallel), cold
//                          decision cache each iteration; with emulate:1 each
//                          distinct problem is also emulated (timing only)
//
// Counters: graph nodes, matmul node answers, distinct problems.
#include <benchmark/benchmark.h>

#include <string>

#include "prometheus/registry.h"
#include "server/graph/lowering.h"
#include "server/graph/onnx_model.h"
#include "server/metrics/service_metrics.h"
#include "server/service/graph_service.h"
#include "server/tiling/builtin_strategies.h"
#include "tests/testing/onnx_builder.h"

namespace {

namespace pb = ::npu::tiling::v1;
using ::npu::testing::IntsAttr;
using ::npu::testing::kFloat16;
using ::npu::testing::OnnxBuilder;

constexpr int64_t kHidden = 4096, kHeads = 32, kHeadDim = 128, kFfn = 14336;

// The model's bytes: `layers` layers on input [1, seq, 4096].
std::string TransformerModel(int layers) {
  OnnxBuilder model;
  model.Input("x0", kFloat16, {1, "seq", kHidden});
  model.Initializer("heads_shape", ::npu::testing::kInt64, {4}, {1, -1, kHeads, kHeadDim});
  model.Initializer("merge_shape", ::npu::testing::kInt64, {3}, {1, -1, kHidden});
  for (int l = 0; l < layers; ++l) {
    const std::string p = "l" + std::to_string(l) + "_";
    const std::string x = "x" + std::to_string(l);
    auto linear = [&](const std::string& name, const std::string& in, int64_t k, int64_t n) {
      model.Input(p + name + "_w", kFloat16, {k, n}).Input(p + name + "_b", kFloat16, {n});
      model.Node("MatMul", {in, p + name + "_w"}, {p + name + "_mm"}, {}, p + name);
      model.Node("Add", {p + name + "_mm", p + name + "_b"}, {p + name + "_out"});
      return p + name + "_out";
    };
    auto heads = [&](const std::string& in, const std::vector<int64_t>& perm) {
      model.Node("Reshape", {in, "heads_shape"}, {in + "_r"});
      model.Node("Transpose", {in + "_r"}, {in + "_t"}, {IntsAttr("perm", perm)});
      return in + "_t";
    };
    const std::string q = heads(linear("q", x, kHidden, kHidden), {0, 2, 1, 3});
    const std::string k = heads(linear("k", x, kHidden, kHidden), {0, 2, 3, 1});
    const std::string v = heads(linear("v", x, kHidden, kHidden), {0, 2, 1, 3});
    model.Node("MatMul", {q, k}, {p + "scores"}, {}, p + "scores_mm");
    model.Node("Softmax", {p + "scores"}, {p + "probs"});
    model.Node("MatMul", {p + "probs", v}, {p + "ctx"}, {}, p + "context_mm");
    model.Node("Transpose", {p + "ctx"}, {p + "ctx_t"}, {IntsAttr("perm", {0, 2, 1, 3})});
    model.Node("Reshape", {p + "ctx_t", "merge_shape"}, {p + "ctx_m"});
    const std::string o = linear("o", p + "ctx_m", kHidden, kHidden);
    model.Node("Add", {x, o}, {p + "h"});
    const std::string gate = linear("gate", p + "h", kHidden, kFfn);
    const std::string up = linear("up", p + "h", kHidden, kFfn);
    model.Node("Mul", {gate, up}, {p + "gu"});
    const std::string down = linear("down", p + "gu", kFfn, kHidden);
    model.Node("Add", {p + "h", down}, {"x" + std::to_string(l + 1)});
  }
  model.Output("x" + std::to_string(layers), kFloat16, 3);
  return model.Bytes();
}

pb::GraphTilingRequest Request(const std::string& bytes, int gears) {
  pb::GraphTilingRequest request;
  request.set_model(bytes);
  pb::DimValues& seq = (*request.mutable_dims())["seq"];
  for (int g = 0; g < gears; ++g) seq.add_values(int64_t{128} << g);
  return request;
}

void BM_GraphParseAndCheck(benchmark::State& state) {
  const std::string bytes = TransformerModel(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    absl::StatusOr<onnx::ModelProto> model =
        npu::graph::ParseModel(bytes, npu::graph::ModelEncoding::kBinary);
    npu::graph::StripInitializerData(*model);
    benchmark::DoNotOptimize(npu::graph::CheckModel(*model));
  }
  state.counters["model_bytes"] = static_cast<double>(bytes.size());
}
BENCHMARK(BM_GraphParseAndCheck)->Arg(80)->Arg(280)->Unit(benchmark::kMillisecond);

void BM_GraphLowerOneGear(benchmark::State& state) {
  absl::StatusOr<onnx::ModelProto> model = npu::graph::ParseModel(
      TransformerModel(static_cast<int>(state.range(0))), npu::graph::ModelEncoding::kBinary);
  size_t nodes = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<npu::graph::LoweredNode>> lowered =
        npu::graph::LowerGraph(*model, {{"seq", 2048}}, {});
    nodes = lowered->size();
  }
  state.counters["matmul_nodes"] = static_cast<double>(nodes);
  state.counters["graph_nodes"] = model->graph().node_size();
}
BENCHMARK(BM_GraphLowerOneGear)->Arg(80)->Arg(280)->Unit(benchmark::kMillisecond);

void BM_GraphAnswer(benchmark::State& state) {
  const int layers = static_cast<int>(state.range(0));
  const int gears = static_cast<int>(state.range(1));
  pb::GraphTilingRequest request = Request(TransformerModel(layers), gears);
  request.set_emulate(state.range(2) != 0);
  const npu::tiling::StrategyRegistry registry = npu::tiling::MakeBuiltinRegistry();
  prometheus::Registry prometheus;
  npu::server::ServiceMetrics metrics(prometheus);
  npu::server::ExecuteOptions execute;
  pb::GraphTilingResponse response;
  for (auto _ : state) {
    // A cold cache: every distinct problem is decided.
    npu::server::TilingAnswers answers(registry, metrics, 65536);
    npu::server::GraphService graph(answers, registry, metrics, execute, {});
    response.Clear();
    if (!graph.Answer(request, nullptr, &response).ok()) state.SkipWithError("Answer failed");
  }
  size_t answers = 0;
  for (const pb::GraphGear& gear : response.gears()) answers += gear.nodes_size();
  state.counters["matmul_node_answers"] = static_cast<double>(answers);
  state.counters["distinct_problems"] = response.problems_size();
  state.counters["graph_nodes"] = response.graph_nodes();
}
BENCHMARK(BM_GraphAnswer)
    ->ArgNames({"layers", "gears", "emulate"})
    ->Args({80, 4, 0})
    ->Args({280, 4, 0})
    ->Args({280, 4, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
