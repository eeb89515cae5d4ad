#include "server/graph/lowering.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/einsum.h"
#include "server/graph/graph_index.h"
#include "server/graph/moe_lowering.h"
#include "server/graph/quant_lowering.h"
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
    lowered.flops = NodeFlops(node);
    std::optional<Outcome> outcome;
    const std::string& op = node.op_type();
    if (op == "MatMul" || op == "Gemm") {
      // A quantized operand, even behind layout ops, makes it a quantized
      // matmul: never a float answer.
      std::optional<DequantizedOperand> a, b;
      if (node.input_size() >= 2) {
        a = TraceDequantized(index_, node.input(0));
        b = TraceDequantized(index_, node.input(1));
      }
      if (a.has_value() || b.has_value()) {
        outcome = LowerDequantized(node, a, b, &lowered);
      } else if (op == "MatMul") {
        outcome = LowerMatMul(node, &lowered);
      } else {
        outcome = LowerGemm(node, &lowered);
      }
    } else if (op == "Einsum") {
      outcome = LowerEinsum(node, &lowered);
    } else if (op == "MatMulInteger") {
      outcome = LowerMatMulInteger(node, &lowered);
    } else if (op == "QLinearMatMul") {
      outcome = LowerQLinearMatMul(node, &lowered);
    } else {
      outcome = LowerMatMulNBits(node, &lowered);
    }
    if (!outcome.has_value()) {
      absl::Status valid = tl::ValidateProblem(lowered.problem);
      if (!valid.ok()) outcome = Unsupported(std::string(valid.message()));
    }
    if (outcome.has_value() && outcome->status == NodeStatus::kUnresolved) {
      outcome->reason = ExpertLoopReason(node, std::move(outcome->reason));
    }
    if (outcome.has_value()) {
      lowered.status = outcome->status;
      lowered.reason = std::move(outcome->reason);
      lowered.problem = tl::MatmulProblem();
    }
    return lowered;
  }

 private:
  // An unresolved MatMul / Gemm whose A is an MoE expert's rows (a torch
  // expert loop: each expert's tokens are a NonZero of the router's choice)
  // is answered as it is: the operator and the k and n the weight fixes,
  // with m left to the run. Other reasons pass unchanged.
  std::string ExpertLoopReason(const onnx::NodeProto& node, std::string reason) const {
    if ((node.op_type() != "MatMul" && node.op_type() != "Gemm") || node.input_size() < 2) {
      return reason;
    }
    const TensorFacts* a = index_.Info(node.input(0));
    if (a == nullptr || !a->expert_rows) return reason;
    const TensorFacts* b = index_.Info(node.input(1));
    if (b == nullptr || !b->dims.has_value() || b->dims->size() != 2) {
      return absl::StrCat("an MoE expert's matmul, m unknown: ", reason);
    }
    const bool flip_b = node.op_type() == "Gemm" && IntAttribute(node, "transB", 0) != 0;
    const int64_t k = (*b->dims)[flip_b ? 1 : 0];
    const int64_t n = (*b->dims)[flip_b ? 0 : 1];
    return absl::StrCat("an MoE expert's matmul: MatMulV3 with k = ", k, " and n = ", n,
                        ", m unknown (the tokens routed to this expert); ", reason);
  }

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
    if (info != nullptr && !info->unknown_cause.empty()) {
      return Unresolved(absl::StrCat("no shape is known for tensor '", tensor,
                                     "': it follows from ", info->unknown_cause));
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
    if (elem == 0) return Unresolved(absl::StrCat("no dtype is known for tensor '", tensor, "'"));
    if (std::optional<tl::DataType> run = FloatRunDtype(elem, derivation)) {
      *dtype = *run;
      return std::nullopt;
    }
    return Unsupported(
        absl::StrCat("tensor '", tensor, "' is ",
                     onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem)),
                     "; CANN's float matmuls take FLOAT16, BFLOAT16 and FLOAT"));
  }

  // The dtype a float tensor of `elem` runs in: its own, or for float32 the
  // request's compute dtype when one is set (noted in `derivation`); nullopt
  // for any other type.
  std::optional<tl::DataType> FloatRunDtype(int32_t elem, Derivation* derivation) const {
    switch (elem) {
      case onnx::TensorProto_DataType_FLOAT16:
        return tl::DataType::kFloat16;
      case onnx::TensorProto_DataType_BFLOAT16:
        return tl::DataType::kBFloat16;
      case onnx::TensorProto_DataType_FLOAT:
        if (!options_.compute_dtype.has_value()) return tl::DataType::kFloat32;
        derivation->compute_dtype_applied = true;
        return *options_.compute_dtype;
      default:
        return std::nullopt;
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

  // TransposeBatchMatMul (MLA's absorbed per-head projections): x1 stored
  // [m, batch, k] (`x1_swapped`, read through perm_x1 [1, 0, 2]) or [batch,
  // m, k], x2 stored [batch, k, n] or [batch, n, k] (`x2_transposed`, perm_x2
  // [0, 2, 1]), y written [m, batch, n] (perm_y [1, 0, 2]). Makes the problem
  // TransposeBatchMatMul's and returns true when its checker takes it; else
  // notes why and leaves the problem alone.
  bool TryTransposeBatch(const Operand& a, const Operand& b, int64_t m, int64_t k, int64_t n,
                         int64_t batch, bool x1_swapped, bool x2_transposed,
                         LoweredNode* lowered) const {
    tl::MatmulProblem problem;
    problem.op = tl::MatmulOp::kTransposeBatchMatMul;
    problem.m = m;
    problem.k = k;
    problem.n = n;
    problem.dtype_a = a.dtype;
    problem.dtype_b = b.dtype;
    problem.dtype_c = a.dtype;
    problem.transpose.perm_x1 =
        x1_swapped ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{0, 1, 2};
    problem.transpose.perm_x2 =
        x2_transposed ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{0, 1, 2};
    problem.transpose.perm_y = {1, 0, 2};
    problem.transpose.batch = batch;
    if (absl::Status valid = tl::ValidateProblem(problem); !valid.ok()) {
      lowered->derivation.notes.push_back(
          absl::StrCat("not TransposeBatchMatMul: ", valid.message()));
      return false;
    }
    lowered->problem = std::move(problem);
    lowered->derivation.notes.push_back(
        absl::StrCat("TransposeBatchMatMul reads x1 through perm_x1 ",
                     ShapeText(lowered->problem.transpose.perm_x1), ", x2 through perm_x2 ",
                     ShapeText(lowered->problem.transpose.perm_x2),
                     " and writes y through perm_y [1, 0, 2]: no Transpose kernel runs"));
    return true;
  }

  // The Transpose [1, 0, 2] (x1, y) or [0, 2, 1] (x2) a 3-D MatMul operand
  // `tensor` comes from, or its only reader is (`output`), when it is one
  // and touches nothing else.
  const onnx::NodeProto* PermutingTranspose(const std::string& tensor, bool output,
                                            const std::vector<int64_t>& perm) const {
    const onnx::NodeProto* node = nullptr;
    if (output) {
      if (!index_.HasSingleReader(tensor)) return nullptr;
      node = &index_.node(index_.Consumers(tensor)[0]);
    } else {
      node = index_.Producer(tensor);
      if (node == nullptr || !index_.HasSingleReader(tensor)) return nullptr;
    }
    if (node->op_type() != "Transpose" || !IsDefaultDomain(*node)) return nullptr;
    const onnx::AttributeProto* attribute = FindAttribute(*node, "perm");
    if (attribute == nullptr ||
        std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end()) != perm) {
      return nullptr;
    }
    return node;
  }

  // A 3-D MatMul whose x1 comes through a Transpose [1, 0, 2] and whose
  // output only a Transpose [1, 0, 2] reads, its x2 maybe through a
  // Transpose [0, 2, 1]: one TransposeBatchMatMul absorbing them all, as MLA
  // exports write the absorbed projections. False when the pattern is not there or
  // the operator refuses it (then the MatMul lowers as usual).
  bool LowerTransposedMatMul(const onnx::NodeProto& node, LoweredNode* lowered) const {
    const onnx::NodeProto* y = PermutingTranspose(node.output(0), true, {1, 0, 2});
    if (y == nullptr) return false;
    const onnx::NodeProto* x1 = PermutingTranspose(node.input(0), false, {1, 0, 2});
    if (x1 == nullptr) return false;
    const onnx::NodeProto* x2 = PermutingTranspose(node.input(1), false, {0, 2, 1});
    Derivation scratch;
    Operand a, b;
    if (DimsOf(node.input(0), &a.dims) || DimsOf(node.input(1), &b.dims) ||
        DtypeOf(node.input(0), &a.dtype, &scratch) || DtypeOf(node.input(1), &b.dtype, &scratch)) {
      return false;
    }
    if (a.dims.size() != 3 || b.dims.size() != 3 || a.dims[0] != b.dims[0] ||
        a.dims[2] != b.dims[1]) {
      return false;
    }
    if (!TryTransposeBatch(a, b, a.dims[1], a.dims[2], b.dims[2], a.dims[0],
                           /*x1_swapped=*/true, x2 != nullptr, lowered)) {
      return false;
    }
    Derivation& derivation = lowered->derivation;
    derivation.compute_dtype_applied = scratch.compute_dtype_applied;
    for (const onnx::NodeProto* absorbed : {x1, x2, y}) {
      if (absorbed != nullptr) derivation.absorbed_transposes.push_back(NodeLabel(*absorbed));
    }
    return true;
  }

  std::optional<Outcome> LowerMatMul(const onnx::NodeProto& node, LoweredNode* lowered) const {
    if (node.input_size() != 2) return Unsupported("MatMul needs two inputs");
    if (LowerTransposedMatMul(node, lowered)) return std::nullopt;
    Derivation& derivation = lowered->derivation;
    Operand a, b;
    if (auto failed = OperandOf(node.input(0), true, &a, &derivation)) return failed;
    if (auto failed = OperandOf(node.input(1), true, &b, &derivation)) return failed;
    std::vector<int64_t> c_dims;
    if (auto failed = ShapeMatMul(a, b, tl::MatmulOp::kMatMulV3, tl::MatmulOp::kBatchMatMulV3,
                                  lowered, &c_dims)) {
      return failed;
    }
    SetDtypes(a, b, &lowered->problem);
    FuseAfter(node.output(0), c_dims, lowered);
    return std::nullopt;
  }

  // m, k, n and the batch of a MatMul (NumPy semantics) of `a` and `b`:
  // `folded` with a 2-D B (A's batch dims folded into m), `batched`
  // otherwise (also when an absorbed transpose of a batched A forbids the
  // fold). `c_dims` is C's shape in the graph.
  std::optional<Outcome> ShapeMatMul(Operand& a, Operand& b, tl::MatmulOp folded,
                                     tl::MatmulOp batched, LoweredNode* lowered,
                                     std::vector<int64_t>* c_dims) const {
    Derivation& derivation = lowered->derivation;
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
    *c_dims = LogicalC(batch_a, batch_b, problem.m, problem.n);
    if (batch_b.empty() && !(a.transposed && !batch_a.empty())) {
      problem.op = folded;
      if (!batch_a.empty()) {
        // Bounded like every dim the shapes keep (at most 2^40 each), so the
        // product is exact; the engine's checks then judge its size.
        __int128 rows = problem.m;
        for (int64_t dim : batch_a) {
          rows *= dim;
          if (rows > std::numeric_limits<int32_t>::max()) break;
        }
        if (rows > std::numeric_limits<int32_t>::max()) {
          return Unsupported(absl::StrCat(
              "A's batch folded into m gives ",
              static_cast<int64_t>(std::min<__int128>(rows, std::numeric_limits<int64_t>::max())),
              " rows, above 2147483647"));
        }
        problem.m = static_cast<int64_t>(rows);
        derivation.folded_batch = true;
      }
    } else {
      problem.op = batched;
      problem.batch.a = std::move(batch_a);
      problem.batch.b = std::move(batch_b);
    }
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
    tl::MatmulProblem& problem = lowered->problem;
    if (auto failed = ShapeGemm(node, a, b, &problem)) return failed;
    const int64_t m = problem.m, n = problem.n;
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

  // Einsum of two operands that is a (batched) matmul once its operands are
  // permuted: every label is a batch label (both operands and the output),
  // an m label (A and the output), an n label (B and the output) or a k
  // label (both operands, summed). The m labels fold into m, the n labels
  // into n, the k labels into k. An operand whose stored order is not
  // [batch, m, k] (A) or [batch, k, n] (B), or their transposes, is
  // permuted by a Transpose kernel first, and so is an output not in
  // [batch, m, n] order; `derivation.notes` says which.
  std::optional<Outcome> LowerEinsum(const onnx::NodeProto& node, LoweredNode* lowered) const {
    const onnx::AttributeProto* attribute = FindAttribute(node, "equation");
    std::string equation = attribute == nullptr ? "" : attribute->s();
    equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
    if (node.input_size() != 2) {
      return Unsupported(absl::StrCat("Einsum '", equation, "' has ", node.input_size(),
                                      " operands: it is not a batch matmul (two operands)"));
    }
    Derivation& derivation = lowered->derivation;
    if (TraceDequantized(index_, node.input(0)) || TraceDequantized(index_, node.input(1))) {
      return Unsupported(absl::StrCat("Einsum '", equation,
                                      "' reads a dequantized operand; quantized Einsum is not "
                                      "lowered (write it as MatMul to reach QuantBatchMatmulV3)"));
    }
    Operand a, b;
    if (auto failed = OperandOf(node.input(0), false, &a, &derivation)) return failed;
    if (auto failed = OperandOf(node.input(1), false, &b, &derivation)) return failed;
    absl::StatusOr<EinsumEquation> parsed = ParseEinsum(equation, {a.dims.size(), b.dims.size()});
    if (!parsed.ok()) return Unsupported(std::string(parsed.status().message()));
    const std::string& la = parsed->inputs[0];
    const std::string& lb = parsed->inputs[1];
    const std::string& out = parsed->output;
    auto has = [](const std::string& labels, char c) {
      return labels.find(c) != std::string::npos;
    };
    auto label_text = [](char c) {
      return c >= '0' && c <= '9' ? std::string("...") : std::string(1, c);
    };
    std::string batch, m_labels, n_labels, k_labels;
    for (const std::string* labels : {&la, &lb}) {
      for (char c : *labels) {
        if (std::count(labels->begin(), labels->end(), c) != 1) {
          return Unsupported(absl::StrCat("Einsum '", equation, "': label '", label_text(c),
                                          "' repeats in one operand (a diagonal), not a matmul"));
        }
        if (!has(out, c) && !(has(la, c) && has(lb, c))) {
          return Unsupported(absl::StrCat("Einsum '", equation, "': label '", label_text(c),
                                          "' is summed over one operand alone, not a matmul"));
        }
      }
    }
    for (char c : out) {
      if (has(la, c) && has(lb, c)) {
        batch.push_back(c);
      } else if (has(la, c)) {
        m_labels.push_back(c);
      } else {
        n_labels.push_back(c);
      }
    }
    for (char c : la) {
      if (has(lb, c) && !has(out, c)) k_labels.push_back(c);
    }
    auto size_in = [](const std::string& labels, const std::vector<int64_t>& dims, char c) {
      return dims[labels.find(c)];
    };
    int64_t m = 1, n = 1, k = 1;
    for (char c : m_labels) m = SatMul(m, size_in(la, a.dims, c));
    for (char c : n_labels) n = SatMul(n, size_in(lb, b.dims, c));
    for (char c : k_labels) {
      if (size_in(la, a.dims, c) != size_in(lb, b.dims, c)) {
        return Unsupported(absl::StrCat("Einsum '", equation,
                                        "': the operands disagree on the "
                                        "size of summed label '",
                                        label_text(c), "'"));
      }
      k = SatMul(k, size_in(la, a.dims, c));
    }
    std::vector<int64_t> batch_a, batch_b;
    for (char c : batch) {
      const int64_t x = size_in(la, a.dims, c), y = size_in(lb, b.dims, c);
      if (x != y && x != 1 && y != 1) {
        return Unsupported(absl::StrCat("Einsum '", equation, "': batch label '", label_text(c),
                                        "' is ", x, " in A and ", y, " in B"));
      }
      batch_a.push_back(x);
      batch_b.push_back(y);
    }
    if (auto failed = CheckBatchRank(batch_a, batch_b)) return failed;
    // MLA's absorbed projections: x1 [m, batch, k] (or [batch, m, k]) and y
    // written [m, batch, n] around one batch label are TransposeBatchMatMul's.
    const bool x1_swapped = la == m_labels + batch + k_labels;
    if (batch.size() == 1 && !m_labels.empty() && !k_labels.empty() && !n_labels.empty() &&
        out == m_labels + batch + n_labels && batch_a == batch_b &&
        (x1_swapped || la == batch + m_labels + k_labels) &&
        (lb == batch + k_labels + n_labels || lb == batch + n_labels + k_labels) &&
        TryTransposeBatch(a, b, m, k, n, batch_a[0], x1_swapped, lb == batch + n_labels + k_labels,
                          lowered)) {
      derivation.notes.push_back(absl::StrCat("Einsum '", equation, "': batch [",
                                              label_text(batch[0]), "], m = [", m_labels,
                                              "], k = [", k_labels, "], n = [", n_labels, "]"));
      return std::nullopt;
    }
    // The stored orders that need no Transpose kernel.
    const bool plain_a = la == batch + m_labels + k_labels;
    a.transposed = !plain_a && la == batch + k_labels + m_labels;
    const bool plain_b = lb == batch + k_labels + n_labels;
    b.transposed = !plain_b && lb == batch + n_labels + k_labels;
    const bool permuted_c = out != batch + m_labels + n_labels;
    auto view = [&](const std::string& labels) {
      std::string text;
      for (char c : labels) text += label_text(c);
      return text;
    };
    const std::string shape =
        absl::StrCat("batch [", view(batch), "], m = [", view(m_labels), "], k = [", view(k_labels),
                     "], n = [", view(n_labels), "]");
    derivation.notes.push_back(absl::StrCat("Einsum '", equation, "': ", shape));
    if (!plain_a && !a.transposed) {
      const bool tbmm = !batch.empty() && la == m_labels + batch + k_labels;
      derivation.notes.push_back(absl::StrCat(
          "A [", view(la), "] is read as [", view(batch + m_labels + k_labels),
          "]: a Transpose kernel runs first",
          tbmm ? " (TransposeBatchMatMul would absorb this layout; it refused the problem, see "
                 "the note above)"
               : ""));
    }
    if (!plain_b && !b.transposed) {
      derivation.notes.push_back(absl::StrCat("B [", view(lb), "] is read as [",
                                              view(batch + k_labels + n_labels),
                                              "]: a Transpose kernel runs first"));
    }
    if (permuted_c) {
      derivation.notes.push_back(absl::StrCat("C is made as [", view(batch + m_labels + n_labels),
                                              "] and a Transpose kernel writes [", view(out), "]"));
    }
    tl::MatmulProblem& problem = lowered->problem;
    problem.m = m;
    problem.k = k;
    problem.n = n;
    SetDtypes(a, b, &problem);
    problem.op = batch.empty() ? tl::MatmulOp::kMatMulV3 : tl::MatmulOp::kBatchMatMulV3;
    const std::vector<int64_t> c_dims = LogicalC(batch_a, batch_b, m, n);
    problem.batch.a = std::move(batch_a);
    problem.batch.b = std::move(batch_b);
    if (m_labels.size() > 1 || n_labels.size() > 1 || k_labels.size() > 1) {
      derivation.folded_batch = m_labels.size() > 1;
    }
    if (!permuted_c && m_labels.size() <= 1 && n_labels.size() <= 1) {
      FuseAfter(node.output(0), c_dims, lowered);
    }
    return std::nullopt;
  }

  static int64_t SatMul(int64_t x, int64_t y) {
    const __int128 product = static_cast<__int128>(x) * y;
    return product > (int64_t{1} << 62) ? (int64_t{1} << 62) : static_cast<int64_t>(product);
  }

  // ---------------------------------------------------------------------
  // Quantized matmuls (quant_lowering.h reads the graph; these build the
  // CANN problems).

  static std::string OnnxTypeName(int32_t elem) {
    if (elem == 0) return "an unknown type";
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem));
  }

  static std::string Granularity(const ScaleFacts& scale) {
    if (!scale.known) return "a scale of unknown shape";
    if (!scale.per_axis) return "a per-tensor scale";
    return absl::StrCat("a per-axis scale ", ShapeText(scale.dims));
  }

  // QuantBatchMatmulV3 takes symmetric int8: refuses a known non-zero zero
  // point (CANN has no input offset) and codes other than int8.
  static std::optional<Outcome> CheckSymmetricInt8(const std::string& role,
                                                   const std::string& producer,
                                                   const ZeroPoint& zero, int32_t codes_type) {
    if (zero.kind == ZeroPointKind::kNonZero) {
      return Unsupported(absl::StrCat("zero point '", zero.tensor, "' of ", role, " (", producer,
                                      ") is ", zero.value,
                                      ": CANN's QuantBatchMatmulV3 takes symmetric int8 and has "
                                      "no input offset"));
    }
    if (codes_type != onnx::TensorProto_DataType_INT8) {
      return Unsupported(absl::StrCat(role, " (", producer, ") has ", OnnxTypeName(codes_type),
                                      " codes: CANN's QuantBatchMatmulV3 takes int8 (symmetric)"));
    }
    return std::nullopt;
  }

  // What became of ONNX Runtime's dynamic activation quantization.
  static std::string DynamicQuantNote(const onnx::NodeProto& dynamic) {
    return absl::StrCat("DynamicQuantizeLinear '", NodeLabel(dynamic),
                        "' (uint8, asymmetric, one scale per tensor) runs as CANN's DynamicQuant: "
                        "int8, symmetric, one scale per token (quant.pertoken_scale [m])");
  }

  static void NoteUnknownZeroPoint(const ZeroPoint& zero, Derivation* derivation) {
    if (zero.kind != ZeroPointKind::kUnknown) return;
    derivation->notes.push_back(absl::StrCat(
        "zero point '", zero.tensor,
        "' has no values in the model (a graph input, or its data stripped): taken as 0, as "
        "symmetric int8 exporters write it"));
  }

  // y's float dtype from the graph's float result `elem`: float32 runs in
  // the request's compute dtype, else in float16, since QuantBatchMatmulV3
  // has no float32 output for int8 inputs.
  std::optional<Outcome> QuantOutputDtype(int32_t elem, tl::DataType* y,
                                          Derivation* derivation) const {
    if (elem == 0) return Unresolved("no dtype is known for the quantized matmul's result");
    std::optional<tl::DataType> run = FloatRunDtype(elem, derivation);
    if (!run.has_value()) {
      return Unsupported(absl::StrCat("the quantized matmul's result is ", OnnxTypeName(elem),
                                      "; QuantBatchMatmulV3 writes int8, float16 or bfloat16"));
    }
    *y = *run;
    if (*run == tl::DataType::kFloat32) {
      *y = tl::DataType::kFloat16;
      derivation->notes.push_back(
          "y is float32 in the graph; QuantBatchMatmulV3 has no float32 output for int8 "
          "inputs, so y is float16 (GraphTilingRequest.compute_dtype chooses bfloat16)");
    }
    return std::nullopt;
  }

  // The bias Add after a quantized matmul's float result `tensor`: an Add
  // of a [n] tensor, its only reader. Returns the tensor after it.
  std::string QuantBiasAfter(const std::string& tensor, LoweredNode* lowered,
                             bool* int32_codes) const {
    *int32_codes = false;
    if (!index_.HasSingleReader(tensor)) return tensor;
    const onnx::NodeProto& reader = index_.node(index_.Consumers(tensor)[0]);
    if (reader.op_type() != "Add" || !IsDefaultDomain(reader) || reader.input_size() != 2 ||
        reader.input(0) == reader.input(1)) {
      return tensor;
    }
    const std::string& other = reader.input(0) == tensor ? reader.input(1) : reader.input(0);
    std::vector<int64_t> dims;
    if (DimsOf(other, &dims).has_value() || dims != std::vector<int64_t>{lowered->problem.n}) {
      return tensor;
    }
    if (std::optional<DequantizedOperand> bias = TraceDequantized(index_, other)) {
      *int32_codes = bias->codes_type == onnx::TensorProto_DataType_INT32;
    }
    lowered->problem.has_bias = true;
    lowered->derivation.fused_bias = NodeLabel(reader);
    return reader.output(0);
  }

  // Fills the quant sub-message once y, the scale's length and the per-token
  // choice are known, after CANN's dtype rules (quant_parse.cc): a per-token
  // scale takes float32 scales; otherwise an int8 or float16 y takes the
  // fixpipe's packed uint64 scale, a bfloat16 y a float32 one. A bias with a
  // packed scale is int32 (the graph pass divides a float bias by the
  // folded scale, as ATC's quantization does).
  void FillQuant(bool pertoken, bool per_channel, bool bias_int32_codes, tl::MatmulProblem* problem,
                 Derivation* derivation) const {
    tl::QuantInputs& quant = problem->quant;
    quant.scale.present = true;
    const bool packed = !pertoken && (problem->dtype_c == tl::DataType::kInt8 ||
                                      problem->dtype_c == tl::DataType::kFloat16);
    quant.scale.dtype = packed ? tl::DataType::kUint64 : tl::DataType::kFloat32;
    quant.scale.shape = {per_channel ? problem->n : 1};
    if (pertoken) {
      quant.pertoken.present = true;
      quant.pertoken.dtype = tl::DataType::kFloat32;
      quant.pertoken.shape = {problem->m};
    }
    if (problem->has_bias) {
      if (packed || bias_int32_codes) {
        problem->dtype_bias = tl::DataType::kInt32;
        if (!bias_int32_codes) {
          derivation->notes.push_back(
              "the float bias is quantized to int32 (bias / scale), as the packed scale needs");
        }
      } else {
        problem->dtype_bias = tl::DataType::kFloat32;
      }
    }
  }

  // A MatMul or Gemm with a DequantizeLinear behind an operand.
  std::optional<Outcome> LowerDequantized(const onnx::NodeProto& node,
                                          const std::optional<DequantizedOperand>& qa,
                                          const std::optional<DequantizedOperand>& qb,
                                          LoweredNode* lowered) const {
    const bool gemm = node.op_type() == "Gemm";
    Derivation& derivation = lowered->derivation;
    if (!qa.has_value()) return LowerWeightOnly(node, *qb, lowered);
    if (!qb.has_value()) {
      return Unsupported(absl::StrCat("A is dequantized (DequantizeLinear '", qa->dequantize_name,
                                      "') but B is a float tensor: CANN's QuantBatchMatmulV3 "
                                      "takes quantized x1 and x2"));
    }
    // ONNX Runtime's QDQ form of dynamic quantization: the activation's codes
    // come from a DynamicQuantizeLinear, which runs as CANN's per-token
    // DynamicQuant (as in LowerMatMulInteger).
    const onnx::NodeProto* dynamic_a = TraceDynamicQuantize(index_, qa->codes);
    if (dynamic_a == nullptr) {
      if (auto failed = CheckSymmetricInt8("A", "DequantizeLinear '" + qa->dequantize_name + "'",
                                           qa->zero_point, qa->codes_type)) {
        return failed;
      }
    }
    if (auto failed = CheckSymmetricInt8("B", "DequantizeLinear '" + qb->dequantize_name + "'",
                                         qb->zero_point, qb->codes_type)) {
      return failed;
    }
    const bool trans_a_flag = gemm && IntAttribute(node, "transA", 0) != 0;
    const bool trans_b_flag = gemm && IntAttribute(node, "transB", 0) != 0;
    std::string out = node.output(0);
    Operand a, b;
    if (auto failed = OperandOf(node.input(0), true, &a, &derivation)) return failed;
    if (auto failed = OperandOf(node.input(1), true, &b, &derivation)) return failed;
    derivation.compute_dtype_applied = false;
    tl::MatmulProblem& problem = lowered->problem;
    std::vector<int64_t> c_dims;
    if (gemm) {
      if (FloatAttribute(node, "alpha", 1.0f) != 1.0f) {
        return Unsupported("Gemm with alpha other than 1: QuantBatchMatmulV3 has no scale factor");
      }
      if (auto failed = ShapeGemm(node, a, b, &problem)) return failed;
      problem.op = tl::MatmulOp::kQuantBatchMatmulV3;
    } else if (auto failed = ShapeMatMul(a, b, tl::MatmulOp::kQuantBatchMatmulV3,
                                         tl::MatmulOp::kQuantBatchMatmulV3, lowered, &c_dims)) {
      return failed;
    }
    problem.dtype_a = tl::DataType::kInt8;
    problem.dtype_b = tl::DataType::kInt8;
    problem.trans_a = a.transposed;
    problem.trans_b = b.transposed;
    // A: per-tensor, or per-row (its axis m) as a per-token scale.
    bool pertoken = dynamic_a != nullptr;
    if (pertoken) {
      derivation.notes.push_back(DynamicQuantNote(*dynamic_a));
    } else if (qa->scale.per_axis) {
      const int64_t m_axis = trans_a_flag ? -1 : -2;
      if (!qa->operand_axis.has_value() || *qa->operand_axis != m_axis ||
          qa->scale.length != problem.m) {
        return Unsupported(absl::StrCat(
            "A's ", Granularity(qa->scale), " (DequantizeLinear '", qa->dequantize_name,
            "') is not per-tensor or per-row: QuantBatchMatmulV3's x1 scale is per-tensor or "
            "per-token"));
      }
      pertoken = true;
    }
    // B: per-tensor, or per-channel along n.
    bool per_channel = false;
    if (qb->scale.per_axis) {
      const int64_t n_axis = trans_b_flag ? -2 : -1;
      if (!qb->operand_axis.has_value()) {
        return Unsupported(absl::StrCat("B's ", Granularity(qb->scale), " (DequantizeLinear '",
                                        qb->dequantize_name, "') has an axis that ",
                                        qb->axis_lost_at, " does not keep"));
      }
      if (*qb->operand_axis != n_axis || qb->scale.length != problem.n) {
        return Unsupported(absl::StrCat(
            "B's ", Granularity(qb->scale), " (DequantizeLinear '", qb->dequantize_name,
            "') is along k, not n: QuantBatchMatmulV3's x2 scale is per-tensor or per-channel"));
      }
      per_channel = true;
    }
    NoteUnknownZeroPoint(qa->zero_point, &derivation);
    NoteUnknownZeroPoint(qb->zero_point, &derivation);
    // Gemm's C of [n] is the bias; another C stays a separate Add.
    bool bias_int32 = false;
    if (gemm && node.input_size() > 2 && !node.input(2).empty() &&
        FloatAttribute(node, "beta", 1.0f) != 0.0f) {
      std::vector<int64_t> dims;
      if (auto failed = DimsOf(node.input(2), &dims)) return failed;
      const bool row = (dims.size() == 1 && dims[0] == problem.n) ||
                       (dims.size() == 2 && dims[0] == 1 && dims[1] == problem.n);
      if (row && FloatAttribute(node, "beta", 1.0f) == 1.0f) {
        problem.has_bias = true;
        derivation.fused_bias = node.input(2);
        if (std::optional<DequantizedOperand> c = TraceDequantized(index_, node.input(2))) {
          bias_int32 = c->codes_type == onnx::TensorProto_DataType_INT32;
        }
      } else {
        derivation.notes.push_back(
            absl::StrCat("C ", ShapeText(dims), " is not a bias row; a separate Add adds it"));
      }
    } else {
      out = QuantBiasAfter(out, lowered, &bias_int32);
    }
    // y: int8 when a QuantizeLinear reads the result alone, else float.
    if (const onnx::NodeProto* quantize = TrailingQuantize(index_, out)) {
      const ZeroPoint zero = ReadZeroPoint(index_, *quantize, 2);
      const int32_t y_type =
          zero.tensor.empty() ? onnx::TensorProto_DataType_UINT8 : InfoType(zero.tensor);
      if (y_type != onnx::TensorProto_DataType_INT8) {
        return Unsupported(absl::StrCat("the result is quantized to ", OnnxTypeName(y_type),
                                        " (QuantizeLinear '", NodeLabel(*quantize),
                                        "'): QuantBatchMatmulV3 writes int8"));
      }
      if (pertoken) {
        return Unsupported(absl::StrCat(
            "a per-token x1 scale with an int8 result (QuantizeLinear '", NodeLabel(*quantize),
            "'): QuantBatchMatmulV3 takes a per-token scale with a "
            "float16 or bfloat16 output only"));
      }
      const ScaleFacts y_scale = ReadScale(index_, *quantize, 1);
      if (y_scale.per_axis) {
        if (y_scale.length != problem.n) {
          return Unsupported(absl::StrCat("the output QuantizeLinear '", NodeLabel(*quantize),
                                          "' has ", Granularity(y_scale),
                                          ", not one per column of y"));
        }
        per_channel = true;
      }
      problem.dtype_c = tl::DataType::kInt8;
      if (zero.kind == ZeroPointKind::kNonZero) {
        problem.quant.offset = {true, tl::DataType::kFloat32, {1}};
        derivation.notes.push_back(
            absl::StrCat("y's zero point '", zero.tensor, "' (", zero.value, ") is quant.offset"));
      }
      NoteUnknownZeroPoint(zero, &derivation);
      derivation.notes.push_back(absl::StrCat("y is int8: QuantizeLinear '", NodeLabel(*quantize),
                                              "' folded into the scale"));
    } else {
      if (auto failed = QuantOutputDtype(InfoType(out), &problem.dtype_c, &derivation)) {
        return failed;
      }
    }
    FillQuant(pertoken, per_channel, bias_int32, &problem, &derivation);
    derivation.notes.push_back(
        absl::StrCat("x1 int8 codes '", qa->codes, "' (",
                     qa->quantize != nullptr
                         ? absl::StrCat("QuantizeLinear '", NodeLabel(*qa->quantize), "' -> ")
                         : std::string(),
                     "DequantizeLinear '", qa->dequantize_name, "'), x2 int8 codes '", qb->codes,
                     "' (DequantizeLinear '", qb->dequantize_name, "'); quant.scale = ",
                     pertoken ? "s_w" : "s_x * s_w", per_channel ? " per channel" : " per tensor",
                     pertoken ? ", pertoken_scale = s_x per row" : ""));
    return std::nullopt;
  }

  int32_t InfoType(const std::string& tensor) const {
    const TensorFacts* info = index_.Info(tensor);
    return info == nullptr ? 0 : info->elem_type;
  }

  // Gemm's m, k, n from its 2-D operands and flags; the stored operand is
  // the transpose's input when one was absorbed, so the flag and the
  // absorbed transpose cancel.
  std::optional<Outcome> ShapeGemm(const onnx::NodeProto& node, Operand& a, Operand& b,
                                   tl::MatmulProblem* problem) const {
    if (a.dims.size() != 2 || b.dims.size() != 2) return Unsupported("Gemm needs 2-D A and B");
    const bool flip_a = IntAttribute(node, "transA", 0) != 0;
    const bool flip_b = IntAttribute(node, "transB", 0) != 0;
    a.transposed = a.transposed != flip_a;
    b.transposed = b.transposed != flip_b;
    const int64_t k = flip_a ? a.dims[0] : a.dims[1];
    const int64_t kb = flip_b ? b.dims[1] : b.dims[0];
    if (k != kb) {
      return Unsupported(absl::StrCat("Gemm's A ", ShapeText(a.dims), " and B ", ShapeText(b.dims),
                                      " disagree on k"));
    }
    problem->op = tl::MatmulOp::kMatMulV3;
    problem->m = flip_a ? a.dims[1] : a.dims[0];
    problem->k = k;
    problem->n = flip_b ? b.dims[0] : b.dims[1];
    return std::nullopt;
  }

  // A QuantBatchMatmulV3 of the int8 tensors `a` and `b` as MatMul reads
  // them (the integer matmuls' operands: no transpose to absorb).
  std::optional<Outcome> ShapeInt8MatMul(const std::string& a_input, const std::string& b_input,
                                         LoweredNode* lowered) const {
    Operand a, b;
    if (auto failed = DimsOf(a_input, &a.dims)) return failed;
    if (auto failed = DimsOf(b_input, &b.dims)) return failed;
    std::vector<int64_t> c_dims;
    if (auto failed = ShapeMatMul(a, b, tl::MatmulOp::kQuantBatchMatmulV3,
                                  tl::MatmulOp::kQuantBatchMatmulV3, lowered, &c_dims)) {
      return failed;
    }
    lowered->problem.dtype_a = tl::DataType::kInt8;
    lowered->problem.dtype_b = tl::DataType::kInt8;
    return std::nullopt;
  }

  // ONNX Runtime's dynamic form: DynamicQuantizeLinear -> MatMulInteger ->
  // Cast -> Mul(x_scale * w_scale). On the 950 the activation is quantized
  // by CANN's DynamicQuant, int8 symmetric per token, and the matmul is
  // QuantBatchMatmulV3 with that per-token scale.
  std::optional<Outcome> LowerMatMulInteger(const onnx::NodeProto& node,
                                            LoweredNode* lowered) const {
    if (node.input_size() < 2) return Unsupported("MatMulInteger needs two inputs");
    Derivation& derivation = lowered->derivation;
    const ZeroPoint zero_a = ReadZeroPoint(index_, node, 2);
    const ZeroPoint zero_b = ReadZeroPoint(index_, node, 3);
    const onnx::NodeProto* dynamic = TraceDynamicQuantize(index_, node.input(0));
    const std::string self = absl::StrCat("MatMulInteger '", NodeLabel(node), "'");
    if (auto failed = CheckSymmetricInt8("B", self, zero_b, InfoType(node.input(1)))) {
      return failed;
    }
    if (dynamic == nullptr) {
      if (auto failed = CheckSymmetricInt8("A", self, zero_a, InfoType(node.input(0)))) {
        return failed;
      }
    }
    std::optional<IntegerDequant> dequant = FindIntegerDequant(index_, node.output(0));
    if (!dequant.has_value()) {
      return Unsupported(
          absl::StrCat(self,
                       "'s int32 result is used as it is (no Cast -> Mul by a scale after it): "
                       "QuantBatchMatmulV3 dequantizes its result and needs that scale"));
    }
    if (auto failed = ShapeInt8MatMul(node.input(0), node.input(1), lowered)) return failed;
    tl::MatmulProblem& problem = lowered->problem;
    std::vector<int64_t> scale_dims;
    if (auto failed = DimsOf(dequant->scale, &scale_dims)) return failed;
    int64_t scale_length = 1;
    for (int64_t dim : scale_dims) scale_length = SatMul(scale_length, dim);
    if (scale_length != 1 && (scale_length != problem.n || scale_dims.back() != problem.n)) {
      return Unsupported(absl::StrCat("the dequantization scale '", dequant->scale, "' is ",
                                      ShapeText(scale_dims),
                                      ": QuantBatchMatmulV3 takes one per "
                                      "tensor or one per column of y"));
    }
    if (auto failed = QuantOutputDtype(dequant->output_type, &problem.dtype_c, &derivation)) {
      return failed;
    }
    bool bias_int32 = false;
    QuantBiasAfter(dequant->output, lowered, &bias_int32);
    NoteUnknownZeroPoint(zero_b, &derivation);
    const bool pertoken = dynamic != nullptr;
    if (!pertoken) NoteUnknownZeroPoint(zero_a, &derivation);
    FillQuant(pertoken, scale_length != 1, bias_int32, &problem, &derivation);
    if (pertoken) derivation.notes.push_back(DynamicQuantNote(*dynamic));
    derivation.notes.push_back(absl::StrCat("Cast '", NodeLabel(*dequant->cast), "' and Mul '",
                                            NodeLabel(*dequant->mul),
                                            "' are the dequantization (quant.scale)"));
    return std::nullopt;
  }

  // QLinearMatMul: int8 in, int8 out, the three scales folded into one.
  std::optional<Outcome> LowerQLinearMatMul(const onnx::NodeProto& node,
                                            LoweredNode* lowered) const {
    if (node.input_size() < 8) return Unsupported("QLinearMatMul needs eight inputs");
    Derivation& derivation = lowered->derivation;
    const std::string self = absl::StrCat("QLinearMatMul '", NodeLabel(node), "'");
    const ZeroPoint zero_a = ReadZeroPoint(index_, node, 2);
    const ZeroPoint zero_b = ReadZeroPoint(index_, node, 5);
    const ZeroPoint zero_y = ReadZeroPoint(index_, node, 7);
    if (auto failed = CheckSymmetricInt8("A", self, zero_a, InfoType(node.input(0)))) return failed;
    if (auto failed = CheckSymmetricInt8("B", self, zero_b, InfoType(node.input(3)))) return failed;
    if (InfoType(node.input(7)) != onnx::TensorProto_DataType_INT8) {
      return Unsupported(absl::StrCat(self, " writes ", OnnxTypeName(InfoType(node.input(7))),
                                      ": QuantBatchMatmulV3 writes int8"));
    }
    const ScaleFacts scale_a = ReadScale(index_, node, 1);
    if (scale_a.per_axis) {
      return Unsupported(absl::StrCat(self, "'s a_scale is ", Granularity(scale_a),
                                      ": a per-row x1 scale needs a float output in "
                                      "QuantBatchMatmulV3, and this one is int8"));
    }
    if (auto failed = ShapeInt8MatMul(node.input(0), node.input(3), lowered)) return failed;
    tl::MatmulProblem& problem = lowered->problem;
    problem.dtype_c = tl::DataType::kInt8;
    const ScaleFacts scale_b = ReadScale(index_, node, 4);
    const ScaleFacts scale_y = ReadScale(index_, node, 6);
    const bool per_channel = scale_b.per_axis || scale_y.per_axis;
    if ((scale_b.per_axis && scale_b.length != problem.n) ||
        (scale_y.per_axis && scale_y.length != problem.n)) {
      return Unsupported(absl::StrCat(self, "'s b_scale ", ShapeText(scale_b.dims), " or y_scale ",
                                      ShapeText(scale_y.dims),
                                      " is neither per tensor nor per column"));
    }
    if (zero_y.kind == ZeroPointKind::kNonZero) {
      problem.quant.offset = {true, tl::DataType::kFloat32, {1}};
      derivation.notes.push_back(absl::StrCat("y's zero point '", zero_y.tensor, "' (",
                                              zero_y.value, ") is quant.offset"));
    }
    NoteUnknownZeroPoint(zero_a, &derivation);
    NoteUnknownZeroPoint(zero_b, &derivation);
    NoteUnknownZeroPoint(zero_y, &derivation);
    FillQuant(false, per_channel, false, &problem, &derivation);
    derivation.notes.push_back("quant.scale = a_scale * b_scale / y_scale (packed uint64)");
    return std::nullopt;
  }

  // x's dtype for WeightQuantBatchMatmulV2 (float16 or bfloat16) from the
  // activation `tensor`: float32 runs in the compute dtype, or float16.
  std::optional<Outcome> WeightQuantActivation(const std::string& tensor, tl::DataType* dtype,
                                               Derivation* derivation) const {
    if (auto failed = DtypeOf(tensor, dtype, derivation)) return failed;
    if (*dtype == tl::DataType::kFloat32) {
      *dtype = tl::DataType::kFloat16;
      derivation->notes.push_back(
          "x is float32 in the graph; WeightQuantBatchMatmulV2 takes float16 or bfloat16 x, so "
          "it runs in float16 (GraphTilingRequest.compute_dtype chooses bfloat16)");
    }
    return std::nullopt;
  }

  // The weight-only form: a float activation times a DequantizeLinear of an
  // int8 weight, in any of its layouts (MatMul of [k, n], Transpose ->
  // MatMul of [n, k], Gemm transB), becomes WeightQuantBatchMatmulV2 (A16W8):
  // antiquant_scale per tensor [1] or per channel [n] in x's dtype, a
  // non-zero weight zero point z as antiquant_offset = -z (CANN dequantizes
  // (w + offset) * scale).
  std::optional<Outcome> LowerWeightOnly(const onnx::NodeProto& node, const DequantizedOperand& qb,
                                         LoweredNode* lowered) const {
    const bool gemm = node.op_type() == "Gemm";
    Derivation& derivation = lowered->derivation;
    const std::string producer = absl::StrCat("DequantizeLinear '", qb.dequantize_name, "'");
    if (qb.codes_type != onnx::TensorProto_DataType_INT8) {
      return Unsupported(absl::StrCat(
          "a weight-only quantized matmul whose weight (", producer, ") has ",
          OnnxTypeName(qb.codes_type),
          " codes: CANN's WeightQuantBatchMatmulV2 takes int8, int4, float8, hifloat8 or float4 "
          "weights"));
    }
    Operand a, b;
    if (auto failed = OperandOf(node.input(0), true, &a, &derivation)) return failed;
    if (auto failed = OperandOf(node.input(1), true, &b, &derivation)) return failed;
    tl::MatmulProblem& problem = lowered->problem;
    if (auto failed = WeightQuantActivation(node.input(0), &a.dtype, &derivation)) return failed;
    if (gemm) {
      if (FloatAttribute(node, "alpha", 1.0f) != 1.0f) {
        return Unsupported(
            "Gemm with alpha other than 1: WeightQuantBatchMatmulV2 has no scale factor");
      }
      if (auto failed = ShapeGemm(node, a, b, &problem)) return failed;
    } else {
      std::vector<int64_t> c_dims;
      if (auto failed = ShapeMatMul(a, b, tl::MatmulOp::kWeightQuantBatchMatmulV2,
                                    tl::MatmulOp::kBatchMatMulV3, lowered, &c_dims)) {
        return failed;
      }
      if (problem.op != tl::MatmulOp::kWeightQuantBatchMatmulV2) {
        return Unsupported(
            absl::StrCat("a weight-only quantized batched matmul (", producer,
                         "): CANN's WeightQuantBatchMatmulV2 takes a 2-D x and weight"));
      }
    }
    problem.op = tl::MatmulOp::kWeightQuantBatchMatmulV2;
    problem.dtype_a = a.dtype;
    problem.dtype_b = tl::DataType::kInt8;
    problem.dtype_c = a.dtype;
    problem.trans_a = a.transposed;
    problem.trans_b = b.transposed;
    tl::QuantInputs& quant = problem.quant;
    std::vector<int64_t> scale_shape = {1};
    if (qb.scale.per_axis) {
      const int64_t n_axis = gemm && IntAttribute(node, "transB", 0) != 0 ? -2 : -1;
      if (!qb.operand_axis.has_value()) {
        return Unsupported(absl::StrCat("B's ", Granularity(qb.scale), " (", producer,
                                        ") has an axis that ", qb.axis_lost_at, " does not keep"));
      }
      if (*qb.operand_axis != n_axis || qb.scale.length != problem.n) {
        return Unsupported(absl::StrCat("B's ", Granularity(qb.scale), " (", producer,
                                        ") is along k, not n: WeightQuantBatchMatmulV2's "
                                        "antiquant scale is per tensor, per channel or per "
                                        "group"));
      }
      scale_shape = {problem.n};
    }
    quant.antiquant_scale = {true, a.dtype, scale_shape};
    if (qb.zero_point.kind == ZeroPointKind::kNonZero) {
      quant.antiquant_offset = {true, a.dtype, scale_shape};
      derivation.notes.push_back(absl::StrCat("the weight's zero point '", qb.zero_point.tensor,
                                              "' is quant.antiquant_offset (its negation)"));
    }
    NoteUnknownZeroPoint(qb.zero_point, &derivation);
    if (gemm && node.input_size() > 2 && !node.input(2).empty() &&
        FloatAttribute(node, "beta", 1.0f) != 0.0f) {
      std::vector<int64_t> dims;
      if (auto failed = DimsOf(node.input(2), &dims)) return failed;
      const bool row = (dims.size() == 1 && dims[0] == problem.n) ||
                       (dims.size() == 2 && dims[0] == 1 && dims[1] == problem.n);
      if (row && FloatAttribute(node, "beta", 1.0f) == 1.0f) {
        problem.has_bias = true;
        derivation.fused_bias = node.input(2);
      } else {
        derivation.notes.push_back(
            absl::StrCat("C ", ShapeText(dims), " is not a bias row; a separate Add adds it"));
      }
    } else if (!gemm) {
      bool int32_codes = false;
      QuantBiasAfter(node.output(0), lowered, &int32_codes);
    }
    if (problem.has_bias) problem.dtype_bias = a.dtype;
    derivation.notes.push_back(absl::StrCat(
        "x ", std::string(tl::DataTypeName(a.dtype)), ", weight int8 codes '", qb.codes, "' (",
        producer, "): A16W8 ", scale_shape.front() == 1 ? "per tensor" : "per channel"));
    return std::nullopt;
  }

  // ONNX Runtime's MatMulNBits: a float activation times a per-group
  // weight of `bits` unsigned bits [N, K] (blocks of block_size along K,
  // zero point 2^(bits-1) unless zero_points are given), which is CANN's
  // WeightQuantBatchMatmulV2 with a transposed int4 (or int8) weight and a
  // per-group antiquant scale [n, ceil(k / g)]: the unsigned codes less
  // 2^(bits-1) are the signed ones, and given zero points become
  // antiquant_offset.
  std::optional<Outcome> LowerMatMulNBits(const onnx::NodeProto& node, LoweredNode* lowered) const {
    const NBitsFacts facts = ReadMatMulNBits(node);
    const std::string self = absl::StrCat("MatMulNBits (", kMicrosoftDomain, ")");
    if (facts.bits != 4 && facts.bits != 8) {
      return Unsupported(absl::StrCat(self, " with ", facts.bits,
                                      "-bit weights: CANN's WeightQuantBatchMatmulV2 takes int4 "
                                      "and int8 weights"));
    }
    if (facts.has_g_idx) {
      return Unsupported(absl::StrCat(self,
                                      " with g_idx (act-order groups): CANN's "
                                      "WeightQuantBatchMatmulV2 takes contiguous groups"));
    }
    if (facts.k <= 0 || facts.n <= 0 || facts.block_size <= 0) {
      return Unsupported(absl::StrCat(self, " needs positive K, N and block_size attributes"));
    }
    Derivation& derivation = lowered->derivation;
    Operand a;
    if (auto failed = DimsOf(node.input(0), &a.dims)) return failed;
    if (a.dims.empty() || a.dims.back() != facts.k) {
      return Unsupported(
          absl::StrCat(self, ": A ", ShapeText(a.dims), " does not end in K ", facts.k));
    }
    if (auto failed = WeightQuantActivation(node.input(0), &a.dtype, &derivation)) return failed;
    tl::MatmulProblem& problem = lowered->problem;
    problem.op = tl::MatmulOp::kWeightQuantBatchMatmulV2;
    problem.k = facts.k;
    problem.n = facts.n;
    __int128 rows = 1;
    for (size_t i = 0; i + 1 < a.dims.size(); ++i) {
      rows = std::min<__int128>(rows * a.dims[i], int64_t{1} << 62);
    }
    problem.m = static_cast<int64_t>(rows);
    derivation.folded_batch = a.dims.size() > 2;
    problem.dtype_a = a.dtype;
    problem.dtype_b = facts.bits == 4 ? tl::DataType::kInt4 : tl::DataType::kInt8;
    problem.dtype_c = a.dtype;
    problem.trans_b = true;
    const int64_t groups = (facts.k + facts.block_size - 1) / facts.block_size;
    tl::QuantInputs& quant = problem.quant;
    quant.antiquant_scale = {true, a.dtype, {facts.n, groups}};
    quant.group_size = facts.block_size;
    if (facts.has_zero_points) {
      quant.antiquant_offset = {true, a.dtype, {facts.n, groups}};
      derivation.notes.push_back("zero_points are quant.antiquant_offset (2^(bits-1) less each)");
    }
    if (facts.has_bias) {
      problem.has_bias = true;
      problem.dtype_bias = a.dtype;
      derivation.fused_bias = node.input(5);
    }
    derivation.notes.push_back(
        absl::StrCat(self, ": A16W", facts.bits, " per group of ", facts.block_size, ", weight [N ",
                     facts.n, ", K ", facts.k, "] as a transposed int", facts.bits, " weight"));
    return std::nullopt;
  }

  // ---------------------------------------------------------------------
  // ONNX Runtime's com.microsoft MoE / QMoE (moe_lowering.h reads the
  // node): one GroupedMatmul per expert matmul, over all E experts.

 public:
  // Every lowered node of MoE / QMoE node `node_index`: fc1, fc3 (when the
  // node has it) and fc2 as GroupedMatmul, or the node alone with why not.
  std::vector<LoweredNode> LowerMoe(int node_index) const {
    const onnx::NodeProto& node = index_.node(node_index);
    LoweredNode base;
    base.node_index = node_index;
    base.name = node.name().empty() ? absl::StrCat("#", node_index) : node.name();
    base.op_type = node.op_type();
    const MoeFacts facts = ReadMoe(node);
    MoeShapes shapes;
    int64_t tokens = 0;
    std::vector<LoweredNode> nodes;
    if (std::optional<Outcome> failed = ReadMoeShapes(node, facts, &shapes, &tokens)) {
      base.status = failed->status;
      base.reason = std::move(failed->reason);
      nodes.push_back(std::move(base));
      return nodes;
    }
    const int64_t rows = SatMul(tokens, facts.k);
    for (const ExpertMatmul& matmul : shapes.matmuls) {
      LoweredNode lowered = base;
      lowered.name = absl::StrCat(base.name, "/", matmul.role);
      lowered.flops = 2.0 * static_cast<double>(rows) * static_cast<double>(matmul.k) *
                      static_cast<double>(matmul.n);
      std::optional<Outcome> outcome =
          LowerExpertMatmul(node, facts, shapes, matmul, tokens, rows, &lowered);
      if (!outcome.has_value()) {
        absl::Status valid = tl::ValidateProblem(lowered.problem);
        if (!valid.ok()) outcome = Unsupported(std::string(valid.message()));
      }
      if (outcome.has_value()) {
        lowered.status = outcome->status;
        lowered.reason = std::move(outcome->reason);
        lowered.problem = tl::MatmulProblem();
      }
      nodes.push_back(std::move(lowered));
    }
    return nodes;
  }

 private:
  // The node's token count and what its weights' dims say, or why it
  // cannot be lowered at all.
  std::optional<Outcome> ReadMoeShapes(const onnx::NodeProto& node, const MoeFacts& facts,
                                       MoeShapes* shapes, int64_t* tokens) const {
    const std::string self = absl::StrCat(node.op_type(), " (", kMicrosoftDomain, ")");
    if (facts.fc1.weight.empty() || facts.fc2.weight.empty()) {
      return Unsupported(absl::StrCat(self, " needs fc1_experts_weights and fc2_experts_weights"));
    }
    if (facts.quantized) {
      if (facts.quant_type != "int") {
        return Unsupported(absl::StrCat(
            self, " with quant_type '", facts.quant_type,
            "': only integer experts (quant_type 'int') are lowered; the FP4 / FP8 modes' "
            "global scales have no GroupedMatmul input"));
      }
      if (facts.expert_weight_bits != 4 && facts.expert_weight_bits != 8) {
        return Unsupported(absl::StrCat(self, " with expert_weight_bits ", facts.expert_weight_bits,
                                        ": CANN's weight-quant GroupedMatmul takes int4 and int8 "
                                        "weights"));
      }
      if (facts.weights_prepacked == 1) {
        return Unsupported(absl::StrCat(
            self,
            " with weights_prepacked 1: the weights are in an execution provider's own "
            "layout, not the documented [E, N, K / pack]"));
      }
      if (facts.block_size < 0) {
        return Unsupported(absl::StrCat(self, " with block_size ", facts.block_size));
      }
    }
    std::vector<int64_t> x;
    if (auto failed = DimsOf(facts.input, &x)) return failed;
    if (x.size() != 2 && x.size() != 3) {
      return Unsupported(absl::StrCat(self, "'s input ", ShapeText(x),
                                      " is neither [tokens, hidden] nor [batch, seq, hidden]"));
    }
    *tokens = 1;
    for (size_t i = 0; i + 1 < x.size(); ++i) *tokens = SatMul(*tokens, x[i]);
    std::vector<int64_t> fc1, fc2, fc3_dims;
    std::optional<std::vector<int64_t>> fc3;
    if (auto failed = DimsOf(facts.fc1.weight, &fc1)) return failed;
    if (auto failed = DimsOf(facts.fc2.weight, &fc2)) return failed;
    if (!facts.fc3.weight.empty()) {
      if (auto failed = DimsOf(facts.fc3.weight, &fc3_dims)) return failed;
      fc3 = fc3_dims;
    }
    absl::StatusOr<MoeShapes> resolved = ResolveMoeShapes(facts, x.back(), fc1, fc2, fc3);
    if (!resolved.ok()) {
      return Unsupported(absl::StrCat(self, ": ", resolved.status().message()));
    }
    *shapes = *std::move(resolved);
    if (facts.k < 1 || facts.k > shapes->experts) {
      return Unsupported(absl::StrCat(self, " with k = ", facts.k, ": each token goes to 1 .. ",
                                      shapes->experts, " experts"));
    }
    std::vector<int64_t> probs;
    if (!DimsOf(facts.router_probs, &probs).has_value() &&
        (probs.size() != 2 || probs[0] != *tokens || probs[1] != shapes->experts)) {
      return Unsupported(absl::StrCat(self, "'s router_probs ", ShapeText(probs), " is not [",
                                      *tokens, ", ", shapes->experts,
                                      "] (num_tokens, num_experts)"));
    }
    if (SatMul(*tokens, facts.k) > std::numeric_limits<int32_t>::max()) {
      return Unsupported(absl::StrCat(self, ": ", *tokens, " tokens x k = ", facts.k,
                                      " routed rows, above 2147483647"));
    }
    return std::nullopt;
  }

  // The GroupedMatmul of expert matmul `matmul`: x every routed row [rows,
  // K], the experts' weights as stored ([E, N, K] transposed, or [E, K, N]),
  // y [rows, N], group_list [E]; split M (group_type 0) into counts
  // (group_list_type 1), one x, weight and y (split_item 3). QMoE's int4 /
  // int8 weights take the weight-quant path with their scales as
  // antiquant_scale.
  std::optional<Outcome> LowerExpertMatmul(const onnx::NodeProto& node, const MoeFacts& facts,
                                           const MoeShapes& shapes, const ExpertMatmul& matmul,
                                           int64_t tokens, int64_t rows,
                                           LoweredNode* lowered) const {
    const MoeFacts::Expert& inputs =
        matmul.fc == 1 ? facts.fc1 : (matmul.fc == 2 ? facts.fc2 : facts.fc3);
    const std::string self = absl::StrCat(node.op_type(), " (", kMicrosoftDomain, ")");
    Derivation& derivation = lowered->derivation;
    const int64_t e = shapes.experts, k = matmul.k, n = matmul.n;
    // x's run dtype: the no-quant path's float types, or the weight-quant
    // path's float16 / bfloat16.
    tl::DataType x_dtype;
    if (facts.quantized) {
      if (auto failed = WeightQuantActivation(facts.input, &x_dtype, &derivation)) return failed;
    } else {
      if (auto failed = DtypeOf(facts.input, &x_dtype, &derivation)) return failed;
      tl::DataType w_dtype;
      if (auto failed = DtypeOf(inputs.weight, &w_dtype, &derivation)) return failed;
      if (w_dtype != x_dtype) {
        return Unsupported(absl::StrCat(self, "'s ", matmul.role, "_experts_weights is ",
                                        OnnxTypeName(InfoType(inputs.weight)), " and its input ",
                                        OnnxTypeName(InfoType(facts.input)),
                                        ": MoE takes one float type T for both"));
      }
    }
    tl::MatmulProblem& problem = lowered->problem;
    problem.op = tl::MatmulOp::kGroupedMatmul;
    tl::GroupedInputs& grouped = problem.grouped;
    auto single = [](tl::DataType dtype, std::vector<int64_t> dims) {
      tl::GroupedTensorList list;
      list.dtype = dtype;
      list.instances.push_back({dims, dims});
      return list;
    };
    grouped[tl::GroupedTensor::kX] = single(x_dtype, {rows, k});
    const tl::DataType w_dtype =
        !facts.quantized
            ? x_dtype
            : (facts.expert_weight_bits == 4 ? tl::DataType::kInt4 : tl::DataType::kInt8);
    grouped[tl::GroupedTensor::kWeight] = single(
        w_dtype, matmul.transposed ? std::vector<int64_t>{e, n, k} : std::vector<int64_t>{e, k, n});
    grouped[tl::GroupedTensor::kGroupList] = single(tl::DataType::kInt64, {e});
    grouped[tl::GroupedTensor::kY] = single(x_dtype, {rows, n});
    grouped.split_item = 3;
    grouped.group_type = tl::kGroupTypeSplitM;
    grouped.group_list_type = tl::kGroupListCounts;
    grouped.transpose_weight = matmul.transposed;
    if (!inputs.bias.empty()) {
      std::vector<int64_t> dims;
      if (auto failed = DimsOf(inputs.bias, &dims)) return failed;
      if (dims != std::vector<int64_t>{e, n}) {
        return Unsupported(absl::StrCat(self, "'s ", matmul.role, "_experts_bias ", ShapeText(dims),
                                        " is not [", e, ", ", n, "]"));
      }
      // CANN's bfloat16 no-quant GroupedMatmul adds a float32 bias.
      tl::DataType bias_dtype = x_dtype;
      if (!facts.quantized && x_dtype == tl::DataType::kBFloat16) {
        bias_dtype = tl::DataType::kFloat32;
        derivation.notes.push_back(
            absl::StrCat(matmul.role,
                         "_experts_bias is bfloat16 in the graph; CANN's bfloat16 GroupedMatmul "
                         "adds a float32 bias, so it is cast"));
      }
      grouped[tl::GroupedTensor::kBias] = single(bias_dtype, dims);
      derivation.fused_bias = inputs.bias;
    }
    if (facts.quantized) {
      if (auto failed = QMoeScales(self, facts, matmul, inputs, e, x_dtype, lowered)) return failed;
    }
    // What the graph fixes, and what it leaves to the run.
    const std::string weight_dims = matmul.transposed
                                        ? absl::StrCat("[E ", e, ", N ", n, ", K ", k, "]")
                                        : absl::StrCat("[E ", e, ", K ", k, ", N ", n, "]");
    derivation.notes.push_back(absl::StrCat(
        matmul.role, " (", ExpertRole(facts, shapes, matmul), ") of ", e, " experts: x [", rows,
        ", ", k, "] is every routed row, the weights ", weight_dims,
        matmul.transposed ? " as ContribOperators.md stores them (transpose_weight)" : "",
        "; split M (group_type 0) by group_list [", e,
        "] of counts, one x, weight and y "
        "(split_item 3)"));
    if (!shapes.layout_note.empty()) derivation.notes.push_back(shapes.layout_note);
    derivation.assumptions.push_back(absl::StrCat(
        "rows per expert: ", tokens, " tokens x k = ", facts.k, " give ", rows,
        " routed rows over ", e,
        " experts; how many each expert gets is the router's choice "
        "at run time. CANN's tiling reads only group_list's length, so the plan holds for any "
        "split; no token histogram is given, so Execute and timing spread them evenly (",
        rows / e, rows % e != 0 ? absl::StrCat(" or ", rows / e + 1) : std::string(),
        " per expert)"));
    if (!facts.k_given) {
      derivation.assumptions.push_back(
          "k is absent: 4, the default of ONNX Runtime's CPU and CUDA kernels (the "
          "documentation gives none)");
    }
    if (matmul.fc == 2) {
      derivation.notes.push_back(absl::StrCat(
          "the routing (top-", facts.k, facts.use_sparse_mixer != 0 ? " by the sparse mixer" : "",
          facts.normalize_routing_weights != 0 ? ", weights normalized" : "",
          "), the gathering of each expert's rows, the activation (", facts.activation_type,
          ") and the weighted sum after fc2 run outside the matmuls"));
    }
    return std::nullopt;
  }

  // What expert matmul `matmul` computes, in words.
  static std::string ExpertRole(const MoeFacts& facts, const MoeShapes& shapes,
                                const ExpertMatmul& matmul) {
    if (matmul.fc == 2) return "down: inter -> hidden";
    if (matmul.fc == 3) return "up: the gated activation's second projection";
    if (shapes.fusion == 2) return "gate and up fused, 2 x inter";
    const bool gated = shapes.matmuls.size() == 3;
    return gated ? absl::StrCat("gate: ", facts.activation_type, " of it times fc3")
                 : "up: hidden -> inter";
  }

  // QMoE's scales (and zero points) as the weight-quant path's
  // antiquant_scale (antiquant_offset): one per column [E, N], or one per
  // block of block_size along K [E, N, K / block_size], in x's dtype. The
  // codes are unsigned with the documented default zero point 2^(bits-1):
  // less it, they are the signed int4 / int8 weights CANN takes.
  std::optional<Outcome> QMoeScales(const std::string& self, const MoeFacts& facts,
                                    const ExpertMatmul& matmul, const MoeFacts::Expert& inputs,
                                    int64_t e, tl::DataType x_dtype, LoweredNode* lowered) const {
    Derivation& derivation = lowered->derivation;
    tl::GroupedInputs& grouped = lowered->problem.grouped;
    if (inputs.scales.empty()) {
      return Unsupported(absl::StrCat(self, " has no ", matmul.role,
                                      "_scales: integer experts need their dequantization "
                                      "scales (CANN's antiquant_scale)"));
    }
    const int64_t k = matmul.k, n = matmul.n;
    if (facts.block_size > 0 && k % facts.block_size != 0) {
      return Unsupported(absl::StrCat(self, ": K = ", k, " of ", matmul.role,
                                      " is not a multiple of block_size ", facts.block_size));
    }
    const std::vector<int64_t> want = facts.block_size > 0
                                          ? std::vector<int64_t>{e, n, k / facts.block_size}
                                          : std::vector<int64_t>{e, n};
    std::vector<int64_t> dims;
    if (auto failed = DimsOf(inputs.scales, &dims)) return failed;
    if (dims != want) {
      return Unsupported(absl::StrCat(self, "'s ", matmul.role, "_scales ", ShapeText(dims),
                                      " is not ", ShapeText(want)));
    }
    tl::GroupedTensorList scale;
    scale.dtype = x_dtype;
    scale.instances.push_back({want, want});
    grouped[tl::GroupedTensor::kAntiquantScale] = scale;
    if (!inputs.zero_points.empty()) {
      grouped[tl::GroupedTensor::kAntiquantOffset] = scale;
      derivation.notes.push_back(
          absl::StrCat(matmul.role,
                       "_zero_points are antiquant_offset (2^(bits-1) less each, negated: CANN "
                       "computes (w + offset) * scale)"));
    }
    derivation.notes.push_back(absl::StrCat(
        "A16W", facts.expert_weight_bits, " ",
        facts.block_size > 0 ? absl::StrCat("per block of ", facts.block_size, " along K")
                             : std::string("per column"),
        ": the uint8 codes of ", matmul.role, "_experts_weights less 2^",
        facts.expert_weight_bits - 1, " are the signed int", facts.expert_weight_bits, " weight, ",
        matmul.role, "_scales antiquant_scale ", ShapeText(want)));
    return std::nullopt;
  }

  // 2 * the multiply-adds of the node, from its inputs' dims; nullopt when
  // they are not known.
  std::optional<double> NodeFlops(const onnx::NodeProto& node) const {
    const std::string& op = node.op_type();
    auto dims_of = [this](const onnx::NodeProto& n, int i) -> const std::vector<int64_t>* {
      if (i >= n.input_size()) return nullptr;
      const TensorFacts* facts = index_.Info(n.input(i));
      return facts == nullptr || !facts->dims.has_value() ? nullptr : &*facts->dims;
    };
    auto product = [](const std::vector<int64_t>& dims, size_t from, size_t to) {
      double p = 1;
      for (size_t i = from; i < to && i < dims.size(); ++i) p *= static_cast<double>(dims[i]);
      return p;
    };
    if (op == "MatMulNBits") {
      const std::vector<int64_t>* a = dims_of(node, 0);
      const NBitsFacts facts = ReadMatMulNBits(node);
      if (a == nullptr || a->empty()) return std::nullopt;
      return 2.0 * product(*a, 0, a->size() - 1) * static_cast<double>(facts.k) *
             static_cast<double>(facts.n);
    }
    if (op == "Einsum") {
      if (node.input_size() != 2) return std::nullopt;
      const std::vector<int64_t>* a = dims_of(node, 0);
      const std::vector<int64_t>* b = dims_of(node, 1);
      const onnx::AttributeProto* equation = FindAttribute(node, "equation");
      if (a == nullptr || b == nullptr || equation == nullptr) return std::nullopt;
      absl::StatusOr<EinsumEquation> parsed = ParseEinsum(equation->s(), {a->size(), b->size()});
      if (!parsed.ok()) return std::nullopt;
      std::map<char, int64_t> sizes;
      for (size_t i = 0; i < a->size(); ++i) sizes[parsed->inputs[0][i]] = (*a)[i];
      for (size_t i = 0; i < b->size(); ++i) {
        int64_t& size = sizes[parsed->inputs[1][i]];
        size = std::max(size, (*b)[i]);
      }
      double flops = 2;
      for (const auto& [label, size] : sizes) flops *= static_cast<double>(size);
      return flops;
    }
    const std::vector<int64_t>* a = dims_of(node, 0);
    const std::vector<int64_t>* b = dims_of(node, op == "QLinearMatMul" ? 3 : 1);
    if (a == nullptr || b == nullptr || a->empty() || b->empty()) return std::nullopt;
    if (op == "Gemm") {
      if (a->size() != 2 || b->size() != 2) return std::nullopt;
      const bool flip_a = IntAttribute(node, "transA", 0) != 0;
      const bool flip_b = IntAttribute(node, "transB", 0) != 0;
      return 2.0 * static_cast<double>((*a)[flip_a ? 1 : 0]) *
             static_cast<double>((*a)[flip_a ? 0 : 1]) * static_cast<double>((*b)[flip_b ? 0 : 1]);
    }
    std::vector<int64_t> x = *a, y = *b;
    if (x.size() == 1) x.insert(x.begin(), 1);
    if (y.size() == 1) y.push_back(1);
    const std::vector<int64_t> c =
        LogicalC(std::vector<int64_t>(x.begin(), x.end() - 2),
                 std::vector<int64_t>(y.begin(), y.end() - 2), x[x.size() - 2], y.back());
    return 2.0 * product(c, 0, c.size()) * static_cast<double>(x.back());
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

bool IsMatmulLikeNode(const onnx::NodeProto& node) {
  if (IsDefaultDomain(node)) return IsMatmulLike(node.op_type());
  return (node.domain() == kMicrosoftDomain && node.op_type() == "MatMulNBits") || IsMoeNode(node);
}

size_t MaxLoweredNodes(const onnx::NodeProto& node) {
  if (IsMoeNode(node)) return 3;
  return IsMatmulLikeNode(node) ? 1 : 0;
}

namespace {

// Every matmul-like node of `graph` lowered with `facts`.
std::vector<LoweredNode> LowerNodes(const onnx::GraphProto& graph,
                                    std::unordered_map<std::string, TensorFacts> facts,
                                    const LoweringOptions& options) {
  const GraphIndex index(graph, std::move(facts));
  const Lowerer lowerer(index, options);
  std::vector<LoweredNode> nodes;
  size_t bound = 0;
  for (const onnx::NodeProto& node : graph.node()) bound += MaxLoweredNodes(node);
  nodes.reserve(bound);
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (IsMoeNode(node)) {
      for (LoweredNode& lowered : lowerer.LowerMoe(i)) nodes.push_back(std::move(lowered));
    } else if (IsMatmulLikeNode(node)) {
      nodes.push_back(lowerer.Lower(i));
    }
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
