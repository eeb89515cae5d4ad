// Prometheus metrics of the tiling service.
//
// The service layer reports RPC and decision events here; this class owns the
// metric families inside a caller-supplied prometheus::Registry. The series
// that move on every call (the grpc_server_* ones, decisions, the cache and
// the decision time) are counted in per-thread stripes (StripedCounts) and
// brought into the registry's families when they are read: main() exposes
// Collectable() on /metrics, tests read Collect(). Names follow
// the go-grpc-prometheus conventions so standard gRPC dashboards work:
//
//   grpc_server_started_total{grpc_type,grpc_service,grpc_method}
//   grpc_server_handled_total{grpc_type,grpc_service,grpc_method,grpc_code}
//   grpc_server_msg_received_total / grpc_server_msg_sent_total{grpc_type,...}
//   grpc_server_handling_seconds{grpc_type,grpc_service,grpc_method} (histogram)
//
// plus the service's own:
//
//   npu_tiling_decisions_total{strategy}   answers served, cache hits included
//   npu_tiling_plan_warnings_total{buffer} answers whose CANN plan overflows a
//                                          buffer (L0A, L0B, L0C, BT, L1)
//   npu_tiling_request_errors_total{grpc_code}  failed requests and batch items
//   npu_tiling_cache_hits_total / npu_tiling_cache_misses_total
//   npu_tiling_decision_seconds            engine time of a cache miss (histogram)
//   npu_inflight_requests                  RPCs (unary calls and open streams) in progress
//
// and the emulator's (Execute):
//
//   npu_execute_total{result}              Execute calls by outcome: the gRPC code name
//   npu_execute_queue_depth                emulations waiting for a worker
//   npu_execute_running                    emulations running on a worker
//   npu_execute_seconds                    host time of one emulation run (histogram)
//   npu_execute_predicted_cube_utilization predicted cube utilization of each
//                                          successful run (histogram, 0.1 .. 1.0)
//
// and ADVISE mode's (GetTiling with mode TILING_MODE_ADVISE):
//
//   npu_advise_total{result}               ADVISE requests by outcome: the gRPC
//                                          code name, or "BudgetExhausted" for
//                                          an OK answer whose budget ran out
//   npu_advise_seconds                     host time of one advisor run on a
//                                          worker (histogram; cache hits and
//                                          queueing excluded)
//
// Labels stay low-cardinality: method, code and strategy names only, never a
// shape or a client id.
#ifndef NPU_SERVER_METRICS_SERVICE_METRICS_H_
#define NPU_SERVER_METRICS_SERVICE_METRICS_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"
#include "server/metrics/striped_counts.h"

namespace npu::server {

// Seconds from `start` to now on the steady clock: the unit of the duration
// histograms.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The RPCs of npu.tiling.v1.TilingService.
enum class RpcMethod { kGetTiling, kGetTilingBatch, kListPlatforms, kExecute, kGetGraphTiling };

class ServiceMetrics {
 public:
  // Registers every family in `registry`, which must outlive this object, and
  // creates the per-method series at zero so rate() works from the first
  // scrape.
  explicit ServiceMetrics(prometheus::Registry& registry);

  ServiceMetrics(const ServiceMetrics&) = delete;
  ServiceMetrics& operator=(const ServiceMetrics&) = delete;

  // Every family of the registry, the per-call series brought up to date
  // first.
  std::vector<prometheus::MetricFamily> Collect();
  // Collect() for prometheus::Exposer::RegisterCollectable(), which keeps a
  // weak reference: hold the pointer while the exposer runs. Must not outlive
  // this object.
  std::shared_ptr<prometheus::Collectable> Collectable();

  // Counts an RPC that the server started handling and raises the in-flight
  // gauge.
  void RpcStarted(RpcMethod method);
  // Counts an RPC that ended with `code` after `seconds` and lowers the
  // in-flight gauge.
  void RpcHandled(RpcMethod method, absl::StatusCode code, double seconds);
  // Counts one request message received / one response message sent.
  void MessageReceived(RpcMethod method);
  void MessageSent(RpcMethod method);

  // Creates the npu_tiling_decisions_total series of `strategies` at zero, so
  // that rates exist before the first answer, and keeps them for
  // DecisionServed() to find without a lock. Call before serving.
  void AddStrategies(const std::vector<std::string>& strategies);
  // Counts an answer produced by `strategy` (fresh or cached).
  void DecisionServed(absl::string_view strategy);
  // Counts an answer whose plan overflows `buffer` ("L0A", "L0B", "L0C",
  // "BT", "L1"; TilingResponse.warnings).
  void PlanWarned(absl::string_view buffer);
  // Records the engine time of one decision.
  void DecisionTimed(double seconds);
  // Counts a request (unary or batch item) that failed with `code`.
  void RequestFailed(absl::StatusCode code);
  void CacheHit();
  void CacheMiss();

