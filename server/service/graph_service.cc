#include "server/service/graph_service.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "emulator/thread_pool.h"
#include "server/graph/lowering.h"
#include "server/graph/onnx_model.h"
#include "server/service/convert.h"
#include "server/service/logging.h"
#include "server/service/provenance.h"
#include "server/service/queued_reactor.h"
#include "server/service/request_pipeline.h"
#include "server/service/status_mapping.h"
#include "server/service/validate.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/validate.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using Clock = std::chrono::steady_clock;

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

absl::Status CheckFields(const pb::GraphTilingRequest& request, const GraphOptions& options) {
  if (request.id().size() > kMaxIdBytes) {
    return FieldError("id", absl::StrCat("at most ", kMaxIdBytes, " bytes"));
  }
  if (request.client_id().size() > kMaxClientIdBytes) {
    return FieldError("client_id", absl::StrCat("at most ", kMaxClientIdBytes, " bytes"));
  }
  if (request.platform().size() > kMaxNameBytes) {
    return FieldError("platform", absl::StrCat("at most ", kMaxNameBytes, " bytes"));
  }
  if (request.model().size() > options.max_model_bytes) {
    return FieldError("model", absl::StrCat(request.model().size(), " bytes is above the limit of ",
                                            options.max_model_bytes,
                                            " (--max_message_bytes); strip the initializers' data "
                                            "(tilingctl graph does)"));
  }
  if (!pb::ModelEncoding_IsValid(request.model_encoding())) {
    return FieldError("model_encoding", absl::StrCat("unknown value ", request.model_encoding()));
  }
  if (!pb::GearPolicy_IsValid(request.gears())) {
    return FieldError("gears", absl::StrCat("unknown value ", request.gears()));
  }
  const pb::DataType compute = request.compute_dtype();
  if (compute != pb::DATA_TYPE_UNSPECIFIED && compute != pb::DATA_TYPE_FLOAT16 &&
      compute != pb::DATA_TYPE_BFLOAT16) {
    return FieldError("compute_dtype", "must be FLOAT16, BFLOAT16 or unset");
  }
  return absl::OkStatus();
}

graph::ModelEncoding EncodingFromProto(pb::ModelEncoding encoding) {
  switch (encoding) {
    case pb::MODEL_ENCODING_BINARY:
      return graph::ModelEncoding::kBinary;
    case pb::MODEL_ENCODING_TEXT:
      return graph::ModelEncoding::kText;
    default:
      return graph::ModelEncoding::kDetect;
  }
}

pb::NodeStatus NodeStatusToProto(graph::NodeStatus status) {
  switch (status) {
    case graph::NodeStatus::kOk:
      return pb::NODE_STATUS_OK;
    case graph::NodeStatus::kUnsupported:
      return pb::NODE_STATUS_UNSUPPORTED;
    case graph::NodeStatus::kUnresolved:
      return pb::NODE_STATUS_UNRESOLVED;
  }
  return pb::NODE_STATUS_UNSPECIFIED;
}

void DerivationToProto(const graph::Derivation& from, pb::NodeDerivation* to) {
  for (const std::string& name : from.absorbed_transposes) to->add_absorbed_transposes(name);
  to->set_fused_bias(from.fused_bias);
  for (const std::string& name : from.fused_epilogue) to->add_fused_epilogue(name);
  to->set_folded_batch(from.folded_batch);
  to->set_promoted_a(from.promoted_a);
  to->set_promoted_b(from.promoted_b);
  to->set_compute_dtype_applied(from.compute_dtype_applied);
  for (const std::string& note : from.notes) to->add_notes(note);
  for (const std::string& assumption : from.assumptions) to->add_assumptions(assumption);
}

// A distinct problem of the model and what became of it.
struct Distinct {
  pb::MatmulProblem wire;
  uint32_t count = 0;
  absl::Status decided;
  pb::TilingResponse answer;
  absl::Status emulated;
  double time_us = 0;
};

// The chip of `request`, as GetTiling resolves it.
absl::StatusOr<tl::ChipSpec> ChipOf(const pb::GraphTilingRequest& request) {
  RETURN_IF_ERROR(ValidatePlatformOverrides(request.platform_overrides()));
  RequestParts parts;
  parts.platform = request.platform();
  parts.overrides = &request.platform_overrides();
  ASSIGN_OR_RETURN(tl::ChipSpec chip, ResolveChip(parts));
  RETURN_IF_ERROR(Prefixed("platform: ", tl::ValidateTilingArch(chip)));
  return chip;
}

