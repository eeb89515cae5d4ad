#include "server/tiling/problem_key.h"

#include <cstdint>
#include <vector>

#include "server/tiling/chip_fields.h"

namespace npu::tiling {
namespace {

void AppendU64(uint64_t value, std::string& key) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  key.append(bytes, sizeof(bytes));
}

void AppendDims(const std::vector<int64_t>& dims, std::string& key) {
  AppendU64(dims.size(), key);
  for (int64_t dim : dims) AppendU64(static_cast<uint64_t>(dim), key);
}

// A field added to MatmulProblem or one of its groups must be added to
// AppendProblemKey() too; these sizes are the reminder (x86-64 layout).
static_assert(sizeof(MatmulProblem) == 440,
              "MatmulProblem changed: add the new field to AppendProblemKey()");
static_assert(sizeof(BatchDims) == 104,
              "BatchDims changed: add the new field to AppendProblemKey()");
static_assert(sizeof(FusedEpilogue) == 40,
              "FusedEpilogue changed: add the new field to AppendProblemKey()");
static_assert(sizeof(QuantInputs) == 152,
              "QuantInputs changed: add the new field to AppendQuantKey()");

// QuantBatchMatmulV3's group: one presence byte per optional tensor (an
// absent one adds nothing else), then the shapes and the attributes.
void AppendQuantKey(const QuantInputs& q, std::string& key) {
  for (const QuantTensorSpec* tensor : {&q.scale, &q.pertoken, &q.offset}) {
    key.push_back(static_cast<char>(tensor->present));
    if (!tensor->present) continue;
    key.push_back(static_cast<char>(tensor->dtype));
    AppendDims(tensor->shape, key);
  }
  AppendDims(q.bias_shape, key);
  for (int64_t size : {q.group_size_m, q.group_size_n, q.group_size_k}) {
    AppendU64(static_cast<uint64_t>(size), key);
  }
  key.push_back(static_cast<char>(q.tensor_api));
}

}  // namespace

void AppendProblemKey(const MatmulProblem& p, std::string& key) {
  key.reserve(key.size() + 256);
  for (int64_t size : {p.m, p.n, p.k}) AppendU64(static_cast<uint64_t>(size), key);
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
  key.append(reinterpret_cast<const char*>(small), sizeof(small));
  AppendU64(static_cast<uint64_t>(p.deterministic_level), key);
  AppendU64(static_cast<uint64_t>(p.fused.inner_precise), key);
  const SliceView slice = p.a_slice.enabled ? p.a_slice : SliceView{};
  AppendU64(static_cast<uint64_t>(slice.rank), key);
  AppendU64(static_cast<uint64_t>(slice.batch), key);
  AppendU64(static_cast<uint64_t>(slice.batch_stride), key);
  AppendU64(static_cast<uint64_t>(slice.row_stride), key);
  for (const std::vector<int64_t>* dims :
       {&p.storage_shape_b, &p.batch.a, &p.batch.b, &p.batch.c, &p.batch.bias, &p.fused.x3_shape}) {
    AppendDims(*dims, key);
  }
  AppendQuantKey(p.quant, key);
}

void AppendChipKey(const ChipSpec& chip, std::string& key) {
  AppendTextKey(chip.name, key);
  key.push_back(static_cast<char>(chip.npu_arch));
  for (const ChipField& field : kChipFields) AppendU64(field.Get(chip), key);
}

void AppendTextKey(std::string_view text, std::string& key) {
  AppendU64(text.size(), key);
  key.append(text.data(), text.size());
}

}  // namespace npu::tiling
