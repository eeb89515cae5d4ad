#include "server/graph/onnx_model.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"
#include "onnx/checker.h"

namespace npu::graph {
namespace {

absl::Status ModelError(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("model: ", what));
}

// Collects the text parser's first error instead of logging it.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (error_.empty())
      error_ = absl::StrCat("line ", line + 1, " column ", column + 1, ": ", message);
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

int64_t ElementCount(const onnx::TensorProto& tensor) {
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim <= 0) return 0;
    if (count > (int64_t{1} << 40) / dim) return int64_t{1} << 40;
    count *= dim;
  }
  return count;
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ParseModel(absl::string_view bytes, ModelEncoding encoding) {
  if (bytes.empty()) return ModelError("empty; send an ONNX ModelProto (binary or text)");
  onnx::ModelProto model;
  if (encoding != ModelEncoding::kText) {
    google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
    if (model.ParseFromZeroCopyStream(&stream) && model.has_graph()) return model;
    if (encoding == ModelEncoding::kBinary) {
      return ModelError(absl::StrCat("the ", bytes.size(),
                                     " bytes are not a binary onnx.ModelProto with a graph"));
    }
    model.Clear();
  }
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  if (!parser.Parse(&stream, &model)) {
    return ModelError(absl::StrCat(
        encoding == ModelEncoding::kText ? "" : "neither a binary onnx.ModelProto nor ",
        "text format of onnx.ModelProto (", errors.error(), ")"));
  }
  if (!model.has_graph()) return ModelError("the model has no graph");
  return model;
}

namespace {

// The tensors read as a zero point.
std::set<std::string> ZeroPointInputs(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const onnx::NodeProto& node : graph.node()) {
    std::vector<int> slots;
    if (node.op_type() == "QuantizeLinear" || node.op_type() == "DequantizeLinear") {
      slots = {2};
    } else if (node.op_type() == "MatMulInteger") {
      slots = {2, 3};
    } else if (node.op_type() == "QLinearMatMul") {
      slots = {2, 5, 7};
    }
    for (int slot : slots) {
      if (slot < node.input_size() && !node.input(slot).empty()) names.insert(node.input(slot));
    }
  }
  return names;
}

}  // namespace

int StripInitializerData(onnx::ModelProto& model, int64_t max_elements) {
  onnx::GraphProto& graph = *model.mutable_graph();
  std::set<std::string> inputs;
  for (const onnx::ValueInfoProto& input : graph.input()) inputs.insert(input.name());
  const std::set<std::string> zero_points = ZeroPointInputs(graph);
  int stripped = 0;
  auto* initializers = graph.mutable_initializer();
  for (int i = 0; i < initializers->size();) {
    const onnx::TensorProto& tensor = initializers->Get(i);
    const int64_t elements = ElementCount(tensor);
    if (elements <= max_elements ||
        (zero_points.count(tensor.name()) != 0 && elements <= kMaxKeptZeroPointElements)) {
      ++i;
      continue;
    }
    if (inputs.insert(tensor.name()).second) {
      onnx::ValueInfoProto& input = *graph.add_input();
      input.set_name(tensor.name());
      onnx::TypeProto_Tensor& type = *input.mutable_type()->mutable_tensor_type();
      type.set_elem_type(tensor.data_type());
      onnx::TensorShapeProto& shape = *type.mutable_shape();
      for (int64_t dim : tensor.dims()) shape.add_dim()->set_dim_value(dim);
    }
    initializers->DeleteSubrange(i, 1);
    ++stripped;
  }
  return stripped;
}

std::optional<std::vector<int64_t>> StoredIntegers(const onnx::TensorProto& tensor,
                                                   int64_t max_elements) {
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0 || dim > max_elements) return std::nullopt;
    count *= dim;
    if (count > max_elements) return std::nullopt;
  }
  const size_t n = static_cast<size_t>(count);
  const std::string& raw = tensor.raw_data();
  std::vector<int64_t> values;
  switch (tensor.data_type()) {
    case onnx::TensorProto_DataType_INT8:
    case onnx::TensorProto_DataType_UINT8: {
      const bool is_signed = tensor.data_type() == onnx::TensorProto_DataType_INT8;
      if (!tensor.has_raw_data()) {
        values.assign(tensor.int32_data().begin(), tensor.int32_data().end());
        break;
      }
      if (raw.size() != n) return std::nullopt;
      for (char c : raw) {
        values.push_back(is_signed ? static_cast<int8_t>(c) : static_cast<uint8_t>(c));
      }
      break;
    }
    case onnx::TensorProto_DataType_INT32:
      if (!tensor.has_raw_data()) {
        values.assign(tensor.int32_data().begin(), tensor.int32_data().end());
        break;
      }
      if (raw.size() != n * 4) return std::nullopt;
      values.resize(n);
      for (size_t i = 0; i < n; ++i) {
        int32_t value;
        std::memcpy(&value, raw.data() + 4 * i, 4);
        values[i] = value;
      }
      break;
    case onnx::TensorProto_DataType_INT64:
      if (!tensor.has_raw_data()) {
        values.assign(tensor.int64_data().begin(), tensor.int64_data().end());
        break;
      }
      if (raw.size() != n * 8) return std::nullopt;
      values.resize(n);
      if (n > 0) std::memcpy(values.data(), raw.data(), n * 8);
      break;
    default:
      return std::nullopt;
  }
  if (values.size() != n) return std::nullopt;
  return values;
}