// Sums a gear's nodes per status into a GraphCoverage.
class CoverageCounter {
 public:
  void Add(const pb::GraphNode& node) {
    pb::StatusFlops& entry = by_status_[node.status()];
    entry.set_status(node.status());
    entry.set_nodes(entry.nodes() + 1);
    if (node.flops_known()) {
      entry.set_flops(entry.flops() + node.flops());
    } else {
      entry.set_nodes_without_flops(entry.nodes_without_flops() + 1);
    }
  }

  void Write(pb::GraphCoverage* coverage) const {
    double known = 0, answered = 0;
    uint32_t without = 0;
    for (const auto& [status, entry] : by_status_) {
      *coverage->add_by_status() = entry;
      known += entry.flops();
      without += entry.nodes_without_flops();
      if (status == pb::NODE_STATUS_OK) answered = entry.flops();
    }
    coverage->set_answered_share(known > 0 ? answered / known : 0);
    coverage->set_nodes_without_flops(without);
  }

 private:
  std::map<int, pb::StatusFlops> by_status_;
};

}  // namespace

GraphService::GraphService(TilingAnswers& answers, const tl::StrategyRegistry& registry,
                           ServiceMetrics& metrics, const ExecuteOptions& execute,
                           GraphOptions options)
    : answers_(answers),
      registry_(registry),
      metrics_(metrics),
      execute_(execute),
      options_(options) {}

