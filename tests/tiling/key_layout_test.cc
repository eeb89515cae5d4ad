// Tests of server/tiling/key_layout.h: each layout's fields are disjoint,
// inside its width and clear of its reserved bits, and every value a field
// admits survives Encode() then Decode().
#include "server/tiling/key_layout.h"

#include <gtest/gtest.h>

#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::IsOk;

constexpr KeyLayout kAllLayouts[] = {KeyLayout::kMatMul, KeyLayout::kFused, KeyLayout::kQuant,
                                     KeyLayout::kTransposeBatch, KeyLayout::kTransposeQuant};

uint64_t Mask(const KeyFieldSpec& field) {
  return ((uint64_t{1} << field.bits) - 1) << field.shift;
}

TEST(KeyLayoutTest, FieldsAreDisjointAndInsideTheWidth) {
  for (KeyLayout layout : kAllLayouts) {
    const KeyLayoutSpec& spec = KeyLayoutSpecOf(layout);
    SCOPED_TRACE(spec.name);
    EXPECT_EQ(spec.layout, layout);
    uint64_t used = spec.reserved_mask;
    for (const KeyFieldSpec& field : spec.fields) {
      EXPECT_EQ(used & Mask(field), 0u) << field.name << " overlaps";
      used |= Mask(field);
      EXPECT_LE(field.shift + field.bits, spec.width) << field.name;
      EXPECT_LT(field.max_value, uint64_t{1} << field.bits) << field.name;
      EXPECT_FALSE(field.range_error.empty()) << field.name;
    }
  }
}

TEST(KeyLayoutTest, EveryFieldValueRoundTrips) {
  for (KeyLayout layout : kAllLayouts) {
    const KeyLayoutSpec& spec = KeyLayoutSpecOf(layout);
    for (const KeyFieldSpec& field : spec.fields) {
      for (uint64_t value = 0; value <= field.max_value; ++value) {
        const uint64_t packed = value << field.shift;
        absl::StatusOr<TilingKey> key = TilingKey::Decode(packed, layout);
        ASSERT_THAT(key, IsOk()) << spec.name << " " << field.name << "=" << value;
        EXPECT_EQ(field.get(*key), value) << field.name;
        EXPECT_EQ(key->Encode(), packed) << field.name;
      }
      if (field.max_value + 1 < (uint64_t{1} << field.bits)) {
        const uint64_t packed = (field.max_value + 1) << field.shift;
        absl::StatusOr<TilingKey> key = TilingKey::Decode(packed, layout);
        ASSERT_FALSE(key.ok()) << field.name;
        EXPECT_EQ(key.status().message(), "tiling key: " + std::string(field.range_error));
      }
    }
    if (spec.width < 64) {
      EXPECT_FALSE(TilingKey::Decode(uint64_t{1} << spec.width, layout).ok()) << spec.name;
    }
  }
}

// The transposed batch matmuls' keys by name: CANN's values of its goldens.
TEST(KeyLayoutTest, TransposeKeysDecodeByName) {
  absl::StatusOr<TilingKey> key = TilingKey::Decode(8449, KeyLayout::kTransposeBatch);
  ASSERT_THAT(key, IsOk());
  EXPECT_EQ(key->perm_x1, 1);
  EXPECT_EQ(key->perm_x2, 0);
  EXPECT_EQ(key->batch_split, 1);
  EXPECT_EQ(key->api_level, ApiLevel::kTensor);
  EXPECT_EQ(key->Encode(), 8449u);
  key = TilingKey::Decode(1041, KeyLayout::kTransposeQuant);
  ASSERT_THAT(key, IsOk());
  EXPECT_EQ(key->perm_x1, 1);
  EXPECT_EQ(key->perm_x2, 1);
  EXPECT_EQ(key->batch_split, 0);
  EXPECT_EQ(key->precision_mode, 1);  // MXFP8
  EXPECT_EQ(key->Encode(), 1041u);
  const KeyLayoutSpec& spec = KeyLayoutSpecOf(KeyLayout::kTransposeQuant);
  EXPECT_EQ(spec.fields.back().value_names[2], "HIFP8");
  EXPECT_FALSE(TilingKey::Decode(3 << 10, KeyLayout::kTransposeQuant).ok());
}

}  // namespace
}  // namespace npu::tiling
