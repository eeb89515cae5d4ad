// The training run of the profile-guided release build: built only with
// -DNPU_PGO=GENERATE (scripts/build_release.sh runs it between the two
// builds). It starts the real server on 127.0.0.1 and sends it, over gRPC,
// the calls a graph compiler's build sends: GetTiling over a sweep of shapes,
// dtypes and layouts, in the full (default) and compact views, some with the
// trace; the same with the decision cache on (misses, then hits); a
// long run of one repeated problem in both views; GetTilingBatch streams;
// ListPlatforms.
// Left out on purpose:
//   * invalid requests: GCC moves code that the training never ran out of the
//     hot code (into .text.unlikely), and error paths belong there;
//   * Execute and ADVISE: their code is then compiled as without a profile
//     (-fprofile-partial-training); their time goes to the emulator's loops,
//     not to the per-call path the profile is for.
//
// Exits non-zero when a call ends with a code it should not, so a broken
// server fails the release build instead of training it.
//
//   build/bin/pgo_train [--repeat N]
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "npu/tiling/v1/tiling_service.grpc.pb.h"
#include "prometheus/registry.h"
#include "server/metrics/service_metrics.h"
#include "server/service/server.h"
#include "server/tiling/builtin_strategies.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;

// Client threads; the server's callback threads answer them concurrently,
// as under a build farm's parallel compiles.
constexpr int kClientThreads = 2;

// A problem of the sweep: every combination of these axes.
constexpr int64_t kSizes[] = {1, 16, 96, 256, 1000, 4096, 16384};
constexpr pb::DataType kDataTypes[] = {pb::DATA_TYPE_FLOAT16, pb::DATA_TYPE_BFLOAT16,
                                       pb::DATA_TYPE_FLOAT32};

std::vector<pb::TilingRequest> SweepRequests() {
  std::vector<pb::TilingRequest> requests;
  int serial = 0;
  for (int64_t m : kSizes) {
    for (int64_t n : kSizes) {
      for (int64_t k : kSizes) {
        for (pb::DataType dtype : kDataTypes) {
          ++serial;
          pb::TilingRequest request;
          request.set_id(absl::StrCat("sweep-", serial));
          request.set_client_id("pgo-train");
          pb::MatmulProblem* problem = request.mutable_problem();
          problem->set_m(m);
          problem->set_n(n);
          problem->set_k(k);
          problem->set_dtype_a(dtype);
          problem->set_dtype_b(dtype);
          problem->set_dtype_c(dtype);
          // Layouts and bias vary with the serial number rather than
          // multiplying the sweep.
          problem->set_trans_b(serial % 2 == 0);
          problem->set_trans_a(serial % 7 == 0);
          if (serial % 3 == 0) problem->set_format_b(pb::FORMAT_FRACTAL_NZ);
          if (serial % 5 == 0) {
            problem->set_has_bias(true);
            problem->set_dtype_bias(dtype);
          }
          // Half full answers (the default view), half compact ones (what a
          // launcher needs); one in eight with the strategies' trace.
          if (serial % 2 == 0) {
            request.set_view(pb::RESPONSE_VIEW_COMPACT);
          } else {
            request.set_include_trace(serial % 8 == 1);
          }
          requests.push_back(std::move(request));
        }
      }
    }
  }
  return requests;
}

// CANN's Stream-K golden case (MatMulV3_950_basic_testNZ_streamk), the
// request bench/load_gettiling.sh repeats.
pb::TilingRequest RepeatedRequest(pb::ResponseView view) {
  pb::TilingRequest request;
  request.set_id("load");
  request.set_client_id("pgo-train");
  request.set_view(view);
  pb::MatmulProblem* problem = request.mutable_problem();
  problem->set_m(4096);
  problem->set_n(1280);
  problem->set_k(8192);
  problem->set_dtype_a(pb::DATA_TYPE_FLOAT16);
  problem->set_dtype_b(pb::DATA_TYPE_FLOAT16);
  problem->set_dtype_c(pb::DATA_TYPE_FLOAT16);
  problem->set_trans_b(true);
  problem->set_format_b(pb::FORMAT_FRACTAL_NZ);
  return request;
}

// Counts calls by outcome across the client threads.
struct Tally {
  std::atomic<int64_t> ok{0};
  // INVALID_ARGUMENT or NOT_FOUND: e.g. a shape the chip cannot take.
  std::atomic<int64_t> refused{0};
  std::atomic<int64_t> unexpected{0};
  std::atomic<bool> reported{false};

