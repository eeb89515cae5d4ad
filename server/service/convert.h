// Conversions between the wire types (npu.tiling.v1 protos) and the tiling
// engine's value types (server/tiling/types.h).
//
// Only the service layer sees both worlds; the engine never includes a .pb.h
// and the client never includes the engine. Conversions from the wire assume
// the request passed ValidateRequest() (validate.h), so every enum names a
// value; the one fallible step is resolving the platform, which looks the
// profile up and checks the chip after the overrides.
#ifndef NPU_SERVER_SERVICE_CONVERT_H_
#define NPU_SERVER_SERVICE_CONVERT_H_

#include <cstddef>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/service/validate.h"
#include "server/tiling/chip_fields.h"
#include "server/tiling/types.h"

namespace npu::server {

// The engine's problem for a validated wire problem. UNSPECIFIED formats
// become ND; `dtype_bias` is kept only when the problem has a bias.
npu::tiling::MatmulProblem ProblemFromProto(const npu::tiling::v1::MatmulProblem& problem);
// The same, written into `out`, which must be a default problem (the
// fields the wire leaves out keep its values).
void ProblemFromProto(const npu::tiling::v1::MatmulProblem& problem,
                      npu::tiling::MatmulProblem& out);

// The wire form of `problem`, with every enum set explicitly; two requests
// that mean the same problem convert to equal messages.
npu::tiling::v1::MatmulProblem ProblemToProto(const npu::tiling::MatmulProblem& problem);

// The name of the profile `request` asks for (the default when empty).
std::string_view PlatformName(const RequestParts& request);

// The chip `request` asks for: the named profile (default when empty) with
// the overrides applied. kNotFound for an unknown profile; kInvalidArgument,
// prefixed "platform: ", when the resulting chip is one the engine rejects.
absl::StatusOr<npu::tiling::ChipSpec> ResolveChip(const RequestParts& request);
absl::StatusOr<npu::tiling::ChipSpec> ResolveChip(const npu::tiling::v1::TilingRequest& request);

npu::tiling::v1::ChipSpec ChipToProto(const npu::tiling::ChipSpec& chip);

// How entry i of npu::tiling::kChipFields appears on the wire: its numbers
// and generated accessors in the proto's ChipSpec and PlatformOverrides. The
// service walks this table wherever it handles a chip field by field
// (convert_test checks it against the proto's descriptors).
struct ChipFieldWire {
  int spec_number;      // field number in npu.tiling.v1.ChipSpec
  int override_number;  // field number in npu.tiling.v1.PlatformOverrides
  bool (*has_override)(const npu::tiling::v1::PlatformOverrides& overrides);
  uint64_t (*override_value)(const npu::tiling::v1::PlatformOverrides& overrides);
  void (*set_override)(npu::tiling::v1::PlatformOverrides& overrides, uint64_t value);
  uint64_t (*spec_value)(const npu::tiling::v1::ChipSpec& chip);
  void (*set_spec)(npu::tiling::v1::ChipSpec& chip, uint64_t value);
};

#define NPU_CHIP_FIELD_WIRE(field, Field)                                                  \
  ChipFieldWire {                                                                          \
    npu::tiling::v1::ChipSpec::k##Field##FieldNumber,                                      \
        npu::tiling::v1::PlatformOverrides::k##Field##FieldNumber,                         \
        [](const npu::tiling::v1::PlatformOverrides& o) { return o.has_##field(); },       \
        [](const npu::tiling::v1::PlatformOverrides& o) -> uint64_t { return o.field(); }, \
        [](npu::tiling::v1::PlatformOverrides& o, uint64_t v) {                            \
          o.set_##field(static_cast<decltype(o.field())>(v));                              \
        },                                                                                 \
        [](const npu::tiling::v1::ChipSpec& c) -> uint64_t { return c.field(); },          \
        [](npu::tiling::v1::ChipSpec& c, uint64_t v) {                                     \
          c.set_##field(static_cast<decltype(c.field())>(v));                              \
        }                                                                                  \
  }
inline constexpr ChipFieldWire kChipFieldWire[] = {
    NPU_CHIP_FIELD_WIRE(aic_num, AicNum),
    NPU_CHIP_FIELD_WIRE(aiv_num, AivNum),
    NPU_CHIP_FIELD_WIRE(l1_bytes, L1Bytes),
    NPU_CHIP_FIELD_WIRE(l0a_bytes, L0ABytes),
    NPU_CHIP_FIELD_WIRE(l0b_bytes, L0BBytes),
    NPU_CHIP_FIELD_WIRE(l0c_bytes, L0CBytes),
    NPU_CHIP_FIELD_WIRE(ub_bytes, UbBytes),
    NPU_CHIP_FIELD_WIRE(l2_bytes, L2Bytes),
    NPU_CHIP_FIELD_WIRE(bt_bytes, BtBytes),
    NPU_CHIP_FIELD_WIRE(cube_freq_mhz, CubeFreqMhz),
    NPU_CHIP_FIELD_WIRE(ddr_bytes_per_cycle, DdrBytesPerCycle),
    NPU_CHIP_FIELD_WIRE(l2_bytes_per_cycle, L2BytesPerCycle),
};
#undef NPU_CHIP_FIELD_WIRE
static_assert(sizeof(kChipFieldWire) / sizeof(kChipFieldWire[0]) == npu::tiling::kChipFieldCount,
              "one wire entry per chip field");

namespace chip_fields_internal {
template <typename Fn, size_t... I>
inline void ForEach(Fn& fn, std::index_sequence<I...>) {
  (fn(npu::tiling::kChipFields[I], kChipFieldWire[I]), ...);
}
}  // namespace chip_fields_internal

// Calls `fn(const npu::tiling::ChipField&, const ChipFieldWire&)` for every
// chip field in wire order. Each call sees its entries as constants, so the
// accessors inline: the per-call paths (cache key, encoder) pay no indirect
// call per field.
template <typename Fn>
inline void ForEachChipField(Fn&& fn) {
  chip_fields_internal::ForEach(fn, std::make_index_sequence<npu::tiling::kChipFieldCount>());
}

// Copies every chip field of `chip` into `out` (all set explicitly).
void ChipFieldsToOverrides(const npu::tiling::ChipSpec& chip,
                           npu::tiling::v1::PlatformOverrides* out);

// Replaces `response` with the engine's answer: the decision fields (all but
// `id`, `from_cache`, `status` and `advice`, left unset), the trace only
// when `include_trace`. RESPONSE_VIEW_COMPACT fills only the compact fields
// (see the ResponseView comment in the .proto); any other view fills all.
// The fields are those EncodeAnswer() (wire_answer.h) writes: both walk the
// answer's one definition, WalkAnswer() (answer_walk.h).
void DecisionToProto(const npu::tiling::TilingDecision& decision, const npu::tiling::ChipSpec& chip,
                     npu::tiling::v1::TilingResponse* response, bool include_trace = true,
                     npu::tiling::v1::ResponseView view = npu::tiling::v1::RESPONSE_VIEW_FULL);

// Drops from a full answer the decision fields `view` leaves out, so that an
// advice from the cache in the compact view equals a fresh one.
void ApplyView(npu::tiling::v1::ResponseView view, npu::tiling::v1::TilingResponse* response);

// Enum conversions. The wire enums number CANN's values + 1 (0 is
// UNSPECIFIED).
npu::tiling::v1::DataType DataTypeToProto(npu::tiling::DataType dtype);
// `dtype` must be a validated wire value (not UNSPECIFIED).
npu::tiling::DataType DataTypeFromProto(npu::tiling::v1::DataType dtype);
npu::tiling::v1::Format FormatToProto(npu::tiling::Format format);
npu::tiling::v1::ApiLevel ApiLevelToProto(npu::tiling::ApiLevel level);
npu::tiling::v1::KernelModel KernelModelToProto(npu::tiling::KernelModel model);
npu::tiling::v1::FullLoad FullLoadToProto(npu::tiling::FullLoad full_load);
npu::tiling::v1::L0cToOut L0cToOutToProto(npu::tiling::L0cToOut out);
npu::tiling::v1::KernelType KernelTypeToProto(npu::tiling::KernelType type);
// FusedOp's wire values are CANN's OPTYPE nibbles (UNSPECIFIED is "").
npu::tiling::v1::FusedOp FusedOpToProto(npu::tiling::FusedOp op);
npu::tiling::FusedOp FusedOpFromProto(npu::tiling::v1::FusedOp op);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_CONVERT_H_
