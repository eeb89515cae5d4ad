// The Execute RPC through a real server on 127.0.0.1:0: both tiling paths,
// every error path, the bounded queue, deadlines and cancellation, the drain
// on shutdown and the metrics. Long runs are 4096^3 numerics that the tests
// always cancel; "stopped promptly" is asserted through the service's count
// of runs the emulator stopped on the cancellation flag, never wall-clock.
#include <grpcpp/client_context.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "emulator/emulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/convert.h"
#include "server/service/tiling_service.h"
#include "tests/service/test_server.h"

namespace npu::server {
namespace {

using ::npu::server::testing::LoopbackOptions;
using ::npu::server::testing::ShapeRequest;
using ::npu::server::testing::TestServer;
using ::npu::server::testing::WaitForIdle;
using ::npu::testing::WaitFor;
using ::testing::HasSubstr;
namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;

ServerOptions ExecuteServerOptions(int workers = 2, int max_queued = 16) {
  ServerOptions options = LoopbackOptions();
  options.service.execute.workers = workers;
  options.service.execute.max_queued = max_queued;
  // Room for the long runs below, which are always cancelled.
  options.service.execute.max_numeric_macs = uint64_t{1} << 37;
  return options;
}

pb::ExecuteRequest ExecuteFor(int64_t m, int64_t n, int64_t k) {
  const pb::TilingRequest tiling = ShapeRequest(m, n, k);
  pb::ExecuteRequest request;
  request.set_id("exec");
  *request.mutable_problem() = tiling.problem();
  return request;
}

// A run that takes far longer than any test waits for: 4096^3 numerics on
// one thread plus its fp64 reference.
pb::ExecuteRequest LongRun() {
  pb::ExecuteRequest request = ExecuteFor(4096, 4096, 4096);
  request.set_threads(1);
  return request;
}

grpc::Status CallExecute(TestServer& server, const pb::ExecuteRequest& request,
                         pb::ExecuteResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  return server.stub().Execute(&context, request, response);
}

// One Execute call in flight.
struct AsyncCall {
  grpc::ClientContext context;
  pb::ExecuteRequest request;
  pb::ExecuteResponse response;
  grpc::Status status;
  absl::Notification done;