int64_t DefaultOpset(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return opset.version();
  }
  return 0;
}

absl::Status CheckModel(const onnx::ModelProto& model) {
  const int64_t opset = DefaultOpset(model);
  if (opset < 1 || opset > kMaxOpset) {
    return ModelError(absl::StrCat("opset ", opset, " of the default domain is outside 1..",
                                   kMaxOpset, " (what ONNX 1.12 defines)"));
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& error) {
    return ModelError(absl::StrCat("the ONNX checker refused it: ", error.what()));
  }
  return absl::OkStatus();
}

std::vector<std::string> SymbolicDims(const onnx::GraphProto& graph) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& tensor : graph.initializer()) initializers.insert(tensor.name());
  std::vector<std::string> dims;
  std::set<std::string> seen;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initializers.count(input.name()) != 0 || !input.type().has_tensor_type()) continue;
    for (const onnx::TensorShapeProto_Dimension& dim : input.type().tensor_type().shape().dim()) {
      if (dim.has_dim_param() && !dim.dim_param().empty() && seen.insert(dim.dim_param()).second) {
        dims.push_back(dim.dim_param());
      }
    }
  }
  return dims;
}

absl::StatusOr<std::vector<Gear>> BuildGears(
    const std::vector<std::string>& dims, const std::map<std::string, std::vector<int64_t>>& values,
    GearPolicy policy, size_t max_gears) {
  std::vector<std::pair<std::string, const std::vector<int64_t>*>> given;
  for (const std::string& dim : dims) {
    auto it = values.find(dim);
    if (it != values.end()) given.emplace_back(dim, &it->second);
  }
  for (const auto& [name, list] : values) {
    if (std::find(dims.begin(), dims.end(), name) == dims.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dims: '", name, "' is not a symbolic dim of the model's inputs (",
          dims.empty() ? "it has none" : absl::StrCat("it has: ", absl::StrJoin(dims, ", ")), ")"));
    }
    if (list.empty() || list.size() > kMaxDimValues) {
      return absl::InvalidArgumentError(absl::StrCat("dims: '", name, "' lists ", list.size(),
                                                     " values; 1..", kMaxDimValues, " allowed"));
    }
    for (int64_t value : list) {
      if (value < 1 || value > kMaxDimValue) {
        return absl::InvalidArgumentError(absl::StrCat("dims: '", name, "' value ", value,
                                                       " must be in [1, ", kMaxDimValue, "]"));
      }
    }
  }
  std::vector<Gear> gears;
  if (policy == GearPolicy::kZip) {
    size_t count = 1;
    for (const auto& [name, list] : given) {
      if (list->size() == 1) continue;
      if (count != 1 && list->size() != count) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dims: GEAR_POLICY_ZIP needs every dim with several values to list equally many; '",
            name, "' lists ", list->size(), ", another ", count));
      }
      count = list->size();
    }
    if (count > max_gears) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dims: ", count, " gears is above the limit of ", max_gears, " (--max_graph_gears)"));
    }
    for (size_t i = 0; i < count; ++i) {
      Gear gear;
      for (const auto& [name, list] : given) {
        gear.emplace_back(name, (*list)[list->size() == 1 ? 0 : i]);
      }
      gears.push_back(std::move(gear));
    }
    return gears;
  }
  size_t count = 1;
  for (const auto& [name, list] : given) {
    count *= list->size();
    if (count > max_gears) {
      return absl::InvalidArgumentError(absl::StrCat("dims: GEAR_POLICY_PRODUCT makes more than ",
                                                     max_gears,
                                                     " gears, the limit (--max_graph_gears)"));
    }
  }
  for (size_t i = 0; i < count; ++i) {
    Gear gear;
    size_t rest = i;
    std::vector<int64_t> picked(given.size());
    for (size_t d = given.size(); d-- > 0;) {
      const std::vector<int64_t>& list = *given[d].second;
      picked[d] = list[rest % list.size()];
      rest /= list.size();
    }
    for (size_t d = 0; d < given.size(); ++d) gear.emplace_back(given[d].first, picked[d]);
    gears.push_back(std::move(gear));
  }
  return gears;
}

}  // namespace npu::graph
