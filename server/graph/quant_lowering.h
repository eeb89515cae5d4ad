// Internal to server/graph: how quantization reaches a matmul in an ONNX
// graph, read back from the matmul's inputs. The lowering (lowering.cc)
// turns these facts into CANN problems; this file only reads the graph.
//
// Vocabulary:
//   * codes: the integer tensor a DequantizeLinear reads (int8 / uint8).
//   * layout op: an op that moves or relabels elements without changing
//     them (Transpose, Reshape, Squeeze, Unsqueeze, Flatten, Identity, Cast).
//     Exporters put them between a dequantized weight and its matmul: a torch
//     Linear's [n, k] weight reaches MatMul through a Transpose.
//   * granularity: per-tensor (one scale), per-axis (one scale per index of
//     one axis, ONNX's DequantizeLinear `axis`).
#ifndef NPU_SERVER_GRAPH_QUANT_LOWERING_H_
#define NPU_SERVER_GRAPH_QUANT_LOWERING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "server/graph/graph_index.h"

namespace npu::graph {

enum class ZeroPointKind {
  kAbsent,   // no zero-point input: 0 by the ONNX spec
  kZero,     // every stored element is 0
  kNonZero,  // `value` is the first non-zero element
  kUnknown,  // not stored in the model (a graph input, or stripped data)
};

struct ZeroPoint {
  ZeroPointKind kind = ZeroPointKind::kAbsent;
  std::string tensor;
  int64_t value = 0;

  // Known to be zero, or absent.
  bool IsZero() const { return kind == ZeroPointKind::kAbsent || kind == ZeroPointKind::kZero; }
};

// Input `input` of `node`, read as a zero point.
ZeroPoint ReadZeroPoint(const GraphIndex& index, const onnx::NodeProto& node, int input);

// A scale input: one value (per-tensor) or one per index of `axis`.
struct ScaleFacts {
  std::string tensor;
  std::vector<int64_t> dims;  // empty when unknown
  bool known = false;         // dims known
  bool per_axis = false;      // more than one element
  int64_t length = 1;         // elements
};

// Input `input` of `node`, read as a scale.
ScaleFacts ReadScale(const GraphIndex& index, const onnx::NodeProto& node, int input);

// A matmul operand that a DequantizeLinear produces, possibly through
// layout ops.
struct DequantizedOperand {
  const onnx::NodeProto* dequantize = nullptr;
  std::string dequantize_name;
  std::string codes;       // the DequantizeLinear's x
  int32_t codes_type = 0;  // onnx::TensorProto_DataType; 0 unknown
  ScaleFacts scale;
  ZeroPoint zero_point;
  // The layout ops from the DequantizeLinear to the matmul, in data order.
  std::vector<const onnx::NodeProto*> path;
  // For a per-axis scale: its axis among the matmul operand's dims, counted
  // from the end (-1 the last); nullopt when a layout op hides it.
  std::optional<int64_t> operand_axis;
  // What hid the axis, for the reason.
  std::string axis_lost_at;
  // The QuantizeLinear that made the codes (an activation's QDQ pair).
  const onnx::NodeProto* quantize = nullptr;
};

// Follows matmul input `tensor` back through at most a few layout ops to a
// DequantizeLinear (default domain). nullopt when none is found: the
// operand is a float tensor.
std::optional<DequantizedOperand> TraceDequantized(const GraphIndex& index,
                                                   const std::string& tensor);

// A DynamicQuantizeLinear that makes `tensor`, through layout ops.
const onnx::NodeProto* TraceDynamicQuantize(const GraphIndex& index, const std::string& tensor);

// The dequantization ONNX Runtime's dynamic quantizer writes after a
// MatMulInteger: Cast(to float) -> Mul(by a scale tensor).
struct IntegerDequant {
  const onnx::NodeProto* cast = nullptr;
  const onnx::NodeProto* mul = nullptr;
  std::string scale;   // the Mul's other operand: x_scale * w_scale
  std::string output;  // the Mul's output: the float result
  int32_t output_type = 0;
};
std::optional<IntegerDequant> FindIntegerDequant(const GraphIndex& index,
                                                 const std::string& int32_output);

// The QuantizeLinear reading `tensor` alone (an int8 output of the matmul).
const onnx::NodeProto* TrailingQuantize(const GraphIndex& index, const std::string& tensor);

// ONNX Runtime's com.microsoft MatMulNBits, read by its documented
// attributes (ContribOperators.md: K, N, bits, block_size; inputs A, B,
// scales, zero_points, g_idx, bias).
struct NBitsFacts {
  int64_t k = 0, n = 0, bits = 4, block_size = 0;
  bool has_zero_points = false;
  bool has_g_idx = false;
  bool has_bias = false;
};
NBitsFacts ReadMatMulNBits(const onnx::NodeProto& node);

}  // namespace npu::graph

#endif  // NPU_SERVER_GRAPH_QUANT_LOWERING_H_
