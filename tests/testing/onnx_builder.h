// Test support: small ONNX models written in C++, one node at a time.
//
//   OnnxBuilder model;
//   model.Input("a", kFloat16, {"batch", 128, 64}).Input("b", kFloat16, {64, 32});
//   model.Node("MatMul", {"a", "b"}, {"c"}).Output("c", kFloat16);
//   std::string bytes = model.Bytes();
#ifndef NPU_TESTS_TESTING_ONNX_BUILDER_H_
#define NPU_TESTS_TESTING_ONNX_BUILDER_H_

#include <cstdint>
#include <exception>
#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace npu::testing {

inline constexpr int32_t kFloat = onnx::TensorProto_DataType_FLOAT;
inline constexpr int32_t kFloat16 = onnx::TensorProto_DataType_FLOAT16;
inline constexpr int32_t kBFloat16 = onnx::TensorProto_DataType_BFLOAT16;
inline constexpr int32_t kInt64 = onnx::TensorProto_DataType_INT64;
inline constexpr int32_t kInt8 = onnx::TensorProto_DataType_INT8;
inline constexpr int32_t kUint8 = onnx::TensorProto_DataType_UINT8;
inline constexpr int32_t kInt32 = onnx::TensorProto_DataType_INT32;
inline constexpr int32_t kBool = onnx::TensorProto_DataType_BOOL;
inline constexpr int32_t kDouble = onnx::TensorProto_DataType_DOUBLE;

// A dim: a value, or a symbol (dim_param).
using OnnxDim = std::variant<int64_t, std::string>;

inline onnx::AttributeProto IntAttr(const std::string& name, int64_t value) {
  onnx::AttributeProto attribute;
  attribute.set_name(name);
  attribute.set_type(onnx::AttributeProto_AttributeType_INT);
  attribute.set_i(value);
  return attribute;
}

inline onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto attribute;
  attribute.set_name(name);
  attribute.set_type(onnx::AttributeProto_AttributeType_INTS);
  for (int64_t value : values) attribute.add_ints(value);
  return attribute;
}

inline onnx::AttributeProto FloatAttr(const std::string& name, float value) {
  onnx::AttributeProto attribute;
  attribute.set_name(name);
  attribute.set_type(onnx::AttributeProto_AttributeType_FLOAT);
  attribute.set_f(value);
  return attribute;
}

inline onnx::AttributeProto GraphAttr(const std::string& name, const onnx::GraphProto& graph) {
  onnx::AttributeProto attribute;
  attribute.set_name(name);
  attribute.set_type(onnx::AttributeProto_AttributeType_GRAPH);
  *attribute.mutable_g() = graph;
  return attribute;
}

