#include "server/metrics/service_metrics.h"

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "prometheus/registry.h"

namespace npu::server {
namespace {

std::map<std::string, const prometheus::MetricFamily*> ByName(
    const std::vector<prometheus::MetricFamily>& families) {
  std::map<std::string, const prometheus::MetricFamily*> out;
  for (const auto& family : families) out[family.name] = &family;
  return out;
}

TEST(ServiceMetricsTest, PrecreatesEveryMethodAndCodeAtZero) {
  prometheus::Registry registry;
  ServiceMetrics metrics(registry);
  metrics.AddStrategies({"K_EQUAL_ZERO", "BASIC_ASWT"});
  const auto families = metrics.Collect();
  const auto by_name = ByName(families);
  ASSERT_TRUE(by_name.count("grpc_server_handled_total"));
  // 5 methods x 17 codes, all zero.
  const prometheus::MetricFamily& handled = *by_name.at("grpc_server_handled_total");
  EXPECT_EQ(handled.metric.size(), 5u * 17u);
  std::set<std::string> codes;
  for (const auto& metric : handled.metric) {
    EXPECT_EQ(metric.counter.value, 0);
    for (const auto& label : metric.label) {
      if (label.name == "grpc_code") codes.insert(label.value);
    }
  }
  EXPECT_TRUE(codes.count("OK"));
  EXPECT_TRUE(codes.count("InvalidArgument"));
  EXPECT_TRUE(codes.count("ResourceExhausted"));
  EXPECT_TRUE(codes.count("Canceled"));
  EXPECT_EQ(by_name.at("npu_tiling_decisions_total")->metric.size(), 2u);
  for (const char* name :
       {"grpc_server_started_total", "grpc_server_handling_seconds", "npu_tiling_cache_hits_total",
        "npu_tiling_cache_misses_total", "npu_tiling_decision_seconds", "npu_inflight_requests",
        "npu_tiling_decisions_total", "npu_tiling_request_errors_total",
        "grpc_server_msg_received_total", "grpc_server_msg_sent_total", "npu_execute_total",
        "npu_execute_queue_depth", "npu_execute_running", "npu_execute_seconds",
        "npu_execute_predicted_cube_utilization", "npu_graph_nodes_total",
        "npu_graph_problems_total"}) {
    EXPECT_TRUE(by_name.count(name)) << name;
  }
  // Every Execute outcome exists at zero, so rate() works from the start.
  EXPECT_EQ(by_name.at("npu_execute_total")->metric.size(), 17u);
}

TEST(ServiceMetricsTest, LabelsNeverCarryShapes) {
  prometheus::Registry registry;
  ServiceMetrics metrics(registry);
  metrics.RpcStarted(RpcMethod::kGetTiling);
  metrics.RpcHandled(RpcMethod::kGetTiling, absl::StatusCode::kOk, 0.001);
  metrics.DecisionServed("BASIC_STREAM_K");
  metrics.ExecuteFinished(absl::StatusCode::kOk);
  metrics.ExecuteRan(0.5);
  metrics.ExecutePredicted(0.8);
  const std::set<std::string> allowed = {"grpc_type", "grpc_service", "grpc_method", "grpc_code",
                                         "strategy",  "result",       "le",          "buffer"};
  for (const auto& family : metrics.Collect()) {
    for (const auto& metric : family.metric) {
      for (const auto& label : metric.label) {
        EXPECT_TRUE(allowed.count(label.name)) << family.name << " has label " << label.name;
      }
    }
  }
}

TEST(ServiceMetricsTest, PlanWarningsAreCountedPerBufferFromZero) {
  prometheus::Registry registry;
  ServiceMetrics metrics(registry);
  auto counts = [&] {
    std::map<std::string, double> by_buffer;
    for (const auto& family : metrics.Collect()) {
      if (family.name != "npu_tiling_plan_warnings_total") continue;
      for (const auto& metric : family.metric) {
        by_buffer[metric.label.at(0).value] = metric.counter.value;
      }
    }
    return by_buffer;
  };
  const std::map<std::string, double> zero = {
      {"L0A", 0}, {"L0B", 0}, {"L0C", 0}, {"BT", 0}, {"L1", 0}};
  EXPECT_EQ(counts(), zero);
  metrics.PlanWarned("L0B");
  metrics.PlanWarned("L0B");
  metrics.PlanWarned("L1");
  std::map<std::string, double> expected = zero;
  expected["L0B"] = 2;
  expected["L1"] = 1;
  EXPECT_EQ(counts(), expected);
}

TEST(ServiceMetricsTest, InflightFollowsStartedAndHandled) {
  prometheus::Registry registry;
  ServiceMetrics metrics(registry);
  metrics.RpcStarted(RpcMethod::kGetTilingBatch);
  metrics.RpcStarted(RpcMethod::kGetTiling);
  auto inflight = [&] {
    for (const auto& family : metrics.Collect()) {
      if (family.name == "npu_inflight_requests") return family.metric.at(0).gauge.value;
    }
    return -1.0;
  };
  EXPECT_EQ(inflight(), 2);
  metrics.RpcHandled(RpcMethod::kGetTiling, absl::StatusCode::kInvalidArgument, 0.0001);
  EXPECT_EQ(inflight(), 1);
}

TEST(ServiceMetricsTest, ExecuteSeriesFollowTheCalls) {
  prometheus::Registry registry;
  ServiceMetrics metrics(registry);
  metrics.ExecuteQueueChanged(3, 2);
  metrics.ExecuteFinished(absl::StatusCode::kOk);
  metrics.ExecuteFinished(absl::StatusCode::kResourceExhausted);
  metrics.ExecuteRan(0.02);
  metrics.ExecutePredicted(0.85);
  const auto families = metrics.Collect();
  const auto by_name = ByName(families);
  EXPECT_EQ(by_name.at("npu_execute_queue_depth")->metric.at(0).gauge.value, 3);
  EXPECT_EQ(by_name.at("npu_execute_running")->metric.at(0).gauge.value, 2);
  std::map<std::string, double> results;
  for (const auto& metric : by_name.at("npu_execute_total")->metric) {
    results[metric.label.at(0).value] = metric.counter.value;
  }
  EXPECT_EQ(results["OK"], 1);
  EXPECT_EQ(results["ResourceExhausted"], 1);
  EXPECT_EQ(results["DeadlineExceeded"], 0);
  const prometheus::ClientMetric::Histogram& utilization =
      by_name.at("npu_execute_predicted_cube_utilization")->metric.at(0).histogram;
  EXPECT_EQ(utilization.sample_count, 1u);
  // Buckets 0.1 .. 1.0 (+Inf): 0.85 lands in (0.8, 0.9].
  ASSERT_EQ(utilization.bucket.size(), 11u);
  EXPECT_EQ(utilization.bucket[7].cumulative_count, 0u);
  EXPECT_EQ(utilization.bucket[8].cumulative_count, 1u);
  EXPECT_EQ(by_name.at("npu_execute_seconds")->metric.at(0).histogram.sample_count, 1u);
}

// The per-call series are counted per thread and summed on Collect(): the
// counts from every thread arrive exactly, each value in its "le" bucket,
// the histogram's sum within a nanosecond per value, and a second Collect()
// adds nothing twice.
TEST(ServiceMetricsTest, PerCallSeriesSumEveryThread) {
  prometheus::Registry registry;
  ServiceMetrics metrics(registry);
  metrics.AddStrategies({"BASIC_STREAM_K", "BASIC_ASWT"});
  constexpr int kThreads = 6;
  constexpr int kCalls = 5000;
  // 50 us is a bucket bound (it counts in le="5e-05"), 70 us is not.
  const double kSeconds[] = {0.00005, 0.00007};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        metrics.RpcStarted(RpcMethod::kGetTiling);
        metrics.MessageReceived(RpcMethod::kGetTiling);
        metrics.DecisionServed(t % 2 == 0 ? "BASIC_STREAM_K" : "BASIC_ASWT");
        metrics.MessageSent(RpcMethod::kGetTiling);
        metrics.RpcHandled(RpcMethod::kGetTiling, absl::StatusCode::kOk, kSeconds[i % 2]);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  metrics.RpcStarted(RpcMethod::kGetTilingBatch);  // still open

  for (int collect = 0; collect < 2; ++collect) {
    SCOPED_TRACE(collect);
    const auto families = metrics.Collect();
    const auto by_name = ByName(families);
    auto value = [&](const std::string& name, const std::string& method) {
      for (const auto& metric : by_name.at(name)->metric) {
        std::map<std::string, std::string> labels;
        for (const auto& label : metric.label) labels[label.name] = label.value;
        if (labels["grpc_method"] == method &&
            (!labels.count("grpc_code") || labels["grpc_code"] == "OK")) {
          return metric;
        }
      }
      return prometheus::ClientMetric{};
    };
    constexpr double kTotal = kThreads * kCalls;
    EXPECT_EQ(value("grpc_server_started_total", "GetTiling").counter.value, kTotal);
    EXPECT_EQ(value("grpc_server_msg_received_total", "GetTiling").counter.value, kTotal);
    EXPECT_EQ(value("grpc_server_msg_sent_total", "GetTiling").counter.value, kTotal);
    EXPECT_EQ(value("grpc_server_handled_total", "GetTiling").counter.value, kTotal);
    EXPECT_EQ(value("grpc_server_started_total", "GetTilingBatch").counter.value, 1);
    EXPECT_EQ(by_name.at("npu_inflight_requests")->metric.at(0).gauge.value, 1);

    const prometheus::ClientMetric::Histogram& handling =
        value("grpc_server_handling_seconds", "GetTiling").histogram;
    EXPECT_EQ(handling.sample_count, kThreads * kCalls);
    EXPECT_NEAR(handling.sample_sum, kTotal / 2 * (kSeconds[0] + kSeconds[1]), kTotal * 1e-9);
    // Bounds 50e-6, 100e-6, ...: half the calls in the first bucket, all by
    // the second (cumulative counts).
    ASSERT_GE(handling.bucket.size(), 2u);
    EXPECT_EQ(handling.bucket[0].upper_bound, 0.00005);
    EXPECT_EQ(handling.bucket[0].cumulative_count, kThreads * kCalls / 2);
    EXPECT_EQ(handling.bucket[1].cumulative_count, kThreads * kCalls);

    std::map<std::string, double> decisions;
    for (const auto& metric : by_name.at("npu_tiling_decisions_total")->metric) {
      decisions[metric.label.at(0).value] = metric.counter.value;
    }
    EXPECT_EQ(decisions["BASIC_STREAM_K"], kTotal / 2);
    EXPECT_EQ(decisions["BASIC_ASWT"], kTotal / 2);
  }
}

}  // namespace
}  // namespace npu::server
