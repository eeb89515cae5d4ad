// Malformed requests through the real tiling_server binary.
//
// One table, kCases, lists requests that are wrong in exactly one way: every
// numeric field at 0, negative, at its limit and past it; unknown enum
// numbers; dtype mixes CANN rejects; FRACTAL_NZ storage shapes that do not
// hold B; oversized strings and repeated fields. Each case is a small edit of
// a valid request, so the error can only come from that edit. Every row goes
// through the server twice: as a unary GetTiling call, and as one item of a
// GetTilingBatch stream (where the error travels in the item's status and the
// stream goes on). The expected message names the field.
//
// Rows at a limit that is still valid expect OK, so the table also pins the
// boundaries. Message-size and batch-length cases follow as separate tests
// (bytes that are not a request at all: bad_bytes_test.cc). The server runs with small --max_batch
// and
// --max_message_bytes so that "past the limit" is cheap to reach.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.grpc.pb.h"
#include "tests/integration/server_process.h"

namespace npu::server::testing {
namespace {

namespace pb = ::npu::tiling::v1;
using ::testing::HasSubstr;

constexpr int kMaxBatch = 64;
constexpr int kMaxMessageBytes = 64 * 1024;
constexpr int64_t kMaxDim = 2147483647;     // CANN's INT32_MAX dimension limit
constexpr int64_t kMaxStride = 4294967295;  // 32-bit tiling-data stride fields
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// A valid fp16 1024 x 1024 x 1024 problem on the default platform.
pb::TilingRequest ValidRequest() {
  pb::TilingRequest request;
  request.set_id("bad-input");
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_m(1024);
  p->set_n(1024);
  p->set_k(1024);
  p->set_dtype_a(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_b(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_c(pb::DATA_TYPE_FLOAT16);
  return request;
}

// B in FRACTAL_NZ: for an un-transposed fp16 B of k x n = 1024 x 1024, the
// canonical storage is [n/16, k/16, 16, 16] = [64, 64, 16, 16].
void MakeNz(pb::MatmulProblem* p) { p->set_format_b(pb::FORMAT_FRACTAL_NZ); }

void SetStorage(pb::MatmulProblem* p, std::vector<int64_t> dims) {
  MakeNz(p);
  p->clear_storage_shape_b();
  for (int64_t d : dims) p->add_storage_shape_b(d);
}

// A rank-3 slice view of A: 4 batches of 256 rows, rows 1024 apart.
void MakeSlice3(pb::MatmulProblem* p) {
  pb::SliceView* s = p->mutable_a_slice();
  s->set_enabled(true);
  s->set_rank(3);
  s->set_batch(4);
  s->set_row_stride(1024);
  s->set_batch_stride(256 * 1024);
}

struct Case {
  const char* name;
  std::function<void(pb::TilingRequest*)> edit;
  grpc::StatusCode code;
  // A substring the error message must contain: the field's name. Empty for
  // OK rows.
  const char* field;
};

#define P(body)                                  \
  [](pb::TilingRequest* r) {                     \
    pb::MatmulProblem* p = r->mutable_problem(); \
    body;                                        \
  }
#define O(body)                                                 \
  [](pb::TilingRequest* r) {                                    \
    pb::PlatformOverrides* o = r->mutable_platform_overrides(); \
    body;                                                       \
  }
constexpr grpc::StatusCode kOk = grpc::StatusCode::OK;
constexpr grpc::StatusCode kInvalid = grpc::StatusCode::INVALID_ARGUMENT;
constexpr grpc::StatusCode kNotFound = grpc::StatusCode::NOT_FOUND;

const std::vector<Case>& Cases() {
  static const std::vector<Case>* cases = new std::vector<Case>{
      // --- m, n, k: 0, negative, at the limit, past it -------------------------------------
      {"MZero", P(p->set_m(0)), kInvalid, "m=0"},
      {"MNegative", P(p->set_m(-1)), kInvalid, "m=-1"},
      {"MInt64Min", P(p->set_m(std::numeric_limits<int64_t>::min())), kInvalid, "field m="},
      {"MAtLimit", P(p->set_m(kMaxDim); p->set_k(16); p->set_n(16)), kOk, ""},
      {"MPastLimit", P(p->set_m(kMaxDim + 1)), kInvalid, "m=2147483648"},
      {"NZero", P(p->set_n(0)), kInvalid, "n=0"},
      {"NNegative", P(p->set_n(-7)), kInvalid, "n=-7"},
      {"NAtLimit", P(p->set_n(kMaxDim); p->set_m(16); p->set_k(16)), kOk, ""},
      {"NPastLimit", P(p->set_n(kInt64Max)), kInvalid, "field n="},
      {"KZeroIsValid", P(p->set_k(0)), kOk, ""},
      {"KZeroWithBias",
       P(p->set_k(0); p->set_has_bias(true); p->set_dtype_bias(pb::DATA_TYPE_FLOAT16)), kInvalid,
       "k=0"},
      {"KNegative", P(p->set_k(-1)), kInvalid, "k=-1"},
      // K = 0 fills C with a vector kernel whose 32-bit totalDataAmount
      // bounds m * n (found by the tiling_request fuzzer).
      {"KZeroWithMTimesNPast32Bits", P(p->set_k(0); p->set_m(131072); p->set_n(65536)), kInvalid,
       "problem: K_EQUAL_ZERO"},
      {"KAtLimit", P(p->set_k(kMaxDim); p->set_m(16); p->set_n(16)), kOk, ""},
      {"KPastLimit", P(p->set_k(kMaxDim + 1)), kInvalid, "k=2147483648"},
      {"AllDimsAtLimitExceedTensorBytes",
       P(p->set_m(kMaxDim); p->set_n(kMaxDim); p->set_k(kMaxDim)), kInvalid, "tensor A"},
      // --- enums: unspecified and unknown numbers --------------------------------------------
      {"DtypeAUnspecified", P(p->set_dtype_a(pb::DATA_TYPE_UNSPECIFIED)), kInvalid,
       "problem.dtype_a"},
      {"DtypeAUnknown", P(p->set_dtype_a(static_cast<pb::DataType>(99))), kInvalid,
       "problem.dtype_a"},
      {"DtypeBNegative", P(p->set_dtype_b(static_cast<pb::DataType>(-1))), kInvalid,
       "problem.dtype_b"},
      {"DtypeCUnknown", P(p->set_dtype_c(static_cast<pb::DataType>(99))), kInvalid,
       "problem.dtype_c"},
      {"DtypeBiasMissing", P(p->set_has_bias(true)), kInvalid, "problem.dtype_bias"},
      {"DtypeBiasUnknownWithoutBias", P(p->set_dtype_bias(static_cast<pb::DataType>(1000))),
       kInvalid, "problem.dtype_bias"},
      {"FormatAUnknown", P(p->set_format_a(static_cast<pb::Format>(3))), kInvalid,
       "problem.format_a"},
      {"FormatBNegative", P(p->set_format_b(static_cast<pb::Format>(-2))), kInvalid,
       "problem.format_b"},
      {"FormatCUnknown", P(p->set_format_c(static_cast<pb::Format>(77))), kInvalid,
       "problem.format_c"},
      // --- dtype mixes and layouts CANN rejects ----------------------------------------------
      {"DtypeAFloat16BBfloat16", P(p->set_dtype_b(pb::DATA_TYPE_BFLOAT16)), kInvalid,
       "dtype_a/dtype_b"},
      {"DtypeFloat32InFloat16Out",
       P(p->set_dtype_a(pb::DATA_TYPE_FLOAT32); p->set_dtype_b(pb::DATA_TYPE_FLOAT32)), kInvalid,
       "dtype_a/dtype_b/dtype_c"},
      {"DtypeBfloat16InFloat16Out",
       P(p->set_dtype_a(pb::DATA_TYPE_BFLOAT16); p->set_dtype_b(pb::DATA_TYPE_BFLOAT16)),
       kInvalid, "dtype_c"},
      {"DtypeFloat16InFloat32OutIsValid", P(p->set_dtype_c(pb::DATA_TYPE_FLOAT32)), kOk, ""},
      {"DtypeBiasBfloat16ForFloat16",
       P(p->set_has_bias(true); p->set_dtype_bias(pb::DATA_TYPE_BFLOAT16)), kInvalid,
       "dtype_bias"},
      {"DtypeBiasFloat16ForFloat32",
       P(p->set_dtype_a(pb::DATA_TYPE_FLOAT32); p->set_dtype_b(pb::DATA_TYPE_FLOAT32);
         p->set_dtype_c(pb::DATA_TYPE_FLOAT32); p->set_has_bias(true);
         p->set_dtype_bias(pb::DATA_TYPE_FLOAT16)),
       kInvalid, "dtype_bias"},
      {"FormatANz", P(p->set_format_a(pb::FORMAT_FRACTAL_NZ)), kInvalid, "format_a"},
      {"FormatCNz", P(p->set_format_c(pb::FORMAT_FRACTAL_NZ)), kInvalid, "format_c"},
      {"Hf32WithGroupAccumulation",
       P(p->set_dtype_a(pb::DATA_TYPE_FLOAT32); p->set_dtype_b(pb::DATA_TYPE_FLOAT32);
         p->set_dtype_c(pb::DATA_TYPE_FLOAT32); p->set_hf32(true); p->set_force_grp_acc_fp32(true)),
       kInvalid, "hf32"},
      {"DeterministicLevelNegative", P(p->set_deterministic_level(-1)), kInvalid,
       "deterministic_level=-1"},
      {"DeterministicLevelAtLimit", P(p->set_deterministic_level(3)), kOk, ""},
      {"DeterministicLevelPastLimit", P(p->set_deterministic_level(4)), kInvalid,
       "deterministic_level=4"},
      // --- FRACTAL_NZ storage shapes of B ----------------------------------------------------
      {"StorageCanonicalIsValid", P(SetStorage(p, {64, 64, 16, 16})), kOk, ""},
      {"StorageWithNdFormat", P(p->add_storage_shape_b(64)), kInvalid, "storage_shape_b"},
      {"StorageRank3", P(SetStorage(p, {64, 64, 256})), kInvalid, "storage_shape_b"},
      {"StorageRank8IsValid", P(SetStorage(p, {1, 1, 1, 1, 64, 64, 16, 16})), kOk, ""},
      {"StorageRank9", P(SetStorage(p, {1, 1, 1, 1, 1, 64, 64, 16, 16})), kInvalid,
       "problem.storage_shape_b"},
      {"StorageZeroDim", P(SetStorage(p, {0, 64, 16, 16})), kInvalid, "storage_shape_b"},
      {"StorageNegativeDim", P(SetStorage(p, {64, -64, 16, 16})), kInvalid, "storage_shape_b"},
      {"StorageDimPastLimit", P(SetStorage(p, {64, kMaxDim + 1, 16, 16})), kInvalid,
       "storage_shape_b"},
      {"StorageRowsMismatch", P(SetStorage(p, {64, 63, 16, 16})), kInvalid, "storage_shape_b"},
      {"StorageColsMismatch", P(SetStorage(p, {32, 64, 16, 16})), kInvalid, "storage_shape_b"},
      {"StorageForTransposedB", P(p->set_trans_b(true); p->set_n(512); SetStorage(p, {32, 64, 16, 16})),
       kInvalid, "storage_shape_b"},
      {"StorageHugeRepeated",
       [](pb::TilingRequest* r) {
         pb::MatmulProblem* p = r->mutable_problem();
         MakeNz(p);
         for (int i = 0; i < 10000; ++i) p->add_storage_shape_b(16);
       },
       kInvalid, "problem.storage_shape_b"},
      // --- slice views of A ------------------------------------------------------------------
      {"SliceRankZero", P(p->mutable_a_slice()->set_enabled(true)), kInvalid,
       "problem.a_slice.rank"},
      {"SliceRankNegative", P(p->mutable_a_slice()->set_enabled(true);
                              p->mutable_a_slice()->set_rank(-3)),
       kInvalid, "a_slice.rank"},
      {"SliceRankFour", P(MakeSlice3(p); p->mutable_a_slice()->set_rank(4)), kInvalid,
       "a_slice.rank"},
      {"SliceRank3IsValid", P(MakeSlice3(p)), kOk, ""},
      {"SliceWithTransposedA", P(MakeSlice3(p); p->set_trans_a(true)), kInvalid, "a_slice"},
      {"SliceRowStrideZero", P(MakeSlice3(p); p->mutable_a_slice()->set_row_stride(0)),
       kInvalid, "a_slice.row_stride"},
      {"SliceRowStrideBelowK", P(MakeSlice3(p); p->mutable_a_slice()->set_row_stride(1023)),
       kInvalid, "a_slice.row_stride"},
      {"SliceRowStridePastLimit",
       P(MakeSlice3(p); p->mutable_a_slice()->set_rank(2);
         p->mutable_a_slice()->set_row_stride(kMaxStride + 1)),
       kInvalid, "a_slice.row_stride"},
      {"SliceRowStrideAtLimit",
       P(MakeSlice3(p); p->mutable_a_slice()->set_rank(2);
         p->mutable_a_slice()->set_row_stride(kMaxStride)),
       kOk, ""},
      {"SliceBatchZero", P(MakeSlice3(p); p->mutable_a_slice()->set_batch(0)), kInvalid,
       "a_slice.batch"},
      {"SliceBatchNegative", P(MakeSlice3(p); p->mutable_a_slice()->set_batch(-4)), kInvalid,
       "a_slice.batch"},
      {"SliceBatchNotDividingM", P(MakeSlice3(p); p->mutable_a_slice()->set_batch(3)), kInvalid,
       "a_slice.batch"},
      {"SliceBatchPastM", P(MakeSlice3(p); p->mutable_a_slice()->set_batch(2048)), kInvalid,
       "a_slice.batch"},
      {"SliceBatchStrideOverlapping",
       P(MakeSlice3(p); p->mutable_a_slice()->set_batch_stride(256 * 1024 - 1)), kInvalid,
       "a_slice.batch_stride"},
      {"SliceBatchStrideNegative",
       P(MakeSlice3(p); p->mutable_a_slice()->set_batch_stride(-1)), kInvalid,
       "a_slice.batch_stride"},
      {"SliceBatchStridePastLimit",
       P(MakeSlice3(p); p->mutable_a_slice()->set_batch_stride(kMaxStride + 1)), kInvalid,
       "a_slice.batch_stride"},
      // --- platform overrides: 0, at the limit, past it --------------------------------------
      {"AicNumZero", O(o->set_aic_num(0)), kInvalid, "platform_overrides.aic_num"},
      {"AicNumAtLimit", O(o->set_aic_num(1024)), kOk, ""},
      {"AicNumPastLimit", O(o->set_aic_num(1025)), kInvalid, "platform_overrides.aic_num"},
      {"AicNumWrappedNegative", O(o->set_aic_num(static_cast<uint32_t>(-1))), kInvalid,
       "platform_overrides.aic_num"},
      {"AivNumZero", O(o->set_aiv_num(0)), kInvalid, "platform_overrides.aiv_num"},
      {"AivNumPastLimit", O(o->set_aiv_num(2049)), kInvalid, "platform_overrides.aiv_num"},
      {"L1BytesZero", O(o->set_l1_bytes(0)), kInvalid, "platform_overrides.l1_bytes"},
      {"L1BytesBelowMinimum", O(o->set_l1_bytes(16 * 1024 - 1)), kInvalid,
       "platform_overrides.l1_bytes"},
      {"L1BytesPastLimit", O(o->set_l1_bytes(uint64_t{64} << 20 | 1)), kInvalid,
       "platform_overrides.l1_bytes"},
      {"L0aBytesZero", O(o->set_l0a_bytes(0)), kInvalid, "platform_overrides.l0a_bytes"},
      // In range, but above L1 (found by the tiling_request fuzzer: it made
      // BASIC_ASWT divide by zero).
      {"L0aBytesAboveL1", O(o->set_l0a_bytes(uint64_t{8} << 20)), kInvalid,
       "platform: l0a_bytes=8388608"},
      {"L1BytesBelowL0b", O(o->set_l1_bytes(32 * 1024)), kInvalid, "must not exceed l1_bytes"},
      {"L0bBytesPastLimit", O(o->set_l0b_bytes(uint64_t{16} << 20 | 1)), kInvalid,
       "platform_overrides.l0b_bytes"},
      {"L0cBytesMax64", O(o->set_l0c_bytes(std::numeric_limits<uint64_t>::max())), kInvalid,
       "platform_overrides.l0c_bytes"},
      {"UbBytesZero", O(o->set_ub_bytes(0)), kInvalid, "platform_overrides.ub_bytes"},
      {"L2BytesZero", O(o->set_l2_bytes(0)), kInvalid, "platform_overrides.l2_bytes"},
      {"L2BytesPastLimit", O(o->set_l2_bytes((uint64_t{64} << 30) + 1)), kInvalid,
       "platform_overrides.l2_bytes"},
      {"BtBytesZero", O(o->set_bt_bytes(0)), kInvalid, "platform_overrides.bt_bytes"},
      {"CubeFreqZero", O(o->set_cube_freq_mhz(0)), kInvalid, "platform_overrides.cube_freq_mhz"},
      {"CubeFreqPastLimit", O(o->set_cube_freq_mhz(100001)), kInvalid,
       "platform_overrides.cube_freq_mhz"},
      {"DdrBandwidthZero", O(o->set_ddr_bytes_per_cycle(0)), kInvalid,
       "platform_overrides.ddr_bytes_per_cycle"},
      {"L2BandwidthPastLimit", O(o->set_l2_bytes_per_cycle((1u << 20) + 1)), kInvalid,
       "platform_overrides.l2_bytes_per_cycle"},
      // --- the request envelope --------------------------------------------------------------
      {"ProblemMissing", [](pb::TilingRequest* r) { r->clear_problem(); }, kInvalid, "problem"},
      {"IdAtLimit", [](pb::TilingRequest* r) { r->set_id(std::string(256, 'i')); }, kOk, ""},
      {"IdPastLimit", [](pb::TilingRequest* r) { r->set_id(std::string(257, 'i')); }, kInvalid,
       "id: at most 256 bytes"},
      {"ClientIdPastLimit",
       [](pb::TilingRequest* r) { r->set_client_id(std::string(129, 'c')); }, kInvalid,
       "client_id"},
      {"PlatformUnknown", [](pb::TilingRequest* r) { r->set_platform("ascend310"); }, kNotFound,
       "platform"},
      {"PlatformPastLimit", [](pb::TilingRequest* r) { r->set_platform(std::string(65, 'p')); },
       kInvalid, "platform: at most 64 bytes"},
      {"ForcedStrategyUnknown",
       [](pb::TilingRequest* r) { r->set_forced_strategy("BASIC_FAST"); }, kNotFound,
       "forced_strategy"},
      {"ForcedStrategyPastLimit",
       [](pb::TilingRequest* r) { r->set_forced_strategy(std::string(65, 's')); }, kInvalid,
       "forced_strategy: at most 64 bytes"},
      {"ViewUnknown",
       [](pb::TilingRequest* r) { r->set_view(static_cast<pb::ResponseView>(3)); }, kInvalid,
       "view: unknown view 3"},
      {"ViewNegative",
       [](pb::TilingRequest* r) { r->set_view(static_cast<pb::ResponseView>(-1)); }, kInvalid,
       "view: unknown view -1"},
      {"ViewCompactIsValid", [](pb::TilingRequest* r) { r->set_view(pb::RESPONSE_VIEW_COMPACT); },
       kOk, ""},
  };
  return *cases;
}
#undef P
#undef O

// The server binary, started once for the whole suite.
class BadInputTest : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
        NPU_SERVER_BINARY, {absl::StrCat("--max_batch=", kMaxBatch),
                            absl::StrCat("--max_message_bytes=", kMaxMessageBytes),
                            "--metrics_port=-1", "--drain_seconds=1"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
    channel_ = new std::shared_ptr<grpc::Channel>(
        grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
    stub_ = pb::TilingService::NewStub(*channel_).release();
  }

  static void TearDownTestSuite() {
    delete stub_;
    delete channel_;
    if (server_ != nullptr) {
      server_->Signal(SIGTERM);
      EXPECT_EQ(server_->Wait(), 0) << server_->Log();
      delete server_;
    }
  }

  static grpc::Status Call(const pb::TilingRequest& request, pb::TilingResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    return stub_->GetTiling(&context, request, response);
  }

  struct BatchResult {
    std::vector<pb::TilingResponse> responses;
    grpc::Status status;
  };
  static BatchResult Batch(const std::vector<pb::TilingRequest>& requests) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto stream = stub_->GetTilingBatch(&context);
    std::thread writer([&] {
      for (const pb::TilingRequest& request : requests) {
        if (!stream->Write(request)) break;
      }
      stream->WritesDone();
    });
    BatchResult result;
    pb::TilingResponse response;
    while (stream->Read(&response)) result.responses.push_back(response);
    writer.join();
    result.status = stream->Finish();
    return result;
  }

  static ServerProcess* server_;
  static std::shared_ptr<grpc::Channel>* channel_;
  static pb::TilingService::Stub* stub_;
};

ServerProcess* BadInputTest::server_ = nullptr;
std::shared_ptr<grpc::Channel>* BadInputTest::channel_ = nullptr;
pb::TilingService::Stub* BadInputTest::stub_ = nullptr;

TEST(BadInputTableTest, HasAtLeastThirtyMalformedRows) {
  int malformed = 0;
  for (const Case& c : Cases()) malformed += c.code != kOk;
  EXPECT_GE(malformed, 30);
}

TEST_P(BadInputTest, UnaryCallGetsTheCodeAndNamesTheField) {
  const Case& c = GetParam();
  pb::TilingRequest request = ValidRequest();
  c.edit(&request);
  pb::TilingResponse response;
  const grpc::Status status = Call(request, &response);
  EXPECT_EQ(status.error_code(), c.code) << status.error_message();
  if (c.code != kOk) {
    EXPECT_THAT(status.error_message(), HasSubstr(c.field));
  } else {
    EXPECT_EQ(response.id(), request.id());
    EXPECT_GT(response.block_dim(), 0u);
  }
}

TEST_P(BadInputTest, BatchItemCarriesTheCodeAndTheStreamGoesOn) {
  const Case& c = GetParam();
  pb::TilingRequest bad = ValidRequest();
  bad.set_id("edited");
  c.edit(&bad);
  pb::TilingRequest good = ValidRequest();
  good.set_id("after");
  const BatchResult result = Batch({bad, good});
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(result.responses.size(), 2u);
  const pb::TilingResponse& item = result.responses[0];
  if (c.code != kOk) {
    EXPECT_EQ(item.status().code(), static_cast<int>(c.code)) << item.status().message();
    EXPECT_THAT(item.status().message(), HasSubstr(c.field));
  } else {
    EXPECT_FALSE(item.has_status()) << item.status().message();
  }
  EXPECT_EQ(item.id(), bad.id());
  EXPECT_EQ(result.responses[1].id(), "after");
  EXPECT_FALSE(result.responses[1].has_status());
}

INSTANTIATE_TEST_SUITE_P(Table, BadInputTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name);
                         });

// --- message size, batch length -------------------------------------------------------------

using BadInputLimitsTest = BadInputTest;

TEST_F(BadInputLimitsTest, MessageAtTheSizeLimitIsParsedAndValidated) {
  // Just under --max_message_bytes: it reaches the service, whose own field
  // limits then apply.
  pb::TilingRequest request = ValidRequest();
  request.set_client_id(std::string(kMaxMessageBytes - 200, 'c'));
  ASSERT_LE(request.ByteSizeLong(), static_cast<size_t>(kMaxMessageBytes));
  pb::TilingResponse response;
  const grpc::Status status = Call(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("client_id"));
}

TEST_F(BadInputLimitsTest, MessagePastTheSizeLimitIsResourceExhausted) {
  pb::TilingRequest request = ValidRequest();
  request.set_id(std::string(kMaxMessageBytes + 1, 'i'));
  pb::TilingResponse response;
  const grpc::Status status = Call(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // gRPC's own message names the limit: "... larger than max (65542 vs. 65536)".
  EXPECT_THAT(status.error_message(), HasSubstr("larger than max"));
}

TEST_F(BadInputLimitsTest, OversizedRepeatedFieldPastTheSizeLimit) {
  pb::TilingRequest request = ValidRequest();
  MakeNz(request.mutable_problem());
  for (int i = 0; i < kMaxMessageBytes; ++i) request.mutable_problem()->add_storage_shape_b(1);
  pb::TilingResponse response;
  EXPECT_EQ(Call(request, &response).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(BadInputLimitsTest, OversizedItemEndsTheBatchWithResourceExhausted) {
  pb::TilingRequest big = ValidRequest();
  big.set_id(std::string(kMaxMessageBytes + 1, 'i'));
  const BatchResult result = Batch({ValidRequest(), big, ValidRequest()});
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << result.status.error_message();
  EXPECT_LE(result.responses.size(), 1u);
}

TEST_F(BadInputLimitsTest, EmptyBatchIsOkWithNoAnswers) {
  const BatchResult result = Batch({});
  EXPECT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_TRUE(result.responses.empty());
}

TEST_F(BadInputLimitsTest, BatchAtTheLimitIsAnsweredInFull) {
  std::vector<pb::TilingRequest> requests(kMaxBatch, ValidRequest());
  for (int i = 0; i < kMaxBatch; ++i) requests[i].set_id(absl::StrCat(i));
  const BatchResult result = Batch(requests);
  EXPECT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(result.responses.size(), static_cast<size_t>(kMaxBatch));
  for (int i = 0; i < kMaxBatch; ++i) EXPECT_EQ(result.responses[i].id(), absl::StrCat(i));
}

TEST_F(BadInputLimitsTest, GiantBatchEndsWithResourceExhaustedAfterTheLimit) {
  std::vector<pb::TilingRequest> requests(10 * kMaxBatch, ValidRequest());
  for (size_t i = 0; i < requests.size(); ++i) requests[i].set_id(absl::StrCat(i));
  const BatchResult result = Batch(requests);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(result.status.error_message(), HasSubstr("--max_batch"));
  // Every request up to the limit is answered, in order, before the end.
  ASSERT_EQ(result.responses.size(), static_cast<size_t>(kMaxBatch));
  for (int i = 0; i < kMaxBatch; ++i) EXPECT_EQ(result.responses[i].id(), absl::StrCat(i));
}

TEST_F(BadInputLimitsTest, BatchOfOnlyBadItemsAnswersEachWithItsStatus) {
  std::vector<pb::TilingRequest> requests;
  for (const Case& c : Cases()) {
    if (c.code == kOk) continue;
    pb::TilingRequest request = ValidRequest();
    c.edit(&request);
    request.set_id(c.name);
    requests.push_back(request);
    if (requests.size() == static_cast<size_t>(kMaxBatch)) break;
  }
  const BatchResult result = Batch(requests);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(result.responses.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(result.responses[i].id(), requests[i].id());
    EXPECT_NE(result.responses[i].status().code(), 0) << requests[i].id();
  }
}

}  // namespace
}  // namespace npu::server::testing
