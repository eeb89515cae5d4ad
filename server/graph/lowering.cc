#include "server/graph/lowering.h"

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/shape_propagation.h"
#include "server/tiling/batch_shape.h"
#include "server/tiling/validate.h"

namespace npu::graph {
namespace {

namespace tl = ::npu::tiling;

// CANN's batch matmuls keep at most four batch dims per operand (rank 6).
using tl::kMaxBatchDims;
// Nodes a GELU subgraph may span (torch's tanh form has 8).
constexpr size_t kMaxGeluNodes = 12;

bool IsDefaultDomain(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

// Why a node did not lower.
struct Outcome {
  NodeStatus status;
  std::string reason;
};

Outcome Unsupported(std::string reason) { return {NodeStatus::kUnsupported, std::move(reason)}; }
Outcome Unresolved(std::string reason) { return {NodeStatus::kUnresolved, std::move(reason)}; }

std::string ShapeText(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return attribute.i();
  }
  return fallback;
}

float FloatAttribute(const onnx::NodeProto& node, const std::string& name, float fallback) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return attribute.f();
  }
  return fallback;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

// The graph's tensors after shape inference: who makes and who reads each.
class GraphIndex {
 public:
  GraphIndex(const onnx::GraphProto& graph, std::unordered_map<std::string, TensorFacts> facts)
      : graph_(graph), facts_(std::move(facts)) {
    for (const onnx::TensorProto& tensor : graph.initializer()) constants_.insert(tensor.name());
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
  const TensorFacts* Info(const std::string& tensor) const {
    auto it = facts_.find(tensor);
    return it == facts_.end() ? nullptr : &it->second;
  }

 private:
  const onnx::GraphProto& graph_;
  std::unordered_map<std::string, TensorFacts> facts_;
  std::unordered_map<std::string, int> producers_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_set<std::string> inputs_, outputs_, constants_;
};

// One operand of a matmul as the lowering sees it.
struct Operand {
  std::vector<int64_t> dims;  // logical: after any absorbed transpose
  tl::DataType dtype = tl::DataType::kFloat16;
  bool transposed = false;  // an absorbed Transpose swapped its last two dims
};

class Lowerer {
 public:
  Lowerer(const GraphIndex& index, const LoweringOptions& options)
      : index_(index), options_(options) {}

  LoweredNode Lower(int node_index) const {
    const onnx::NodeProto& node = index_.node(node_index);
    LoweredNode lowered;
    lowered.node_index = node_index;
    lowered.name = node.name().empty() ? absl::StrCat("#", node_index) : node.name();
    lowered.op_type = node.op_type();
    std::optional<Outcome> outcome;
    if (node.op_type() == "MatMul") {
      outcome = LowerMatMul(node, &lowered);
    } else if (node.op_type() == "Gemm") {
      outcome = LowerGemm(node, &lowered);
    } else if (node.op_type() == "Einsum") {
      outcome = LowerEinsum(node, &lowered);
    } else {
      outcome = Unsupported(absl::StrCat(
          node.op_type(),
          " is a quantized matmul (CANN's QuantBatchMatmulV3), which this service does not "
          "tile yet"));
    }
    if (!outcome.has_value()) {
      absl::Status valid = tl::ValidateProblem(lowered.problem);
      if (!valid.ok()) outcome = Unsupported(std::string(valid.message()));
    }
    if (outcome.has_value()) {
      lowered.status = outcome->status;
      lowered.reason = std::move(outcome->reason);
      lowered.problem = tl::MatmulProblem();
    }
    return lowered;
  }

 private:
  // The known dims of `tensor`, or why they are not known.
  std::optional<Outcome> DimsOf(const std::string& tensor, std::vector<int64_t>* dims) const {
    const TensorFacts* info = index_.Info(tensor);
    if (info != nullptr && info->dims.has_value()) {
      *dims = *info->dims;
      return std::nullopt;
    }
    if (info != nullptr && !info->symbolic_dim.empty()) {
      return Unresolved(absl::StrCat("dim '", info->symbolic_dim, "' of tensor '", tensor,
                                     "' has no value (GraphTilingRequest.dims)"));
    }
    const onnx::NodeProto* producer = index_.Producer(tensor);
    if (producer != nullptr) {
      return Unresolved(absl::StrCat("no shape is known for tensor '", tensor, "', the output of ",
                                     producer->op_type(), " '", producer->name(),
                                     "' (an op or input the shape propagation cannot follow)"));
    }
    return Unresolved(absl::StrCat("no shape is known for tensor '", tensor, "'"));
  }

