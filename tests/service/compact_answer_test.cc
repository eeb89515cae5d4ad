// The COMPACT answer encoder against protobuf's own serializer: the same
// bytes for edge values of every field, and, through the service, for every
// kind of decision with the cache off and on.
#include "server/service/compact_answer.h"

#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "prometheus/registry.h"
#include "server/metrics/service_metrics.h"
#include "server/service/tiling_service.h"
#include "server/tiling/builtin_strategies.h"
#include "tests/service/test_server.h"
#include "tests/testing/byte_buffers.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;

std::string Encode(const CompactAnswer& answer) {
  std::string bytes(CompactAnswerSize(answer), '\0');
  uint8_t* begin = reinterpret_cast<uint8_t*>(bytes.data());
  uint8_t* end = EncodeCompactAnswer(answer, begin);
  EXPECT_EQ(static_cast<size_t>(end - begin), bytes.size());
  return bytes;
}

pb::TilingResponse AsMessage(const CompactAnswer& answer) {
  pb::TilingResponse response;
  response.set_id(std::string(answer.id));
  response.set_tiling_key(answer.tiling_key);
  response.mutable_raw_words()->Add(answer.raw_words.begin(), answer.raw_words.end());
  response.set_block_dim(answer.block_dim);
  response.set_kernel_type(answer.kernel_type);
  response.set_workspace_bytes(answer.workspace_bytes);
  response.set_strategy(std::string(answer.strategy));
  response.set_from_cache(answer.from_cache);
  return response;
}

TEST(CompactAnswerTest, SameBytesAsProtobufForEdgeValues) {
  const std::string long_id(300, 'x');  // a two-byte length
  const std::string utf8_id = "\xe7\x9f\xa9\xe9\x98\xb5-17";
  const std::vector<uint32_t> words = {
      0, 1, 127, 128, 16383, 16384, std::numeric_limits<uint32_t>::max()};
  const std::vector<uint32_t> many_words(200, 0x80808080u);  // a two-byte packed length
  constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();

  std::vector<CompactAnswer> cases;
  cases.push_back({});  // every field at its default: no bytes at all
  for (std::string_view id :
       {std::string_view("a"), std::string_view(long_id), std::string_view(utf8_id)}) {
    CompactAnswer answer;
    answer.id = id;
    cases.push_back(answer);
  }
  for (uint64_t key : {uint64_t{1}, uint64_t{4162}, uint64_t{1} << 35, kMax64}) {
    CompactAnswer answer;
    answer.tiling_key = key;
    cases.push_back(answer);
  }
  for (const std::vector<uint32_t>* list : {&words, &many_words}) {
    CompactAnswer answer;
    answer.raw_words = *list;
    cases.push_back(answer);
  }
  for (uint32_t block_dim : {1u, 32u, 128u, std::numeric_limits<uint32_t>::max()}) {
    CompactAnswer answer;
    answer.block_dim = block_dim;
    cases.push_back(answer);
  }
  for (pb::KernelType type :
       {pb::KERNEL_TYPE_AIC_ONLY, pb::KERNEL_TYPE_MIX_AIC_1_AIV_2, pb::KERNEL_TYPE_AIV_ONLY}) {
    CompactAnswer answer;
    answer.kernel_type = type;
    cases.push_back(answer);
  }
  for (uint64_t workspace : {uint64_t{1}, uint64_t{16} << 20, kMax64}) {
    CompactAnswer answer;
    answer.workspace_bytes = workspace;
    cases.push_back(answer);
  }
  CompactAnswer cached;
  cached.from_cache = true;
  cases.push_back(cached);
  CompactAnswer all;
  all.id = long_id;
  all.tiling_key = kMax64;
  all.raw_words = many_words;
  all.block_dim = 24;
  all.kernel_type = pb::KERNEL_TYPE_MIX_AIC_1_AIV_2;
  all.workspace_bytes = kMax64;
  all.strategy = "BASIC_STREAM_K";
  all.from_cache = true;
  cases.push_back(all);

  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "case " << i);
    const pb::TilingResponse message = AsMessage(cases[i]);
    EXPECT_EQ(CompactAnswerSize(cases[i]), message.ByteSizeLong());
    const std::string bytes = Encode(cases[i]);
    EXPECT_EQ(bytes, message.SerializeAsString());
    pb::TilingResponse parsed;
    ASSERT_TRUE(parsed.ParseFromString(bytes));
    EXPECT_EQ(parsed.SerializeAsString(), message.SerializeAsString());
  }
}

