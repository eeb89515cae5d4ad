// Internal to server/graph: ONNX Runtime's mixture-of-experts contrib ops,
// com.microsoft MoE and QMoE, read by the attributes and inputs their
// documentation (docs/ContribOperators.md) gives. The lowering (lowering.cc)
// turns one such node into CANN's GroupedMatmul per expert matmul; this
// file reads the node and what its weights' dims mean.
//
// Vocabulary:
//   * E experts, each a feed-forward block: fc1 (hidden -> inter, or
//     hidden -> 2 * inter when SwiGLU's two projections are fused), an
//     activation, fc2 (inter -> hidden); fc3 (hidden -> inter) is the
//     second projection of a gated activation when it is not fused into
//     fc1 (Mixtral's w3, "up", beside fc1's w1, "gate").
//   * routed rows: each of the node's tokens goes to k experts, so the
//     expert matmuls together take tokens x k rows; how many each expert
//     gets is the router's choice at run time.
//   * layout: the documented weights are [E, N, K] (fc1 [E, inter, hidden],
//     fc2 [E, hidden, inter], "column major per expert"); ONNX Runtime's
//     earlier MoE schema stored them [E, K, N] (fc1 [E, hidden, inter]).
#ifndef NPU_SERVER_GRAPH_MOE_LOWERING_H_
#define NPU_SERVER_GRAPH_MOE_LOWERING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace npu::graph {

// Whether `node` is com.microsoft MoE or QMoE.
bool IsMoeNode(const onnx::NodeProto& node);

// The node's attributes and inputs, by the documented names.
struct MoeFacts {
  bool quantized = false;  // QMoE
  // Top-k: the experts each token goes to. The documentation gives no
  // default; ONNX Runtime's CPU and CUDA kernels take 4.
  int64_t k = 4;
  bool k_given = false;
  std::string activation_type = "relu";
  int64_t normalize_routing_weights = 0;
  int64_t use_sparse_mixer = 0;
  // 0: SwiGLU's two projections are fc1 and fc3; 1 (interleaved) or 2
  // (concatenated): both in fc1, [E, 2 * inter, hidden].
  int64_t swiglu_fusion = 0;
  // QMoE only.
  int64_t expert_weight_bits = 4;  // 2, 4 or 8 bits per weight
  int64_t block_size = 0;          // along K; 0: one scale per column
  std::string quant_type = "int";  // int, fp4, nvfp4, fp8, wfp4afp8
  int64_t weights_prepacked = -1;  // 0: raw [E, N, K / pack] codes

  // Input names ("" when absent).
  std::string input, router_probs, router_weights;
  struct Expert {
    std::string weight, bias, scales, zero_points;
  };
  Expert fc1, fc2, fc3;
};
MoeFacts ReadMoe(const onnx::NodeProto& node);

// One expert matmul of the node over all E experts.
struct ExpertMatmul {
  std::string role;  // "fc1", "fc3" or "fc2"
  int fc = 1;        // 1, 3 or 2: which of MoeFacts' experts
  int64_t k = 0;
  int64_t n = 0;
  // Stored [E, N, K] (the documented layout); else [E, K, N].
  bool transposed = true;
};

// What the weights' dims say.
struct MoeShapes {
  int64_t experts = 0;
  int64_t inter = 0;
  // 2 when SwiGLU's projections are fused in fc1, else 1.
  int64_t fusion = 1;
  // fc1, then fc3 when the node has it, then fc2: the order they run in.
  std::vector<ExpertMatmul> matmuls;
  // How the layout was told, when it was not the documented one or the
  // dims allow both.
  std::string layout_note;
};

// The expert matmuls of `facts` from the dims of its weights (as stored:
// QMoE's hold K / (8 / bits) packed codes) and the input's `hidden` size.
// InvalidArgument naming the weight and the rule when the dims fit neither
// layout, or disagree on E, inter or the fusion.
absl::StatusOr<MoeShapes> ResolveMoeShapes(const MoeFacts& facts, int64_t hidden,
                                           const std::vector<int64_t>& fc1,
                                           const std::vector<int64_t>& fc2,
                                           const std::optional<std::vector<int64_t>>& fc3);

}  // namespace npu::graph

#endif  // NPU_SERVER_GRAPH_MOE_LOWERING_H_
