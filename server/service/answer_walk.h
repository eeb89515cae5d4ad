// The one definition of a decision's answer: WalkAnswer() visits the
// fields of its TilingResponse in ascending field number and hands each to
// a sink, which either writes protobuf's encoding (EncodeAnswer(),
// wire_answer.cc) or fills the message (DecisionToProto(), convert.cc).
//
// A field is named by a descriptor that holds both what a sink may need:
// its field number, for the wire, and its protobuf accessor, for the
// message. The walk is the same code for both sinks, so the bytes GetTiling
// sends and the message that ADVISE, Execute and GetGraphTiling answer with
// cannot differ (wire_answer_test holds both equal to a message built apart
// with protobuf's setters).
//
// A sink provides, for a message type M:
//   Uint(field, value)        a varint field, left out at 0 (proto3);
//   Enum(field, value)        an enum field, left out at 0;
//   String(field, text)       a string field, left out when empty;
//   Text(field, lazy_text)    the same for a text of the engine's;
//   Message(field, body)      a message field, present even when empty;
//                             body(sub_sink) fills it;
//   Packed(field, count, for_each)
//                             a packed uint32 field of at most `count`
//                             values; for_each(add) calls add(value) for
//                             each;
//   Run(count, body)          body(run_sink) writes at most `count` varint
//                             fields (a hint: the wire writer makes room
//                             for them all at once).
#ifndef NPU_SERVER_SERVICE_ANSWER_WALK_H_
#define NPU_SERVER_SERVICE_ANSWER_WALK_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/attributes.h"
#include "google/protobuf/repeated_field.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/service/convert.h"
#include "server/service/provenance.h"
#include "server/service/wire_answer.h"
#include "server/tiling/key_layout.h"
#include "server/tiling/types.h"

