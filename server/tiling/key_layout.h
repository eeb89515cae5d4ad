// Tiling-key layouts as data: each layout is a table of bit fields (name,
// shift, width, largest value, the TilingKey member it carries), and
// TilingKey::Encode() / Decode() walk the table of the key's layout. A new
// operator's key is a KeyLayout value and a table here. Part of
// `npu_tiling_types`.
#ifndef NPU_SERVER_TILING_KEY_LAYOUT_H_
#define NPU_SERVER_TILING_KEY_LAYOUT_H_

#include <cstdint>
#include <string_view>

#include "absl/types/span.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// One bit field of a packed key.
struct KeyFieldSpec {
  std::string_view name;  // "api_level", "trans", "fused_op"...
  int shift = 0;
  int bits = 0;
  // Decode() refuses a larger value with "tiling key: <range_error>".
  uint64_t max_value = 0;
  std::string_view range_error;
  // The field's value in a key, and its inverse.
  uint64_t (*get)(const TilingKey& key) = nullptr;
  void (*set)(TilingKey& key, uint64_t value) = nullptr;
  // CANN's names of the values, by value (empty: unnamed).
  absl::Span<const std::string_view> value_names = {};
};

struct KeyLayoutSpec {
  KeyLayout layout = KeyLayout::kMatMul;
  std::string_view name;  // "MATMUL", "FUSED"
  // In the order Decode() checks them.
  absl::Span<const KeyFieldSpec> fields;
  // Bits between the fields that must be clear, and the error when not.
  uint64_t reserved_mask = 0;
  std::string_view reserved_error;
  // Bits at or above `width` must be clear ("bits above <width - 1> set").
  int width = 64;
  // The answer's decoded key lists this layout's fields as name / value
  // pairs (the MatMul and Fused layouts have fixed fields of their own).
  bool listed = false;
};

// CANN's name of `value` of `field`, or "" when it has none.
std::string_view KeyValueName(const KeyFieldSpec& field, uint64_t value);

// The table of `layout`.
const KeyLayoutSpec& KeyLayoutSpecOf(KeyLayout layout);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_KEY_LAYOUT_H_
