#include "server/graph/quant_lowering.h"

#include <algorithm>
#include <unordered_set>

#include "server/graph/onnx_model.h"

namespace npu::graph {
namespace {

// Layout ops an exporter puts between a DequantizeLinear and its matmul.
// Eight steps cover every layout seen in torch and ONNX Runtime exports
// (Transpose, Reshape, Cast, Unsqueeze) with room to spare.
constexpr int kMaxLayoutSteps = 8;

bool IsLayoutOp(const onnx::NodeProto& node) {
  static const std::unordered_set<std::string> kLayout = {
      "Transpose", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Cast"};
  return IsDefaultDomain(node) && kLayout.count(node.op_type()) != 0 && node.input_size() >= 1;
}

const std::vector<int64_t>* KnownDims(const GraphIndex& index, const std::string& tensor) {
  const TensorFacts* facts = index.Info(tensor);
  return facts == nullptr || !facts->dims.has_value() ? nullptr : &*facts->dims;
}

// Moves an axis counted from the end of `node`'s input to its output.
// nullopt when the op does not keep the axis and everything after it.
std::optional<int64_t> MapAxis(const GraphIndex& index, const onnx::NodeProto& node,
                               int64_t from_end) {
  const std::string& op = node.op_type();
  if (op == "Identity" || op == "Cast") return from_end;
  const std::vector<int64_t>* in = KnownDims(index, node.input(0));
  const std::vector<int64_t>* out = KnownDims(index, node.output(0));
  if (in == nullptr || out == nullptr) return std::nullopt;
  const int64_t in_rank = static_cast<int64_t>(in->size());
  const int64_t out_rank = static_cast<int64_t>(out->size());
  const int64_t axis = in_rank + from_end;
  if (axis < 0 || axis >= in_rank) return std::nullopt;
  if (op == "Transpose") {
    const onnx::AttributeProto* perm = FindAttribute(node, "perm");
    std::vector<int64_t> order;
    if (perm != nullptr) {
      order.assign(perm->ints().begin(), perm->ints().end());
    } else {
      for (int64_t i = in_rank; i-- > 0;) order.push_back(i);
    }
    for (size_t j = 0; j < order.size(); ++j) {
      if (order[j] == axis) return static_cast<int64_t>(j) - out_rank;
    }
    return std::nullopt;
  }
  // Reshape, Squeeze, Unsqueeze, Flatten: the axis keeps its place from the
  // end when it and every dim after it are unchanged.
  if (-from_end > out_rank) return std::nullopt;
  for (int64_t i = from_end; i < 0; ++i) {
    if ((*in)[static_cast<size_t>(in_rank + i)] != (*out)[static_cast<size_t>(out_rank + i)]) {
      return std::nullopt;
    }
  }
  return from_end;
}

}  // namespace

ZeroPoint ReadZeroPoint(const GraphIndex& index, const onnx::NodeProto& node, int input) {
  ZeroPoint zero;
  if (input >= node.input_size() || node.input(input).empty()) return zero;
  zero.tensor = node.input(input);
  zero.kind = ZeroPointKind::kUnknown;
  // Exporters share one zero-point constant among layers through Identity
  // nodes.
  std::string source = zero.tensor;
  for (int step = 0; step < kMaxLayoutSteps; ++step) {
    const onnx::NodeProto* producer = index.Producer(source);
    if (producer == nullptr || producer->op_type() != "Identity" || !IsDefaultDomain(*producer) ||
        producer->input_size() != 1) {
      break;
    }
    source = producer->input(0);
  }
  const onnx::TensorProto* stored = index.StoredValue(source);
  if (stored == nullptr) return zero;
  std::optional<std::vector<int64_t>> values = StoredIntegers(*stored, kMaxKeptZeroPointElements);
  if (!values.has_value()) return zero;
  auto nonzero = std::find_if(values->begin(), values->end(), [](int64_t v) { return v != 0; });
  if (nonzero == values->end()) {
    zero.kind = ZeroPointKind::kZero;
  } else {
    zero.kind = ZeroPointKind::kNonZero;
    zero.value = *nonzero;
  }
  return zero;
}

ScaleFacts ReadScale(const GraphIndex& index, const onnx::NodeProto& node, int input) {
  ScaleFacts scale;
  if (input >= node.input_size()) return scale;
  scale.tensor = node.input(input);
  if (const std::vector<int64_t>* dims = KnownDims(index, scale.tensor)) {
    scale.known = true;
    scale.dims = *dims;
    // Saturated: a model chooses the dims (each at most 2^40).
    __int128 length = 1;
    for (int64_t dim : *dims) length = std::min<__int128>(length * dim, int64_t{1} << 62);
    scale.length = static_cast<int64_t>(length);
    scale.per_axis = scale.length > 1;
  }
  return scale;
}

std::optional<DequantizedOperand> TraceDequantized(const GraphIndex& index,
                                                   const std::string& tensor) {
  std::vector<const onnx::NodeProto*> reversed;
  std::string current = tensor;
  for (int step = 0; step <= kMaxLayoutSteps; ++step) {
    const onnx::NodeProto* producer = index.Producer(current);
    if (producer == nullptr) return std::nullopt;
    if (producer->op_type() == "DequantizeLinear" && IsDefaultDomain(*producer) &&
        producer->input_size() >= 2) {
      DequantizedOperand operand;
      operand.dequantize = producer;
      operand.dequantize_name = NodeLabel(*producer);
      operand.codes = producer->input(0);
      if (const TensorFacts* facts = index.Info(operand.codes)) {
        operand.codes_type = facts->elem_type;
      }
      operand.scale = ReadScale(index, *producer, 1);
      operand.zero_point = ReadZeroPoint(index, *producer, 2);
      operand.path.assign(reversed.rbegin(), reversed.rend());
      if (const onnx::NodeProto* quantize = index.Producer(operand.codes);
          quantize != nullptr && quantize->op_type() == "QuantizeLinear" &&
          IsDefaultDomain(*quantize)) {
        operand.quantize = quantize;
      }
      if (operand.scale.per_axis) {
        const std::vector<int64_t>* dims = KnownDims(index, operand.codes);
        const int64_t rank = dims == nullptr ? 0 : static_cast<int64_t>(dims->size());
        int64_t axis = IntAttribute(*producer, "axis", 1);
        if (axis < 0) axis += rank;
        std::optional<int64_t> from_end;
        if (axis >= 0 && axis < rank) from_end = axis - rank;
        if (!from_end.has_value()) operand.axis_lost_at = operand.dequantize_name;
        for (const onnx::NodeProto* op : operand.path) {
          if (!from_end.has_value()) break;
          from_end = MapAxis(index, *op, *from_end);
          if (!from_end.has_value()) operand.axis_lost_at = NodeLabel(*op);
        }
        operand.operand_axis = from_end;
      }
      return operand;
    }
    if (!IsLayoutOp(*producer)) return std::nullopt;
    reversed.push_back(producer);
    current = producer->input(0);
  }
  return std::nullopt;
}

const onnx::NodeProto* TraceDynamicQuantize(const GraphIndex& index, const std::string& tensor) {
  std::string current = tensor;
  for (int step = 0; step <= kMaxLayoutSteps; ++step) {
    const onnx::NodeProto* producer = index.Producer(current);
    if (producer == nullptr) return nullptr;
    if (producer->op_type() == "DynamicQuantizeLinear" && IsDefaultDomain(*producer) &&
        producer->output_size() >= 1 && producer->output(0) == current) {
      return producer;
    }
    if (!IsLayoutOp(*producer)) return nullptr;
    current = producer->input(0);
  }
  return nullptr;
}

std::optional<IntegerDequant> FindIntegerDequant(const GraphIndex& index,
                                                 const std::string& int32_output) {
  if (!index.HasSingleReader(int32_output)) return std::nullopt;
  const onnx::NodeProto& cast = index.node(index.Consumers(int32_output)[0]);
  if (cast.op_type() != "Cast" || !IsDefaultDomain(cast) || cast.output_size() != 1) {
    return std::nullopt;
  }
  const int64_t to = IntAttribute(cast, "to", 0);
  if (to != onnx::TensorProto_DataType_FLOAT && to != onnx::TensorProto_DataType_FLOAT16 &&
      to != onnx::TensorProto_DataType_BFLOAT16) {
    return std::nullopt;
  }
  if (!index.HasSingleReader(cast.output(0))) return std::nullopt;
  const onnx::NodeProto& mul = index.node(index.Consumers(cast.output(0))[0]);
  if (mul.op_type() != "Mul" || !IsDefaultDomain(mul) || mul.input_size() != 2 ||
      mul.input(0) == mul.input(1)) {
    return std::nullopt;
  }
  IntegerDequant dequant;
  dequant.cast = &cast;
  dequant.mul = &mul;
  dequant.scale = mul.input(0) == cast.output(0) ? mul.input(1) : mul.input(0);
  dequant.output = mul.output(0);
  dequant.output_type = static_cast<int32_t>(to);
  return dequant;
}

const onnx::NodeProto* TrailingQuantize(const GraphIndex& index, const std::string& tensor) {
  if (!index.HasSingleReader(tensor)) return nullptr;
  const onnx::NodeProto& reader = index.node(index.Consumers(tensor)[0]);
  if (reader.op_type() != "QuantizeLinear" || !IsDefaultDomain(reader) || reader.input_size() < 2 ||
      reader.input(0) != tensor) {
    return nullptr;
  }
  return &reader;
}

NBitsFacts ReadMatMulNBits(const onnx::NodeProto& node) {
  NBitsFacts facts;
  facts.k = IntAttribute(node, "K", 0);
  facts.n = IntAttribute(node, "N", 0);
  facts.bits = IntAttribute(node, "bits", 4);
  facts.block_size = IntAttribute(node, "block_size", 0);
  auto present = [&node](int i) { return node.input_size() > i && !node.input(i).empty(); };
  facts.has_zero_points = present(3);
  facts.has_g_idx = present(4);
  facts.has_bias = present(5);
  return facts;
}

}  // namespace npu::graph