  // The engine's dtype of `tensor` (float32 in the compute dtype when one
  // is set), or why it has none.
  std::optional<Outcome> DtypeOf(const std::string& tensor, tl::DataType* dtype,
                                 Derivation* derivation) const {
    const TensorFacts* info = index_.Info(tensor);
    const int32_t elem = info == nullptr ? 0 : info->elem_type;
    switch (elem) {
      case onnx::TensorProto_DataType_FLOAT16:
        *dtype = tl::DataType::kFloat16;
        return std::nullopt;
      case onnx::TensorProto_DataType_BFLOAT16:
        *dtype = tl::DataType::kBFloat16;
        return std::nullopt;
      case onnx::TensorProto_DataType_FLOAT:
        if (options_.compute_dtype.has_value()) {
          *dtype = *options_.compute_dtype;
          derivation->compute_dtype_applied = true;
        } else {
          *dtype = tl::DataType::kFloat32;
        }
        return std::nullopt;
      case 0:
        return Unresolved(absl::StrCat("no dtype is known for tensor '", tensor, "'"));
      default:
        return Unsupported(absl::StrCat(
            "tensor '", tensor, "' is ",
            onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem)),
            "; CANN's float matmuls take FLOAT16, BFLOAT16 and FLOAT"));
    }
  }

  // Operand `input` of a matmul. With `absorb`, a Transpose of the last two
  // dims feeding only this node is absorbed: `stored` then names the
  // transpose's input.
  std::optional<Outcome> OperandOf(const std::string& input, bool absorb, Operand* operand,
                                   Derivation* derivation) const {
    if (auto failed = DimsOf(input, &operand->dims)) return failed;
    if (auto failed = DtypeOf(input, &operand->dtype, derivation)) return failed;
    if (!absorb || operand->dims.size() < 2) return std::nullopt;
    const onnx::NodeProto* producer = index_.Producer(input);
    if (producer == nullptr || producer->op_type() != "Transpose" || !IsDefaultDomain(*producer) ||
        !index_.HasSingleReader(input)) {
      return std::nullopt;
    }
    const size_t rank = operand->dims.size();
    const onnx::AttributeProto* perm = FindAttribute(*producer, "perm");
    std::vector<int64_t> order;
    if (perm != nullptr) {
      order.assign(perm->ints().begin(), perm->ints().end());
    } else {
      for (size_t i = rank; i-- > 0;) order.push_back(static_cast<int64_t>(i));
    }
    if (order.size() != rank) return std::nullopt;
    for (size_t i = 0; i + 2 < rank; ++i) {
      if (order[i] != static_cast<int64_t>(i)) return std::nullopt;
    }
    if (order[rank - 2] != static_cast<int64_t>(rank - 1) ||
        order[rank - 1] != static_cast<int64_t>(rank - 2)) {
      return std::nullopt;
    }
    operand->transposed = true;
    derivation->absorbed_transposes.push_back(producer->name().empty() ? producer->output(0)
                                                                       : producer->name());
    return std::nullopt;
  }

