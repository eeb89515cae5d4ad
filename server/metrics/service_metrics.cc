#include "server/metrics/service_metrics.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace npu::server {
namespace {

constexpr absl::string_view kServiceName = "npu.tiling.v1.TilingService";

struct MethodInfo {
  RpcMethod method;
  const char* name;
  const char* type;  // go-grpc-prometheus grpc_type
};

constexpr MethodInfo kMethods[] = {
    {RpcMethod::kGetTiling, "GetTiling", "unary"},
    {RpcMethod::kGetTilingBatch, "GetTilingBatch", "bidi_stream"},
    {RpcMethod::kListPlatforms, "ListPlatforms", "unary"},
    {RpcMethod::kExecute, "Execute", "unary"},
    {RpcMethod::kGetGraphTiling, "GetGraphTiling", "unary"},
};

// RPC latency: from ~50 us (a cached unary answer on loopback) to 10 s (a
// long batch stream); roughly x2.5 steps.
prometheus::Histogram::BucketBoundaries HandlingBuckets() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,    0.1,    0.25,    0.5,    1,     2.5,    5,     10};
}

// Engine time: the goal is a median under 2 us per decision, so the buckets
// resolve the microsecond range and stop at 10 ms.
prometheus::Histogram::BucketBoundaries DecisionBuckets() {
  return {0.0000005, 0.000001, 0.000002, 0.000005, 0.00001, 0.000025,
          0.00005,   0.0001,   0.00025,  0.0005,   0.001,   0.01};
}

// Host time of one emulation: from a millisecond (timing-only on a small
// problem) to the minutes a large numerics run may take.
prometheus::Histogram::BucketBoundaries ExecuteBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
}

// Host time of one advice: from a millisecond (a tiny problem) to the
// budget cap of a large one (--max_advisory_ms, at most 10 minutes) plus the
// numerics check that follows it.
prometheus::Histogram::BucketBoundaries AdviseBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600};
}

// Cube utilization is a fraction; tenths are as fine as a dashboard reads it.
prometheus::Histogram::BucketBoundaries UtilizationBuckets() {
  return {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
}

// The name go-grpc-prometheus gives `code` in the grpc_code label, e.g.
// "InvalidArgument", so dashboards written for Go services work unchanged.
absl::string_view PrometheusCodeName(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return "OK";
    case absl::StatusCode::kCancelled:
      return "Canceled";  // Go's spelling
    case absl::StatusCode::kUnknown:
      return "Unknown";
    case absl::StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case absl::StatusCode::kDeadlineExceeded:
      return "DeadlineExceeded";
    case absl::StatusCode::kNotFound:
      return "NotFound";
    case absl::StatusCode::kAlreadyExists:
      return "AlreadyExists";
    case absl::StatusCode::kPermissionDenied:
      return "PermissionDenied";
    case absl::StatusCode::kResourceExhausted:
      return "ResourceExhausted";
    case absl::StatusCode::kFailedPrecondition:
      return "FailedPrecondition";
    case absl::StatusCode::kAborted:
      return "Aborted";
    case absl::StatusCode::kOutOfRange:
      return "OutOfRange";
    case absl::StatusCode::kUnimplemented:
      return "Unimplemented";
    case absl::StatusCode::kInternal:
      return "Internal";
    case absl::StatusCode::kUnavailable:
      return "Unavailable";
    case absl::StatusCode::kDataLoss:
      return "DataLoss";
    case absl::StatusCode::kUnauthenticated:
      return "Unauthenticated";
    default:
      break;
  }
  return "Unknown";
}

}  // namespace

