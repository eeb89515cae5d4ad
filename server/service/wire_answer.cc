#include "server/service/wire_answer.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "google/protobuf/io/coded_stream.h"
#include "server/service/convert.h"
#include "server/service/provenance.h"
#include "server/tiling/key_layout.h"

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

// Writes protobuf's encoding to the front of a reusable buffer in one pass.
//
// Tags, varints and bytes are written without a bounds check: each Put*()
// below first reserves the most bytes it can write (Reserve() with the
// bounds above), once for a string, a scalar, a run of scalars or one
// tiling-data field. A full answer is some 130 tags and values; a check and
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

// Scalars and strings are left out at their proto3 default, as protobuf
// does. Inlined, the field numbers become constant bytes.
//
// Into room the caller reserved (kMaxScalarBytes).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PutReservedUint(Writer& out, int field, uint64_t value) {
  if (value == 0) return;
  out.Tag(field, kVarint);
  out.Varint(value);
}
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PutUint(Writer& out, int field, uint64_t value) {
  out.Reserve(kMaxScalarBytes);
  PutReservedUint(out, field, value);
}

// An enum is an int32 on the wire: a negative value would be sign-extended.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PutEnum(Writer& out, int field, int value) {
  PutUint(out, field, static_cast<uint64_t>(static_cast<int64_t>(value)));
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PutString(Writer& out, int field, std::string_view value) {
  if (value.empty()) return;
  out.Reserve(kMaxHeaderBytes + value.size());
  out.Tag(field, kLengthDelimited);
  out.Varint(value.size());
  out.Bytes(value);
}

// A text of the engine's (a trace reason, a plan's detail), formatted into
// the thread's scratch string and written like PutString().
void PutText(Writer& out, int field, const tiling::LazyText& text) {
  thread_local std::string scratch;
  scratch.clear();
  text.AppendTo(&scratch);
  PutString(out, field, scratch);
}

// A run of varint fields, written by one loop rather than one inlined
// PutUint() each: the block and the platform are 33 fields of the full
// view, and the loop keeps the encoder's code small (under load that code
// is fetched again on every call).
struct UintField {
  int number;
  uint64_t value;
};
ABSL_ATTRIBUTE_NOINLINE void PutUints(Writer& out, std::initializer_list<UintField> fields) {
  out.Reserve(fields.size() * kMaxScalarBytes);
  for (const UintField& field : fields) PutReservedUint(out, field.number, field.value);
}

// A message field, written even when all its fields are defaults (the
// message is set); `body()` writes its fields.
template <typename Body>
void PutMessage(Writer& out, int field, const Body& body) {
  const size_t start = out.BeginDelimited(field);
  body();
  out.EndDelimited(start);
}

// The tiling data by name: one TilingField message per field. Each field's
// length is known before its body is written, and one reservation covers
// the whole field.
void PutTilingFields(Writer& out, const std::vector<tl::TilingField>& fields) {
  using Field = pb::TilingField;
  constexpr int kNameTag = (Field::kNameFieldNumber << 3) | kLengthDelimited;
  static_assert(
      Field::kNameFieldNumber < 16 && Field::kValueFieldNumber < 16 && Field::kBitsFieldNumber < 16,
      "a TilingField tag is one byte");
  for (const tl::TilingField& field : fields) {
    const std::string_view name = field.name;
    const uint64_t bits = static_cast<uint32_t>(field.bits);
    out.Reserve(2 * kMaxHeaderBytes + name.size() + 2 * kMaxScalarBytes);
    size_t length = 0;
    if (!name.empty()) length += 1 + CodedOutputStream::VarintSize64(name.size()) + name.size();
    if (field.value != 0) length += 1 + CodedOutputStream::VarintSize64(field.value);
    if (bits != 0) length += 1 + CodedOutputStream::VarintSize64(bits);
    out.Tag(pb::TilingResponse::kFieldsFieldNumber, kLengthDelimited);
    out.Varint(length);
    if (!name.empty()) {
      out.Varint(kNameTag);
      out.Varint(name.size());
      out.Bytes(name);
    }
    PutReservedUint(out, Field::kValueFieldNumber, field.value);
    PutReservedUint(out, Field::kBitsFieldNumber, bits);
  }
}

// The steps of EncodeAnswer(), one per field or run of fields, in the order
// protobuf serializes them. Each is inlined into it, so the encoder's code
// and speed stay those of one function.