  std::optional<Outcome> LowerMatMul(const onnx::NodeProto& node, LoweredNode* lowered) const {
    for (const std::string& input : node.input()) {
      const onnx::NodeProto* producer = index_.Producer(input);
      if (producer != nullptr && producer->op_type() == "DequantizeLinear") {
        return Unsupported(absl::StrCat(
            "a quantized matmul (DequantizeLinear '", producer->name(),
            "' feeds it): CANN's QuantBatchMatmulV3, which this service does not tile yet"));
      }
    }
    if (node.input_size() != 2) return Unsupported("MatMul needs two inputs");
    Derivation& derivation = lowered->derivation;
    Operand a, b;
    if (auto failed = OperandOf(node.input(0), true, &a, &derivation)) return failed;
    if (auto failed = OperandOf(node.input(1), true, &b, &derivation)) return failed;
    if (a.dims.empty() || b.dims.empty()) return Unsupported("a MatMul operand is a scalar");
    if (a.dims.size() == 1) {
      a.dims.insert(a.dims.begin(), 1);
      derivation.promoted_a = true;
    }
    if (b.dims.size() == 1) {
      b.dims.push_back(1);
      derivation.promoted_b = true;
    }
    const int64_t k = a.dims.back();
    if (b.dims[b.dims.size() - 2] != k) {
      return Unsupported(
          absl::StrCat("A ", ShapeText(a.dims), " and B ", ShapeText(b.dims), " disagree on k"));
    }
    std::vector<int64_t> batch_a(a.dims.begin(), a.dims.end() - 2);
    std::vector<int64_t> batch_b(b.dims.begin(), b.dims.end() - 2);
    if (auto failed = CheckBatchRank(batch_a, batch_b)) return failed;
    tl::MatmulProblem& problem = lowered->problem;
    problem.m = a.dims[a.dims.size() - 2];
    problem.k = k;
    problem.n = b.dims.back();
    SetDtypes(a, b, &problem);
    const std::vector<int64_t> c_dims = LogicalC(batch_a, batch_b, problem.m, problem.n);
    if (batch_b.empty() && !(a.transposed && !batch_a.empty())) {
      problem.op = tl::MatmulOp::kMatMulV3;
      if (!batch_a.empty()) {
        // Bounded like every dim the shapes keep (at most 2^40 each), so the
        // product is exact; the engine's checks then judge its size.
        __int128 folded = problem.m;
        for (int64_t dim : batch_a) {
          folded *= dim;
          if (folded > std::numeric_limits<int32_t>::max()) break;
        }
        if (folded > std::numeric_limits<int32_t>::max()) {
          return Unsupported(absl::StrCat(
              "A's batch folded into m gives ",
              static_cast<int64_t>(std::min<__int128>(folded, std::numeric_limits<int64_t>::max())),
              " rows, above 2147483647"));
        }
        problem.m = static_cast<int64_t>(folded);
        derivation.folded_batch = true;
      }
    } else {
      problem.op = tl::MatmulOp::kBatchMatMulV3;
      problem.batch.a = std::move(batch_a);
      problem.batch.b = std::move(batch_b);
    }
    FuseAfter(node.output(0), c_dims, lowered);
    return std::nullopt;
  }

