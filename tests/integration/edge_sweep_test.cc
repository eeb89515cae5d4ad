// Every operator over edge values through the real tiling_server binary: no
// request may bring the process down.
//
// The sweep crosses dims at and around the fractal sizes and CANN's limits
// (1 ... 2^31 - 1), K at zero, one, and around the 32-bit wrap of CANN's K
// byte counts (2^20 ... 2^24) and at the limit, batch shapes of 0 to 4 dims
// (broadcasts, A's batch merged into M, the {1, 0, 2} views with every rank
// of the other operand), every dtype and epilogue, transposes and a
// FRACTAL_NZ B. Problems go out as GetTilingBatch items, so one stream
// carries thousands; a mixed-radix index picks every 811th of the 24 million
// combinations, which still gives each value of each axis thousands of
// problems. Each item must come back, as a plan or as INVALID_ARGUMENT /
// FAILED_PRECONDITION (never INTERNAL or UNKNOWN), and after the sweep the
// server must still answer. The request that once killed the server with
// SIGFPE (a BatchMatMulV3 with k = 4194304) is checked on its own.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.grpc.pb.h"
#include "tests/integration/server_process.h"

namespace npu::server::testing {
namespace {

namespace pb = ::npu::tiling::v1;
using ::testing::HasSubstr;

constexpr int64_t kMaxDim = 2147483647;

struct BatchShape {
  std::vector<int64_t> a;
  std::vector<int64_t> b;
  bool a_view = false;
  bool b_view = false;
};

const std::vector<int64_t>& Dims() {
  static const auto* dims =
      new std::vector<int64_t>{1, 15, 16, 17, 255, 4096, 65535, 1 << 20, kMaxDim};
  return *dims;
}

const std::vector<int64_t>& Ks() {
  static const auto* ks = new std::vector<int64_t>{
      0, 1, 63, 4096, 1 << 20, 1 << 22, (1 << 22) + 16, 12582912, 1 << 24, kMaxDim};
  return *ks;
}

const std::vector<BatchShape>& Batches() {
  static const auto* batches = new std::vector<BatchShape>{
      {{}, {}},
      {{24, 1}, {}},                 // merged into M
      {{3}, {3}},                    // equal
      {{2, 1, 5, 4}, {1, 3, 5, 1}},  // four dims, broadcasts both ways
      {{}, {6}},                     // B batched only
      {{7}, {7}, true, false},       // a view of A, 3-D B
      {{7}, {}, true, false},        // a view of A, 2-D B (CANN's slice)
      {{7}, {8, 7}, true, false},    // a view of A, 4-D B (refused)
      {{4}, {4}, false, true},       // a view of B
      {{65536, 65536}, {1}},         // batch product 2^32
  };
  return *batches;
}

const std::vector<pb::DataType>& Dtypes() {
  static const auto* dtypes = new std::vector<pb::DataType>{
      pb::DATA_TYPE_FLOAT16, pb::DATA_TYPE_BFLOAT16, pb::DATA_TYPE_FLOAT32};
  return *dtypes;
}

const std::vector<pb::FusedOp>& Epilogues() {
  static const auto* ops = new std::vector<pb::FusedOp>{
      pb::FUSED_OP_UNSPECIFIED, pb::FUSED_OP_RELU,      pb::FUSED_OP_ADD,     pb::FUSED_OP_MUL,
      pb::FUSED_OP_GELU_ERF,    pb::FUSED_OP_GELU_TANH, pb::FUSED_OP_16CAST32};
  return *ops;
}

// The problem of combination `index` of the mixed-radix product of the axes.
pb::TilingRequest EdgeRequest(uint64_t index) {
  auto take = [&index](size_t radix) {
    const size_t digit = index % radix;
    index /= radix;
    return digit;
  };
  const pb::Operator ops[] = {pb::OPERATOR_MATMUL_V3, pb::OPERATOR_BATCH_MATMUL_V3,
                              pb::OPERATOR_FUSED_MATMUL};
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_op(ops[take(3)]);
  p->set_m(Dims()[take(Dims().size())]);
  p->set_n(Dims()[take(Dims().size())]);
  p->set_k(Ks()[take(Ks().size())]);
  const pb::DataType dtype = Dtypes()[take(Dtypes().size())];
  p->set_dtype_a(dtype);
  p->set_dtype_b(dtype);
  p->set_dtype_c(dtype);
  const size_t transposes = take(4);
  p->set_trans_a(transposes & 1);
  p->set_trans_b(transposes & 2);
  if (take(3) == 0) p->set_format_b(pb::FORMAT_FRACTAL_NZ);
  if (take(4) == 0) {
    p->set_has_bias(true);
    p->set_dtype_bias(dtype);
  }
  const BatchShape& batch = Batches()[take(Batches().size())];
  const pb::FusedOp epilogue = Epilogues()[take(Epilogues().size())];
  if (p->op() != pb::OPERATOR_MATMUL_V3) {
    for (int64_t d : batch.a) p->add_batch_a(d);
    for (int64_t d : batch.b) p->add_batch_b(d);
    p->set_a_batch_interleaved(batch.a_view);
    p->set_b_batch_interleaved(batch.b_view);
  }
  if (p->op() == pb::OPERATOR_FUSED_MATMUL) {
    p->set_fused_op(epilogue);
    if (epilogue == pb::FUSED_OP_16CAST32) p->set_dtype_c(pb::DATA_TYPE_FLOAT32);
  }
  request.set_id(absl::StrCat(request.problem().op(), "/", index));
  return request;
}

// A valid fp16 problem, to see that the server still answers.
pb::TilingRequest Probe() {
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_m(4096);
  p->set_n(1280);
  p->set_k(8192);
  p->set_dtype_a(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_b(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_c(pb::DATA_TYPE_FLOAT16);
  return request;
}

class EdgeSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<ServerProcess>> server =
        ServerProcess::Start(NPU_SERVER_BINARY, {"--metrics_port=-1", "--drain_seconds=1"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    stub_ = pb::TilingService::NewStub(
        grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (server_ == nullptr) return;
    server_->Signal(SIGTERM);
    EXPECT_EQ(server_->Wait(), 0) << server_->Log();
  }

  grpc::Status Call(const pb::TilingRequest& request, pb::TilingResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    return stub_->GetTiling(&context, request, response);
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<pb::TilingService::Stub> stub_;
};

TEST_F(EdgeSweepTest, TheOldSigfpeRequestIsAnsweredWithCannsFault) {
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_op(pb::OPERATOR_BATCH_MATMUL_V3);
  p->set_m(512);
  p->set_n(128);
  p->set_k(4194304);
  p->set_dtype_a(pb::DATA_TYPE_BFLOAT16);
  p->set_dtype_b(pb::DATA_TYPE_BFLOAT16);
  p->set_dtype_c(pb::DATA_TYPE_BFLOAT16);
  p->set_trans_a(true);
  p->add_batch_a(24);
  p->add_batch_a(1);
  pb::TilingResponse response;
  const grpc::Status status = Call(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("CANN's host tiling divides by zero"));
  EXPECT_TRUE(Call(Probe(), &response).ok()) << server_->Log();
}

TEST_F(EdgeSweepTest, EveryEdgeProblemIsAnsweredAndTheServerLives) {
  uint64_t combinations = 3 * Dims().size() * Dims().size() * Ks().size() * Dtypes().size() * 4 *
                          3 * 4 * Batches().size() * Epilogues().size();
  // A prime stride, coprime with every radix: each axis takes all its values.
  constexpr uint64_t kStride = 811;
  std::vector<pb::TilingRequest> requests;
  for (uint64_t index = 0; index < combinations; index += kStride) {
    requests.push_back(EdgeRequest(index));
  }
  ASSERT_GT(requests.size(), 20000u);

  std::map<std::string, int> by_code;
  int wraps = 0;  // problems that reach the 32-bit wrap that used to kill the server
  constexpr size_t kPerStream = 5000;
  for (size_t first = 0; first < requests.size(); first += kPerStream) {
    const size_t last = std::min(requests.size(), first + kPerStream);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(300));
    auto stream = stub_->GetTilingBatch(&context);
    std::thread writer([&] {
      for (size_t i = first; i < last; ++i) {
        if (!stream->Write(requests[i])) break;
      }
      stream->WritesDone();
    });
    size_t answered = first;
    pb::TilingResponse response;
    while (stream->Read(&response)) {
      ASSERT_LT(answered, last);
      ASSERT_EQ(response.id(), requests[answered].id()) << "answers come back in order";
      const int code = response.has_status() ? response.status().code() : 0;
      if (code != 0) {
        EXPECT_THAT(code, ::testing::AnyOf(grpc::StatusCode::INVALID_ARGUMENT,
                                           grpc::StatusCode::FAILED_PRECONDITION))
            << requests[answered].ShortDebugString() << ": " << response.status().message();
        EXPECT_FALSE(response.status().message().empty());
      }
      ++by_code[code == 0 ? "OK" : response.status().code_name()];
      if (absl::StrContains(response.status().message(), "wraps to 0 in 32 bits")) ++wraps;
      ++answered;
    }
    writer.join();
    const grpc::Status status = stream->Finish();
    ASSERT_TRUE(status.ok()) << status.error_message() << "\n" << server_->Log();
    ASSERT_EQ(answered, last) << "items " << first << ".." << last << " lost answers";
  }
  // Every outcome happens: the sweep reaches plans, input errors and problems
  // no strategy (or CANN itself) can tile.
  EXPECT_GT(by_code["OK"], 1000);
  EXPECT_GT(by_code["INVALID_ARGUMENT"], 1000);
  EXPECT_GT(by_code["FAILED_PRECONDITION"], 100);
  EXPECT_GT(wraps, 0);

  // Still alive and still answering.
  pb::TilingResponse response;
  EXPECT_TRUE(Call(Probe(), &response).ok()) << server_->Log();
  EXPECT_GT(response.block_dim(), 0u);
}

}  // namespace
}  // namespace npu::server::testing
