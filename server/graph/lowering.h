// Lowering an ONNX graph's matmuls to CANN's matmul operators, rule by rule
// after CANN's own graph passes (MatMulToMatmulV3FusionPass,
// MatMulBiasAddOpenFusionPass, BatchMatMulTransposeFusionPass):
//
//   * MatMul (NumPy semantics; a 1-D operand is promoted to a matrix) is
//     MatMulV3 when B is 2-D, A's batch dims folded into m, and
//     BatchMatMulV3 otherwise (also when an absorbed transpose of a batched
//     A forbids the fold).
//   * A Transpose that swaps only the last two dims and feeds nothing else
//     becomes trans_a / trans_b.
//   * An Add of a 1-D [n] tensor that is the matmul's only consumer becomes
//     the bias.
//   * Gemm: transA / transB are the flags, a C of [n] or [1, n] the bias;
//     another C is added by a separate elementwise Add (or, with
//     fuse_epilogues and C of C's shape, FusedMatMul's add); alpha or beta
//     other than 1 is unsupported.
//   * Einsum of two operands that is a batched matmul once its operands are
//     permuted (every label a batch, m, n or summed k label) is
//     BatchMatMulV3 (MatMulV3 without batch labels), the m / n / k labels
//     folded; an operand or output in another order is permuted by a
//     Transpose kernel, noted in the derivation. Other equations are
//     unsupported, naming the equation.
//   * With fuse_epilogues, the matmul's only consumer Relu, Gelu (the op, or
//     the Erf / Tanh subgraph exporters emit for it), Add or Mul of C's shape
//     becomes FusedMatMul's epilogue when FusedMatMul takes the problem.
//
// Quantized matmuls (quant_lowering.h reads the graph; the rules are
// written after the kernels' arithmetic, since ATC's quantization passes are
// not public). A MatMul / Gemm operand a DequantizeLinear makes, through
// layout-only ops, makes the node quantized; it is never a float answer:
//   * static QDQ (int8, symmetric) on both inputs, ONNX Runtime's dynamic
//     form (DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul, or its
//     QDQ form) and QLinearMatMul are QuantBatchMatmulV3: the scales folded
//     into quant.scale, a per-token scale for the dynamic form, a trailing
//     QuantizeLinear an int8 y;
//   * a DequantizeLinear int8 weight into a float activation, and ONNX
//     Runtime's com.microsoft MatMulNBits, are WeightQuantBatchMatmulV2;
//   * non-zero input zero points, uint8 codes and scales along k are
//     unsupported, naming them.
//
// Mixtures of experts:
//   * ONNX Runtime's com.microsoft MoE and QMoE (moe_lowering.h reads them)
//     are one GroupedMatmul per expert matmul (fc1, fc3 when present, fc2)
//     over all E experts: x every routed row (tokens x k), split M by a
//     group_list of E counts. MoE's float experts take the no-quant path,
//     QMoE's int4 / int8 ones the weight-quant path with their scales as
//     antiquant_scale. How many rows each expert gets is a run-time fact,
//     stated in the derivation's assumptions.
//   * A torch export whose experts are a Python loop over index selections
//     has rows per expert that only the run decides: its expert matmuls are
//     unresolved, naming the MoE routing, the operator and the k and n.
//
// Only the main graph's nodes are lowered (not the bodies of If / Loop /
// Scan), those of the default domain and com.microsoft's MatMulNBits, MoE
// and QMoE.
#ifndef NPU_SERVER_GRAPH_LOWERING_H_
#define NPU_SERVER_GRAPH_LOWERING_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "server/graph/onnx_model.h"
#include "server/tiling/types.h"

namespace npu::graph {

enum class NodeStatus {
  kOk,           // lowered to `problem`
  kUnsupported,  // no CANN operator here takes it; `reason` says why
  kUnresolved,   // a shape is unknown; `reason` names the dim or tensor
};

// How a node's problem came out of the graph.
struct Derivation {
  std::vector<std::string> absorbed_transposes;
  std::string fused_bias;
  std::vector<std::string> fused_epilogue;
  bool folded_batch = false;
  bool promoted_a = false;
  bool promoted_b = false;
  bool compute_dtype_applied = false;
  std::vector<std::string> notes;
  // What the lowering took where the graph does not say, e.g. how an MoE
  // node's routed rows spread over its experts (the run decides).
  std::vector<std::string> assumptions;
};

// One lowered node. An MoE node gives one per expert matmul, each with the
// node's index and "<name>/fc1", "<name>/fc3", "<name>/fc2" as its name.
struct LoweredNode {
  int node_index = 0;
  std::string name;  // "#<index>" when the model gives none
  std::string op_type;
  NodeStatus status = NodeStatus::kOk;
  std::string reason;
  tiling::MatmulProblem problem;  // when kOk
  Derivation derivation;
  // 2 x the node's multiply-adds, from its inputs' dims whatever its
  // status; nullopt when those dims are not known.
  std::optional<double> flops;
};

struct LoweringOptions {
  // float16 or bfloat16: the dtype float32 tensors run in.
  std::optional<tiling::DataType> compute_dtype;
  bool fuse_epilogues = false;
};

// Whether `op_type` (default domain) is one of the matmul-like ops the
// lowering lists.
bool IsMatmulLike(const std::string& op_type);
// Whether `node` is one the lowering lists: a matmul-like op of the default
// domain, or ONNX Runtime's com.microsoft MatMulNBits, MoE or QMoE.
bool IsMatmulLikeNode(const onnx::NodeProto& node);
// The most lowered nodes `node` can give: 0 when it is not matmul-like, 3
// for an MoE / QMoE node (fc1, fc3, fc2), else 1.
size_t MaxLoweredNodes(const onnx::NodeProto& node);

// Lowers every matmul-like node of the main graph, in graph order, with the
// shapes PropagateShapes() finds at `gear` (shape_propagation.h). `model`
// must have passed CheckModel(). A node that cannot be lowered is listed
// with its status.
//
// ONNX 1.12's own InferShapes is not run here: it crashes on some models its
// checker accepts (a Transpose whose perm names a dim the input does not
// have reads out of bounds), and the service reads models from the network.
// The tests check the propagation against InferShapes on trusted models.
absl::StatusOr<std::vector<LoweredNode>> LowerGraph(const onnx::ModelProto& model, const Gear& gear,
                                                    const LoweringOptions& options);

}  // namespace npu::graph

#endif  // NPU_SERVER_GRAPH_LOWERING_H_