  std::optional<Outcome> LowerGemm(const onnx::NodeProto& node, LoweredNode* lowered) const {
    const float alpha = FloatAttribute(node, "alpha", 1.0f);
    const float beta = FloatAttribute(node, "beta", 1.0f);
    // beta = 0 multiplies C away: the Gemm is a plain matmul.
    const bool has_c = node.input_size() > 2 && !node.input(2).empty() && beta != 0.0f;
    if (node.input_size() > 2 && !node.input(2).empty() && beta == 0.0f) {
      lowered->derivation.notes.push_back("C is ignored (beta=0)");
    }
    if (alpha != 1.0f || (has_c && beta != 1.0f)) {
      return Unsupported(absl::StrCat("Gemm with alpha=", alpha, " beta=", beta,
                                      ": CANN's MatMulV3 has no scale factors"));
    }
    Derivation& derivation = lowered->derivation;
    Operand a, b;
    if (auto failed = OperandOf(node.input(0), true, &a, &derivation)) return failed;
    if (auto failed = OperandOf(node.input(1), true, &b, &derivation)) return failed;
    if (a.dims.size() != 2 || b.dims.size() != 2) return Unsupported("Gemm needs 2-D A and B");
    // The stored operand is the transpose's input when one was absorbed, so
    // Gemm's own flag and the absorbed transpose cancel.
    a.transposed = a.transposed != (IntAttribute(node, "transA", 0) != 0);
    b.transposed = b.transposed != (IntAttribute(node, "transB", 0) != 0);
    const bool flip_a = IntAttribute(node, "transA", 0) != 0;
    const bool flip_b = IntAttribute(node, "transB", 0) != 0;
    const int64_t m = flip_a ? a.dims[1] : a.dims[0];
    const int64_t k = flip_a ? a.dims[0] : a.dims[1];
    const int64_t kb = flip_b ? b.dims[1] : b.dims[0];
    const int64_t n = flip_b ? b.dims[0] : b.dims[1];
    if (k != kb) {
      return Unsupported(absl::StrCat("Gemm's A ", ShapeText(a.dims), " and B ", ShapeText(b.dims),
                                      " disagree on k"));
    }
    tl::MatmulProblem& problem = lowered->problem;
    problem.op = tl::MatmulOp::kMatMulV3;
    problem.m = m;
    problem.k = k;
    problem.n = n;
    SetDtypes(a, b, &problem);
    if (has_c) {
      std::vector<int64_t> c_dims;
      if (auto failed = DimsOf(node.input(2), &c_dims)) return failed;
      const bool row = (c_dims.size() == 1 && c_dims[0] == n) ||
                       (c_dims.size() == 2 && c_dims[0] == 1 && c_dims[1] == n);
      if (row) {
        tl::DataType dtype;
        if (auto failed = DtypeOf(node.input(2), &dtype, &derivation)) return failed;
        problem.has_bias = true;
        problem.dtype_bias = dtype;
        derivation.fused_bias = node.input(2);
      } else if (options_.fuse_epilogues && c_dims == std::vector<int64_t>{m, n}) {
        TryEpilogue(tl::FusedOp::kAdd, {absl::StrCat("C ", node.input(2))}, {}, lowered);
      } else {
        derivation.notes.push_back(
            absl::StrCat("C ", ShapeText(c_dims), " is not a bias row; a separate Add adds it"));
      }
    }
    if (lowered->problem.fused.op == tl::FusedOp::kNone) FuseAfter(node.output(0), {m, n}, lowered);
    return std::nullopt;
  }

  // Einsum of a batch matmul: every label but m, k and n appears in both
  // inputs and the output, in the same order and before them.
  std::optional<Outcome> LowerEinsum(const onnx::NodeProto& node, LoweredNode* lowered) const {
    const onnx::AttributeProto* attribute = FindAttribute(node, "equation");
    std::string equation = attribute == nullptr ? "" : attribute->s();
    equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
    const std::string not_matmul = absl::StrCat("Einsum '", equation, "' is not a batch matmul");
    const size_t comma = equation.find(',');
    const size_t arrow = equation.find("->");
    if (node.input_size() != 2 || comma == std::string::npos || arrow == std::string::npos ||
        comma > arrow || equation.find('.') != std::string::npos) {
      return Unsupported(not_matmul);
    }
    const std::string lhs = equation.substr(0, comma);
    const std::string rhs = equation.substr(comma + 1, arrow - comma - 1);
    const std::string out = equation.substr(arrow + 2);
    if (lhs.size() < 2 || rhs.size() != lhs.size() || out.size() != lhs.size()) {
      return Unsupported(not_matmul);
    }
    const size_t batch = lhs.size() - 2;
    if (lhs.compare(0, batch, rhs, 0, batch) != 0 || lhs.compare(0, batch, out, 0, batch) != 0) {
      return Unsupported(not_matmul);
    }
    const char m = out[batch], n = out[batch + 1];
    const std::string a_tail = lhs.substr(batch), b_tail = rhs.substr(batch);
    char k = 0;
    bool trans_a = false, trans_b = false;
    if (a_tail[0] == m) {
      k = a_tail[1];
    } else if (a_tail[1] == m) {
      k = a_tail[0];
      trans_a = true;
    } else {
      return Unsupported(not_matmul);
    }
    if (b_tail == std::string{k, n}) {
      trans_b = false;
    } else if (b_tail == std::string{n, k}) {
      trans_b = true;
    } else {
      return Unsupported(not_matmul);
    }
    std::set<char> labels(lhs.begin(), lhs.end());
    if (labels.size() != lhs.size() || k == m || k == n || m == n) return Unsupported(not_matmul);
    Derivation& derivation = lowered->derivation;
    Operand a, b;
    if (auto failed = OperandOf(node.input(0), false, &a, &derivation)) return failed;
    if (auto failed = OperandOf(node.input(1), false, &b, &derivation)) return failed;
    if (a.dims.size() != lhs.size() || b.dims.size() != rhs.size()) {
      return Unsupported("Einsum's operand ranks do not match its equation");
    }
    a.transposed = trans_a;
    b.transposed = trans_b;
    tl::MatmulProblem& problem = lowered->problem;
    problem.m = trans_a ? a.dims[batch + 1] : a.dims[batch];
    problem.k = trans_a ? a.dims[batch] : a.dims[batch + 1];
    problem.n = trans_b ? b.dims[batch] : b.dims[batch + 1];
    SetDtypes(a, b, &problem);
    std::vector<int64_t> batch_a(a.dims.begin(), a.dims.begin() + batch);
    std::vector<int64_t> batch_b(b.dims.begin(), b.dims.begin() + batch);
    if (auto failed = CheckBatchRank(batch_a, batch_b)) return failed;
    const std::vector<int64_t> c_dims = LogicalC(batch_a, batch_b, problem.m, problem.n);
    problem.op = batch == 0 ? tl::MatmulOp::kMatMulV3 : tl::MatmulOp::kBatchMatMulV3;
    problem.batch.a = std::move(batch_a);
    problem.batch.b = std::move(batch_b);
    FuseAfter(node.output(0), c_dims, lowered);
    return std::nullopt;
  }

