#include "server/service/wire_answer.h"

#include <algorithm>
#include <cstring>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "google/protobuf/io/coded_stream.h"
#include "server/service/answer_walk.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using google::protobuf::io::CodedOutputStream;

// Wire types of the protobuf encoding.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kLengthDelimited = 2;

// Bounds on the encoding. Every field number here is below 2048, so a tag
// takes at most two bytes; a varint takes at most ten.
constexpr size_t kMaxTagBytes = 2;
constexpr size_t kMaxVarintBytes = 10;
// A varint field, or the tag and length in front of a string, a message or
// a packed field.
constexpr size_t kMaxScalarBytes = kMaxTagBytes + kMaxVarintBytes;
constexpr size_t kMaxHeaderBytes = kMaxTagBytes + kMaxVarintBytes;
// A packed uint32.
constexpr size_t kMaxUint32Bytes = 5;

// Writes protobuf's encoding to the front of a reusable buffer in one pass.
//
// Tags, varints and bytes are written without a bounds check: WireSink
// below first reserves the most bytes it can write (Reserve() with the
// bounds above), once for a string, a scalar, a run of scalars or a
// message's header. A full answer is some 130 tags and values; a check and
// a call on each of them used to be most of its encoding time.
//
// A message field's length is written before its body, so one byte is kept
// for it and, for a body of 128 bytes or more, the body is moved up to make
// room for the longer varint (trace entries and long tiling data get that
// long).
class Writer {
 public:
  explicit Writer(std::string* buffer) : buffer_(buffer) { Reset(0); }

  size_t size() const { return static_cast<size_t>(pos_ - begin_); }

  // Makes room for `bytes` more, growing the buffer (out of line) when it
  // is short.
  void Reserve(size_t bytes) {
    if (ABSL_PREDICT_FALSE(static_cast<size_t>(end_ - pos_) < bytes)) Grow(bytes);
  }

  // The loop ends after one pass for values below 128 (every tag, most
  // values) and after two or three for the sizes of a tiling.
  void Varint(uint64_t value) {
    while (value >= 0x80) {
      *pos_++ = static_cast<uint8_t>(value | 0x80);
      value >>= 7;
    }
    *pos_++ = static_cast<uint8_t>(value);
  }
  void Tag(int field, uint32_t wire_type) {
    Varint((static_cast<uint32_t>(field) << 3) | wire_type);
  }
  void Bytes(std::string_view bytes) {
    if (bytes.size() <= 16) {
      ShortBytes(bytes);
    } else {
      std::memcpy(pos_, bytes.data(), bytes.size());
    }
    pos_ += bytes.size();
  }

  // Starts a length-delimited field (a message, or a packed repeated
  // field) whose length is not known yet: reserves its header, writes its
  // tag and keeps one byte for its length. Returns where the body starts,
  // for EndDelimited().
  size_t BeginDelimited(int field) {
    Reserve(kMaxHeaderBytes);
    Tag(field, kLengthDelimited);
    ++pos_;
    return size();
  }
  // Drops what was written after the first `size` bytes.
  void Rewind(size_t size) { pos_ = begin_ + size; }
  void EndDelimited(size_t body) {
    const size_t length = size() - body;
    if (ABSL_PREDICT_TRUE(length < 0x80)) {
      begin_[body - 1] = static_cast<uint8_t>(length);
    } else {
      LongLength(body, length);
    }
  }

 private:
  // Names of tiling-data fields are a few bytes: two overlapping copies of a
  // fixed size instead of a call to memcpy. Reads stay within `bytes`.
  void ShortBytes(std::string_view bytes) {
    const char* from = bytes.data();
    const size_t n = bytes.size();
    if (n >= 8) {
      std::memcpy(pos_, from, 8);
      std::memcpy(pos_ + n - 8, from + n - 8, 8);
    } else if (n >= 4) {
      std::memcpy(pos_, from, 4);
      std::memcpy(pos_ + n - 4, from + n - 4, 4);
    } else {
      for (size_t i = 0; i < n; ++i) pos_[i] = static_cast<uint8_t>(from[i]);
    }
  }
  // A body of 128 bytes or more: moved up for its longer length.
  ABSL_ATTRIBUTE_NOINLINE void LongLength(size_t body, size_t length) {
    const size_t extra = CodedOutputStream::VarintSize64(length) - 1;
    Reserve(extra);
    std::memmove(begin_ + body + extra, begin_ + body, length);
    pos_ += extra;
    CodedOutputStream::WriteVarint64ToArray(length, begin_ + body - 1);
  }
  ABSL_ATTRIBUTE_NOINLINE void Grow(size_t bytes) {
    const size_t used = size();
    buffer_->resize(std::max(2 * buffer_->size(), used + bytes));
    Reset(used);
  }
  void Reset(size_t used) {
    begin_ = reinterpret_cast<uint8_t*>(buffer_->data());
    pos_ = begin_ + used;
    end_ = begin_ + buffer_->size();
  }

