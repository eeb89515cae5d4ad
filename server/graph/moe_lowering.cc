#include "server/graph/moe_lowering.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/graph_index.h"

namespace npu::graph {
namespace {

std::string Dims(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

std::string StringAttribute(const onnx::NodeProto& node, const std::string& name,
                            const std::string& fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute == nullptr ? fallback : attribute->s();
}

std::string InputOrEmpty(const onnx::NodeProto& node, int i) {
  return i < node.input_size() ? node.input(i) : std::string();
}

}  // namespace

bool IsMoeNode(const onnx::NodeProto& node) {
  return node.domain() == kMicrosoftDomain && (node.op_type() == "MoE" || node.op_type() == "QMoE");
}

MoeFacts ReadMoe(const onnx::NodeProto& node) {
  MoeFacts facts;
  facts.quantized = node.op_type() == "QMoE";
  facts.k_given = FindAttribute(node, "k") != nullptr;
  facts.k = IntAttribute(node, "k", facts.k);
  facts.activation_type = StringAttribute(node, "activation_type", facts.activation_type);
  facts.normalize_routing_weights = IntAttribute(node, "normalize_routing_weights", 0);
  facts.use_sparse_mixer = IntAttribute(node, "use_sparse_mixer", 0);
  facts.swiglu_fusion = IntAttribute(node, "swiglu_fusion", 0);
  facts.input = InputOrEmpty(node, 0);
  facts.router_probs = InputOrEmpty(node, 1);
  if (!facts.quantized) {
    // input, router_probs, fc1 weights, fc1 bias, fc2 weights, fc2 bias,
    // fc3 weights, fc3 bias.
    facts.fc1 = {InputOrEmpty(node, 2), InputOrEmpty(node, 3), "", ""};
    facts.fc2 = {InputOrEmpty(node, 4), InputOrEmpty(node, 5), "", ""};
    facts.fc3 = {InputOrEmpty(node, 6), InputOrEmpty(node, 7), "", ""};
    return facts;
  }
  facts.expert_weight_bits = IntAttribute(node, "expert_weight_bits", 4);
  facts.block_size = IntAttribute(node, "block_size", 0);
  facts.quant_type = StringAttribute(node, "quant_type", facts.quant_type);
  facts.weights_prepacked = IntAttribute(node, "weights_prepacked", -1);
  // input, router_probs, then per fc1 / fc2 / fc3 its weights, scales and
  // bias, then the three zero points, router_weights and the FP4 / FP8
  // modes' scales.
  facts.fc1 = {InputOrEmpty(node, 2), InputOrEmpty(node, 4), InputOrEmpty(node, 3),
               InputOrEmpty(node, 11)};
  facts.fc2 = {InputOrEmpty(node, 5), InputOrEmpty(node, 7), InputOrEmpty(node, 6),
               InputOrEmpty(node, 12)};
  facts.fc3 = {InputOrEmpty(node, 8), InputOrEmpty(node, 10), InputOrEmpty(node, 9),
               InputOrEmpty(node, 13)};
  facts.router_weights = InputOrEmpty(node, 14);
  return facts;
}

absl::StatusOr<MoeShapes> ResolveMoeShapes(const MoeFacts& facts, int64_t hidden,
                                           const std::vector<int64_t>& fc1,
                                           const std::vector<int64_t>& fc2,
                                           const std::optional<std::vector<int64_t>>& fc3) {
  // QMoE's weights hold K / pack codes of 8 / bits bits in a byte.
  if (facts.quantized && facts.expert_weight_bits != 2 && facts.expert_weight_bits != 4 &&
      facts.expert_weight_bits != 8) {
    return absl::InvalidArgumentError(absl::StrCat("expert_weight_bits ", facts.expert_weight_bits,
                                                   " is not 2, 4 or 8 (ContribOperators.md)"));
  }
  const int64_t pack = facts.quantized ? 8 / facts.expert_weight_bits : 1;
  const std::pair<const char*, const std::vector<int64_t>*> weights[] = {
      {"fc1", &fc1}, {"fc2", &fc2}, {"fc3", fc3.has_value() ? &*fc3 : nullptr}};
  for (const auto& [name, dims] : weights) {
    if (dims == nullptr) continue;
    if (dims->size() != 3) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, "_experts_weights ", Dims(*dims),
                       " is not 3-D: the experts' weights are [E, N, K]"));
    }
    if ((*dims)[0] != fc1[0]) {
      return absl::InvalidArgumentError(absl::StrCat(name, "_experts_weights ", Dims(*dims),
                                                     " and fc1_experts_weights ", Dims(fc1),
                                                     " disagree on the number of experts"));
    }
  }
  MoeShapes shapes;
  shapes.experts = fc1[0];
  shapes.fusion =
      facts.activation_type == "swiglu" && facts.swiglu_fusion != 0 && !fc3.has_value() ? 2 : 1;
  // Documented: fc1 [E, fusion * inter, hidden / pack], fc2 [E, hidden,
  // inter / pack], fc3 [E, inter, hidden / pack]. The earlier MoE schema:
  // fc1 [E, hidden, inter], fc2 [E, inter, hidden], fc3 [E, hidden, inter].
  const bool documented = fc1[2] * pack == hidden && fc2[1] == hidden;
  const bool earlier = !facts.quantized && fc1[1] == hidden && fc2[2] == hidden;
  if (!documented && !earlier) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fc1_experts_weights ", Dims(fc1), " and fc2_experts_weights ", Dims(fc2),
        " fit no layout of an input of hidden size ", hidden,
        ": ContribOperators.md stores fc1 [E, inter, hidden",
        facts.quantized ? absl::StrCat(" / ", pack) : "", "] and fc2 [E, hidden, inter",
        facts.quantized ? absl::StrCat(" / ", pack) : "", "]",
        facts.quantized ? ""
                        : " (ONNX Runtime's earlier schema [E, hidden, inter] and [E, inter, "
                          "hidden])"));
  }
  const bool transposed = documented;
  if (documented && earlier) {
    shapes.layout_note =
        absl::StrCat("fc1_experts_weights ", Dims(fc1), " and fc2_experts_weights ", Dims(fc2),
                     " fit both layouts (inter = hidden): read as the "
                     "documented [E, N, K]");
  } else if (!documented) {
    shapes.layout_note = absl::StrCat("fc1_experts_weights ", Dims(fc1),
                                      " is [E, hidden, inter]: ONNX Runtime's earlier MoE "
                                      "layout [E, K, N], read untransposed");
  }
  shapes.inter = transposed ? fc2[2] * pack : fc2[1];
  const int64_t fc1_n = transposed ? fc1[1] : fc1[2];
  if (fc1_n != shapes.fusion * shapes.inter) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fc1_experts_weights ", Dims(fc1), " has N = ", fc1_n, ", not ",
        shapes.fusion == 2 ? "2 x " : "", "inter = ", shapes.inter, " (fc2_experts_weights ",
        Dims(fc2), ")",
        shapes.fusion == 2 ? "; activation swiglu with swiglu_fusion 1 or 2 fuses both of its "
                             "projections into fc1"
                           : ""));
  }
  if (fc3.has_value()) {
    const std::vector<int64_t> want =
        transposed ? std::vector<int64_t>{shapes.experts, shapes.inter, hidden / pack}
                   : std::vector<int64_t>{shapes.experts, hidden, shapes.inter};
    if (*fc3 != want) {
      return absl::InvalidArgumentError(absl::StrCat("fc3_experts_weights ", Dims(*fc3), " is not ",
                                                     Dims(want), " (as fc1's second projection)"));
    }
  } else if (facts.activation_type == "swiglu" && facts.swiglu_fusion == 0) {
    return absl::InvalidArgumentError(
        "activation swiglu with swiglu_fusion 0 needs fc3_experts_weights (its second "
        "projection), which the node does not have");
  }
  shapes.matmuls.push_back({"fc1", 1, hidden, fc1_n, transposed});
  if (fc3.has_value()) shapes.matmuls.push_back({"fc3", 3, hidden, shapes.inter, transposed});
  shapes.matmuls.push_back({"fc2", 2, shapes.inter, hidden, transposed});
  return shapes;
}

}  // namespace npu::graph
