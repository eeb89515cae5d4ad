// Test support: calls to the tiling service with raw request bytes, through
// grpc::GenericStub, for tests of bytes that are not a request message. Used
// by the in-process service tests and the integration tests against the
// binary alike.
#ifndef NPU_TESTS_SERVICE_RAW_CALLS_H_
#define NPU_TESTS_SERVICE_RAW_CALLS_H_

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "tests/testing/byte_buffers.h"

namespace npu::server::testing {

inline grpc::ByteBuffer ToByteBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// One unary call of TilingService's `method` (e.g. "Execute") with `bytes`
// as the request.
inline grpc::Status RawUnaryCall(const std::shared_ptr<grpc::Channel>& channel,
                                 const std::string& method, const std::string& bytes) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  const grpc::ByteBuffer request = ToByteBuffer(bytes);
  grpc::ByteBuffer response;
  grpc::Status result;
  absl::Notification done;
  stub.UnaryCall(&context, absl::StrCat("/npu.tiling.v1.TilingService/", method),
                 grpc::StubOptions(), &request, &response, [&](grpc::Status status) {
                   result = std::move(status);
                   done.Notify();
                 });
  done.WaitForNotification();
  return result;
}

struct RawBatchResult {
  std::vector<npu::tiling::v1::TilingResponse> answers;
  grpc::Status status;
};

// One GetTilingBatch stream with `items` as the requests' bytes, each answer
// read before the next item is written.
inline RawBatchResult RawBatch(const std::shared_ptr<grpc::Channel>& channel,
                               const std::vector<std::string>& items) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  grpc::CompletionQueue queue;
  // gRPC 1.51 has no synchronous generic stream; drive the async one on a
  // private completion queue, one operation at a time.
  auto next = [&queue](void* expected_tag) {
    void* tag = nullptr;
    bool ok = false;
    EXPECT_TRUE(queue.Next(&tag, &ok));
    EXPECT_EQ(tag, expected_tag);
    return ok;
  };
  RawBatchResult result;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> stream =
      stub.PrepareCall(&context, "/npu.tiling.v1.TilingService/GetTilingBatch", &queue);
  int tag = 0;
  stream->StartCall(&tag);
  bool ok = next(&tag);
  for (size_t i = 0; ok && i < items.size(); ++i) {
    stream->Write(ToByteBuffer(items[i]), &tag);
    if (!(ok = next(&tag))) break;
    grpc::ByteBuffer bytes;
    stream->Read(&bytes, &tag);
    if (!(ok = next(&tag))) break;
    npu::tiling::v1::TilingResponse answer;
    EXPECT_TRUE(answer.ParseFromString(::npu::testing::FlattenByteBuffer(bytes)));
    result.answers.push_back(answer);
  }
  stream->WritesDone(&tag);
  next(&tag);
  stream->Finish(&result.status, &tag);
  next(&tag);
  queue.Shutdown();
  void* tag_left = nullptr;
  bool ok_left = false;
  while (queue.Next(&tag_left, &ok_left)) {
  }
  return result;
}

}  // namespace npu::server::testing

#endif  // NPU_TESTS_SERVICE_RAW_CALLS_H_