  void Start(TestServer& server) {
    server.stub().async()->Execute(&context, &request, &response, [this](grpc::Status s) {
      status = std::move(s);
      done.Notify();
    });
  }
};

uint64_t FieldValue(const pb::TilingResponse& response, const std::string& name) {
  for (const pb::TilingField& field : response.fields()) {
    if (field.name() == name) return field.value();
  }
  ADD_FAILURE() << "no field " << name;
  return 0;
}

void SetField(pb::TilingResponse* tiling, const std::string& name, uint64_t value) {
  for (pb::TilingField& field : *tiling->mutable_fields()) {
    if (field.name() == name) field.set_value(value);
  }
}

TEST(ExecuteRpcTest, ProblemPathAnswersTheTimingAndTheErrorReport) {
  TestServer server(ExecuteServerOptions());
  pb::ExecuteRequest request = ExecuteFor(333, 257, 520);
  request.set_seed(11);
  pb::ExecuteResponse response;
  ASSERT_TRUE(CallExecute(server, request, &response).ok());
  EXPECT_EQ(response.id(), "exec");
  EXPECT_FALSE(response.explicit_tiling());
  EXPECT_FALSE(response.tiling().strategy().empty());
  EXPECT_EQ(response.tiling().platform().name(), "ascend950pr");
  EXPECT_TRUE(response.accuracy().passed());
  EXPECT_GT(response.accuracy().max_abs_error(), 0.0);
  const pb::TimingReport& timing = response.timing();
  EXPECT_GT(timing.predicted_cycles(), 0u);
  EXPECT_NEAR(timing.predicted_time_us(), timing.predicted_cycles() / 1650.0, 1e-9);
  EXPECT_GT(timing.cube_utilization(), 0.0);
  EXPECT_LE(timing.cube_utilization(), 1.0);
  EXPECT_FALSE(timing.bound_resource().empty());
  EXPECT_EQ(timing.cores_size(), static_cast<int>(timing.aic_cores() + timing.aiv_cores()));
  EXPECT_FALSE(response.has_c());

  EXPECT_EQ(server.Metric("npu_execute_total", {{"result", "OK"}}), 1);
  EXPECT_EQ(server.Metric("npu_execute_predicted_cube_utilization"), 1);
  EXPECT_EQ(server.Metric("npu_execute_seconds"), 1);
  WaitForIdle(server);
  EXPECT_EQ(
      server.Metric("grpc_server_handled_total", {{"grpc_method", "Execute"}, {"grpc_code", "OK"}}),
      1);
  EXPECT_EQ(server.Metric("npu_execute_queue_depth"), 0);
}

// A static-grid kernel on the Atlas A2: 2 x 2 blocks of 128 x 256 tiles.
pb::ExecuteRequest KernelRun() {
  pb::ExecuteRequest request = ExecuteFor(512, 1024, 1024);
  request.set_platform("ascend910b1");
  pb::KernelSchedule* k = request.mutable_kernel_schedule();
  k->set_kind(pb::KERNEL_SCHEDULE_KIND_STATIC_GRID);
  k->set_block_dim(4);
  k->set_base_m(128);
  k->set_base_n(256);
  k->set_base_k(64);
  k->set_l1_m(128);
  k->set_l1_n(256);
  k->set_l1_k(256);
  k->set_single_core_m(256);
  k->set_single_core_n(512);
  return request;
}

// Errors of a kernel schedule through the RPC: the edge's, the chip's
// architecture for a CANN plan, the work limit (at once, never a hang).
TEST(ExecuteRpcTest, KernelScheduleErrorsThroughTheRpc) {
  ServerOptions options = ExecuteServerOptions();
  options.service.execute.max_simulated_ops = 100;
  TestServer server(options);
  pb::ExecuteResponse response;

  pb::ExecuteRequest no_kind = KernelRun();
  no_kind.mutable_kernel_schedule()->clear_kind();
  grpc::Status status = CallExecute(server, no_kind, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("kernel_schedule.kind: required"));

  pb::ExecuteRequest cann_on_a2 = KernelRun();
  cann_on_a2.clear_kernel_schedule();
  status = CallExecute(server, cann_on_a2, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("DAV_3510 only"));

  pb::ExecuteRequest too_much = KernelRun();
  too_much.set_timing_only(true);
  status = CallExecute(server, too_much, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_execute_simulated_ops"));
  EXPECT_EQ(server.Metric("npu_execute_total", {{"result", "ResourceExhausted"}}), 1);
  WaitForIdle(server);
}

// Needs the emulator's EmulateKernel(): a kernel schedule on the A2 through
// the RPC, timed and checked against the fp64 reference.
TEST(ExecuteRpcTest, KernelScheduleRunsOnTheA2) {
  TestServer server(ExecuteServerOptions());
  pb::ExecuteRequest request = KernelRun();
  request.set_seed(2);
  pb::ExecuteResponse response;
  grpc::Status status = CallExecute(server, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(response.has_tiling());
  EXPECT_EQ(response.kernel_schedule().kind(), pb::KERNEL_SCHEDULE_KIND_STATIC_GRID);
  EXPECT_EQ(response.platform().name(), "ascend910b1");
  EXPECT_EQ(response.platform().npu_arch(), "DAV_2201");
  EXPECT_TRUE(response.accuracy().passed());
  EXPECT_NEAR(response.timing().predicted_time_us(), response.timing().predicted_cycles() / 1850.0,
              1e-9);
  EXPECT_GT(response.timing().msprof().task_duration_us(), 0.0);
  WaitForIdle(server);
}

TEST(ExecuteRpcTest, ExplicitTilingWithAnEditedBaseM) {
  TestServer server(ExecuteServerOptions());
  pb::TilingResponse tiling;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(server.stub().GetTiling(&context, ShapeRequest(512, 512, 512), &tiling).ok());
  }
  ASSERT_EQ(FieldValue(tiling, "baseM"), 128u);
  pb::ExecuteRequest engine = ExecuteFor(512, 512, 512);
  engine.set_timing_only(true);
  pb::ExecuteResponse engine_answer;
  ASSERT_TRUE(CallExecute(server, engine, &engine_answer).ok());

  // "What if baseM were 64?"
  SetField(&tiling, "baseM", 64);
  pb::ExecuteRequest request = ExecuteFor(512, 512, 512);
  *request.mutable_tiling() = tiling;
  request.set_seed(3);
  pb::ExecuteResponse response;
  const grpc::Status status = CallExecute(server, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(response.explicit_tiling());
  EXPECT_EQ(FieldValue(response.tiling(), "baseM"), 64u);
  EXPECT_EQ(response.tiling().block().base_m(), 64u);
  EXPECT_TRUE(response.accuracy().passed());
  EXPECT_NE(response.timing().predicted_cycles(), engine_answer.timing().predicted_cycles());
}

TEST(ExecuteRpcTest, InvalidTilingFieldIsInvalidArgumentNamingIt) {
  TestServer server(ExecuteServerOptions());
  pb::TilingResponse tiling;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(server.stub().GetTiling(&context, ShapeRequest(1024, 1024, 1024), &tiling).ok());
  }
  SetField(&tiling, "baseN", 100);
  pb::ExecuteRequest request = ExecuteFor(1024, 1024, 1024);
  *request.mutable_tiling() = tiling;
  pb::ExecuteResponse response;
  const grpc::Status status = CallExecute(server, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("tiling.fields[baseN]: 100 must be a positive multiple of 16"));
  EXPECT_EQ(server.Metric("npu_execute_total", {{"result", "InvalidArgument"}}), 1);
}

TEST(ExecuteRpcTest, BufferOverflowNamesTheTilingField) {
  TestServer server(ExecuteServerOptions());
  pb::TilingResponse tiling;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(server.stub().GetTiling(&context, ShapeRequest(1024, 1024, 1024), &tiling).ok());
  }
  // 256 x 256 fp32 accumulators, double-buffered: 512 KiB of a 256 KiB L0C.
  SetField(&tiling, "baseM", 256);
  SetField(&tiling, "mL1", 256);
  SetField(&tiling, "l0cDB", 2);
  pb::ExecuteRequest request = ExecuteFor(1024, 1024, 1024);
  *request.mutable_tiling() = tiling;
  request.set_timing_only(true);
  pb::ExecuteResponse response;
  const grpc::Status status = CallExecute(server, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("tiling field baseN (baseM=256, l0cDB=2)=256"));
  EXPECT_THAT(status.error_message(), HasSubstr("overflows L0C"));
}

TEST(ExecuteRpcTest, InlineOperandErrors) {
  ServerOptions options = ExecuteServerOptions();
  options.max_message_bytes = 1 << 20;
  TestServer server(options);
  const tl::MatmulProblem problem = ProblemFromProto(ExecuteFor(64, 64, 64).problem());
  const emu::Tensors tensors = emu::RandomInputs(problem, 1);
  auto tensor = [](const emu::HostTensor& t) {
    pb::Tensor out;
    out.set_dtype(pb::DATA_TYPE_FLOAT16);
    for (int64_t dim : t.shape) out.add_shape(dim);
    out.set_data(t.bytes.data(), t.bytes.size());
    return out;
  };

  // A byte short.
  pb::ExecuteRequest request = ExecuteFor(64, 64, 64);
  *request.mutable_inputs()->mutable_a() = tensor(tensors.a);
  *request.mutable_inputs()->mutable_b() = tensor(tensors.b);
  request.mutable_inputs()->mutable_b()->mutable_data()->pop_back();
  pb::ExecuteResponse response;
  grpc::Status status = CallExecute(server, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("inputs.b.data: 8191 bytes"));

  // An operand larger than the server takes in one message.
  pb::ExecuteRequest oversized = ExecuteFor(1024, 1024, 1024);
  pb::Tensor* a = oversized.mutable_inputs()->mutable_a();
  a->set_dtype(pb::DATA_TYPE_FLOAT16);
  a->add_shape(1024);
  a->add_shape(1024);
  a->set_data(std::string(2 << 20, '\0'));
  *oversized.mutable_inputs()->mutable_b() = *a;
  status = CallExecute(server, oversized, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);

  // GetTiling on the same server is unaffected.
  grpc::ClientContext context;
  pb::TilingResponse tiling;
  EXPECT_TRUE(server.stub().GetTiling(&context, ShapeRequest(64, 64, 64), &tiling).ok());
}

TEST(ExecuteRpcTest, SeedAndInlineBytesGiveTheSameAnswer) {
  TestServer server(ExecuteServerOptions());
  pb::ExecuteRequest seeded = ExecuteFor(200, 96, 130);
  seeded.set_seed(77);
  seeded.set_return_c(true);
  const tl::MatmulProblem problem = ProblemFromProto(seeded.problem());
  const emu::Tensors tensors = emu::RandomInputs(problem, 77);
  pb::ExecuteRequest inlined = seeded;
  for (auto [out, in] : {std::pair{inlined.mutable_inputs()->mutable_a(), &tensors.a},
                         std::pair{inlined.mutable_inputs()->mutable_b(), &tensors.b}}) {
    out->set_dtype(pb::DATA_TYPE_FLOAT16);
    for (int64_t dim : in->shape) out->add_shape(dim);
    out->set_data(in->bytes.data(), in->bytes.size());
  }
  pb::ExecuteResponse a, b;
  ASSERT_TRUE(CallExecute(server, seeded, &a).ok());
  ASSERT_TRUE(CallExecute(server, inlined, &b).ok());
  EXPECT_EQ(a.input_source(), pb::INPUT_SOURCE_SEED);
  EXPECT_EQ(b.input_source(), pb::INPUT_SOURCE_INLINE);
  EXPECT_EQ(a.c().data(), b.c().data());
  EXPECT_EQ(a.accuracy().max_abs_error(), b.accuracy().max_abs_error());
  EXPECT_EQ(a.timing().predicted_cycles(), b.timing().predicted_cycles());
}

TEST(ExecuteRpcTest, FullQueueIsResourceExhaustedWhileGetTilingStillAnswers) {
  TestServer server(ExecuteServerOptions(/*workers=*/1, /*max_queued=*/1));
  const TilingService& service = server.server().service();
  AsyncCall running, waiting;
  running.request = LongRun();
  waiting.request = LongRun();
  running.Start(server);
  ASSERT_TRUE(WaitFor([&] { return service.execute_queue().running() == 1; }));
  waiting.Start(server);
  ASSERT_TRUE(WaitFor([&] { return service.execute_queue().queued() == 1; }));
  EXPECT_EQ(server.Metric("npu_execute_queue_depth"), 1);
  EXPECT_EQ(server.Metric("npu_execute_running"), 1);

  // One worker busy, one run waiting: the next is refused at once.
  pb::ExecuteResponse response;
  const grpc::Status refused = CallExecute(server, ExecuteFor(64, 64, 64), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("emulation queue full"));

  // The emulation is off the gRPC threads: tiling answers go on.
  for (int i = 0; i < 20; ++i) {
    grpc::ClientContext context;
    pb::TilingResponse tiling;
    ASSERT_TRUE(
        server.stub().GetTiling(&context, ShapeRequest(128 + 16 * i, 64, 64), &tiling).ok());
  }

  // Cancelling: the waiting run leaves the queue, the running one stops.
  waiting.context.TryCancel();
  running.context.TryCancel();
  waiting.done.WaitForNotification();
  running.done.WaitForNotification();
  EXPECT_EQ(waiting.status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(running.status.error_code(), grpc::StatusCode::CANCELLED);
  ASSERT_TRUE(WaitFor([&] { return service.execute_runs_interrupted() == 1; }));
  WaitForIdle(server);
  EXPECT_EQ(service.execute_runs_interrupted(), 1u);  // the waiting one never ran
  EXPECT_EQ(server.Metric("npu_execute_total", {{"result", "Canceled"}}), 2);
  EXPECT_EQ(server.Metric("npu_execute_total", {{"result", "ResourceExhausted"}}), 1);
}

TEST(ExecuteRpcTest, ShortDeadlineStopsTheRunningEmulation) {
  TestServer server(ExecuteServerOptions(/*workers=*/1));
  const TilingService& service = server.server().service();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
  pb::ExecuteResponse response;
  const grpc::Status status = server.stub().Execute(&context, LongRun(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The emulator saw its cancellation flag and stopped: the run ends as
  // interrupted rather than completing its numerics and reference check.
  ASSERT_TRUE(WaitFor([&] { return service.execute_runs_interrupted() == 1; }));
  WaitForIdle(server);
  EXPECT_EQ(server.Metric("npu_execute_total", {{"result", "DeadlineExceeded"}}), 1);
  EXPECT_EQ(server.Metric("npu_execute_total", {{"result", "OK"}}), 0);
  // The worker is free again.
  pb::ExecuteResponse next;
  EXPECT_TRUE(CallExecute(server, ExecuteFor(64, 64, 64), &next).ok());
}

TEST(ExecuteRpcTest, ShutdownDrainsQueuedRunsWithinTheWindow) {
  TestServer server(ExecuteServerOptions(/*workers=*/1, /*max_queued=*/8));
  std::vector<std::unique_ptr<AsyncCall>> calls;
  for (int i = 0; i < 4; ++i) {
    auto call = std::make_unique<AsyncCall>();
    call->request = ExecuteFor(256 + 16 * i, 256, 512);
    call->Start(server);
    calls.push_back(std::move(call));
  }
  ASSERT_TRUE(WaitFor([&] { return server.server().service().inflight() == 4; }));
  server.server().Shutdown(absl::Seconds(120));
  for (auto& call : calls) {
    call->done.WaitForNotification();
    EXPECT_TRUE(call->status.ok()) << call->status.error_message();
    EXPECT_TRUE(call->response.accuracy().passed());
  }
}

TEST(ExecuteRpcTest, ShutdownPastTheWindowStopsTheRun) {
  TestServer server(ExecuteServerOptions(/*workers=*/1));
  const TilingService& service = server.server().service();
  AsyncCall call;
  call.request = LongRun();
  call.Start(server);
  ASSERT_TRUE(WaitFor([&] { return service.execute_queue().running() == 1; }));
  server.server().Shutdown(absl::Milliseconds(100));
  call.done.WaitForNotification();
  EXPECT_FALSE(call.status.ok());
  EXPECT_EQ(service.execute_runs_interrupted(), 1u);
  EXPECT_TRUE(WaitFor([&] { return service.execute_queue().running() == 0; }));
}

}  // namespace
}  // namespace npu::server