// The tiling key decoded, with CANN's names next to ours: users compare our
// answers with CANN's by name.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PutDecodedKey(Writer& out, const tl::TilingKey& key) {
  const tl::KeyLayoutSpec& layout = tl::KeyLayoutSpecOf(key.layout);
  if (layout.listed) {
    // A layout without fixed fields: its name and its table's fields.
    PutMessage(out, pb::TilingResponse::kKeyFieldNumber, [&] {
      PutString(out, pb::DecodedTilingKey::kLayoutFieldNumber, layout.name);
      for (const tl::KeyFieldSpec& field : layout.fields) {
        PutMessage(out, pb::DecodedTilingKey::kFieldsFieldNumber, [&] {
          const uint64_t value = field.get(key);
          PutString(out, pb::KeyField::kNameFieldNumber, field.name);
          PutUint(out, pb::KeyField::kValueFieldNumber, value);
          PutString(out, pb::KeyField::kValueNameFieldNumber, tl::KeyValueName(field, value));
        });
      }
    });
    return;
  }
  PutMessage(out, pb::TilingResponse::kKeyFieldNumber, [&] {
    using Key = pb::DecodedTilingKey;
    PutEnum(out, Key::kApiLevelFieldNumber, ApiLevelToProto(key.api_level));
    PutString(out, Key::kApiLevelNameFieldNumber, tl::ApiLevelName(key.api_level));
    PutUint(out, Key::kTransAFieldNumber, key.trans_a);
    PutUint(out, Key::kTransBFieldNumber, key.trans_b);
    PutUint(out, Key::kBatchModelFieldNumber, key.batch_model);
    PutEnum(out, Key::kModelFieldNumber, KernelModelToProto(key.model));
    PutString(out, Key::kModelNameFieldNumber, tl::KernelModelName(key.model));
    PutEnum(out, Key::kFullLoadFieldNumber, FullLoadToProto(key.full_load));
    PutString(out, Key::kFullLoadNameFieldNumber, tl::FullLoadName(key.full_load));
    PutEnum(out, Key::kL0C2OutFieldNumber, L0cToOutToProto(key.l0c2out));
    PutString(out, Key::kL0C2OutNameFieldNumber, tl::L0cToOutName(key.l0c2out));
    if (key.layout == tl::KeyLayout::kFused) {
      PutEnum(out, Key::kFusedOpFieldNumber, FusedOpToProto(key.fused_op));
      PutString(out, Key::kFusedOpNameFieldNumber, tl::FusedOpKeyName(key.fused_op));
      PutUint(out, Key::kInnerPreciseFieldNumber, key.inner_precise);
    }
  });
}

// The tiling data as raw words, packed: the varints behind one length. An
// empty packed field is left out, as protobuf does.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PutRawWords(Writer& out, const tl::TilingData& data) {
  if (data.fields.empty()) return;
  const size_t words = out.BeginDelimited(pb::TilingResponse::kRawWordsFieldNumber);
  // A word per field at most, five bytes each.
  out.Reserve(data.fields.size() * 5);
  data.ForEachWord([&out](uint32_t word) { out.Varint(word); });
  out.EndDelimited(words);
}

// The block tiling: 21 varints, written by PutUints()'s one loop to keep
// the encoder's code small.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PutBlockTiling(Writer& out, const tl::BlockTiling& b) {
  PutMessage(out, pb::TilingResponse::kBlockFieldNumber, [&] {
    using Block = pb::BlockTiling;
    PutUints(out, {{Block::kBaseMFieldNumber, b.base_m},
                   {Block::kBaseNFieldNumber, b.base_n},
                   {Block::kBaseKFieldNumber, b.base_k},
                   {Block::kML1FieldNumber, b.m_l1},
                   {Block::kNL1FieldNumber, b.n_l1},
                   {Block::kKL1FieldNumber, b.k_l1},
                   {Block::kStepMFieldNumber, b.step_m},
                   {Block::kStepNFieldNumber, b.step_n},
                   {Block::kStepKaFieldNumber, b.step_ka},
                   {Block::kStepKbFieldNumber, b.step_kb},
                   {Block::kDepthA1FieldNumber, b.depth_a1},
                   {Block::kDepthB1FieldNumber, b.depth_b1},
                   {Block::kSingleCoreMFieldNumber, b.single_core_m},
                   {Block::kSingleCoreNFieldNumber, b.single_core_n},
                   {Block::kSingleCoreKFieldNumber, b.single_core_k},
                   {Block::kMTailCntFieldNumber, b.m_tail_cnt},
                   {Block::kNTailCntFieldNumber, b.n_tail_cnt},
                   {Block::kKCntFieldNumber, b.k_cnt},
                   {Block::kL1BufferNumFieldNumber, b.l1_buffer_num},
                   {Block::kL0CDbFieldNumber, b.l0c_db},
                   {Block::kUbDbFieldNumber, b.ub_db}});
  });
}

// One TraceEntry message per strategy the registry asked, in its order.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PutTrace(Writer& out,
                                                  const std::vector<tl::TraceEntry>& trace) {
  for (const tl::TraceEntry& entry : trace) {
    PutMessage(out, pb::TilingResponse::kTraceFieldNumber, [&] {
      using Entry = pb::TraceEntry;
      PutString(out, Entry::kStrategyFieldNumber, entry.strategy);
      PutUint(out, Entry::kCapableFieldNumber, entry.capable);
      PutUint(out, Entry::kChosenFieldNumber, entry.chosen);
      PutText(out, Entry::kReasonFieldNumber, entry.reason);
    });
  }
}

