// Internal to server/graph: an ONNX graph after shape propagation, indexed
// for the lowering (who makes and who reads each tensor, its facts, its
// constant value), and the attribute readers the lowering rules share.
#ifndef NPU_SERVER_GRAPH_GRAPH_INDEX_H_
#define NPU_SERVER_GRAPH_GRAPH_INDEX_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "onnx/onnx_pb.h"
#include "server/graph/shape_propagation.h"

namespace npu::graph {

inline bool IsDefaultDomain(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

// ONNX Runtime's contrib-op domain (MatMulNBits and the other com.microsoft ops).
inline constexpr char kMicrosoftDomain[] = "com.microsoft";

inline const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node,
                                                 const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

inline int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name,
                            int64_t fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute == nullptr ? fallback : attribute->i();
}

inline float FloatAttribute(const onnx::NodeProto& node, const std::string& name, float fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute == nullptr ? fallback : attribute->f();
}

// The node's name, or its first output's when it has none.
inline std::string NodeLabel(const onnx::NodeProto& node) {
  if (!node.name().empty() || node.output_size() == 0) return node.name();
  return node.output(0);
}

// The graph's tensors after shape inference: who makes and who reads each.
class GraphIndex {
 public:
  GraphIndex(const onnx::GraphProto& graph, std::unordered_map<std::string, TensorFacts> facts)
      : graph_(graph), facts_(std::move(facts)) {
    for (const onnx::TensorProto& tensor : graph.initializer()) {
      constants_.insert(tensor.name());
      values_[tensor.name()] = &tensor;
    }
    for (const onnx::ValueInfoProto& value : graph.input()) inputs_.insert(value.name());
    for (const onnx::ValueInfoProto& value : graph.output()) outputs_.insert(value.name());
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto& node = graph.node(i);
      for (const std::string& output : node.output()) producers_[output] = i;
      for (const std::string& input : node.input()) {
        if (!input.empty()) consumers_[input].push_back(i);
      }
      if (node.op_type() == "Constant" && IsDefaultDomain(node) && node.output_size() == 1) {
        constants_.insert(node.output(0));
        if (const onnx::AttributeProto* value = FindAttribute(node, "value")) {
          values_[node.output(0)] = &value->t();
        }
      }
    }
  }

  const onnx::NodeProto& node(int index) const { return graph_.node(index); }

  const onnx::NodeProto* Producer(const std::string& tensor) const {
    auto it = producers_.find(tensor);
    return it == producers_.end() ? nullptr : &graph_.node(it->second);
  }
  const std::vector<int>& Consumers(const std::string& tensor) const {
    static const std::vector<int> kNone;
    auto it = consumers_.find(tensor);
    return it == consumers_.end() ? kNone : it->second;
  }
  // Read by exactly one node and not a graph output: a pass may fuse it.
  bool HasSingleReader(const std::string& tensor) const {
    return Consumers(tensor).size() == 1 && outputs_.count(tensor) == 0;
  }
  bool IsGraphOutput(const std::string& tensor) const { return outputs_.count(tensor) != 0; }
  // A value fixed before the graph runs: an initializer, a Constant node's
  // output, or a graph input (a weightless export makes every parameter an
  // input).
  bool IsConstantLike(const std::string& tensor) const {
    return constants_.count(tensor) != 0 || inputs_.count(tensor) != 0;
  }
  // The stored value of an initializer or a Constant node (its data may
  // have been stripped); nullptr for anything else.
  const onnx::TensorProto* StoredValue(const std::string& tensor) const {
    auto it = values_.find(tensor);
    return it == values_.end() ? nullptr : it->second;
  }
  const TensorFacts* Info(const std::string& tensor) const {
    auto it = facts_.find(tensor);
    return it == facts_.end() ? nullptr : &it->second;
  }

 private:
  const onnx::GraphProto& graph_;
  std::unordered_map<std::string, TensorFacts> facts_;
  std::unordered_map<std::string, int> producers_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_map<std::string, const onnx::TensorProto*> values_;
  std::unordered_set<std::string> inputs_, outputs_, constants_;
};

}  // namespace npu::graph

#endif  // NPU_SERVER_GRAPH_GRAPH_INDEX_H_