absl::Status GraphService::Answer(const pb::GraphTilingRequest& request,
                                  const std::atomic<bool>* cancelled,
                                  pb::GraphTilingResponse* response) {
  auto stopped = [cancelled] { return cancelled != nullptr && cancelled->load(); };
  RETURN_IF_ERROR(CheckFields(request, options_));
  ASSIGN_OR_RETURN(const tl::ChipSpec chip, ChipOf(request));
  ASSIGN_OR_RETURN(onnx::ModelProto model,
                   graph::ParseModel(request.model(), EncodingFromProto(request.model_encoding())));
  graph::StripInitializerData(model);
  RETURN_IF_ERROR(graph::CheckModel(model));

  std::map<std::string, std::vector<int64_t>> values;
  for (const auto& [name, list] : request.dims()) {
    values[name].assign(list.values().begin(), list.values().end());
  }
  const graph::GearPolicy policy = request.gears() == pb::GEAR_POLICY_PRODUCT
                                       ? graph::GearPolicy::kProduct
                                       : graph::GearPolicy::kZip;
  ASSIGN_OR_RETURN(
      const std::vector<graph::Gear> gears,
      graph::BuildGears(graph::SymbolicDims(model.graph()), values, policy, options_.max_gears));
  // An MoE node answers up to three expert matmuls.
  size_t matmul_nodes = 0;
  for (const onnx::NodeProto& node : model.graph().node()) {
    matmul_nodes += graph::MaxLoweredNodes(node);
  }
  if (matmul_nodes * gears.size() > options_.max_node_answers) {
    return absl::ResourceExhaustedError(
        absl::StrCat("model: ", matmul_nodes, " matmul nodes x ", gears.size(), " gears is ",
                     matmul_nodes * gears.size(), " node answers, above the limit of ",
                     options_.max_node_answers, " per call; ask for fewer gears per call"));
  }
  graph::LoweringOptions lowering;
  lowering.fuse_epilogues = request.fuse_epilogues();
  if (request.compute_dtype() == pb::DATA_TYPE_FLOAT16) {
    lowering.compute_dtype = tl::DataType::kFloat16;
  } else if (request.compute_dtype() == pb::DATA_TYPE_BFLOAT16) {
    lowering.compute_dtype = tl::DataType::kBFloat16;
  }

  // Lower every gear, then gather the distinct problems.
  std::vector<std::vector<graph::LoweredNode>> lowered;
  lowered.reserve(gears.size());
  for (const graph::Gear& gear : gears) {
    if (stopped()) return absl::CancelledError("GetGraphTiling cancelled");
    ASSIGN_OR_RETURN(std::vector<graph::LoweredNode> nodes,
                     graph::LowerGraph(model, gear, lowering));
    lowered.push_back(std::move(nodes));
  }
  std::vector<Distinct> distinct;
  std::map<std::string, int> index_of;
  std::vector<std::vector<int>> problem_of(lowered.size());
  for (size_t g = 0; g < lowered.size(); ++g) {
    for (const graph::LoweredNode& node : lowered[g]) {
      int index = -1;
      if (node.status == graph::NodeStatus::kOk) {
        pb::MatmulProblem wire = ProblemToProto(node.problem);
        auto [it, added] =
            index_of.emplace(wire.SerializeAsString(), static_cast<int>(distinct.size()));
        if (added) {
          distinct.emplace_back();
          distinct.back().wire = std::move(wire);
        }
        index = it->second;
        ++distinct[index].count;
      }
      problem_of[g].push_back(index);
    }
  }

  // Decide (and emulate) each distinct problem once, in parallel.
  const int threads = options_.threads > 0
                          ? options_.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  npu::emu::ThreadPool pool(std::min<int>(threads, static_cast<int>(distinct.size())));
  const bool emulate = request.emulate();
  pool.ParallelFor(distinct.size(), [&](size_t i) {
    Distinct& problem = distinct[i];
    if (stopped()) {
      problem.decided = absl::CancelledError("GetGraphTiling cancelled");
      return;
    }
    pb::TilingRequest tiling;
    *tiling.mutable_problem() = problem.wire;
    tiling.set_platform(request.platform());
    *tiling.mutable_platform_overrides() = request.platform_overrides();
    tiling.set_view(pb::RESPONSE_VIEW_COMPACT);
    problem.decided = answers_.Answer(tiling, &problem.answer);
    if (!problem.decided.ok() || !emulate) return;
    pb::ExecuteRequest execute;
    *execute.mutable_problem() = problem.wire;
    execute.set_platform(request.platform());
    *execute.mutable_platform_overrides() = request.platform_overrides();
    execute.set_timing_only(true);
    absl::StatusOr<PreparedExecute> prepared = PrepareExecute(execute, registry_, execute_);
    if (!prepared.ok()) {
      problem.emulated = prepared.status();
      return;
    }
    pb::ExecuteResponse emulation;
    problem.emulated = RunExecute(*prepared, execute_, cancelled, &emulation);
    if (problem.emulated.ok()) problem.time_us = emulation.timing().predicted_time_us();
  });
  if (stopped()) return absl::CancelledError("GetGraphTiling cancelled");

  // The answer.
  response->set_id(request.id());
  *response->mutable_provenance() = EngineProvenance();
  const std::string fingerprint = ChipFingerprint(chip);
  response->mutable_provenance()->set_chip_fingerprint(fingerprint);
  *response->mutable_platform() = ChipToProto(chip);
  response->set_producer(absl::StrCat(model.producer_name(),
                                      model.producer_version().empty() ? "" : " ",
                                      model.producer_version()));
  response->set_opset(graph::DefaultOpset(model));
  response->set_graph_nodes(static_cast<uint32_t>(model.graph().node_size()));
  for (Distinct& problem : distinct) {
    pb::GraphProblem& out = *response->add_problems();
    out.set_op(problem.wire.op() == pb::OPERATOR_UNSPECIFIED ? pb::OPERATOR_MATMUL_V3
                                                             : problem.wire.op());
    *out.mutable_problem() = problem.wire;
    out.set_count(problem.count);
    out.set_decision_key(DecisionKey(problem.wire, fingerprint));
    if (problem.decided.ok()) {
      *out.mutable_answer() = std::move(problem.answer);
    } else {
      StatusToItem(problem.decided, out.mutable_status());
    }
    if (emulate && problem.decided.ok()) {
      if (problem.emulated.ok()) {
        out.set_time_us(problem.time_us);
      } else {
        StatusToItem(problem.emulated, out.mutable_emulation_status());
      }
    }
  }
  uint64_t node_count = 0;
  for (size_t g = 0; g < gears.size(); ++g) {
    pb::GraphGear& gear = *response->add_gears();
    for (const auto& [name, value] : gears[g]) (*gear.mutable_dims())[name] = value;
    std::map<int, pb::OperatorTotal> totals;
    CoverageCounter coverage;
    double total_us = 0;
    uint32_t ok_nodes = 0;
    for (size_t i = 0; i < lowered[g].size(); ++i) {
      const graph::LoweredNode& node = lowered[g][i];
      const int index = problem_of[g][i];
      pb::GraphNode& out = *gear.add_nodes();
      out.set_name(node.name);
      out.set_op_type(node.op_type);
      out.set_node_index(node.node_index);
      out.set_status(NodeStatusToProto(node.status));
      out.set_reason(node.reason);
      out.set_problem_index(index);
      out.set_flops(node.flops.value_or(0));
      out.set_flops_known(node.flops.has_value());
      DerivationToProto(node.derivation, out.mutable_derivation());
      ++node_count;
      if (index >= 0) {
        const pb::GraphProblem& problem = response->problems(index);
        out.set_op(problem.op());
        *out.mutable_problem() = problem.problem();
        if (problem.has_status()) {
          out.set_status(pb::NODE_STATUS_FAILED);
          out.set_reason(problem.status().message());
        }
      }
      coverage.Add(out);
      if (out.status() != pb::NODE_STATUS_OK) continue;
      const pb::GraphProblem& problem = response->problems(index);
      ++ok_nodes;
      pb::OperatorTotal& total = totals[problem.op()];
      total.set_op(problem.op());
      total.set_nodes(total.nodes() + 1);
      total.set_time_us(total.time_us() + problem.time_us());
      total_us += problem.time_us();
    }
    for (auto& [op, total] : totals) *gear.add_totals() = std::move(total);
    gear.set_total_time_us(total_us);
    gear.set_ok_nodes(ok_nodes);
    coverage.Write(gear.mutable_coverage());
  }
  metrics_.GraphAnswered(node_count, distinct.size());
  return absl::OkStatus();
}