// One PlanWarning message per buffer the plan overflows.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PutWarnings(Writer& out,
                                                     const std::vector<tl::PlanWarning>& warnings) {
  for (const tl::PlanWarning& warning : warnings) {
    PutMessage(out, pb::TilingResponse::kWarningsFieldNumber, [&] {
      using Warning = pb::PlanWarning;
      PutString(out, Warning::kBufferFieldNumber, warning.buffer);
      PutUint(out, Warning::kNeedBytesFieldNumber, warning.need_bytes);
      PutUint(out, Warning::kHaveBytesFieldNumber, warning.have_bytes);
      PutString(out, Warning::kMessageFieldNumber, warning.message);
    });
  }
}

// The chip the plan was made for: its name, then its fields in the wire
// order ForEachChipField() walks, all under one reservation.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PutPlatform(Writer& out, const tl::ChipSpec& chip) {
  PutMessage(out, pb::TilingResponse::kPlatformFieldNumber, [&] {
    using Chip = pb::ChipSpec;
    PutString(out, Chip::kNameFieldNumber, chip.name);
    out.Reserve(tl::kChipFieldCount * kMaxScalarBytes);
    ForEachChipField([&](const tl::ChipField& field, const ChipFieldWire& wire) {
      PutReservedUint(out, wire.spec_number, field.Get(chip));
    });
    // Not a chip field (not overridable): the profile's architecture, after
    // every numeric field in number order.
    PutString(out, Chip::kNpuArchFieldNumber, tl::NpuArchName(chip.npu_arch));
  });
}

// What the answer was computed with (FULL view).
void PutProvenance(Writer& out, const tl::ChipSpec& chip) {
  PutMessage(out, pb::TilingResponse::kProvenanceFieldNumber, [&] {
    using Provenance = pb::Provenance;
    PutString(out, Provenance::kEngineVersionFieldNumber, EngineVersion());
    PutString(out, Provenance::kEngineRevisionFieldNumber, EngineRevision());
    PutString(out, Provenance::kCannRevisionFieldNumber, kCannRevision);
    PutString(out, Provenance::kChipFingerprintFieldNumber, ChipFingerprintDigits(chip).view());
  });
}

}  // namespace

size_t EncodeAnswer(const tl::TilingDecision& decision, const tl::ChipSpec& chip,
                    const AnswerForm& form, std::string* buffer) {
  // COMPACT keeps what a launcher needs to run the kernel; the decoded key,
  // the names, the block and the platform are for people and tools.
  const bool full = form.view != pb::RESPONSE_VIEW_COMPACT;
  Writer out(buffer);
  // Field by field in ascending number, as protobuf serializes them, so
  // that the bytes equal protobuf's own.
  using Response = pb::TilingResponse;
  const tl::TilingPlan& plan = decision.plan;
  PutString(out, Response::kIdFieldNumber, form.id);
  PutUint(out, Response::kTilingKeyFieldNumber, plan.key.Encode());
  if (full) {
    PutDecodedKey(out, plan.key);
    PutString(out, Response::kTilingStructFieldNumber, plan.data.struct_name());
    PutTilingFields(out, plan.data.fields);
  }
  PutRawWords(out, plan.data);
  PutUint(out, Response::kBlockDimFieldNumber, plan.block_dim);
  PutEnum(out, Response::kKernelTypeFieldNumber, KernelTypeToProto(plan.kernel_type));
  if (full) {
    PutString(out, Response::kKernelTypeNameFieldNumber, tl::KernelTypeName(plan.kernel_type));
  }
  PutUint(out, Response::kWorkspaceBytesFieldNumber, plan.workspace_bytes);
  PutString(out, Response::kStrategyFieldNumber, plan.strategy);
  if (full) {
    PutText(out, Response::kDetailFieldNumber, plan.detail);
    PutBlockTiling(out, plan.block);
  }
  if (form.include_trace) PutTrace(out, decision.trace);
  if (full) PutPlatform(out, chip);
  PutUint(out, Response::kFromCacheFieldNumber, form.from_cache);
  PutWarnings(out, plan.warnings);
  if (full) PutProvenance(out, chip);
  PutString(out, Response::kQuantModeFieldNumber, plan.quant_mode);
  return out.size();
}

std::string AnswerBytes(const tl::TilingDecision& decision, const tl::ChipSpec& chip,
                        const AnswerForm& form) {
  std::string bytes;
  bytes.resize(EncodeAnswer(decision, chip, form, &bytes));
  return bytes;
}

}  // namespace npu::server