  std::string* const buffer_;
  uint8_t* begin_;
  uint8_t* pos_;
  uint8_t* end_;
};

// The wire sink of WalkAnswer() (answer_walk.h): each field is written where
// the walk hands it over. Scalars and strings are left out at their proto3
// default, as protobuf does. Inlined, the field numbers become constant
// bytes.
class WireSink {
 public:
  explicit WireSink(std::string* buffer) : out_(buffer) {}

  size_t size() const { return out_.size(); }

  template <typename Field>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Uint(const Field& field, uint64_t value) {
    out_.Reserve(kMaxScalarBytes);
    ReservedUint(field.number, value);
  }
  // An enum is an int32 on the wire: a negative value would be
  // sign-extended.
  template <typename Field, typename E>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Enum(const Field& field, E value) {
    Uint(field, static_cast<uint64_t>(static_cast<int64_t>(value)));
  }
  template <typename Field>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void String(const Field& field, std::string_view value) {
    PutString(field.number, value);
  }
  // A text of the engine's (a trace reason, a plan's detail), formatted into
  // the thread's scratch string first.
  template <typename Field>
  void Text(const Field& field, const tiling::LazyText& text) {
    PutText(field.number, text);
  }
  template <typename Field, typename Body>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Message(const Field& field, const Body& body) {
    const size_t start = out_.BeginDelimited(field.number);
    body(*this);
    out_.EndDelimited(start);
  }
  // The varints behind one length. An empty packed field is left out, as
  // protobuf does (and as the message sink leaves it).
  template <typename Field, typename ForEach>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Packed(const Field& field, size_t count,
                                           const ForEach& for_each) {
    if (count == 0) return;
    const size_t header = out_.size();
    const size_t start = out_.BeginDelimited(field.number);
    out_.Reserve(count * kMaxUint32Bytes);
    Writer& out = out_;
    for_each([&out](uint32_t word) { out.Varint(word); });
    if (ABSL_PREDICT_FALSE(out_.size() == start)) {
      out_.Rewind(header);
      return;
    }
    out_.EndDelimited(start);
  }
  // Room for all `count` fields first; then each is written without a
  // check of its own.
  template <typename Body>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Run(size_t count, const Body& body) {
    out_.Reserve(count * kMaxScalarBytes);
    Reserved run{*this};
    body(run);
  }

 private:
  struct Reserved {
    template <typename Field>
    ABSL_ATTRIBUTE_ALWAYS_INLINE void Uint(const Field& field, uint64_t value) {
      sink.ReservedUint(field.number, value);
    }
    WireSink& sink;
  };

  ABSL_ATTRIBUTE_ALWAYS_INLINE void ReservedUint(int field, uint64_t value) {
    if (value == 0) return;
    out_.Tag(field, kVarint);
    out_.Varint(value);
  }
  ABSL_ATTRIBUTE_ALWAYS_INLINE void PutString(int field, std::string_view value) {
    if (value.empty()) return;
    out_.Reserve(kMaxHeaderBytes + value.size());
    out_.Tag(field, kLengthDelimited);
    out_.Varint(value.size());
    out_.Bytes(value);
  }
  ABSL_ATTRIBUTE_NOINLINE void PutText(int field, const tiling::LazyText& text) {
    thread_local std::string scratch;
    scratch.clear();
    text.AppendTo(&scratch);
    PutString(field, scratch);
  }

  Writer out_;
};

}  // namespace

size_t EncodeAnswer(const tl::TilingDecision& decision, const tl::ChipSpec& chip,
                    const AnswerForm& form, std::string* buffer) {
  WireSink out(buffer);
  answer::WalkAnswer(decision, chip, form, out);
  return out.size();
}

std::string AnswerBytes(const tl::TilingDecision& decision, const tl::ChipSpec& chip,
                        const AnswerForm& form) {
  std::string bytes;
  bytes.resize(EncodeAnswer(decision, chip, form, &bytes));
  return bytes;
}

}  // namespace npu::server
