// SIGTERM under load, against the real tiling_server binary.
//
// While unary callers hammer GetTiling and several GetTilingBatch streams are
// open, the test sends SIGTERM. It then checks the shutdown contract:
//   * calls in flight complete: every open stream keeps sending after the
//     server has begun shutting down, and gets every answer, in order, and
//     an OK status;
//   * new calls are refused cleanly, with UNAVAILABLE (retryable), never an
//     error that looks like a bad request or a bug;
//   * nothing is lost: for every caller, answers + refusals == calls sent,
//     and the server's own counters (read from /metrics during the drain)
//     show exactly as many answered calls as the clients received;
//   * the process exits 0 after the drain.
// One gRPC behaviour is allowed for: a call that reaches the server in the
// instant shutdown begins, before gRPC has handed it to a handler, is dropped
// by gRPC core (it "zombifies" unmatched calls) and the client sees
// CANCELLED. Such a call never ran, which the counters confirm, so it is
// counted as refused; the C++ client retries it like UNAVAILABLE.
// Retries are off on the test's channels, so each refusal is seen as sent.
// Waits are bounded only as a guard against hangs; nothing measures time.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.grpc.pb.h"
#include "tests/integration/server_process.h"

namespace npu::server::testing {
namespace {

namespace pb = ::npu::tiling::v1;

constexpr int kUnaryCallers = 4;
constexpr int kStreams = 4;
// Items each stream sends before SIGTERM and after the server has begun
// shutting down.
constexpr int kItemsBefore = 100;
constexpr int kItemsAfter = 100;
// OK calls every unary caller makes before SIGTERM, so the signal lands
// under load.
constexpr int kWarmCalls = 200;
// Consecutive refusals after which a caller stops: the server is gone or
// going for good.
constexpr int kRefusalsToStop = 50;

pb::TilingRequest Request(const std::string& id, int64_t m) {
  pb::TilingRequest request;
  request.set_id(id);
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_m(m);
  p->set_n(1280);
  p->set_k(8192);
  p->set_dtype_a(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_b(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_c(pb::DATA_TYPE_FLOAT16);
  return request;
}

// A channel with its own connection and no retries, so that a refused call
// is reported to the caller instead of being retried away.
std::shared_ptr<grpc::Channel> PrivateChannel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(120);
}

struct CallerTally {
  int sent = 0;
  int ok = 0;
  int refused = 0;    // UNAVAILABLE
  int cancelled = 0;  // CANCELLED after SIGTERM: dropped by gRPC before a handler ran
  int refused_before_sigterm = 0;
  std::map<std::string, int> other;  // "CODE: message" -> count
};

struct StreamTally {
  int sent = 0;
  int answered = 0;
  int answered_in_order_ok = 0;
  grpc::Status status;
};

// What the load threads and the test share.
struct LoadRun {
  explicit LoadRun(std::string server_target)
      : target(std::move(server_target)), warm(kUnaryCallers + kStreams) {}
  const std::string target;
  std::atomic<bool> sigterm_sent{false};
  absl::BlockingCounter warm;
  absl::Notification shutting_down;     // a fresh call was refused after SIGTERM
  absl::Notification streams_continue;  // the unary phase is over and counted
};

// One unary caller: GetTiling calls until kRefusalsToStop refusals in a row
// after SIGTERM, counted into `tally`; counts down `run.warm` after
// kWarmCalls OK calls.
void RunUnaryCaller(LoadRun& run, int c, CallerTally& tally) {
  auto stub = pb::TilingService::NewStub(PrivateChannel(run.target));
  bool counted_warm = false;
  int consecutive_refusals = 0;
  while (consecutive_refusals < kRefusalsToStop) {
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    pb::TilingResponse response;
    const pb::TilingRequest request = Request(absl::StrCat(c, "-", tally.sent), 256 + c);
    ++tally.sent;
    const grpc::Status status = stub->GetTiling(&context, request, &response);
    if (status.ok() && response.id() == request.id()) {
      ++tally.ok;
      consecutive_refusals = 0;
    } else if (status.error_code() == grpc::StatusCode::CANCELLED && run.sigterm_sent.load()) {
      ++tally.cancelled;
    } else if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      ++tally.refused;
      if (run.sigterm_sent.load()) {
        ++consecutive_refusals;
      } else {
        ++tally.refused_before_sigterm;  // a failure, reported by the test
      }
    } else {
      ++tally.other[absl::StrCat(status.error_code(), ": ", status.error_message())];
    }
    // Counted once warm, or once hopeless (the tally checks report it).
    if (!counted_warm && (tally.ok >= kWarmCalls || tally.sent > 100 * kWarmCalls)) {
      counted_warm = true;
      run.warm.DecrementCount();
    }
  }
}

// One batch stream open across the signal: kItemsBefore items answered
// before it, kItemsAfter sent once `run.streams_continue` is notified.
void RunStream(LoadRun& run, int s, StreamTally& tally) {
  auto stub = pb::TilingService::NewStub(PrivateChannel(run.target));
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  auto stream = stub->GetTilingBatch(&context);
  auto send = [&](int count) {
    for (int i = 0; i < count; ++i) {
      if (!stream->Write(Request(absl::StrCat("s", s, "-", tally.sent), 512 + s))) return;
      ++tally.sent;
    }
  };
  auto receive = [&](int count) {
    pb::TilingResponse response;
    for (int i = 0; i < count && stream->Read(&response); ++i) {
      if (response.id() == absl::StrCat("s", s, "-", tally.answered) && !response.has_status()) {
        ++tally.answered_in_order_ok;
      }
      ++tally.answered;
    }
  };
  // Established and answering before the signal...
  send(kItemsBefore);
  receive(kItemsBefore);
  run.warm.DecrementCount();
  // ...and still used after the server has begun shutting down (and after
  // the unary callers are done, so the drain is still on while the test
  // reads the server's counters).
  run.streams_continue.WaitForNotification();
  send(kItemsAfter);
  stream->WritesDone();
  receive(kItemsAfter);
  pb::TilingResponse extra;
  while (stream->Read(&extra)) ++tally.answered;  // none expected
  tally.status = stream->Finish();
}

struct ProbeTally {
  int probes = 0;
  int refusals = 0;
  std::map<std::string, int> other;
};

// New calls on new connections after SIGTERM until one is refused (which
// notifies `run.shutting_down`), or until kHangGuard.
ProbeTally ProbeUntilRefused(LoadRun& run) {
  ProbeTally tally;
  const absl::Time give_up = absl::Now() + kHangGuard;
  while (!run.shutting_down.HasBeenNotified()) {
    auto stub = pb::TilingService::NewStub(PrivateChannel(run.target));
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    pb::TilingResponse response;
    ++tally.probes;
    const grpc::Status status = stub->GetTiling(&context, Request("probe", 128), &response);
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      ++tally.refusals;
      run.shutting_down.Notify();
    } else if (!status.ok()) {
      ++tally.other[absl::StrCat(status.error_code(), ": ", status.error_message())];
    }
    if (absl::Now() > give_up) {
      run.shutting_down.Notify();  // let the threads end; the checks fail
      ADD_FAILURE() << "no call was refused after SIGTERM";
    }
  }
  return tally;
}

struct UnaryTotals {
  int sent = 0;
  int ok = 0;
  int refused = 0;
  int cancelled = 0;
};

// Checks that no unary call was lost (each was answered or refused) and
// returns the totals.
UnaryTotals ExpectNoUnaryCallLost(const std::vector<CallerTally>& callers) {
  UnaryTotals totals;
  for (size_t c = 0; c < callers.size(); ++c) {
    SCOPED_TRACE(absl::StrCat("unary caller ", c));
    const CallerTally& tally = callers[c];
    EXPECT_TRUE(tally.other.empty()) << ::testing::PrintToString(tally.other);
    EXPECT_GE(tally.ok, kWarmCalls);
    EXPECT_GE(tally.refused, kRefusalsToStop);
    EXPECT_EQ(tally.refused_before_sigterm, 0);
    // Nothing lost: every call sent was answered or refused.
    EXPECT_EQ(tally.ok + tally.refused + tally.cancelled, tally.sent);
    totals.sent += tally.sent;
    totals.ok += tally.ok;
    totals.refused += tally.refused;
    totals.cancelled += tally.cancelled;
  }
  return totals;
}

// Checks that every stream got every answer, in order, and ended OK.
void ExpectEveryStreamComplete(const std::vector<StreamTally>& streams,
                               const ServerProcess& server) {
  for (size_t s = 0; s < streams.size(); ++s) {
    SCOPED_TRACE(absl::StrCat("stream ", s));
    const StreamTally& tally = streams[s];
    EXPECT_TRUE(tally.status.ok())
        << tally.status.error_code() << ": " << tally.status.error_message() << "\nserver log:\n"
        << server.Log();
    EXPECT_EQ(tally.sent, kItemsBefore + kItemsAfter);
    EXPECT_EQ(tally.answered, tally.sent);
    EXPECT_EQ(tally.answered_in_order_ok, tally.sent);
  }
}

TEST(ShutdownUnderLoadTest, InFlightCallsCompleteNewOnesAreRefusedNothingIsLost) {
  // A long drain: the open streams must be allowed to finish. It bounds the
  // shutdown only if the test itself hangs.
  absl::StatusOr<std::unique_ptr<ServerProcess>> started =
      ServerProcess::Start(NPU_SERVER_BINARY, {"--drain_seconds=120", "--cache_size=0"});
  ASSERT_TRUE(started.ok()) << started.status();
  ServerProcess& server = **started;
  LoadRun run(server.target());

  std::vector<CallerTally> callers(kUnaryCallers);
  std::vector<StreamTally> streams(kStreams);
  std::vector<std::thread> threads;
  for (int c = 0; c < kUnaryCallers; ++c) {
    threads.emplace_back([&run, &callers, c] { RunUnaryCaller(run, c, callers[c]); });
  }
  for (int s = 0; s < kStreams; ++s) {
    threads.emplace_back([&run, &streams, s] { RunStream(run, s, streams[s]); });
  }

  run.warm.Wait();
  run.sigterm_sent.store(true);
  server.Signal(SIGTERM);
  // A new call on a new connection is refused once the listener is closed.
  const ProbeTally probes = ProbeUntilRefused(run);

  // The unary callers stop after their refusals; the open streams keep the
  // server draining, so /metrics still answers.
  for (int c = 0; c < kUnaryCallers; ++c) threads[c].join();
  const absl::StatusOr<std::string> metrics = HttpGet(server.metrics_port(), "/metrics");
  run.streams_continue.Notify();
  for (int s = 0; s < kStreams; ++s) threads[kUnaryCallers + s].join();
  const int exit_code = server.Wait();

  // --- the contract ------------------------------------------------------------------------
  EXPECT_EQ(exit_code, 0) << server.Log();
  EXPECT_THAT(server.Log(), ::testing::HasSubstr("stopped"));
  EXPECT_TRUE(probes.other.empty()) << ::testing::PrintToString(probes.other);
  EXPECT_GE(probes.refusals, 1);
  const UnaryTotals totals = ExpectNoUnaryCallLost(callers);
  // The server answered exactly the calls the clients received: none of the
  // cancelled ones ran, and no answer went missing on the way back.
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  const std::string labels =
      "grpc_method=\"GetTiling\",grpc_service=\"npu.tiling.v1.TilingService\",grpc_type=\"unary\"";
  const double server_ok =
      MetricValue(*metrics, "grpc_server_handled_total{grpc_code=\"OK\"," + labels + "}");
  const double server_refused =
      MetricValue(*metrics, "grpc_server_handled_total{grpc_code=\"Unavailable\"," + labels + "}");
  const double server_started = MetricValue(*metrics, "grpc_server_started_total{" + labels + "}");
  EXPECT_EQ(server_ok, totals.ok + (probes.probes - probes.refusals));
  // Every call a handler saw ended OK or was refused for the shutdown.
  EXPECT_EQ(server_started, server_ok + server_refused);
  EXPECT_LE(server_refused, totals.refused + probes.refusals);
  ExpectEveryStreamComplete(streams, server);
  std::cout << "unary: sent " << totals.sent << ", answered " << totals.ok << ", refused "
            << totals.refused << " (UNAVAILABLE) + " << totals.cancelled
            << " (CANCELLED, never ran); server counted " << server_ok << " OK and "
            << server_refused << " refused by the service while draining; streams: " << kStreams
            << " x " << kItemsBefore + kItemsAfter << " items, " << kItemsAfter
            << " of them after shutdown began; probes " << probes.probes << "\n";
}

}  // namespace
}  // namespace npu::server::testing