  // Sets the emulation queue gauges.
  void ExecuteQueueChanged(int queued, int running);
  // Counts one Execute call that ended with `code`.
  void ExecuteFinished(absl::StatusCode code);
  // Records one emulation run that reached a worker: its host time, and the
  // predicted cube utilization when it succeeded.
  void ExecuteRan(double seconds);
  void ExecutePredicted(double cube_utilization);

  // Counts one ADVISE request that ended with `code`; an OK one whose
  // advisory budget ran out is counted as "BudgetExhausted" instead.
  void AdviseFinished(absl::StatusCode code, bool budget_exhausted);
  // Records the host time of one advisor run.
  void AdviseRan(double seconds);

  // Counts one answered GetGraphTiling: its matmul-like nodes (over every
  // gear) and its distinct problems.
  void GraphAnswered(uint64_t nodes, uint64_t problems);

 private:
  // google.rpc.Code has 17 values, 0..16.
  static constexpr int kNumCodes = 17;
  static constexpr int kNumMethods = 5;

  // A series counted in `counts_` at `index`, and how much of it the
  // registry's series has been given.
  struct CounterLink {
    size_t index = 0;
    prometheus::Counter* series = nullptr;
    uint64_t synced = 0;
  };
  // A histogram counted in `counts_`: its buckets from `first` on (the last
  // one past every bound), then the sum of its values in nanoseconds.
  struct HistogramLink {
    size_t first = 0;
    std::vector<double> bounds;
    prometheus::Histogram* series = nullptr;
    std::vector<uint64_t> synced;  // buckets, then the sum
  };
  struct MethodSeries {
    size_t started = 0;  // indices in counts_
    size_t received = 0;
    size_t sent = 0;
    size_t handled = 0;   // the first of kNumCodes
    size_t handling = 0;  // in histograms_
  };

  // Allocates indices in counts_ while the constructor runs.
  size_t NewCounter(prometheus::Counter& series);
  size_t NewHistogram(prometheus::Histogram& series, std::vector<double> bounds);
  void Observe(size_t histogram, double seconds);
  // Brings the registry's series up to date with counts_.
  void Sync() ABSL_LOCKS_EXCLUDED(sync_mutex_);

  static int CodeIndex(absl::StatusCode code);

  // Strategies AddStrategies() can give a striped count; more are counted
  // in the registry directly.
  static constexpr size_t kMaxStripedStrategies = 64;

  prometheus::Registry& registry_;
  std::vector<CounterLink> counters_;
  std::vector<HistogramLink> histograms_;
  size_t next_index_ = 0;
  std::array<MethodSeries, kNumMethods> methods_;
  prometheus::Family<prometheus::Counter>& decisions_;
  // The series AddStrategies() created, searched in order (a few dozen names),
  // with their index in counts_.
  std::vector<std::pair<std::string, size_t>> strategy_series_;
  size_t strategy_first_ = 0;  // kMaxStripedStrategies indices in counts_
  std::array<prometheus::Counter*, kNumCodes> request_errors_{};
  // npu_tiling_plan_warnings_total, one series per buffer name.
  std::vector<std::pair<std::string, prometheus::Counter*>> plan_warnings_;
  size_t cache_hits_ = 0;
  size_t cache_misses_ = 0;
  size_t decision_seconds_ = 0;  // in histograms_
  prometheus::Gauge& inflight_;  // set by Sync(): started - handled
  std::array<prometheus::Counter*, kNumCodes> execute_results_{};
  prometheus::Gauge& execute_queue_depth_;
  prometheus::Gauge& execute_running_;
  prometheus::Histogram& execute_seconds_;
  prometheus::Histogram& execute_utilization_;
  std::array<prometheus::Counter*, kNumCodes> advise_results_{};
  prometheus::Counter* advise_budget_exhausted_ = nullptr;
  prometheus::Histogram& advise_seconds_;
  prometheus::Counter& graph_nodes_;
  prometheus::Counter& graph_problems_;
  absl::Mutex sync_mutex_;
  // Sized last, once every index is known.
  std::unique_ptr<StripedCounts> counts_;
};

}  // namespace npu::server

#endif  // NPU_SERVER_METRICS_SERVICE_METRICS_H_
