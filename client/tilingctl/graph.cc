#include "client/tilingctl/graph.h"

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/text_format.h"
#include "onnx/onnx_pb.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;

constexpr int64_t kKeptInitializerElements = 64;

int64_t Elements(const onnx::TensorProto& tensor) {
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim <= 0) return 0;
    count = count > (int64_t{1} << 40) / dim ? (int64_t{1} << 40) : count * dim;
  }
  return count;
}

// Zero points keep their data up to this many elements: the service reads
// their values (GraphTilingRequest.model).
constexpr int64_t kKeptZeroPointElements = int64_t{1} << 20;

// The tensors read as a zero point: input 2 of QuantizeLinear and
// DequantizeLinear, 2 and 3 of MatMulInteger, 2, 5 and 7 of QLinearMatMul.
std::set<std::string> ZeroPoints(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const onnx::NodeProto& node : graph.node()) {
    const std::string& op = node.op_type();
    for (int slot = 2; slot < node.input_size(); ++slot) {
      const bool zero_point = ((op == "QuantizeLinear" || op == "DequantizeLinear") && slot == 2) ||
                              (op == "MatMulInteger" && slot <= 3) ||
                              (op == "QLinearMatMul" && (slot == 2 || slot == 5 || slot == 7));
      if (zero_point) names.insert(node.input(slot));
    }
  }
  return names;
}

// Moves large initializers' data out (see ModelFile::bytes).
int StripLargeInitializers(onnx::GraphProto& graph) {
  std::set<std::string> inputs;
  for (const onnx::ValueInfoProto& input : graph.input()) inputs.insert(input.name());
  const std::set<std::string> zero_points = ZeroPoints(graph);
  int stripped = 0;
  onnx::GraphProto kept_graph;
  for (onnx::TensorProto& tensor : *graph.mutable_initializer()) {
    const int64_t elements = Elements(tensor);
    if (elements <= kKeptInitializerElements ||
        (zero_points.count(tensor.name()) != 0 && elements <= kKeptZeroPointElements)) {
      *kept_graph.add_initializer() = std::move(tensor);
      continue;
    }
    ++stripped;
    if (!inputs.insert(tensor.name()).second) continue;
    onnx::ValueInfoProto& input = *graph.add_input();
    input.set_name(tensor.name());
    onnx::TypeProto_Tensor& type = *input.mutable_type()->mutable_tensor_type();
    type.set_elem_type(tensor.data_type());
    for (int64_t dim : tensor.dims()) type.mutable_shape()->add_dim()->set_dim_value(dim);
  }
  graph.mutable_initializer()->Swap(kept_graph.mutable_initializer());
  return stripped;
}

std::string OperatorLabel(pb::Operator op) {
  switch (op) {
    case pb::OPERATOR_BATCH_MATMUL_V3:
      return "BatchMatMulV3";
    case pb::OPERATOR_FUSED_MATMUL:
      return "FusedMatMul";
    case pb::OPERATOR_QUANT_BATCH_MATMUL_V3:
      return "QuantBatchMatmulV3";
    case pb::OPERATOR_WEIGHT_QUANT_BATCH_MATMUL_V2:
      return "WeightQuantBatchMatmulV2";
    case pb::OPERATOR_TRANSPOSE_BATCH_MATMUL:
      return "TransposeBatchMatMul";
    case pb::OPERATOR_TRANSPOSE_QUANT_BATCH_MATMUL:
      return "TransposeQuantBatchMatMul";
    case pb::OPERATOR_GROUPED_MATMUL:
      return "GroupedMatmul";
    default:
      return "MatMulV3";
  }
}

std::string DtypeLabel(pb::DataType dtype) {
  switch (dtype) {
    case pb::DATA_TYPE_FLOAT16:
      return "fp16";
    case pb::DATA_TYPE_BFLOAT16:
      return "bf16";
    case pb::DATA_TYPE_FLOAT32:
      return "fp32";
    case pb::DATA_TYPE_INT8:
      return "int8";
    case pb::DATA_TYPE_INT4:
      return "int4";
    default:
      return "-";
  }
}

// FLOPs with an SI prefix: "1.23 TFLOP".
std::string FlopsLabel(double flops) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int prefix = 0;
  while (flops >= 1000 && prefix < 6) {
    flops /= 1000;
    ++prefix;
  }
  return absl::StrFormat("%.3g %sFLOP", flops, kPrefixes[prefix]);
}

std::string StatusLabel(pb::NodeStatus status);