  static std::optional<Outcome> CheckBatchRank(const std::vector<int64_t>& batch_a,
                                               const std::vector<int64_t>& batch_b) {
    if (batch_a.size() > kMaxBatchDims || batch_b.size() > kMaxBatchDims) {
      return Unsupported(absl::StrCat("an operand has ", std::max(batch_a.size(), batch_b.size()),
                                      " batch dims; CANN's batch matmuls take at most ",
                                      kMaxBatchDims, " (rank 6)"));
    }
    return std::nullopt;
  }

  static void SetDtypes(const Operand& a, const Operand& b, tl::MatmulProblem* problem) {
    problem->dtype_a = a.dtype;
    problem->dtype_b = b.dtype;
    problem->dtype_c = a.dtype;
    problem->trans_a = a.transposed;
    problem->trans_b = b.transposed;
  }

  // C's logical dims: A's and B's batch broadcast, then m and n.
  static std::vector<int64_t> LogicalC(const std::vector<int64_t>& batch_a,
                                       const std::vector<int64_t>& batch_b, int64_t m, int64_t n) {
    const bool a_longer = batch_a.size() >= batch_b.size();
    std::vector<int64_t> dims = a_longer ? batch_a : batch_b;
    const std::vector<int64_t>& other = a_longer ? batch_b : batch_a;
    for (size_t i = 0; i < other.size(); ++i) {
      int64_t& dim = dims[dims.size() - other.size() + i];
      dim = std::max(dim, other[i]);
    }
    dims.push_back(m);
    dims.push_back(n);
    return dims;
  }

  // The bias Add, then (with fuse_epilogues) the epilogue, after the
  // matmul's output `tensor`.
  // `c_dims` is C's shape in the graph (before a batch fold).
  void FuseAfter(const std::string& tensor, const std::vector<int64_t>& c_dims,
                 LoweredNode* lowered) const {
    tl::MatmulProblem& problem = lowered->problem;
    std::string out = tensor;
    if (index_.HasSingleReader(out)) {
      const onnx::NodeProto& reader = index_.node(index_.Consumers(out)[0]);
      if (reader.op_type() == "Add" && IsDefaultDomain(reader) && reader.input_size() == 2 &&
          reader.input(0) != reader.input(1)) {
        const std::string& other = reader.input(0) == out ? reader.input(1) : reader.input(0);
        std::vector<int64_t> dims;
        tl::DataType dtype;
        Derivation scratch;
        if (!DimsOf(other, &dims).has_value() && dims == std::vector<int64_t>{problem.n} &&
            !DtypeOf(other, &dtype, &scratch).has_value()) {
          problem.has_bias = true;
          problem.dtype_bias = dtype;
          if (scratch.compute_dtype_applied) lowered->derivation.compute_dtype_applied = true;
          lowered->derivation.fused_bias = reader.name().empty() ? reader.output(0) : reader.name();
          out = reader.output(0);
        }
      }
    }
    if (options_.fuse_epilogues) FuseEpilogue(out, c_dims, lowered);
  }

