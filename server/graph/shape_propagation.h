// Shapes of an ONNX graph at one gear, where ONNX's own shape inference
// stops.
//
// ONNX 1.12's InferShapes cannot follow the shape arithmetic exporters write
// for dynamic dims (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as
// torch emits for every attention head split): past the first such Reshape
// every tensor's shape is unknown. It also crashes on some models its own
// checker accepts, so it is not run on models from the network (lowering.h).
// Once a gear fixes the graph's inputs, the shape arithmetic has values, so
// this pass walks the graph once in topological order, computes the int64
// values of small tensors (at most kMaxValueElements) and the dims of every
// tensor of the ops transformer and CNN exports use (elementwise,
// normalizations, shape ops, Reshape / Transpose / Slice / Concat / Split /
// Pad / Tile / Expand, reductions, TopK / ArgMax / ArgMin / OneHot, MatMul /
// Gemm / Einsum, Conv and pools, the quantization ops QuantizeLinear /
// DequantizeLinear / DynamicQuantizeLinear / MatMulInteger / QLinearMatMul,
// ONNX Runtime's com.microsoft MatMulNBits, MoE and QMoE, and If, through
// the branch its condition takes at the gear), and takes the shape the
// model's own value_info declares for any other op. A tensor left unknown
// names the first node that could not be followed, and why.
//
// Routing: the integer tensors that follow from a router's choice (TopK's
// indices, ArgMax; then OneHot, Equal, Gather, ... of them) are tracked, so
// that a NonZero of one, the token indices a torch MoE expert loop selects
// for each expert, says that its size is the expert's share of the tokens,
// known only at run time.
#ifndef NPU_SERVER_GRAPH_SHAPE_PROPAGATION_H_
#define NPU_SERVER_GRAPH_SHAPE_PROPAGATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_pb.h"
#include "server/graph/onnx_model.h"

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
  // When the dims are unknown for another reason: the first node whose
  // output could not be computed, and why ("Add '/pos_add' (output 'x'):
  // broadcast of [1, 2048, 4096] against [1, 1024, 4096] fails").
  std::string unknown_cause;
  // The unknown dims are an MoE expert's rows: they follow from a NonZero
  // of the router's choice (a TopK or ArgMax over the experts), which only
  // the run decides.
  bool expert_rows = false;
};

// Facts of every tensor of `graph` at `gear` (the values of the inputs'
// symbolic dims). The shapes in the graph's value_info (ONNX's InferShapes
// output, when it ran) are used where this pass computes nothing.
std::unordered_map<std::string, TensorFacts> PropagateShapes(const onnx::GraphProto& graph,
                                                             int64_t opset, const Gear& gear);

}  // namespace npu::graph

#endif  // NPU_SERVER_GRAPH_SHAPE_PROPAGATION_H_
