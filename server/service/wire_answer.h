// The wire form of a decision's TilingResponse, encoded without a message.
//
// GetTiling answers thousands of calls a second from graph compilers' build
// pipelines. Building a TilingResponse (forty-odd field messages and their
// strings in the full view), sizing it and serializing it used to cost more
// than the decision behind it, so the service writes the answer's fields
// straight into the bytes it sends. The bytes are exactly the ones protobuf
// produces for the same message (ascending field numbers, proto3 defaults
// left out, raw_words packed, the key, block and platform messages present
// even when all their fields are zero), so any client parses them as a
// TilingResponse. The fields are those of WalkAnswer() (answer_walk.h), the
// one definition of the answer, which DecisionToProto() (convert.h) walks
// into a message; wire_answer_test holds both equal to protobuf's
// serialization of a message built apart with protobuf's setters.
#ifndef NPU_SERVER_SERVICE_WIRE_ANSWER_H_
#define NPU_SERVER_SERVICE_WIRE_ANSWER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/tiling/types.h"

namespace npu::server {

// What an answer shows of a decision, and the fields of the call it
// carries.
struct AnswerForm {
  npu::tiling::v1::ResponseView view = npu::tiling::v1::RESPONSE_VIEW_FULL;
  bool include_trace = true;
  std::string_view id;
  bool from_cache = false;
};

// Writes the answer to `decision` on `chip` in `form` (see ResponseView in
// the .proto) to the front of `buffer`, which grows as needed and is
// otherwise reused as is (a caller keeps one per thread). Returns the
// answer's size in bytes; `buffer` may hold more.
size_t EncodeAnswer(const npu::tiling::TilingDecision& decision, const npu::tiling::ChipSpec& chip,
                    const AnswerForm& form, std::string* buffer);

// The same answer as a string of exactly its bytes.
std::string AnswerBytes(const npu::tiling::TilingDecision& decision,
                        const npu::tiling::ChipSpec& chip, const AnswerForm& form);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_WIRE_ANSWER_H_