  void FuseEpilogue(const std::string& tensor, const std::vector<int64_t>& c_dims,
                    LoweredNode* lowered) const {
    const tl::MatmulProblem& problem = lowered->problem;
    if (std::optional<tl::FusedOp> gelu = GeluAfter(tensor)) {
      TryEpilogue(*gelu, gelu_nodes_, {}, lowered);
      return;
    }
    if (!index_.HasSingleReader(tensor)) return;
    const onnx::NodeProto& reader = index_.node(index_.Consumers(tensor)[0]);
    if (!IsDefaultDomain(reader)) return;
    const std::string name = reader.name().empty() ? reader.output(0) : reader.name();
    if (reader.op_type() == "Relu") {
      TryEpilogue(tl::FusedOp::kRelu, {name}, {}, lowered);
    } else if (reader.op_type() == "Gelu") {
      const onnx::AttributeProto* approximate = FindAttribute(reader, "approximate");
      const bool tanh = approximate != nullptr && approximate->s() == "tanh";
      TryEpilogue(tanh ? tl::FusedOp::kGeluTanh : tl::FusedOp::kGeluErf, {name}, {}, lowered);
    } else if ((reader.op_type() == "Add" || reader.op_type() == "Mul") &&
               reader.input_size() == 2 && reader.input(0) != reader.input(1)) {
      const std::string& other = reader.input(0) == tensor ? reader.input(1) : reader.input(0);
      std::vector<int64_t> dims;
      if (DimsOf(other, &dims).has_value()) return;
      if (dims != c_dims) {
        lowered->derivation.notes.push_back(absl::StrCat("not fused: ", reader.op_type(), " '",
                                                         name, "' reads ", ShapeText(dims),
                                                         ", not C's shape ", ShapeText(c_dims)));
        return;
      }
      // x3 is [m, n] for a 2-D (or folded) C, else [batch product, m, n].
      std::vector<int64_t> x3;
      if (problem.op == tl::MatmulOp::kBatchMatMulV3) {
        x3 = {static_cast<int64_t>(
                  tl::BatchProduct(std::vector<int64_t>(c_dims.begin(), c_dims.end() - 2))),
              problem.m, problem.n};
      }
      TryEpilogue(reader.op_type() == "Add" ? tl::FusedOp::kAdd : tl::FusedOp::kMul, {name}, x3,
                  lowered);
    }
  }

  // Makes the problem FusedMatMul's with `op` when FusedMatMul takes it,
  // else notes why not.
  void TryEpilogue(tl::FusedOp op, std::vector<std::string> nodes, std::vector<int64_t> x3,
                   LoweredNode* lowered) const {
    tl::MatmulProblem fused = lowered->problem;
    fused.op = tl::MatmulOp::kFusedMatMul;
    fused.fused.op = op;
    fused.fused.x3_shape = std::move(x3);
    absl::Status valid = tl::ValidateProblem(fused);
    if (!valid.ok()) {
      lowered->derivation.notes.push_back(
          absl::StrCat("not fused into FusedMatMul (", nodes.front(), "): ", valid.message()));
      return;
    }
    lowered->problem = std::move(fused);
    lowered->derivation.fused_epilogue = std::move(nodes);
  }