// The requests of the service test below: shapes that reach every built-in
// strategy (zero K, the vector multiplies, Stream-K, ASWT), with and without
// bias, transposed operands and forced fp32 accumulation.
std::vector<pb::TilingRequest> Requests() {
  std::vector<pb::TilingRequest> requests = {testing::StreamKRequest()};
  int n = 0;
  for (pb::DataType dtype :
       {pb::DATA_TYPE_FLOAT16, pb::DATA_TYPE_BFLOAT16, pb::DATA_TYPE_FLOAT32}) {
    for (int64_t m : {1, 17, 512, 4096}) {
      for (int64_t k : {0, 1, 64, 4097, 16384}) {
        for (int64_t cols : {1, 255, 8192}) {
          pb::TilingRequest request = testing::ShapeRequest(m, cols, k);
          request.set_id(absl::StrCat("item-", ++n));
          pb::MatmulProblem* p = request.mutable_problem();
          p->set_dtype_a(dtype);
          p->set_dtype_b(dtype);
          p->set_dtype_c(dtype);
          if (n % 3 == 0) {
            p->set_has_bias(true);
            p->set_dtype_bias(dtype);
          }
          if (n % 5 == 0) p->set_trans_a(true);
          // fp32 with the fp32 accumulation forced reaches the vector
          // strategies for a vector operand.
          if (dtype == pb::DATA_TYPE_FLOAT32 && n % 2 == 0) {
            p->set_trans_b(true);
            p->set_force_grp_acc_fp32(true);
          }
          requests.push_back(request);
        }
      }
    }
  }
  return requests;
}

// Through the service: the encoded answer is the serialized Answer(), fresh
// or from the cache, for every decision and in every view.
TEST(CompactAnswerTest, ServiceSendsTheBytesOfItsAnswerMessage) {
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  for (const size_t cache_capacity : {size_t{0}, size_t{4096}}) {
    SCOPED_TRACE(cache_capacity == 0 ? "cache off" : "cache on");
    // Two services with the same history, so that their caches agree: one
    // answers with messages, the other in wire form.
    prometheus::Registry prometheus;
    ServiceMetrics metrics(prometheus);
    ServiceOptions options;
    options.cache_capacity = cache_capacity;
    TilingService by_message(registry, metrics, options);
    TilingService by_bytes(registry, metrics, options);
    std::set<std::string> strategies;
    for (const pb::TilingRequest& base : Requests()) {
      for (pb::ResponseView view : {pb::RESPONSE_VIEW_COMPACT, pb::RESPONSE_VIEW_FULL}) {
        for (bool trace : {false, true}) {
          pb::TilingRequest request = base;
          request.set_view(view);
          request.set_include_trace(trace);
          SCOPED_TRACE(request.ShortDebugString());
          // Twice: with the cache on, the second is a hit.
          for (int round = 0; round < 2; ++round) {
            pb::TilingResponse expected;
            const absl::Status answered = by_message.Answer(request, &expected);
            grpc::ByteBuffer bytes;
            const absl::Status serialized =
                by_bytes.AnswerSerialized(request, /*arena=*/nullptr, &bytes);
            ASSERT_EQ(answered.code(), serialized.code()) << answered << " / " << serialized;
            if (!answered.ok()) continue;
            strategies.insert(expected.strategy());
            EXPECT_EQ(::npu::testing::FlattenByteBuffer(bytes), expected.SerializeAsString());
          }
        }
      }
    }
    EXPECT_EQ(strategies.size(), 5u)
        << "the requests should reach every built-in strategy: " << absl::StrJoin(strategies, ", ");
  }
}

}  // namespace
}  // namespace npu::server