ServiceMetrics::ServiceMetrics(prometheus::Registry& registry)
    : registry_(registry),
      decisions_(prometheus::BuildCounter()
                     .Name("npu_tiling_decisions_total")
                     .Help("Tiling answers served, by the strategy that produced them (cache "
                           "hits included).")
                     .Register(registry)),
      inflight_(prometheus::BuildGauge()
                    .Name("npu_inflight_requests")
                    .Help("RPCs in progress: unary calls and open batch streams.")
                    .Register(registry)
                    .Add({})),
      execute_queue_depth_(prometheus::BuildGauge()
                               .Name("npu_execute_queue_depth")
                               .Help("Execute emulations waiting for a worker.")
                               .Register(registry)
                               .Add({})),
      execute_running_(prometheus::BuildGauge()
                           .Name("npu_execute_running")
                           .Help("Execute emulations running on a worker.")
                           .Register(registry)
                           .Add({})),
      execute_seconds_(prometheus::BuildHistogram()
                           .Name("npu_execute_seconds")
                           .Help("Host time of one Execute emulation run (queueing excluded).")
                           .Register(registry)
                           .Add({}, ExecuteBuckets())),
      execute_utilization_(prometheus::BuildHistogram()
                               .Name("npu_execute_predicted_cube_utilization")
                               .Help("Predicted cube utilization of each successful Execute "
                                     "run, 0..1.")
                               .Register(registry)
                               .Add({}, UtilizationBuckets())),
      advise_seconds_(prometheus::BuildHistogram()
                          .Name("npu_advise_seconds")
                          .Help("Host time of one ADVISE advisor run on a worker (cache hits "
                                "and queueing excluded).")
                          .Register(registry)
                          .Add({}, AdviseBuckets())),
      graph_nodes_(prometheus::BuildCounter()
                       .Name("npu_graph_nodes_total")
                       .Help("Matmul-like nodes listed by GetGraphTiling answers, over every "
                             "gear (lowered or not).")
                       .Register(registry)
                       .Add({})),
      graph_problems_(prometheus::BuildCounter()
                          .Name("npu_graph_problems_total")
                          .Help("Distinct problems GetGraphTiling answers decided (each once "
                                "per call).")
                          .Register(registry)
                          .Add({})) {
  cache_hits_ = NewCounter(prometheus::BuildCounter()
                               .Name("npu_tiling_cache_hits_total")
                               .Help("Decision cache lookups that found an answer.")
                               .Register(registry)
                               .Add({}));
  cache_misses_ = NewCounter(prometheus::BuildCounter()
                                 .Name("npu_tiling_cache_misses_total")
                                 .Help("Decision cache lookups that ran the engine.")
                                 .Register(registry)
                                 .Add({}));
  decision_seconds_ =
      NewHistogram(prometheus::BuildHistogram()
                       .Name("npu_tiling_decision_seconds")
                       .Help("Time the tiling engine spent on one decision (cache misses).")
                       .Register(registry)
                       .Add({}, DecisionBuckets()),
                   DecisionBuckets());
  auto& started = prometheus::BuildCounter()
                      .Name("grpc_server_started_total")
                      .Help("Total number of RPCs started on the server.")
                      .Register(registry);
  auto& handled = prometheus::BuildCounter()
                      .Name("grpc_server_handled_total")
                      .Help(
                          "Total number of RPCs completed on the server, regardless of success "
                          "or failure.")
                      .Register(registry);
  auto& received = prometheus::BuildCounter()
                       .Name("grpc_server_msg_received_total")
                       .Help("Total number of RPC stream messages received on the server.")
                       .Register(registry);
  auto& sent = prometheus::BuildCounter()
                   .Name("grpc_server_msg_sent_total")
                   .Help("Total number of gRPC stream messages sent by the server.")
                   .Register(registry);
  auto& handling = prometheus::BuildHistogram()
                       .Name("grpc_server_handling_seconds")
                       .Help(
                           "Histogram of response latency (seconds) of gRPC that had been "
                           "application-level handled by the server.")
                       .Register(registry);
  auto& errors = prometheus::BuildCounter()
                     .Name("npu_tiling_request_errors_total")
                     .Help("Tiling requests (unary calls and batch items) that failed, by code.")
                     .Register(registry);

  for (const MethodInfo& info : kMethods) {
    const prometheus::Labels labels = {{"grpc_type", info.type},
                                       {"grpc_service", std::string(kServiceName)},
                                       {"grpc_method", info.name}};
    MethodSeries& series = methods_[static_cast<int>(info.method)];
    series.started = NewCounter(started.Add(labels));
    series.received = NewCounter(received.Add(labels));
    series.sent = NewCounter(sent.Add(labels));
    series.handling = NewHistogram(handling.Add(labels, HandlingBuckets()), HandlingBuckets());
    for (int code = 0; code < kNumCodes; ++code) {
      prometheus::Labels with_code = labels;
      with_code["grpc_code"] = std::string(PrometheusCodeName(static_cast<absl::StatusCode>(code)));
      const size_t index = NewCounter(handled.Add(with_code));
      if (code == 0) series.handled = index;
    }
  }
  strategy_first_ = next_index_;
  next_index_ += kMaxStripedStrategies;
  for (int code = 1; code < kNumCodes; ++code) {
    request_errors_[code] = &errors.Add(
        {{"grpc_code", std::string(PrometheusCodeName(static_cast<absl::StatusCode>(code)))}});
  }
  auto& warnings = prometheus::BuildCounter()
                       .Name("npu_tiling_plan_warnings_total")
                       .Help(
                           "Answers whose CANN plan overflows an on-chip buffer of the requested "
                           "chip, by buffer (the answer carries the plan and a warning).")
                       .Register(registry);
  for (const char* buffer : {"L0A", "L0B", "L0C", "BT", "L1"}) {
    plan_warnings_.emplace_back(buffer, &warnings.Add({{"buffer", buffer}}));
  }
  auto& execute = prometheus::BuildCounter()
                      .Name("npu_execute_total")
                      .Help(
                          "Execute calls by outcome (the gRPC code name; OK includes runs "
                          "whose C failed the reference check).")
                      .Register(registry);
  for (int code = 0; code < kNumCodes; ++code) {
    execute_results_[code] = &execute.Add(
        {{"result", std::string(PrometheusCodeName(static_cast<absl::StatusCode>(code)))}});
  }
  auto& advise = prometheus::BuildCounter()
                     .Name("npu_advise_total")
                     .Help(
                         "GetTiling requests in ADVISE mode by outcome (the gRPC code name; "
                         "BudgetExhausted: OK, but the advisory budget ran out).")
                     .Register(registry);
  for (int code = 0; code < kNumCodes; ++code) {
    advise_results_[code] = &advise.Add(
        {{"result", std::string(PrometheusCodeName(static_cast<absl::StatusCode>(code)))}});
  }
  advise_budget_exhausted_ = &advise.Add({{"result", "BudgetExhausted"}});
  counts_ = std::make_unique<StripedCounts>(next_index_);
}