  // GELU as exporters before opset 20 write it: elementwise nodes with
  // constant second operands around one Erf (or Tanh), that read `tensor`
  // and nothing else of the graph, with one output. Fills gelu_nodes_.
  std::optional<tl::FusedOp> GeluAfter(const std::string& tensor) const {
    static const std::unordered_set<std::string> kElementwise = {"Div", "Mul", "Add", "Sub",
                                                                 "Pow", "Erf", "Tanh"};
    std::vector<int> region;
    std::unordered_set<std::string> inside = {tensor};
    std::vector<std::string> frontier = {tensor};
    bool grew = true;
    while (grew && region.size() <= kMaxGeluNodes) {
      grew = false;
      for (size_t f = 0; f < frontier.size(); ++f) {
        for (int reader_index : index_.Consumers(frontier[f])) {
          if (std::find(region.begin(), region.end(), reader_index) != region.end()) continue;
          const onnx::NodeProto& reader = index_.node(reader_index);
          if (!IsDefaultDomain(reader) || kElementwise.count(reader.op_type()) == 0 ||
              reader.output_size() != 1) {
            continue;
          }
          const bool fed = std::all_of(
              reader.input().begin(), reader.input().end(), [&](const std::string& input) {
                return inside.count(input) != 0 || index_.IsConstantLike(input);
              });
          if (!fed) continue;
          region.push_back(reader_index);
          inside.insert(reader.output(0));
          frontier.push_back(reader.output(0));
          grew = true;
        }
      }
    }
    if (region.empty() || region.size() > kMaxGeluNodes) return std::nullopt;
    int erf = 0, tanh = 0;
    bool times_input = false;
    std::vector<std::string> exits;
    for (int node_index : region) {
      const onnx::NodeProto& node = index_.node(node_index);
      erf += node.op_type() == "Erf";
      tanh += node.op_type() == "Tanh";
      if (node.op_type() == "Mul" &&
          std::count(node.input().begin(), node.input().end(), tensor) > 0) {
        times_input = true;
      }
      const std::string& output = node.output(0);
      const bool leaves =
          index_.IsGraphOutput(output) ||
          std::any_of(index_.Consumers(output).begin(), index_.Consumers(output).end(),
                      [&](int reader) {
                        return std::find(region.begin(), region.end(), reader) == region.end();
                      });
      if (leaves) exits.push_back(output);
    }
    const bool tensor_leaves =
        index_.IsGraphOutput(tensor) ||
        std::any_of(index_.Consumers(tensor).begin(), index_.Consumers(tensor).end(),
                    [&](int reader) {
                      return std::find(region.begin(), region.end(), reader) == region.end();
                    });
    if (erf + tanh != 1 || !times_input || exits.size() != 1 || tensor_leaves) return std::nullopt;
    gelu_nodes_.clear();
    for (int node_index : region) {
      const onnx::NodeProto& node = index_.node(node_index);
      gelu_nodes_.push_back(node.name().empty() ? node.output(0) : node.name());
    }
    return erf == 1 ? tl::FusedOp::kGeluErf : tl::FusedOp::kGeluTanh;
  }

  const GraphIndex& index_;
  const LoweringOptions& options_;
  mutable std::vector<std::string> gelu_nodes_;
};

}  // namespace

bool IsMatmulLike(const std::string& op_type) {
  return op_type == "MatMul" || op_type == "Gemm" || op_type == "Einsum" ||
         op_type == "MatMulInteger" || op_type == "QLinearMatMul";
}

namespace {

// Every matmul-like node of `graph` lowered with `facts`.
std::vector<LoweredNode> LowerNodes(const onnx::GraphProto& graph,
                                    std::unordered_map<std::string, TensorFacts> facts,
                                    const LoweringOptions& options) {
  const GraphIndex index(graph, std::move(facts));
  const Lowerer lowerer(index, options);
  std::vector<LoweredNode> nodes;
  nodes.reserve(static_cast<size_t>(
      std::count_if(graph.node().begin(), graph.node().end(), [](const onnx::NodeProto& node) {
        return IsDefaultDomain(node) && IsMatmulLike(node.op_type());
      })));
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (!IsDefaultDomain(node) || !IsMatmulLike(node.op_type())) continue;
    nodes.push_back(lowerer.Lower(i));
  }
  return nodes;
}

}  // namespace

absl::StatusOr<std::vector<LoweredNode>> LowerGraph(const onnx::ModelProto& model, const Gear& gear,
                                                    const LoweringOptions& options) {
  return LowerNodes(model.graph(), PropagateShapes(model.graph(), DefaultOpset(model), gear),
                    options);
}

}  // namespace npu::graph
