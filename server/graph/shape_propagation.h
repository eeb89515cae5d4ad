// Shapes of an ONNX graph at one gear, where ONNX's own shape inference
// stops.
//
// ONNX 1.12's InferShapes cannot follow the shape arithmetic exporters write
// for dynamic dims (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as
// torch emits for every attention head split): past the first such Reshape
// every tensor's shape is unknown. Once a gear fixes the graph's inputs,
// that arithmetic has values, so this pass walks the graph once in
// topological order, computes the int64 values of small tensors (at most
// kMaxValueElements) and the dims of every tensor of the ops transformer and
// CNN exports use, and falls back to ONNX's inferred shape for any other op.
#ifndef NPU_SERVER_GRAPH_SHAPE_PROPAGATION_H_
#define NPU_SERVER_GRAPH_SHAPE_PROPAGATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_pb.h"

namespace npu::graph {

// Values are tracked for tensors of at most this many elements.
inline constexpr size_t kMaxValueElements = 64;

// What is known of one tensor.
struct TensorFacts {
  int32_t elem_type = 0;  // onnx::TensorProto_DataType; 0 unknown
  // Every dim known (none symbolic or missing).
  std::optional<std::vector<int64_t>> dims;
  // Its elements, for a small integer tensor whose values are known.
  std::optional<std::vector<int64_t>> values;
  // A dim left symbolic, for the reason an unresolved node gives.
  std::string symbolic_dim;
};

// Facts of every tensor of `graph`, whose shapes ONNX's InferShapes has
// filled (value_info) as far as it could. Graph inputs carry the gear's
// values already.
std::unordered_map<std::string, TensorFacts> PropagateShapes(const onnx::GraphProto& graph,
                                                             int64_t opset);

}  // namespace npu::graph

#endif  // NPU_SERVER_GRAPH_SHAPE_PROPAGATION_H_
