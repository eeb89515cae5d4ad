// The bytes of a grpc::ByteBuffer as one string, for tests that compare or
// parse what a handler wrote.
#ifndef NPU_TESTS_TESTING_BYTE_BUFFERS_H_
#define NPU_TESTS_TESTING_BYTE_BUFFERS_H_

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <string>
#include <vector>

namespace npu::testing {

// Empty when the buffer cannot be read (an invalid ByteBuffer).
inline std::string FlattenByteBuffer(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (!buffer.Dump(&slices).ok()) return bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

}  // namespace npu::testing

#endif  // NPU_TESTS_TESTING_BYTE_BUFFERS_H_