size_t ServiceMetrics::NewCounter(prometheus::Counter& series) {
  counters_.push_back({next_index_, &series, 0});
  return next_index_++;
}

size_t ServiceMetrics::NewHistogram(prometheus::Histogram& series, std::vector<double> bounds) {
  HistogramLink link;
  link.first = next_index_;
  link.series = &series;
  // A bucket per bound, one past them, and the sum.
  next_index_ += bounds.size() + 2;
  link.synced.assign(bounds.size() + 2, 0);
  link.bounds = std::move(bounds);
  histograms_.push_back(std::move(link));
  return histograms_.size() - 1;
}

void ServiceMetrics::Observe(size_t histogram, double seconds) {
  const HistogramLink& link = histograms_[histogram];
  // The first bucket whose bound is at least the value, as Prometheus's
  // "le" (less or equal) buckets count.
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(link.bounds.begin(), link.bounds.end(), seconds) - link.bounds.begin());
  counts_->Add(link.first + bucket);
  // The sum in whole nanoseconds: an integer adds exactly from any stripe.
  if (seconds > 0) {
    counts_->Add(link.first + link.bounds.size() + 1,
                 static_cast<uint64_t>(std::llround(seconds * 1e9)));
  }
}

void ServiceMetrics::Sync() {
  absl::MutexLock lock(&sync_mutex_);
  // Handled before started: a call counted as handled was started before,
  // so the difference is never negative.
  uint64_t handled = 0;
  for (const MethodSeries& series : methods_) {
    for (int code = 0; code < kNumCodes; ++code) handled += counts_->Sum(series.handled + code);
  }
  uint64_t started = 0;
  for (const MethodSeries& series : methods_) started += counts_->Sum(series.started);
  inflight_.Set(static_cast<double>(started - handled));

  for (CounterLink& link : counters_) {
    const uint64_t total = counts_->Sum(link.index);
    if (total != link.synced) link.series->Increment(static_cast<double>(total - link.synced));
    link.synced = total;
  }
  // A value observed while this runs may reach its bucket in this scrape
  // and its sum in the next (or the other way round); each scrape is
  // consistent with the calls it saw to within those few.
  for (HistogramLink& link : histograms_) {
    const size_t num_buckets = link.bounds.size() + 1;
    std::vector<double> increments(num_buckets);
    bool moved = false;
    for (size_t i = 0; i < num_buckets; ++i) {
      const uint64_t total = counts_->Sum(link.first + i);
      increments[i] = static_cast<double>(total - link.synced[i]);
      moved |= total != link.synced[i];
      link.synced[i] = total;
    }
    const uint64_t nanos = counts_->Sum(link.first + num_buckets);
    const double seconds = static_cast<double>(nanos - link.synced[num_buckets]) * 1e-9;
    link.synced[num_buckets] = nanos;
    if (moved) link.series->ObserveMultiple(increments, seconds);
  }
}