// "  coverage  97.1 % of 1.23 TFLOP answered (OK 1.19 TFLOP in 6 nodes; UNSUPPORTED ...)".
std::string CoverageLine(const pb::GraphCoverage& coverage) {
  double known = 0;
  std::vector<std::string> parts;
  for (const pb::StatusFlops& entry : coverage.by_status()) {
    known += entry.flops();
    const uint32_t without = entry.nodes_without_flops();
    const uint32_t with = entry.nodes() - without;
    std::string part = absl::StrCat(StatusLabel(entry.status()), " ");
    if (with > 0) absl::StrAppend(&part, FlopsLabel(entry.flops()), " in ", with, " nodes");
    if (without > 0) absl::StrAppend(&part, with > 0 ? ", " : "", without, " of unknown FLOPs");
    parts.push_back(std::move(part));
  }
  return absl::StrFormat("  %-25s %5.1f %% of %s answered (%s)\n", "coverage",
                         100 * coverage.answered_share(), FlopsLabel(known),
                         absl::StrJoin(parts, "; "));
}

std::string StatusLabel(pb::NodeStatus status) {
  switch (status) {
    case pb::NODE_STATUS_OK:
      return "ok";
    case pb::NODE_STATUS_UNSUPPORTED:
      return "unsupported";
    case pb::NODE_STATUS_UNRESOLVED:
      return "unresolved";
    case pb::NODE_STATUS_FAILED:
      return "failed";
    default:
      return "-";
  }
}

// "2x12 197x64x197": the batch (C's broadcast dims) and M x K x N.
std::string ShapeLabel(const pb::MatmulProblem& problem) {
  if (problem.has_transpose()) {
    return absl::StrCat(problem.transpose().batch(), " ", problem.m(), "x", problem.k(), "x",
                        problem.n());
  }
  const auto& longer =
      problem.batch_a_size() >= problem.batch_b_size() ? problem.batch_a() : problem.batch_b();
  const auto& shorter =
      problem.batch_a_size() >= problem.batch_b_size() ? problem.batch_b() : problem.batch_a();
  std::vector<int64_t> batch(longer.begin(), longer.end());
  for (int i = 0; i < shorter.size(); ++i) {
    int64_t& dim = batch[batch.size() - shorter.size() + i];
    dim = std::max(dim, shorter[i]);
  }
  std::string label = batch.empty() ? "" : absl::StrCat(absl::StrJoin(batch, "x"), " ");
  absl::StrAppend(&label, problem.m(), "x", problem.k(), "x", problem.n());
  return label;
}

std::string DerivationLabel(const pb::NodeDerivation& derivation) {
  std::vector<std::string> parts;
  if (derivation.absorbed_transposes_size() > 0) parts.push_back("transpose");
  if (!derivation.fused_bias().empty()) parts.push_back("bias");
  if (derivation.fused_epilogue_size() > 0) parts.push_back("epilogue");
  if (derivation.folded_batch()) parts.push_back("folded");
  if (derivation.promoted_a() || derivation.promoted_b()) parts.push_back("1-D");
  if (derivation.compute_dtype_applied()) parts.push_back("cast");
  return parts.empty() ? "-" : absl::StrJoin(parts, ",");
}

}  // namespace

absl::StatusOr<ModelFile> ReadModel(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream buffer;
  buffer << file.rdbuf();
  const std::string bytes = buffer.str();
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes) || !model.has_graph()) {
    model.Clear();
    if (!google::protobuf::TextFormat::ParseFromString(bytes, &model) || !model.has_graph()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": not an ONNX model (binary or text onnx.ModelProto)"));
    }
  }
  ModelFile result;
  result.file_bytes = bytes.size();
  result.nodes = model.graph().node_size();
  result.stripped_initializers = StripLargeInitializers(*model.mutable_graph());
  result.bytes = model.SerializeAsString();
  return result;
}

absl::Status AddDimSpecs(const std::vector<std::string>& specs, pb::GraphTilingRequest* request) {
  for (const std::string& argument : specs) {
    for (absl::string_view spec :
         absl::StrSplit(argument, absl::ByAnyChar(" ;"), absl::SkipEmpty())) {
      const std::vector<absl::string_view> parts = absl::StrSplit(spec, absl::MaxSplits('=', 1));
      if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--dims: \"", spec, "\" is not name=value[,value...]"));
      }
      pb::DimValues& values = (*request->mutable_dims())[std::string(parts[0])];
      for (absl::string_view text : absl::StrSplit(parts[1], ',')) {
        int64_t value = 0;
        if (!absl::SimpleAtoi(text, &value)) {
          return absl::InvalidArgumentError(
              absl::StrCat("--dims: \"", text, "\" of \"", spec, "\" is not an integer"));
        }
        values.add_values(value);
      }
    }
  }
  return absl::OkStatus();
}

