#include "server/graph/shape_propagation.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <unordered_set>

#include "server/graph/einsum.h"
#include "server/graph/onnx_model.h"

namespace npu::graph {
namespace {

using Dims = std::vector<int64_t>;
using Facts = std::unordered_map<std::string, TensorFacts>;

// A shape tensor's elements: an int64 or int32 tensor small enough.
std::optional<std::vector<int64_t>> IntValues(const onnx::TensorProto& tensor) {
  if (tensor.data_type() != onnx::TensorProto_DataType_INT64 &&
      tensor.data_type() != onnx::TensorProto_DataType_INT32) {
    return std::nullopt;
  }
  return StoredIntegers(tensor, static_cast<int64_t>(kMaxValueElements));
}

const onnx::AttributeProto* Attribute(const onnx::NodeProto& node, const char* name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t IntAttr(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  const onnx::AttributeProto* attribute = Attribute(node, name);
  return attribute == nullptr ? fallback : attribute->i();
}

std::optional<Dims> IntsAttr(const onnx::NodeProto& node, const char* name) {
  const onnx::AttributeProto* attribute = Attribute(node, name);
  if (attribute == nullptr) return std::nullopt;
  return Dims(attribute->ints().begin(), attribute->ints().end());
}

// Arithmetic on values a model chooses is kept inside +-2^62, so that no
// crafted dim or constant can overflow; a dim beyond kMaxDim is not a shape
// this pass keeps (Set()).
constexpr int64_t kSaturated = int64_t{1} << 62;
constexpr int64_t kMaxDim = int64_t{1} << 40;

int64_t Sat(__int128 value) {
  return static_cast<int64_t>(
      std::max<__int128>(-kSaturated, std::min<__int128>(value, kSaturated)));
}

int64_t Product(const Dims& dims, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t product = 1;
  for (size_t i = from; i < std::min(to, dims.size()); ++i) {
    product = Sat(static_cast<__int128>(product) * dims[i]);
  }
  return product;
}

// NumPy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<Dims> Broadcast(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

std::string DimsText(const Dims& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

// `axis` of a rank-`rank` tensor, negative counting from the end.
std::optional<size_t> Axis(int64_t axis, size_t rank) {
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) return std::nullopt;
  return static_cast<size_t>(axis);
}

// Row-major strides of `dims`.
Dims Strides(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// The elements of a tensor of `out_dims` taken from `values` (a tensor of
// `in_dims`): output axis i walks input axis `axis[i]` from `first[i]` in
// steps of `step[i]`. A Transpose permutes the axes; a Slice keeps them and
// moves the start and step.
Dims Restrided(const Dims& in_dims, const Dims& values, const Dims& out_dims, const Dims& axis,
               const Dims& first, const Dims& step) {
  const Dims strides = Strides(in_dims);
  Dims out;
  const int64_t count = Product(out_dims);
  Dims coordinates(out_dims.size(), 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t rest = e;
    for (size_t i = out_dims.size(); i-- > 0;) {
      coordinates[i] = rest % out_dims[i];
      rest /= out_dims[i];
    }
    int64_t offset = 0;
    for (size_t i = 0; i < coordinates.size(); ++i) {
      offset += (first[i] + coordinates[i] * step[i]) * strides[axis[i]];
    }
    out.push_back(values[offset]);
  }
  return out;
}

int64_t Clamp(int64_t value, int64_t low, int64_t high) {
  return std::max(low, std::min(value, high));
}

class Propagator {
 public:
  Propagator(const onnx::GraphProto& graph, int64_t opset, const Gear& gear)
      : graph_(graph), opset_(opset), gear_(gear) {}

  Facts Run() {
    for (const onnx::ValueInfoProto& value : graph_.input()) AddInfo(value);
    for (const onnx::TensorProto& tensor : graph_.initializer()) AddInitializer(tensor);
    // ONNX's own inference, kept where this pass computes nothing.
    Facts inferred;
    std::swap(inferred, facts_);
    for (const onnx::ValueInfoProto& value : graph_.value_info()) AddInfo(value);
    for (const onnx::ValueInfoProto& value : graph_.output()) AddInfo(value);
    std::swap(inferred, facts_);
    VisitNodes(graph_, inferred, 0);
    return std::move(facts_);
  }

 private:
  // What a value_info (or graph input / output) declares of a tensor.
  void AddInfo(const onnx::ValueInfoProto& value) {
    if (!value.type().has_tensor_type()) return;
    const onnx::TypeProto_Tensor& type = value.type().tensor_type();
    TensorFacts& facts = facts_[value.name()];
    if (type.elem_type() != 0) facts.elem_type = type.elem_type();
    if (!type.has_shape() || facts.dims.has_value()) return;
    Dims dims;
    for (const onnx::TensorShapeProto_Dimension& dim : type.shape().dim()) {
      if (dim.has_dim_value() && dim.dim_value() >= 0 && dim.dim_value() <= kMaxDim) {
        dims.push_back(dim.dim_value());
      } else if (std::optional<int64_t> value = GearValue(dim)) {
        dims.push_back(*value);
      } else {
        if (dim.has_dim_param() && facts.symbolic_dim.empty()) {
          facts.symbolic_dim = dim.dim_param();
        }
        return;
      }
    }
    facts.dims = std::move(dims);
  }

  void AddInitializer(const onnx::TensorProto& tensor) {
    TensorFacts& facts = facts_[tensor.name()];
    facts.elem_type = tensor.data_type();
    Dims dims(tensor.dims().begin(), tensor.dims().end());
    if (std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0 && d <= kMaxDim; })) {
      facts.dims = std::move(dims);
      facts.values = IntValues(tensor);
    }
  }

  // Visits the nodes of `graph` (the main graph, or the branch an If takes)
  // in order; `inferred` holds the model's value_info.
  void VisitNodes(const onnx::GraphProto& graph, const Facts& inferred, int depth) {
    for (const onnx::NodeProto& node : graph.node()) {
      why_.clear();
      Visit(node, inferred, depth);
      MarkRouting(node);
      for (const std::string& output : node.output()) {
        if (output.empty()) continue;
        auto it = inferred.find(output);
        if (it != inferred.end()) {
          TensorFacts& facts = facts_[output];
          if (facts.elem_type == 0) facts.elem_type = it->second.elem_type;
          if (!facts.dims.has_value()) facts.dims = it->second.dims;
          if (facts.symbolic_dim.empty()) facts.symbolic_dim = it->second.symbolic_dim;
        }
        TensorFacts& facts = facts_[output];
        if (facts.dims.has_value()) continue;
        NameUnknownCause(node, output, &facts);
      }
    }
  }

  // Says why `output` of `node` has no shape. An unknown input passes its
  // own reason on (a dim without a value first: that is what the request
  // left out); when every input is known, this node is where the shapes
  // stopped, and the reason names it and, where known, why.
  void NameUnknownCause(const onnx::NodeProto& node, const std::string& output,
                        TensorFacts* facts) {
    if (!facts->symbolic_dim.empty() || !facts->unknown_cause.empty()) return;
    for (int i = 0; i < node.input_size(); ++i) {
      const TensorFacts* input = Get(node, i);
      if (input != nullptr && !input->dims.has_value() && !input->symbolic_dim.empty()) {
        facts->symbolic_dim = input->symbolic_dim;
        return;
      }
    }
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i).empty()) continue;
      const TensorFacts* input = Get(node, i);
      if (input != nullptr && input->dims.has_value()) continue;
      if (input != nullptr && !input->unknown_cause.empty()) {
        facts->unknown_cause = input->unknown_cause;
        facts->expert_rows = input->expert_rows;
      } else {
        facts->unknown_cause = "tensor '" + node.input(i) + "' has no shape in the model";
      }
      return;
    }
    static const std::unordered_set<std::string> kDataDependent = {
        "NonZero", "Unique", "NonMaxSuppression", "Compress", "StringSplit"};
    std::string why = why_;
    if (why.empty() && node.op_type() == "NonZero" && node.input_size() > 0) {
      auto routed = routed_.find(node.input(0));
      if (routed != routed_.end()) {
        why = "rows per expert depend on the router's choice at run time (MoE expert loop: " +
              routed->second + " chooses each token's experts)";
        facts->expert_rows = true;
      }
    }
    if (why.empty()) {
      why = kDataDependent.count(node.op_type()) != 0
                ? "its output's size depends on the tensor's data (data-dependent, as routing "
                  "is), not on the shapes"
                : "an op the shape propagation does not follow, and the model declares no "
                  "shape for its output";
    }
    facts->unknown_cause = node.op_type() +
                           (node.name().empty() ? std::string() : " '" + node.name() + "'") +
                           " (output '" + output + "'): " + why;
  }

  // Records the outputs of `node` that carry a router's choice: the
  // indices of a TopK, an ArgMax / ArgMin, and every integer or boolean
  // tensor computed from one (OneHot, Transpose, Gather, Equal, Cast to
  // bool, ...). Float tensors are not followed: the hidden states that mix
  // the experts' outputs are not routing, and a later NonZero of them is
  // not an expert's selection.
  void MarkRouting(const onnx::NodeProto& node) {
    std::string router;
    const std::string& op = node.op_type();
    const bool chooser = (op == "TopK" || op == "ArgMax" || op == "ArgMin") &&
                         (node.domain().empty() || node.domain() == "ai.onnx");
    if (chooser) {
      router = op + " '" + (node.name().empty() ? node.output(0) : node.name()) + "'";
    } else {
      for (const std::string& input : node.input()) {
        auto it = routed_.find(input);
        if (it != routed_.end()) {
          router = it->second;
          break;
        }
      }
    }
    if (router.empty()) return;
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty() || (op == "TopK" && i != 1)) continue;
      auto it = facts_.find(node.output(i));
      const int32_t type = it == facts_.end() ? 0 : it->second.elem_type;
      static const std::unordered_set<int32_t> kFloats = {
          onnx::TensorProto_DataType_FLOAT, onnx::TensorProto_DataType_FLOAT16,
          onnx::TensorProto_DataType_BFLOAT16, onnx::TensorProto_DataType_DOUBLE};
      if (kFloats.count(type) == 0) routed_[node.output(i)] = router;
    }
  }

  const TensorFacts* Get(const onnx::NodeProto& node, int input) const {
    if (input >= node.input_size() || node.input(input).empty()) return nullptr;
    auto it = facts_.find(node.input(input));
    return it == facts_.end() ? nullptr : &it->second;
  }
  const Dims* DimsOf(const onnx::NodeProto& node, int input) const {
    const TensorFacts* facts = Get(node, input);
    return facts == nullptr || !facts->dims.has_value() ? nullptr : &*facts->dims;
  }
  const Dims* ValuesOf(const onnx::NodeProto& node, int input) const {
    const TensorFacts* facts = Get(node, input);
    return facts == nullptr || !facts->values.has_value() ? nullptr : &*facts->values;
  }
  int32_t TypeOf(const onnx::NodeProto& node, int input) const {
    const TensorFacts* facts = Get(node, input);
    return facts == nullptr ? 0 : facts->elem_type;
  }
  // Axes from the attribute (older opsets) or input `input`.
  std::optional<Dims> AxesOf(const onnx::NodeProto& node, int input) const {
    if (std::optional<Dims> axes = IntsAttr(node, "axes")) return axes;
    if (const Dims* values = ValuesOf(node, input)) return *values;
    return std::nullopt;
  }

  void Set(const onnx::NodeProto& node, int output, std::optional<Dims> dims, int32_t elem_type,
           std::optional<Dims> values = std::nullopt) {
    if (output >= node.output_size() || node.output(output).empty()) return;
    if (dims.has_value() &&
        std::any_of(dims->begin(), dims->end(), [](int64_t d) { return d < 0 || d > kMaxDim; })) {
      dims.reset();
      values.reset();
    }
    TensorFacts& facts = facts_[node.output(output)];
    if (elem_type != 0) facts.elem_type = elem_type;
    if (dims.has_value()) facts.dims = std::move(dims);
    if (values.has_value() && facts.dims.has_value() &&
        static_cast<int64_t>(values->size()) == Product(*facts.dims)) {
      facts.values = std::move(values);
    }
  }

  // Elementwise over broadcast inputs; `fn` computes values when given.
  void Elementwise(const onnx::NodeProto& node, int32_t elem_type,
                   const std::function<int64_t(const Dims&)>& fn = nullptr) {
    std::optional<Dims> dims = Dims{};
    for (int i = 0; i < node.input_size(); ++i) {
      const Dims* input = DimsOf(node, i);
      if (input == nullptr || !dims.has_value()) {
        dims.reset();
        break;
      }
      const Dims before = *dims;
      dims = Broadcast(*dims, *input);
      if (!dims.has_value()) {
        why_ = "broadcast of " + DimsText(before) + " against " + DimsText(*input) + " fails";
      }
    }
    std::optional<Dims> values;
    if (dims.has_value() && fn != nullptr &&
        Product(*dims) <= static_cast<int64_t>(kMaxValueElements)) {
      std::vector<const Dims*> inputs;
      for (int i = 0; i < node.input_size(); ++i) inputs.push_back(ValuesOf(node, i));
      if (std::all_of(inputs.begin(), inputs.end(), [](const Dims* v) { return v != nullptr; })) {
        // Index each input by broadcasting: only scalars, equal shapes and
        // 1-D tensors occur in shape arithmetic.
        const int64_t count = Product(*dims);
        values = Dims();
        for (int64_t e = 0; e < count; ++e) {
          Dims args;
          for (const Dims* input : inputs) {
            if (input->size() == 1) {
              args.push_back((*input)[0]);
            } else if (static_cast<int64_t>(input->size()) == count) {
              args.push_back((*input)[e]);
            } else {
              values.reset();
              break;
            }
          }
          if (!values.has_value()) break;
          values->push_back(fn(args));
        }
      }
    }
    Set(node, 0, dims, elem_type, values);
  }

  void Visit(const onnx::NodeProto& node, const Facts& inferred, int depth) {
    static const std::unordered_set<std::string> kSameShape = {"Identity",
                                                               "Dropout",
                                                               "Cast",
                                                               "Relu",
                                                               "Erf",
                                                               "Tanh",
                                                               "Sqrt",
                                                               "Neg",
                                                               "Sigmoid",
                                                               "Softmax",
                                                               "LogSoftmax",
                                                               "LayerNormalization",
                                                               "Gelu",
                                                               "Abs",
                                                               "Exp",
                                                               "Log",
                                                               "Reciprocal",
                                                               "Not",
                                                               "Floor",
                                                               "Ceil",
                                                               "Clip",
                                                               "BatchNormalization",
                                                               "InstanceNormalization",
                                                               "HardSigmoid",
                                                               "HardSwish",
                                                               "Softplus",
                                                               "Round",
                                                               "Sign",
                                                               "Sin",
                                                               "Cos",
                                                               "LeakyRelu",
                                                               "Elu",
                                                               "Selu",
                                                               "IsNaN",
                                                               "IsInf",
                                                               "ScatterND",
                                                               "ScatterElements",
                                                               "Trilu",
                                                               "CumSum",
                                                               "Mish"};
    const std::string& op = node.op_type();
    const int32_t first_type = TypeOf(node, 0);
    if (op == "Constant") {
      if (const onnx::AttributeProto* value = Attribute(node, "value")) {
        Set(node, 0, Dims(value->t().dims().begin(), value->t().dims().end()),
            value->t().data_type(), IntValues(value->t()));
      } else if (const onnx::AttributeProto* ints = Attribute(node, "value_ints")) {
        Set(node, 0, Dims{ints->ints_size()}, onnx::TensorProto_DataType_INT64,
            Dims(ints->ints().begin(), ints->ints().end()));
      } else if (const onnx::AttributeProto* scalar = Attribute(node, "value_int")) {
        Set(node, 0, Dims{}, onnx::TensorProto_DataType_INT64, Dims{scalar->i()});
      }
      return;
    }
    if (kSameShape.count(op) != 0) {
      const Dims* dims = DimsOf(node, 0);
      int32_t type = first_type;
      if (op == "Cast") type = static_cast<int32_t>(IntAttr(node, "to", 0));
      std::optional<Dims> values;
      if ((op == "Identity" || op == "Cast") && ValuesOf(node, 0) != nullptr)
        values = *ValuesOf(node, 0);
      if (dims != nullptr) {
        Set(node, 0, *dims, type, values);
        if (op == "Dropout") Set(node, 1, *dims, onnx::TensorProto_DataType_BOOL);
      }
      return;
    }
    using Fn = std::function<int64_t(const Dims&)>;
    static const std::unordered_map<std::string, Fn> kArithmetic = {
        {"Add", [](const Dims& v) { return Sat(static_cast<__int128>(v[0]) + v[1]); }},
        {"Sub", [](const Dims& v) { return Sat(static_cast<__int128>(v[0]) - v[1]); }},
        {"Mul", [](const Dims& v) { return Sat(static_cast<__int128>(v[0]) * v[1]); }},
        {"Div", [](const Dims& v) { return v[1] == 0 ? 0 : v[0] / v[1]; }},
        // fmod=0 (the integer default): the sign of the divisor, as Python's %.
        {"Mod", [](const Dims& v) { return v[1] == 0 ? 0 : ((v[0] % v[1]) + v[1]) % v[1]; }},
        {"Max", [](const Dims& v) { return *std::max_element(v.begin(), v.end()); }},
        {"Min", [](const Dims& v) { return *std::min_element(v.begin(), v.end()); }},
        {"Pow", nullptr},
        {"PRelu", nullptr},
        {"Sum", nullptr},
        {"Mean", nullptr},
    };
    static const std::unordered_map<std::string, Fn> kComparisons = {
        {"Equal", [](const Dims& v) { return int64_t{v[0] == v[1]}; }},
        {"Less", [](const Dims& v) { return int64_t{v[0] < v[1]}; }},
        {"Greater", [](const Dims& v) { return int64_t{v[0] > v[1]}; }},
        {"LessOrEqual", nullptr},
        {"GreaterOrEqual", nullptr},
        {"And", nullptr},
        {"Or", nullptr},
        {"Xor", nullptr},
    };
    if (auto it = kArithmetic.find(op); it != kArithmetic.end()) {
      const bool integer = first_type == onnx::TensorProto_DataType_INT64 ||
                           first_type == onnx::TensorProto_DataType_INT32;
      Elementwise(node, first_type, integer ? it->second : nullptr);
      return;
    }
    if (auto it = kComparisons.find(op); it != kComparisons.end()) {
      Elementwise(node, onnx::TensorProto_DataType_BOOL, it->second);
      return;
    }
    if (op == "Where") {
      Elementwise(node, TypeOf(node, 1), [](const Dims& v) { return v[0] != 0 ? v[1] : v[2]; });
      return;
    }
    if (op == "Shape") {
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr) return;
      const int64_t rank = static_cast<int64_t>(dims->size());
      int64_t start = IntAttr(node, "start", 0), end = IntAttr(node, "end", rank);
      if (start < 0) start += rank;
      if (end < 0) end += rank;
      start = Clamp(start, 0, rank);
      end = Clamp(end, start, rank);
      Dims values(dims->begin() + start, dims->begin() + end);
      Set(node, 0, Dims{static_cast<int64_t>(values.size())}, onnx::TensorProto_DataType_INT64,
          values);
      return;
    }
    if (op == "Size") {
      if (const Dims* dims = DimsOf(node, 0)) {
        Set(node, 0, Dims{}, onnx::TensorProto_DataType_INT64, Dims{Product(*dims)});
      }
      return;
    }
    if (op == "Gather") {
      const Dims* data = DimsOf(node, 0);
      const Dims* indices = DimsOf(node, 1);
      if (data == nullptr || indices == nullptr) return;
      std::optional<size_t> axis = Axis(IntAttr(node, "axis", 0), data->size());
      if (!axis.has_value()) return;
      Dims out(data->begin(), data->begin() + *axis);
      out.insert(out.end(), indices->begin(), indices->end());
      out.insert(out.end(), data->begin() + *axis + 1, data->end());
      std::optional<Dims> values;
      const Dims* data_values = ValuesOf(node, 0);
      const Dims* index_values = ValuesOf(node, 1);
      if (data->size() == 1 && data_values != nullptr && index_values != nullptr) {
        values = Dims();
        for (int64_t index : *index_values) {
          if (index < 0) index += (*data)[0];
          if (index < 0 || index >= (*data)[0]) {
            values.reset();
            break;
          }
          values->push_back((*data_values)[index]);
        }
      }
      Set(node, 0, out, first_type, values);
      return;
    }
    if (op == "Unsqueeze" || op == "Squeeze") {
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr) return;
      std::optional<Dims> axes = AxesOf(node, 1);
      Dims out;
      if (op == "Unsqueeze") {
        if (!axes.has_value()) return;
        const size_t rank = dims->size() + axes->size();
        std::vector<bool> inserted(rank, false);
        for (int64_t a : *axes) {
          std::optional<size_t> axis = Axis(a, rank);
          if (!axis.has_value()) return;
          inserted[*axis] = true;
        }
        size_t next = 0;
        for (size_t i = 0; i < rank; ++i) {
          if (inserted[i]) {
            out.push_back(1);
          } else if (next < dims->size()) {
            out.push_back((*dims)[next++]);
          }
        }
      } else {
        std::vector<bool> removed(dims->size(), false);
        if (axes.has_value()) {
          for (int64_t a : *axes) {
            std::optional<size_t> axis = Axis(a, dims->size());
            if (!axis.has_value()) return;
            removed[*axis] = true;
          }
        } else {
          for (size_t i = 0; i < dims->size(); ++i) removed[i] = (*dims)[i] == 1;
        }
        for (size_t i = 0; i < dims->size(); ++i) {
          if (!removed[i]) out.push_back((*dims)[i]);
        }
      }
      std::optional<Dims> values;
      if (const Dims* v = ValuesOf(node, 0)) values = *v;
      Set(node, 0, out, first_type, values);
      return;
    }
    if (op == "Concat") {
      Dims out;
      std::optional<Dims> values = Dims();
      for (int i = 0; i < node.input_size(); ++i) {
        const Dims* dims = DimsOf(node, i);
        if (dims == nullptr) return;
        if (i == 0) {
          out = *dims;
        } else {
          std::optional<size_t> axis = Axis(IntAttr(node, "axis", 0), out.size());
          if (!axis.has_value() || dims->size() != out.size()) return;
          out[*axis] = Sat(static_cast<__int128>(out[*axis]) + (*dims)[*axis]);
        }
        const Dims* v = ValuesOf(node, i);
        if (v == nullptr || dims->size() != 1) {
          values.reset();
        } else if (values.has_value()) {
          values->insert(values->end(), v->begin(), v->end());
        }
      }
      Set(node, 0, out, first_type, values);
      return;
    }
    if (op == "Slice") {
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr) return;
      std::optional<Dims> starts, ends, axes, steps;
      if (opset_ < 10) {
        starts = IntsAttr(node, "starts");
        ends = IntsAttr(node, "ends");
        axes = IntsAttr(node, "axes");
      } else {
        if (const Dims* v = ValuesOf(node, 1)) starts = *v;
        if (const Dims* v = ValuesOf(node, 2)) ends = *v;
        if (node.input_size() > 3 && !node.input(3).empty()) {
          const Dims* v = ValuesOf(node, 3);
          if (v == nullptr) return;
          axes = *v;
        }
        if (node.input_size() > 4 && !node.input(4).empty()) {
          const Dims* v = ValuesOf(node, 4);
          if (v == nullptr) return;
          steps = *v;
        }
      }
      if (!starts.has_value() || !ends.has_value() || starts->size() != ends->size()) return;
      if (!axes.has_value()) {
        axes = Dims();
        for (size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
      }
      if (!steps.has_value()) steps = Dims(starts->size(), 1);
      if (axes->size() != starts->size() || steps->size() != starts->size()) return;
      Dims out = *dims;
      Dims first(dims->size(), 0), stride(dims->size(), 1);
      for (size_t i = 0; i < starts->size(); ++i) {
        std::optional<size_t> axis = Axis((*axes)[i], dims->size());
        const int64_t step = (*steps)[i];
        if (!axis.has_value() || step == 0) return;
        const int64_t size = (*dims)[*axis];
        int64_t start = (*starts)[i], end = (*ends)[i];
        if (start < 0) start += size;
        if (end < 0) end += size;
        if (step > 0) {
          start = Clamp(start, 0, size);
          end = Clamp(end, 0, size);
          out[*axis] = end > start ? (end - start + step - 1) / step : 0;
        } else {
          start = Clamp(start, -1, size - 1);
          end = Clamp(end, -1, size - 1);
          out[*axis] = start > end ? (start - end - step - 1) / -step : 0;
        }
        first[*axis] = start;
        stride[*axis] = step;
      }
      std::optional<Dims> values;
      if (const Dims* input_values = ValuesOf(node, 0)) {
        Dims same_axes(dims->size());
        for (size_t i = 0; i < same_axes.size(); ++i) same_axes[i] = static_cast<int64_t>(i);
        values = Restrided(*dims, *input_values, out, same_axes, first, stride);
      }
      Set(node, 0, out, first_type, values);
      return;
    }
    if (op == "Reshape") {
      const Dims* dims = DimsOf(node, 0);
      const Dims* shape = ValuesOf(node, 1);
      if (dims == nullptr || shape == nullptr) return;
      const bool allow_zero = IntAttr(node, "allowzero", 0) != 0;
      Dims out;
      int infer = -1;
      for (size_t i = 0; i < shape->size(); ++i) {
        int64_t dim = (*shape)[i];
        if (dim == 0 && !allow_zero) {
          if (i >= dims->size()) return;
          dim = (*dims)[i];
        }
        if (dim == -1) {
          if (infer >= 0) return;
          infer = static_cast<int>(i);
          dim = 1;
        }
        out.push_back(dim);
      }
      if (infer >= 0) {
        const int64_t known = Product(out);
        if (known <= 0 || Product(*dims) % known != 0) return;
        out[infer] = Product(*dims) / known;
      }
      if (Product(out) != Product(*dims)) {
        why_ = "reshape of " + DimsText(*dims) + " to " + DimsText(*shape) + " does not keep its " +
               std::to_string(Product(*dims)) + " elements";
        return;
      }
      std::optional<Dims> values;
      if (const Dims* v = ValuesOf(node, 0)) values = *v;
      Set(node, 0, out, first_type, values);
      return;
    }
    if (op == "Flatten") {
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr) return;
      int64_t axis = IntAttr(node, "axis", 1);
      if (axis < 0) axis += static_cast<int64_t>(dims->size());
      if (axis < 0 || axis > static_cast<int64_t>(dims->size())) return;
      Set(node, 0, Dims{Product(*dims, 0, axis), Product(*dims, axis)}, first_type);
      return;
    }
    if (op == "Transpose") {
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr) return;
      std::optional<Dims> perm = IntsAttr(node, "perm");
      if (!perm.has_value()) {
        perm = Dims();
        for (size_t i = dims->size(); i-- > 0;) perm->push_back(static_cast<int64_t>(i));
      }
      if (perm->size() != dims->size()) return;
      Dims out, from;
      for (int64_t p : *perm) {
        std::optional<size_t> axis = Axis(p, dims->size());
        if (!axis.has_value()) return;
        out.push_back((*dims)[*axis]);
        from.push_back(static_cast<int64_t>(*axis));
      }
      std::optional<Dims> values;
      if (const Dims* input_values = ValuesOf(node, 0)) {
        values =
            Restrided(*dims, *input_values, out, from, Dims(out.size(), 0), Dims(out.size(), 1));
      }
      Set(node, 0, out, first_type, values);
      return;
    }
    if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
      // QLinearMatMul's B is its input 3; its output type is y_zero_point's.
      const bool qlinear = op == "QLinearMatMul";
      const Dims* a = DimsOf(node, 0);
      const Dims* b = DimsOf(node, qlinear ? 3 : 1);
      int32_t out_type = first_type;
      if (op == "MatMulInteger") out_type = onnx::TensorProto_DataType_INT32;
      if (qlinear) out_type = TypeOf(node, 7) != 0 ? TypeOf(node, 7) : first_type;
      if (a == nullptr || b == nullptr || a->empty() || b->empty()) return;
      Dims x = *a, y = *b;
      const bool vector_a = x.size() == 1, vector_b = y.size() == 1;
      if (vector_a) x.insert(x.begin(), 1);
      if (vector_b) y.push_back(1);
      std::optional<Dims> batch =
          Broadcast(Dims(x.begin(), x.end() - 2), Dims(y.begin(), y.end() - 2));
      if (!batch.has_value()) {
        why_ = "the batch dims of " + DimsText(*a) + " and " + DimsText(*b) + " do not broadcast";
        return;
      }
      Dims out = *batch;
      if (!vector_a) out.push_back(x[x.size() - 2]);
      if (!vector_b) out.push_back(y.back());
      Set(node, 0, out, out_type);
      return;
    }
    if (op == "Gemm") {
      const Dims* a = DimsOf(node, 0);
      const Dims* b = DimsOf(node, 1);
      if (a == nullptr || b == nullptr || a->size() != 2 || b->size() != 2) return;
      const int64_t m = IntAttr(node, "transA", 0) != 0 ? (*a)[1] : (*a)[0];
      const int64_t n = IntAttr(node, "transB", 0) != 0 ? (*b)[0] : (*b)[1];
      Set(node, 0, Dims{m, n}, first_type);
      return;
    }
    if (op == "Expand") {
      const Dims* dims = DimsOf(node, 0);
      const Dims* shape = ValuesOf(node, 1);
      if (dims == nullptr || shape == nullptr) return;
      std::optional<Dims> out = Broadcast(*dims, *shape);
      if (!out.has_value())
        why_ = "expand of " + DimsText(*dims) + " to " + DimsText(*shape) + " fails";
      Set(node, 0, out, first_type);
      return;
    }
    if (op == "ConstantOfShape") {
      const Dims* shape = ValuesOf(node, 0);
      if (shape == nullptr) return;
      const onnx::AttributeProto* value = Attribute(node, "value");
      const int32_t type =
          value == nullptr ? onnx::TensorProto_DataType_FLOAT : value->t().data_type();
      std::optional<Dims> values;
      if (value != nullptr && Product(*shape) <= static_cast<int64_t>(kMaxValueElements)) {
        if (std::optional<Dims> fill = IntValues(value->t()); fill && fill->size() == 1) {
          values = Dims(static_cast<size_t>(Product(*shape)), (*fill)[0]);
        }
      }
      Set(node, 0, *shape, type, values);
      return;
    }
    if (op == "Range") {
      const Dims* start = ValuesOf(node, 0);
      const Dims* limit = ValuesOf(node, 1);
      const Dims* delta = ValuesOf(node, 2);
      if (start == nullptr || limit == nullptr || delta == nullptr || start->empty() ||
          limit->empty() || delta->empty() || (*delta)[0] == 0) {
        return;
      }
      const int64_t count =
          Sat(std::max<__int128>(0, (static_cast<__int128>((*limit)[0]) - (*start)[0] +
                                     (*delta)[0] - ((*delta)[0] > 0 ? 1 : -1)) /
                                        (*delta)[0]));
      std::optional<Dims> values;
      if (count <= static_cast<int64_t>(kMaxValueElements)) {
        values = Dims();
        for (int64_t i = 0; i < count; ++i) {
          values->push_back(Sat((*start)[0] + static_cast<__int128>(i) * (*delta)[0]));
        }
      }
      Set(node, 0, Dims{count}, first_type, values);
      return;
    }
    if (op == "Pad") {
      const Dims* dims = DimsOf(node, 0);
      std::optional<Dims> pads = IntsAttr(node, "pads");
      if (!pads.has_value()) {
        if (const Dims* v = ValuesOf(node, 1)) pads = *v;
      }
      if (dims == nullptr || !pads.has_value()) return;
      Dims out = *dims;
      if (node.input_size() > 3 && !node.input(3).empty()) {
        const Dims* axes = ValuesOf(node, 3);
        if (axes == nullptr || pads->size() != 2 * axes->size()) return;
        for (size_t i = 0; i < axes->size(); ++i) {
          std::optional<size_t> axis = Axis((*axes)[i], out.size());
          if (!axis.has_value()) return;
          out[*axis] =
              Sat(static_cast<__int128>(out[*axis]) + (*pads)[i] + (*pads)[i + axes->size()]);
        }
      } else {
        if (pads->size() != 2 * out.size()) return;
        for (size_t i = 0; i < out.size(); ++i) {
          out[i] = Sat(static_cast<__int128>(out[i]) + (*pads)[i] + (*pads)[i + out.size()]);
        }
      }
      Set(node, 0, out, first_type);
      return;
    }
    if (op == "Tile") {
      const Dims* dims = DimsOf(node, 0);
      const Dims* repeats = ValuesOf(node, 1);
      if (dims == nullptr || repeats == nullptr || repeats->size() != dims->size()) return;
      Dims out = *dims;
      for (size_t i = 0; i < out.size(); ++i)
        out[i] = Sat(static_cast<__int128>(out[i]) * (*repeats)[i]);
      Set(node, 0, out, first_type);
      return;
    }
    if (op.rfind("Reduce", 0) == 0) {
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr) return;
      std::optional<Dims> axes = AxesOf(node, 1);
      const bool keep = IntAttr(node, "keepdims", 1) != 0;
      std::vector<bool> reduced(dims->size(), !axes.has_value());
      if (axes.has_value()) {
        for (int64_t a : *axes) {
          std::optional<size_t> axis = Axis(a, dims->size());
          if (!axis.has_value()) return;
          reduced[*axis] = true;
        }
      }
      Dims out;
      for (size_t i = 0; i < dims->size(); ++i) {
        if (!reduced[i]) {
          out.push_back((*dims)[i]);
        } else if (keep) {
          out.push_back(1);
        }
      }
      Set(node, 0, out, first_type);
      return;
    }
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "GlobalLpPool") {
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr || dims->size() < 2) return;
      Dims out = *dims;
      std::fill(out.begin() + 2, out.end(), 1);
      Set(node, 0, out, first_type);
      return;
    }
    if (op == "Conv" || op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
      // [N, C, spatial...]: the output channels from the weight (Conv) and
      // each spatial dim from kernel, stride, pads and dilation.
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr || dims->size() < 3) return;
      const size_t spatial = dims->size() - 2;
      Dims out = *dims;
      std::optional<Dims> kernel = IntsAttr(node, "kernel_shape");
      if (op == "Conv") {
        const Dims* weight = DimsOf(node, 1);
        if (weight == nullptr || weight->size() != dims->size()) return;
        out[1] = (*weight)[0];
        if (!kernel.has_value()) kernel = Dims(weight->begin() + 2, weight->end());
      }
      if (!kernel.has_value() || kernel->size() != spatial) return;
      const Dims strides = IntsAttr(node, "strides").value_or(Dims(spatial, 1));
      const Dims dilations = IntsAttr(node, "dilations").value_or(Dims(spatial, 1));
      const Dims pads = IntsAttr(node, "pads").value_or(Dims(2 * spatial, 0));
      const onnx::AttributeProto* auto_pad = Attribute(node, "auto_pad");
      const std::string padding = auto_pad == nullptr ? "NOTSET" : auto_pad->s();
      const bool ceil_mode = IntAttr(node, "ceil_mode", 0) != 0;
      if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial) {
        return;
      }
      for (size_t i = 0; i < spatial; ++i) {
        const __int128 in = (*dims)[2 + i];
        const __int128 extent = static_cast<__int128>(dilations[i]) * ((*kernel)[i] - 1) + 1;
        if (strides[i] <= 0) return;
        if (padding == "SAME_UPPER" || padding == "SAME_LOWER") {
          out[2 + i] = Sat((in + strides[i] - 1) / strides[i]);
        } else {
          const __int128 padded =
              in + (padding == "VALID" ? 0 : static_cast<__int128>(pads[i]) + pads[i + spatial]);
          if (padded < extent) return;
          out[2 + i] = Sat((padded - extent + (ceil_mode ? strides[i] - 1 : 0)) / strides[i] + 1);
        }
      }
      Set(node, 0, out, first_type);
      return;
    }
    if (op == "QuantizeLinear" || op == "DequantizeLinear") {
      // Same dims as x. Q's y has y_zero_point's type (uint8 without one);
      // DQ's y is float32 up to opset 17 (later opsets take the scale's).
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr) return;
      int32_t type = onnx::TensorProto_DataType_FLOAT;
      if (op == "QuantizeLinear") {
        type = TypeOf(node, 2) != 0 ? TypeOf(node, 2) : onnx::TensorProto_DataType_UINT8;
      } else if (TypeOf(node, 1) == onnx::TensorProto_DataType_FLOAT16 ||
                 TypeOf(node, 1) == onnx::TensorProto_DataType_BFLOAT16) {
        type = TypeOf(node, 1);
      }
      Set(node, 0, *dims, type);
      return;
    }
    if (op == "DynamicQuantizeLinear") {
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr) return;
      Set(node, 0, *dims, onnx::TensorProto_DataType_UINT8);
      Set(node, 1, Dims{}, onnx::TensorProto_DataType_FLOAT);
      Set(node, 2, Dims{}, onnx::TensorProto_DataType_UINT8);
      return;
    }
    if (op == "MatMulNBits" && node.domain() == "com.microsoft") {
      // ONNX Runtime's contrib op: A [..., K] times a packed [N, K] weight
      // gives [..., N] (attributes K and N, as its ContribOperators.md
      // documents them).
      const Dims* dims = DimsOf(node, 0);
      const int64_t n = IntAttr(node, "N", 0);
      if (dims == nullptr || dims->empty() || n <= 0) return;
      Dims out = *dims;
      out.back() = n;
      Set(node, 0, out, first_type);
      return;
    }
    if (op == "TopK") {
      // Values in X's type and int64 indices, X's dims with `axis` cut to
      // K (input 1 from opset 10, the attribute `k` before).
      Set(node, 0, std::nullopt, first_type);
      Set(node, 1, std::nullopt, onnx::TensorProto_DataType_INT64);
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr) return;
      std::optional<size_t> axis = Axis(IntAttr(node, "axis", -1), dims->size());
      int64_t k = IntAttr(node, "k", -1);
      if (const Dims* values = ValuesOf(node, 1); values != nullptr && values->size() == 1) {
        k = (*values)[0];
      }
      if (!axis.has_value() || k < 0) return;
      Dims out = *dims;
      out[*axis] = std::min(k, (*dims)[*axis]);
      Set(node, 0, out, first_type);
      Set(node, 1, out, onnx::TensorProto_DataType_INT64);
      return;
    }
    if (op == "ArgMax" || op == "ArgMin") {
      Set(node, 0, std::nullopt, onnx::TensorProto_DataType_INT64);
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr) return;
      std::optional<size_t> axis = Axis(IntAttr(node, "axis", 0), dims->size());
      if (!axis.has_value()) return;
      Dims out = *dims;
      if (IntAttr(node, "keepdims", 1) != 0) {
        out[*axis] = 1;
      } else {
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(*axis));
      }
      Set(node, 0, out, onnx::TensorProto_DataType_INT64);
      return;
    }
    if (op == "OneHot") {
      // indices [...] with `depth` inserted at `axis`, in the type of
      // `values` (input 2).
      Set(node, 0, std::nullopt, TypeOf(node, 2));
      const Dims* dims = DimsOf(node, 0);
      const Dims* depth = ValuesOf(node, 1);
      if (dims == nullptr || depth == nullptr || depth->size() != 1 || (*depth)[0] < 0) return;
      std::optional<size_t> axis = Axis(IntAttr(node, "axis", -1), dims->size() + 1);
      if (!axis.has_value()) return;
      Dims out = *dims;
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(*axis), (*depth)[0]);
      Set(node, 0, out, TypeOf(node, 2));
      return;
    }
    if ((op == "MoE" || op == "QMoE") && node.domain() == "com.microsoft") {
      // ONNX Runtime's mixture of experts: the output has the input's shape
      // and type (ContribOperators.md).
      if (const Dims* dims = DimsOf(node, 0)) Set(node, 0, *dims, first_type);
      return;
    }
    if (op == "Einsum") {
      std::vector<Dims> operands;
      std::vector<size_t> ranks;
      for (int i = 0; i < node.input_size(); ++i) {
        const Dims* dims = DimsOf(node, i);
        if (dims == nullptr) return;
        operands.push_back(*dims);
        ranks.push_back(dims->size());
      }
      const onnx::AttributeProto* equation = Attribute(node, "equation");
      absl::StatusOr<EinsumEquation> parsed =
          ParseEinsum(equation == nullptr ? "" : equation->s(), ranks);
      if (!parsed.ok()) {
        why_ = std::string(parsed.status().message());
        return;
      }
      std::optional<Dims> out = EinsumOutputDims(*parsed, operands);
      if (!out.has_value()) why_ = "the operands' sizes of one label disagree";
      Set(node, 0, out, first_type);
      return;
    }
    if (op == "If") {
      VisitIf(node, inferred, depth);
      return;
    }
    if (op == "Split") {
      const Dims* dims = DimsOf(node, 0);
      if (dims == nullptr) return;
      std::optional<size_t> axis = Axis(IntAttr(node, "axis", 0), dims->size());
      if (!axis.has_value()) return;
      std::optional<Dims> split = IntsAttr(node, "split");
      if (!split.has_value() && node.input_size() > 1 && !node.input(1).empty()) {
        const Dims* v = ValuesOf(node, 1);
        if (v == nullptr) return;
        split = *v;
      }
      const int parts = node.output_size();
      if (!split.has_value()) {
        if (parts == 0 || (*dims)[*axis] % parts != 0) return;
        split = Dims(parts, (*dims)[*axis] / parts);
      }
      if (static_cast<int>(split->size()) != parts) return;
      for (int i = 0; i < parts; ++i) {
        Dims out = *dims;
        out[*axis] = (*split)[i];
        Set(node, i, out, first_type);
      }
      return;
    }
  }

  // An If whose condition the gear decides: the branch it takes is walked
  // like the main graph, and its outputs are the If's. Branches nest at
  // most kMaxIfDepth deep (a model from the network chooses the depth).
  void VisitIf(const onnx::NodeProto& node, const Facts& inferred, int depth) {
    constexpr int kMaxIfDepth = 8;
    const Dims* condition = ValuesOf(node, 0);
    if (condition == nullptr || condition->size() != 1) {
      why_ = "its condition '" + (node.input_size() > 0 ? node.input(0) : std::string()) +
             "' is not known at this gear (it depends on the data, or on a dim without a value)";
      return;
    }
    if (depth >= kMaxIfDepth) {
      why_ = "If nodes nest deeper than " + std::to_string(kMaxIfDepth);
      return;
    }
    const onnx::AttributeProto* branch =
        Attribute(node, (*condition)[0] != 0 ? "then_branch" : "else_branch");
    if (branch == nullptr || !branch->has_g()) return;
    const onnx::GraphProto& body = branch->g();
    for (const onnx::TensorProto& tensor : body.initializer()) AddInitializer(tensor);
    // The branch's own value_info, kept where the walk computes nothing.
    Facts scoped = inferred;
    {
      Facts outer;
      std::swap(outer, facts_);
      for (const onnx::ValueInfoProto& value : body.value_info()) AddInfo(value);
      for (const onnx::ValueInfoProto& value : body.output()) AddInfo(value);
      for (auto& [name, facts] : facts_) scoped[name] = std::move(facts);
      std::swap(outer, facts_);
    }
    VisitNodes(body, scoped, depth + 1);
    why_.clear();
    for (int i = 0; i < node.output_size() && i < body.output_size(); ++i) {
      auto it = facts_.find(body.output(i).name());
      if (it == facts_.end()) continue;
      const TensorFacts branch_facts = it->second;
      Set(node, i, branch_facts.dims, branch_facts.elem_type, branch_facts.values);
      if (!branch_facts.dims.has_value() && !node.output(i).empty()) {
        TensorFacts& out = facts_[node.output(i)];
        out.symbolic_dim = branch_facts.symbolic_dim;
        out.unknown_cause = branch_facts.unknown_cause;
        out.expert_rows = branch_facts.expert_rows;
      }
    }
  }

  // The gear's value of a symbolic dim.
  std::optional<int64_t> GearValue(const onnx::TensorShapeProto_Dimension& dim) const {
    if (!dim.has_dim_param()) return std::nullopt;
    for (const auto& [name, value] : gear_) {
      if (name == dim.dim_param()) return value;
    }
    return std::nullopt;
  }

  const onnx::GraphProto& graph_;
  const int64_t opset_;
  const Gear& gear_;
  Facts facts_;
  // Why the node being visited left an output unknown, when it can say.
  std::string why_;
  // Tensors that carry a router's choice, and the router ("TopK '/TopK'").
  std::unordered_map<std::string, std::string> routed_;
};

}  // namespace

std::unordered_map<std::string, TensorFacts> PropagateShapes(const onnx::GraphProto& graph,
                                                             int64_t opset, const Gear& gear) {
  return Propagator(graph, opset, gear).Run();
}

}  // namespace npu::graph
