#include "server/service/request_wire.h"

#include <cstdint>
#include <memory>

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;

// Wire types of the protobuf encoding.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kLengthDelimited = 2;

// Reads the encoding of one message field by field. Every read fails
// (returns false) rather than run past the end.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : pos_(bytes.data()), end_(pos_ + bytes.size()) {}

  bool done() const { return pos_ == end_; }

  // A varint of at most ten bytes, as protobuf reads it.
  bool Varint(uint64_t* value) {
    uint64_t result = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos_ == end_) return false;
      const uint8_t byte = static_cast<uint8_t>(*pos_++);
      result |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if (byte < 0x80) {
        *value = result;
        return true;
      }
    }
    return false;
  }

  // A field's tag: its number and wire type.
  bool Tag(int* field, uint32_t* wire_type) {
    uint64_t tag = 0;
    if (!Varint(&tag) || tag > UINT32_MAX || (tag >> 3) == 0) return false;
    *field = static_cast<int>(tag >> 3);
    *wire_type = static_cast<uint32_t>(tag & 7);
    return true;
  }

  // The payload of a length-delimited field.
  bool Delimited(std::string_view* payload) {
    uint64_t length = 0;
    if (!Varint(&length) || length > static_cast<uint64_t>(end_ - pos_)) return false;
    *payload = std::string_view(pos_, static_cast<size_t>(length));
    pos_ += length;
    return true;
  }

  // The value of a field with `wire_type`, when that is the wire type the
  // common shape has for it: a varint, a length-delimited payload, or a
  // string whose bytes are ASCII (valid UTF-8, as protobuf requires).
  bool VarintField(uint32_t wire_type, uint64_t* value) {
    return wire_type == kVarint && Varint(value);
  }
  bool DelimitedField(uint32_t wire_type, std::string_view* payload) {
    return wire_type == kLengthDelimited && Delimited(payload);
  }
  bool AsciiField(uint32_t wire_type, std::string_view* text) {
    if (!DelimitedField(wire_type, text)) return false;
    for (char c : *text) {
      if (static_cast<uint8_t>(c) >= 0x80) return false;
    }
    return true;
  }

 private:
  const char* pos_;
  const char* end_;
};

// Integer fields as protobuf stores a varint: int64 as is, int32 and enums
// truncated to their low 32 bits, bool as "not zero".
int64_t AsInt64(uint64_t value) { return static_cast<int64_t>(value); }
int32_t AsInt32(uint64_t value) { return static_cast<int32_t>(static_cast<uint32_t>(value)); }

bool DecodeProblem(std::string_view bytes, pb::MatmulProblem* problem) {
  using Problem = pb::MatmulProblem;
  Reader in(bytes);
  while (!in.done()) {
    int field = 0;
    uint32_t wire_type = 0;
    uint64_t value = 0;
    // Every field of the common shape is a varint.
    if (!in.Tag(&field, &wire_type) || !in.VarintField(wire_type, &value)) return false;
    switch (field) {
      case Problem::kMFieldNumber:
        problem->set_m(AsInt64(value));
        break;
      case Problem::kNFieldNumber:
        problem->set_n(AsInt64(value));
        break;
      case Problem::kKFieldNumber:
        problem->set_k(AsInt64(value));
        break;
      case Problem::kDtypeAFieldNumber:
        problem->set_dtype_a(static_cast<pb::DataType>(AsInt32(value)));
        break;
      case Problem::kDtypeBFieldNumber:
        problem->set_dtype_b(static_cast<pb::DataType>(AsInt32(value)));
        break;
      case Problem::kDtypeCFieldNumber:
        problem->set_dtype_c(static_cast<pb::DataType>(AsInt32(value)));
        break;
      case Problem::kHasBiasFieldNumber:
        problem->set_has_bias(value != 0);
        break;
      case Problem::kDtypeBiasFieldNumber:
        problem->set_dtype_bias(static_cast<pb::DataType>(AsInt32(value)));
        break;
      case Problem::kTransAFieldNumber:
        problem->set_trans_a(value != 0);
        break;
      case Problem::kTransBFieldNumber:
        problem->set_trans_b(value != 0);
        break;
      case Problem::kFormatAFieldNumber:
        problem->set_format_a(static_cast<pb::Format>(AsInt32(value)));
        break;
      case Problem::kFormatBFieldNumber:
        problem->set_format_b(static_cast<pb::Format>(AsInt32(value)));
        break;
      case Problem::kFormatCFieldNumber:
        problem->set_format_c(static_cast<pb::Format>(AsInt32(value)));
        break;
      case Problem::kHf32FieldNumber:
        problem->set_hf32(value != 0);
        break;
      case Problem::kForceGrpAccFp32FieldNumber:
        problem->set_force_grp_acc_fp32(value != 0);
        break;
      case Problem::kDeterministicLevelFieldNumber:
        problem->set_deterministic_level(AsInt32(value));
        break;
      case Problem::kAvoidTensorApiFieldNumber:
        problem->set_avoid_tensor_api(value != 0);
        break;
      default:  // storage_shape_b, a_slice, or a field this build does not know
        return false;
    }
  }
  return true;
}

}  // namespace

bool DecodeCommonRequest(std::string_view bytes, pb::TilingRequest* request) {
  using Request = pb::TilingRequest;
  // Clear() would free the problem message that the next line reuses (a
  // request nearly always has one).
  std::unique_ptr<pb::MatmulProblem> spare(request->release_problem());
  request->Clear();
  bool has_problem = false;
  Reader in(bytes);
  while (!in.done()) {
    int field = 0;
    uint32_t wire_type = 0;
    if (!in.Tag(&field, &wire_type)) return false;
    std::string_view text;
    uint64_t value = 0;
    switch (field) {
      case Request::kIdFieldNumber:
        if (!in.AsciiField(wire_type, &text)) return false;
        request->set_id(text.data(), text.size());
        break;
      case Request::kProblemFieldNumber:
        // A second copy would be merged into the first: protobuf's job.
        if (has_problem || !in.DelimitedField(wire_type, &text)) return false;
        if (spare != nullptr) {
          spare->Clear();
          request->set_allocated_problem(spare.release());
        }
        if (!DecodeProblem(text, request->mutable_problem())) return false;
        has_problem = true;
        break;
      case Request::kPlatformFieldNumber:
        if (!in.AsciiField(wire_type, &text)) return false;
        request->set_platform(text.data(), text.size());
        break;
      case Request::kForcedStrategyFieldNumber:
        if (!in.AsciiField(wire_type, &text)) return false;
        request->set_forced_strategy(text.data(), text.size());
        break;
      case Request::kIncludeTraceFieldNumber:
        if (!in.VarintField(wire_type, &value)) return false;
        request->set_include_trace(value != 0);
        break;
      case Request::kClientIdFieldNumber:
        if (!in.AsciiField(wire_type, &text)) return false;
        request->set_client_id(text.data(), text.size());
        break;
      case Request::kModeFieldNumber:
        if (!in.VarintField(wire_type, &value)) return false;
        request->set_mode(static_cast<pb::TilingMode>(AsInt32(value)));
        break;
      case Request::kViewFieldNumber:
        if (!in.VarintField(wire_type, &value)) return false;
        request->set_view(static_cast<pb::ResponseView>(AsInt32(value)));
        break;
      default:  // platform_overrides, advise, or a field this build does not know
        return false;
    }
  }
  return true;
}

}  // namespace npu::server
