// The wire form of a COMPACT answer, encoded without a TilingResponse.
//
// A pipeline that asks for RESPONSE_VIEW_COMPACT without the trace gets eight
// scalar fields. Building a TilingResponse for them, sizing it and
// serializing it costs more than the decision behind it, so GetTiling and
// GetTilingBatch write those fields straight into the answer's bytes. The
// bytes are the ones protobuf would produce for a TilingResponse holding the
// same fields (ascending field numbers, proto3 defaults omitted, raw_words
// packed), so clients parse them as any TilingResponse; compact_answer_test
// compares the two encodings over every golden case and a sweep of shapes.
#ifndef NPU_SERVER_SERVICE_COMPACT_ANSWER_H_
#define NPU_SERVER_SERVICE_COMPACT_ANSWER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/types/span.h"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::server {

// The fields of a COMPACT TilingResponse without trace (see ResponseView in
// the .proto). The views must outlive the encoding.
struct CompactAnswer {
  std::string_view id;
  uint64_t tiling_key = 0;
  absl::Span<const uint32_t> raw_words;
  uint32_t block_dim = 0;
  npu::tiling::v1::KernelType kernel_type = npu::tiling::v1::KERNEL_TYPE_UNSPECIFIED;
  uint64_t workspace_bytes = 0;
  std::string_view strategy;
  bool from_cache = false;
};

// The encoded size of `answer` in bytes.
size_t CompactAnswerSize(const CompactAnswer& answer);

// Writes `answer` to `out`, which has room for CompactAnswerSize(answer)
// bytes, and returns the end of what it wrote.
uint8_t* EncodeCompactAnswer(const CompactAnswer& answer, uint8_t* out);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_COMPACT_ANSWER_H_
