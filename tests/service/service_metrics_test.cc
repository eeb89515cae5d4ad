#include "server/metrics/service_metrics.h"

#include <map>
#include <set>
#include <string>

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
  const auto families = registry.Collect();
  const auto by_name = ByName(families);
  ASSERT_TRUE(by_name.count("grpc_server_handled_total"));
  // 4 methods x 17 codes, all zero.
  const prometheus::MetricFamily& handled = *by_name.at("grpc_server_handled_total");
  EXPECT_EQ(handled.metric.size(), 4u * 17u);
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
        "npu_execute_predicted_cube_utilization"}) {
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
                                         "strategy",  "result",       "le"};
  for (const auto& family : registry.Collect()) {
    for (const auto& metric : family.metric) {
      for (const auto& label : metric.label) {
        EXPECT_TRUE(allowed.count(label.name)) << family.name << " has label " << label.name;
      }
    }
  }
}

TEST(ServiceMetricsTest, InflightFollowsStartedAndHandled) {
  prometheus::Registry registry;
  ServiceMetrics metrics(registry);
  metrics.RpcStarted(RpcMethod::kGetTilingBatch);
  metrics.RpcStarted(RpcMethod::kGetTiling);
  auto inflight = [&] {
    for (const auto& family : registry.Collect()) {
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
  const auto families = registry.Collect();
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

}  // namespace
}  // namespace npu::server