  void Record(const grpc::Status& status, const std::string& id) {
    if (status.ok()) {
      ok.fetch_add(1, std::memory_order_relaxed);
    } else if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
               status.error_code() == grpc::StatusCode::NOT_FOUND) {
      refused.fetch_add(1, std::memory_order_relaxed);
    } else {
      unexpected.fetch_add(1, std::memory_order_relaxed);
      if (!reported.exchange(true)) {
        std::fprintf(stderr, "pgo_train: request %s failed: code %d: %s\n", id.c_str(),
                     static_cast<int>(status.error_code()), status.error_message().c_str());
      }
    }
  }
};

// Sends `requests` as unary GetTiling calls `repeat` times over, split
// across the client threads.
void SendUnary(pb::TilingService::Stub& stub, const std::vector<pb::TilingRequest>& requests,
               int repeat, Tally& tally) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kClientThreads; ++t) {
    threads.emplace_back([&, t] {
      pb::TilingResponse response;
      for (int r = 0; r < repeat; ++r) {
        for (size_t i = t; i < requests.size(); i += kClientThreads) {
          grpc::ClientContext context;
          tally.Record(stub.GetTiling(&context, requests[i], &response), requests[i].id());
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// One GetTilingBatch stream per `per_stream` requests; every item must get
// an answer.
void SendBatches(pb::TilingService::Stub& stub, const std::vector<pb::TilingRequest>& requests,
                 size_t per_stream, Tally& tally) {
  for (size_t begin = 0; begin < requests.size(); begin += per_stream) {
    const size_t end = std::min(requests.size(), begin + per_stream);
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReaderWriter<pb::TilingRequest, pb::TilingResponse>> stream =
        stub.GetTilingBatch(&context);
    for (size_t i = begin; i < end; ++i) stream->Write(requests[i]);
    stream->WritesDone();
    pb::TilingResponse response;
    size_t answered = 0;
    while (stream->Read(&response)) ++answered;
    const grpc::Status status = stream->Finish();
    if (status.ok() && answered != end - begin) {
      tally.Record(grpc::Status(grpc::StatusCode::DATA_LOSS,
                                absl::StrCat(answered, " answers to ", end - begin, " items")),
                   "batch");
    } else {
      tally.Record(status, "batch");
    }
  }
}

// Runs every phase against a server with `cache_capacity` cached decisions.
bool TrainOne(size_t cache_capacity, int repeat, Tally& tally) {
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  prometheus::Registry prometheus;
  ServiceMetrics metrics(prometheus);
  ServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.service.cache_capacity = cache_capacity;
  absl::StatusOr<std::unique_ptr<TilingServer>> server =
      TilingServer::Start(options, registry, metrics);
  if (!server.ok()) {
    std::fprintf(stderr, "pgo_train: %s\n", server.status().ToString().c_str());
    return false;
  }
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel((*server)->address(), grpc::InsecureChannelCredentials());
  std::unique_ptr<pb::TilingService::Stub> stub = pb::TilingService::NewStub(channel);

  const std::vector<pb::TilingRequest> sweep = SweepRequests();
  // With the cache on, the second pass is all hits.
  SendUnary(*stub, sweep, cache_capacity > 0 ? 2 : 1, tally);
  const std::vector<pb::TilingRequest> repeated = {RepeatedRequest(pb::RESPONSE_VIEW_FULL),
                                                   RepeatedRequest(pb::RESPONSE_VIEW_COMPACT)};
  SendUnary(*stub, repeated, repeat, tally);
  SendBatches(*stub, sweep, 200, tally);
  for (int i = 0; i < 20; ++i) {
    grpc::ClientContext context;
    pb::ListPlatformsResponse platforms;
    tally.Record(stub->ListPlatforms(&context, pb::ListPlatformsRequest(), &platforms),
                 "platforms");
  }
  (*server)->Shutdown(absl::Seconds(5));
  return true;
}

int Main(int argc, char** argv) {
  int repeat = 8000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc && absl::SimpleAtoi(argv[i + 1], &repeat) && repeat > 0) {
      ++i;
    } else {
      std::fprintf(stderr, "usage: pgo_train [--repeat N (N > 0, default 8000)]\n");
      return 2;
    }
  }
  Tally tally;
  // The cache off (the load benchmark's setting), then on (the default).
  if (!TrainOne(0, repeat, tally) || !TrainOne(65536, repeat / 4, tally)) return 1;
  std::printf("pgo_train: %lld calls answered, %lld refused, %lld unexpected\n",
              static_cast<long long>(tally.ok.load()), static_cast<long long>(tally.refused.load()),
              static_cast<long long>(tally.unexpected.load()));
  return tally.unexpected.load() == 0 && tally.ok.load() > 0 ? 0 : 1;
}

}  // namespace
}  // namespace npu::server

int main(int argc, char** argv) { return npu::server::Main(argc, argv); }
