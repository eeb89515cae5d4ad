// Fuzz target: GetGraphTiling's model path (server/graph) on arbitrary
// bytes: parsing (binary, then text), the initializers' stripping, ONNX's
// checker, the gears, shape inference and propagation, and the lowering.
//
// Every step must return a value or a status, never crash or hang. Errors
// are INVALID_ARGUMENT with a message naming "model" or "dims"; a lowered
// node has a problem the engine accepts, an unlowered one a reason.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "server/graph/lowering.h"
#include "server/graph/onnx_model.h"
#include "server/tiling/validate.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "onnx_graph_fuzzer: %s\n", what);
  std::abort();
}

void CheckError(const absl::Status& status, absl::string_view field) {
  if (status.code() != absl::StatusCode::kInvalidArgument) Fail("an error not INVALID_ARGUMENT");
  if (!absl::StartsWith(status.message(), field)) Fail("an error not naming its field");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace graph = ::npu::graph;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<onnx::ModelProto> model = graph::ParseModel(bytes, graph::ModelEncoding::kDetect);
  if (!model.ok()) {
    CheckError(model.status(), "model: ");
    return 0;
  }
  graph::StripInitializerData(*model);
  absl::Status checked = graph::CheckModel(*model);
  if (!checked.ok()) {
    CheckError(checked, "model: ");
    return 0;
  }
  // Every symbolic dim at a small value, so that shapes resolve.
  std::map<std::string, std::vector<int64_t>> values;
  for (const std::string& dim : graph::SymbolicDims(model->graph())) values[dim] = {3};
  absl::StatusOr<std::vector<graph::Gear>> gears =
      graph::BuildGears(graph::SymbolicDims(model->graph()), values, graph::GearPolicy::kZip, 4);
  if (!gears.ok()) Fail("gears of the model's own dims refused");
  graph::LoweringOptions options;
  options.fuse_epilogues = size % 2 == 0;
  absl::StatusOr<std::vector<graph::LoweredNode>> nodes =
      graph::LowerGraph(*model, gears->front(), options);
  if (!nodes.ok()) {
    CheckError(nodes.status(), "model: ");
    return 0;
  }
  for (const graph::LoweredNode& node : *nodes) {
    if (node.status == graph::NodeStatus::kOk) {
      if (!npu::tiling::ValidateProblem(node.problem).ok()) Fail("a lowered problem is invalid");
    } else if (node.reason.empty()) {
      Fail("an unlowered node without a reason");
    }
  }
  return 0;
}
