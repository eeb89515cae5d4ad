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
  // 3 methods x 17 codes, all zero.
  const prometheus::MetricFamily& handled = *by_name.at("grpc_server_handled_total");
  EXPECT_EQ(handled.metric.size(), 3u * 17u);
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
        "grpc_server_msg_received_total", "grpc_server_msg_sent_total"}) {
    EXPECT_TRUE(by_name.count(name)) << name;
  }
}

TEST(ServiceMetricsTest, LabelsNeverCarryShapes) {
  prometheus::Registry registry;
  ServiceMetrics metrics(registry);
  metrics.RpcStarted(RpcMethod::kGetTiling);
  metrics.RpcHandled(RpcMethod::kGetTiling, absl::StatusCode::kOk, 0.001);
  metrics.DecisionServed("BASIC_STREAM_K");
  const std::set<std::string> allowed = {"grpc_type", "grpc_service", "grpc_method", "grpc_code",
                                         "strategy"};
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

}  // namespace
}  // namespace npu::server
