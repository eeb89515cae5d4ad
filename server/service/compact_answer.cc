#include "server/service/compact_answer.h"

#include <cstring>

#include "google/protobuf/io/coded_stream.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
using google::protobuf::io::CodedOutputStream;

// Wire types of the protobuf encoding.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kLengthDelimited = 2;

constexpr uint32_t Tag(int field, uint32_t wire_type) {
  return (static_cast<uint32_t>(field) << 3) | wire_type;
}

constexpr uint32_t kIdTag = Tag(pb::TilingResponse::kIdFieldNumber, kLengthDelimited);
constexpr uint32_t kTilingKeyTag = Tag(pb::TilingResponse::kTilingKeyFieldNumber, kVarint);
constexpr uint32_t kRawWordsTag = Tag(pb::TilingResponse::kRawWordsFieldNumber, kLengthDelimited);
constexpr uint32_t kBlockDimTag = Tag(pb::TilingResponse::kBlockDimFieldNumber, kVarint);
constexpr uint32_t kKernelTypeTag = Tag(pb::TilingResponse::kKernelTypeFieldNumber, kVarint);
constexpr uint32_t kWorkspaceTag = Tag(pb::TilingResponse::kWorkspaceBytesFieldNumber, kVarint);
constexpr uint32_t kStrategyTag = Tag(pb::TilingResponse::kStrategyFieldNumber, kLengthDelimited);
constexpr uint32_t kFromCacheTag = Tag(pb::TilingResponse::kFromCacheFieldNumber, kVarint);

size_t TagSize(uint32_t tag) { return CodedOutputStream::VarintSize32(tag); }

size_t StringFieldSize(uint32_t tag, std::string_view value) {
  if (value.empty()) return 0;
  return TagSize(tag) + CodedOutputStream::VarintSize32(static_cast<uint32_t>(value.size())) +
         value.size();
}

uint8_t* WriteString(uint32_t tag, std::string_view value, uint8_t* out) {
  if (value.empty()) return out;
  out = CodedOutputStream::WriteVarint32ToArray(tag, out);
  out = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(value.size()), out);
  std::memcpy(out, value.data(), value.size());
  return out + value.size();
}

// The packed payload of raw_words, without tag and length.
size_t WordsPayloadSize(absl::Span<const uint32_t> words) {
  size_t size = 0;
  for (uint32_t word : words) size += CodedOutputStream::VarintSize32(word);
  return size;
}

}  // namespace

size_t CompactAnswerSize(const CompactAnswer& answer) {
  size_t size = StringFieldSize(kIdTag, answer.id);
  if (answer.tiling_key != 0) {
    size += TagSize(kTilingKeyTag) + CodedOutputStream::VarintSize64(answer.tiling_key);
  }
  if (!answer.raw_words.empty()) {
    const size_t payload = WordsPayloadSize(answer.raw_words);
    size += TagSize(kRawWordsTag) +
            CodedOutputStream::VarintSize32(static_cast<uint32_t>(payload)) + payload;
  }
  if (answer.block_dim != 0) {
    size += TagSize(kBlockDimTag) + CodedOutputStream::VarintSize32(answer.block_dim);
  }
  if (answer.kernel_type != 0) {
    size += TagSize(kKernelTypeTag) +
            CodedOutputStream::VarintSize32SignExtended(static_cast<int32_t>(answer.kernel_type));
  }
  if (answer.workspace_bytes != 0) {
    size += TagSize(kWorkspaceTag) + CodedOutputStream::VarintSize64(answer.workspace_bytes);
  }
  size += StringFieldSize(kStrategyTag, answer.strategy);
  if (answer.from_cache) size += TagSize(kFromCacheTag) + 1;
  return size;
}

uint8_t* EncodeCompactAnswer(const CompactAnswer& answer, uint8_t* out) {
  // Field by field in ascending number, as protobuf serializes them.
  out = WriteString(kIdTag, answer.id, out);
  if (answer.tiling_key != 0) {
    out = CodedOutputStream::WriteVarint32ToArray(kTilingKeyTag, out);
    out = CodedOutputStream::WriteVarint64ToArray(answer.tiling_key, out);
  }
  if (!answer.raw_words.empty()) {
    out = CodedOutputStream::WriteVarint32ToArray(kRawWordsTag, out);
    out = CodedOutputStream::WriteVarint32ToArray(
        static_cast<uint32_t>(WordsPayloadSize(answer.raw_words)), out);
    for (uint32_t word : answer.raw_words) {
      out = CodedOutputStream::WriteVarint32ToArray(word, out);
    }
  }
  if (answer.block_dim != 0) {
    out = CodedOutputStream::WriteVarint32ToArray(kBlockDimTag, out);
    out = CodedOutputStream::WriteVarint32ToArray(answer.block_dim, out);
  }
  if (answer.kernel_type != 0) {
    out = CodedOutputStream::WriteVarint32ToArray(kKernelTypeTag, out);
    out = CodedOutputStream::WriteVarint32SignExtendedToArray(
        static_cast<int32_t>(answer.kernel_type), out);
  }
  if (answer.workspace_bytes != 0) {
    out = CodedOutputStream::WriteVarint32ToArray(kWorkspaceTag, out);
    out = CodedOutputStream::WriteVarint64ToArray(answer.workspace_bytes, out);
  }
  out = WriteString(kStrategyTag, answer.strategy, out);
  if (answer.from_cache) {
    out = CodedOutputStream::WriteVarint32ToArray(kFromCacheTag, out);
    *out++ = 1;
  }
  return out;
}

}  // namespace npu::server
