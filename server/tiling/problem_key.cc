#include "server/tiling/problem_key.h"

#include <cassert>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/base/config.h"
#include "server/tiling/chip_fields.h"

namespace npu::tiling {
namespace {

// Writes a key's bytes into room made for them beforehand: one resize per
// part instead of one append per number.
class KeyWriter {
 public:
  // Makes room for `bytes` more bytes at the end of `key`.
  KeyWriter(std::string& key, size_t bytes) {
    const size_t start = key.size();
    key.resize(start + bytes);
    out_ = key.data() + start;
    end_ = key.data() + key.size();
  }
  KeyWriter(const KeyWriter&) = delete;
  KeyWriter& operator=(const KeyWriter&) = delete;
  // The room must be filled exactly.
  ~KeyWriter() { assert(out_ == end_ && "a key part's size and its bytes disagree"); }

  // Little-endian on any host: one store on a little-endian one (GCC does
  // not merge the byte loop, which made a key cost some 2,000
  // instructions).
  void U64(uint64_t value) {
#ifdef ABSL_IS_LITTLE_ENDIAN
    std::memcpy(out_, &value, 8);
#else
    for (int i = 0; i < 8; ++i) out_[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
#endif
    out_ += 8;
  }
  void Byte(uint8_t value) { *out_++ = static_cast<char>(value); }
  void Bytes(const void* data, size_t size) {
    if (size != 0) std::memcpy(out_, data, size);
    out_ += size;
  }
  void Dims(const std::vector<int64_t>& dims) {
    U64(dims.size());
    for (int64_t dim : dims) U64(static_cast<uint64_t>(dim));
  }
  void Text(std::string_view text) {
    U64(text.size());
    Bytes(text.data(), text.size());
  }

 private:
  char* out_ = nullptr;
  char* end_ = nullptr;
};

size_t DimsBytes(const std::vector<int64_t>& dims) { return 8 * (1 + dims.size()); }

// A field added to MatmulProblem or one of its groups must be added to
// AppendProblemKey() too; these sizes are the reminder (x86-64 layout).
static_assert(sizeof(MatmulProblem) == 1112,
              "MatmulProblem changed: add the new field to AppendProblemKey()");
static_assert(sizeof(BatchDims) == 104,
              "BatchDims changed: add the new field to AppendProblemKey()");
static_assert(sizeof(FusedEpilogue) == 40,
              "FusedEpilogue changed: add the new field to AppendProblemKey()");
static_assert(sizeof(QuantInputs) == 288,
              "QuantInputs changed: add the new field to AppendQuantKey()");
static_assert(sizeof(TransposeAttrs) == 120,
              "TransposeAttrs changed: add the new field to WriteTransposeKey()");
static_assert(sizeof(GroupedInputs) == 416,
              "GroupedInputs changed: add the new field to WriteGroupedKey() (or say why not)");

// QuantBatchMatmulV3's group: one presence byte per optional tensor (an
// absent one adds nothing else), then the shapes and the attributes.
size_t QuantKeyBytes(const QuantInputs& q) {
  size_t bytes = DimsBytes(q.bias_shape) + 4 * 8 + 1;
  for (const QuantTensorSpec* tensor : {&q.scale, &q.pertoken, &q.offset, &q.antiquant_scale,
                                        &q.antiquant_offset, &q.quant_scale, &q.quant_offset}) {
    bytes += 1 + (tensor->present ? 1 + DimsBytes(tensor->shape) : 0);
  }
  return bytes;
}

void WriteQuantKey(const QuantInputs& q, KeyWriter& key) {
  for (const QuantTensorSpec* tensor : {&q.scale, &q.pertoken, &q.offset, &q.antiquant_scale,
                                        &q.antiquant_offset, &q.quant_scale, &q.quant_offset}) {
    key.Byte(tensor->present);
    if (!tensor->present) continue;
    key.Byte(static_cast<uint8_t>(tensor->dtype));
    key.Dims(tensor->shape);
  }
  key.Dims(q.bias_shape);
  for (int64_t size : {q.group_size_m, q.group_size_n, q.group_size_k, q.group_size}) {
    key.U64(static_cast<uint64_t>(size));
  }
  key.Byte(q.tensor_api);
}

// The transposed batch matmuls' group: the perms, the batch, the split and
// the scale (its presence byte, then its dtype and shape).
size_t TransposeKeyBytes(const TransposeAttrs& t) {
  return DimsBytes(t.perm_x1) + DimsBytes(t.perm_x2) + DimsBytes(t.perm_y) + 2 * 8 + 1 +
         (t.scale.present ? 1 + DimsBytes(t.scale.shape) : 0);
}

void WriteTransposeKey(const TransposeAttrs& t, KeyWriter& key) {
  key.Dims(t.perm_x1);
  key.Dims(t.perm_x2);
  key.Dims(t.perm_y);
  key.U64(static_cast<uint64_t>(t.batch));
  key.U64(static_cast<uint64_t>(t.batch_split_factor));
  key.Byte(t.scale.present);
  if (!t.scale.present) return;
  key.Byte(static_cast<uint8_t>(t.scale.dtype));
  key.Dims(t.scale.shape);
}

// GroupedMatmul's group: per tensor list its instance count, then (for a
// present one) its dtype, format and every shape; then the attributes. The
// token histogram is left out: no tiling reads it (CANN's reads only
// group_list's length), so problems that differ only in it share a plan.
size_t GroupedKeyBytes(const GroupedInputs& g) {
  size_t bytes = 8 + 8 * 5 + 2 + DimsBytes(g.tuning_config);
  for (const GroupedTensorList& list : g.tensors) {
    bytes += 8;
    if (!list.present()) continue;
    bytes += 2;
    for (const GroupedShape& shape : list.instances) {
      bytes += DimsBytes(shape.origin) + DimsBytes(shape.storage);
    }
  }
  return bytes;
}

void WriteGroupedKey(const GroupedInputs& g, KeyWriter& key) {
  for (const GroupedTensorList& list : g.tensors) {
    key.U64(list.size());
    if (!list.present()) continue;
    key.Byte(static_cast<uint8_t>(list.dtype));
    key.Byte(static_cast<uint8_t>(list.format));
    for (const GroupedShape& shape : list.instances) {
      key.Dims(shape.origin);
      key.Dims(shape.storage);
    }
  }
  key.U64(kGroupedTensorCount);
  for (int64_t value : {g.split_item, g.dtype, g.group_type, g.group_list_type, g.act_type}) {
    key.U64(static_cast<uint64_t>(value));
  }
  key.Byte(g.transpose_weight);
  key.Byte(g.transpose_x);
  key.Dims(g.tuning_config);
}

}  // namespace

void AppendProblemKey(const MatmulProblem& p, std::string& key) {
  // One byte each for the enums and flags.
  const uint8_t small[] = {
      static_cast<uint8_t>(p.dtype_a),
      static_cast<uint8_t>(p.dtype_b),
      static_cast<uint8_t>(p.dtype_c),
      p.has_bias,
      static_cast<uint8_t>(p.has_bias ? p.dtype_bias : DataType::kFloat16),
      p.trans_a,
      p.trans_b,
      static_cast<uint8_t>(p.format_a),
      static_cast<uint8_t>(p.format_b),
      static_cast<uint8_t>(p.format_c),
      p.hf32,
      p.force_grp_acc_fp32,
      p.avoid_tensor_api,
      static_cast<uint8_t>(p.op),
      static_cast<uint8_t>(p.fused.op),
      p.batch.a_interleaved,
      p.batch.b_interleaved,
      p.a_slice.enabled,
  };
  const std::vector<int64_t>* const lists[] = {
      &p.storage_shape_b, &p.batch.a, &p.batch.b, &p.batch.c, &p.batch.bias, &p.fused.x3_shape};
  size_t bytes = 3 * 8 + sizeof(small) + 2 * 8 + 4 * 8 + QuantKeyBytes(p.quant) +
                 TransposeKeyBytes(p.transpose) + GroupedKeyBytes(p.grouped);
  for (const std::vector<int64_t>* dims : lists) bytes += DimsBytes(*dims);

  KeyWriter out(key, bytes);
  for (int64_t size : {p.m, p.n, p.k}) out.U64(static_cast<uint64_t>(size));
  out.Bytes(small, sizeof(small));
  out.U64(static_cast<uint64_t>(p.deterministic_level));
  out.U64(static_cast<uint64_t>(p.fused.inner_precise));
  const SliceView slice = p.a_slice.enabled ? p.a_slice : SliceView{};
  out.U64(static_cast<uint64_t>(slice.rank));
  out.U64(static_cast<uint64_t>(slice.batch));
  out.U64(static_cast<uint64_t>(slice.batch_stride));
  out.U64(static_cast<uint64_t>(slice.row_stride));
  for (const std::vector<int64_t>* dims : lists) out.Dims(*dims);
  WriteQuantKey(p.quant, out);
  WriteTransposeKey(p.transpose, out);
  WriteGroupedKey(p.grouped, out);
}

void AppendChipKey(const ChipSpec& chip, std::string& key) {
  KeyWriter out(key, 8 + chip.name.size() + 1 + 8 * kChipFieldCount);
  out.Text(chip.name);
  out.Byte(static_cast<uint8_t>(chip.npu_arch));
  for (const ChipField& field : kChipFields) out.U64(field.Get(chip));
}

void AppendTextKey(std::string_view text, std::string& key) {
  KeyWriter out(key, 8 + text.size());
  out.Text(text);
}

}  // namespace npu::tiling