std::string FormatGraph(const pb::GraphTilingResponse& response, absl::string_view model_name) {
  std::string out = absl::StrCat(
      "model ", model_name, " (",
      response.producer().empty() ? "unknown producer" : response.producer(), ", opset ",
      response.opset(), ", ", response.graph_nodes(), " nodes)\n", "chip ",
      response.platform().name(), " (fingerprint ", response.provenance().chip_fingerprint(),
      "); engine ", response.provenance().engine_version(), " (",
      response.provenance().engine_revision(), "), ", response.provenance().cann_revision(), "\n");
  bool timed = false;
  for (const pb::GraphProblem& problem : response.problems()) {
    timed = timed || problem.time_us() > 0 || problem.has_emulation_status();
  }
  for (int g = 0; g < response.gears_size(); ++g) {
    const pb::GraphGear& gear = response.gears(g);
    std::vector<std::string> dims;
    for (const auto& [name, value] : gear.dims()) dims.push_back(absl::StrCat(name, "=", value));
    std::sort(dims.begin(), dims.end());
    absl::StrAppend(&out, "\ngear ", g + 1, "/", response.gears_size(),
                    dims.empty() ? "" : absl::StrCat(": ", absl::StrJoin(dims, " ")), "\n");
    absl::StrAppend(&out, absl::StrFormat("%-28s %-13s %-25s %-22s %-4s %-22s %6s %5s %10s %s\n",
                                          "node", "onnx", "cann op", "batch MxKxN", "type",
                                          "strategy", "key", "block", "time_us", "derived"));
    for (const pb::GraphNode& node : gear.nodes()) {
      std::string name = node.name();
      if (name.size() > 28) name = absl::StrCat("...", name.substr(name.size() - 25));
      if (node.status() != pb::NODE_STATUS_OK && node.problem_index() < 0) {
        absl::StrAppend(&out, absl::StrFormat("%-28s %-13s %s: %s\n", name, node.op_type(),
                                              StatusLabel(node.status()), node.reason()));
        continue;
      }
      const pb::GraphProblem& problem = response.problems(node.problem_index());
      if (node.status() != pb::NODE_STATUS_OK) {
        absl::StrAppend(&out,
                        absl::StrFormat("%-28s %-13s %-25s %-22s %s: %s\n", name, node.op_type(),
                                        OperatorLabel(problem.op()), ShapeLabel(problem.problem()),
                                        StatusLabel(node.status()), node.reason()));
        continue;
      }
      const pb::TilingResponse& answer = problem.answer();
      const std::string time = !timed ? "-"
                               : problem.has_emulation_status()
                                   ? "n/a"
                                   : absl::StrFormat("%.2f", problem.time_us());
      absl::StrAppend(
          &out, absl::StrFormat(
                    "%-28s %-13s %-25s %-22s %-4s %-22s %6d %5d %10s %s\n", name, node.op_type(),
                    OperatorLabel(problem.op()), ShapeLabel(problem.problem()),
                    DtypeLabel(problem.problem().dtype_a()), answer.strategy(), answer.tiling_key(),
                    answer.block_dim(), time, DerivationLabel(node.derivation())));
    }
    for (const pb::OperatorTotal& total : gear.totals()) {
      absl::StrAppend(
          &out, absl::StrFormat("  %-25s %5d nodes", OperatorLabel(total.op()), total.nodes()),
          timed ? absl::StrFormat("  %12.2f us", total.time_us()) : "", "\n");
    }
    absl::StrAppend(&out,
                    absl::StrFormat("  %-25s %5d of %d nodes answered", "gear", gear.ok_nodes(),
                                    gear.nodes_size()),
                    timed ? absl::StrFormat("  %12.2f us (emulator estimate: the matmuls alone)",
                                            gear.total_time_us())
                          : "",
                    "\n");
    absl::StrAppend(&out, CoverageLine(gear.coverage()));
  }
  uint64_t uses = 0;
  for (const pb::GraphProblem& problem : response.problems()) uses += problem.count();
  absl::StrAppend(&out, "\n", response.problems_size(), " distinct problems for ", uses,
                  " answered node uses\n");
  return out;
}

}  // namespace npu::client