class GraphService::Reactor final : public QueuedUnaryReactor {
 public:
  Reactor(GraphService* service, ExecuteQueue& queue, Admission& admission,
          grpc::CallbackServerContext* context, grpc::ByteBuffer* response_bytes)
      : QueuedUnaryReactor(queue, context, "graph"),
        service_(service),
        admission_(admission),
        response_bytes_(response_bytes),
        start_(Clock::now()) {}

  // Runs in the handler, before gRPC binds the reactor to the call, so
  // OnCancel() cannot run concurrently with it (a worker can).
  void Start(const grpc::ByteBuffer& request_bytes) {
    service_->metrics_.RpcStarted(RpcMethod::kGetGraphTiling);
    service_->metrics_.MessageReceived(RpcMethod::kGetGraphTiling);
    admitted_ = admission_.TryAdmit();
    if (!admitted_) {
      Complete(admission_.RefusalError());
      return;
    }
    absl::Status status = ParseRequestBytes(request_bytes, &request_);
    if (status.ok()) status = CheckFields(request_, service_->options_);
    if (status.ok()) status = Submit("; GetGraphTiling shares them with Execute");
    if (!status.ok()) Complete(status);
  }

  void OnDone() override {
    if (admitted_) admission_.Release();
    service_->metrics_.RpcHandled(RpcMethod::kGetGraphTiling, final_code_,
                                  std::chrono::duration<double>(Clock::now() - start_).count());
    delete this;
  }

 private:
  void Work() override {
    absl::Status status = service_->Answer(request_, cancel_flag(), &response_);
    if (cancelled()) status = CancelStatus();
    Complete(status);
  }

  // The one place that finishes the call.
  void Complete(absl::Status status) override {
    status = Conclude(std::move(status), response_, response_bytes_, RpcMethod::kGetGraphTiling,
                      service_->metrics_);
    final_code_ = status.code();
    LogOutcome("GetGraphTiling", request_.client_id(), request_.id(), status);
    Finish(ToGrpcStatus(status));
  }

  GraphService* const service_;
  Admission& admission_;
  grpc::ByteBuffer* const response_bytes_;
  const Clock::time_point start_;
  bool admitted_ = false;
  pb::GraphTilingRequest request_;
  pb::GraphTilingResponse response_;
  // Written by Complete() before Finish(), read by OnDone() after it.
  absl::StatusCode final_code_ = absl::StatusCode::kOk;
};

grpc::ServerUnaryReactor* GraphService::Start(ExecuteQueue& queue, Admission& admission,
                                              grpc::CallbackServerContext* context,
                                              const grpc::ByteBuffer* request_bytes,
                                              grpc::ByteBuffer* response_bytes) {
  auto* reactor = new Reactor(this, queue, admission, context, response_bytes);
  reactor->Start(*request_bytes);
  return reactor;
}

}  // namespace npu::server