namespace npu::server::answer {

// A scalar field set by a member setter (set_x(T)): an integer, a bool or an
// enum.
template <typename M, typename T>
struct ScalarField {
  using Message = M;
  int number;
  void (M::*set)(T);
  void Set(M& message, uint64_t value) const { (message.*set)(static_cast<T>(value)); }
};
template <typename M, typename T>
ScalarField(int, void (M::*)(T)) -> ScalarField<M, T>;

// A scalar field set through a function (the chip's fields, which
// ForEachChipField() walks with one setter each).
template <typename M>
struct ScalarFieldFn {
  using Message = M;
  int number;
  void (*set)(M&, uint64_t);
  void Set(M& message, uint64_t value) const { set(message, value); }
};

// A string field, filled through mutable_x().
template <typename M>
struct StringField {
  using Message = M;
  int number;
  std::string* (M::*mutable_string)();
};

// A message field: mutable_x() for a singular one, add_x() for a repeated
// one.
template <typename M, typename Sub>
struct MessageField {
  using Message = M;
  using SubMessage = Sub;
  int number;
  Sub* (M::*get)();
};

// A packed repeated uint32 field, filled through mutable_x().
template <typename M>
struct PackedField {
  using Message = M;
  int number;
  google::protobuf::RepeatedField<uint32_t>* (M::*mutable_values)();
};

namespace internal {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;

using Response = pb::TilingResponse;
using Key = pb::DecodedTilingKey;
using Block = pb::BlockTiling;

// The block tiling: a table, walked by one loop to keep the wire encoder's
// code small (under load that code is fetched again on every call).
struct BlockRow {
  ScalarField<Block, uint64_t> field;
  uint64_t tl::BlockTiling::*value;
};
#define NPU_BLOCK_ROW(field, Field) \
  BlockRow { {Block::k##Field##FieldNumber, &Block::set_##field}, &tl::BlockTiling::field }
inline constexpr BlockRow kBlockRows[] = {
    NPU_BLOCK_ROW(base_m, BaseM),
    NPU_BLOCK_ROW(base_n, BaseN),
    NPU_BLOCK_ROW(base_k, BaseK),
    NPU_BLOCK_ROW(m_l1, ML1),
    NPU_BLOCK_ROW(n_l1, NL1),
    NPU_BLOCK_ROW(k_l1, KL1),
    NPU_BLOCK_ROW(step_m, StepM),
    NPU_BLOCK_ROW(step_n, StepN),
    NPU_BLOCK_ROW(step_ka, StepKa),
    NPU_BLOCK_ROW(step_kb, StepKb),
    NPU_BLOCK_ROW(depth_a1, DepthA1),
    NPU_BLOCK_ROW(depth_b1, DepthB1),
    NPU_BLOCK_ROW(single_core_m, SingleCoreM),
    NPU_BLOCK_ROW(single_core_n, SingleCoreN),
    NPU_BLOCK_ROW(single_core_k, SingleCoreK),
    NPU_BLOCK_ROW(m_tail_cnt, MTailCnt),
    NPU_BLOCK_ROW(n_tail_cnt, NTailCnt),
    NPU_BLOCK_ROW(k_cnt, KCnt),
    NPU_BLOCK_ROW(l1_buffer_num, L1BufferNum),
    NPU_BLOCK_ROW(l0c_db, L0CDb),
    NPU_BLOCK_ROW(ub_db, UbDb),
};
#undef NPU_BLOCK_ROW

// The steps of WalkAnswer(), one per field or group of fields, in the order
// protobuf serializes them. Each is inlined into it, so an instance of the
// walk is one function.

// The tiling key decoded, with CANN's names next to ours: users compare our
// answers with CANN's by name.
template <typename Sink>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void DecodedKey(Sink& out, const tl::TilingKey& key) {
  const tl::KeyLayoutSpec& layout = tl::KeyLayoutSpecOf(key.layout);
  const MessageField<Response, Key> key_field{Response::kKeyFieldNumber, &Response::mutable_key};
  if (layout.listed) {
    // A layout without fixed fields: its name and its table's fields.
    out.Message(key_field, [&](auto& key_out) {
      key_out.String(StringField<Key>{Key::kLayoutFieldNumber, &Key::mutable_layout}, layout.name);
      using Field = pb::KeyField;
      for (const tl::KeyFieldSpec& spec : layout.fields) {
        key_out.Message(
            MessageField<Key, Field>{Key::kFieldsFieldNumber, &Key::add_fields},
            [&](auto& field_out) {
              const uint64_t value = spec.get(key);
              field_out.String(StringField<Field>{Field::kNameFieldNumber, &Field::mutable_name},
                               spec.name);
              field_out.Uint(ScalarField{Field::kValueFieldNumber, &Field::set_value}, value);
              field_out.String(
                  StringField<Field>{Field::kValueNameFieldNumber, &Field::mutable_value_name},
                  tl::KeyValueName(spec, value));
            });
      }
    });
    return;
  }
  out.Message(key_field, [&](auto& k) {
    k.Enum(ScalarField{Key::kApiLevelFieldNumber, &Key::set_api_level},
           ApiLevelToProto(key.api_level));
    k.String(StringField<Key>{Key::kApiLevelNameFieldNumber, &Key::mutable_api_level_name},
             tl::ApiLevelName(key.api_level));
    k.Uint(ScalarField{Key::kTransAFieldNumber, &Key::set_trans_a}, key.trans_a);
    k.Uint(ScalarField{Key::kTransBFieldNumber, &Key::set_trans_b}, key.trans_b);
    k.Uint(ScalarField{Key::kBatchModelFieldNumber, &Key::set_batch_model}, key.batch_model);
    k.Enum(ScalarField{Key::kModelFieldNumber, &Key::set_model}, KernelModelToProto(key.model));
    k.String(StringField<Key>{Key::kModelNameFieldNumber, &Key::mutable_model_name},
             tl::KernelModelName(key.model));
    k.Enum(ScalarField{Key::kFullLoadFieldNumber, &Key::set_full_load},
           FullLoadToProto(key.full_load));
    k.String(StringField<Key>{Key::kFullLoadNameFieldNumber, &Key::mutable_full_load_name},
             tl::FullLoadName(key.full_load));
    k.Enum(ScalarField{Key::kL0C2OutFieldNumber, &Key::set_l0c2out}, L0cToOutToProto(key.l0c2out));
    k.String(StringField<Key>{Key::kL0C2OutNameFieldNumber, &Key::mutable_l0c2out_name},
             tl::L0cToOutName(key.l0c2out));
    if (key.layout == tl::KeyLayout::kFused) {
      k.Enum(ScalarField{Key::kFusedOpFieldNumber, &Key::set_fused_op},
             FusedOpToProto(key.fused_op));
      k.String(StringField<Key>{Key::kFusedOpNameFieldNumber, &Key::mutable_fused_op_name},
               tl::FusedOpKeyName(key.fused_op));
      k.Uint(ScalarField{Key::kInnerPreciseFieldNumber, &Key::set_inner_precise},
             key.inner_precise);
    }
  });
}

// The tiling data by name: one TilingField message per field.
template <typename Sink>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void TilingFields(Sink& out,
                                                      const std::vector<tl::TilingField>& fields) {
  using Field = pb::TilingField;
  for (const tl::TilingField& field : fields) {
    out.Message(
        MessageField<Response, Field>{Response::kFieldsFieldNumber, &Response::add_fields},
        [&](auto& f) {
          f.String(StringField<Field>{Field::kNameFieldNumber, &Field::mutable_name}, field.name);
          f.Run(2, [&](auto& run) {
            run.Uint(ScalarField{Field::kValueFieldNumber, &Field::set_value}, field.value);
            run.Uint(ScalarField{Field::kBitsFieldNumber, &Field::set_bits},
                     static_cast<uint32_t>(field.bits));
          });
        });
  }
}

// One TraceEntry message per strategy the registry asked, in its order.
template <typename Sink>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void Trace(Sink& out,
                                               const std::vector<tl::TraceEntry>& trace) {
  using Entry = pb::TraceEntry;
  for (const tl::TraceEntry& entry : trace) {
    out.Message(
        MessageField<Response, Entry>{Response::kTraceFieldNumber, &Response::add_trace},
        [&](auto& e) {
          e.String(StringField<Entry>{Entry::kStrategyFieldNumber, &Entry::mutable_strategy},
                   entry.strategy);
          e.Run(2, [&](auto& run) {
            run.Uint(ScalarField{Entry::kCapableFieldNumber, &Entry::set_capable}, entry.capable);
            run.Uint(ScalarField{Entry::kChosenFieldNumber, &Entry::set_chosen}, entry.chosen);
          });
          e.Text(StringField<Entry>{Entry::kReasonFieldNumber, &Entry::mutable_reason},
                 entry.reason);
        });
  }
}

// One PlanWarning message per buffer the plan overflows.
template <typename Sink>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void Warnings(Sink& out,
                                                  const std::vector<tl::PlanWarning>& warnings) {
  using Warning = pb::PlanWarning;
  for (const tl::PlanWarning& warning : warnings) {
    out.Message(
        MessageField<Response, Warning>{Response::kWarningsFieldNumber, &Response::add_warnings},
        [&](auto& w) {
          w.String(StringField<Warning>{Warning::kBufferFieldNumber, &Warning::mutable_buffer},
                   warning.buffer);
          w.Run(2, [&](auto& run) {
            run.Uint(ScalarField{Warning::kNeedBytesFieldNumber, &Warning::set_need_bytes},
                     warning.need_bytes);
            run.Uint(ScalarField{Warning::kHaveBytesFieldNumber, &Warning::set_have_bytes},
                     warning.have_bytes);
          });
          w.String(StringField<Warning>{Warning::kMessageFieldNumber, &Warning::mutable_message},
                   warning.message);
        });
  }
}

// The chip the plan was made for: its name, then its fields in the wire
// order ForEachChipField() walks, then its architecture (not a chip field:
// not overridable), after every numeric field in number order.
template <typename Sink>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void Platform(Sink& out, const tl::ChipSpec& chip) {
  using Chip = pb::ChipSpec;
  out.Message(
      MessageField<Response, Chip>{Response::kPlatformFieldNumber, &Response::mutable_platform},
      [&](auto& c) {
        c.String(StringField<Chip>{Chip::kNameFieldNumber, &Chip::mutable_name}, chip.name);
        c.Run(tl::kChipFieldCount, [&](auto& run) {
          ForEachChipField([&](const tl::ChipField& field, const ChipFieldWire& wire) {
            run.Uint(ScalarFieldFn<Chip>{wire.spec_number, wire.set_spec}, field.Get(chip));
          });
        });
        c.String(StringField<Chip>{Chip::kNpuArchFieldNumber, &Chip::mutable_npu_arch},
                 tl::NpuArchName(chip.npu_arch));
      });
}

// What the answer was computed with (FULL view).
template <typename Sink>
void Provenance(Sink& out, const tl::ChipSpec& chip) {
  using P = pb::Provenance;
  out.Message(
      MessageField<Response, P>{Response::kProvenanceFieldNumber, &Response::mutable_provenance},
      [&](auto& p) {
        p.String(StringField<P>{P::kEngineVersionFieldNumber, &P::mutable_engine_version},
                 EngineVersion());
        p.String(StringField<P>{P::kEngineRevisionFieldNumber, &P::mutable_engine_revision},
                 EngineRevision());
        p.String(StringField<P>{P::kCannRevisionFieldNumber, &P::mutable_cann_revision},
                 kCannRevision);
        p.String(StringField<P>{P::kChipFingerprintFieldNumber, &P::mutable_chip_fingerprint},
                 ChipFingerprintDigits(chip).view());
      });
}

}  // namespace internal

// Hands the answer to `decision` on `chip` in `form` (see ResponseView in
// the .proto) to `out`, field by field in ascending number, as protobuf
// serializes them.
template <typename Sink>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void WalkAnswer(const npu::tiling::TilingDecision& decision,
                                                    const npu::tiling::ChipSpec& chip,
                                                    const AnswerForm& form, Sink& out) {
  namespace pb = ::npu::tiling::v1;
  namespace tl = ::npu::tiling;
  using R = pb::TilingResponse;
  // COMPACT keeps what a launcher needs to run the kernel; the decoded key,
  // the names, the block and the platform are for people and tools.
  const bool full = form.view != pb::RESPONSE_VIEW_COMPACT;
  const tl::TilingPlan& plan = decision.plan;
  out.String(StringField<R>{R::kIdFieldNumber, &R::mutable_id}, form.id);
  out.Uint(ScalarField{R::kTilingKeyFieldNumber, &R::set_tiling_key}, plan.key.Encode());
  if (full) {
    internal::DecodedKey(out, plan.key);
    out.String(StringField<R>{R::kTilingStructFieldNumber, &R::mutable_tiling_struct},
               plan.data.struct_name());
    internal::TilingFields(out, plan.data.fields);
  }
  // The tiling data as raw words: a word per field at most, two for a
  // 64-bit member (MaxWords()).
  out.Packed(PackedField<R>{R::kRawWordsFieldNumber, &R::mutable_raw_words},
             plan.data.MaxWords(), [&](auto&& add) { plan.data.ForEachWord(add); });
  out.Uint(ScalarField{R::kBlockDimFieldNumber, &R::set_block_dim}, plan.block_dim);
  out.Enum(ScalarField{R::kKernelTypeFieldNumber, &R::set_kernel_type},
           KernelTypeToProto(plan.kernel_type));
  if (full) {
    out.String(StringField<R>{R::kKernelTypeNameFieldNumber, &R::mutable_kernel_type_name},
               tl::KernelTypeName(plan.kernel_type));
  }
  out.Uint(ScalarField{R::kWorkspaceBytesFieldNumber, &R::set_workspace_bytes},
           plan.workspace_bytes);
  out.String(StringField<R>{R::kStrategyFieldNumber, &R::mutable_strategy}, plan.strategy);
  if (full) {
    out.Text(StringField<R>{R::kDetailFieldNumber, &R::mutable_detail}, plan.detail);
    out.Message(MessageField<R, pb::BlockTiling>{R::kBlockFieldNumber, &R::mutable_block},
                [&](auto& b) {
                  b.Run(std::size(internal::kBlockRows), [&](auto& run) {
                    for (const internal::BlockRow& row : internal::kBlockRows) {
                      run.Uint(row.field, plan.block.*row.value);
                    }
                  });
                });
  }
  if (form.include_trace) internal::Trace(out, decision.trace);
  if (full) internal::Platform(out, chip);
  out.Uint(ScalarField{R::kFromCacheFieldNumber, &R::set_from_cache}, form.from_cache);
  internal::Warnings(out, plan.warnings);
  if (full) internal::Provenance(out, chip);
  out.String(StringField<R>{R::kQuantModeFieldNumber, &R::mutable_quant_mode}, plan.quant_mode);
}

}  // namespace npu::server::answer

#endif  // NPU_SERVER_SERVICE_ANSWER_WALK_H_