std::vector<prometheus::MetricFamily> ServiceMetrics::Collect() {
  Sync();
  return registry_.Collect();
}

namespace {

class MetricsCollectable : public prometheus::Collectable {
 public:
  explicit MetricsCollectable(ServiceMetrics& metrics) : metrics_(metrics) {}
  std::vector<prometheus::MetricFamily> Collect() const override { return metrics_.Collect(); }

 private:
  ServiceMetrics& metrics_;
};

}  // namespace

std::shared_ptr<prometheus::Collectable> ServiceMetrics::Collectable() {
  return std::make_shared<MetricsCollectable>(*this);
}

int ServiceMetrics::CodeIndex(absl::StatusCode code) {
  const int index = static_cast<int>(code);
  // Codes outside google.rpc.Code cannot reach the wire; count them as
  // UNKNOWN, as gRPC would.
  return index >= 0 && index < kNumCodes ? index : static_cast<int>(absl::StatusCode::kUnknown);
}

void ServiceMetrics::RpcStarted(RpcMethod method) {
  counts_->Add(methods_[static_cast<int>(method)].started);
}

void ServiceMetrics::RpcHandled(RpcMethod method, absl::StatusCode code, double seconds) {
  const MethodSeries& series = methods_[static_cast<int>(method)];
  counts_->Add(series.handled + CodeIndex(code));
  Observe(series.handling, seconds);
}

void ServiceMetrics::MessageReceived(RpcMethod method) {
  counts_->Add(methods_[static_cast<int>(method)].received);
}

void ServiceMetrics::MessageSent(RpcMethod method) {
  counts_->Add(methods_[static_cast<int>(method)].sent);
}

void ServiceMetrics::AddStrategies(const std::vector<std::string>& strategies) {
  absl::MutexLock lock(&sync_mutex_);
  for (const std::string& strategy : strategies) {
    prometheus::Counter& series = decisions_.Add({{"strategy", strategy}});
    bool known = false;
    for (const auto& entry : strategy_series_) known |= entry.first == strategy;
    if (known || strategy_series_.size() == kMaxStripedStrategies) continue;
    const size_t index = strategy_first_ + strategy_series_.size();
    strategy_series_.emplace_back(strategy, index);
    counters_.push_back({index, &series, 0});
  }
}

void ServiceMetrics::DecisionServed(absl::string_view strategy) {
  for (const auto& [name, index] : strategy_series_) {
    if (name == strategy) {
      counts_->Add(index);
      return;
    }
  }
  // Not registered up front: Family::Add finds or creates the series under
  // the family's lock. Strategy names come from the registry, so the label
  // set stays small.
  decisions_.Add({{"strategy", std::string(strategy)}}).Increment();
}

void ServiceMetrics::PlanWarned(absl::string_view buffer) {
  // Rare (custom platforms mostly): a registry counter, no stripes.
  for (auto& [name, series] : plan_warnings_) {
    if (name == buffer) series->Increment();
  }
}

void ServiceMetrics::DecisionTimed(double seconds) { Observe(decision_seconds_, seconds); }

void ServiceMetrics::RequestFailed(absl::StatusCode code) {
  const int index = CodeIndex(code);
  if (index == 0) return;
  request_errors_[index]->Increment();
}

void ServiceMetrics::ExecuteQueueChanged(int queued, int running) {
  execute_queue_depth_.Set(queued);
  execute_running_.Set(running);
}

void ServiceMetrics::ExecuteFinished(absl::StatusCode code) {
  execute_results_[CodeIndex(code)]->Increment();
}

void ServiceMetrics::ExecuteRan(double seconds) { execute_seconds_.Observe(seconds); }

void ServiceMetrics::ExecutePredicted(double cube_utilization) {
  execute_utilization_.Observe(cube_utilization);
}

void ServiceMetrics::AdviseFinished(absl::StatusCode code, bool budget_exhausted) {
  if (code == absl::StatusCode::kOk && budget_exhausted) {
    advise_budget_exhausted_->Increment();
    return;
  }
  advise_results_[CodeIndex(code)]->Increment();
}

void ServiceMetrics::AdviseRan(double seconds) { advise_seconds_.Observe(seconds); }

void ServiceMetrics::GraphAnswered(uint64_t nodes, uint64_t problems) {
  graph_nodes_.Increment(static_cast<double>(nodes));
  graph_problems_.Increment(static_cast<double>(problems));
}

void ServiceMetrics::CacheHit() { counts_->Add(cache_hits_); }
void ServiceMetrics::CacheMiss() { counts_->Add(cache_misses_); }

}  // namespace npu::server