inline onnx::AttributeProto StringAttr(const std::string& name, const std::string& value) {
  onnx::AttributeProto attribute;
  attribute.set_name(name);
  attribute.set_type(onnx::AttributeProto_AttributeType_STRING);
  attribute.set_s(value);
  return attribute;
}

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    model_.set_producer_name("onnx_builder");
    onnx::OperatorSetIdProto& id = *model_.add_opset_import();
    id.set_domain("");
    id.set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  OnnxBuilder& Input(const std::string& name, int32_t elem_type, const std::vector<OnnxDim>& dims) {
    Describe(*model_.mutable_graph()->add_input(), name, elem_type, &dims);
    return *this;
  }
  // An output with its dtype. The checker needs its shape too: model()
  // fills it from ONNX's shape inference, or, when `rank` is given, it is
  // that many unknown dims.
  OnnxBuilder& Output(const std::string& name, int32_t elem_type, int rank = -1) {
    std::vector<OnnxDim> unknown(rank < 0 ? 0 : static_cast<size_t>(rank), std::string());
    Describe(*model_.mutable_graph()->add_output(), name, elem_type, rank < 0 ? nullptr : &unknown);
    return *this;
  }
  // An initializer of int64 `values` (when given) or of zeros.
  OnnxBuilder& Initializer(const std::string& name, int32_t elem_type,
                           const std::vector<int64_t>& dims,
                           const std::vector<int64_t>& values = {}) {
    onnx::TensorProto& tensor = *model_.mutable_graph()->add_initializer();
    tensor.set_name(name);
    tensor.set_data_type(elem_type);
    int64_t count = 1;
    for (int64_t dim : dims) {
      tensor.add_dims(dim);
      count *= dim;
    }
    auto value = [&values](int64_t i) {
      return values.empty() ? int64_t{0} : values[static_cast<size_t>(i)];
    };
    if (elem_type == kInt64) {
      for (int64_t i = 0; i < count; ++i) tensor.add_int64_data(value(i));
    } else if (elem_type == kFloat) {
      for (int64_t i = 0; i < count; ++i) tensor.add_float_data(static_cast<float>(value(i)));
    } else if (elem_type == kInt8 || elem_type == kUint8 || elem_type == kInt32 ||
               elem_type == kBool) {
      // ONNX keeps these in int32_data.
      for (int64_t i = 0; i < count; ++i) tensor.add_int32_data(static_cast<int32_t>(value(i)));
    } else {
      tensor.set_raw_data(std::string(static_cast<size_t>(count) * 2, '\0'));
    }
    return *this;
  }
  // A value_info entry, as ONNX's shape inference writes them.
  OnnxBuilder& ValueInfo(const std::string& name, int32_t elem_type,
                         const std::vector<OnnxDim>& dims) {
    Describe(*model_.mutable_graph()->add_value_info(), name, elem_type, &dims);
    return *this;
  }
  // Puts the last node added in `domain` (imported at `version`).
  OnnxBuilder& InDomain(const std::string& domain, int64_t version = 1) {
    onnx::GraphProto& graph = *model_.mutable_graph();
    graph.mutable_node(graph.node_size() - 1)->set_domain(domain);
    for (const onnx::OperatorSetIdProto& id : model_.opset_import()) {
      if (id.domain() == domain) return *this;
    }
    onnx::OperatorSetIdProto& id = *model_.add_opset_import();
    id.set_domain(domain);
    id.set_version(version);
    return *this;
  }
  // The graph so far, as the body of an If branch.
  const onnx::GraphProto& graph() const { return model_.graph(); }
  OnnxBuilder& Node(const std::string& op_type, const std::vector<std::string>& inputs,
                    const std::vector<std::string>& outputs,
                    const std::vector<onnx::AttributeProto>& attributes = {},
                    const std::string& name = "") {
    onnx::NodeProto& node = *model_.mutable_graph()->add_node();
    node.set_op_type(op_type);
    node.set_name(name.empty() ? outputs.front() + "_node" : name);
    for (const std::string& input : inputs) node.add_input(input);
    for (const std::string& output : outputs) node.add_output(output);
    for (const onnx::AttributeProto& attribute : attributes) *node.add_attribute() = attribute;
    return *this;
  }

  // The model, each output without a shape given the one ONNX infers.
  onnx::ModelProto model() const {
    onnx::ModelProto inferred = model_;
    try {
      onnx::shape_inference::InferShapes(inferred);
    } catch (const std::exception&) {
      return model_;
    }
    onnx::ModelProto model = model_;
    for (int i = 0; i < model.graph().output_size(); ++i) {
      onnx::ValueInfoProto& output = *model.mutable_graph()->mutable_output(i);
      if (!output.type().tensor_type().has_shape()) {
        *output.mutable_type() = inferred.graph().output(i).type();
      }
    }
    return model;
  }
  std::string Bytes() const { return model().SerializeAsString(); }

 private:
  static void Describe(onnx::ValueInfoProto& value, const std::string& name, int32_t elem_type,
                       const std::vector<OnnxDim>* dims) {
    value.set_name(name);
    onnx::TypeProto_Tensor& type = *value.mutable_type()->mutable_tensor_type();
    type.set_elem_type(elem_type);
    if (dims == nullptr) return;
    onnx::TensorShapeProto& shape = *type.mutable_shape();
    for (const OnnxDim& dim : *dims) {
      if (const int64_t* value_dim = std::get_if<int64_t>(&dim)) {
        shape.add_dim()->set_dim_value(*value_dim);
      } else if (std::get<std::string>(dim).empty()) {
        shape.add_dim();  // unknown
      } else {
        shape.add_dim()->set_dim_param(std::get<std::string>(dim));
      }
    }
  }

  onnx::ModelProto model_;
};

}  // namespace npu::testing

#endif  // NPU_TESTS_TESTING_ONNX_BUILDER_H_
